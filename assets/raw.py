"""Raw layer: one ``raw_<dataset>`` asset per dataset in :mod:`assets.sources`.

``source: sample`` (default, offline) registers the embedded files under ``data/samples``;
``source: remote`` downloads the upstream files into the immutable cache ``data/raw`` through the one
download client. Either way the asset records every file (path, url, size, sha256) in DuckDB table
``raw_files`` so the core layer, and anyone querying, knows exactly what the warehouse was built from.
"""

import hashlib
import json
import os
from datetime import UTC, datetime
from typing import Any

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource
from pydantic import Field

from assets import snapshot
from assets.checks import table_checks
from assets.download import Downloader, sha256_file
from assets.normalize import RawFile
from assets.resources import DownloaderResource
from assets.schema import RAW_FILES
from assets.sources import DATASETS, Dataset
from sim import paths

POOL = "duckdb_write"


class RawConfig(dg.Config):
    source: str = Field(
        "",
        description="'sample' (embedded files, offline) or 'remote' (download upstream); "
        "empty = $VARCAP_SOURCE or 'sample'",
    )
    params_json: str = Field(
        "{}",
        description='remote listing overrides as JSON, e.g. {"zones": ["US-CAL-CISO"], "years": [2024]}',
    )

    def resolved_source(self) -> str:
        return self.source or os.environ.get("VARCAP_SOURCE", "sample")

    def params(self) -> dict[str, Any]:
        try:
            p = json.loads(self.params_json or "{}")
        except ValueError as e:
            raise dg.Failure(f"params_json is not valid JSON: {e}") from e
        if not isinstance(p, dict):
            raise dg.Failure("params_json must be a JSON object")
        return p


def collect_files(
    ds: Dataset, source: str, params: dict[str, Any], downloader: Downloader
) -> list[dict[str, Any]]:
    """Return ``raw_files`` rows for ``ds``: registered samples or downloaded remote files.

    Raises ``ValueError`` for an unknown source, a missing sample file or a remote parameter that is not
    a plain name (cache paths never leave ``data/raw``), :class:`DownloadError` for a failed download
    (naming the URL) or one that would take the dataset past its size cap (``max_bytes``).
    """
    now = datetime.now(UTC)
    rows: list[dict[str, Any]] = []
    if source == "remote" and ds.remote is not None:
        p = dict(params)
        if "EIA_API_KEY" in ds.needs_env:
            p.setdefault("api_key", os.environ.get("EIA_API_KEY"))
        from assets.sources import integer

        budget = integer(p, "max_bytes", ds.max_bytes, 1, 1 << 50)
        for rf in ds.remote(p):
            left = budget - sum(r["bytes"] for r in rows)
            res = downloader.fetch(rf.url, rf.dest, sha256=rf.sha256, expect=rf.expect, max_bytes=left)
            # EIA pages past the end of the data come back empty: stop paging at the first empty one
            if rf.expect == "json" and _empty_eia_page(res.path):
                res.path.unlink()
                res.path.with_name(res.path.name + ".meta.json").unlink(missing_ok=True)  # no orphan sidecar
                break
            rows.append(
                dict(
                    dataset=ds.key,
                    source="remote",
                    path=str(res.path),
                    name=rf.dest,
                    url=res.metadata()["url"],
                    bytes=res.bytes,
                    sha256=res.sha256,
                    has_header=rf.has_header,
                    registered_at=now,
                )
            )
        return rows
    if source not in ("sample", "remote"):
        raise ValueError(f"raw_{ds.key}: unknown source {source!r}; use 'sample' or 'remote'")
    manifest = sample_manifest()
    for rel in ds.sample_files:
        path = paths.samples_dir() / rel
        if not path.exists():
            raise ValueError(f"raw_{ds.key}: embedded sample {path} is missing (run `make samples`?)")
        digest = sha256_file(path)
        if rel in manifest and manifest[rel] != digest:
            raise ValueError(
                f"raw_{ds.key}: embedded sample {path} has sha256 {digest[:16]}…, but data/samples/"
                f"MANIFEST.json records {manifest[rel][:16]}…: the file was modified; restore it "
                f"(git checkout -- data/samples/{rel}) or rebuild the samples (`make samples`)"
            )
        rows.append(
            dict(
                dataset=ds.key,
                source="sample",
                path=str(path),
                name=rel,
                url=None,
                bytes=path.stat().st_size,
                sha256=digest,
                has_header=ds.has_header,
                registered_at=now,
            )
        )
    return rows


def sample_manifest() -> dict[str, str]:
    """``file -> sha256`` from ``data/samples/MANIFEST.json`` (empty if there is none)."""
    p = paths.samples_dir() / "MANIFEST.json"
    try:
        return {e["file"]: e["sha256"] for e in json.loads(p.read_text())}
    except FileNotFoundError:
        return {}
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{p}: unreadable sample manifest ({e})") from e


def _empty_eia_page(path: Any) -> bool:
    import json

    try:
        return not json.loads(path.read_text())["response"]["data"]
    except (ValueError, KeyError, TypeError):
        return False


def record_files(conn: Any, dataset: str, rows: list[dict[str, Any]]) -> None:
    """Replace the ``raw_files`` rows of ``dataset`` in one transaction, then publish the snapshot."""
    conn.execute(RAW_FILES.ddl().replace("CREATE OR REPLACE TABLE", "CREATE TABLE IF NOT EXISTS"))
    df = pl.DataFrame(rows, schema={c.name: None for c in RAW_FILES.columns}).select(RAW_FILES.column_names)  # noqa: F841
    conn.execute("BEGIN TRANSACTION")
    try:
        conn.execute("DELETE FROM raw_files WHERE dataset = ?", [dataset])
        conn.execute(f"INSERT INTO raw_files SELECT {', '.join(RAW_FILES.column_names)} FROM df")
        conn.execute("COMMIT")
    except Exception:
        from assets.warehouse import rollback

        rollback(conn)
        raise
    snapshot.publish(conn)  # readers see the new registry too, not only after the next core write


def raw_files_for(conn: Any, dataset: str) -> list[RawFile]:
    """The registered files of ``dataset`` as :class:`RawFile` (with the dataset's column names)."""
    from pathlib import Path

    ds = DATASETS[dataset]
    rows = conn.execute(
        "SELECT path, name, has_header FROM raw_files WHERE dataset = ? ORDER BY name", [dataset]
    ).fetchall()
    if not rows:
        raise dg.Failure(f"no raw files registered for {dataset}; materialize raw_{dataset} first")
    return [RawFile(Path(p), n, bool(h), ds.columns) for p, n, h in rows]


def _make_raw_asset(ds: Dataset) -> dg.AssetsDefinition:
    @dg.asset(
        name=f"raw_{ds.key}",
        group_name="raw",
        description=ds.description,
        pool=POOL,
        kinds={"duckdb", "file"},
        code_version="1",
    )
    def _asset(
        context: dg.AssetExecutionContext,
        config: RawConfig,
        duckdb: DuckDBResource,
        downloader: DownloaderResource,
    ) -> dg.MaterializeResult:
        source = config.resolved_source()
        if source == "remote" and ds.remote is None:
            context.log.warning(f"raw_{ds.key}: no remote endpoint is known; using the embedded sample")
            source = "sample"
        rows = collect_files(ds, source, config.params(), downloader.client())
        with duckdb.get_connection() as conn:
            record_files(conn, ds.key, rows)
        total = sum(r["bytes"] for r in rows)
        return dg.MaterializeResult(
            metadata={
                "source": source,
                "files": len(rows),
                "bytes": dg.MetadataValue.int(total),
                "listing": dg.MetadataValue.md(
                    "| file | bytes | sha256 |\n|---|---|---|\n"
                    + "\n".join(f"| {r['name']} | {r['bytes']} | `{r['sha256'][:16]}…` |" for r in rows)
                ),
            },
            data_version=dg.DataVersion(
                hashlib.sha256("".join(sorted(r["sha256"] for r in rows)).encode()).hexdigest()[:16]
            ),
        )

    return _asset


_dataset_assets = [_make_raw_asset(ds) for ds in DATASETS.values()]


@dg.asset(
    name=RAW_FILES.name,
    group_name="raw",
    pool=POOL,
    kinds={"duckdb"},
    deps=_dataset_assets,
    code_version="1",
    description="Table `raw_files`: every raw input file (path, url, bytes, sha256). Each raw_<dataset> "
    "asset replaces its own rows in one transaction; this asset checks the registry as a whole (files "
    "still on disk with their recorded size) and reports files and bytes per dataset.",
)
def raw_files(duckdb: DuckDBResource) -> dg.MaterializeResult:
    """Fails (one line naming dataset and path) if a registered file is gone or changed size."""
    with duckdb.get_connection() as conn:
        df = conn.sql(
            f"SELECT dataset, source, path, bytes, sha256 FROM {RAW_FILES.name} ORDER BY dataset, path"
        ).pl()
    problems = file_problems(df)
    if problems:
        raise dg.Failure(
            description=f"raw_files: {len(problems)} registered files are not as recorded, e.g. {problems[0]}",
            metadata={"problems": dg.MetadataValue.md("\n".join(f"- {p}" for p in problems[:20]))},
        )
    per = (
        df.group_by("dataset", "source")
        .agg(pl.len().alias("files"), pl.col("bytes").sum().alias("bytes"))
        .sort("dataset")
    )
    table = "| dataset | source | files | bytes |\n|---|---|---|---|\n" + "\n".join(
        f"| {d} | {s} | {n} | {b} |" for d, s, n, b in per.rows()
    )
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": df.height,
            "bytes": dg.MetadataValue.int(int(df["bytes"].sum() or 0)),
            "datasets": dg.MetadataValue.md(table),
        },
        data_version=dg.DataVersion(
            hashlib.sha256("".join(sorted(df["sha256"].to_list())).encode()).hexdigest()[:16]
        ),
    )


def file_problems(df: pl.DataFrame) -> list[str]:
    """For ``raw_files`` rows (dataset, path, bytes): one message per file that is missing or whose size
    differs from the recorded one (sha256 is verified by the download client on every reuse)."""
    from pathlib import Path

    out = []
    for dataset, path, size in df.select("dataset", "path", "bytes").rows():
        p = Path(path)
        if not p.is_file():
            out.append(f"{dataset}: {path} is missing")
        elif p.stat().st_size != size:
            out.append(f"{dataset}: {path} has {p.stat().st_size} bytes, {size} recorded")
    return out


#: one asset per dataset, then ``raw_files`` (the registry they all write)
raw_assets = [*_dataset_assets, raw_files]

raw_checks = table_checks(RAW_FILES, raw_files)
