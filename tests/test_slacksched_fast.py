"""Waiting SlackSched's fast pass (speed criterion) makes exactly the choices of the plain compiled
pass and of the Python placement: the bucket index counts like ``np.searchsorted``, the ordered, bounded
node search finds the same node."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

from sim.capacity.generators import harvest_trace
from sim.harvest.cluster import Cluster, ClusterConfig
from sim.harvest.passes import NODE_TABLE_COLUMNS, count_le, search_table
from sim.policies.slacksched import SlackSched, SlackSchedParams
from sim.problem import Platform, Problem
from tests.test_sim_engine import frame, per_machine_scenarios
from tests.test_slacksched import _ATTEMPT_FIELDS, _cap


@pytest.fixture(autouse=True, scope="module")
def _fast_on_every_pass():
    """The fast pass on every call, however short the queue (by default it starts at ``FAST_MIN_QUEUE``)."""
    import sim.policies.slacksched as ss

    old, ss.FAST_MIN_QUEUE = ss.FAST_MIN_QUEUE, 0
    yield
    ss.FAST_MIN_QUEUE = old


_pool = hst.sampled_from([0.0, 1.0, 1.5, 2.0, 7.25, 100.0, 1e-9, 3.3333333333333335, 1e4])
_xs = hst.lists(hst.one_of(_pool, hst.floats(0.0, 1e5, allow_nan=False)), min_size=1, max_size=60)


@settings(max_examples=300, deadline=None)
@given(xs=_xs, qs=hst.lists(hst.one_of(_pool, hst.floats(-10.0, 2e5, allow_nan=False)), max_size=30))
def test_bucket_index_counts_like_searchsorted(xs, qs) -> None:
    """``count_le`` is ``searchsorted(side="right")`` for every query, the samples themselves and their
    neighbours included (ties, duplicates, out of range)."""
    a = np.sort(np.array(xs, float))
    start, x0, inv_h = search_table(a)
    for q in [*qs, *a, *np.nextafter(a, -np.inf), *np.nextafter(a, np.inf)]:
        assert count_le(a, float(q), start, x0, inv_h) == np.searchsorted(a, q, side="right"), q


def _runs(problem: Problem, cfg: ClusterConfig, ss: SlackSchedParams, python: bool):
    pol = SlackSched("slacksched", True)
    out = [
        Cluster(problem, cfg, 1, pol.placement(ss), 3600.0, scan=pol.scan(ss, fast=f), queue_aware=True).run()
        for f in (True, False)
    ]
    if python:
        out.append(Cluster(problem, cfg, 1, pol.placement(ss), 3600.0, queue_aware=True).run())
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=per_machine_scenarios(), acquirer=hst.booleans(), min_samples=hst.sampled_from([1, 3, 10_000]))
def test_fast_pass_equals_the_plain_pass_on_random_instances(sc, acquirer, min_samples) -> None:
    machines, max_cores, horizon, jobs, events = sc
    cap = _cap([(t, m, c) for t, evs in events.items() for m, c in evs], machines, float(horizon))
    problem = Problem.build(frame(jobs), Platform(machines, float(max_cores)), cap, float(horizon))
    cfg = ClusterConfig(acquirer=acquirer, acquirer_period_s=3.0, acquirer_fraction=0.5)
    fast, plain = _runs(problem, cfg, SlackSchedParams(min_samples=min_samples), python=False)
    for f in _ATTEMPT_FIELDS:
        assert np.array_equal(getattr(fast, f), getattr(plain, f)), f


def _fractional_jobs(n: int, until_s: float, seed: int) -> pl.DataFrame:
    """Borg-like jobs: fractional cores (most below one core), log-normal durations."""
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "job_id": np.arange(n),
            "submit_s": np.sort(rng.uniform(0, until_s, n)),
            "duration_s": np.maximum(rng.lognormal(np.log(900.0), 1.2, n), 1.0),
            "cores": np.minimum(
                rng.choice([0.05, 0.3, 0.6, 0.75, 1.0 / 3.0], n) * rng.integers(1, 9, n), 8.0
            ),
        }
    )


def test_fast_pass_equals_the_plain_pass_and_the_placement_under_load() -> None:
    """A seeded harvest pool loaded past its capacity with fractional cores (long queues, many claims per
    node, cores summing to near-ties): the three passes start every job at the same instant on the same
    node."""
    horizon = 3 * 3600.0
    tr = harvest_trace(8, horizon, seed=7, stability_spread=1.0)
    jobs = _fractional_jobs(800, horizon * 0.7, seed=8)
    problem = Problem.build(jobs, Platform(8, 48.0), tr, horizon)
    fast, plain, python = _runs(problem, ClusterConfig(), SlackSchedParams(min_samples=5), python=True)
    for f in _ATTEMPT_FIELDS:
        assert np.array_equal(getattr(fast, f), getattr(plain, f)), f
        assert np.array_equal(getattr(fast, f), getattr(python, f)), f
    assert int((fast.first_start_s > jobs["submit_s"].to_numpy()).sum()) > 200  # long queues
    # more core counts than a pass remembers waits for: remembered and recomputed waits both decide
    assert jobs["cores"].n_unique() > NODE_TABLE_COLUMNS


def test_next_avail_has_no_room_when_free_cores_are_short_by_rounding() -> None:
    """The Python reference's room test is ``cap − used ≥ c``, as the compiled passes': before, it tested
    ``(cap − used − claimed) + claimed ≥ c``, which rounds up to ``c`` (0.2999999999999998 free cores, a
    job of 0.30000000000000004, 13.95 claimed: the reference started the job there, the compiled pass
    waited; found by the comparison above on fractional cores)."""
    horizon = 3600.0
    tr = harvest_trace(2, horizon, seed=1)
    jobs = _fractional_jobs(2, 10.0, seed=1)
    cl = Cluster(Problem.build(jobs, Platform(2, 48.0), tr, horizon), ClusterConfig(), 0, lambda *a: -1)
    c = 0.1 + 0.2  # 0.30000000000000004
    cl.cap[0], cl.used[0] = 1.0, 1.0 - 0.2999999999999998
    assert cl.cap[0] - cl.used[0] < c
    cl.running[0][0] = 100.0
    cl.claim(0, 13.95, 50.0)
    assert (cl.cap[0] - cl.used[0] - cl.claimed[0]) + cl.claimed[0] >= c  # the rounding the old test took
    assert cl.next_avail(0, c, 0.0) > 0.0
