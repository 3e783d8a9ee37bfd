"""Target*'s compiled plans against the plain Python reference: earliest starts on long plans
(hundreds of breakpoints) equal the reference's, and whole runs under overload with frequent capacity
drops, where every re-allocation's near-machine scans resume at hints, make the reference's decisions job
for job."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.policies.target import TargetParams, plan_earliest_start, plan_scan
from tests.reference_target import earliest_start, run_reference
from tests.test_target_fast import FIELDS, VARIANTS, _run, loaded

LONG = st.lists(
    st.tuples(st.integers(0, 400), st.integers(1, 80), st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.0])),
    min_size=8,
    max_size=150,
)


@settings(max_examples=300, deadline=None)
@given(
    plan=LONG,
    t=st.integers(0, 300),
    w=st.integers(1, 200),
    c=st.sampled_from([0.25, 0.5, 1.0, 2.5, 4.0, 5.0]),
)
def test_indexed_earliest_start_equals_the_reference_on_long_plans(plan, t, w, c) -> None:
    """Plans of up to 150 jobs on a 4-core machine (hundreds of breakpoints); c = 5 never fits (the scan
    returns the last end, as the plain scan does)."""
    p = [(float(s), float(s + d), float(k)) for s, d, k in plan]
    ref = earliest_start(p, float(t), float(w), c, 4.0)
    assert plan_earliest_start(p, float(t), float(w), c, 4.0) == ref
    s, _, ok, _ = plan_scan(p, float(t), float(w), c, 4.0)
    if ok:
        assert s == ref


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=loaded(), policy=st.sampled_from(VARIANTS), d=st.integers(0, 2), pack=st.integers(1, 3))
def test_indexed_target_makes_the_references_decisions_under_overload(problem, policy, d, pack) -> None:
    """Overloaded instances with frequent capacity drops (each re-allocation re-plans tens of jobs onto
    rows of tens of breakpoints): the compiled fast path equals the Python reference job for job."""
    params = TargetParams(search_distance=d, reference_days=1e7 / 86400, pack=pack)
    fast = _run(problem, params, policy, fast=True)
    slow = run_reference(problem, params, policy)
    for f in FIELDS:
        assert np.array_equal(getattr(fast, f), getattr(slow, f)), f
    assert fast.completed_cs == slow.completed_cs and fast.wasted_cs == slow.wasted_cs
