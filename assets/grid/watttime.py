"""WattTime CAISO_NORTH: the 5-minute marginal signal → ``core_grid_marginal``, and the forecasts WattTime
issued (:func:`issued_forecasts`, read by ``core_grid_forecast`` as method ``issued``).

Samples: dos-group/vessim (MIT repository; WattTime's terms apply); the unit is not stated upstream. No
remote endpoint (WattTime's API needs an account).
"""

from __future__ import annotations

import hashlib

import polars as pl

from assets.dataset import Dataset
from assets.grid.base import GridSource, per_file
from assets.normalize.base import (
    BadFileError,
    RawFile,
    _num,
    _ts_utc,
    _unparseable,
    read_text_table,
    split_rejects,
)
from assets.schema import CORE_GRID_MARGINAL
from sim.paths import samples_dir

#: the forecasts WattTime issued for CAISO_NORTH (a sample file, read directly by ``core_grid_forecast``)
ISSUED_FILE = "watttime/WattTime_CAISO_NORTH_forecast_5min_2023-06-08_to_2023-07-08.parquet"
ISSUED_UNIT = "WattTime MOER, unit not stated upstream (lbs/MWh in WattTime's API)"


def normalize_watttime(f: RawFile, grid: str = "CAISO_NORTH") -> tuple[pl.DataFrame, pl.DataFrame]:
    """WattTime 5-minute file (first column time, second the signal) -> (grid, ts_utc, value)."""
    df = read_text_table(f)
    cols = [c for c in df.columns if c != "line"]
    if len(cols) < 2:
        raise BadFileError(f"{f.name}: expected a time column and a value column, found {cols}")
    tcol, vcol = cols[0], cols[1]
    df = df.with_columns(t=_ts_utc(tcol), v=_num(vcol))
    good, rej = split_rejects(
        df,
        f,
        "core_grid_marginal",
        [
            _unparseable(tcol, pl.col("t")),
            _unparseable(vcol, pl.col("v")),
            (pl.col("v") < 0, "negative value"),
        ],
        cols,
    )
    out = good.select(
        pl.lit(grid).alias("grid"),
        pl.col("t").alias("ts_utc"),
        pl.col("v").alias("moer_value"),
        pl.lit("unstated (WattTime signal; likely marginal gCO2/kWh or lbs/MWh)").alias("unit"),
        pl.lit("watttime").alias("source"),
        pl.lit(f.name).alias("source_file"),
    )
    return out, rej


def issued_forecasts() -> tuple[pl.DataFrame, str]:
    """WattTime's issued CAISO_NORTH forecasts as rows (naive upstream stamps read as UTC) and the
    sha256 of the sample file. ValueError naming the file and line of a malformed row."""
    path = samples_dir() / ISSUED_FILE
    raw = pl.read_parquet(path)
    df = raw.select(
        pl.col("request_time").str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False).alias("issued_at"),
        pl.col("forecast_time").str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False).alias("target_ts"),
        pl.col("Caiso_North").cast(pl.Float64, strict=False).alias("value"),
    )
    bad = df.with_row_index().filter(pl.any_horizontal(pl.all().is_null()))
    if bad.height:
        i = int(bad["index"][0])
        raise ValueError(
            f"{path}: line {i + 2}: unreadable request_time, forecast_time or Caiso_North {raw.row(i)}"
        )
    df = df.with_columns(pl.col("issued_at", "target_ts").dt.replace_time_zone("UTC"))
    step = (df["target_ts"] - df["issued_at"]).dt.total_minutes()
    out = df.select(
        pl.lit("CAISO_NORTH").alias("grid"),
        pl.lit("issued").alias("method"),
        "issued_at",
        "target_ts",
        (step / 60.0).alias("horizon_h"),  # 5-min intervals: 5 min ahead = horizon 1/12 h
        "value",
        pl.lit(ISSUED_UNIT).alias("unit"),
    )
    return out, hashlib.sha256(path.read_bytes()).hexdigest()


SOURCE = GridSource(
    Dataset(
        "watttime_moer",
        "WattTime CAISO_NORTH 5-minute signal, June-July 2023 (unit not stated upstream)",
        ("watttime/WattTime_CAISO_NORTH_5min_2023-06-08_to_2023-07-08.parquet",),
    ),
    (CORE_GRID_MARGINAL.name,),
    per_file(CORE_GRID_MARGINAL.name, normalize_watttime),
    {
        "carbon_intensity/watttime/WattTime_CAISO_NORTH_5min_2023-06-08_to_2023-07-08.csv": (
            "watttime/WattTime_CAISO_NORTH_5min_2023-06-08_to_2023-07-08"
        )
    },
)
