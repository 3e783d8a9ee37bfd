"""Runs started by the CLI whose process died are marked failed at start-up, slot or no slot, so they stop
counting against the UI's ``max_concurrent_runs`` (item 3: interrupted sweeps and Harmony runs
hold no pool slot and used to stay STARTED forever; after four, every UI run waited QUEUED)."""

from __future__ import annotations

import subprocess
import sys
import uuid

import dagster as dg
from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus

from assets.pids import create_time
from pipelines import guard

IN_PROGRESS = [DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]


def _run(
    inst: dg.DagsterInstance, pid: int | None, status: DagsterRunStatus = DagsterRunStatus.STARTED
) -> str:
    run_id = str(uuid.uuid4())
    tags = {"varcap/pid": str(pid), "varcap/host": guard.socket.gethostname()} if pid else {}
    started = create_time(pid) if pid else None
    if started:
        tags["varcap/started"] = f"{started:.2f}"
    inst.add_run(DagsterRun(job_name="sweep__ias", run_id=run_id, tags=tags, status=status))
    return run_id


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _in_progress(inst: dg.DagsterInstance) -> set[str]:
    return {r.run_id for r in inst.get_runs(filters=dg.RunsFilter(statuses=IN_PROGRESS))}


def test_dead_cli_runs_without_a_slot_are_failed_at_start_up() -> None:
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with dg.instance_for_test() as inst:
            inst.event_log_storage.set_concurrency_slots(guard.POOL, 1)
            dead = [_run(inst, _dead_pid()) for _ in range(4)]  # four killed sweeps: no pool slot
            starting = _run(inst, _dead_pid(), DagsterRunStatus.STARTING)
            alive = _run(inst, live.pid)
            ui = _run(inst, None)  # launched from the UI: its process cannot be told, left alone
            assert _in_progress(inst) == {*dead, starting, alive, ui}
            freed = guard.free_dead_slots(inst)  # what `varcap run` / `varcap sweep` call first
            assert sorted(freed) == sorted([*dead, starting])
            assert _in_progress(inst) == {alive, ui}
            for r in [*dead, starting]:
                run = inst.get_run_by_id(r)
                assert run.is_failure
            assert guard.free_dead_slots(inst) == []  # idempotent
    finally:
        live.kill()
        live.wait()


def test_the_ui_sensor_fails_dead_cli_runs() -> None:
    with dg.instance_for_test() as inst:
        dead = _run(inst, _dead_pid())
        from pipelines.definitions import defs

        sensor = defs.resolve_sensor_def("varcap_dead_runs")
        assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
        result = sensor.evaluate_tick(dg.build_sensor_context(instance=inst))
        assert dead in (result.skip_message or "")
        assert inst.get_run_by_id(dead).is_failure


def test_the_start_up_notice_says_what_was_done_one_line_per_run() -> None:
    """`varcap run`/`sweep` used to print 'freed the duckdb_write pool slots of run …' for every dead run,
    also for a killed sweep that held no slot (it was only marked failed)."""
    with dg.instance_for_test() as inst:
        storage = inst.event_log_storage
        storage.set_concurrency_slots(guard.POOL, 1)
        holder = _run(inst, _dead_pid())
        assert storage.claim_concurrency_slot(guard.POOL, holder, "core_jobs").is_claimed
        sweep = _run(inst, _dead_pid())
        lines = guard.dead_run_notices(inst)
        assert lines == [
            f"freed the duckdb_write pool slots of run {holder}, whose process had died",
            f"marked run {sweep} failed, whose process had died (it held no pool slot)",
        ]
        assert storage.get_concurrency_info(guard.POOL).claimed_slots == []
        assert guard.dead_run_notices(inst) == []
