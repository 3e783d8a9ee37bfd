"""The compiled harvest-VM loop of capsched (sim.harvest.loop's CAPSCHED pass) is the Python loop, bit for bit: the
same random nodes (numba's ``Generator.integers`` over the placement's own generator) and the generator left
in the same state."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings

from sim.capacity.generators import harvest_trace
from sim.metrics import EngineOutput
from sim.problem import Platform, Problem
from tests.test_hloop import _assert_same, run_harvest
from tests.test_sim_engine import frame, per_machine_scenarios
from tests.test_slacksched import _cap, _jobs


def _run(
    problem: Problem, compiled: bool, seed: int = 0, newest: bool = False, **params
) -> tuple[EngineOutput, dict]:
    """capsched on ``problem``, compiled loop or Python loop (:func:`run_harvest`); the output and the state
    of the placement's generator after the run."""
    from sim.policies.capsched import CapSchedParams

    out, _, fast = run_harvest("capsched", CapSchedParams(**params), problem, compiled, seed, newest)
    rng = next(c.cell_contents for c in fast.__closure__ if isinstance(c.cell_contents, np.random.Generator))
    return out, rng.bit_generator.state


def _same(problem: Problem, seed: int = 0, newest: bool = False, **params) -> EngineOutput:
    (a, sa), (b, sb) = (_run(problem, c, seed, newest, **params) for c in (False, True))
    _assert_same(a, b)
    assert sa == sb  # as many draws, of the same bounds
    return b


def _pool(n: int, load: float) -> tuple[Problem, pl.DataFrame]:
    horizon = 6 * 3600.0
    tr = harvest_trace(12, horizon, seed=3, stability_spread=1.0, mean_inter_change_s=900.0)
    jobs = _jobs(n, horizon * 0.8, (300, int(4500 * load)), 12, seed=4)
    return Problem.build(jobs, Platform(12, 48.0), tr, horizon, check=True), jobs


@pytest.mark.parametrize(
    ("n", "load", "seed", "nodes", "newest"),
    [
        (700, 0.8, 0, 0, False),  # kills and a short queue
        (900, 1.6, 1, 0, False),  # a backlog: the queue outgrows its first 1,024 positions
        (500, 1.0, 2, 8, False),  # a cluster of 8 of the 12 pool HVMs (seeded choice)
        (700, 0.8, 3, 0, True),  # shrinks kill the newest start first
    ],
)
def test_compiled_loop_equals_the_python_loop_on_a_harvest_pool(n, load, seed, nodes, newest) -> None:
    problem, jobs = _pool(n, load)
    b = _same(problem, seed, newest, nodes=nodes)
    assert b.n_terminations > 10 and b.events > n  # shrinks killed jobs
    assert (b.first_start_s > jobs["submit_s"].to_numpy()).sum() > 20  # jobs waited in a queue
    assert b.violations == 0


def test_compiled_loop_equals_the_python_loop_with_ties_and_unsorted_jobs() -> None:
    """Equal submit and end times, fractional cores (free cores that sit on the ``>=`` boundary after float
    sums), jobs not in submit order, a horizon cutting running attempts, capacity changes at instants with
    ENDs and arrivals, several seeds."""
    rng = np.random.default_rng(7)
    n = 300
    jobs = pl.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(n)],
            "submit_s": rng.integers(0, 40, n).astype(float) * 50.0,
            "duration_s": rng.integers(1, 6, n).astype(float) * 50.0,
            "cores": rng.integers(1, 41, n) / 10.0,
        }
    )
    rows = [(0.0, m, 8.0) for m in range(6)]
    rows += [(float(t) * 50.0, int(rng.integers(6)), float(rng.integers(0, 9))) for t in range(1, 45)]
    rows.sort(key=lambda r: r[0])
    cap = _cap(rows, 6, 2100.0)
    problem = Problem.build(jobs, Platform(6, 8.0), cap, 2100.0, check=True)
    for seed in (0, 1, 5):
        _same(problem, seed)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=per_machine_scenarios())
def test_compiled_loop_equals_the_python_loop_on_random_instances(sc) -> None:
    machines, max_cores, horizon, jobs, events = sc
    cap = _cap([(t, m, c) for t, evs in events.items() for m, c in evs], machines, float(horizon))
    problem = Problem.build(
        frame(jobs), Platform(machines, float(max_cores)), cap, float(horizon), check=True
    )
    _same(problem, seed=len(jobs))


def test_the_draws_decide_the_run() -> None:
    """The comparison above can fail: the compiled loop with another generator (another stream of nodes)
    gives another run, so equal outputs mean equal draws."""
    from sim.harvest.loop import run_capsched
    from sim.policies import get_policy
    from sim.policies.capsched import CapSchedParams

    problem, _ = _pool(500, 1.0)
    pol = get_policy("capsched")
    a = run_capsched(pol.declare(problem, CapSchedParams(), 0), np.random.default_rng([0, 2]))
    b = run_capsched(pol.declare(problem, CapSchedParams(), 0), np.random.default_rng([0, 3]))
    assert a is not None and b is not None
    assert not np.array_equal(a.att_machine, b.att_machine)
    assert a.completed_cs != b.completed_cs


def test_options_the_compiled_loop_does_not_serve_run_in_python() -> None:
    """Checkpointing: run_capsched declines (drawing nothing) and the Python loop runs (the Acquirer runs
    compiled: tests/test_hloop_acquirer.py)."""
    from sim.checkpoint import Checkpoint
    from sim.harvest.loop import run_capsched
    from sim.policies import get_policy
    from sim.policies.capsched import CapSchedParams

    horizon = 3600.0
    tr = harvest_trace(4, horizon, seed=1)
    jobs = _jobs(40, horizon * 0.8, (60, 600), 8, seed=2)
    pol = get_policy("capsched")
    p = Problem.build(jobs, Platform(4, 48.0), tr, horizon)
    rng = np.random.default_rng(1)
    s0 = rng.bit_generator.state
    pc = Problem.build(jobs, Platform(4, 48.0), tr, horizon, checkpoint=Checkpoint(600.0, 10.0, 5.0))
    assert run_capsched(pol.declare(pc, CapSchedParams(), 0), rng) is None
    assert rng.bit_generator.state == s0
    assert run_capsched(pol.declare(p, CapSchedParams(), 0), rng) is not None


def test_both_passes_share_one_compiled_signature() -> None:
    """NoDelay's and capsched's runs call the one compiled loop with the same argument types, so warming
    either (``varcap warm``) compiles and caches the other's pass too."""
    from sim.harvest.loop import harvest_run, run_capsched, run_nodelay
    from sim.policies import get_policy
    from sim.policies.capsched import CapSchedParams
    from sim.policies.slacksched import SlackSchedParams

    problem, _ = _pool(100, 1.0)
    assert (
        run_nodelay(get_policy("slacksched-nodelay").declare(problem, SlackSchedParams(), 0), 5) is not None
    )
    assert run_capsched(
        get_policy("capsched").declare(problem, CapSchedParams(), 0), np.random.default_rng(0)
    )
    assert len(harvest_run.signatures) == 1


def test_numbas_generator_integers_is_numpys() -> None:
    """What the compiled pass relies on: ``rng.integers(0, k)`` in numba draws numpy's ``rng.integers(k)``
    sequence for interleaved bounds (``k = 1`` draws nothing; above 2³² the 64-bit path) and leaves the
    shared bit generator in numpy's state."""
    from numba import njit

    @njit
    def draws(rng, ks, out):
        for i in range(ks.size):
            out[i] = rng.integers(0, ks[i])

    ks = np.random.default_rng(9).integers(1, 300, 50_000)
    ks[::7] = 1
    ks[::11] = 2**33 + 3
    a, b = np.random.default_rng([4, 2]), np.random.default_rng([4, 2])
    want = np.array([a.integers(int(k)) for k in ks], np.int64)
    got = np.empty(ks.size, np.int64)
    draws(b, ks, got)
    assert np.array_equal(want, got)
    assert a.bit_generator.state == b.bit_generator.state
