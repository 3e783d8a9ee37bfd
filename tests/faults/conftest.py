"""Fault-injection helpers: a tiny warehouse built from small fixture files, exact table snapshots, and
the one-file price warehouse that the lock/reader tests share (``prices_wh``, :func:`build_prices`)."""

from __future__ import annotations

import time
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
PRICES = "Datetime,Price (USD/MWh)\n2024-01-01 00:00:00,1\n2024-01-01 01:00:00,2\n"


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


def build_prices(db: Path, resource: object) -> tuple[dg.ExecuteInProcessResult, float]:
    """Materialize ``core_power_price`` with ``resource`` as the warehouse; (result, wall seconds)."""
    t0 = time.monotonic()
    res = dg.materialize(
        [CORE["core_power_price"]],
        resources={"duckdb": resource, "downloader": DownloaderResource(cache_dir=str(db.parent / "raw"))},
        raise_on_error=False,
    )
    return res, time.monotonic() - t0


@pytest.fixture
def prices_wh(tmp_path: Path, write: Callable[[str, str], Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    """``data/warehouse.duckdb`` (``$VARCAP_WAREHOUSE``) with one registered two-hour price file."""
    db = tmp_path / "data" / "warehouse.duckdb"
    db.parent.mkdir()
    register(
        db, "power_prices", [(write("p.csv", PRICES), "prices/ERCOT_HB_HUBAVG_DAM_SPP_2024_hourly.csv", True)]
    )
    monkeypatch.setenv("VARCAP_WAREHOUSE", str(db))
    return db
