"""Altair charts for the study chapters. Functions take polars frames (or a read-only DuckDB connection)
and return ``alt.Chart`` objects; :func:`save_png` renders one with vl-convert."""

from __future__ import annotations

from pathlib import Path

import altair as alt
import polars as pl

from analysis.style import finish


def capacity_steps(
    points: pl.DataFrame, machines: dict[str, int], hours: float = 7 * 24
) -> alt.TopLevelMixin:
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
    chart = (
        alt.Chart(df.to_pandas())
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("hour:Q", title="hour of trace (h)"),
            y=alt.Y("capacity:Q", title="machines alive (fraction)", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("trace_id:N", title="trace"),
        )
        .properties(width=620, height=220)
    )
    return finish(
        chart,
        "Capacity under a constant carbon budget (first week)",
        "Hourly capacity = budget / carbon intensity, clipped to the platform, with the budget set so the "
        "month's mean is 70 % of the machines.",
    )


def survival_curves(curves: pl.DataFrame, max_hours: float = 48) -> alt.TopLevelMixin:
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
    chart = (
        alt.Chart(df.select("trace_id", "hours", "survival").to_pandas())
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("hours:Q", title="interval length x (h)"),
            y=alt.Y("survival:Q", title="P(interval longer than x)", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("trace_id:N", title="trace"),
        )
        .properties(width=620, height=220)
    )
    return finish(
        chart,
        "Machine-interval survival (Kaplan–Meier, all machines)",
        "On-periods of one machine under LIFO termination, right-censored at the horizon.",
    )


def policy_comparison(results: pl.DataFrame) -> alt.TopLevelMixin:
    """Terminations and goodput per policy and workload (``workload, policy, terminations, goodput``):
    bars are the mean over the rows of a (workload, policy) — several scenarios or replicates are
    averaged, never stacked — with min–max whiskers and the row count in the tooltip."""
    agg = (
        results.group_by("workload", "policy")
        .agg(
            *(pl.col(m).mean().alias(m) for m in ("terminations", "goodput")),
            *(pl.col(m).min().alias(f"{m}_min") for m in ("terminations", "goodput")),
            *(pl.col(m).max().alias(f"{m}_max") for m in ("terminations", "goodput")),
            pl.len().alias("runs"),
        )
        .sort("workload", "policy")
    )

    data = agg.to_pandas()
    faceted = results["workload"].n_unique() > 1

    def panel(m: str, title: str, scale: alt.Scale | None = None) -> alt.TopLevelMixin:
        base = alt.Chart().encode(x=alt.X("policy:N", title=None))
        bar = base.mark_bar().encode(
            y=alt.Y(f"{m}:Q", title=title, scale=scale or alt.Undefined),
            color=alt.Color("policy:N", legend=None),
            tooltip=["workload", "policy", m, "runs"],
        )
        err = base.mark_rule().encode(y=f"{m}_min:Q", y2=f"{m}_max:Q")
        layer = alt.layer(bar, err, data=data).properties(width=250, height=180)
        return layer.facet(row=alt.Row("workload:N", title=None)) if faceted else layer

    chart = alt.hconcat(
        panel("terminations", "job terminations (mean)"),
        panel("goodput", "goodput (fraction, mean)", alt.Scale(domain=[0, 1])),
    )
    return finish(
        chart,
        "Terminations and goodput per policy",
        "Mean over the runs of each workload and policy (whiskers: min–max over them).",
    )


def sweep_grid(
    results: pl.DataFrame, value: str = "wasted_fraction", policy: str = "ff"
) -> alt.TopLevelMixin:
    """Heatmap of ``value`` over change frequency × step size, one panel per workload (thesis ch. 4
    figures); ``results`` has ``workload, policy, changes_per_hour, step`` and ``value``. Cells show
    three significant digits (0.00312, not 0.00); the colour scale starts at zero."""
    df = (
        results.filter(pl.col("policy") == policy)
        .group_by("workload", "changes_per_hour", "step")
        .agg(pl.col(value).mean())
    )
    base = alt.Chart().encode(
        x=alt.X("changes_per_hour:O", title="capacity changes per hour"),
        y=alt.Y("step:O", title="step (fraction of machines)", sort="descending"),
    )
    label = value.replace("_", " ")
    heat = base.mark_rect().encode(
        color=alt.Color(f"{value}:Q", title=label, scale=alt.Scale(scheme="orangered", domainMin=0))
    )
    text = base.mark_text(fontSize=10).encode(text=alt.Text(f"{value}:Q", format=".3~r"))
    chart = (
        alt.layer(heat, text, data=df.to_pandas())
        .properties(width=260, height=150)
        .facet(column=alt.Column("workload:N", title=None))
    )
    return finish(
        chart,
        f"{policy}: {label} by change frequency and step",
        "Mean over the runs of each cell; colour from zero.",
    )


def save_png(chart: alt.TopLevelMixin, path: str | Path, scale: float = 2.0) -> Path:
    """Render ``chart`` to PNG (vl-convert, offline)."""
    from analysis.style import save_png as _save

    return _save(chart, path, scale)
