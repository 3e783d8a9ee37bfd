"""Dagster resources: the DuckDB warehouse (key ``duckdb``, :class:`WarehouseResource`) and the download
client (key ``downloader``)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import PrivateAttr

from assets.chapter_kernel import ChapterKernel
from assets.download import Downloader
from assets.snapshot import snapshot_path
from sim import paths

#: how long a connection waits for a lock held by another process before saying who holds it
LOCK_WAIT_S = 10.0


class DownloaderResource(dg.ConfigurableResource):
    """Configures :class:`assets.download.Downloader` (streaming, retries, Range resume, sha256)."""

    cache_dir: str = ""
    retries: int = 5
    backoff_s: float = 0.5
    timeout_s: float = 120.0
    connect_timeout_s: float = 5.0
    # hard wall-clock limit for one file, retries included (a dripping server is stopped there); sized
    # for the largest upstream files (multi-GB) on a slow link
    deadline_s: float = 3600.0

    def client(self) -> Downloader:
        return Downloader(
            self.cache_dir or paths.raw_cache_dir(),
            retries=self.retries,
            backoff_s=self.backoff_s,
            timeout_s=self.timeout_s,
            connect_timeout_s=self.connect_timeout_s,
            deadline_s=self.deadline_s,
        )


class WarehouseUnavailable(duckdb.IOException):
    """The warehouse cannot be opened: locked past the wait, corrupt, or not writable. One line naming the
    file (and the lock holder) and the way out."""


_LOCK = re.compile(r"lock", re.IGNORECASE)
_NOT_WRITABLE = ("permission denied", "read-only file system", "read only file system")


def _holder(msg: str) -> str:
    """``pid N (command line)`` of the process DuckDB names as holding the lock, when it names one."""
    m = re.search(r"PID (\d+)", msg)
    if not m:
        return "another process"
    pid = int(m.group(1))
    try:
        import psutil

        cmd = " ".join(psutil.Process(pid).cmdline())[:120]
    except Exception:  # gone meanwhile, or not ours to inspect
        cmd = ""
    return f"pid {pid}" + (f" ({cmd})" if cmd else "")


def open_warehouse(
    database: str, config: dict[str, Any] | None = None, lock_wait_s: float = LOCK_WAIT_S, poll_s: float = 0.2
) -> duckdb.DuckDBPyConnection:
    """A read-write connection to ``database``. Only a lock held by another process is waited for, up to
    ``lock_wait_s`` in all; then, or at once for any other failure, :class:`WarehouseUnavailable` says in
    one line what is wrong and what to do: who holds the lock, that the file is corrupt (restore it from
    its snapshot or rebuild), or that the place is not writable."""
    deadline = time.monotonic() + lock_wait_s
    path = Path(database)
    while True:
        try:
            return duckdb.connect(database, read_only=False, config=config or {})
        except duckdb.Error as e:
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            low = msg.lower()
            if isinstance(e, duckdb.IOException) and _LOCK.search(msg) and "conflicting" in low:
                if time.monotonic() + poll_s < deadline:
                    time.sleep(poll_s)
                    continue
                raise WarehouseUnavailable(
                    f"the warehouse {path} is locked by {_holder(msg)}; waited {lock_wait_s:g} s. Let it "
                    "finish or stop it (readers such as notebooks should open the snapshot "
                    f"{snapshot_path(path).name} through analysis.warehouse.connect())"
                ) from None
            if any(w in low for w in _NOT_WRITABLE):
                raise WarehouseUnavailable(
                    f"the warehouse {path} cannot be written here ({msg.split(': ', 1)[-1]}); make "
                    f"{path.parent} writable or point VARCAP_HOME / VARCAP_WAREHOUSE elsewhere"
                ) from None
            if not path.parent.is_dir():
                raise WarehouseUnavailable(
                    f"the warehouse {path} cannot be created: its directory {path.parent} does not exist"
                ) from None
            if path.exists():
                snap = snapshot_path(path)
                way = (
                    f"restore it from the snapshot (cp {snap} {path}; chmod u+w {path})"
                    if snap.exists()
                    else "no snapshot exists"
                )
                raise WarehouseUnavailable(
                    f"the warehouse {path} cannot be opened ({_strip(msg)}): the file is damaged or not a "
                    f"DuckDB database; {way}, or move it aside and rebuild it with `varcap run`"
                ) from None
            raise WarehouseUnavailable(f"the warehouse {path} cannot be opened ({_strip(msg)})") from None


def _strip(msg: str) -> str:
    return re.sub(r"^[A-Za-z ]*Error: ", "", msg)


class WarehouseResource(DuckDBResource):
    """The ``duckdb`` resource: :class:`DuckDBResource` whose connections come from
    :func:`open_warehouse` (waits only for a lock, ``lock_wait_s`` in all; every other failure at once,
    in one line) and are closed however the block ends."""

    lock_wait_s: float = LOCK_WAIT_S

    @contextmanager
    def get_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        conn = open_warehouse(
            self.database, {"custom_user_agent": "dagster", **self.connection_config}, self.lock_wait_s
        )
        try:
            yield conn
        finally:
            conn.close()


def warehouse_resource() -> DuckDBResource:
    """DuckDB resource for ``$VARCAP_WAREHOUSE`` (default ``data/warehouse.duckdb``)."""
    path = paths.warehouse_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return WarehouseResource(database=str(path))


def warehouse_run_config() -> dict[str, object]:
    """Run config pointing the ``duckdb`` resource at the current ``$VARCAP_WAREHOUSE`` (for a job of a
    ``Definitions`` whose resources were built earlier, e.g. at import, under another ``VARCAP_HOME``)."""
    return {"duckdb": {"config": {"database": warehouse_resource().database}}}


class ChapterKernelResource(dg.ConfigurableResource):
    """One Jupyter kernel shared by the chapters a run executes in one process
    (:class:`assets.chapter_kernel.ChapterKernel`): started by the first chapter, shut down when the run
    ends. A run whose steps are processes of their own (the UI's multiprocess executor) starts one per
    chapter, as a kernel of its own would."""

    _kernel: ChapterKernel | None = PrivateAttr(default=None)

    def get(self) -> ChapterKernel:
        """The run's kernel (started lazily by its first notebook)."""
        if self._kernel is None:
            self._kernel = ChapterKernel()
        return self._kernel

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._kernel is not None:
            self._kernel.shutdown()
            self._kernel = None


def default_resources() -> dict[str, object]:
    return {
        "duckdb": warehouse_resource(),
        "downloader": DownloaderResource(),
        "chapter_kernel": ChapterKernelResource(),
    }
