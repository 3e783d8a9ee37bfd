"""One run as a picture: capacity and cores in use, queued jobs and kills over time (``varcap simulate
--plot``), from the run's time series (``sim.metrics.TIMESERIES_COLUMNS``)."""

from __future__ import annotations

import altair as alt
import polars as pl

from analysis.style import finish

#: the columns :func:`run_picture` reads
COLUMNS = ("time_s", "capacity_cores", "used_cores", "queued_jobs", "kills")


def run_picture(ts: pl.DataFrame, title: str, caption: str = "") -> alt.TopLevelMixin:
    """Three panels over the run's hours sharing the time axis: capacity (step line) against cores in use,
    jobs waiting, and kills per time step. ValueError naming the missing columns of ``ts``."""
    missing = [c for c in COLUMNS if c not in ts.columns]
    if missing:
        raise ValueError(f"run_picture: the time series lacks {missing}")
    step_h = float(ts["time_s"][1] - ts["time_s"][0]) / 3600 if ts.height > 1 else 0.0
    end_h = float(ts["time_s"][-1]) / 3600 + step_h if ts.height else 1.0
    df = ts.select(
        (pl.col("time_s") / 3600).alias("hour"),
        (pl.col("time_s") / 3600 + step_h).alias("hour_end"),
        *[pl.col(c) for c in COLUMNS if c != "time_s"],
    ).to_pandas()
    base = alt.Chart(df).properties(width=640)
    x = alt.X("hour:Q", title="time (h)", scale=alt.Scale(domain=[0, end_h], nice=False))
    used = base.mark_area(interpolate="step-after", color="#1f77b4", opacity=0.45).encode(
        x=x, y=alt.Y("used_cores:Q", title="cores")
    )
    capacity = base.mark_line(interpolate="step-after", color="#222222", strokeWidth=1.5).encode(
        x=x, y="capacity_cores:Q"
    )
    cores = alt.layer(used, capacity).properties(height=180)
    queue = (
        base.mark_area(interpolate="step-after", color="#ff7f0e", opacity=0.7)
        .encode(x=x, y=alt.Y("queued_jobs:Q", title="jobs waiting"))
        .properties(height=90)
    )
    kills = (
        base.mark_rect(color="#d62728")
        .encode(x=x, x2="hour_end:Q", y=alt.Y("kills:Q", title=f"kills per {step_h:.2g} h"), y2=alt.datum(0))
        .properties(height=90)
    )
    total = int(ts["kills"].sum())
    text = caption or (
        f"Capacity (black line) over the cores running attempts hold (blue area); jobs submitted and not yet "
        f"running or finished; attempts killed by capacity drops per step ({total:,} in all)."
    )
    return finish(alt.vconcat(cores, queue, kills), title, text)
