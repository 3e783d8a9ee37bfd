"""Adding a Python policy is one module plus one registry line: this test module is that module. Its toy
policy, ``toy-worst-fit``, implements the hooks of :mod:`sim.engine.loop` from scratch (a FIFO queue, the machine
with the most free cores, LIFO turn-off) and registers itself; ``sim.simulate`` then runs it through the
one dispatcher, with the shared accounting and metrics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from sim import CapacityTrace, simulate
from sim.engine.loop import Loop
from sim.metrics import RUNNING
from sim.policies import Dispatched, register
from sim.problem import Problem
from tests.test_sim_engine import frame, scenarios


@dataclass(frozen=True)
class ToyParams:
    seed: int = 0


class _WorstFitHooks:
    end_tie_by_job = True
    tick_s = float("inf")

    def __init__(self, problem: Problem) -> None:
        self.loop = Loop(problem)
        self.cores = float(problem.platform.cores)
        self.capacity_times = problem.capacity.time_s
        self.alive_at = problem.capacity.machines_alive
        self.alive = 0
        self.used = np.zeros(problem.platform.machines)
        self.queue: list[int] = []

    def on_arrival(self, loop: Loop, j: int, t: float) -> None:
        self.queue.append(j)

    def on_end(self, loop: Loop, j: int, t: float) -> None:
        self.used[loop.machine[j]] -= loop.cores[j]

    def on_capacity(self, loop: Loop, t: float, lo: int, hi: int) -> None:
        self.alive = int(self.alive_at[hi - 1])
        loop.record_capacity(t, self.alive * self.cores)
        for j in np.flatnonzero((loop.status == RUNNING) & (loop.machine >= self.alive)).tolist():
            self.used[loop.machine[j]] -= loop.cores[j]
            loop.kill(j, t)
            self.queue.append(j)

    def on_tick(self, loop: Loop, t: float) -> None: ...

    def on_start(self, loop: Loop, j: int, t: float, tag: int) -> None: ...

    def on_instant_end(self, loop: Loop, t: float) -> None:
        keep = []
        for j in self.queue:
            free = self.cores - self.used[: self.alive]
            m = int(np.argmax(free)) if self.alive else -1
            if m >= 0 and free[m] >= loop.cores[j]:
                self.used[m] += loop.cores[j]
                loop.start(j, m, t)
            else:
                keep.append(j)
        self.queue = keep


class ToyWorstFit(Dispatched):
    name = "toy-worst-fit"
    Params = ToyParams

    def declare(self, problem: Problem, params: ToyParams, seed: int) -> _WorstFitHooks:
        return _WorstFitHooks(problem)


register(ToyWorstFit())  # the one registry line (a module under sim/policies/ also adds its name to _MODULES)


def test_the_toy_policy_runs_through_the_dispatcher() -> None:
    cap = CapacityTrace(np.array([0.0, 50.0]), np.array([2, 1]), 2, 100.0)
    jobs = frame([(0, 80, 1), (0, 30, 1), (10, 30, 1)])
    r = simulate(jobs, cap, 2, 1, 100.0, policy="toy-worst-fit")
    # worst fit: job 0 → machine 0, job 1 → machine 1 (more free), job 2 waits for job 1 (ends at 30);
    # machine 1 turns off at 50 and kills job 2, which restarts on machine 0 at 80 and runs past the horizon
    assert r.jobs["first_start_s"].to_list() == [0.0, 0.0, 30.0]
    assert r.jobs["terminations"].to_list() == [0, 0, 1] and r.jobs["attempts"].to_list() == [1, 1, 2]
    assert r.metrics["completed"] == 2 and r.metrics["terminations"] == 1
    assert r.metrics["available_core_seconds"] == pytest.approx(2 * 50 + 1 * 50)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenarios())
def test_the_toy_policy_keeps_the_shared_books(sc) -> None:
    machines, cores, horizon, jobs, cap = sc
    ts = sorted(cap)
    trace = CapacityTrace(np.array(ts, float), np.array([cap[t] for t in ts]), machines, float(horizon))
    r = simulate(frame(jobs), trace, machines, cores, horizon, policy="toy-worst-fit")
    m = r.metrics
    total = m["goodput"] + m["wasted_fraction"] + m["in_flight_fraction"] + m["idle_fraction"]
    assert total == pytest.approx(1.0) and m["idle_fraction"] >= -1e-9
    assert m["terminations"] == int(r.jobs["terminations"].sum())
    started = r.jobs.filter(r.jobs["first_start_s"].is_not_nan())
    assert (started["first_start_s"] >= started["submit_s"]).all()
