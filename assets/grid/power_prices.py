"""Day-ahead hourly power prices (ERCOT HB_HUBAVG SPP, CAISO TH_NP15_GEN-APND LMP) → ``core_power_price``.

Samples: ERCOT and CAISO OASIS files of 2024 as HewlettPackard/green-dcc (MIT repository) redistributes
them. No remote endpoint.
"""

from __future__ import annotations

from pathlib import Path

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
    require_columns,
    split_rejects,
)
from assets.schema import CORE_POWER_PRICE

PRICE_COLUMNS = CORE_POWER_PRICE.column_names
#: the sample files' stems (market_node_type_year_hourly)
SAMPLE_STEMS = ("ERCOT_HB_HUBAVG_DAM_SPP_2024_hourly", "CAISO_TH_NP15_GEN-APND_DAM_LMP_2024_hourly")


def normalize_price(f: RawFile) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Hourly price CSV (``Datetime``, ``Price (USD/MWh)``) -> price rows in UTC.

    Market and node come from the file name ``<MARKET>_<NODE>_<TYPE>_<YEAR>_hourly``. Timestamps with an
    offset (ERCOT local time) are converted to UTC; naive ones (CAISO ``INTERVALSTARTTIME_GMT``) are UTC.
    """
    df = read_text_table(f)
    require_columns(df, f, ["Datetime", "Price (USD/MWh)"])
    stem = Path(f.name).name.split(".")[0]
    parts = stem.split("_")
    kinds = [i for i, p in enumerate(parts) if p in ("DAM", "RTM")]
    if len(parts) < 3 or not kinds:
        raise BadFileError(f"{f.name}: file name must look like <MARKET>_<NODE>_<DAM|RTM>_..._hourly")
    market, node, mtype = parts[0], "_".join(parts[1 : kinds[0]]), parts[kinds[0]]
    raw_cols = [c for c in df.columns if c != "line"]
    df = df.with_columns(t=_ts_utc("Datetime"), p=_num("Price (USD/MWh)"))
    good, rej = split_rejects(
        df,
        f,
        "core_power_price",
        [
            _unparseable("Datetime", pl.col("t")),
            _unparseable("Price (USD/MWh)", pl.col("p")),
            (pl.col("p").abs() > 100_000, "price beyond ±100000 USD/MWh"),
        ],
        raw_cols,
    )
    out = good.select(
        pl.lit(market).alias("market"),
        pl.lit(node).alias("node"),
        pl.col("t").alias("ts_utc"),
        pl.col("p").alias("usd_per_mwh"),
        pl.lit(mtype).alias("market_type"),
        pl.lit(f.name).alias("source_file"),
    )
    return out, rej


SOURCE = GridSource(
    Dataset(
        "power_prices",
        "Day-ahead hourly prices 2024: ERCOT HB_HUBAVG SPP, CAISO TH_NP15_GEN-APND LMP",
        tuple(f"prices/{s}.parquet" for s in SAMPLE_STEMS),
    ),
    (CORE_POWER_PRICE.name,),
    per_file(CORE_POWER_PRICE.name, normalize_price),
    {f"prices/{s}.csv": f"prices/{s}" for s in SAMPLE_STEMS},
)
