"""A `varcap run` killed with SIGKILL while it holds the duckdb_write pool slot does not wedge the next
run (issue #15, item 1): the next run frees the dead run's slot at start-up and finishes.

Slow-ish (~30 s: two real `varcap run` processes), but it is the one end-to-end proof of the fix."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest

POOL = "duckdb_write"  # the pool every warehouse-writing asset uses (dagster.yaml)

VARCAP = str(Path(sys.executable).with_name("varcap"))


def _claimed(dh: Path) -> list[str]:
    with dg.DagsterInstance.from_config(str(dh)) as inst:
        return [s.run_id for s in inst.event_log_storage.get_concurrency_info(POOL).claimed_slots]


@pytest.mark.slow  # two real `varcap run` processes: ~40-70 s on 2 shared cores
def test_kill9_mid_run_then_next_run_finishes(tmp_path: Path) -> None:
    dh = tmp_path / "dagster_home"
    env = {
        **os.environ,
        "DAGSTER_HOME": str(dh),
        "VARCAP_WAREHOUSE": str(tmp_path / "wh.duckdb"),
        "VARCAP_RAW_CACHE": str(tmp_path / "raw"),
        "VARCAP_SOURCE": "sample",
        "COLUMNS": "300",
    }
    env.pop("VARCAP_DEBUG", None)
    first = subprocess.Popen(
        [VARCAP, "run", "--groups", "raw", "core"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    held: list[str] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and first.poll() is None:
        if (dh / "dagster.yaml").exists() and (dh / "storage").exists():
            try:
                held = _claimed(dh)
            except Exception:  # the instance is being created by the run  # noqa: BLE001
                held = []
            if held:
                break
        time.sleep(0.2)
    assert held, "the run never held a pool slot"
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    assert _claimed(dh) == held  # what used to wedge every later run

    second = subprocess.run(
        [VARCAP, "run", "--groups", "raw"], env=env, capture_output=True, text=True, timeout=240
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"pool slots of run {held[0]}, whose process had died" in " ".join(second.stdout.split())
    assert _claimed(dh) == []
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    assert con.execute("select count(*) from raw_files").fetchone()[0] == 30
