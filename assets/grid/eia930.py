"""EIA-930: hourly net generation by fuel per balancing authority → ``core_grid_fuel_mix`` and, weighted
by lifecycle emission factors, ``core_grid_carbon``.

Samples: 2022 files of HewlettPackard/dc-rl (MIT repository; EIA Form 930 is US public domain) with dc-rl's
published ``avg_CI``, which :data:`EMISSION_FACTORS` ``dcrl`` reproduces exactly (check
``eia_matches_published``). Remote: EIA API v2 pages (needs ``EIA_API_KEY``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from assets.dataset import Dataset, RemoteFile, integer, names, path_part
from assets.grid.base import GridSource, Rows, SourceCheck, concat
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
from assets.schema import CORE_GRID_CARBON, CORE_GRID_FUEL_MIX

#: EIA-930 balancing-authority (respondent) code -> varcap grid name.
EIA_BA_TO_GRID = {
    "CISO": "CAISO",
    "ERCO": "ERCOT",
    "MISO": "MISO",
    "SWPP": "SPP",
    "PJM": "PJM",
    "NYIS": "NYISO",
}
#: the balancing authorities the embedded 2022 samples hold
EIA_SAMPLE_BAS = ("CISO", "ERCO", "MISO", "PJM", "NYIS")

#: Lifecycle emission factors, gCO2eq/kWh, by EIA fuel code.
#: ``ipcc_ar5``: IPCC AR5 WG3 Annex III medians as used by Electricity Maps' defaults (oil: UK POST;
#: other: Electricity Maps' "unknown"). ``dcrl``: the variant behind HewlettPackard/dc-rl's published
#: ``avg_CI`` (solar 41, other 230), kept so that series can be reproduced and checked exactly.
EMISSION_FACTORS: dict[str, dict[str, float]] = {
    "ipcc_ar5": {"WND": 11, "SUN": 45, "WAT": 24, "OIL": 650, "NG": 490, "COL": 820, "NUC": 12, "OTH": 700},
    "dcrl": {"WND": 11, "SUN": 41, "WAT": 24, "OIL": 650, "NG": 490, "COL": 820, "NUC": 12, "OTH": 230},
}
FUELS = ("WND", "SUN", "WAT", "OIL", "NG", "COL", "NUC", "OTH")

CARBON_COLUMNS = CORE_GRID_CARBON.column_names
FUEL_MIX_COLUMNS = CORE_GRID_FUEL_MIX.column_names

EIA_API_URL = "https://api.eia.gov/v2/electricity/rto/fuel-type-data/data/"


# ------------------------------------------------------------------------------------------ remote
def _eia_remote(p: dict[str, Any]) -> Iterator[RemoteFile]:
    """EIA API v2 pages, listed one at a time (the caller stops at the first empty page, so ``max_pages``
    never builds every URL first). The key comes from ``p['api_key']`` (the asset fills it from
    ``EIA_API_KEY``). Parameters are checked before the first page."""
    key = p.get("api_key")
    if not key:
        raise ValueError(
            f"{EIA_API_URL}: remote EIA fuel mix needs an API key; set EIA_API_KEY "
            "(free at https://www.eia.gov/opendata/register.php)"
        )
    url = p.get("url", EIA_API_URL)
    bas = names(p, "respondents", ["CISO", "ERCO", "MISO", "SWPP"])
    start = path_part("start", p.get("start", "2024-01-01T00"))
    end = path_part("end", p.get("end", "2024-12-31T23"))
    page_rows = integer(p, "page_rows", 5000, 1, 5000)
    pages = integer(p, "max_pages", 60, 1, 10**9)
    return _eia_pages(url, str(key), bas, start, end, page_rows, pages)


def _eia_pages(
    url: str, key: str, bas: list[str], start: str, end: str, page_rows: int, pages: int
) -> Iterator[RemoteFile]:
    facets = "".join(f"&facets[respondent][]={b}" for b in bas)
    tag = "_".join(bas)
    for i in range(pages):
        q = (
            f"{url}?api_key={key}&frequency=hourly&data[0]=value{facets}&start={start}&end={end}"
            f"&sort[0][column]=period&sort[0][direction]=asc&offset={i * page_rows}&length={page_rows}"
        )
        yield RemoteFile(q, f"eia930_api/{tag}_{start}_{end}/page_{i:05d}.json", "json")


# -------------------------------------------------------------------------------------- normalize
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


def normalize_eia(
    files: Sequence[RawFile], factor_set: str = "ipcc_ar5"
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Every EIA-930 file (dc-rl CSVs, then API pages) -> (carbon, mix, rejects). BadFileError for an
    unknown ``factor_set`` (naming the choices) or a wholly bad file."""
    if factor_set not in EMISSION_FACTORS:
        raise BadFileError(f"unknown factor_set {factor_set!r}; choose from {sorted(EMISSION_FACTORS)}")
    pages = [f for f in files if f.name.endswith(".json")]
    csvs = [f for f in files if not f.name.endswith(".json")]
    carbons, mixes, rejects = [], [], []
    for f in csvs:
        c, m, r = normalize_eia_dcrl(f, factor_set)
        carbons.append(c)
        mixes.append(m)
        rejects.append(r)
    if pages:
        c, m, r = normalize_eia_api_pages(pages, factor_set)
        carbons.append(c)
        mixes.append(m)
        rejects.append(r)
    return concat(carbons), concat(mixes), concat(rejects)


def _normalize(files: Sequence[RawFile], options: Mapping[str, Any]) -> dict[str, Rows]:
    carbon, mix, rej = normalize_eia(files, str(options.get("factor_set", "ipcc_ar5")))
    return {CORE_GRID_CARBON.name: (carbon, rej), CORE_GRID_FUEL_MIX.name: (mix, rej)}


# ----------------------------------------------------------------------------------------- checks
def matches_published(conn: Any) -> tuple[bool, str, dict[str, float]]:
    """EIA-derived intensity recomputed from ``core_grid_fuel_mix`` with dc-rl's factors against the
    published ``avg_CI`` kept in ``core_grid_carbon``: passes when some hours compare and all within
    0.01 gCO2/kWh."""
    f = EMISSION_FACTORS["dcrl"]
    num = " + ".join(f"greatest(coalesce(m.{k}, 0), 0) * {v}" for k, v in f.items())
    den = " + ".join(f"greatest(coalesce(m.{k}, 0), 0)" for k in f)
    pivot = ", ".join(f"max(mwh) FILTER (WHERE fuel = '{k}') AS {k}" for k in f)
    row = conn.execute(
        f"""
        WITH m AS (SELECT grid, ts_utc, {pivot} FROM core_grid_fuel_mix GROUP BY grid, ts_utc)
        SELECT count(*), max(abs(({num}) / nullif({den}, 0) - c.reference_gco2_per_kwh))
        FROM core_grid_carbon c JOIN m USING (grid, ts_utc)
        WHERE c.source = 'eia930' AND c.reference_gco2_per_kwh IS NOT NULL
        """
    ).fetchone()
    n, max_diff = row[0], row[1]
    passed = n > 0 and max_diff is not None and max_diff < 0.01
    return (
        passed,
        f"{n} hours compared, max |diff| = {max_diff}",
        {"hours_compared": n, "max_abs_diff_gco2_per_kwh": float(max_diff or 0.0)},
    )


SOURCE = GridSource(
    Dataset(
        "eia930_fuelmix",
        "EIA-930 hourly net generation by fuel (sample: 2022 files with published avg_CI)",
        tuple(f"eia930/EIA930_{ba}_2022_hourly_fuelmix_avgCI.parquet" for ba in EIA_SAMPLE_BAS),
        remote=_eia_remote,
        needs_env=("EIA_API_KEY",),
    ),
    (CORE_GRID_CARBON.name, CORE_GRID_FUEL_MIX.name),
    _normalize,
    {
        f"carbon_intensity/eia930_fuelmix/EIA930_{ba}_2022_hourly_fuelmix_avgCI.csv": (
            f"eia930/EIA930_{ba}_2022_hourly_fuelmix_avgCI"
        )
        for ba in EIA_SAMPLE_BAS
    },
    (
        SourceCheck(
            "eia_matches_published",
            CORE_GRID_CARBON.name,
            "EIA-derived intensity recomputed with dc-rl's factors equals the published avg_CI",
            matches_published,
            (CORE_GRID_FUEL_MIX.name,),
        ),
    ),
)
