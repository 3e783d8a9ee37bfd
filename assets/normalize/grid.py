"""Grid normalizers: Electricity Maps, EIA-930 (dc-rl files and API pages), WattTime -> carbon rows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from assets.normalize.base import (
    REJECT_COLUMNS,
    BadFileError,
    RawFile,
    _num,
    _ts_utc,
    _unparseable,
    empty_rejects,
    read_text_table,
    require_columns,
    split_rejects,
)
from assets.sources import EIA_BA_TO_GRID, EMAPS_ZONE_TO_GRID

#: Lifecycle emission factors, gCO2eq/kWh, by EIA fuel code.
#: ``ipcc_ar5``: IPCC AR5 WG3 Annex III medians as used by Electricity Maps' defaults (oil: UK POST;
#: other: Electricity Maps' "unknown"). ``dcrl``: the variant behind HewlettPackard/dc-rl's published
#: ``avg_CI`` (solar 41, other 230), kept so that series can be reproduced and checked exactly.
EMISSION_FACTORS: dict[str, dict[str, float]] = {
    "ipcc_ar5": {"WND": 11, "SUN": 45, "WAT": 24, "OIL": 650, "NG": 490, "COL": 820, "NUC": 12, "OTH": 700},
    "dcrl": {"WND": 11, "SUN": 41, "WAT": 24, "OIL": 650, "NG": 490, "COL": 820, "NUC": 12, "OTH": 230},
}
FUELS = ("WND", "SUN", "WAT", "OIL", "NG", "COL", "NUC", "OTH")

CARBON_COLUMNS = [
    "grid",
    "zone",
    "ts_utc",
    "gco2_per_kwh",
    "gco2_per_kwh_direct",
    "reference_gco2_per_kwh",
    "renewable_pct",
    "low_carbon_pct",
    "source",
    "factor_set",
    "estimated",
    "source_file",
]


def normalize_electricitymaps(f: RawFile) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Electricity Maps hourly CSV -> carbon rows. ``gco2_per_kwh`` is the lifecycle (LCA) intensity."""
    df = read_text_table(f)
    lca = "Carbon Intensity gCO₂eq/kWh (LCA)"
    direct = "Carbon Intensity gCO₂eq/kWh (direct)"
    require_columns(df, f, ["Datetime (UTC)", "Zone Id", lca, direct])
    raw_cols = [c for c in df.columns if c != "line"]
    df = df.with_columns(t=_ts_utc("Datetime (UTC)"), ci=_num(lca), cid=_num(direct))
    good, rej = split_rejects(
        df,
        f,
        "core_grid_carbon",
        [
            _unparseable("Datetime (UTC)", pl.col("t")),
            _unparseable(lca, pl.col("ci")),
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
    return good.select(CARBON_COLUMNS), rej


def intensity_expr(factors: dict[str, float], fuels: Sequence[str] = FUELS) -> pl.Expr:
    """Generation-weighted intensity Σ(MWh_f·EF_f)/Σ MWh_f over wide fuel columns; blanks and negative
    net generation count as 0; null where total generation is not positive."""
    mwh = [pl.col(fu).fill_null(0.0).clip(lower_bound=0.0) for fu in fuels]
    num = pl.sum_horizontal([m * factors[fu] for m, fu in zip(mwh, fuels, strict=True)])
    den = pl.sum_horizontal(mwh)
    return pl.when(den > 0).then(num / den).otherwise(None)


def _eia_wide_to_tables(wide: pl.DataFrame, f: RawFile, factor_set: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """wide (grid, zone, ts_utc, FUELS..., reference) -> (carbon rows, fuel-mix long rows)."""
    present = [fu for fu in FUELS if fu in wide.columns]
    carbon = wide.with_columns(
        intensity_expr(EMISSION_FACTORS[factor_set], present).alias("gco2_per_kwh"),
        pl.lit(None, dtype=pl.Float64).alias("gco2_per_kwh_direct"),
        pl.lit(None, dtype=pl.Float64).alias("renewable_pct"),
        pl.lit(None, dtype=pl.Float64).alias("low_carbon_pct"),
        pl.lit("eia930").alias("source"),
        pl.lit(factor_set).alias("factor_set"),
        pl.lit(False).alias("estimated"),
        pl.lit(f.name).alias("source_file"),
    ).filter(pl.col("gco2_per_kwh").is_not_null())
    mix = (
        wide.unpivot(index=["grid", "ts_utc"], on=present, variable_name="fuel", value_name="mwh")
        .filter(pl.col("mwh").is_not_null())
        .with_columns(pl.lit("eia930").alias("source"), pl.lit(f.name).alias("source_file"))
    )
    return carbon.select(CARBON_COLUMNS), mix.select(FUEL_MIX_COLUMNS)


FUEL_MIX_COLUMNS = ["grid", "ts_utc", "fuel", "mwh", "source", "source_file"]


def normalize_eia_dcrl(
    f: RawFile, factor_set: str = "ipcc_ar5"
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """dc-rl EIA-930 fuel-mix CSV (``timestamp``, fuel MWh columns, ``avg_CI``) -> (carbon, mix, rejects).

    The BA comes from the file name (``EIA930_<BA>_...``). The published ``avg_CI`` is kept in
    ``reference_gco2_per_kwh``.
    """
    df = read_text_table(f)
    require_columns(df, f, ["timestamp", *FUELS])
    ba = Path(f.name).name.split("_")[1] if Path(f.name).name.startswith("EIA930_") else None
    if ba not in EIA_BA_TO_GRID:
        raise BadFileError(f"{f.name}: cannot tell the balancing authority from the file name")
    raw_cols = [c for c in df.columns if c != "line"]
    df = df.with_columns(t=_ts_utc("timestamp"), **{fu + "_n": _num(fu) for fu in FUELS})
    all_blank = pl.all_horizontal([pl.col(fu + "_n").is_null() for fu in FUELS])
    good, rej = split_rejects(
        df,
        f,
        "core_grid_carbon",
        [
            _unparseable("timestamp", pl.col("t")),
            (all_blank, "no fuel value in row"),
        ],
        raw_cols,
    )
    wide = good.select(
        pl.lit(EIA_BA_TO_GRID[ba]).alias("grid"),
        pl.lit(ba).alias("zone"),
        pl.col("t").alias("ts_utc"),
        *[pl.col(fu + "_n").alias(fu) for fu in FUELS],
        (_num("avg_CI") if "avg_CI" in df.columns else pl.lit(None, dtype=pl.Float64)).alias(
            "reference_gco2_per_kwh"
        ),
    )
    carbon, mix = _eia_wide_to_tables(wide, f, factor_set)
    return carbon, mix, rej


def normalize_eia_api_pages(
    pages: Sequence[RawFile], factor_set: str = "ipcc_ar5"
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """EIA API v2 ``fuel-type-data`` JSON pages -> (carbon, mix, rejects). Unknown fuel codes go to OTH."""
    import json

    rows, rejects = [], []
    for f in pages:
        try:
            doc = json.loads(Path(f.path).read_text())
            data = doc["response"]["data"]
        except (ValueError, KeyError, TypeError) as e:
            raise BadFileError(f"{f.name}: not an EIA API v2 response ({e})") from e
        for i, d in enumerate(data, start=1):
            try:
                rows.append((d["period"], d["respondent"], d["fueltype"], float(d["value"]), f.name))
            except (KeyError, TypeError, ValueError) as e:
                rejects.append(("core_grid_carbon", f.name, i, f"bad record: {e}", json.dumps(d)[:500]))
    rej = pl.DataFrame(rejects, schema=REJECT_COLUMNS, orient="row") if rejects else empty_rejects()
    if not rows:
        return pl.DataFrame(schema=dict.fromkeys(CARBON_COLUMNS)), pl.DataFrame(), rej
    long = pl.DataFrame(
        rows, schema=["period", "ba", "fuel", "mwh", "source_file"], orient="row"
    ).with_columns(
        t=_ts_utc("period"),
        fuel=pl.when(pl.col("fuel").is_in(FUELS)).then(pl.col("fuel")).otherwise(pl.lit("OTH")),
    )
    carbons, mixes = [], []
    for (ba,), part in long.group_by(["ba"], maintain_order=True):
        wide = (
            part.pivot(on="fuel", index="t", values="mwh", aggregate_function="sum")
            .rename({"t": "ts_utc"})
            .with_columns(
                pl.lit(EIA_BA_TO_GRID.get(ba, ba)).alias("grid"),
                pl.lit(ba).alias("zone"),
                pl.lit(None, dtype=pl.Float64).alias("reference_gco2_per_kwh"),
            )
        )
        c, m = _eia_wide_to_tables(wide, RawFile(Path(), part["source_file"][0]), factor_set)
        carbons.append(c)
        mixes.append(m)
    return pl.concat(carbons), pl.concat(mixes), rej


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
