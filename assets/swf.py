"""A researcher's own Standard Workload Format (SWF) log through the pipeline: ``raw_swf_log`` →
``core_swf_jobs`` (+ ``core_swf_rejects``) → the ``swf`` warehouse workloads of the sweeps.

* ``raw_swf_log`` registers one SWF log (config ``path``: a local ``.swf``/``.swf.gz`` file or an
  ``http(s)://`` URL; empty = ``$VARCAP_SWF`` or the committed sample ``data/samples/swf/example.swf``).
  A local file is copied into the immutable raw cache under its sha256 (``<raw cache>/swf/<sha256[:16]>/
  <name>``, read-only; never overwritten: a changed file is a new path), a URL goes through the one
  download client; either way ``raw_files`` records path, bytes and sha256 (dataset ``swf_log``).
* ``core_swf_jobs`` reads the registered log with :mod:`sim.workloads.swf` (the format's conventions:
  header, ``-1`` unknown, cancelled/failed rules) into ``core_swf_jobs``; lines that are not jobs go to
  ``core_swf_rejects`` (file, line, field, value, reason) and ``core_rejects``. Rows are staged and
  checked (schema, key, ranges, every row from the registered file) before the swap, in one transaction
  (:func:`assets.warehouse.replace_table`); a failing check keeps the previous tables.
* ``out_sim_inputs`` exports the table as ``workload_swf.parquet``, which the registered workloads
  ``swf`` and ``swf-resampled`` (:mod:`sim.workloads.registry`) are built from.
"""

import hashlib
import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource
from pydantic import Field

from assets.checks import md_table, table_checks
from assets.download import Downloader, sha256_file
from assets.raw import POOL, record_files
from assets.resources import DownloaderResource
from assets.schema import CORE_REJECTS, CORE_SWF_JOBS, CORE_SWF_REJECTS
from assets.warehouse import CheckFailed, replace_table
from sim import paths

DATASET = "swf_log"
#: the workload name of the log's rows in ``core_swf_jobs`` (the registry's ``template``)
WORKLOAD = "swf"
SAMPLE = "swf/example.swf"


class SwfConfig(dg.Config):
    path: str = Field(
        "",
        description="the SWF log: a local .swf/.swf.gz file or an http(s):// URL; empty = $VARCAP_SWF or "
        "the committed sample data/samples/swf/example.swf",
    )


class SwfJobsConfig(dg.Config):
    keep_cancelled: bool = Field(False, description="keep cancelled jobs (status 5) that ran")
    drop_failed: bool = Field(False, description="drop failed jobs (status 0); kept by default")


def resolved_path(path: str) -> str:
    """``path``, else ``$VARCAP_SWF``, else the committed sample."""
    return path or os.environ.get("VARCAP_SWF", "") or str(paths.samples_dir() / SAMPLE)


def register_log(path: str, downloader: Downloader) -> dict[str, Any]:
    """The ``raw_files`` row of the SWF log at ``path`` (see the module doc). ValueError (one line naming
    the file) for a missing or unreadable file or one that is not an SWF log by its name; the download
    client's :class:`~assets.download.DownloadError` for a failed download."""
    from sim.workloads.swf import is_swf

    now = datetime.now(UTC)
    if path.startswith(("http://", "https://")):
        name = path.rstrip("/").rsplit("/", 1)[-1].split("?", 1)[0]
        if not is_swf(name):
            raise ValueError(f"raw_swf_log: {path}: not an SWF log by its name (.swf or .swf.gz)")
        tag = hashlib.sha256(path.encode()).hexdigest()[:16]
        res = downloader.fetch(path, f"swf/url-{tag}/{name}", expect="any")
        return _row("remote", res.path, f"swf/{name}", path, res.bytes, res.sha256, now)
    src = Path(path).expanduser()
    if not is_swf(src):
        raise ValueError(f"raw_swf_log: {src}: not an SWF log by its name (.swf or .swf.gz)")
    if not src.is_file():
        raise ValueError(f"raw_swf_log: {src}: no such file (config path, or $VARCAP_SWF)")
    digest = sha256_file(src)
    sample = paths.samples_dir() / SAMPLE
    if src.resolve() == sample.resolve():
        return _row("sample", sample, SAMPLE, None, sample.stat().st_size, digest, now)
    dest = downloader.resolve_dest(f"swf/{digest[:16]}/{src.name}")
    if not dest.is_file() or sha256_file(dest) != digest:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".part")
        shutil.copyfile(src, tmp)
        if sha256_file(tmp) != digest:  # the file changed while it was copied
            tmp.unlink()
            raise ValueError(f"raw_swf_log: {src} changed while it was copied; run again")
        tmp.chmod(0o444)
        os.replace(tmp, dest)
    return _row("local", dest, f"swf/{src.name}", None, dest.stat().st_size, digest, now)


def _row(source: str, path: Path, name: str, url: str | None, size: int, sha: str, now: datetime) -> dict:
    return dict(
        dataset=DATASET,
        source=source,
        path=str(path),
        name=name,
        url=url,
        bytes=size,
        sha256=sha,
        has_header=True,
        registered_at=now,
    )


@dg.asset(
    group_name="raw",
    pool=POOL,
    kinds={"duckdb", "file"},
    code_version="1",
    description="A Standard Workload Format log (config `path`: local file or URL; default the committed "
    "sample data/samples/swf/example.swf), stored immutably in the raw cache under its sha256 and recorded "
    "in raw_files (dataset swf_log).",
)
def raw_swf_log(
    context: dg.AssetExecutionContext,
    config: SwfConfig,
    duckdb: DuckDBResource,
    downloader: DownloaderResource,
) -> dg.MaterializeResult:
    path = resolved_path(config.path)
    try:
        row = register_log(path, downloader.client())
    except ValueError as e:
        raise dg.Failure(description=str(e)) from None
    with duckdb.get_connection() as conn:
        record_files(conn, DATASET, [row])
    context.log.info(f"raw_swf_log: {row['name']} ({row['source']}) sha256 {row['sha256'][:16]}…")
    return dg.MaterializeResult(
        metadata={
            "source": row["source"],
            "file": row["name"],
            "path": dg.MetadataValue.path(row["path"]),
            "bytes": dg.MetadataValue.int(row["bytes"]),
            "sha256": row["sha256"],
        },
        data_version=dg.DataVersion(row["sha256"][:16]),
    )


def build_swf(
    path: Path, name: str, keep_cancelled: bool = False, drop_failed: bool = False
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, Any]:
    """``(core_swf_jobs rows, core_swf_rejects rows, core_rejects rows, the read log)`` of the SWF log at
    ``path`` (``name``: its ``raw_files`` name, the rows' ``source_file``). ValueError naming the file when
    it cannot be read or holds no job line."""
    from sim.workloads.swf import read_swf

    log = read_swf(path, keep_cancelled=keep_cancelled, drop_failed=drop_failed)
    jobs = log.jobs.select(
        pl.lit(WORKLOAD).alias("workload"),
        "job_id",
        "submit_s",
        "duration_s",
        "cores",
        pl.col("memory_gb").fill_nan(None),
        pl.col("requested_s").fill_nan(None),
        pl.col("status").cast(pl.Int32),
        pl.lit(name).alias("source_file"),
        "line",
    )
    rej = log.rejects.select(
        pl.lit(name).alias("source_file"), "line", "field", "value", "reason"
    )
    core_rej = rej.select(
        pl.lit(CORE_SWF_JOBS.name).alias("table_name"),
        "source_file",
        "line",
        pl.format("{}: {}", "field", "reason").alias("reason"),
        pl.col("value").alias("raw_row"),
    ).select(CORE_REJECTS.column_names)
    return jobs, rej, core_rej, log


@dg.asset(
    group_name="core",
    pool=POOL,
    kinds={"duckdb", "polars"},
    deps=[raw_swf_log],
    code_version="1",
    description="Jobs of the registered SWF log (workload `swf`), and its malformed lines in "
    "core_swf_rejects (file, line, field, value, reason); checked before the swap.",
)
def core_swf_jobs(
    context: dg.AssetExecutionContext, config: SwfJobsConfig, duckdb: DuckDBResource
) -> dg.MaterializeResult:
    t0 = time.perf_counter()
    with duckdb.get_connection() as conn:
        files = conn.execute(
            "SELECT path, name FROM raw_files WHERE dataset = ? ORDER BY name", [DATASET]
        ).fetchall()
    if not files:
        raise dg.Failure(f"no SWF log registered: materialize raw_swf_log first (dataset {DATASET})")
    path, name = files[0]
    try:
        jobs, rej, core_rej, log = build_swf(Path(path), name, config.keep_cancelled, config.drop_failed)
    except ValueError as e:
        raise dg.Failure(description=str(e)) from None
    from assets.core import from_raw_files

    failed: CheckFailed | None = None
    with duckdb.get_connection() as conn:
        try:
            n = replace_table(
                conn,
                CORE_SWF_JOBS,
                jobs,
                core_rej,
                [from_raw_files(DATASET)],
                (DATASET,),
                also=[(CORE_SWF_REJECTS, rej)],
            )
        except CheckFailed as e:
            failed = e
    if failed is not None:
        raise dg.Failure(description=str(failed), metadata={"error": str(failed)})
    platform = log.header.platform()
    context.log.info(f"core_swf_jobs: {log.summary()}")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": dg.MetadataValue.int(n),
            "rejects": dg.MetadataValue.int(rej.height),
            "summary": log.summary(),
            "dropped": dg.MetadataValue.json(log.dropped),
            "header_platform": (
                f"{platform[0]} machines × {platform[1]:g} cores" if platform else "no MaxProcs in the header"
            ),
            "header": md_table(
                pl.DataFrame(
                    {"key": list(log.header.fields), "value": list(log.header.fields.values())},
                    schema={"key": pl.Utf8, "value": pl.Utf8},
                )
            ),
            **({"first_rejects": md_table(rej.head(10))} if rej.height else {}),
            "seconds": round(time.perf_counter() - t0, 2),
        }
    )


@dg.asset_check(
    pool=POOL,
    asset=core_swf_jobs,
    name="within_header_platform",
    description="every job asks for at most the header's MaxProcs processors (warning: the header and the "
    "jobs disagree, or the header gives no MaxProcs)",
)
def within_header_platform(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    from sim.workloads.swf import read_swf

    with duckdb.get_connection() as conn:
        rows = conn.execute(
            "SELECT path FROM raw_files WHERE dataset = ? ORDER BY name LIMIT 1", [DATASET]
        ).fetchall()
        widest = conn.execute(f"SELECT max(cores), count(*) FROM {CORE_SWF_JOBS.name}").fetchall()[0]
    procs = read_swf(rows[0][0]).header.max_procs if rows else None
    wide = widest[0] or 0.0
    passed = procs is not None and wide <= procs
    return dg.AssetCheckResult(
        passed=passed,
        severity=dg.AssetCheckSeverity.WARN,
        description=(
            f"the widest of {widest[1]} jobs asks for {wide:g} processors, MaxProcs {procs}"
            if procs is not None
            else "the header gives no MaxProcs: give the platform (machines, cores) in the study"
        ),
        metadata={"widest_cores": float(wide), "max_procs": int(procs or 0)},
    )


@dg.asset(
    name=CORE_SWF_REJECTS.name,
    group_name="core",
    pool=POOL,
    kinds={"duckdb"},
    deps=[core_swf_jobs],
    code_version="1",
    description="Table `core_swf_rejects`: the SWF log's lines that are not jobs (file, 1-based line, field, "
    "value, reason). core_swf_jobs replaces its rows in the transaction that swaps its table in; this asset "
    "reports them per field and carries the table's checks.",
)
def core_swf_rejects(duckdb: DuckDBResource) -> dg.MaterializeResult:
    with duckdb.get_connection() as conn:
        per = conn.sql(
            f"SELECT field, count(*) AS lines, min(line) AS first_line FROM {CORE_SWF_REJECTS.name} "
            "GROUP BY ALL ORDER BY lines DESC, field"
        ).pl()
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": dg.MetadataValue.int(int(per["lines"].sum() or 0)),
            "by_field": md_table(per),
        }
    )


def export_swf(conn: Any, out: Path) -> tuple[str, int] | None:
    """Write ``core_swf_jobs`` as the sweep input ``out/workload_swf.parquet`` (``job_id, submit_s,
    duration_s, cores``; every job, whatever its width: the workloads drop those wider than the scenario's
    machine). Returns (sha256, rows), or None when the table does not exist (an older warehouse)."""
    from studies.sweep import write_parquet_atomic

    have = conn.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [CORE_SWF_JOBS.name]
    ).fetchall()[0][0]
    if not have:
        return None
    df = conn.sql(
        f"SELECT job_id, submit_s, duration_s, cores FROM {CORE_SWF_JOBS.name} ORDER BY submit_s, job_id"
    ).pl()
    return write_parquet_atomic(df, out / f"workload_{WORKLOAD}.parquet"), df.height


swf_assets = [raw_swf_log, core_swf_jobs, core_swf_rejects]
swf_checks = [
    *table_checks(CORE_SWF_JOBS),
    *table_checks(CORE_SWF_REJECTS),
    within_header_platform,
]
