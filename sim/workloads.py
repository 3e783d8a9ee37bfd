"""Workloads for the simulator: from ``core_jobs`` rows, and seeded resampling for scale studies."""

from __future__ import annotations

import numpy as np
import polars as pl

NORMALIZED_WORKLOADS = ("borg2011",)  # cores are a fraction of the largest machine


def to_sim_jobs(df: pl.DataFrame, cores_per_machine: float) -> tuple[pl.DataFrame, int]:
    """``core_jobs`` rows -> ``job_id, submit_s, duration_s, cores`` for a platform of ``cores_per_machine``.

    Normalized CPU requests (borg2011) are scaled to the machine size. Jobs larger than one machine are
    dropped; their count is returned so callers can report it.
    """
    cores = pl.col("cores")
    if "workload" in df.columns:
        cores = (
            pl.when(pl.col("workload").is_in(NORMALIZED_WORKLOADS))
            .then(cores * cores_per_machine)
            .otherwise(cores)
        )
    out = df.select(
        "job_id",
        pl.col("submit_s").cast(pl.Float64),
        pl.col("duration_s").cast(pl.Float64),
        cores.alias("cores"),
    )
    keep = out.filter(pl.col("cores") <= cores_per_machine)
    return keep, out.height - keep.height


def offered_load(jobs: pl.DataFrame, horizon_s: float) -> float:
    """Mean cores demanded over ``[0, horizon_s)`` (work submitted in the window / window length)."""
    j = jobs.filter(pl.col("submit_s") < horizon_s)
    return float((j["cores"] * j["duration_s"]).sum()) / horizon_s


def bootstrap_jobs(
    template: pl.DataFrame,
    n: int,
    horizon_s: float,
    target_cores: float | None = None,
    seed: int = 0,
) -> pl.DataFrame:
    """``n`` jobs with Poisson arrivals over ``horizon_s``; (duration, cores) pairs drawn with replacement
    from ``template``. If ``target_cores`` is given, durations are scaled so the offered load (mean cores
    demanded) equals it — the thesis sizes workloads to ~80 % of the mean capacity."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, template.height, n)
    dur = template["duration_s"].to_numpy()[idx].astype(float)
    cores = template["cores"].to_numpy()[idx].astype(float)
    submit = np.sort(rng.uniform(0, horizon_s, n))
    if target_cores is not None:
        dur = dur * (target_cores * horizon_s / float(np.sum(dur * cores)))
    return pl.DataFrame(
        {
            "job_id": [f"b{i}" for i in range(n)],
            "submit_s": submit,
            "duration_s": np.maximum(dur, 1.0),
            "cores": cores,
        }
    )
