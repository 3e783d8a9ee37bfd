"""The compiled Target* loop (sim.policies.target.target_run) is the Python loop, bit for bit, for the three
variants."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.capacity.trace import CapacityTrace
from sim.metrics import EngineOutput
from sim.policies.target import VARIANTS, TargetParams, _TargetHooks
from sim.problem import Platform, Problem
from tests.test_hloop import _assert_same
from tests.test_target_fast import instances, loaded


def _run(
    problem: Problem, policy: str, compiled: bool, params: TargetParams | None = None, stale_slack: int = 4096
) -> EngineOutput:
    """``policy`` on ``problem`` through ``Loop.run``, compiled loop or Python loop (``stale_slack``: the
    stale events the heap tolerates before a sweep)."""
    import sim.policies.target as tg

    old = tg.COMPILED_LOOP
    tg.COMPILED_LOOP = compiled
    try:
        hooks = _TargetHooks(problem, params or TargetParams(), policy)
        hooks.stale_slack = stale_slack
        calls = []
        fast = hooks.compiled_run

        def counted():
            out = fast()
            calls.append(out is not None)
            return out

        hooks.compiled_run = counted
        out = hooks.loop.run(hooks)
        assert calls == [compiled]  # the compiled loop ran exactly when enabled
        return out
    finally:
        tg.COMPILED_LOOP = old


def _problem(n: int, machines: int, cores: float, horizon: float, times, alive, seed: int, **kw) -> Problem:
    """``n`` jobs with fractional cores (float sums depend on their order), integer-second submits and
    durations (equal-time events), over a machines-alive trace ``(times, alive)``."""
    rng = np.random.default_rng(seed)
    submit = rng.integers(0, int(horizon * kw.get("submit_frac", 0.7)), n).astype(float)
    if kw.get("shuffle", False):  # input rows not in submit order
        submit = rng.permutation(submit)
    else:
        submit.sort()
    jobs = pl.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(n)],
            "submit_s": submit,
            "duration_s": rng.integers(1, kw.get("max_dur", 400), n).astype(float),
            "cores": rng.integers(1, int(cores * 10) + 1, n) / 10.0,
        }
    )
    trace = CapacityTrace(np.asarray(times, float), np.asarray(alive), machines, float(horizon))
    return Problem.build(jobs, Platform(machines, float(cores)), trace, float(horizon))


def _walk(machines: int, horizon: float, steps: int, seed: int, floor: int = 0) -> tuple[list, list]:
    """A machines-alive trace at integer times: drops that kill and re-plan, additions, repeats."""
    rng = np.random.default_rng(seed)
    times = [0.0, *sorted(set(rng.integers(1, int(horizon), steps).astype(float).tolist()))]
    level, alive = machines // 2, []
    for _ in times:
        level = int(np.clip(level + rng.integers(-2, 3), floor, machines))
        alive.append(level)
    return times, alive


@pytest.mark.parametrize("policy", list(VARIANTS))
@pytest.mark.parametrize(
    ("n", "machines", "load_dur", "seed", "shuffle"),
    [
        (1500, 8, 400, 1, False),  # drops, additions, M_use moving both ways
        (2500, 6, 900, 2, False),  # a backlog: plans hundreds of jobs deep, step-function rows regrown
        (1200, 10, 300, 3, True),  # input rows not in submit order
    ],
)
def test_compiled_loop_equals_the_python_loop(policy, n, machines, load_dur, seed, shuffle) -> None:
    horizon = 20_000.0
    times, alive = _walk(machines, horizon, 60, seed)
    problem = _problem(n, machines, 4.0, horizon, times, alive, seed, max_dur=load_dur, shuffle=shuffle)
    a = _run(problem, policy, False)
    b = _run(problem, policy, True)
    _assert_same(a, b)
    assert b.n_terminations > 10  # drops killed running jobs (and re-planned the rest)
    assert (b.first_start_s > problem.submit_s).sum() > 50  # jobs waited in plans


def test_the_cases_exercise_growth_shrink_and_regrown_rows() -> None:
    """The parametrized cases reach what the compiled loop reimplements: ``M_use`` grown above ``M⁻`` and
    shrunk back, machines added while jobs wait, step-function rows moved and the pool rebuilt."""
    import sim.policies.target as tg

    horizon = 20_000.0
    times, alive = _walk(6, horizon, 60, 2)
    problem = _problem(2500, 6, 4.0, horizon, times, alive, 2, max_dur=900)
    hooks = _TargetHooks(problem, TargetParams(), "target-asap")
    seen = {"m_use": set(), "fit_rebuild": 0}
    fit = tg._Profiles.fit

    def spy_fit(self, need=2):
        rebuilt = fit(self, need)
        seen["fit_rebuild"] += rebuilt
        return rebuilt

    tg._Profiles.fit = spy_fit
    try:
        tg.COMPILED_LOOP = False
        for name in ("on_arrival", "on_end", "on_capacity"):  # M_use after every event
            hook = getattr(hooks, name)

            def spy(*a, hook=hook):
                hook(*a)
                seen["m_use"].add(int(hooks.ist[3]))

            setattr(hooks, name, spy)
        hooks.loop.run(hooks)
    finally:
        tg._Profiles.fit = fit
        tg.COMPILED_LOOP = True
    m_minus = int(hooks.ist[5])
    assert max(seen["m_use"]) > m_minus and min(seen["m_use"]) <= m_minus
    assert seen["fit_rebuild"] >= 1 and int(hooks.profiles.pcap.max()) > 32


@pytest.mark.parametrize("policy", list(VARIANTS))
def test_stale_sweeps_and_outages_are_the_python_loops(policy) -> None:
    """A trace that drops to no machine while jobs are planned (they wait, their STARTs go stale) and comes
    back: with every re-allocation sweeping stale events (a negative ``stale_slack``) the event count differs
    from a run that pops them one by one, and the compiled loop matches the Python loop in both."""
    horizon = 12_000.0
    times = [0.0, 1500.0, 2000.0, 3500.0, 5000.0, 7000.0, 9000.0]
    alive = [4, 1, 0, 3, 0, 4, 2]
    problem = _problem(900, 4, 4.0, horizon, times, alive, 5, submit_frac=0.6)
    events = set()
    for slack in (-(10**9), 4096):
        a = _run(problem, policy, False, stale_slack=slack)
        b = _run(problem, policy, True, stale_slack=slack)
        _assert_same(a, b)
        events.add(b.events)
    assert len(events) == 2


def test_the_plain_path_and_checkpointing_run_the_python_loop() -> None:
    """``fast=False`` and checkpointing are not compiled: ``compiled_run`` declines (``Loop.run`` runs the
    Python loop)."""
    problem = _problem(50, 2, 4.0, 2000.0, [0.0], [2], 0)
    assert _TargetHooks(problem, TargetParams(), "target-asap", fast=False).compiled_run() is None
    from sim.checkpoint import Checkpoint

    ck = dataclasses.replace(problem, checkpoint=Checkpoint(600.0, 10.0, 20.0))
    assert _TargetHooks(ck, TargetParams(), "target-asap").compiled_run() is None
    assert _TargetHooks(problem, TargetParams(), "target-asap").compiled_run() is not None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    problem=instances(),
    policy=st.sampled_from(list(VARIANTS)),
    ref=st.sampled_from([30.0, 150.0, 1e7]),
    d=st.integers(0, 4),
    pack=st.integers(1, 3),
    slack=st.sampled_from([-(10**9), 0, 4096]),
)
def test_compiled_loop_equals_the_python_loop_on_random_instances(
    problem, policy, ref, d, pack, slack
) -> None:
    params = TargetParams(search_distance=d, reference_days=ref / 86400, pack=pack)
    _assert_same(_run(problem, policy, False, params, slack), _run(problem, policy, True, params, slack))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    problem=loaded(),
    policy=st.sampled_from(list(VARIANTS)),
    d=st.integers(0, 2),
    slack=st.sampled_from([-(10**9), 0, 4096]),
)
def test_compiled_loop_equals_the_python_loop_under_overload(problem, policy, d, slack) -> None:
    params = TargetParams(search_distance=d, reference_days=1e7 / 86400, pack=2)
    _assert_same(_run(problem, policy, False, params, slack), _run(problem, policy, True, params, slack))


def test_a_reallocation_leaves_every_row_room_for_an_arrival(monkeypatch) -> None:
    """Every machine's step-function row keeps two free breakpoints after a re-allocation: the last job it
    plans may fill its machine's row (here at t = 454 s), and an arrival planned there next would write past
    the row into another machine's (both loops grow the pool after the re-allocation's last job)."""
    import sim.policies.target as tg

    short = []
    realloc = tg._TargetHooks._reallocate

    def checked(self, loop, t, extra):
        realloc(self, loop, t, extra)
        pr = self.profiles
        if (pr.plen + 2 > pr.pcap).any():
            short.append(t)

    monkeypatch.setattr(tg._TargetHooks, "_reallocate", checked)
    monkeypatch.setattr(tg, "COMPILED_LOOP", False)
    times, alive = _walk(6, 20_000.0, 60, 5)
    problem = _problem(2500, 6, 4.0, 20_000.0, times, alive, 5, max_dur=900)
    hooks = _TargetHooks(problem, TargetParams(), "target-stretch")
    hooks.loop.run(hooks)
    assert short == []
    assert int(hooks.profiles.pcap.max()) > 32  # rows did grow


def test_the_compiled_loop_releases_the_gil(monkeypatch) -> None:
    """A sweep worker's watchdog is a Python thread (``studies.sweep._expire``): it must run while the
    compiled loop does, or a scenario over its timeout is never ended. A spinning thread's longest pause
    while the loop runs stays well below the loop's time (holding the GIL, it would be all of it)."""
    import threading
    import time

    import sim.policies.target as tg

    real, gap, took = tg.target_run, [0.0], []
    stop, going = threading.Event(), threading.Event()

    def spin() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            now = time.perf_counter()
            if going.is_set():
                gap[0] = max(gap[0], now - last)
            last = now

    def timed(*args):
        going.set()
        t0 = time.perf_counter()
        out = real(*args)
        took.append(time.perf_counter() - t0)
        going.clear()
        return out

    monkeypatch.setattr(tg, "target_run", timed)
    times, alive = _walk(6, 200_000.0, 300, 7)
    problem = _problem(12_000, 6, 8.0, 200_000.0, times, alive, 7, max_dur=900)
    th = threading.Thread(target=spin, daemon=True)
    th.start()
    try:
        _run(problem, "target-asap", True)
    finally:
        stop.set()
        th.join()
    print("took", took, "gap", gap)
    assert len(took) == 1 and took[0] > 0.2 and gap[0] < 0.5 * took[0], (gap[0], took)
