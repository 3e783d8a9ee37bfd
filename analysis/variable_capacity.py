"""Thesis ch. 4: First-Fit under synthetic and observed variable capacity — goodput, terminations and
scheduling latency against change frequency and step size (Figs. 4.1–4.8), observed grids (Figs.
4.9–4.10), and the synthetic Zipf workloads (Table 4.1). Inputs: rows of
:func:`analysis.results.study_results` for ``repro-thesis-ch4`` / ``repro-grids``."""

from __future__ import annotations

import altair as alt
import polars as pl

from analysis.results import json_field, mean_ci
from analysis.style import HEIGHT, WIDTH, finish

WORKLOAD_NAMES = {"azure": "Azure", "borg2011-native": "Borg"}


def ch4_frame(res: pl.DataFrame) -> pl.DataFrame:
    """Rows of ``repro-thesis-ch4`` with ``workload_name``, ``changes_per_hour`` and ``step`` (both null
    for the fixed-capacity reference, ``fixed`` true), read by name from each row's capacity
    (``capacity_json``: kind ``constant`` is the fixed platform)."""
    df = json_field(res, "capacity_json", "kind", "_kind")
    df = json_field(df, "capacity_json", "changes_per_hour", "changes_per_hour", pl.Float64)
    df = json_field(df, "capacity_json", "step", "step", pl.Float64).with_columns(
        (pl.col("_kind") == "constant").alias("fixed"),
        pl.col("workload").replace(WORKLOAD_NAMES).alias("workload_name"),
    )
    return df.with_columns(
        pl.when(~pl.col("fixed")).then(pl.col("step")).alias("step"),
        pl.when(~pl.col("fixed")).then(pl.col("changes_per_hour")).alias("changes_per_hour"),
    ).drop("_kind")


def _axis(x: str) -> tuple[alt.X, str]:
    if x == "changes_per_hour":
        return alt.X(
            "x:Q", title="change frequency (changes/hour, log scale)", scale=alt.Scale(type="log")
        ), "step 0.15"
    return alt.X("x:Q", title="step size (fraction of machines)"), "1 change/hour"


def _sweep(df: pl.DataFrame, x: str) -> pl.DataFrame:
    """The one-factor sweep along ``x``: frequency at step 0.15 or step at 1 change/hour."""
    other = ("step", 0.15) if x == "changes_per_hour" else ("changes_per_hour", 1.0)
    return df.filter(~pl.col("fixed") & (pl.col(other[0]) == other[1])).with_columns(pl.col(x).alias("x"))


def metric_vs(
    df: pl.DataFrame, metric: str, x: str, y_title: str, title: str, caption: str, scale: float = 1.0
) -> alt.TopLevelMixin:
    """Mean ± 95 % CI of ``metric`` (× ``scale``) over replicates against ``x`` (``changes_per_hour`` or
    ``step``), one panel per workload, the fixed-capacity platform's mean as a dashed line."""
    d = _sweep(df, x).with_columns((pl.col(metric) * scale).alias("v"))
    agg = mean_ci(d, ["workload_name", "x"], "v")
    fixed = (
        df.filter(pl.col("fixed"))
        .group_by("workload_name")
        .agg((pl.col(metric) * scale).mean().alias("fixed_mean"))
    )
    agg = agg.join(fixed, on="workload_name", how="left")
    xenc, held = _axis(x)
    base = alt.Chart().encode(x=xenc)
    line = base.mark_line(point=True).encode(
        y=alt.Y("mean:Q", title=y_title), color=alt.Color("workload_name:N", title="workload")
    )
    err = base.mark_errorbar().encode(y=alt.Y("lo:Q", title=y_title), y2="hi:Q", color="workload_name:N")
    rule = alt.Chart().mark_rule(strokeDash=[5, 4], color="black").encode(y="mean(fixed_mean):Q")
    chart = (
        alt.layer(err, line, rule, data=agg.to_pandas())
        .properties(width=WIDTH, height=HEIGHT)
        .facet(column=alt.Column("workload_name:N", title=None))
        .resolve_scale(y="independent")
    )
    return finish(
        chart, title, f"{caption} ({held}; dashed: fixed capacity at 70 %; mean and 95 % CI over replicates)."
    )


def latency_vs(df: pl.DataFrame, x: str) -> alt.TopLevelMixin:
    """Figs. 4.7/4.8: scheduling latency percentiles (P50, P90, P99; minutes) against ``x``, mean over
    replicates, one panel per workload."""
    d = _sweep(df, x)
    long = d.select("workload_name", "x", "latency_p50_s", "latency_p90_s", "latency_p99_s").unpivot(
        index=["workload_name", "x"], variable_name="percentile", value_name="latency_s"
    )
    long = long.with_columns(
        pl.col("percentile").str.extract(r"_(p\d+)_", 1).str.to_uppercase(),
        (pl.col("latency_s") / 60).alias("minutes"),
    )
    agg = long.group_by("workload_name", "x", "percentile").agg(pl.col("minutes").mean()).sort("x")
    xenc, held = _axis(x)
    chart = (
        alt.Chart(agg.to_pandas())
        .mark_line(point=True)
        .encode(
            x=xenc,
            y=alt.Y("minutes:Q", title="scheduling latency (min)"),
            color=alt.Color("percentile:N", title="percentile"),
        )
        .properties(width=WIDTH, height=HEIGHT)
        .facet(column=alt.Column("workload_name:N", title=None))
        .resolve_scale(y="independent")
    )
    fig = "4.7" if x == "changes_per_hour" else "4.8"
    return finish(
        chart,
        f"Scheduling latency against {'change frequency' if x == 'changes_per_hour' else 'step size'} (thesis Fig. {fig})",
        f"First start − submit over jobs that started, percentiles per run, mean over replicates ({held}).",
    )


def grid_frame(res: pl.DataFrame) -> pl.DataFrame:
    """Rows of ``repro-grids`` with ``grid`` (``fixed`` for the constant-capacity reference), read by name
    from each row's capacity (``capacity_json``)."""
    df = json_field(res, "capacity_json", "kind", "_kind")
    df = json_field(df, "capacity_json", "grid", "grid")
    return df.with_columns(
        pl.when(pl.col("_kind") == "constant").then(pl.lit("fixed")).otherwise(pl.col("grid")).alias("grid")
    ).drop("_kind")


def grid_bars(res: pl.DataFrame) -> alt.TopLevelMixin:
    """Figs. 4.9–4.10: goodput and terminations of FF on Azure under each grid's carbon-budget capacity,
    next to the fixed platform."""
    df = grid_frame(res)
    agg = (
        df.group_by("grid")
        .agg(pl.col("goodput").mean(), pl.col("terminations").mean())
        .sort("goodput", descending=True)
    )
    order = list(agg["grid"])
    base = alt.Chart(agg.to_pandas()).encode(
        x=alt.X("grid:N", sort=order, title="capacity"), color=alt.Color("grid:N", legend=None)
    )
    good = (
        base.mark_bar()
        .encode(y=alt.Y("goodput:Q", title="goodput (fraction of available core-seconds)"))
        .properties(width=WIDTH * 0.8, height=HEIGHT)
    )
    terms = (
        base.mark_bar()
        .encode(y=alt.Y("terminations:Q", title="job terminations"))
        .properties(width=WIDTH * 0.8, height=HEIGHT)
    )
    return finish(
        alt.hconcat(good, terms),
        "Azure under observed variable capacity (thesis Figs. 4.9–4.10)",
        "First-Fit on the Azure sample (platform sized to 80 % of the mean capacity) under constant-carbon-budget "
        "capacity of each grid's month, and under fixed capacity (70 % of the machines always on).",
    )


def zipf_table(stats: pl.DataFrame) -> pl.DataFrame:
    """Table 4.1: duration statistics of the generated Zipf workloads next to the thesis' (hours)."""
    z = stats.filter(pl.col("workload").str.starts_with("zipf"))
    return z.select(
        "workload",
        "jobs",
        *(
            pl.col(c)
            for s in ("mean", "p50", "p90", "p95")
            for c in (f"duration_{s}_h", f"paper_duration_{s}_h")
        ),
    ).sort("workload")


def zipf_scatter(stats: pl.DataFrame) -> alt.TopLevelMixin:
    """Table 4.1 as a chart: varcap's generated statistic against the thesis' (log–log; y = x dashed)."""
    rows = []
    for s in ("mean", "p50", "p90", "p95"):
        rows.append(
            zipf_table(stats).select(
                "workload",
                pl.lit(s.upper() if s != "mean" else "mean").alias("statistic"),
                pl.col(f"duration_{s}_h").alias("varcap_h"),
                pl.col(f"paper_duration_{s}_h").alias("paper_h"),
            )
        )
    df = pl.concat(rows).drop_nulls()
    lo, hi = (
        float(min(df["varcap_h"].min(), df["paper_h"].min())),
        float(max(df["varcap_h"].max(), df["paper_h"].max())),
    )
    diag = (
        alt.Chart(pl.DataFrame({"a": [lo, hi]}).to_pandas())
        .mark_line(strokeDash=[4, 4], color="gray")
        .encode(x="a:Q", y="a:Q")
    )
    pts = (
        alt.Chart(df.to_pandas())
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("paper_h:Q", title="thesis Table 4.1 (h, log)", scale=alt.Scale(type="log")),
            y=alt.Y("varcap_h:Q", title="varcap generated workload (h, log)", scale=alt.Scale(type="log")),
            color=alt.Color("workload:N", title="workload"),
            shape=alt.Shape("statistic:N", title="statistic"),
            tooltip=["workload", "statistic", "paper_h", "varcap_h"],
        )
    )
    return finish(
        (diag + pts).properties(width=WIDTH * 1.2, height=WIDTH * 1.2),
        "Synthetic heavy-tailed workloads (thesis Table 4.1)",
        "Duration statistics of sim.workloads.generators.zipf_workload (1000 × 24 cores, 30 days, seed 0): min(k × 5 min, "
        "720 h), k ~ Zipf(skew), against the thesis' printed values; on the dashed line they agree.",
    )
