"""``core_grid_forecast``: as-of forecasts of the grids' carbon intensity and WattTime's issued
CAISO_NORTH forecasts; forecast error per horizon in the metadata. All computation is in :mod:`sim.forecast`
(the same code the ``defer`` policy forecasts with) and :mod:`analysis.forecast`."""

import time
from datetime import timedelta

import dagster as dg
import numpy as np
import polars as pl
from dagster_duckdb import DuckDBResource
from pydantic import Field

from assets.checks import md_table, table_checks
from assets.grid.watttime import issued_forecasts
from assets.raw import POOL
from assets.schema import GRID_FORECAST
from assets.warehouse import write_tables
from sim.capacity.trace import month_bounds, to_hourly
from sim.forecast import METHODS, forecast_matrix, horizon_errors
from studies.signals import grid_series

CARBON_UNIT = "gCO2eq/kWh"


class ForecastConfig(dg.Config):
    series: list[str] = Field(
        [*grid_series(), "GB:electricitymaps:2024-04"],  # the studies' grid months, and GB's
        description="GRID:SOURCE:YYYY-MM months of core_grid_carbon to forecast (every hour of the month "
        "is an issue instant)",
    )
    methods: list[str] = Field(list(METHODS), description="forecast methods (sim/forecast.py)")
    history_days: int = Field(28, description="days before the month the forecasts may read")
    horizon_h: int = Field(24, description="hours ahead of each issue")
    sarimax_window_h: int = Field(14 * 24, description="trailing hours each SARIMAX fit reads")
    sarimax_refit_every_h: int = Field(7 * 24, description="hours between SARIMAX refits")
    issued: bool = Field(
        True, description="also load WattTime's issued CAISO_NORTH forecasts (method issued)"
    )


def grid_hours(
    conn, grid: str, source: str, month: str, history_days: int
) -> tuple[pl.Series, np.ndarray, int]:
    """Hour starts (UTC) from ``history_days`` before ``month`` to its end, the hourly intensity by the one
    gap rule (:func:`sim.capacity.trace.to_hourly`), and the index of the month's first hour. ValueError if the
    warehouse has no values for the month."""
    start, end = month_bounds(month)
    first = start - timedelta(days=history_days)
    df = conn.sql(
        "SELECT ts_utc, gco2_per_kwh FROM core_grid_carbon WHERE grid = ? AND source = ? "
        "AND ts_utc >= ? AND ts_utc < ? ORDER BY ts_utc",
        params=[grid, source, first, end],
    ).pl()
    df = df.with_columns(pl.col("ts_utc").dt.convert_time_zone("UTC"))
    if df.filter(pl.col("ts_utc") >= start).height == 0:
        raise ValueError(f"core_grid_carbon has no {grid}/{source} values in {month}")
    y = to_hourly(df["ts_utc"], df["gco2_per_kwh"], first, end)
    hours = pl.datetime_range(first, end, "1h", closed="left", time_zone="UTC", eager=True)
    return hours, y, history_days * 24


def grid_forecasts(conn, cfg: ForecastConfig) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Forecast rows of every configured series × method, and their errors per horizon (grid, method,
    horizon_h, mae, mape_pct, n)."""
    rows, errs = [], []
    for spec in cfg.series:
        grid, source, month = spec.split(":")
        hours, y, origin = grid_hours(conn, grid, source, month, cfg.history_days)
        issues = np.arange(origin, len(y))
        for method in cfg.methods:
            f = forecast_matrix(
                y,
                issues,
                method,
                cfg.horizon_h,
                window_h=cfg.sarimax_window_h,
                refit_every_h=cfg.sarimax_refit_every_h,
            )
            k, h = np.nonzero(np.isfinite(f) & (issues[:, None] + np.arange(f.shape[1]) < len(y)))
            rows.append(
                pl.DataFrame(
                    {
                        "grid": grid,
                        "method": method,
                        "issued_at": hours.gather(issues[k]),
                        "target_ts": hours.gather(issues[k] + h),
                        "horizon_h": (h + 1).astype(np.float64),
                        "value": f[k, h],
                        "unit": CARBON_UNIT,
                    }
                )
            )
            e = horizon_errors(f, y, issues)
            errs.append(pl.DataFrame({"grid": grid, "method": method, **e}))
    return pl.concat(rows), pl.concat(errs)


def issued_errors(conn, fc: pl.DataFrame) -> pl.DataFrame:
    """Errors of the issued forecasts against WattTime's own 5-minute signal (core_grid_marginal) per
    horizon: mae, mape_pct, n."""
    act = conn.sql(
        "SELECT ts_utc AS target_ts, moer_value FROM core_grid_marginal WHERE grid = 'CAISO_NORTH'"
    ).pl()
    if act.height == 0:
        return pl.DataFrame()
    j = fc.join(act.with_columns(pl.col("target_ts").dt.convert_time_zone("UTC")), on="target_ts")
    return (
        j.with_columns((pl.col("value") - pl.col("moer_value")).abs().alias("ae"))
        .group_by("horizon_h")
        .agg(
            pl.col("ae").mean().alias("mae"),
            (100 * (pl.col("ae") / pl.col("moer_value")).filter(pl.col("moer_value") > 0).mean()).alias(
                "mape_pct"
            ),
            pl.len().alias("n"),
        )
        .sort("horizon_h")
        .with_columns(pl.lit("CAISO_NORTH").alias("grid"), pl.lit("issued").alias("method"))
    )


def _summary(errs: pl.DataFrame) -> pl.DataFrame:
    """Errors at 1, 6, 12 and 24 hours ahead and their mean over the horizons, per grid × method."""
    pick = errs.filter(pl.col("horizon_h").is_in([1, 6, 12, 24]))
    wide = pick.pivot(on="horizon_h", index=["grid", "method"], values="mape_pct", aggregate_function="first")
    wide = wide.rename({c: f"mape_h{c}" for c in wide.columns if c not in ("grid", "method")})
    mean = errs.group_by("grid", "method").agg(
        pl.col("mae").mean().alias("mae_mean"), pl.col("mape_pct").mean().alias("mape_mean")
    )
    return (
        wide.join(mean, on=["grid", "method"])
        .sort("grid", "method")
        .with_columns(pl.col(pl.Float64).round(2))
    )


@dg.asset(
    name=GRID_FORECAST.name,
    group_name="core",
    pool=POOL,
    kinds={"duckdb", "statsmodels"},
    deps=["core_grid_carbon", "core_grid_marginal"],
    code_version="2",
    description="As-of forecasts of hourly carbon intensity (oracle, persist24, profile7d, sarimax; "
    "sim/forecast.py) for the configured grid months, and WattTime's issued CAISO_NORTH forecasts; "
    "MAPE/MAE per horizon in the metadata.",
)
def core_grid_forecast(
    context: dg.AssetExecutionContext, config: ForecastConfig, duckdb: DuckDBResource
) -> dg.MaterializeResult:
    t0 = time.perf_counter()
    meta: dict[str, object] = {}
    with duckdb.get_connection() as conn:
        df, errs = grid_forecasts(conn, config)
        if config.issued:
            issued, sha = issued_forecasts()
            df = pl.concat([df, issued])
            ie = issued_errors(conn, issued)
            meta["issued_sha256"] = sha
            if ie.height:
                meta["issued_errors"] = md_table(
                    ie.filter(pl.col("horizon_h").is_in([5 / 60, 0.5, 1.0]))
                    .select("horizon_h", "mae", "mape_pct", "n")
                    .with_columns(pl.col(pl.Float64).round(3))
                )
        write_tables(conn, [(GRID_FORECAST, df)])
    context.log.info(f"{df.height} forecast rows")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": df.height,
            "seconds": round(time.perf_counter() - t0, 2),
            "errors_pct": md_table(_summary(errs)),
            **meta,
        }
    )


forecast_assets = [core_grid_forecast]
forecast_checks = table_checks(GRID_FORECAST)
