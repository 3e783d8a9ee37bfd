"""Thesis ch. 5: machine intervals — length statistics against change frequency and step size (Fig. 5.1),
their distributions (Fig. 5.2), under observed grid capacity (Fig. 5.3), and the time remaining in an
interval given its uptime (Fig. 5.4). Reads ``out_capacity_traces``, ``out_machine_intervals``,
``out_interval_survival`` and ``out_interval_conditional`` read-only."""

from __future__ import annotations

import altair as alt
import duckdb
import polars as pl

from analysis.style import HEIGHT, WIDTH, finish


def walk_traces(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The random-walk traces with ``changes_per_hour`` and ``step`` (one seed: the lowest)."""
    return con.sql(
        "SELECT trace_id, machines, CAST(json_extract(params_json, '$.changes_per_hour') AS DOUBLE) AS changes_per_hour, "
        "CAST(json_extract(params_json, '$.step') AS DOUBLE) AS step FROM out_capacity_traces "
        "WHERE generator = 'random_walk' QUALIFY seed = min(seed) OVER () ORDER BY 3, 4"
    ).pl()


def interval_stats(con: duckdb.DuckDBPyConnection, traces: pl.DataFrame) -> pl.DataFrame:
    """Per trace of ``traces``: number of intervals and the mean, P50 and P90 length (hours) of complete
    intervals (neither left- nor right-censored)."""
    ids = list(traces["trace_id"])
    st = con.sql(
        "SELECT trace_id, count(*) AS intervals, avg(length_s) / 3600 AS mean_h, "
        "quantile_cont(length_s, 0.5) / 3600 AS p50_h, quantile_cont(length_s, 0.9) / 3600 AS p90_h "
        "FROM out_machine_intervals WHERE trace_id IN (SELECT unnest(?)) AND NOT left_censored AND NOT right_censored "
        "GROUP BY 1",
        params=[ids],
    ).pl()
    return traces.join(st, on="trace_id", how="left").sort("changes_per_hour", "step")


def stats_chart(stats: pl.DataFrame) -> alt.TopLevelMixin:
    """Fig. 5.1: mean and P90 interval length against change frequency, one line per step size."""
    long = stats.unpivot(
        index=["changes_per_hour", "step"],
        on=["mean_h", "p90_h"],
        variable_name="statistic",
        value_name="hours",
    )
    long = long.with_columns(pl.col("statistic").replace({"mean_h": "mean", "p90_h": "P90"}))
    chart = (
        alt.Chart(long.to_pandas())
        .mark_line(point=True)
        .encode(
            x=alt.X(
                "changes_per_hour:Q",
                title="change frequency (changes/hour, log)",
                scale=alt.Scale(type="log"),
            ),
            y=alt.Y("hours:Q", title="interval length (h, log)", scale=alt.Scale(type="log")),
            color=alt.Color("step:O", title="step size"),
        )
        .properties(width=WIDTH, height=HEIGHT)
        .facet(column=alt.Column("statistic:N", title=None))
    )
    return finish(
        chart,
        "Machine-interval length against change frequency and step size (thesis Fig. 5.1)",
        "Complete intervals (on-periods of one machine under LIFO) of the random-walk traces: 1000 machines, "
        "30 days, dynamic range 60 %, mean 70 %. Intervals shorten as capacity changes more often.",
    )


def survival(con: duckdb.DuckDBPyConnection, trace_ids: list[str]) -> pl.DataFrame:
    """Kaplan–Meier survival of interval length (all machines: band −1) of ``trace_ids``."""
    return con.sql(
        "SELECT trace_id, time_s, survival FROM out_interval_survival WHERE band = -1 AND trace_id IN "
        "(SELECT unnest(?)) ORDER BY trace_id, time_s",
        params=[trace_ids],
    ).pl()


def survival_chart(
    curves: pl.DataFrame, labels: dict[str, str], legend: str, title: str, caption: str, max_hours: float = 48
) -> alt.TopLevelMixin:
    """Step curves P(interval longer than x) up to ``max_hours``, one per trace, labelled by ``labels``."""
    starts = (
        curves.select("trace_id")
        .unique()
        .with_columns(pl.lit(0.0).alias("time_s"), pl.lit(1.0).alias("survival"))
    )
    df = (
        pl.concat([starts, curves.select("trace_id", "time_s", "survival")])
        .filter(pl.col("time_s") <= max_hours * 3600)
        .sort("trace_id", "time_s")
        .with_columns(
            (pl.col("time_s") / 3600).alias("hours"),
            pl.col("trace_id").replace_strict(labels, default=pl.col("trace_id")).alias("label"),
        )
    )
    chart = (
        alt.Chart(df.select("label", "hours", "survival").to_pandas())
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("hours:Q", title="interval length x (h)"),
            y=alt.Y("survival:Q", title="P(interval longer than x)", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("label:N", title=legend, sort=list(dict.fromkeys(labels.values()))),
        )
        .properties(width=WIDTH * 1.6, height=HEIGHT)
    )
    return finish(chart, title, caption)


def grid_traces(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Constant-carbon-budget traces with their grid and interval statistics source."""
    return con.sql(
        "SELECT trace_id, split_part(trace_id, '-', 2) AS grid, machines FROM out_capacity_traces WHERE generator = 'carbon_budget' ORDER BY 1"
    ).pl()


def remaining(con: duckdb.DuckDBPyConnection, trace_ids: list[str]) -> pl.DataFrame:
    """Mean remaining interval time (hours) given uptime (hours), per trace (``out_interval_conditional``)."""
    return con.sql(
        "SELECT trace_id, uptime_s / 3600 AS uptime_h, any_value(mean_remaining_s) / 3600 AS remaining_h "
        "FROM out_interval_conditional WHERE trace_id IN (SELECT unnest(?)) GROUP BY 1, 2 ORDER BY 1, 2",
        params=[trace_ids],
    ).pl()


def remaining_chart(rem: pl.DataFrame, labels: dict[str, str], legend: str) -> alt.TopLevelMixin:
    """Fig. 5.4: expected remaining interval time against uptime, one line per trace."""
    df = rem.with_columns(
        pl.col("trace_id").replace_strict(labels, default=pl.col("trace_id")).alias("label")
    )
    chart = (
        alt.Chart(df.to_pandas())
        .mark_line(point=True)
        .encode(
            x=alt.X(
                "uptime_h:Q",
                title="uptime u of the interval (h, symlog scale)",
                scale=alt.Scale(type="symlog"),
            ),
            y=alt.Y("remaining_h:Q", title="mean remaining time (h)"),
            color=alt.Color("label:N", title=legend, sort=list(dict.fromkeys(labels.values()))),
        )
        .properties(width=WIDTH * 1.6, height=HEIGHT)
    )
    return finish(
        chart,
        "Time remaining in an interval given its uptime (thesis Fig. 5.4)",
        "Mean of the Kaplan–Meier remaining-time distribution S(u + d)/S(u), restricted to the longest observed "
        "interval, at each uptime of out_interval_conditional's grid (random walks, step 0.15). Uptime is the "
        "signal IAS's heuristic H4 admits jobs on.",
    )
