"""One answer to "is this process alive?" (`assets.pids.pid_alive`), shared by the pool-slot guard and the
snapshot's temp-copy cleanup (they used to be two copies, `guard.run_alive` and `snapshot._alive`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from types import SimpleNamespace

import pytest

from assets import pids, snapshot
from assets.pids import create_time, pid_alive
from pipelines import guard


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_live_dead_and_group_pids() -> None:
    assert pid_alive(os.getpid())
    assert pid_alive(os.getpid(), create_time(os.getpid()))
    assert not pid_alive(_dead_pid())
    # 0 and negative pids name process groups (kill(0, 0) succeeds for our own group): never a process
    assert not pid_alive(0) and not pid_alive(-1)


def test_a_reused_pid_is_not_the_process_we_meant() -> None:
    started = create_time(os.getpid())
    assert started is not None
    assert not pid_alive(os.getpid(), started - 100.0)  # another process had this pid earlier


def test_permission_error_means_the_process_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    """EPERM: the process belongs to another user. Counting it dead would free a live run's pool slots
    or delete a temp copy another user is still writing."""

    def eperm(pid: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(pids.os, "kill", eperm)
    assert pid_alive(4242)
    monkeypatch.setattr(pids, "create_time", lambda pid: None)  # its start time unreadable: still alive
    assert pid_alive(4242, 1.0)


def _run(pid: int, **tags: str) -> SimpleNamespace:
    return SimpleNamespace(
        is_finished=False, tags={"varcap/pid": str(pid), "varcap/host": socket.gethostname(), **tags}
    )


def test_both_callers_use_the_one_helper(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    calls: list[int] = []

    def fake(pid: int, started: float | None = None) -> bool:
        calls.append(pid)
        return pid == 7

    monkeypatch.setattr(guard, "pid_alive", fake)
    monkeypatch.setattr(snapshot, "pid_alive", fake)
    assert guard.run_alive(_run(7)) is True and guard.run_alive(_run(8)) is False
    dst = tmp_path / "warehouse.snapshot.duckdb"
    (tmp_path / ".warehouse.snapshot.duckdb.tmp7").write_bytes(b"x")
    (tmp_path / ".warehouse.snapshot.duckdb.tmp8").write_bytes(b"x")
    assert [p.name for p in snapshot.drop_stale_temps(dst)] == [".warehouse.snapshot.duckdb.tmp8"]
    assert sorted(calls) == [7, 7, 8, 8]


def test_run_alive_reads_the_tags() -> None:
    me = os.getpid()
    assert guard.run_alive(_run(me, **{"varcap/started": f"{create_time(me):.2f}"})) is True
    assert guard.run_alive(_run(me, **{"varcap/started": "1.00"})) is False  # pid reused
    assert guard.run_alive(_run(_dead_pid())) is False
    assert guard.run_alive(_run(0)) is False
    assert (
        guard.run_alive(
            SimpleNamespace(is_finished=False, tags={"varcap/pid": "x", "varcap/host": socket.gethostname()})
        )
        is None
    )
    assert guard.run_alive(SimpleNamespace(is_finished=False, tags={})) is None  # started elsewhere (UI)
