"""Shared by the commands: the Dagster instance's home, in-process materializations guarded against dead
runs' pool slots, and small argument parsers."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from sim import paths


def prepare_dagster_home() -> str:
    """Create ``$DAGSTER_HOME`` (default ``.dagster_home``) holding a copy of the repo's dagster.yaml."""
    home = paths.dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    src = paths.home() / "dagster.yaml"
    if not src.exists():  # VARCAP_HOME elsewhere: the repository's instance settings still apply
        src = Path(__file__).resolve().parents[2] / "dagster.yaml"
    if src.exists():
        shutil.copyfile(src, home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return str(home)


class _LineStream:
    """What a tqdm bar writes to when stderr is not a terminal: each refresh (``\\r`` + status, padded)
    becomes one line, so a log holds one line per refresh instead of one line of thousands of characters."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def write(self, s: str) -> int:
        line = s.replace("\r", "").strip()
        if line:
            self.stream.write(line + "\n")
            self.stream.flush()
        return len(s)

    def flush(self) -> None:
        self.stream.flush()


#: seconds between two progress lines off a terminal
LINE_PROGRESS_INTERVAL_S = 10.0


def line_progress(stream=None) -> type | None:
    """When ``stream`` (default stderr) is not a terminal, make every tqdm bar created from now on (``from
    tqdm import tqdm`` at call time, as the commands do) print one plain line per refresh, at most every
    :data:`LINE_PROGRESS_INTERVAL_S` seconds. Returns the tqdm class it replaced (hand it to
    :func:`restore_progress`), or None where nothing changed (a terminal keeps the live bar)."""
    import tqdm as tqdm_pkg

    stream = stream or sys.stderr
    if stream.isatty() or getattr(tqdm_pkg.tqdm, "_varcap_lines", False):
        return None
    base = tqdm_pkg.tqdm

    class LineTqdm(base):  # type: ignore[misc, valid-type]
        _varcap_lines = True

        def __init__(self, *args, **kwargs) -> None:
            kwargs.setdefault("file", _LineStream(stream))
            kwargs.setdefault("mininterval", LINE_PROGRESS_INTERVAL_S)
            kwargs.setdefault("ncols", 100)
            super().__init__(*args, **kwargs)

    tqdm_pkg.tqdm = LineTqdm
    return base


#: seconds of silence after which a long command off a terminal prints a line (:func:`heartbeat`): a line
#: at least every 30 s, with a second for a busy machine to schedule the heartbeat's thread
HEARTBEAT_S = 29.0


def _now() -> float:
    """The heartbeat's clock (monotonic seconds; a test replaces it)."""
    import time

    return time.monotonic()


#: the phases the command is in (:func:`doing`), innermost last: (what, since when)
_PHASES: list[tuple[str, float]] = []


@contextlib.contextmanager
def doing(what: str) -> Iterator[None]:
    """Name the phase the command is in for the block: :func:`heartbeat`'s lines say it and how long it has
    lasted (nested phases: the innermost)."""
    entry = (what, _now())
    _PHASES.append(entry)
    try:
        yield
    finally:
        for i in range(len(_PHASES) - 1, -1, -1):  # by identity: another thread may have a phase open too
            if _PHASES[i] is entry:
                del _PHASES[i]
                break


@contextlib.contextmanager
def status(console, what: str) -> Iterator[None]:
    """``console.status(what)`` (a spinner) on a terminal; off one (where a spinner shows nothing) the line
    ``what`` once. Either way :func:`doing` ``what`` for the heartbeat lines."""
    with doing(what.rstrip(" …")):
        if console.is_terminal:
            with console.status(what):
                yield
        else:
            console.print(what, markup=False, highlight=False)
            yield


def heartbeat_line(label: str, t0: float, now: float) -> str:
    """``varcap <label>: still running (<elapsed> s[; <phase> for <s> s])``: the command's elapsed time since
    ``t0`` and, in a :func:`doing` phase, what it is doing and for how long."""
    line = f"varcap {label}: still running ({now - t0:.0f} s"
    if _PHASES:
        what, since = _PHASES[-1]
        line += f"; {what} for {now - since:.0f} s"
    return line + ")\n"


class _Watched:
    """A text stream that notes when it was last written to (:func:`heartbeat`)."""

    def __init__(self, stream, stamp: list[float]) -> None:
        self._stream = stream
        self._stamp = stamp

    def write(self, s: str) -> int:
        if s:
            self._stamp[0] = _now()
        return self._stream.write(s)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class _Beat:
    """The heartbeat's clockwork: :meth:`tick` writes :func:`heartbeat_line` to ``out`` when nothing was
    written for ``every_s`` seconds (``stamp[0]``: the last write)."""

    def __init__(self, label: str, every_s: float, out, stamp: list[float], t0: float) -> None:
        self.label, self.every_s, self.out, self.stamp, self.t0 = label, every_s, out, stamp, t0

    def tick(self, now: float) -> bool:
        """Write a line if the command has been silent for ``every_s`` at ``now``; whether it did."""
        if now - self.stamp[0] < self.every_s:
            return False
        self.out.write(heartbeat_line(self.label, self.t0, now))
        self.out.flush()
        self.stamp[0] = now
        return True


def heartbeat(label: str, every_s: float = HEARTBEAT_S, stream=None):
    """When ``stream`` (default stderr) is not a terminal, print :func:`heartbeat_line` (elapsed time, and
    the :func:`doing` phase) whenever this process has written nothing to stdout or stderr for ``every_s``
    seconds (a long phase that prints nothing leaves a log silent otherwise); returns a function that stops
    it and restores the streams (a no-op on a terminal)."""
    import threading

    stream = stream or sys.stderr
    if stream.isatty():
        return lambda: None
    t0 = _now()
    stamp = [t0]
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Watched(sys.stdout, stamp), _Watched(sys.stderr, stamp)
    out = sys.stderr if stream is saved[1] else _Watched(stream, stamp)
    beat = _Beat(label, every_s, out, stamp, t0)
    done = threading.Event()

    def run() -> None:
        # wake when the silence would reach every_s (output in between moves that time on)
        while not done.wait(max(0.0, stamp[0] + every_s - _now()) + 0.01):
            beat.tick(_now())

    threading.Thread(target=run, name="varcap-heartbeat", daemon=True).start()

    def stop() -> None:
        done.set()
        sys.stdout, sys.stderr = saved

    return stop


def restore_progress(previous: type | None) -> None:
    """Undo :func:`line_progress` (``previous``: what it returned)."""
    if previous is not None:
        import tqdm as tqdm_pkg

        tqdm_pkg.tqdm = previous


def _parse_sets(items: Sequence[str] | None) -> dict[str, str]:
    out = {}
    for it in items or []:
        if "=" not in it:
            raise SystemExit(f"--set expects key=value, got {it!r}")
        k, v = it.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def reuse_event_log_engines(instance) -> bool:
    """Make ``instance``'s SQLite event log (the default storage of a ``DAGSTER_HOME``) keep one SQLAlchemy
    engine and one open connection per database file for the life of this process instead of creating and
    disposing an engine for every statement: each event of a run (a partition's materialization among
    them) then costs a transaction, not an engine with its own empty compiled-statement cache and a
    connection that reads the schema again. The storage's own lock (a plain lock: no storage call opens a
    second connection while it holds one) is held for as long as the connection is in use, so the threads
    of the process take turns on it (``StaticPool``, ``check_same_thread=False``); between transactions it
    holds no SQLite lock, so other processes write as before. The rows written are the storage's own.
    Per materialization event on an empty instance, 500 events, three interleaved rounds: 11.0–13.9 CPU ms
    with Dagster's engine per statement, 6.7–7.0 with the engine kept and a connection per statement,
    2.6–3.4 with the connection kept (measured 2026-12-03). Returns whether it applied (False for another
    storage, or a Dagster whose SQLite storage lacks the methods this relies on: then nothing changes)."""
    from dagster._core.storage.event_log import SqliteEventLogStorage

    storage = instance.event_log_storage
    needed = ("_connect", "_db_lock", "_initdb", "_initialized_dbs", "conn_string_for_shard")
    if type(storage) is not SqliteEventLogStorage or not all(hasattr(storage, n) for n in needed):
        return False
    if getattr(storage, "_varcap_engines", None) is not None:
        return True
    import sqlalchemy as sa
    from dagster._core.storage.event_log.sqlite import sqlite_event_log as sel

    engines: dict[str, object] = {}
    timeout = getattr(sel, "SQLITE_BUSY_TIMEOUT_SECONDS", 30)

    @contextlib.contextmanager
    def _connect(shard: str) -> Iterator[object]:
        with storage._db_lock:
            engine = engines.get(shard)
            new = engine is None
            if new:
                engine = sa.create_engine(
                    storage.conn_string_for_shard(shard),
                    poolclass=sa.pool.StaticPool,
                    connect_args={"timeout": timeout, "check_same_thread": False},
                )
                engines[shard] = engine
            if shard not in storage._initialized_dbs:
                storage._initdb(engine)
                storage._initialized_dbs.add(shard)
            if new:  # after _initdb: it puts a new file in WAL mode
                _wal_normal_sync(engine)
            with engine.connect() as conn, conn.begin():
                yield conn

    storage._connect = _connect
    storage._varcap_engines = engines
    return True


def _wal_normal_sync(engine) -> None:
    """On ``engine``'s one kept connection (a ``StaticPool``): SQLite's ``synchronous=NORMAL`` if the file
    is in WAL mode, as Dagster makes its event log files: a commit then writes the log without waiting for
    the disk, which it syncs at checkpoints. SQLite's documented guarantee for that pair: the database stays
    consistent, and a transaction committed just before a power loss or an operating-system crash may roll
    back (one that a crashed process committed stays); the events of such a run would be recorded again by
    the next (each scenario's own files are the record). A file in another journal mode keeps SQLite's
    default. 500 materialization events into an empty instance, four rounds of each, 2026-12-04: 2.55–3.04 →
    1.47–1.97 CPU s, 4.0–5.7 → 1.6–2.2 s of wall time."""
    raw = engine.raw_connection()
    try:
        cur = raw.cursor()
        if str(cur.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
            cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()
    finally:
        raw.close()


@contextlib.contextmanager
def _guarded_run(console) -> Iterator[tuple[object, dict[str, str]]]:
    """Around one in-process Dagster run: frees the pool slots of dead runs first, watches for a step
    waiting on a slot meanwhile, publishes the warehouse's snapshot once at the end
    (:func:`assets.snapshot.deferred`); yields (instance, tags for the run)."""
    import dagster as dg

    from pipelines import guard

    instance = dg.DagsterInstance.get()
    reuse_event_log_engines(instance)
    for line in guard.dead_run_notices(instance):
        console.print(line, style="yellow", soft_wrap=True)
    with watched_run(instance, console):
        yield instance, guard.run_tags()


@contextlib.contextmanager
def watched_run(instance, console) -> Iterator[None]:
    """While an in-process run of ``instance`` executes: a step waiting on a pool slot is reported
    (:class:`pipelines.guard.SlotWatcher`) and the warehouse's snapshot is published once, at the end
    (:func:`assets.snapshot.deferred`), not once per write."""
    from assets import snapshot
    from pipelines import guard

    watcher = guard.SlotWatcher(instance, lambda m: console.print(m, style="yellow", markup=False))
    watcher.start()
    try:
        with snapshot.deferred():
            yield
    finally:
        watcher.stop()


#: the simulator's warning that a workload outlasts the run (:func:`sim.validate.check_jobs`, raised from
#: :func:`sim.api.simulate`): a study that means it (a week's horizon over a longer trace) records it as a
#: log line (:func:`log_horizon_drops`), not a warning printed in the middle of the command's output
HORIZON_DROP_MESSAGE = "jobs submitted at or after the horizon"
#: the ``-W`` option that keeps that warning out of the simulation workers' output (spawned processes get
#: the interpreter's warning options; the warning is the only one :mod:`sim.api` is named for)
HORIZON_DROP_OPTION = "ignore::UserWarning:sim.api"


def log_horizon_drops() -> None:
    """From now on, in this process the simulator's "N jobs submitted at or after the horizon … were
    dropped" warning becomes an INFO line of logger ``sim.validate`` (other warnings show as before); in
    the simulation workers it starts (spawned: they get :data:`HORIZON_DROP_OPTION`) it is not printed
    (the run's result counts its jobs, ``metrics["jobs"]``). Idempotent."""
    import logging
    import warnings

    if HORIZON_DROP_OPTION not in sys.warnoptions:
        sys.warnoptions.append(HORIZON_DROP_OPTION)
    previous = warnings.showwarning
    if getattr(previous, "_varcap_horizon", False):
        return

    def show(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
        if issubclass(category, UserWarning) and HORIZON_DROP_MESSAGE in str(message):
            logging.getLogger("sim.validate").info("%s", message)
            return
        previous(message, category, filename, lineno, file, line)

    show._varcap_horizon = True  # type: ignore[attr-defined]
    warnings.showwarning = show


#: ``--debug`` (set by :func:`pipelines.cli.main`; also ``VARCAP_DEBUG=1``)
DEBUG = False


def dagster_loggers() -> dict:
    """Run config for Dagster's console log: its step tracebacks only with ``--debug``; otherwise the CLI
    prints each warning and failure as one line (:func:`_print_failures`, ``guard.warning_lines``)."""
    debug = DEBUG or os.environ.get("VARCAP_DEBUG") == "1"
    return {"console": {"config": {"log_level": "WARNING" if debug else "CRITICAL"}}}


def _print_failures(events, console) -> None:
    from pipelines import guard

    for line in guard.failure_lines(events):
        console.print(line, style="red", markup=False, highlight=False)


def _materialize(
    keys: list,
    console,
    ops_config: dict | None = None,
    partition_key: str | None = None,
    defs: list | None = None,
) -> bool:
    """Materialize ``keys`` (with their checks) in-process, ``ops_config`` as the run's op config, the
    partitioned ones at ``partition_key`` (a reproduction profile); print failures. True on success.
    ``defs``: the asset and check definitions to materialize them from (default every one of
    :mod:`pipelines.definitions`; the assets of ``keys`` and their checks suffice)."""
    import dagster as dg

    from assets.sim import run_resources

    if defs is None:
        from pipelines.definitions import ALL_ASSETS, ALL_CHECKS

        defs = [*ALL_ASSETS, *ALL_CHECKS]
    names = [str(k) for k in keys]
    what = ", ".join(names[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")
    with _guarded_run(console) as (instance, tags), doing(f"materializing {what}"):
        result = dg.materialize(
            defs,
            selection=[dg.AssetKey(k) for k in keys],
            instance=instance,
            resources=run_resources(),  # built now: honours the current VARCAP_HOME / VARCAP_WAREHOUSE
            tags=tags,
            partition_key=partition_key,
            run_config={"loggers": dagster_loggers(), **({"ops": ops_config} if ops_config else {})},
            raise_on_error=False,
        )
        from pipelines import guard

        for line in guard.warning_lines(instance, result.run_id):
            console.print(line, style="yellow", markup=False, highlight=False)
    _print_failures(result.all_events, console)
    return result.success


def materialized_profile() -> str:
    """The reproduction profile whose study partitions are all materialized in this Dagster instance:
    ``full`` after ``varcap reproduce``, else ``quick`` (what ``varcap run`` materializes)."""
    import dagster as dg

    from assets.sim import study_asset_name, study_partition_keys
    from studies import reproduction as repro

    instance = dg.DagsterInstance.get()
    for name in repro.profile_studies(repro.FULL):
        have = instance.get_materialized_partitions(dg.AssetKey(study_asset_name(name)))
        if not set(study_partition_keys(name)) <= have:
            return repro.QUICK.name
    return repro.FULL.name


def _ensure_sim_inputs(console) -> bool:
    """Materialize raw → core if the warehouse has no core tables, then the exported inputs
    (``out_sim_inputs``, ``out_sim_grid_signals``)."""
    import dagster as dg

    if not _has_tables(["core_jobs", "core_grid_carbon"]):
        console.print("warehouse has no core tables: materializing raw → core first (embedded samples)")
        from pipelines.definitions import defs

        keys = dg.AssetSelection.groups("raw", "core").resolve(defs.resolve_asset_graph())
        if not _materialize([k.to_user_string() for k in keys], console):
            return False
    elif not _has_tables(["core_swf_jobs"]) and not _materialize(  # a warehouse from before the SWF log
        ["raw_swf_log", "core_swf_jobs", "core_swf_rejects"], console
    ):
        return False
    from assets.sim import SIM_INPUT_ASSETS, out_sim_inputs

    return _materialize(list(SIM_INPUT_ASSETS), console, defs=[out_sim_inputs])


def _has_tables(names: list[str]) -> bool:
    import duckdb

    p = paths.warehouse_path()
    if not p.exists():
        return False
    with duckdb.connect(str(p), read_only=True) as con:
        have = {r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()}
    return set(names) <= have
