"""Core layer: normalized DuckDB tables built from the files the raw assets registered.

Each asset normalizes every raw file of its inputs (see :mod:`assets.normalize`); a wholly bad file
raises before anything is written, so the previous good table stays. Good rows go into a staging table
where the blocking checks run (schema, key, ranges incl. finiteness of every numeric column, and the
cross-table check that every row comes from a registered raw file); only then are they and their
rejects swapped in, in one transaction (:func:`assets.warehouse.replace_table`). Tables built from the
same input also check each other's rows (:func:`assets.warehouse.same_input`: the EIA-930 files feed
``core_grid_carbon`` and ``core_grid_fuel_mix``; a file one refuses, both refuse). A failing check fails
the step with the check's message and leaves the previous table as it was. The asset checks next to the
assets re-run the same checks on the stored table for the UI; coverage (hourly gaps) only warns.

The grid tables (``core_grid_carbon``, ``core_grid_fuel_mix``, ``core_power_price``, ``core_grid_marginal``)
are built from every grid source module that feeds them (:mod:`assets.grid`: one module per feed, with its
dataset, normalizer and checks); this module names no grid feed.

Each core asset depends on the ``raw_<dataset>`` assets whose rows of ``raw_files`` it reads, not on the
``raw_files`` asset (the registry's check over every dataset): its lineage is its own sources, so a chapter
that reads ``core_jobs`` has no grid or spot feed upstream.
"""

import time
from collections.abc import Callable, Sequence

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource
from pydantic import Field

from assets import grid
from assets import normalize as nz
from assets.checks import md_table, table_checks  # md_table: re-exported for the assets
from assets.raw import POOL, raw_files_for
from assets.schema import (
    CORE_BUILDS,
    CORE_GRID_CARBON,
    CORE_GRID_FUEL_MIX,
    CORE_GRID_MARGINAL,
    CORE_JOBS,
    CORE_POWER_PRICE,
    CORE_REJECTS,
    TableSchema,
)
from assets.warehouse import (
    CheckFailed,
    CheckOutcome,
    Consistency,
    replace_table,
    same_input,
)
from sim.capacity.trace import DAY

GAIA_WORKLOADS = {"azure-100k": "azure", "pai-100k": "pai", "mustang-trace-2015-100k": "mustang"}


def _fail_on_bad_file(fn: Callable[[], tuple]) -> tuple:
    try:
        return fn()
    except nz.BadFileError as e:
        raise dg.Failure(description=str(e), metadata={"error": str(e)}) from e


def from_raw_files(*datasets: str) -> tuple[str, Consistency]:
    """Cross-table check: every staged row's ``source_file`` is a file registered in ``raw_files`` for
    ``datasets`` (so the table describes what ``raw_files`` says it was built from)."""

    def _check(conn: object, table: str) -> CheckOutcome:
        ph = ", ".join("?" for _ in datasets)
        rows = conn.execute(  # type: ignore[attr-defined]
            f"SELECT DISTINCT source_file FROM {table} WHERE source_file NOT IN "
            f"(SELECT name FROM raw_files WHERE dataset IN ({ph})) ORDER BY 1 LIMIT 3",
            list(datasets),
        ).fetchall()
        return CheckOutcome(
            not rows,
            "every row comes from a registered raw file"
            if not rows
            else f"rows from files not registered in raw_files for {list(datasets)}: {[r[0] for r in rows]}",
        )

    return ("from_raw_files", _check)


def _write(
    context: dg.AssetExecutionContext,
    duckdb: DuckDBResource,
    schema: TableSchema,
    df: pl.DataFrame,
    rejects: pl.DataFrame,
    started: float,
    extra: dict[str, object] | None = None,
    datasets: Sequence[str] = (),
    siblings: Sequence[tuple[str, Consistency]] = (),
) -> dg.MaterializeResult:
    failed: CheckFailed | None = None
    checks = [*([from_raw_files(*datasets)] if datasets else []), *siblings]
    # the failure is raised outside the `with`: DuckDBResource closes its connection only on a normal exit
    with duckdb.get_connection() as conn:
        try:
            n = replace_table(conn, schema, df, rejects, checks, datasets)
        except CheckFailed as e:
            failed = e
    if failed is not None:
        raise dg.Failure(description=str(failed), metadata={"error": str(failed)})
    reasons = (
        rejects.group_by("reason").len().sort("len", descending=True).head(10) if rejects.height else None
    )
    meta: dict[str, object] = {
        "dagster/row_count": dg.MetadataValue.int(n),
        "rejects": dg.MetadataValue.int(rejects.height),
        "seconds": round(time.perf_counter() - started, 2),
        "table": schema.name,
    }
    if reasons is not None:
        meta["reject_reasons"] = dg.MetadataValue.md(
            "| reason | rows |\n|---|---|\n" + "\n".join(f"| {r} | {c} |" for r, c in reasons.rows())
        )
    meta.update(extra or {})
    context.log.info(f"{schema.name}: {n} rows, {rejects.height} rejects")
    return dg.MaterializeResult(metadata=meta)


def _span_md(df: pl.DataFrame, by: list[str], ts: str) -> dg.MetadataValue:
    s = df.group_by(by).agg(
        pl.len().alias("rows"), pl.col(ts).min().alias("first"), pl.col(ts).max().alias("last")
    )
    return md_table(s.sort(by))


# ------------------------------------------------------------------------------------------------ jobs
class JobsConfig(dg.Config):
    azure_window_days: float = Field(30.0, description="re-time GAIA Azure arrivals into this many days")
    azure_trace_end_s: float = Field(2_591_400.0, description="vmtable deletions at/after this are censored")


def build_jobs(
    gaia: Sequence[nz.RawFile], vmtable: Sequence[nz.RawFile], borg: Sequence[nz.RawFile], cfg: JobsConfig
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """All four workloads as one ``core_jobs`` frame plus rejects (pure; used by the asset and tests)."""
    window = cfg.azure_window_days * DAY
    frames, rejects = [], []
    for f in gaia:
        stem = f.name.split("/")[-1].split(".")[0]
        workload = GAIA_WORKLOADS.get(stem, stem)
        g, r = nz.normalize_gaia(f, workload, window if workload == "azure" else None)
        frames.append(g)
        rejects.append(r)
    for f in vmtable:
        g, r = nz.normalize_azure_vmtable(f, "azure", cfg.azure_trace_end_s, window)
        frames.append(g)
        rejects.append(r)
    if borg:
        g, r = nz.normalize_borg2011(borg)
        frames.append(g)
        rejects.append(r)
    return grid.concat(frames), grid.concat(rejects)


@dg.asset(
    group_name="core",
    pool=POOL,
    kinds={"duckdb", "polars"},
    deps=["raw_gaia_traces", "raw_azure_vmtable", "raw_borg2011_task_events"],
    code_version="1",
    description="Jobs of the azure (GAIA Azure-100k re-timed to 30 days + the 500 month-long VMs), "
    "borg2011 (task runs from task_events), pai and mustang workloads.",
)
def core_jobs(
    context: dg.AssetExecutionContext, config: JobsConfig, duckdb: DuckDBResource
) -> dg.MaterializeResult:
    t0 = time.perf_counter()
    with duckdb.get_connection() as conn:
        gaia = raw_files_for(conn, "gaia_traces")
        vmt = raw_files_for(conn, "azure_vmtable")
        borg = raw_files_for(conn, "borg2011_task_events")
    df, rej = _fail_on_bad_file(lambda: build_jobs(gaia, vmt, borg, config))
    per = df.group_by("workload").agg(
        pl.len().alias("jobs"),
        pl.col("censored").sum().alias("censored"),
        (pl.col("duration_s") * pl.col("cores")).sum().alias("vcpu_seconds"),
        (pl.col("duration_s") * pl.col("cpu_request_norm")).sum().alias("machine_fraction_seconds"),
        pl.col("submit_s").max().alias("last_submit_s"),
    )
    return _write(
        context,
        duckdb,
        CORE_JOBS,
        df,
        rej,
        t0,
        {"workloads": md_table(per.sort("workload"))},
        ("gaia_traces", "azure_vmtable", "borg2011_task_events"),
    )


# ------------------------------------------------------------------------------------------------ grid
class CarbonConfig(dg.Config):
    factor_set: str = Field("ipcc_ar5", description="EIA emission factors: ipcc_ar5 or dcrl")


#: what each grid table holds (its asset's description names the sources that feed it) and its metadata
#: series; each table is built from every grid source feeding it (assets/grid/)
_GRID_TABLES: dict[str, tuple[TableSchema, str, list[str]]] = {
    "core_grid_carbon": (CORE_GRID_CARBON, "Hourly carbon intensity per grid", ["grid", "source"]),
    "core_grid_fuel_mix": (CORE_GRID_FUEL_MIX, "Hourly net generation by fuel, long format", ["grid"]),
    "core_power_price": (CORE_POWER_PRICE, "Hourly day-ahead prices in UTC", ["market", "node"]),
    "core_grid_marginal": (CORE_GRID_MARGINAL, "5-minute marginal signal (unit as stated upstream)", []),
}


def _grid_table_asset(table: str) -> dg.AssetsDefinition:
    """The core asset of grid table ``table``: the rows of every grid source that feeds it
    (:func:`assets.grid.build_table`), depending on those sources' raw assets only; the rows the same files
    give other tables must pass those tables' checks too (:func:`assets.warehouse.same_input`).
    ``core_grid_carbon`` takes :class:`CarbonConfig`."""
    schema, what, series = _GRID_TABLES[table]
    srcs = grid.sources_of(table)
    desc = f"{what}, from {'; '.join(s.dataset.description for s in srcs)}."

    def build(context: dg.AssetExecutionContext, duckdb: DuckDBResource, options: dict[str, str]):
        t0 = time.perf_counter()
        with duckdb.get_connection() as conn:
            files = {s.key: raw_files_for(conn, s.key) for s in srcs}
        b = _fail_on_bad_file(lambda: (grid.build_table(table, files, options),))[0]
        siblings = [same_input(_GRID_TABLES[t][0], rows, ds) for t, (rows, ds) in b.siblings.items()]
        extra = {"series": _span_md(b.rows, series, "ts_utc")} if series else None
        return _write(context, duckdb, schema, b.rows, b.rejects, t0, extra, b.datasets, siblings)

    spec = dict(
        name=table,
        group_name="core",
        pool=POOL,
        kinds={"duckdb", "polars"},
        deps=[f"raw_{s.key}" for s in srcs],
        code_version="1",
        description=desc,
    )
    if table == CORE_GRID_CARBON.name:

        @dg.asset(**spec)
        def _configured(
            context: dg.AssetExecutionContext, config: CarbonConfig, duckdb: DuckDBResource
        ) -> dg.MaterializeResult:
            return build(context, duckdb, {"factor_set": config.factor_set})

        return _configured

    @dg.asset(**spec)
    def _asset(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> dg.MaterializeResult:
        return build(context, duckdb, {})

    return _asset


_grid_assets = {t: _grid_table_asset(t) for t in grid.GRID_TABLES if grid.sources_of(t)}


_table_assets = [core_jobs, *_grid_assets.values()]


@dg.asset(
    name=CORE_REJECTS.name,
    group_name="core",
    pool=POOL,
    kinds={"duckdb"},
    deps=_table_assets,
    code_version="1",
    description="Table `core_rejects`: malformed input rows (file, 1-based line, reason, raw text) of every "
    "core table. Each core asset replaces its own rows in the transaction that swaps its table in; this "
    "asset reports rejects per table and reason and carries the table's checks.",
)
def core_rejects(duckdb: DuckDBResource) -> dg.MaterializeResult:
    with duckdb.get_connection() as conn:
        per = conn.sql(
            f"SELECT table_name, reason, count(*) AS rows FROM {CORE_REJECTS.name} GROUP BY ALL "
            "ORDER BY table_name, rows DESC, reason"
        ).pl()
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": dg.MetadataValue.int(int(per["rows"].sum() or 0)),
            "tables": dg.MetadataValue.int(per["table_name"].n_unique()),
            "by_table_and_reason": md_table(per.head(50)),
        }
    )


@dg.asset(
    name=CORE_BUILDS.name,
    group_name="core",
    pool=POOL,
    kinds={"duckdb"},
    deps=_table_assets,
    code_version="1",
    description="Table `core_builds`: per core table, the raw files (sha256) its current version was built "
    "from, written by each core asset in the transaction that swaps its table in. This asset reports "
    "them; its check `builds_current` warns when a core table is older than what raw_files registers.",
)
def core_builds(duckdb: DuckDBResource) -> dg.MaterializeResult:
    with duckdb.get_connection() as conn:
        per = conn.sql(
            f"SELECT table_name, count(*) AS files, min(built_at) AS built_at FROM {CORE_BUILDS.name} "
            "GROUP BY ALL ORDER BY table_name"
        ).pl()
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": dg.MetadataValue.int(int(per["files"].sum() or 0)),
            "tables": md_table(per),
        }
    )


core_assets = [*_table_assets, core_rejects, core_builds]


# ---------------------------------------------------------------------------------------------- checks
def _source_check(c: grid.SourceCheck) -> dg.AssetChecksDefinition:
    """A grid source's own check (:class:`assets.grid.base.SourceCheck`) as an asset check of its table."""

    @dg.asset_check(
        pool=POOL, asset=c.table, name=c.name, additional_deps=list(c.deps), description=c.description
    )
    def _check(duckdb: DuckDBResource) -> dg.AssetCheckResult:
        with duckdb.get_connection() as conn:
            passed, text, meta = c.run(conn)
        return dg.AssetCheckResult(passed=passed, description=text, metadata=meta)

    return _check


#: every grid source's own checks (e.g. EIA-930's ``eia_matches_published``)
source_checks = [_source_check(c) for s in grid.GRID_SOURCES.values() for c in s.checks]


@dg.asset_check(
    pool=POOL,
    asset=core_builds,
    name="builds_current",
    additional_deps=["raw_files"],
    description="every core table was built from the files raw_files registers now (warning: after a "
    "failed core rebuild the table still holds the previous files)",
)
def builds_current(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as conn:
        stale = conn.sql(
            f"""SELECT DISTINCT b.table_name FROM {CORE_BUILDS.name} b
                WHERE EXISTS (SELECT 1 FROM raw_files r WHERE r.dataset = b.dataset AND NOT EXISTS (
                    SELECT 1 FROM {CORE_BUILDS.name} c WHERE c.table_name = b.table_name
                    AND c.dataset = r.dataset AND c.name = r.name AND c.sha256 = r.sha256))
                OR NOT EXISTS (SELECT 1 FROM raw_files r WHERE r.dataset = b.dataset AND r.name = b.name
                    AND r.sha256 = b.sha256)
                ORDER BY 1"""
        ).fetchall()
    names = [r[0] for r in stale]
    return dg.AssetCheckResult(
        passed=not names,
        severity=dg.AssetCheckSeverity.WARN,
        description=f"built from other files than raw_files registers: {names}"
        if names
        else "every core table is built from the registered files",
        metadata={"stale_tables": len(names)},
    )


core_checks = [
    c
    for s in (
        CORE_JOBS,
        CORE_GRID_CARBON,
        CORE_GRID_FUEL_MIX,
        CORE_POWER_PRICE,
        CORE_GRID_MARGINAL,
        CORE_REJECTS,
        CORE_BUILDS,
    )
    for c in table_checks(s)
] + [*source_checks, builds_current]
