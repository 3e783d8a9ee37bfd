"""The compiled harvest-VM loop of slacksched-nodelay (sim.harvest.loop) is the Python loop, bit for bit."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings

from sim.capacity.generators import harvest_trace
from sim.harvest.cluster import Cluster
from sim.metrics import EngineOutput
from sim.problem import Platform, Problem
from tests.test_sim_engine import frame, per_machine_scenarios
from tests.test_slacksched import _cap, _jobs


def run_harvest(
    policy: str, params: object, problem: Problem, compiled: bool, seed: int = 0, newest: bool = False
) -> tuple[EngineOutput, Cluster, Callable[[], EngineOutput | None]]:
    """``policy`` (a harvest-loop policy served by sim.harvest.loop) on ``problem`` through the dispatcher's path,
    compiled loop or Python loop (``newest``: shrinks kill the newest start first); the output, the Cluster
    and its own ``compiled_run``. Asserts the compiled loop ran exactly when enabled."""
    import sim.harvest.loop
    from sim.policies import get_policy

    old = sim.harvest.loop.ENABLED
    sim.harvest.loop.ENABLED = compiled
    try:
        cl = get_policy(policy).declare(problem, params, seed)
        if newest:
            cl.cfg = dataclasses.replace(cl.cfg, kill_order="newest")
        calls: list[bool] = []
        fast = cl.compiled_run
        assert fast is not None

        def counted():
            out = fast()
            calls.append(out is not None)
            return out

        cl.compiled_run = counted
        out = cl.loop.run(cl)
        assert calls == [compiled]  # the compiled loop ran exactly when enabled
        return out, cl, fast
    finally:
        sim.harvest.loop.ENABLED = old


def _run(problem: Problem, compiled: bool, seed: int = 0, newest: bool = False, **params) -> EngineOutput:
    """slacksched-nodelay on ``problem``, compiled loop or Python loop (:func:`run_harvest`)."""
    from sim.policies.slacksched import SlackSchedParams

    return run_harvest("slacksched-nodelay", SlackSchedParams(**params), problem, compiled, seed, newest)[0]


def _assert_same(a: EngineOutput, b: EngineOutput) -> None:
    """Every field equal: arrays element for element (dtype too), floats bit for bit."""
    for f in dataclasses.fields(EngineOutput):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f.name
        else:
            assert x == y and isinstance(y, float) == isinstance(x, float), (f.name, x, y)


@pytest.mark.parametrize(
    ("n", "load", "window_h", "min_samples", "nodes", "kill_order_newest"),
    [
        (700, 0.8, 2.0, 5, 0, False),  # a window that drops samples, a model from the first hours
        (900, 1.6, 24.0, 5, 0, False),  # a backlog: the queue outgrows its first 1,024 positions
        (400, 0.6, 1.0, 10_000, 0, False),  # never enough samples: first node with room
        (500, 1.0, 3.0, 0, 8, False),  # a cluster of 8 of the 12 pool HVMs (seeded choice)
        (700, 0.8, 2.0, 5, 0, True),  # shrinks kill the newest start first
    ],
)
def test_compiled_loop_equals_the_python_loop_on_a_harvest_pool(
    n, load, window_h, min_samples, nodes, kill_order_newest
) -> None:
    horizon = 6 * 3600.0
    tr = harvest_trace(12, horizon, seed=3, stability_spread=1.0, mean_inter_change_s=900.0)
    jobs = _jobs(n, horizon * 0.8, (300, int(4500 * load)), 12, seed=4)
    problem = Problem.build(jobs, Platform(12, 48.0), tr, horizon, check=True)
    kw = {"window_h": window_h, "min_samples": min_samples, "nodes": nodes}
    a = _run(problem, False, newest=kill_order_newest, **kw)
    b = _run(problem, True, newest=kill_order_newest, **kw)
    _assert_same(a, b)
    assert b.n_terminations > 10 and b.events > n  # shrinks killed jobs
    assert (b.first_start_s > jobs["submit_s"].to_numpy()).sum() > 20  # jobs waited in a queue


def test_compiled_loop_equals_the_python_loop_with_ties_and_unsorted_jobs() -> None:
    """Equal submit and end times (the END tie order by job), fractional cores (float sums that depend on
    the order of starts and ends), jobs not in submit order, a horizon cutting running attempts, and
    capacity changes at instants with ENDs and arrivals."""
    rng = np.random.default_rng(7)
    n = 300
    jobs = pl.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(n)],
            "submit_s": rng.integers(0, 40, n).astype(float) * 50.0,
            "duration_s": rng.integers(1, 6, n).astype(float) * 50.0,
            "cores": rng.integers(1, 41, n) / 10.0,  # tenths: sums depend on their order
        }
    )
    rows = [(0.0, m, 8.0) for m in range(4)]
    rows += [(float(t) * 50.0, int(rng.integers(4)), float(rng.integers(0, 9))) for t in range(1, 45)]
    rows.sort(key=lambda r: r[0])
    cap = _cap(rows, 4, 2100.0)
    problem = Problem.build(jobs, Platform(4, 8.0), cap, 2100.0, check=True)
    for ms in (0, 3):
        _assert_same(_run(problem, False, min_samples=ms), _run(problem, True, min_samples=ms))


def test_compiled_loop_equals_the_python_loop_when_nodes_change_together() -> None:
    """Every node changes at the same instants, some growing and some shrinking: equal elapsed times, shrink
    probabilities that differ by node (the compiled scan's per-run reuse of eq. 1 must tell them apart)."""
    rng = np.random.default_rng(11)
    machines, horizon = 6, 30_000.0
    rows = [(0.0, m, 16.0) for m in range(machines)]
    level = np.full(machines, 16.0)
    for k in range(1, int(horizon // 300)):
        level = np.clip(level + rng.choice([-6.0, 4.0], machines, p=[0.3, 0.7]), 4.0, 32.0)
        rows += [(k * 300.0, m, float(level[m])) for m in range(machines)]
    cap = _cap(rows, machines, horizon)
    jobs = _jobs(400, horizon * 0.9, (200, 2500), 6, seed=12)
    problem = Problem.build(jobs, Platform(machines, 32.0), cap, horizon)
    kw = {"min_samples": 5, "window_h": 2.0}
    a, b = _run(problem, False, **kw), _run(problem, True, **kw)
    _assert_same(a, b)
    assert b.n_terminations > 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=per_machine_scenarios())
def test_compiled_loop_equals_the_python_loop_on_random_instances(sc) -> None:
    machines, max_cores, horizon, jobs, events = sc
    cap = _cap([(t, m, c) for t, evs in events.items() for m, c in evs], machines, float(horizon))
    problem = Problem.build(
        frame(jobs), Platform(machines, float(max_cores)), cap, float(horizon), check=True
    )
    kw = {"min_samples": 1, "window_h": 5 / 3600}
    _assert_same(_run(problem, False, **kw), _run(problem, True, **kw))


def test_options_the_compiled_loop_does_not_serve_run_in_python() -> None:
    """Checkpointing: run_nodelay declines and the Python loop runs (the Acquirer runs compiled:
    tests/test_hloop_acquirer.py)."""
    from sim.checkpoint import Checkpoint
    from sim.harvest.loop import run_nodelay
    from sim.policies import get_policy
    from sim.policies.slacksched import SlackSchedParams

    horizon = 3600.0
    tr = harvest_trace(4, horizon, seed=1)
    jobs = _jobs(40, horizon * 0.8, (60, 600), 8, seed=2)
    pol = get_policy("slacksched-nodelay")
    p = Problem.build(jobs, Platform(4, 48.0), tr, horizon)
    assert run_nodelay(pol.declare(p, SlackSchedParams(acquirer=True), 0), 30) is not None
    pc = Problem.build(jobs, Platform(4, 48.0), tr, horizon, checkpoint=Checkpoint(600.0, 10.0, 5.0))
    assert run_nodelay(pol.declare(pc, SlackSchedParams(), 0), 30) is None
    assert run_nodelay(pol.declare(p, SlackSchedParams(), 0), 30) is not None


def test_np_sum_is_numpys_sum_bit_for_bit() -> None:
    """The capacity step's sum of the allocated nodes' cores (numpy's pairwise summation)."""
    from sim.harvest.loop import np_sum

    rng = np.random.default_rng(0)
    for n in [*range(0, 140), 255, 256, 1000, 1029, 9000]:
        a = rng.standard_normal(n) * 10 ** rng.uniform(-3, 3, n)
        assert np_sum(a) == float(a.sum()), n


def test_cache_files_are_deleted_when_a_source_compiled_in_changes(tmp_path, monkeypatch) -> None:
    """numba checks only sim/harvest/loop.py's stamp; a change to passes.py or the engine's trees must drop the
    cached loop (a stale stamp deletes hloop's cache files, a current one keeps them)."""
    import hashlib

    import sim.harvest.loop as H

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    src = H.HERE.parent
    d = tmp_path / f"{src.name}_{hashlib.sha1(str(src).encode()).hexdigest()}"  # noqa: S324
    d.mkdir()
    (d / "varcap_hloop.sha256").write_text("stale")
    files = [d / "loop.nodelay_run-1.py311.nbi", d / "loop.nodelay_run-1.py311.1.nbc"]
    other = d / "passes.max_free-1.py311.nbi"
    for f in [*files, other]:
        f.write_text("x")
    H._invalidate_stale_cache()
    assert not any(f.exists() for f in files) and other.exists()
    for f in files:
        f.write_text("x")
    H._invalidate_stale_cache()  # the stamp is current now: nothing deleted
    assert all(f.exists() for f in files)
