"""Beyond the papers: forecast error per horizon (``core_grid_forecast`` against the actuals) and
the carbon saved by deferral with an oracle against honest as-of forecasts (``carbon-defer`` rows of
``out_sim_results``)."""

from __future__ import annotations

from collections.abc import Callable

import altair as alt
import duckdb
import polars as pl

from analysis.results import json_field, mean_ci
from analysis.style import HEIGHT, WIDTH, finish

METHOD_ORDER = ["oracle", "persist24", "profile7d", "sarimax", "issued"]


def forecast_errors(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per grid × method × horizon (hours ahead): MAE, MAPE (%, over actuals > 0) and forecasts scored —
    grid forecasts against ``core_grid_carbon`` (the source the forecast read), WattTime's issued ones
    against ``core_grid_marginal``."""
    return con.sql(
        """
        WITH actual AS (
            SELECT grid, ts_utc, avg(gco2_per_kwh) AS v FROM core_grid_carbon GROUP BY ALL
            UNION ALL SELECT grid, ts_utc, moer_value FROM core_grid_marginal
        )
        SELECT f.grid, f.method, f.horizon_h, avg(abs(f.value - a.v)) AS mae,
               100 * avg(abs(f.value - a.v) / a.v) FILTER (WHERE a.v > 0) AS mape_pct, count(*) AS n
        FROM core_grid_forecast f JOIN actual a ON a.grid = f.grid AND a.ts_utc = f.target_ts
        GROUP BY ALL ORDER BY ALL
        """
    ).pl()


def error_chart(errs: pl.DataFrame) -> alt.TopLevelMixin:
    """MAPE against hours ahead, one line per method, one panel per grid."""
    base = (
        alt.Chart(errs.to_pandas())
        .mark_line(point=True)
        .encode(
            x=alt.X("horizon_h:Q", title="hours ahead"),
            y=alt.Y("mape_pct:Q", title="MAPE (%)"),
            color=alt.Color("method:N", sort=METHOD_ORDER, title="method"),
        )
        .properties(width=WIDTH * 0.8, height=HEIGHT)
        .facet(column=alt.Column("grid:N", title=None))
    )
    return finish(
        base,
        "How well could the grid's intensity have been known in advance?",
        "Mean absolute percentage error of as-of forecasts by hours ahead (1 = the hour starting at the issue); "
        "oracle is perfect foresight (0 %); WattTime's issued CAISO_NORTH forecasts reach 65 minutes ahead.",
    )


def deferral(res: pl.DataFrame) -> pl.DataFrame:
    """``carbon-defer`` rows with their grid, method, slack and job length as columns."""
    df = json_field(res, "settings_json", "grid", "grid")
    df = json_field(df, "settings_json", "method", "method")
    df = json_field(df, "settings_json", "slack", "slack", pl.Float64)
    df = df.with_columns(
        pl.col("method").fill_null("persist24"),
        pl.col("slack").fill_null(1.5),
        pl.col("workload").str.strip_prefix("fixed-").cast(pl.Float64).alias("job_hours"),
    )
    return df


def savings(res: pl.DataFrame) -> pl.DataFrame:
    """Mean carbon saving (%) with its 95 % interval over seeds per grid × job length × slack × method, and
    the mean oracle share and deadline miss rate."""
    df = deferral(res)
    by = ["grid", "job_hours", "slack", "method"]
    ci = mean_ci(df, by, "carbon_saving_pct")
    extra = df.group_by(by).agg(pl.col("oracle_share").mean(), pl.col("deadline_miss_rate").mean())
    return ci.join(extra, on=by).sort(by)


def savings_chart(sv: pl.DataFrame) -> alt.TopLevelMixin:
    """Saving per method (bars, 95 % intervals) per grid and slack × job length."""
    df = sv.with_columns(
        (
            pl.col("job_hours").cast(pl.Int64).cast(pl.Utf8)
            + " h jobs, slack "
            + pl.col("slack").cast(pl.Utf8)
        ).alias("case")
    ).to_pandas()
    bars = (
        alt.Chart()
        .mark_bar()
        .encode(
            x=alt.X("method:N", sort=METHOD_ORDER, title=None),
            y=alt.Y("mean:Q", title="carbon saved (%)"),
            color=alt.Color("method:N", sort=METHOD_ORDER, legend=None),
        )
    )
    err = alt.Chart().mark_errorbar().encode(x=alt.X("method:N", sort=METHOD_ORDER), y="lo:Q", y2="hi:Q")
    chart = (
        alt.layer(bars, err, data=df)
        .properties(width=WIDTH * 0.6, height=HEIGHT * 0.8)
        .facet(row=alt.Row("case:N", title=None), column=alt.Column("grid:N", title=None))
    )
    return finish(
        chart,
        "Deferral with perfect foresight against forecasts a scheduler could have made",
        "Carbon of completed jobs' attempts against the same jobs run at submit (signal only); mean and 95 % "
        "interval over seeds; oracle = clairvoyant intensity, the others as-of forecasts (sim/forecast.py).",
    )


def study_rows(con: duckdb.DuckDBPyConnection, profile: str, ids: list[str]) -> pl.DataFrame:
    """The rows of ``out_study_results`` of ``profile`` whose scenario is one of ``ids`` (a chapter study's
    scenario ids, injected by the report asset as ``study_ids``)."""
    if not ids:
        return con.sql("SELECT * FROM out_study_results WHERE false").pl()
    return con.sql(
        "SELECT * FROM out_study_results WHERE profile = ? AND list_contains(?, scenario_id)",
        params=[profile, ids],
    ).pl()


def thesis_grid_rows(con: duckdb.DuckDBPyConnection, profile: str) -> pl.DataFrame:
    """The ``repro-grids`` rows (thesis Figs. 4.9–4.10: First-Fit under the observed grids' carbon budgets)
    of ``out_study_results`` for ``profile``."""
    return con.sql(
        "SELECT r.* FROM out_study_results r JOIN out_study_scenarios s USING (scenario_id) "
        "WHERE s.base_study = 'repro-grids' AND s.profile = ? AND r.profile = ?",
        params=[profile, profile],
    ).pl()


ARM_ORDER = [
    "ff",
    "ias",
    "ias trailing",
    "ias-forecast oracle",
    "ias-forecast persist24",
    "ias-forecast profile7d",
    "ias-forecast sarimax",
    "ias-forecast persist24 trusted",
    "ias-forecast persist24 trailing",
]


def arms(res: pl.DataFrame) -> pl.DataFrame:
    """Backtest rows (``carbon-ias-forecast``) with their ``grid`` and arm label (policy, forecast method;
    ``trailing``: survival model refitted on trailing data; ``trusted``: confidence 0)."""
    df = json_field(res, "capacity_json", "grid", "grid")
    df = json_field(df, "settings_json", "method", "method")
    df = json_field(df, "settings_json", "history", "history")
    df = json_field(df, "settings_json", "confidence", "confidence", pl.Float64)
    fc = pl.col("policy") == "ias-forecast"
    label = (
        pl.when(fc)
        .then(
            pl.lit("ias-forecast ")
            + pl.col("method").fill_null("persist24")
            + pl.when(pl.col("confidence") == 0).then(pl.lit(" trusted")).otherwise(pl.lit(""))
            + pl.when(pl.col("history") == "trailing").then(pl.lit(" trailing")).otherwise(pl.lit(""))
        )
        .when(pl.col("history") == "trailing")
        .then(pl.lit("ias trailing"))
        .otherwise(pl.col("policy"))
    )
    return df.with_columns(label.alias("arm"))


def backtest(res: pl.DataFrame) -> pl.DataFrame:
    """Per grid × arm: goodput and terminations (mean, 95 % interval over seeds) and the mean carbon of
    killed attempts (kg)."""
    df = arms(res).with_columns((pl.col("wasted_gco2") / 1000).alias("wasted_kg"))
    by = ["grid", "arm"]
    g = mean_ci(df, by, "goodput").rename({"mean": "goodput", "lo": "goodput_lo", "hi": "goodput_hi"})
    t = mean_ci(df, by, "terminations").select(*by, pl.col("mean").alias("terminations"))
    w = df.group_by(by).agg(pl.col("wasted_kg").mean())
    return g.select(*by, "goodput", "goodput_lo", "goodput_hi", "n").join(t, on=by).join(w, on=by).sort(by)


def backtest_chart(bt: pl.DataFrame) -> alt.TopLevelMixin:
    """Goodput per arm (bars, 95 % intervals) and terminations (labels), one panel per grid."""
    df = bt.to_pandas()
    x = alt.X("arm:N", sort=ARM_ORDER, title=None)
    bars = alt.Chart().mark_bar().encode(
        x=x, y=alt.Y("goodput:Q", title="goodput", scale=alt.Scale(zero=False)),
        color=alt.Color("arm:N", sort=ARM_ORDER, legend=None),
    )  # fmt: skip
    err = alt.Chart().mark_errorbar().encode(x=x, y=alt.Y("goodput_lo:Q", title="goodput"), y2="goodput_hi:Q")
    text = (
        alt.Chart()
        .mark_text(dy=-8, fontSize=9)
        .encode(x=x, y="goodput_hi:Q", text=alt.Text("terminations:Q", format=".0f"))
    )
    chart = (
        alt.layer(bars, err, text, data=df)
        .properties(width=WIDTH * 0.7, height=HEIGHT)
        .facet(column=alt.Column("grid:N", title=None))
    )
    return finish(
        chart,
        "Forecast-predicted machine-interval ends against the survival model (rolling-origin backtest)",
        "Goodput of ff, ias (survival model on the whole trace; trailing: refitted on the last 7 days) and "
        "ias-forecast (as-of forecasts where their trailing hit rate ≥ 0.9, else the survival model; trusted: "
        "always) under a constant carbon budget; labels: terminations. Seeds repeat the same run (the azure "
        "sample and the budget trace are deterministic, the schedulers draw no random numbers): one run per bar.",
    )


def wasted(res: pl.DataFrame) -> pl.DataFrame:
    """Carbon of killed work per grid and policy: mean over seeds of the run's carbon, the carbon charged
    to attempts later killed (kg CO2eq) and its share (%)."""
    df = arms(res).with_columns(pl.col("grid").fill_null("fixed"))
    return (
        df.group_by("grid", "arm")
        .agg(
            (pl.col("gco2").mean() / 1000).alias("gco2_kg"),
            (pl.col("wasted_gco2").mean() / 1000).alias("wasted_kg"),
            (100 * (pl.col("wasted_gco2") / pl.col("gco2")).mean()).alias("wasted_pct"),
            pl.col("terminations").mean(),
            pl.len().alias("runs"),
        )
        .sort("grid", "arm")
    )


def show_rows(
    df: pl.DataFrame, chart: Callable[[pl.DataFrame], alt.TopLevelMixin], name: str, study: str
) -> None:
    """Show ``chart(df)`` as figure ``name``, or, with no rows, say that ``study`` has not run for this
    profile (``varcap sweep <study>``)."""
    from IPython.display import Markdown, display

    from analysis.report import show

    if df.height:
        show(chart(df), name)
    else:
        display(Markdown(f"*No rows of `{study}` for this profile: `varcap sweep {study}` runs it.*"))


def error_table(errs: pl.DataFrame) -> pl.DataFrame:
    """The forecast errors at a few horizons: 1, 6, 12 and 24 h ahead for the grid forecasts, 5 min, 30 min
    and 1 h for WattTime's issued ones."""
    issued = pl.col("method") == "issued"
    keep = (~issued & pl.col("horizon_h").is_in([1.0, 6.0, 12.0, 24.0])) | (
        issued & pl.col("horizon_h").is_in([5 / 60, 0.5, 1.0])
    )
    return errs.filter(keep).sort("grid", "method", "horizon_h")
