"""Seed 002's isolating runs (issue #29): which part of SlackSched's model leaves its JCT gain small.

``python -m studies.slacksched.isolate [--days D] [--seeds 0,1] [--spreads 0,1,2]`` runs, on the study's
set-up (:func:`studies.slacksched.scenarios.ss_scenarios`: jobs of §4.2.1's size at load 0.6, a pool of 64
harvest-VM stand-ins), the CapacityScheduler (random matching), SlackSched, NoDelay, the Oracle and one
variant built here, and prints each one's mean and p90 JCT cut against random matching and its
termination cut:

* ``informed-nodelay``: NoDelay's rule (place now on a node with room, never wait) with eq. 1 replaced by
  the truth read from the future trace — the lowest-index node with room on which the task will not be
  killed, else a random node with room (the CapacityScheduler's draw). It separates the two things the
  Oracle has and SlackSched lacks: if it gains about what the Oracle gains, waiting for a safe node is not
  what matters and the whole gap is eq. 1's prediction on the HVM traces (knowledge, not the rule).
* ``stability_spread`` of the stand-in pool (seed 002 Fig. 2's spatial diversity: 0 = identical HVMs, 1 the
  study's, 2 more diverse): how much per-HVM signal eq. 1 can find through the time since the last change.

``--thresholds 0.5,0.6,0.7,0.8,0.9`` sweeps Algorithm 3's threshold (``slacksched-heartbeat``) instead.

Nothing here changes a scheduler; it reads the simulator's outputs only.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from sim.capacity.trace import MachineCapacityTrace
from sim.harvest.cluster import Cluster, ClusterOptions
from sim.metrics import compute_metrics
from sim.policies import Dispatched
from sim.problem import Problem
from studies.scenarios import Scenario
from studies.slacksched.scenarios import LOAD, POOL, job_tasks


@dataclass(frozen=True)
class _Params(ClusterOptions):
    pass


class InformedNoDelay(Dispatched):
    """NoDelay with eq. 1 replaced by the truth: a node with room on which the task survives (lowest index),
    else a uniformly random node with room; waits only when no node has room."""

    name = "informed-nodelay"
    Params = _Params

    def declare(self, problem: Problem, params: _Params, seed: int) -> Cluster:
        rng = np.random.default_rng([seed, 2])

        def place(cl: Cluster, j: int, t: float) -> int:
            c, d = float(cl.cores[j]), float(cl.duration[j])
            room = np.flatnonzero(cl.free() >= c)
            if room.size == 0:
                return -1
            for m in room:
                if cl.min_future_cap(int(m), t, d) >= cl.used[m] + c - 1e-9:
                    return int(m)
            return int(room[rng.integers(room.size)])

        return Cluster(problem, params.cluster(), seed, place)


def _scenario(policy: str, spread: float, seed: int, days: float) -> Scenario:
    lo, hi = job_tasks()
    cap = {"kind": "harvest", "pool": POOL, "max_cores": 48, "stability_spread": spread, "seed": seed}
    return Scenario(f"harvest-jobs-{lo}-{hi}", cap, policy, machines=POOL, cores=48, horizon_days=days,
                    seed=seed, load=LOAD)  # fmt: skip


def run(
    policy: str, spread: float, seed: int, days: float, settings: dict[str, str] | None = None
) -> tuple[pl.DataFrame, int]:
    """Per-job-group completion times (:func:`sim.workloads.generators.group_completion_times`) and terminations of
    ``policy`` (a registered policy with ``settings``, or ``informed-nodelay``) on the study's set-up."""
    from sim import simulate
    from sim.workloads.generators import group_completion_times
    from studies.scenarios import build_capacity, build_jobs

    sc = _scenario("capsched", spread, seed, days)
    jobs = build_jobs(sc, Path("."), POOL)
    tr = build_capacity(sc, Path("."), POOL)
    assert isinstance(tr, MachineCapacityTrace)
    if policy != InformedNoDelay.name:
        r = simulate(jobs, tr, POOL, 48, sc.horizon_s, policy=policy, settings=settings, seed=seed)
        return group_completion_times(r.jobs), int(r.metrics["terminations"])
    table, terms = informed_nodelay(jobs, tr, POOL, 48.0, sc.horizon_s, seed)
    return group_completion_times(table), terms


def informed_nodelay(
    jobs: pl.DataFrame, tr: MachineCapacityTrace, machines: int, cores: float, horizon_s: float, seed: int
) -> tuple[pl.DataFrame, int]:
    """Run :class:`InformedNoDelay`: its per-job table (as ``simulate``'s) and its terminations."""
    from sim.api import run_policy
    from sim.metrics import job_table
    from sim.problem import Platform

    problem = Problem.build(jobs, Platform(machines, cores, None), tr, horizon_s, False, False)
    art = run_policy(InformedNoDelay(), problem, _Params(), seed)
    m = compute_metrics(art.output, problem.submit_s, problem.duration_s, problem.cores, horizon_s, 0.10, 0.0,
                        horizon_s)  # fmt: skip
    return job_table(art.output, problem.job_id, problem.submit_s), int(m["terminations"])


def cuts(base: tuple[pl.DataFrame, int], other: tuple[pl.DataFrame, int]) -> tuple[float, float, float]:
    """Mean JCT, p90 JCT and termination cut (%) of ``other`` against ``base`` over jobs both completed."""
    both = base[0].join(other[0], on="group", suffix="_s").filter(pl.col("complete") & pl.col("complete_s"))
    b, s = both["jct_s"].to_numpy(), both["jct_s_s"].to_numpy()
    return (
        100.0 * (1.0 - s.mean() / b.mean()),
        100.0 * (1.0 - np.percentile(s, 90) / np.percentile(b, 90)),
        100.0 * (1.0 - other[1] / max(base[1], 1)),
    )


POLICIES = ("slacksched", "slacksched-nodelay", InformedNoDelay.name, "oracle")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=float, default=2.0)
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--spreads", default="1")
    ap.add_argument(
        "--thresholds", default="", help="Algorithm 3's thresholds to sweep instead (e.g. 0.5,0.7)"
    )
    a = ap.parse_args()
    if a.thresholds:
        print(f"{'seed':>4s} {'threshold':>9s} {'mean cut %':>10s} {'p90 cut %':>9s} {'term cut %':>10s}")
        for seed in (int(x) for x in a.seeds.split(",")):
            base = run("capsched", 1.0, seed, a.days)
            for thr in a.thresholds.split(","):
                mc, pc, tc = cuts(base, run("slacksched-heartbeat", 1.0, seed, a.days, {"threshold": thr}))
                print(f"{seed:>4d} {float(thr):>9g} {mc:>10.1f} {pc:>9.1f} {tc:>10.1f}", flush=True)
        return
    print(
        f"{'spread':>6s} {'seed':>4s} {'policy':18s} {'mean cut %':>10s} {'p90 cut %':>9s} {'term cut %':>10s}"
    )
    for spread in (float(x) for x in a.spreads.split(",")):
        for seed in (int(x) for x in a.seeds.split(",")):
            base = run("capsched", spread, seed, a.days)
            for p in POLICIES:
                mc, pc, tc = cuts(base, run(p, spread, seed, a.days))
                print(f"{spread:>6g} {seed:>4d} {p:18s} {mc:>10.1f} {pc:>9.1f} {tc:>10.1f}", flush=True)


if __name__ == "__main__":
    main()
