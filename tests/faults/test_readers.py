"""Readers (`varcap sql`, `varcap results`) never block a run: they open the published snapshot when it
holds everything committed, and every write publishes it, raw-only ones too; dead writers' temporary
copies are cleaned up."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from assets.resources import warehouse_resource
from pipelines.guard import connect_readonly
from tests.faults.conftest import build_prices


def test_a_reader_does_not_block_a_run(prices_wh: Path) -> None:
    assert build_prices(prices_wh, warehouse_resource())[0].success
    # what `varcap sql` / `varcap results` hold while their query runs, in another process
    code = (
        "import sys, time; from pathlib import Path; from pipelines.guard import connect_readonly; "
        "c = connect_readonly(Path(sys.argv[1])); "
        "print(c.execute('SELECT count(*) FROM core_power_price').fetchone()[0], flush=True); time.sleep(60)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    reader = subprocess.Popen(
        [sys.executable, "-c", code, str(prices_wh)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert reader.stdout.readline().strip() == "2"
        res, took = build_prices(prices_wh, warehouse_resource())
        assert res.success and took < 8, took  # it used to wait ~102 s and fail
    finally:
        reader.kill()
        reader.wait()


def test_raw_only_writes_publish_the_snapshot(prices_wh: Path) -> None:
    snap = prices_wh.with_name("warehouse.snapshot.duckdb")
    con = duckdb.connect(str(snap), read_only=True)
    try:
        assert con.execute("SELECT dataset FROM raw_files").fetchall() == [("power_prices",)]
    finally:
        con.close()


def test_a_stale_snapshot_is_not_read(prices_wh: Path) -> None:
    assert build_prices(prices_wh, warehouse_resource())[0].success
    time.sleep(0.05)
    con = duckdb.connect(str(prices_wh))  # a write that publishes nothing (another tool)
    con.execute("CREATE TABLE later AS SELECT 42 AS x")
    con.close()
    reader = connect_readonly(prices_wh)
    try:
        assert reader.execute("SELECT x FROM later").fetchone() == (42,)
    finally:
        reader.close()


def test_dead_writers_temporary_copies_are_removed(prices_wh: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale = prices_wh.with_name(f".warehouse.snapshot.duckdb.tmp{dead.pid}")
        busy = prices_wh.with_name(f".warehouse.snapshot.duckdb.tmp{live.pid}")
        stale.write_bytes(b"half a copy")
        busy.write_bytes(b"being copied")
        assert build_prices(prices_wh, warehouse_resource())[0].success
        assert not stale.exists() and busy.exists()
    finally:
        live.kill()
        live.wait()
        assert os.path.exists(prices_wh)
