"""The compiled harvest-VM loop of waiting slacksched (sim.harvest.loop's WAITING pass) is the Python loop, bit for bit:
the same eq. 2 choices over the same per-pass claims (queue-aware ``a``), the same starts, kills and waits."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings

from sim.capacity.generators import harvest_trace
from sim.harvest.cluster import Cluster
from sim.metrics import EngineOutput
from sim.problem import Platform, Problem
from tests.test_hloop import _assert_same, run_harvest
from tests.test_sim_engine import frame, per_machine_scenarios
from tests.test_slacksched import _cap, _jobs


def _run(
    problem: Problem, compiled: bool, seed: int = 0, newest: bool = False, **params
) -> tuple[EngineOutput, Cluster]:
    """Waiting slacksched on ``problem``, compiled loop or Python loop (:func:`run_harvest`); the output and
    the Cluster (its claim rows show how far the Python pass grew them)."""
    from sim.policies.slacksched import SlackSchedParams

    out, cl, _ = run_harvest("slacksched", SlackSchedParams(**params), problem, compiled, seed, newest)
    return out, cl


def _same(problem: Problem, **kw) -> tuple[EngineOutput, Cluster]:
    (a, cl), (b, _) = (_run(problem, c, **kw) for c in (False, True))
    _assert_same(a, b)
    return b, cl


@pytest.mark.parametrize(
    ("n", "load", "window_h", "min_samples", "nodes", "newest"),
    [
        (500, 0.8, 2.0, 5, 0, False),  # kills, a window that drops samples, a model from the first hours
        (700, 1.6, 24.0, 5, 0, False),  # a backlog: claim rows grow, both passes (<, ≥ 16 queued)
        (300, 1.2, 1.0, 10_000, 0, False),  # never enough samples: eq. 2 is a + d
        (400, 1.0, 3.0, 0, 8, False),  # a cluster of 8 of the 12 pool HVMs (seeded choice)
        (500, 0.8, 2.0, 5, 0, True),  # shrinks kill the newest start first
    ],
)
def test_compiled_waiting_loop_equals_the_python_loop_on_a_harvest_pool(
    n, load, window_h, min_samples, nodes, newest
) -> None:
    horizon = 6 * 3600.0
    tr = harvest_trace(12, horizon, seed=3, stability_spread=1.0, mean_inter_change_s=900.0)
    jobs = _jobs(n, horizon * 0.8, (300, int(4500 * load)), 12, seed=4)
    problem = Problem.build(jobs, Platform(12, 48.0), tr, horizon, check=True)
    b, cl = _same(problem, newest=newest, window_h=window_h, min_samples=min_samples, nodes=nodes)
    assert b.n_terminations > 5  # shrinks killed jobs
    assert (b.first_start_s > jobs["submit_s"].to_numpy()).sum() > 20  # jobs waited
    if load > 1.5:
        assert cl.claim_end.shape[1] > 4  # a node's claim row outgrew its first 4 places in some pass
        assert cl.pass_no > 50


def test_compiled_waiting_loop_equals_the_python_loop_with_ties() -> None:
    """Equal submit and end times, fractional cores (sums that depend on the order of ends and claims), jobs
    not in submit order, a horizon cutting running attempts, too few samples at first."""
    rng = np.random.default_rng(7)
    n = 250
    jobs = pl.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(n)],
            "submit_s": rng.integers(0, 40, n).astype(float) * 50.0,
            "duration_s": rng.integers(1, 6, n).astype(float) * 50.0,
            "cores": rng.integers(1, 41, n) / 10.0,
        }
    )
    rows = [(0.0, m, 8.0) for m in range(4)]
    rows += [(float(t) * 50.0, int(rng.integers(4)), float(rng.integers(0, 9))) for t in range(1, 45)]
    rows.sort(key=lambda r: r[0])
    problem = Problem.build(jobs, Platform(4, 8.0), _cap(rows, 4, 2100.0), 2100.0, check=True)
    for ms in (0, 3, 20):
        _same(problem, min_samples=ms, window_h=0.2)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=per_machine_scenarios())
def test_compiled_waiting_loop_equals_the_python_loop_on_random_instances(sc) -> None:
    machines, max_cores, horizon, jobs, events = sc
    cap = _cap([(t, m, c) for t, evs in events.items() for m, c in evs], machines, float(horizon))
    problem = Problem.build(
        frame(jobs), Platform(machines, float(max_cores)), cap, float(horizon), check=True
    )
    _same(problem, min_samples=1, window_h=5 / 3600)


def test_reserve_runs_compiled_with_the_python_loops_choices() -> None:
    """``reserve`` (claimed cores taken from jobs that fit now too: the plain ``cost_scan`` at every queue
    length) runs compiled, the same run as the Python loop's, and a different one from without it."""
    horizon = 6 * 3600.0
    tr = harvest_trace(12, horizon, seed=3, stability_spread=1.0, mean_inter_change_s=900.0)
    jobs = _jobs(700, horizon * 0.8, (300, 7000), 12, seed=4)
    problem = Problem.build(jobs, Platform(12, 48.0), tr, horizon, check=True)
    b, _ = _same(problem, reserve=True, min_samples=5, window_h=2.0)
    c, _ = _run(problem, True, min_samples=5, window_h=2.0)
    assert not np.array_equal(b.att_machine, c.att_machine) or not np.array_equal(
        b.att_start_s, c.att_start_s
    )
