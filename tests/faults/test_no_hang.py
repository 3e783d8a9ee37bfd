"""No simulation loop can fail to advance time.

On adfffce IAS spun forever when the capacity change period was not a whole number of seconds (0.7, 1.1,
7 changes/h): the next H2 boundary ``(floor(t / period) + 1) · period`` rounded to ``t`` itself (the
quotient of a boundary rounds just below its index), and a survival-knot crossing ``up_since + knot`` could
round to ``t`` too, so the kernel woke at ``t`` again and again. Every case here runs under a wall-clock
guard — a hang fails the test instead of hanging the suite: in process with a timer signal on the
interpreted engine (the same source as the compiled one), in a subprocess with a timeout on the compiled one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sim import simulate
from sim.capacity.generators import budget_trace, random_walk
from sim.energy import CarbonSignal
from sim.engine import use_engine
from sim.policies import available
from sim.workloads.generators import zipf_workload

REPO = Path(__file__).resolve().parents[2]
# a case takes < 5 CPU s (up to ~30 s of wall time on a loaded 2-core machine); a hang never ends. The CPU
# guard catches a spinning loop quickly whatever the load; the wall-clock guard anything else.
CPU_LIMIT_S = 40.0
WALL_LIMIT_S = 300.0

# (policy, changes per hour, machines, horizon h, seed, Zipf skew, walk step): each spun forever on adfffce
KNOWN_HANGS = [
    ("ias", 7.0, 10, 4, 0, 1.5, 0.15),
    ("ias", 1.1, 10, 4, 1, 1.5, 0.15),
    ("ias-h4", 13.0, 10, 3, 11, 2.0, 0.5),
]


class Hung(Exception):
    pass


@contextmanager
def guard(cpu_s: float = CPU_LIMIT_S, wall_s: float = WALL_LIMIT_S) -> Iterator[None]:
    """Raise :class:`Hung` in this (main) thread if the block uses more than ``cpu_s`` of CPU or ``wall_s``
    of wall-clock time."""

    def _stop(signum: int, frame: object) -> None:
        raise Hung(f"no result within {cpu_s:g} CPU s / {wall_s:g} s: the simulation does not advance time")

    old = {s: signal.signal(s, _stop) for s in (signal.SIGALRM, signal.SIGPROF)}
    signal.setitimer(signal.ITIMER_REAL, wall_s)
    signal.setitimer(signal.ITIMER_PROF, cpu_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        for s, h in old.items():
            signal.signal(s, h)


def instance(
    cph: float, machines: int, horizon_h: float, seed: int, skew: float = 1.5, step: float = 0.15
) -> tuple[pl.DataFrame, object, float]:
    """Zipf jobs on ``machines`` 4-core machines under a random walk with ``cph`` changes per hour."""
    horizon = horizon_h * 3600.0
    jobs = zipf_workload(
        skew, machines, 4.0, horizon, seed=seed, cores_choices=(1, 2, 4), cores_probs=(0.5, 0.3, 0.2)
    )
    return jobs, random_walk(machines, horizon, changes_per_hour=cph, step=step, seed=seed), horizon


@pytest.mark.parametrize("case", KNOWN_HANGS, ids=[f"{c[0]}-{c[1]:g}perh" for c in KNOWN_HANGS])
def test_known_hangs_finish(case: tuple) -> None:
    policy, cph, machines, horizon_h, seed, skew, step = case
    jobs, cap, horizon = instance(cph, machines, horizon_h, seed, skew, step)
    with guard(), use_engine("python"):
        r = simulate(jobs, cap, machines, 4.0, horizon, policy=policy)
    assert r.metrics["completed"] > 0


@settings(max_examples=30, deadline=None)
@given(
    cph=st.one_of(st.sampled_from([0.7, 1.1, 7.0, 13.0]), st.floats(0.25, 40.0)),
    policy=st.sampled_from(available()),
    seed=st.integers(0, 1000),
    machines=st.integers(3, 10),
)
@example(cph=7.0, policy="ias-h2", seed=0, machines=10)
@example(cph=0.7, policy="ias", seed=3, machines=10)
def test_every_policy_finishes_for_any_change_period(
    cph: float, policy: str, seed: int, machines: int
) -> None:
    """Property: any change period × every registered policy finishes within the guard."""
    jobs, cap, horizon = instance(cph, machines, 3, seed)
    # a policy that reads the grid (``defer``) gets a diurnal hourly signal with a day of history
    hours = np.arange(24 + int(horizon // 3600) + 2)
    carbon = CarbonSignal(300.0 + 150.0 * np.sin(2 * np.pi * hours / 24), origin_h=24)
    if policy == "ias-forecast":  # it predicts a carbon-budget capacity: that signal's budget
        cap = budget_trace(carbon.values[24 : 24 + int(np.ceil(horizon / 3600))], machines)
    with guard(), use_engine("python"):
        r = simulate(jobs, cap, machines, 4.0, horizon, policy=policy, carbon=carbon)
    assert 0 <= r.metrics["completed"] <= jobs.height


_CHILD = """
import sys
from tests.faults.test_no_hang import KNOWN_HANGS, instance
from sim import simulate
from sim.energy import CarbonSignal
from sim.engine import use_engine
policy, cph, machines, horizon_h, seed, skew, step = KNOWN_HANGS[int(sys.argv[1])]
jobs, cap, horizon = instance(cph, machines, horizon_h, seed, skew, step)
with use_engine("compiled"):
    print(simulate(jobs, cap, machines, 4.0, horizon, policy=policy).metrics["completed"])
"""


@pytest.mark.parametrize("k", [0, 2])
def test_compiled_engine_finishes_in_a_subprocess(k: int) -> None:
    """The compiled kernel does not see signals, so it runs in a child killed at the deadline (loading
    numba's cache takes seconds; a cold cache compiles for about a minute, hence the generous limit)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    try:
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, str(k)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"compiled {KNOWN_HANGS[k]} did not finish in 240 s (hang)")
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) > 0
