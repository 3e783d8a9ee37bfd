"""Seed 003 termination readings: per-machine victim rules and ``<rule>-fail`` (killed jobs fail for good)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sim import CapacityTrace, simulate
from sim.capacity.trace import MachineCapacityTrace


def _jobs(rows: list[tuple[float, float, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(len(rows))],
            "submit_s": [r[0] for r in rows],
            "duration_s": [r[1] for r in rows],
            "cores": [r[2] for r in rows],
        }
    )


# one 8-core machine; at t = 10 it shrinks to 5 cores, so jobs go one at a time until the rest fit:
# j0 started at 0 (4 cores, 100 s: 40 core-s done, 10 % done), j1 at 2 (1 core, 20 s: 8 core-s, 40 %),
# j2 at 4 (3 cores, 1000 s: 18 core-s, 0.6 %)
JOBS = _jobs([(0.0, 100.0, 4.0), (2.0, 20.0, 1.0), (4.0, 1000.0, 3.0)])
CAP = MachineCapacityTrace(np.array([0.0, 10.0]), np.array([0, 0]), np.array([8.0, 5.0]), 1, 2000.0)


@pytest.mark.parametrize(
    ("rule", "victim"),
    # lifo: newest start (j2) and 5 cores fit; lfd: least fraction done (j2) likewise; lww: least cores ×
    # elapsed first (j1, 8 core-s), still 7 > 5 cores, then j2 (18 core-s) before j0 (40 core-s)
    [("lifo", ["j2"]), ("lww", ["j1", "j2"]), ("lfd", ["j2"])],
)
def test_shrinking_machine_kills_the_rule_s_victims(rule: str, victim: list[str]) -> None:
    r = simulate(JOBS, CAP, 1, 8.0, 2000.0, "ff", {"termination": rule})
    killed = r.jobs.filter(pl.col("terminations") > 0)["job_id"].to_list()
    assert killed == victim


def test_random_victim_is_seeded_and_kills_until_the_rest_fit() -> None:
    cap = MachineCapacityTrace(np.array([0.0, 10.0]), np.array([0, 0]), np.array([8.0, 1.0]), 1, 2000.0)
    a = simulate(JOBS, cap, 1, 8.0, 2000.0, "ff", {"termination": "random"}, seed=3)
    b = simulate(JOBS, cap, 1, 8.0, 2000.0, "ff", {"termination": "random"}, seed=3)
    assert a.jobs.equals(b.jobs)
    # 8 → 1 core: at most one job of ≤ 1 core may stay; every other job was killed once at t = 10
    assert a.metrics["terminations"] >= 2
    victims = {
        tuple(
            sorted(
                simulate(JOBS, cap, 1, 8.0, 2000.0, "ff", {"termination": "random"}, seed=s)
                .jobs.filter(pl.col("terminations") > 0)["job_id"]
                .to_list()
            )
        )
        for s in range(12)
    }
    assert len(victims) > 1  # the choice really is random


@pytest.mark.parametrize("rule", ["lifo", "random", "lww", "lfd"])
def test_fail_variant_never_requeues(rule: str) -> None:
    # two machines, one job each; machine 1 turns off at t = 5 and back on at t = 6
    jobs = _jobs([(0.0, 20.0, 1.0), (0.0, 20.0, 1.0)])
    cap = CapacityTrace(np.array([0.0, 5.0, 6.0]), np.array([2, 1, 2]), 2, 100.0)
    wrap = {"lifo": {}, "random": {"termination": "random"}}.get(rule, {"termination": rule})
    requeue = simulate(jobs, cap, 2, 1.0, 100.0, "ff", wrap, seed=1)
    fail = simulate(jobs, cap, 2, 1.0, 100.0, "ff", {"termination": f"{rule}-fail"}, seed=1)
    assert requeue.metrics["terminations"] == fail.metrics["terminations"] == 1
    assert requeue.metrics["completed"] == 2  # the killed job ran again
    assert fail.metrics["completed"] == 1
    assert sorted(fail.jobs["status"].to_list()) == ["completed", "failed"]
    assert fail.metrics["failure_rate"] == pytest.approx(0.5)
    assert fail.metrics["goodput"] < requeue.metrics["goodput"]
