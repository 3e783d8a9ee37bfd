"""What keeps the CLI honest when things go wrong: one clear line per error, read-only
warehouse access that waits briefly for a writer, outputs written atomically, and Dagster pool slots
that a dead run can no longer hold.

Pool slots: every run the CLI starts is tagged with its process (``varcap/pid``, ``varcap/host``,
``varcap/started``). :func:`free_dead_slots` (called when ``varcap run``, a sweep or a reproduction
starts) marks failed every unfinished run so tagged whose process is gone (:func:`fail_dead_runs`: a
killed sweep or Harmony run holds no slot but still counts against the UI's ``max_concurrent_runs``)
and frees the slots of dead runs; the sensor ``varcap_dead_runs`` (:func:`dead_runs_sensor`) does the
same every 30 s while the UI runs. :class:`SlotWatcher` reports, within seconds, a step waiting for a
slot held by another run, and frees it if that run's process has died meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from assets.pids import create_time, pid_alive

POOL = "duckdb_write"
INTERRUPT_GRACE_S = 10.0
FREE_CMD = "varcap run --free-slots"


# ------------------------------------------------------------------------------------------ errors
class WarehouseBusy(RuntimeError):
    """The warehouse is locked by a writer for longer than we wait."""


def disk_full(e: BaseException) -> bool:
    """Whether ``e`` (or an exception it was raised from) says the disk is full: ``ENOSPC``/``EDQUOT`` or
    the text of it in a DuckDB error."""
    import errno

    seen = 0
    cur: BaseException | None = e
    while cur is not None and seen < 10:
        if isinstance(cur, OSError) and cur.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        text = str(cur).lower()
        if "no space left on device" in text or "disk quota exceeded" in text:
            return True
        cur = cur.__cause__ or cur.__context__
        seen += 1
    return False


def user_error(e: BaseException) -> tuple[int, str]:
    """``(exit code, one-line message)`` for an exception that reached ``main``: 2 for bad input or usage,
    1 for anything else (an environment problem or a bug)."""
    import duckdb

    first = (str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)).strip().splitlines()
    msg = first[0] if first else type(e).__name__
    if disk_full(e):
        where = getattr(e, "filename", None)
        return 1, f"disk full{f' writing {where}' if where else ''}: free some space and run again ({msg})"
    if isinstance(e, WarehouseBusy):
        return 1, msg
    if isinstance(e, duckdb.CatalogException):
        return 1, (
            f"{_strip_duckdb(msg)}: the warehouse does not have it yet — run `varcap run` "
            "(and `varcap sweep STUDY` for results)"
        )
    if isinstance(e, duckdb.IOException) and "lock" in msg.lower():
        return (
            1,
            f"the warehouse is being written by another process ({_strip_duckdb(msg)}); try again when it ends",
        )
    if isinstance(e, (duckdb.IOException, duckdb.SerializationException, duckdb.InternalException)):
        return 1, f"cannot read the warehouse: {_strip_duckdb(msg)}"
    if isinstance(e, duckdb.Error):
        return 2, _strip_duckdb(msg)
    if isinstance(e, (ValueError, KeyError, FileNotFoundError, IsADirectoryError, NotADirectoryError)):
        if isinstance(e, FileNotFoundError) and e.filename:
            return 2, f"{e.filename}: no such file"
        return 2, msg
    if isinstance(e, PermissionError):
        return 2, f"{e.filename or ''}: permission denied".lstrip(": ")
    try:
        import polars as pl

        if isinstance(e, pl.exceptions.PolarsError):
            return 2, msg
    except ImportError:  # pragma: no cover
        pass
    return 1, f"internal error: {type(e).__name__}: {msg} (run with --debug for the traceback)"


def _strip_duckdb(msg: str) -> str:
    return re.sub(r"^(IO|Catalog|Binder|Parser|Serialization|Internal) Error: ", "", msg)


def connect_readonly(path: Path, wait_s: float = 5.0, poll_s: float = 0.25) -> Any:
    """A read-only DuckDB connection to the warehouse ``path``: its published snapshot when that holds
    everything committed (:func:`assets.snapshot.fresh_snapshot`), so a reader never blocks a run;
    otherwise ``path`` itself, retrying for ``wait_s`` while a writer holds the lock, then raising
    :class:`WarehouseBusy` naming the writer's pid when DuckDB tells it."""
    import duckdb

    from assets.snapshot import fresh_snapshot

    snap = fresh_snapshot(Path(path))
    if snap is not None:
        with contextlib.suppress(duckdb.Error):
            return duckdb.connect(str(snap), read_only=True)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return duckdb.connect(str(path), read_only=True)
        except duckdb.IOException as e:
            if "lock" not in str(e).lower():
                raise
            if time.monotonic() >= deadline:
                pid = re.search(r"PID (\d+)", str(e))
                who = f" (pid {pid.group(1)})" if pid else ""
                raise WarehouseBusy(
                    f"the warehouse {path} is being written by another process{who}, a `varcap run` or "
                    f"sweep; waited {wait_s:g} s — try again when it finishes"
                ) from None
            time.sleep(poll_s)


def write_outputs(writers: Iterable[tuple[str, Callable[[Path], None]]]) -> None:
    """Write every ``(path, writer)`` to a temporary file beside its path, then rename them all into
    place: a failure leaves every existing output untouched."""
    done: list[tuple[Path, Path]] = []
    try:
        for dest, write in writers:
            d = Path(dest)
            tmp = d.with_name(f".{d.name}.{os.getpid()}.tmp{d.suffix}")
            done.append((tmp, d))
            write(tmp)
    except BaseException:
        for tmp, _ in done:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, d in done:
        os.replace(tmp, d)


def failure_lines(events: Iterable[Any]) -> list[str]:
    """``step: message`` for each failed step, with the asset's own message (the failing check's or
    normalizer's) rather than Dagster's generic 'Execution of step … failed.'"""
    out = []
    for ev in events:
        if ev.event_type_value != "STEP_FAILURE":
            continue
        d = ev.event_specific_data
        msg = (d.user_failure_data.description if d.user_failure_data else None) or None
        if msg is None and d.error is not None:
            err = d.error
            while err.cause is not None and "dagster" in (err.cls_name or "").lower():
                err = err.cause
            msg = (err.message or "").strip().splitlines()[0] if err.message else ev.message
            if err.cls_name:  # Dagster writes "module.path.ClassName: text": the text alone
                msg = re.sub(rf"^(\w+\.)*{re.escape(err.cls_name)}: ", "", msg or "")
        msg = re.sub(r"^[\w.]*(Error|Exception|Failure): ", "", msg or ev.message)
        out.append(msg if msg.startswith(f"{ev.step_key}: ") else f"{ev.step_key}: {msg}")
    return out


def warning_lines(instance: Any, run_id: str) -> list[str]:
    """``warning: step: message`` for each warning an asset logged in run ``run_id`` (shown by the CLI
    instead of Dagster's console log)."""
    import logging

    out = []
    for e in instance.all_logs(run_id):
        if e.dagster_event is None and e.level >= logging.WARNING and e.level < logging.ERROR:
            msg = e.user_message
            step = f"{e.step_key}: " if e.step_key and not msg.startswith(f"{e.step_key}: ") else ""
            out.append(f"warning: {step}{msg}")
    return out


# --------------------------------------------------------------------------------------- pool slots
def run_tags() -> dict[str, str]:
    """Tags that let a later process tell whether this run is still alive."""
    started = create_time(os.getpid())
    return {
        "varcap/pid": str(os.getpid()),
        "varcap/host": socket.gethostname(),
        **({"varcap/started": f"{started:.2f}"} if started else {}),
    }


def run_alive(run: Any) -> bool | None:
    """True/False when the run's process is known to be alive/dead; None when it cannot be told (a run
    started elsewhere, e.g. from the UI). A missing or finished run counts as dead."""
    if run is None or run.is_finished:
        return False
    tags = run.tags
    if "varcap/pid" not in tags or tags.get("varcap/host") != socket.gethostname():
        return None
    try:
        pid = int(tags["varcap/pid"])
        started = float(tags["varcap/started"]) if tags.get("varcap/started") else None
    except ValueError:  # a tag edited by hand: cannot be told
        return None
    return pid_alive(pid, started)


#: run states that count against ``max_concurrent_runs`` or may still hold slots
_UNFINISHED = ("NOT_STARTED", "STARTING", "STARTED", "CANCELING")


def fail_dead_runs(instance: Any) -> list[str]:
    """Mark failed every unfinished run tagged ``varcap/pid`` (on this host) whose process is gone, and
    free its pool slots. Runs launched elsewhere (the UI, no tag) and live ones are left alone. Returns
    the ids of the runs marked failed."""
    import dagster as dg

    statuses = [dg.DagsterRunStatus[s] for s in _UNFINISHED]
    out = []
    for run in instance.get_runs(filters=dg.RunsFilter(statuses=statuses)):
        if "varcap/pid" not in run.tags or run_alive(run) is not False:
            continue
        if instance.event_log_storage.supports_global_concurrency_limits:
            instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        instance.report_run_failed(
            run, f"its process (pid {run.tags['varcap/pid']}) died; marked failed by varcap at start-up"
        )
        out.append(run.run_id)
    return out


def dead_runs_sensor() -> Any:
    """A sensor, running by default, that calls :func:`fail_dead_runs` every 30 s, so a killed CLI run
    never leaves the UI's run queue waiting."""
    import dagster as dg

    @dg.sensor(
        name="varcap_dead_runs",
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="marks failed the runs started by the varcap CLI whose process has died (they would "
        "count against max_concurrent_runs forever)",
    )
    def _sensor(context):  # type: ignore[no-untyped-def]  # (dagster reads annotations at import)
        failed = fail_dead_runs(context.instance)
        return dg.SkipReason(
            f"marked {len(failed)} dead runs failed: {', '.join(failed)}" if failed else "no dead runs"
        )

    return _sensor


def free_dead_slots(instance: Any, pool: str = POOL) -> list[str]:
    """Mark failed every dead CLI run (:func:`fail_dead_runs`), then free the pool slots (and pending
    claims) of runs whose process is gone and mark those runs failed. Returns the ids of the runs whose
    slots were freed or that were marked failed."""
    dead, freed = _free_dead(instance, pool)
    return sorted({*dead, *freed})


def dead_run_notices(instance: Any, pool: str = POOL) -> list[str]:
    """:func:`free_dead_slots`, told as one line per run cleaned up (what the CLI prints at start-up):
    ``freed the <pool> pool slots of run <id>, whose process had died`` for a run that held slots,
    ``marked run <id> failed, whose process had died (it held no pool slot)`` for one that did not."""
    dead, freed = _free_dead(instance, pool)
    return [f"freed the {pool} pool slots of run {r}, whose process had died" for r in sorted(freed)] + [
        f"marked run {r} failed, whose process had died (it held no pool slot)"
        for r in sorted(set(dead) - set(freed))
    ]


def _free_dead(instance: Any, pool: str) -> tuple[list[str], list[str]]:
    """(runs marked failed by :func:`fail_dead_runs`, runs whose ``pool`` slots were freed)."""
    storage = instance.event_log_storage

    def holders() -> set[str]:
        if not storage.supports_global_concurrency_limits:
            return set()
        info = storage.get_concurrency_info(pool)
        return {s.run_id for s in info.claimed_slots} | {p.run_id for p in info.pending_steps}

    held = holders()  # before fail_dead_runs frees the dead runs' slots
    dead = fail_dead_runs(instance)
    freed = [r for r in dead if r in held]
    for run_id in sorted(holders()):
        run = instance.get_run_by_id(run_id)
        if run_alive(run) is False:
            storage.free_concurrency_slots_for_run(run_id)
            if run is not None and not run.is_finished:
                instance.report_run_failed(run, "its process died; pool slots freed by varcap")
            freed.append(run_id)
    return dead, freed


def free_slots(instance: Any, run_ids: Iterable[str]) -> list[str]:
    """Free the slots of the given runs unconditionally (the user says they are gone)."""
    out = []
    for run_id in run_ids:
        instance.event_log_storage.free_concurrency_slots_for_run(run_id)
        run = instance.get_run_by_id(run_id)
        if run is not None and not run.is_finished:
            instance.report_run_failed(run, "pool slots freed by the user (varcap run --free-slots)")
        out.append(run_id)
    return out


class SlotWatcher(threading.Thread):
    """While a run executes, check the pool every ``poll_s``: a step of ours waiting for a slot held by a
    dead run gets the slot freed; one held by a live or unknown run is reported once, with the holder
    and the command that frees it."""

    def __init__(
        self, instance: Any, say: Callable[[str], None], pool: str = POOL, poll_s: float = 1.0
    ) -> None:
        super().__init__(daemon=True, name="varcap-slot-watcher")
        self.instance, self.say, self.pool, self.poll_s = instance, say, pool, poll_s
        self.pid = str(os.getpid())
        self._stop_evt = threading.Event()
        self.reported: set[str] = set()
        self.waiting = False  # a step of ours waits for a slot
        self._interrupted_at: float | None = None

    def stop(self) -> None:
        self._stop_evt.set()
        self.join(timeout=5)

    def run(self) -> None:
        while not self._stop_evt.wait(self.poll_s):
            with contextlib.suppress(Exception):  # never let the watcher kill the run
                self.check()
            self._honour_interrupt()

    def _honour_interrupt(self) -> None:
        """Dagster captures SIGINT/SIGTERM and acts on them only between steps, so a step waiting for a
        pool slot ignored them forever. Exit at once when interrupted while waiting for a slot, and
        after ``INTERRUPT_GRACE_S`` otherwise; the run's slots are freed by the next ``varcap run``."""
        from dagster._utils.interrupts import check_captured_interrupt

        if not check_captured_interrupt():
            return
        if self._interrupted_at is None:
            self._interrupted_at = time.monotonic()
        if self.waiting or time.monotonic() - self._interrupted_at > INTERRUPT_GRACE_S:
            self.say("varcap: interrupted; the run's pool slots will be freed by the next `varcap run`")
            os._exit(130)

    def check(self) -> None:
        storage = self.instance.event_log_storage
        info = storage.get_concurrency_info(self.pool)
        mine = set()
        for p in info.pending_steps:
            if p.assigned_timestamp is not None:  # it has its slot
                continue
            run = self.instance.get_run_by_id(p.run_id)
            if run is not None and run.tags.get("varcap/pid") == self.pid:
                mine.add(p.run_id)
        self.waiting = bool(mine)
        if not mine:
            return
        for slot in info.claimed_slots:
            if slot.run_id in mine:
                continue
            run = self.instance.get_run_by_id(slot.run_id)
            alive = run_alive(run)
            if alive is False:
                storage.free_concurrency_slots_for_run(slot.run_id)
                if run is not None and not run.is_finished:
                    self.instance.report_run_failed(run, "its process died; pool slots freed by varcap")
                self.say(f"pool {self.pool}: freed the slot of run {slot.run_id[:8]}, whose process is gone")
            elif slot.run_id not in self.reported:
                self.reported.add(slot.run_id)
                who = (
                    f"pid {run.tags['varcap/pid']}, still running"
                    if alive
                    else f"status {run.status.value if run else '?'}, process unknown"
                )
                self.say(
                    f"waiting for pool {self.pool}: its slot is held by run {slot.run_id} (step "
                    f"{slot.step_key}, {who}). If that run is gone, free it with: {FREE_CMD} {slot.run_id}"
                )
