"""Paper 001's isolating runs: why PackedTargetASAP's mean stretch grows against FirstFitAware.

``python -m studies.riskaware.isolate [--profile full] [--seeds 0,1,2,3,4]`` runs the study's own scenarios
(:func:`studies.riskaware.scenarios.ra_scenarios`: SyntheticUniform, M_ra = 8) with FirstFitAware,
TargetASAP, PackedTargetASAP and PackedTargetASAP under one isolating reading at a time
(:data:`READINGS`: settings of :class:`sim.policies.target.TargetParams`, each switching off one rule), and
prints per reading the mean and max stretch change and the goodput change against FirstFitAware (mean over
the seeds, then each seed's mean-stretch change), then per pack of five machines the mean wait of the jobs
whose first attempt ran there. Each run takes a few CPU seconds at the full profile.

Nothing here changes a scheduler or the study; the readings are settings whose defaults are the paper's rules.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import polars as pl

from sim.api import simulate
from studies.claims import PROFILES, Profile
from studies.riskaware.scenarios import ra_scenarios
from studies.scenarios import Scenario, build_capacity, simulated_platform, sized_jobs
from studies.sweep import inputs_dir

#: label → (policy, settings): the study's three policies, then one rule of PackedTargetASAP switched at a time
READINGS: dict[str, tuple[str, dict[str, str]]] = {
    "ff": ("ff", {}),
    "target-asap": ("target-asap", {}),
    "packed": ("packed-target-asap", {}),
    # §4.5's rounding "to the nearest multiple of 5" replaced by rounding down (the pack holding the target)
    "packed pack_floor": ("packed-target-asap", {"pack_floor": "true"}),
    # §4.4's S⁺ test off: a job no near machine starts now goes to the earliest start within D⁺
    "packed stretch_test=off": ("packed-target-asap", {"stretch_test": "false"}),
    "target-asap stretch_test=off": ("target-asap", {"stretch_test": "false"}),
    # no packs at all: TargetASAP's rule, job for job
    "packed pack=1": ("packed-target-asap", {"pack": "1"}),
}


@dataclass(frozen=True)
class Run:
    """One run's metrics and, per pack of five machines, (jobs first started there, their mean wait in h)."""

    metrics: dict[str, float]
    packs: dict[int, tuple[int, float]]


def run(sc: Scenario, policy: str, settings: dict[str, str]) -> Run:
    """Simulate scenario ``sc`` (its jobs, capacity, window) with ``policy`` and ``settings`` instead of its
    own; raises like :func:`sim.api.simulate`."""
    machines, jobs = sized_jobs(sc, inputs_dir())
    cap = build_capacity(sc, inputs_dir(), machines)
    jobs = jobs.filter(pl.col("cores") <= sc.cores)
    n_sim, c_sim = simulated_platform(sc, machines)
    window = {"window_start_s": sc.window_start_s} if sc.warmup_days else {}
    r = simulate(jobs, cap, n_sim, c_sim, sc.horizon_s, policy, settings, seed=sc.seed,
                 record_timeseries=True, **window)  # fmt: skip
    assert r.attempts is not None
    return Run(r.metrics, pack_waits(r.jobs, r.attempts, sc.window_start_s))


def pack_waits(jobs: pl.DataFrame, attempts: pl.DataFrame, since_s: float) -> dict[int, tuple[int, float]]:
    """Per pack of five machines (first machine's index): the jobs submitted from ``since_s`` whose first
    attempt ran on it, and their mean wait from submission to that start, in hours."""
    first = attempts.group_by("job_id", maintain_order=True).agg(pl.col("machine").first())
    j = jobs.filter(pl.col("submit_s") >= since_s).join(first, on="job_id")
    g = (
        j.group_by((pl.col("machine") // 5 * 5).alias("pack"))
        .agg(
            pl.len().alias("n"),
            ((pl.col("first_start_s") - pl.col("submit_s")).mean() / 3600).alias("wait_h"),
        )
        .sort("pack")
    )
    return {int(p): (int(n), float(w)) for p, n, w in g.iter_rows()}


def change(a: float, b: float) -> float:
    """100 × (b − a) / a: b's change against a, in %."""
    return 100.0 * (b - a) / a


def isolate(pr: Profile, seeds: list[int], readings: list[str]) -> dict[str, list[Run]]:
    """Every reading's run on each seed's default scenario (M_ra = 8) of profile ``pr``; KeyError for an
    unknown reading or a seed outside the profile."""
    sc = ra_scenarios(pr)
    return {
        lab: [run(sc[("synthetic-uniform", "ff", 8, s)], *READINGS[lab]) for s in seeds] for lab in readings
    }


def report(runs: dict[str, list[Run]]) -> str:
    """The table :func:`main` prints (needs the ``ff`` reading)."""
    ff = runs["ff"]
    out = [
        f"{'reading':30s} {'mean stretch %':>15s} {'max stretch %':>14s} {'goodput %':>10s}  per seed (mean)"
    ]
    for lab, rs in runs.items():
        if lab == "ff":
            continue
        ch = {
            k: [change(f.metrics[k], r.metrics[k]) for f, r in zip(ff, rs, strict=True)]
            for k in ("mean_stretch", "max_stretch", "goodput_partial")
        }
        per = " ".join(f"{x:+.0f}" for x in ch["mean_stretch"])
        out.append(
            f"{lab:30s} {np.mean(ch['mean_stretch']):+15.1f} {np.mean(ch['max_stretch']):+14.1f} "
            f"{np.mean(ch['goodput_partial']):+10.2f}  {per}"
        )
    out.append("\nmean wait (h) of the jobs first started on each pack of 5 machines, seeds pooled")
    for lab, rs in runs.items():
        packs = sorted({p for r in rs for p in r.packs})
        cells = []
        for p in packs:
            n = sum(r.packs.get(p, (0, 0.0))[0] for r in rs)
            w = sum(r.packs.get(p, (0, 0.0))[0] * r.packs.get(p, (0, 0.0))[1] for r in rs)
            cells.append(f"{p}-{p + 4}: {w / n:5.1f}" if n else f"{p}-{p + 4}: -")
        out.append(f"{lab:30s} " + "  ".join(cells))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    """Command line: run the readings and print :func:`report`."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="full", choices=sorted(PROFILES))
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--readings", default=",".join(READINGS), help="comma-separated; 'ff' is always run")
    a = ap.parse_args(argv)
    readings = ["ff", *(r for r in a.readings.split(",") if r != "ff")]
    print(report(isolate(PROFILES[a.profile], [int(s) for s in a.seeds.split(",")], readings)))


if __name__ == "__main__":
    main()
