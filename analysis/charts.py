"""Altair charts for the study chapters. Functions take polars frames (or a read-only DuckDB connection)
and return ``alt.Chart`` objects; :func:`save_png` renders one with vl-convert."""

from __future__ import annotations

from pathlib import Path

import altair as alt
import polars as pl


def capacity_steps(points: pl.DataFrame, machines: dict[str, int], hours: float = 7 * 24) -> alt.Chart:
    """Machines alive (fraction) over the first ``hours`` of each trace, as step lines.

    ``points``: ``trace_id, time_s, machines_alive``; ``machines``: trace_id -> platform size."""
    df = (
        points.filter(pl.col("time_s") < hours * 3600)
        .with_columns(
            (pl.col("time_s") / 3600).alias("hour"),
            (
                pl.col("machines_alive")
                / pl.col("trace_id").replace_strict(machines, return_dtype=pl.Float64)
            ).alias("capacity"),
        )
        .select("trace_id", "hour", "capacity")
    )
    return (
        alt.Chart(df.to_pandas())
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("hour:Q", title="hour of trace"),
            y=alt.Y("capacity:Q", title="machines alive (fraction)", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("trace_id:N", title="trace"),
        )
        .properties(width=620, height=220, title="Capacity under a constant carbon budget (first week)")
    )


def survival_curves(curves: pl.DataFrame, max_hours: float = 48) -> alt.Chart:
    """Kaplan–Meier survival of machine-interval length, one line per trace (``trace_id, time_s, survival``)."""
    starts = (
        curves.select("trace_id")
        .unique()
        .with_columns(pl.lit(0.0).alias("time_s"), pl.lit(1.0).alias("survival"))
    )
    df = (
        pl.concat([starts, curves.select("trace_id", "time_s", "survival")])
        .filter(pl.col("time_s") <= max_hours * 3600)
        .sort("trace_id", "time_s")
        .with_columns((pl.col("time_s") / 3600).alias("hours"))
    )
    return (
        alt.Chart(df.select("trace_id", "hours", "survival").to_pandas())
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("hours:Q", title="interval length (h)"),
            y=alt.Y("survival:Q", title="P(interval longer than x)", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("trace_id:N", title="trace"),
        )
        .properties(width=620, height=220, title="Machine-interval survival (Kaplan–Meier, all machines)")
    )


def policy_comparison(results: pl.DataFrame) -> alt.Chart:
    """Terminations and goodput per policy and workload (``workload, policy, terminations, goodput``)."""
    base = alt.Chart(results.to_pandas()).encode(
        x=alt.X("policy:N", title=None), color=alt.Color("policy:N", legend=None)
    )
    terms = base.mark_bar().encode(y=alt.Y("terminations:Q")).properties(width=250, height=180)
    good = (
        base.mark_bar()
        .encode(y=alt.Y("goodput:Q", scale=alt.Scale(domain=[0, 1])))
        .properties(width=250, height=180)
    )
    return (
        alt.hconcat(terms, good).facet(row=alt.Row("workload:N"))
        if results["workload"].n_unique() > 1
        else alt.hconcat(terms, good)
    )


def sweep_grid(results: pl.DataFrame, value: str = "wasted_fraction", policy: str = "ff") -> alt.Chart:
    """Heatmap of ``value`` over change frequency × step size, one panel per workload (thesis ch. 4
    figures); ``results`` has ``workload, policy, changes_per_hour, step`` and ``value``."""
    df = results.filter(pl.col("policy") == policy).select("workload", "changes_per_hour", "step", value)
    base = alt.Chart(df.to_pandas()).encode(
        x=alt.X("changes_per_hour:O", title="capacity changes per hour"),
        y=alt.Y("step:O", title="step (fraction of machines)", sort="descending"),
    )
    heat = base.mark_rect().encode(color=alt.Color(f"{value}:Q", scale=alt.Scale(scheme="orangered")))
    text = base.mark_text(fontSize=10).encode(text=alt.Text(f"{value}:Q", format=".2f"))
    return (
        (heat + text)
        .properties(width=260, height=150)
        .facet(column=alt.Column("workload:N", title=None))
        .properties(title=f"{policy}: {value.replace('_', ' ')} by change frequency and step")
    )


def save_png(chart: alt.TopLevelMixin, path: str | Path, scale: float = 2.0) -> Path:
    """Render ``chart`` to PNG (vl-convert, offline)."""
    import vl_convert as vlc

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(vlc.vegalite_to_png(chart.to_json(), scale=scale))
    return p
