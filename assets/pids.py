"""Is a process still there? One answer for every place that tells a live owner from a dead one: the
pool slots and runs of :mod:`pipelines.guard` and the snapshot's temporary copies in
:mod:`assets.snapshot`.

``os.kill(pid, 0)`` sends no signal; it only asks the kernel. ``ProcessLookupError`` (ESRCH) means no such
process. ``PermissionError`` (EPERM) means the process *exists* but belongs to another user, so it counts
as alive: treating it as dead would free a live run's slots or delete a copy another user is still
writing. A pid ≤ 0 names a process group (or every process), never one process, so it is not alive.
"""

from __future__ import annotations

import os


def create_time(pid: int) -> float | None:
    """The process's start time (seconds since the epoch), or None when it cannot be read."""
    try:
        import psutil

        return float(psutil.Process(pid).create_time())
    except Exception:  # noqa: BLE001  # gone, not permitted, or psutil missing: unknown
        return None


def pid_alive(pid: int, started: float | None = None, tolerance_s: float = 1.0) -> bool:
    """True when process ``pid`` exists (see the module docstring for EPERM) and, if ``started`` is
    given, started within ``tolerance_s`` of it: a different start time means the pid was reused by
    another process, so the one we meant is dead. A start time that cannot be read is not held against
    the process."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if started is None:
        return True
    now = create_time(pid)
    return now is None or abs(now - started) <= tolerance_s
