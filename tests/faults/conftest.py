"""Fault-injection helpers: a tiny warehouse built from small fixture files, and exact table snapshots."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from assets.core import core_assets
from assets.raw import record_files
from assets.resources import DownloaderResource

CORE = {a.key.to_user_string(): a for a in core_assets}


def register(db: Path, dataset: str, files: list[tuple[Path, str, bool]]) -> None:
    """Record ``(path, name, has_header)`` as the raw files of ``dataset`` (what a raw asset would do)."""
    from datetime import UTC, datetime

    from assets.download import sha256_file

    rows = [
        dict(
            dataset=dataset,
            source="sample",
            path=str(p),
            name=n,
            url=None,
            bytes=p.stat().st_size,
            sha256=sha256_file(p),
            has_header=h,
            registered_at=datetime.now(UTC),
        )
        for p, n, h in files
    ]
    con = duckdb.connect(str(db))
    try:
        record_files(con, dataset, rows)
    finally:
        con.close()


def materialize(db: Path, table: str) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [CORE[table]],
        resources={
            "duckdb": DuckDBResource(database=str(db)),
            "downloader": DownloaderResource(cache_dir=str(db.parent / "raw")),
        },
        raise_on_error=False,
    )


def failure_text(res: dg.ExecuteInProcessResult) -> str:
    ev = next(e for e in res.all_events if e.event_type_value == "STEP_FAILURE")
    d = ev.event_specific_data
    return (d.user_failure_data.description if d.user_failure_data else "") or str(d.error)


def snapshot(db: Path, table: str) -> tuple[list, list, list]:
    """Every row of ``table`` (in storage order), its rejects and its column types: equal snapshots mean
    the table was not touched."""
    con = duckdb.connect(str(db))
    try:
        rows = con.execute(f"SELECT * FROM {table}").fetchall()
        rej = con.execute("SELECT * FROM core_rejects WHERE table_name = ?", [table]).fetchall()
        types = con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?", [table]
        ).fetchall()
        return rows, rej, types
    finally:
        con.close()


@pytest.fixture
def wh(tmp_path: Path) -> Path:
    return tmp_path / "warehouse.duckdb"


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    def _w(name: str, text: str) -> Path:
        p = tmp_path / "files" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        return p

    return _w
