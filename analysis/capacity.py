"""Thesis ch. 2: cloud workload statistics (Table 2.2) and capacity under a constant carbon budget per
grid (Fig. 2.2: carbon-intensity variability and the distribution of capacity it yields)."""

from __future__ import annotations

from collections.abc import Mapping

import altair as alt
import duckdb
import polars as pl

from analysis.style import HEIGHT, WIDTH, finish


def workload_table(stats: pl.DataFrame) -> pl.DataFrame:
    """Table 2.2 next to varcap's ``core_jobs``: one row per workload and statistic with ``varcap`` and
    ``paper`` (hours; null where the paper prints none). ``stats``: rows of ``out_workload_stats``."""
    real = stats.filter(pl.col("source") == "core_jobs")
    out = []
    for stat in ("mean", "p50", "p90", "p95"):
        out.append(
            real.select(
                "workload",
                "jobs",
                pl.lit(f"duration {stat} (h)").alias("statistic"),
                pl.col(f"duration_{stat}_h").alias("varcap"),
                pl.col(f"paper_duration_{stat}_h").alias("paper"),
            )
        )
    return pl.concat(out).sort("workload", "statistic")


def grid_of(trace_id: str) -> str:
    """``carbon-CAISO-electricitymaps-2024-04-m1000`` → ``CAISO``."""
    return trace_id.split("-")[1]


def carbon_variability(
    con: duckdb.DuckDBPyConnection, paper_dynamic_range: Mapping[str, float] | None = None
) -> pl.DataFrame:
    """Per carbon-budget trace: its grid, the mean and coefficient of variation of the hourly carbon
    intensity of the month it was built from, and the capacity's dynamic range (fraction) and CV, next
    to ``paper_dynamic_range`` (grid → fraction, thesis Fig. 2.2b: the report asset passes
    ``studies.thesis.ch4.DYNAMIC_RANGE``; null where absent)."""
    paper = paper_dynamic_range or {}
    traces = con.sql(
        "SELECT t.trace_id, json_extract_string(t.params_json, '$.label') AS label, c.dynamic_range, "
        "c.cv AS capacity_cv, c.min_frac, c.max_frac FROM out_capacity_traces t JOIN out_capacity_characterization c "
        "USING (trace_id) WHERE t.generator = 'carbon_budget' ORDER BY 1"
    ).pl()
    rows = []
    for r in traces.iter_rows(named=True):
        grid, source, month = r["label"].split(":")
        mean, sd = con.sql(
            "SELECT avg(gco2_per_kwh), stddev_pop(gco2_per_kwh) FROM core_grid_carbon WHERE grid = ? AND "
            "source = ? AND strftime(ts_utc AT TIME ZONE 'UTC', '%Y-%m') = ?",
            params=[grid, source, month],
        ).fetchall()[0]
        rows.append(
            {
                "grid": grid,
                "source": source,
                "month": month,
                "trace_id": r["trace_id"],
                "ci_mean_gco2_per_kwh": mean,
                "ci_cv": (sd / mean) if mean else None,
                "dynamic_range": r["dynamic_range"],
                "paper_dynamic_range": paper.get(grid),
                "capacity_cv": r["capacity_cv"],
                "min_frac": r["min_frac"],
                "max_frac": r["max_frac"],
            }
        )
    return pl.DataFrame(rows, infer_schema_length=None).sort("ci_cv")


def capacity_distribution(
    points: pl.DataFrame, machines: dict[str, int], horizon_s: dict[str, float]
) -> pl.DataFrame:
    """Time-weighted distribution of the capacity fraction per trace: ``trace_id, grid, capacity (bin of
    0.05), share`` (fraction of the trace's time at that capacity)."""
    df = (
        points.sort("trace_id", "time_s")
        .with_columns(
            (
                pl.col("time_s")
                .shift(-1)
                .over("trace_id")
                .fill_null(pl.col("trace_id").replace_strict(horizon_s, return_dtype=pl.Float64))
                - pl.col("time_s")
            ).alias("dt"),
            (
                pl.col("machines_alive")
                / pl.col("trace_id").replace_strict(machines, return_dtype=pl.Float64)
            ).alias("frac"),
        )
        .with_columns(((pl.col("frac") / 0.05).floor() * 0.05).round(2).clip(0, 0.95).alias("capacity"))
    )
    out = (
        df.group_by("trace_id", "capacity")
        .agg(pl.col("dt").sum())
        .with_columns(
            (pl.col("dt") / pl.col("dt").sum().over("trace_id")).alias("share"),
            pl.col("trace_id").map_elements(grid_of, return_dtype=pl.Utf8).alias("grid"),
        )
    )
    return out.select("trace_id", "grid", "capacity", "share").sort("trace_id", "capacity")


def carbon_points(con: duckdb.DuckDBPyConnection) -> tuple[pl.DataFrame, dict[str, int], dict[str, float]]:
    """Points, platform sizes and horizons of the constant-carbon-budget traces."""
    pts = con.sql(
        "SELECT p.trace_id, p.time_s, p.machines_alive FROM out_capacity_points p JOIN out_capacity_traces t "
        "USING (trace_id) WHERE t.generator = 'carbon_budget'"
    ).pl()
    meta = con.sql(
        "SELECT trace_id, machines, horizon_s FROM out_capacity_traces WHERE generator = 'carbon_budget'"
    ).pl()
    return (
        pts,
        dict(zip(meta["trace_id"], meta["machines"], strict=True)),
        dict(zip(meta["trace_id"], meta["horizon_s"], strict=True)),
    )


def capacity_histogram(dist: pl.DataFrame) -> alt.TopLevelMixin:
    """Fig. 2.2b: share of time at each capacity level, one panel per grid (ordered by variability)."""
    order = (
        dist.group_by("grid")
        .agg(pl.col("capacity").max() - pl.col("capacity").min())
        .sort("capacity")["grid"]
    )
    chart = (
        alt.Chart(dist.to_pandas())
        .mark_bar(width=8)
        .encode(
            x=alt.X(
                "capacity:Q", title="capacity (fraction of machines alive)", scale=alt.Scale(domain=[0, 1])
            ),
            y=alt.Y("share:Q", title="share of the month", axis=alt.Axis(format="%")),
            color=alt.Color("grid:N", legend=None),
        )
        .properties(width=220, height=150)
        .facet(column=alt.Column("grid:N", title=None, sort=list(order)))
    )
    return finish(
        chart,
        "Distribution of capacity under a constant carbon budget (thesis Fig. 2.2b)",
        "Time-weighted share of the month spent at each capacity level (bins of 5 %) for a 1000-machine "
        "datacenter held to a mean of 70 % with hourly capacity = budget / carbon intensity (clipped to the platform). Grids with more "
        "renewables spread capacity wider.",
    )


def dynamic_range_chart(var: pl.DataFrame) -> alt.TopLevelMixin:
    """Fig. 2.2a/b in one: carbon-intensity CV and the capacity dynamic range per grid, varcap (bars)
    next to the thesis' printed range (black ticks)."""
    df = var.select("grid", "ci_cv", "dynamic_range", "paper_dynamic_range").to_pandas()
    order = list(var.sort("ci_cv")["grid"])
    bars = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("grid:N", sort=order, title="grid (increasing carbon-intensity CV)"),
            y=alt.Y(
                "dynamic_range:Q", title="capacity dynamic range (fraction)", scale=alt.Scale(domain=[0, 1])
            ),
            color=alt.Color("grid:N", legend=None),
            tooltip=["grid", "ci_cv", "dynamic_range", "paper_dynamic_range"],
        )
    )
    ticks = (
        alt.Chart(df)
        .mark_tick(color="black", thickness=3, size=40)
        .encode(x=alt.X("grid:N", sort=order), y="paper_dynamic_range:Q")
    )
    cv = (
        alt.Chart(df)
        .mark_bar(color="#888")
        .encode(
            x=alt.X("grid:N", sort=order, title="grid"),
            y=alt.Y("ci_cv:Q", title="CV of hourly carbon intensity"),
        )
        .properties(width=WIDTH * 0.7, height=HEIGHT)
    )
    return finish(
        alt.hconcat(cv, (bars + ticks).properties(width=WIDTH * 0.7, height=HEIGHT)),
        "Carbon-intensity variability and capacity dynamic range (thesis Fig. 2.2)",
        "Left: coefficient of variation of the hourly carbon intensity of the month each trace is built from "
        "(CAISO, ERCOT: Electricity Maps April 2024; MISO: EIA-930 April 2022). Right: dynamic range (max − min "
        "capacity) of the constant-carbon-budget trace; black ticks: the thesis' 39.3 % (MISO), 54.5 % "
        "(ERCOT), 69.4 % (CAISO).",
    )


def duration_cdf(
    con: duckdb.DuckDBPyConnection, workloads: tuple[str, ...] = ("azure", "borg2011")
) -> alt.TopLevelMixin:
    """Thesis Fig. 2.3: CDF of job duration (hours, log axis) per workload, from ``core_jobs``."""
    qs = [round(q / 100, 2) for q in range(1, 100)]
    df = (
        con.sql(
            f"SELECT workload, quantile_cont(duration_s, {qs}) AS hours FROM core_jobs "
            "WHERE workload IN (SELECT unnest(?)) AND duration_s > 0 GROUP BY workload ORDER BY workload",
            params=[list(workloads)],
        )
        .pl()
        .with_columns(pl.lit(qs).alias("q"))
        .explode("hours", "q")
        .with_columns(pl.col("hours") / 3600)
    )
    chart = (
        alt.Chart(df.to_pandas())
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("hours:Q", title="job duration (h, log scale)", scale=alt.Scale(type="log")),
            y=alt.Y("q:Q", title="fraction of jobs (CDF)", axis=alt.Axis(format="%")),
            color=alt.Color("workload:N", title="workload"),
        )
        .properties(width=WIDTH * 1.6, height=HEIGHT)
    )
    return finish(
        chart,
        "Job duration distribution of the cloud workloads (thesis Fig. 2.3)",
        "Percentiles 1–99 of job duration in core_jobs. Azure: 30-day sample with long-running VMs (right "
        "tail at the trace length); Borg 2011: task runs from the embedded shards (mostly minutes).",
    )
