"""Target*'s fast path equals the plain compiled path and the plain Python reference, job for job, on
random instances with queues of tens of planned jobs per machine. Fast: the target's earliest start first,
the other near machines asked only "fits now?" (all earliest starts only when the rule needs the best),
one valid START event per machine's first pending job, categories cached per job. Plain: every near
machine's earliest start, a START event per re-planned job."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim import CapacityTrace
from sim.metrics import EngineOutput
from sim.policies.target import (
    HINT_MARGIN_S,
    Target,
    TargetParams,
    _profile_add,
    _profile_remove,
    _Profiles,
    _TargetHooks,
    plan_earliest_start,
    plan_scan,
    plan_starts_now,
)
from sim.problem import Platform, Problem
from tests.reference_target import earliest_start, run_reference

VARIANTS = ["target-stretch", "target-asap", "packed-target-asap"]
CORES = [0.25, 0.5, 1.0, 1.5, 2.5, 3.0]


@settings(max_examples=300, deadline=None)
@given(
    plan=st.lists(
        st.tuples(st.integers(0, 60), st.integers(1, 25), st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.0])),
        max_size=40,
    ),
    t=st.integers(0, 60),
    w=st.integers(1, 30),
    c=st.sampled_from([0.25, 0.5, 1.0, 2.5, 4.0]),
)
def test_starts_now_says_whether_the_earliest_start_is_now(plan, t, w, c) -> None:
    p = [(float(s), float(s + d), float(k)) for s, d, k in plan]
    now = plan_starts_now(p, float(t), float(w), c, 4.0)
    assert now == (plan_earliest_start(p, float(t), float(w), c, 4.0) <= t)
    assert now == (earliest_start(p, float(t), float(w), c, 4.0) <= t)


PLANS = st.lists(
    st.tuples(st.integers(0, 60), st.integers(1, 25), st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.0])),
    max_size=40,
)


@settings(max_examples=400, deadline=None)
@given(
    plan=PLANS,
    t=st.integers(0, 60),
    job=st.tuples(st.integers(1, 30), st.sampled_from([0.25, 0.5, 1.0, 2.5, 4.0])),
    other=st.tuples(st.integers(0, 30), st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.5])),
)
def test_a_hint_holds_for_every_job_it_covers(plan, t, job, other) -> None:
    """A re-allocation hint from a scan for (c, w) — every candidate before the start found fails — is used
    for any job of c' ≥ c cores lasting w' ≥ min(w, g + margin): such a job never starts earlier, and the
    bound is tight (a job lasting exactly g does fit at the failed candidate where the room was g)."""
    p = [(float(s), float(s + d), float(k)) for s, d, k in plan]
    w, c = job
    s, at, ok, g = plan_scan(p, float(t), float(w), c, 4.0)
    if not ok:
        return
    assert s == earliest_start(p, float(t), float(w), c, 4.0)
    w2, c2 = min(w, g + HINT_MARGIN_S) + other[0], c + other[1]
    assert earliest_start(p, float(t), w2, c2, 4.0) >= at
    if g > 0:  # the candidate with room g takes a job of c cores lasting g: a hint from g alone is wrong
        assert earliest_start(p, float(t), g, c, 4.0) < s


@settings(max_examples=100, deadline=None)
@given(
    ops=st.lists(
        st.tuples(
            st.integers(0, 2), st.integers(0, 200), st.integers(1, 40), st.sampled_from([0.5, 1.0, 2.0])
        ),
        max_size=120,
    ),
    drop=st.lists(st.integers(0, 119), max_size=40),
)
def test_rows_grown_apart_hold_the_same_step_functions(ops, drop) -> None:
    """Three machines' step functions in one pool (rows moved and the pool rebuilt as they grow) equal each
    machine's built alone."""
    shared, alone = _Profiles(3, size=2), [_Profiles(1, size=2) for _ in range(3)]
    gone = set(drop)
    for m, s, d, c in ops:
        for prof, row in ((shared, m), (alone[m], 0)):
            prof.fit()
            _profile_add(prof.P, row, float(s), float(s + d), c)
    for step, (m, s, d, c) in enumerate(ops):
        if step in gone:
            for prof, row in ((shared, m), (alone[m], 0)):
                _profile_remove(prof.P, row, float(s), float(s + d), c)
    for m in range(3):
        n, o = shared.plen[m], shared.poff[m]
        assert n == alone[m].plen[0] and shared.pcap[m] >= n
        for a, b in ((shared.pt, alone[m].pt), (shared.pu, alone[m].pu), (shared.pk, alone[m].pk)):
            assert np.array_equal(a[o : o + n], b[:n])


@st.composite
def instances(draw):
    """1-4 machines, up to 160 jobs with fractional cores: queues of tens of planned jobs per machine."""
    machines = draw(st.integers(1, 4))
    cores = draw(st.integers(2, 6))
    horizon = draw(st.integers(40, 400))
    n = draw(st.integers(1, 160))
    submit = sorted(draw(st.lists(st.integers(0, horizon), min_size=n, max_size=n)))
    dur = draw(st.lists(st.integers(1, 60), min_size=n, max_size=n))
    cpu = draw(st.lists(st.sampled_from([c for c in CORES if c <= cores]), min_size=n, max_size=n))
    jobs = pl.DataFrame(
        {"job_id": np.arange(n), "submit_s": submit, "duration_s": dur, "cores": cpu},
        schema={"job_id": pl.Int64, "submit_s": pl.Float64, "duration_s": pl.Float64, "cores": pl.Float64},
    )
    times = sorted(set(draw(st.lists(st.integers(1, horizon), max_size=25))))
    alive = [draw(st.integers(0, machines)) for _ in range(len(times) + 1)]
    trace = CapacityTrace(np.array([0, *times], float), np.array(alive), machines, float(horizon))
    return Problem.build(jobs, Platform(machines, float(cores)), trace, float(horizon))


@st.composite
def loaded(draw):
    """Overloaded instances: up to 200 jobs submitted in the first quarter, frequent capacity drops, so
    each re-allocation re-plans tens of jobs onto the same few machines (hints made, used, invalidated)."""
    machines = draw(st.integers(1, 3))
    cores = draw(st.integers(2, 4))
    horizon = draw(st.integers(200, 600))
    n = draw(st.integers(60, 200))
    submit = sorted(draw(st.lists(st.integers(0, horizon // 4), min_size=n, max_size=n)))
    dur = draw(st.lists(st.integers(1, 80), min_size=n, max_size=n))
    cpu = draw(st.lists(st.sampled_from([c for c in CORES if c <= cores]), min_size=n, max_size=n))
    jobs = pl.DataFrame(
        {"job_id": np.arange(n), "submit_s": submit, "duration_s": dur, "cores": cpu},
        schema={"job_id": pl.Int64, "submit_s": pl.Float64, "duration_s": pl.Float64, "cores": pl.Float64},
    )
    times = sorted(set(draw(st.lists(st.integers(1, horizon), min_size=5, max_size=30))))
    alive = [draw(st.integers(1, machines)) for _ in range(len(times) + 1)]
    trace = CapacityTrace(np.array([0, *times], float), np.array(alive), machines, float(horizon))
    return Problem.build(jobs, Platform(machines, float(cores)), trace, float(horizon))


FIELDS = ("first_start_s", "end_s", "attempts", "terminations", "status", "att_job", "att_start_s")


def _run(problem: Problem, params: TargetParams, policy: str, fast: bool) -> EngineOutput:
    hooks = _TargetHooks(problem, params, policy, fast=fast)
    return hooks.loop.run(hooks)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    problem=instances(),
    policy=st.sampled_from(VARIANTS),
    ref=st.sampled_from([30.0, 150.0, 1e7]),
    d=st.integers(0, 4),
    pack=st.integers(1, 3),
    floor=st.booleans(),
    test=st.booleans(),
)
def test_fast_target_equals_the_plain_versions(problem, policy, ref, d, pack, floor, test) -> None:
    params = TargetParams(
        search_distance=d, reference_days=ref / 86400, pack=pack, pack_floor=floor, stretch_test=test
    )
    fast = _run(problem, params, policy, fast=True)
    plain = _run(problem, params, policy, fast=False)
    slow = run_reference(problem, params, policy)
    for f in FIELDS:
        assert np.array_equal(getattr(fast, f), getattr(plain, f)), f
        assert np.array_equal(getattr(fast, f), getattr(slow, f)), f
    assert fast.completed_cs == plain.completed_cs == slow.completed_cs
    assert fast.wasted_cs == plain.wasted_cs == slow.wasted_cs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    problem=loaded(),
    policy=st.sampled_from(VARIANTS),
    d=st.integers(0, 2),
    pack=st.integers(1, 3),
    floor=st.booleans(),
    test=st.booleans(),
)
def test_fast_target_equals_the_plain_one_under_overload(problem, policy, d, pack, floor, test) -> None:
    params = TargetParams(
        search_distance=d, reference_days=1e7 / 86400, pack=pack, pack_floor=floor, stretch_test=test
    )
    fast = _run(problem, params, policy, fast=True)
    plain = _run(problem, params, policy, fast=False)
    for f in FIELDS:
        assert np.array_equal(getattr(fast, f), getattr(plain, f)), f
    assert fast.completed_cs == plain.completed_cs and fast.wasted_cs == plain.wasted_cs


def test_the_dispatcher_runs_the_fast_path() -> None:
    trace = CapacityTrace(np.array([0.0]), np.array([1]), 1, 100.0)
    jobs = pl.DataFrame({"job_id": [0], "submit_s": [0.0], "duration_s": [5.0], "cores": [1.0]})
    problem = Problem.build(jobs, Platform(1, 1.0), trace, 100.0)
    hooks = Target("target-asap").declare(problem, TargetParams(), 0)
    assert isinstance(hooks, _TargetHooks) and hooks.fast and hooks.ist[6] == 1


def _assign_one(h: _TargetHooks) -> int:
    """The machine the compiled ``_assign`` gives job 0 at t = 0 in ``h``'s state (10 machines)."""
    from sim.policies.target import HINTS, _assign, _near_size

    ns = _near_size(h.ist)
    return int(
        _assign(
            0,
            0.0,
            *h.state,
            np.zeros((10, HINTS, 3)),
            np.zeros(10, np.int64),
            np.full(10, -2, np.int64),
            False,
            np.empty(ns, np.int64),
            np.empty(ns),
        )  # fmt: skip
    )


def _packed_choice(fast: bool | None, s_plus: float) -> int:
    """Machine chosen for a job that cannot start now on any of the 10 one-core machines (each busy until
    ``ends[m]``), target 5 (category 0.5 × M_use 10): the pack is machines 5–9. ``fast`` None: the Python
    reference."""
    ends = [1000.0] * 5 + [900.0, 800.0, 300.0, 500.0, 400.0]
    trace = CapacityTrace(np.array([0.0]), np.array([10]), 10, 1e5)
    jobs = pl.DataFrame({"job_id": [0], "submit_s": [0.0], "duration_s": [100.0], "cores": [1.0]})
    problem = Problem.build(jobs, Platform(10, 1.0), trace, 1e5)
    params = TargetParams()
    if fast is None:
        from tests.reference_target import _Sim

        sim = _Sim(problem, params, "packed-target-asap")
        sim.alive, sim.m_use, sim.s_plus = 10, 10, s_plus
        sim.plan = [[(0.0, e, 1.0)] for e in ends]
        sim._target = lambda j, t: 5  # noqa: ARG005
        sim._assign(0, 0.0)
        return int(sim.mach[0])
    h = _TargetHooks(problem, params, "packed-target-asap", fast=fast)
    h.ist[3] = h.ist[4] = 10  # M_use, alive
    h.fst[0] = s_plus
    for m, e in enumerate(ends):
        _profile_add(h.profiles.P, m, 0.0, e, 1.0)
    h.catk[0], h.catv[0] = 0, 0.5
    return _assign_one(h)


def test_packed_plans_a_waiting_job_at_the_packs_earliest_start() -> None:
    """§4.5: the target is the pack. A job no machine can start now, whose stretch stays within S⁺, is
    planned on the pack machine that frees first (7, at 300 s), not on the pack's first machine (5, at
    900 s), which left the pack's other machines idle while jobs waited. With S⁺ = 1 the
    stretch test fails and the earliest start within D⁺ wins: the same machine."""
    for fast in (True, False, None):
        assert _packed_choice(fast, 1e9) == 7, fast
        assert _packed_choice(fast, 1.0) == 7, fast


def _choice(policy: str, params: TargetParams, cat: float, ends: list[float], fast: bool | None) -> int:
    """Machine chosen for one 100-s one-core job of category ``cat`` at t = 0 on 10 one-core machines
    (M_use = alive = 10, S⁺ = 10⁹: a planned stretch always passes the test unless it is off), machine m
    busy until ``ends[m]`` (0: free). ``fast`` None: the Python reference."""
    trace = CapacityTrace(np.array([0.0]), np.array([10]), 10, 1e5)
    jobs = pl.DataFrame({"job_id": [0], "submit_s": [0.0], "duration_s": [100.0], "cores": [1.0]})
    problem = Problem.build(jobs, Platform(10, 1.0), trace, 1e5)
    if fast is None:
        from tests.reference_target import _Sim

        sim = _Sim(problem, params, policy)
        sim.alive, sim.m_use, sim.s_plus = 10, 10, 1e9
        sim.plan = [[(0.0, e, 1.0)] if e > 0 else [] for e in ends]
        sim._category = lambda j, t: cat  # noqa: ARG005
        sim._assign(0, 0.0)
        return int(sim.mach[0])
    h = _TargetHooks(problem, params, policy, fast=fast)
    h.ist[3] = h.ist[4] = 10  # M_use, alive
    h.fst[0] = 1e9
    for m, e in enumerate(ends):
        if e > 0:
            _profile_add(h.profiles.P, m, 0.0, e, 1.0)
    h.catk[0], h.catv[0] = 0, cat
    return _assign_one(h)


def test_pack_floor_rounds_the_target_down_to_its_pack() -> None:
    """§4.5 rounds the target to the nearest multiple of 5 (the default): target 3 (category 0.35 × M_use
    10) goes to the pack 5–9 and starts on its first machine. The isolating reading ``pack_floor`` rounds
    down: the pack 0–4 that holds machine 3."""
    for fast in (True, False, None):
        free = [0.0] * 10
        assert _choice("packed-target-asap", TargetParams(), 0.35, free, fast) == 5, fast
        assert _choice("packed-target-asap", TargetParams(pack_floor=True), 0.35, free, fast) == 0, fast


def test_stretch_test_off_plans_at_the_earliest_start_within_d_plus() -> None:
    """No machine can start the job now. With S⁺ large the test passes and TargetASAP plans it on its
    target 5 (free at 900 s); with the isolating reading ``stretch_test`` off, on machine 7 (free at 300
    s), the earliest start within D⁺."""
    ends = [1000.0] * 5 + [900.0, 800.0, 300.0, 500.0, 400.0]
    for fast in (True, False, None):
        assert _choice("target-asap", TargetParams(), 0.5, ends, fast) == 5, fast
        assert _choice("target-asap", TargetParams(stretch_test=False), 0.5, ends, fast) == 7, fast
