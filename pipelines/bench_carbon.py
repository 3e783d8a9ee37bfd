"""What carbon accounting (:mod:`sim.energy`) adds to a Borg-scale First-Fit run:
``python -m pipelines.bench_carbon [--repeats N]``.

The Borg-scale case of :mod:`sim.bench` (600,000 resampled borg2011 jobs, 200 machines × 24 cores, 7 days,
random walk at 8 changes/h; needs the warehouse) simulated with and without ``carbon=`` (CAISO's April 2024
hourly intensity from the embedded sample), alternating, best of ``repeats`` each in CPU seconds (the
machine is shared). Target: ≤ 10 % added.
"""

from __future__ import annotations

import argparse
import time

import polars as pl

from sim import random_walk, simulate
from sim.bench.scale import borg_scale_jobs
from sim.energy import CarbonSignal
from sim.paths import samples_dir


def caiso_april() -> CarbonSignal:
    df = pl.read_parquet(samples_dir() / "electricitymaps/US-CAL-CISO_2024_hourly.parquet")
    y = df["Carbon Intensity gCO₂eq/kWh (LCA)"].cast(pl.Float64).to_numpy()
    return CarbonSignal(y[24 * 91 : 24 * 121], 0, "CAISO:electricitymaps:2024-04")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    machines, cores, horizon = 200, 24, 7 * 86400.0
    jobs = borg_scale_jobs()
    cap = random_walk(machines, horizon, changes_per_hour=8, step=0.15, seed=0)
    sig = caiso_april()
    simulate(jobs.head(2000), cap, machines, cores, horizon)  # compile / warm up
    plain, acc = [], []
    for _ in range(a.repeats):
        for out, kw in ((plain, {}), (acc, {"carbon": sig})):
            t = time.process_time()
            r = simulate(jobs, cap, machines, cores, horizon, **kw)
            out.append(time.process_time() - t)
    added = 100 * (min(acc) / min(plain) - 1)
    print(f"jobs {r.metrics['jobs']:,}  attempts {int(r.jobs['attempts'].sum()):,}")
    print(f"ff CPU s  plain {min(plain):.2f}  with carbon accounting {min(acc):.2f}  added {added:+.1f} %")
    print(f"gco2 {r.metrics['gco2']:.4g}  wasted_gco2 {r.metrics['wasted_gco2']:.4g}  "
          f"gco2/useful core-h {r.metrics['gco2_per_useful_core_hour']:.4g}  (target ≤ 10 % added)")  # fmt: skip


if __name__ == "__main__":
    main()
