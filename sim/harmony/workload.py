"""Study workloads of paper 004 from ``core_jobs`` borg2011 rows (see :mod:`studies.harmony`).

* ``borg2011-sample`` — the new task runs (§9: "we mainly focus on simulating the arrival of new tasks")
  of the first contiguous coverage window of the embedded task_events shards;
* ``borg2011-7d`` — 7 days of one-hour blocks drawn (seeded) from that window, each replaying the hour's
  task runs with their real requests and durations.
"""

from __future__ import annotations

import numpy as np
import polars as pl

WORKLOADS = ("borg2011-sample", "borg2011-7d")
HOUR = 3600.0


def borg_frame(core_jobs: pl.DataFrame) -> pl.DataFrame:
    """``submit_s, duration_s, cpu, mem, priority, left_truncated`` from ``core_jobs`` borg2011 rows.
    ValueError names the missing columns."""
    need = ["submit_s", "duration_s", "cores", "memory_norm", "priority"]
    missing = [c for c in need if c not in core_jobs.columns]
    if missing:
        raise ValueError(f"core_jobs (borg2011) lacks columns {missing}")
    lt = pl.col("left_truncated") if "left_truncated" in core_jobs.columns else pl.lit(False)
    return core_jobs.select(
        pl.col("submit_s").cast(pl.Float64),
        pl.col("duration_s").cast(pl.Float64),
        pl.col("cores").cast(pl.Float64).alias("cpu"),
        pl.col("memory_norm").cast(pl.Float64).fill_null(0.0).alias("mem"),
        pl.col("priority").cast(pl.Int64).fill_null(0),
        lt.alias("left_truncated"),
    )


def sample_window_s(borg: pl.DataFrame, gap_s: float = HOUR) -> float:
    """End of the first contiguous coverage window: the first gap of more than ``gap_s`` between
    consecutive submit times (or the last submit time)."""
    t = np.sort(borg["submit_s"].to_numpy())
    gaps = np.flatnonzero(np.diff(t) > gap_s)
    return float(t[gaps[0]]) if gaps.size else float(t[-1])


def workload(borg: pl.DataFrame, name: str, seed: int = 0, days: float = 7.0) -> tuple[pl.DataFrame, int]:
    """The study workload ``name`` and its number of 5-minute control intervals."""
    end = sample_window_s(borg)
    new = borg.filter((pl.col("submit_s") > 0) & ~pl.col("left_truncated") & (pl.col("submit_s") < end))
    if name == "borg2011-sample":
        return new.drop("left_truncated"), int(end // 300)
    if name == "borg2011-7d":
        hours = int(end // HOUR)
        if hours < 1:
            raise ValueError("the sample window is shorter than one hour")
        rng = np.random.default_rng(seed)
        blocks = [
            new.filter((pl.col("submit_s") >= h * HOUR) & (pl.col("submit_s") < (h + 1) * HOUR))
            for h in range(hours)
        ]
        out = []
        for h, b in enumerate(rng.integers(0, hours, int(days * 24))):
            out.append(blocks[b].with_columns(pl.col("submit_s") - b * HOUR + h * HOUR))
        return pl.concat(out).drop("left_truncated"), int(days * 24 * 12)
    raise KeyError(f"unknown Harmony workload {name!r}; workloads: {', '.join(WORKLOADS)}")
