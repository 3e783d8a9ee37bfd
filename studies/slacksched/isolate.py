"""Paper 002's isolating runs: which part of SlackSched's model leaves its JCT gain small.

``python -m studies.slacksched.isolate [--days D] [--seeds 0,1] [--spreads 0,1,2] [--trace T]`` runs, on the study's
set-up (:func:`studies.slacksched.scenarios.ss_scenarios`: jobs of §4.2.1's size at load 0.6, a pool of 64
harvest-VM stand-ins), the CapacityScheduler (random matching), SlackSched, NoDelay, the Oracle and one
variant built here, and prints each one's mean and p90 JCT cut against random matching and its
termination cut:

* ``informed-nodelay``: NoDelay's rule (place now on a node with room, never wait) with eq. 1 replaced by
  the truth read from the future trace — the lowest-index node with room on which the task will not be
  killed, else a random node with room (the CapacityScheduler's draw). It separates the two things the
  Oracle has and SlackSched lacks: if it gains about what the Oracle gains, waiting for a safe node is not
  what matters and the whole gap is eq. 1's prediction on the HVM traces (knowledge, not the rule).
* ``stability_spread`` of the stand-in pool (paper 002 Fig. 2's spatial diversity: 0 = identical HVMs, 1 the
  study's, 2 more diverse): how much per-HVM signal eq. 1 can find through the time since the last change.

``--thresholds 0.5,0.6,0.7,0.8,0.9`` sweeps Algorithm 3's threshold (``slacksched-heartbeat``) instead;
``--table calibrated,former-trace`` prints SlackSched, NoDelay, Algorithm 3 and the Oracle against random
matching on each HVM trace with §4.2's waste share of every run. ``--trace`` picks the HVM trace
(:func:`studies.slacksched.scenarios.hvm_capacity`: ``calibrated``, the default, or ``former-trace``).

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
from studies.slacksched.scenarios import LOAD, POOL, hvm_capacity, job_tasks


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


def _scenario(
    policy: str, spread: float | None, seed: int, days: float, trace: str = "calibrated"
) -> Scenario:
    lo, hi = job_tasks()
    cap = hvm_capacity(seed, trace)
    if spread is not None:  # the pool's diversity: the calibrated model's node spread, the former's spread
        cap["node_spread" if trace == "calibrated" else "stability_spread"] = spread
    return Scenario(f"harvest-jobs-{lo}-{hi}", cap, policy, machines=POOL, cores=48, horizon_days=days,
                    seed=seed, load=LOAD)  # fmt: skip


#: the last run's metrics (``run`` returns only what ``cuts`` reads)
LAST_METRICS: dict[str, float] = {}


def run(
    policy: str,
    spread: float | None,
    seed: int,
    days: float,
    settings: dict[str, str] | None = None,
    trace: str = "calibrated",
) -> tuple[pl.DataFrame, int]:
    """Per-job-group completion times (:func:`sim.workloads.generators.group_completion_times`) and terminations of
    ``policy`` (a registered policy with ``settings``, or ``informed-nodelay``) on the study's set-up with the
    HVM trace ``trace`` (:func:`studies.slacksched.scenarios.hvm_capacity`; ``spread`` None: its default
    diversity). The run's metrics are left in :data:`LAST_METRICS`."""
    from sim import simulate
    from sim.workloads.generators import group_completion_times
    from studies.scenarios import build_capacity, build_jobs

    sc = _scenario("capsched", spread, seed, days, trace)
    jobs = build_jobs(sc, Path("."), POOL)
    tr = build_capacity(sc, Path("."), POOL)
    assert isinstance(tr, MachineCapacityTrace)
    if policy != InformedNoDelay.name:
        r = simulate(jobs, tr, POOL, 48, sc.horizon_s, policy=policy, settings=settings, seed=seed)
        LAST_METRICS.clear()
        LAST_METRICS.update({k: float(v) for k, v in r.metrics.items() if isinstance(v, int | float)})
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
#: the table's rows: SlackSched (waiting), NoDelay, Algorithm 3 and the Oracle against random matching
TABLE = ("slacksched", "slacksched-nodelay", "slacksched-heartbeat", "oracle")


def waste_share(metrics: dict[str, float]) -> float:
    """§4.2's waste: "work wasted due to preemptions divided by total work done" (wasted / (completed +
    wasted) core-seconds), in %."""
    w, g = metrics["wasted_fraction"], metrics["goodput"]
    return 100.0 * w / max(w + g, 1e-12)


def table(traces: list[str], seeds: list[int], days: float) -> None:
    """Print, per HVM trace and seed, each of :data:`TABLE`'s mean / p90 JCT and termination cut against
    random matching and every run's §4.2 waste share."""
    print(f"{'trace':13s} {'seed':>4s} {'policy':21s} {'mean cut %':>10s} {'p90 cut %':>9s} {'term cut %':>10s} "
          f"{'waste %':>7s}")  # fmt: skip
    for trace in traces:
        for seed in seeds:
            base = run("capsched", None, seed, days, trace=trace)
            print(f"{trace:13s} {seed:>4d} {'capsched':21s} {'':>10s} {'':>9s} {'':>10s} "
                  f"{waste_share(LAST_METRICS):>7.1f}", flush=True)  # fmt: skip
            for p in TABLE:
                mc, pc, tc = cuts(base, run(p, None, seed, days, trace=trace))
                print(f"{trace:13s} {seed:>4d} {p:21s} {mc:>10.1f} {pc:>9.1f} {tc:>10.1f} "
                      f"{waste_share(LAST_METRICS):>7.1f}", flush=True)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=float, default=2.0)
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--spreads", default="1")
    ap.add_argument(
        "--thresholds", default="", help="Algorithm 3's thresholds to sweep instead (e.g. 0.5,0.7)"
    )
    ap.add_argument("--trace", default="calibrated", help="HVM trace: calibrated | former-trace")
    ap.add_argument(
        "--table", default="", help="print the policy table on these traces (e.g. calibrated,former-trace)"
    )
    a = ap.parse_args()
    if a.table:
        table(a.table.split(","), [int(x) for x in a.seeds.split(",")], a.days)
        return
    if a.thresholds:
        print(f"{'seed':>4s} {'threshold':>9s} {'mean cut %':>10s} {'p90 cut %':>9s} {'term cut %':>10s}")
        for seed in (int(x) for x in a.seeds.split(",")):
            base = run("capsched", None, seed, a.days, trace=a.trace)
            for thr in a.thresholds.split(","):
                st = {"threshold": thr}
                mc, pc, tc = cuts(base, run("slacksched-heartbeat", None, seed, a.days, st, trace=a.trace))
                print(f"{seed:>4d} {float(thr):>9g} {mc:>10.1f} {pc:>9.1f} {tc:>10.1f}", flush=True)
        return
    print(
        f"{'spread':>6s} {'seed':>4s} {'policy':18s} {'mean cut %':>10s} {'p90 cut %':>9s} {'term cut %':>10s}"
    )
    for spread in (float(x) for x in a.spreads.split(",")):
        for seed in (int(x) for x in a.seeds.split(",")):
            base = run("capsched", spread, seed, a.days, trace=a.trace)
            for p in POLICIES:
                mc, pc, tc = cuts(base, run(p, spread, seed, a.days, trace=a.trace))
                print(f"{spread:>6g} {seed:>4d} {p:18s} {mc:>10.1f} {pc:>9.1f} {tc:>10.1f}", flush=True)


if __name__ == "__main__":
    main()
