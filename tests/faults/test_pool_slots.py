"""Pool slots held by a dead run are freed; one held by a live run is reported at once with the command
that frees it (item 1; the end-to-end `kill -9` case is test_kill9.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import dagster as dg
from dagster._core.storage.dagster_run import DagsterRun

from assets.pids import create_time
from pipelines import guard


def _run(inst: dg.DagsterInstance, pid: int | None) -> str:
    run_id = str(uuid.uuid4())
    tags = {"varcap/pid": str(pid), "varcap/host": guard.socket.gethostname()} if pid else {}
    started = create_time(pid) if pid else None
    if started:
        tags["varcap/started"] = f"{started:.2f}"
    inst.add_run(DagsterRun(job_name="__ASSET_JOB", run_id=run_id, tags=tags))
    return run_id


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_dead_holder_is_freed_and_live_holder_is_reported() -> None:
    said: list[str] = []
    with dg.instance_for_test() as inst:
        storage = inst.event_log_storage
        storage.set_concurrency_slots(guard.POOL, 1)
        dead = _run(inst, _dead_pid())
        assert storage.claim_concurrency_slot(guard.POOL, dead, "core_jobs").is_claimed
        assert guard.free_dead_slots(inst) == [dead]
        assert storage.get_concurrency_info(guard.POOL).claimed_slots == []
        assert inst.get_run_by_id(dead).is_failure

        # a slot held by a live process: our pending step waits, and the watcher says who holds it
        live_proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            live = _run(inst, live_proc.pid)
            assert storage.claim_concurrency_slot(guard.POOL, live, "core_jobs").is_claimed
            mine = _run(inst, os.getpid())
            assert not storage.claim_concurrency_slot(guard.POOL, mine, "core_power_price").is_claimed
            watcher = guard.SlotWatcher(inst, said.append)
            assert guard.free_dead_slots(inst) == []  # alive: not touched
            watcher.check()
            watcher.check()  # reported once
            assert len(said) == 1
            assert f"held by run {live}" in said[0] and f"pid {live_proc.pid}, still running" in said[0]
            assert f"varcap run --free-slots {live}" in said[0]
            # the holder dies: the next check frees its slot
            live_proc.kill()
            live_proc.wait()
            watcher.check()
            assert "whose process is gone" in said[-1]
            assert [s.run_id for s in storage.get_concurrency_info(guard.POOL).claimed_slots] == []
        finally:
            live_proc.kill()
            live_proc.wait()


def test_free_slots_by_hand_for_a_run_started_elsewhere() -> None:
    with dg.instance_for_test() as inst:
        storage = inst.event_log_storage
        storage.set_concurrency_slots(guard.POOL, 1)
        ui_run = _run(inst, None)  # e.g. launched from the UI: no process known
        assert storage.claim_concurrency_slot(guard.POOL, ui_run, "core_jobs").is_claimed
        assert guard.free_dead_slots(inst) == []  # cannot tell: left alone
        assert guard.free_slots(inst, [ui_run]) == [ui_run]
        assert storage.get_concurrency_info(guard.POOL).claimed_slots == []
