"""A `varcap run` killed with SIGKILL while it holds the duckdb_write pool slot does not wedge the next
run: the next run frees the dead run's slot at start-up and finishes.

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

REPO = Path(__file__).resolve().parents[2]
VARCAP = [sys.executable, "-m", "pipelines.cli"]  # this checkout's CLI (cwd = REPO)


def _claimed(dh: Path) -> list[str]:
    with dg.DagsterInstance.from_config(str(dh)) as inst:
        return [s.run_id for s in inst.event_log_storage.get_concurrency_info(POOL).claimed_slots]


def _kill_while_holding(env: dict[str, str], tmp_path: Path, dh: Path) -> list[str]:
    """Start `varcap run`, SIGKILL it as soon as it holds the pool slot; return the holding run ids."""
    first = subprocess.Popen(
        [*VARCAP, "run", "--groups", "raw", "core"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    held: list[str] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and first.poll() is None:
        # poll the instance only once the run has initialized it (its first asset opened the warehouse)
        if (tmp_path / "wh.duckdb").exists():
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
    return held


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
    # a step may release its slot between our poll and the kill (a race on a loaded machine): then the
    # kill proves nothing, so start again on a fresh home, up to three times
    held: list[str] = []
    for attempt in range(3):
        dh = tmp_path / f"dagster_home{attempt}"
        env["DAGSTER_HOME"] = str(dh)
        for f in tmp_path.glob("wh.duckdb*"):
            f.unlink()
        held = _kill_while_holding(env, tmp_path, dh)
        if _claimed(dh) == held:  # what used to wedge every later run
            break
    assert held and _claimed(dh) == held, "never killed the run while it held the pool slot"

    second = subprocess.run(
        [*VARCAP, "run", "--groups", "raw"], cwd=REPO, env=env, capture_output=True, text=True, timeout=240
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"pool slots of run {held[0]}, whose process had died" in " ".join(second.stdout.split())
    assert _claimed(dh) == []
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    assert con.execute("select count(*) from raw_files").fetchone()[0] == 40  # 30 + the 3 spot samples + the 6 SGIP sample files + the SWF sample


HOLDER = """
import sys, time, uuid
import dagster as dg
from dagster._core.storage.dagster_run import DagsterRun
from pipelines import guard
inst = dg.DagsterInstance.get()
inst.event_log_storage.set_concurrency_slots(guard.POOL, 1)
run_id = str(uuid.uuid4())
inst.add_run(DagsterRun(job_name="__ASSET_JOB", run_id=run_id, tags=guard.run_tags()))
assert inst.event_log_storage.claim_concurrency_slot(guard.POOL, run_id, "core_jobs").is_claimed
print(run_id, flush=True)
time.sleep(600)
"""


@pytest.mark.slow  # a real `varcap run` process: ~20-40 s on 2 shared cores
def test_waiting_for_a_held_slot_is_reported_and_sigint_ends_the_run(tmp_path: Path) -> None:
    """A live run holds the slot: `varcap run` says so (with the command that frees it) instead of
    waiting silently, and SIGINT ends it (it used to ignore SIGINT and SIGTERM)."""
    dh = tmp_path / "dagster_home"
    dh.mkdir()
    (dh / "dagster.yaml").write_text((REPO / "dagster.yaml").read_text())
    env = {
        **os.environ,
        "DAGSTER_HOME": str(dh),
        "VARCAP_WAREHOUSE": str(tmp_path / "wh.duckdb"),
        "COLUMNS": "300",
    }
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
    )
    log = tmp_path / "run.log"
    run: subprocess.Popen | None = None
    try:
        assert holder.stdout is not None
        held = holder.stdout.readline().strip()
        with open(log, "w") as out:
            run = subprocess.Popen(
                [*VARCAP, "run", "--groups", "raw"], cwd=REPO, env=env, stdout=out, stderr=out
            )
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and "waiting for pool" not in log.read_text():
                assert run.poll() is None, log.read_text()
                time.sleep(0.3)
            text = " ".join(log.read_text().split())
            assert f"its slot is held by run {held} (step core_jobs, pid {holder.pid}, still running)" in text
            assert f"free it with: varcap run --free-slots {held}" in text
            run.send_signal(signal.SIGINT)
            assert run.wait(timeout=30) == 130
    finally:
        for p in (run, holder):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
