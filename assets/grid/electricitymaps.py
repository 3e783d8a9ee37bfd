"""Electricity Maps: hourly carbon intensity per zone (lifecycle, LCA) → ``core_grid_carbon``.

Samples: the free hourly zone-year files as HewlettPackard/green-dcc (MIT repository) redistributes them;
Electricity Maps' own data terms apply. Remote: the release folder of data.electricitymaps.com.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from assets.dataset import Dataset, RemoteFile, fill, integers, names, path_part
from assets.grid.base import GridSource, per_file
from assets.normalize.base import (
    RawFile,
    _num,
    _ts_utc,
    _unparseable,
    read_text_table,
    require_columns,
    split_rejects,
)
from assets.schema import CORE_GRID_CARBON

#: Electricity Maps zone id -> varcap grid name.
EMAPS_ZONE_TO_GRID = {
    "US-CAL-CISO": "CAISO",
    "US-TEX-ERCO": "ERCOT",
    "US-MIDW-MISO": "MISO",
    "US-CENT-SWPP": "SPP",
    "US-MIDA-PJM": "PJM",
    "US-NY-NYIS": "NYISO",
    "DE-LU": "DE-LU",
    "GB": "GB",
}

#: The Electricity Maps zone-years the embedded samples hold (``data/samples/electricitymaps``), as
#: ``pipelines/make_samples.py`` builds them.
EMAPS_SAMPLE_ZONE_YEARS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("US-CAL-CISO", (2021, 2022, 2023, 2024)),
    ("US-TEX-ERCO", (2021, 2022, 2023, 2024)),
    ("US-MIDA-PJM", (2024,)),
    ("US-NY-NYIS", (2024,)),
    ("DE-LU", (2024,)),
    ("GB", (2024,)),
)
#: The zones a remote Electricity Maps download fetches unless its listing names others.
EMAPS_REMOTE_ZONES = ("US-CAL-CISO", "US-TEX-ERCO", "US-MIDW-MISO", "US-CENT-SWPP")

LCA = "Carbon Intensity gCO₂eq/kWh (LCA)"
DIRECT = "Carbon Intensity gCO₂eq/kWh (direct)"


def _emaps_remote(p: dict[str, Any]) -> list[RemoteFile]:
    base = p.get("base_url", "https://data.electricitymaps.com/{release}")
    release = path_part("release", p.get("release", "2025-01-27"))
    zones = names(p, "zones", list(EMAPS_REMOTE_ZONES))
    years = integers(p, "years", [2024], 1900, 2200)
    return [
        RemoteFile(
            f"{fill(base, 'base_url', release=release)}/{z}_{y}_hourly.csv",
            f"electricitymaps/{release}/{z}_{y}_hourly.csv",
            "csv",
        )
        for z in zones
        for y in years
    ]


def normalize_electricitymaps(f: RawFile) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Electricity Maps hourly CSV -> carbon rows. ``gco2_per_kwh`` is the lifecycle (LCA) intensity."""
    df = read_text_table(f)
    require_columns(df, f, ["Datetime (UTC)", "Zone Id", LCA, DIRECT])
    raw_cols = [c for c in df.columns if c != "line"]
    df = df.with_columns(t=_ts_utc("Datetime (UTC)"), ci=_num(LCA), cid=_num(DIRECT))
    good, rej = split_rejects(
        df,
        f,
        "core_grid_carbon",
        [
            _unparseable("Datetime (UTC)", pl.col("t")),
            _unparseable(LCA, pl.col("ci")),
            (~pl.col("ci").is_between(0, 2000), pl.format("intensity out of [0, 2000]: {}", pl.col("ci"))),
            (pl.col("Zone Id").is_null(), "missing Zone Id"),
        ],
        raw_cols,
    )
    est = (
        pl.col("Data Estimated").str.to_lowercase().is_in(["true", "1"])
        if "Data Estimated" in df.columns
        else pl.lit(False)
    )
    good = good.with_columns(
        pl.col("Zone Id").replace(EMAPS_ZONE_TO_GRID).alias("grid"),
        pl.col("Zone Id").alias("zone"),
        pl.col("t").alias("ts_utc"),
        pl.col("ci").alias("gco2_per_kwh"),
        pl.col("cid").alias("gco2_per_kwh_direct"),
        pl.lit(None, dtype=pl.Float64).alias("reference_gco2_per_kwh"),
        (_num("Renewable Percentage") if "Renewable Percentage" in df.columns else pl.lit(None)).alias(
            "renewable_pct"
        ),
        (_num("Low Carbon Percentage") if "Low Carbon Percentage" in df.columns else pl.lit(None)).alias(
            "low_carbon_pct"
        ),
        pl.lit("electricitymaps").alias("source"),
        pl.lit("electricitymaps_lca").alias("factor_set"),
        est.fill_null(False).alias("estimated"),
        pl.lit(f.name).alias("source_file"),
    )
    return good.select(CORE_GRID_CARBON.column_names), rej


SOURCE = GridSource(
    Dataset(
        "electricitymaps_hourly",
        "Electricity Maps hourly carbon intensity per zone-year",
        tuple(f"electricitymaps/{z}_{y}_hourly.parquet" for z, ys in EMAPS_SAMPLE_ZONE_YEARS for y in ys),
        remote=_emaps_remote,
    ),
    (CORE_GRID_CARBON.name,),
    per_file(CORE_GRID_CARBON.name, normalize_electricitymaps),
    {
        f"carbon_intensity/electricitymaps/{z}_{y}_hourly.csv": f"electricitymaps/{z}_{y}_hourly"
        for z, ys in EMAPS_SAMPLE_ZONE_YEARS
        for y in ys
    },
)
