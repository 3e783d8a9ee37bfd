"""The ``duckdb`` resource waits only for a lock, a few seconds in all, and otherwise fails at once with one
line naming the file, the lock holder or the way out (item 3: a corrupt header printed nothing
for 828 s, a read-only home took 102 s per asset, a reader of the warehouse blocked a run 102 s)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from assets.resources import warehouse_resource
from pipelines.guard import failure_lines
from tests.faults.conftest import build_prices


def test_a_reader_holding_the_warehouse_is_named_within_seconds(prices_wh: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1], read_only=True); print('ok', flush=True);"
            " time.sleep(120)",
            str(prices_wh),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ok"
        res, took = build_prices(prices_wh, warehouse_resource())
        assert not res.success
        (msg,) = failure_lines(res.all_events)  # what `varcap run` prints: one line
        assert f"is locked by pid {holder.pid}" in msg and "waited 10 s" in msg, msg
        assert took < 20, took  # it used to retry for ~102 s
    finally:
        holder.kill()
        holder.wait()
    # the holder gone, the same resource works
    assert build_prices(prices_wh, warehouse_resource())[0].success


def test_a_corrupt_warehouse_fails_at_once_with_the_way_out(prices_wh: Path) -> None:
    assert build_prices(prices_wh, warehouse_resource())[0].success  # publishes the snapshot
    snap = prices_wh.with_name("warehouse.snapshot.duckdb")
    assert snap.exists()
    with open(prices_wh, "r+b") as f:  # a damaged header
        f.write(b"\0" * 4096)
    res, took = build_prices(prices_wh, warehouse_resource())
    assert not res.success and took < 5, took
    (msg,) = failure_lines(res.all_events)
    assert f"the warehouse {prices_wh} cannot be opened" in msg, msg
    assert f"restore it from the snapshot (cp {snap} {prices_wh}" in msg, msg
    # the way out works
    shutil.copyfile(snap, prices_wh)
    prices_wh.chmod(0o644)
    assert build_prices(prices_wh, warehouse_resource())[0].success


def test_a_place_that_cannot_be_written_fails_at_once(tmp_path: Path) -> None:
    """`/sys` refuses new files even to root: a stand-in for a read-only home."""
    from assets.resources import WarehouseResource

    try:
        duckdb.connect("/sys/varcap-probe.duckdb").close()
        pytest.skip("/sys is writable here")
    except duckdb.Error:
        pass
    res, took = build_prices(
        tmp_path / "w.duckdb", WarehouseResource(database="/sys/varcap-warehouse.duckdb")
    )
    assert not res.success and took < 5, took
    (msg,) = failure_lines(res.all_events)
    assert "the warehouse /sys/varcap-warehouse.duckdb cannot be written here" in msg, msg
    assert "VARCAP_HOME" in msg
