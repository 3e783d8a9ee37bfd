"""Reading while writing: the pipeline publishes a read-only snapshot of the warehouse after each write.

DuckDB has one writer per file, and a reader in another process holds a lock that makes the writer wait
and then fail. So analysts never open ``data/warehouse.duckdb`` itself: after every committed write
(:func:`assets.warehouse.replace_table`, :func:`~assets.warehouse.write_tables`) the writing connection
checkpoints and :func:`publish` copies the file to a temporary sibling and renames it over
``data/warehouse.snapshot.duckdb`` (:func:`analysis.warehouse.snapshot_path`). A rename is atomic: a
reader that has the old snapshot open keeps reading it (its open file survives the rename), the next
:func:`analysis.warehouse.connect` gets the new one, and the pipeline never waits for a reader.

Inside :func:`deferred` (an in-process run of the CLI: many writes, one process) the copy is made once,
when the scope ends or when a reader in the process needs it first (:func:`flush`, before a chapter).
The copy is a plain file copy made while this process holds the write lock right after ``CHECKPOINT``
(the write-ahead log is then empty), so it is a consistent DuckDB database. Before it, :func:`comment`
brings the DuckDB table and column comments in line with :mod:`assets.schema` (the data dictionary), so
``duckdb_columns()`` / ``DESCRIBE`` in a notebook show each column's meaning and unit.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb

from analysis.warehouse import snapshot_path
from assets.pids import pid_alive
from assets.schema import ALL_TABLES

log = logging.getLogger(__name__)


def database_file(conn: duckdb.DuckDBPyConnection) -> Path | None:
    """The file behind ``conn``'s current database (None for an in-memory database)."""
    row = conn.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    return Path(row[0]) if row and row[0] else None


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def comment(conn: duckdb.DuckDBPyConnection) -> int:
    """Set the ``COMMENT ON`` text of every schema'd table present and of its columns where it differs
    from :mod:`assets.schema`. Returns the statements issued."""
    have_t = dict(
        conn.execute("SELECT table_name, comment FROM duckdb_tables() WHERE schema_name = 'main'").fetchall()
    )
    have_c = {
        (t, c): cm
        for t, c, cm in conn.execute(
            "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE schema_name = 'main'"
        ).fetchall()
    }
    n = 0
    for name, schema in ALL_TABLES.items():
        if name not in have_t:
            continue
        for col, text in schema.comments().items():
            if col is None and have_t[name] != text:
                conn.execute(f"COMMENT ON TABLE {name} IS {_quote(text)}")
                n += 1
            elif col is not None and (name, col) in have_c and have_c[(name, col)] != text:
                conn.execute(f'COMMENT ON COLUMN {name}."{col}" IS {_quote(text)}')
                n += 1
    return n


def drop_stale_temps(dst: Path) -> list[Path]:
    """Remove the temporary copies ``.<snapshot>.tmp<pid>`` left beside ``dst`` by writers that died
    mid-copy (their pid is gone). Returns the removed paths."""
    out = []
    for p in dst.parent.glob(f".{dst.name}.tmp*"):
        pid = p.name.rpartition(".tmp")[2]
        if pid.isdigit() and not pid_alive(int(pid)):
            p.unlink(missing_ok=True)
            out.append(p)
    return out


def fresh_snapshot(warehouse: Path) -> Path | None:
    """The snapshot of ``warehouse`` if it holds everything committed to it: written after the warehouse
    file and its write-ahead log last changed. None when it is missing or older."""
    snap = snapshot_path(warehouse)
    try:
        t_snap = snap.stat().st_mtime
        t_wh = warehouse.stat().st_mtime
    except OSError:
        return None
    wal = warehouse.with_name(warehouse.name + ".wal")
    t_wal = wal.stat().st_mtime if wal.exists() else 0.0
    return snap if t_snap >= max(t_wh, t_wal) else None


#: Databases written inside :func:`deferred` and not yet published, and how many scopes are open (any
#: thread of the process)
_HELD: set[str] = set()
_DEPTH = [0]
_LOCK = threading.Lock()


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """While open (in any thread of this process), :func:`publish` notes the database it would copy instead
    of copying it; when the outermost scope closes, each noted database is published once, and
    :func:`flush` publishes one before a reader of the snapshot needs it. For a run of many writes in one
    process (``varcap run`` materializes its assets in-process): each publish copies the whole warehouse
    (about 180 MB of the embedded samples' tables), 33 times, 7.0 GB, in a ``varcap run --force`` whose
    scenarios were all cached (strace, 2026-12-04); four pairs of such runs, run one after the other:
    156.5 → 138.2, 153.9 → 152.6, 148.3 → 136.5 and 111.2 → 94.0 CPU s (sys 6.9–9.6 s less each time),
    163 → 124, 161 → 143, 152 → 122 and 112 → 83 s of wall time. A reader in another process meanwhile sees the
    snapshot of before the scope, which :func:`fresh_snapshot` calls stale (such a reader opens the
    warehouse itself, :func:`pipelines.guard.connect_readonly`)."""
    with _LOCK:
        _DEPTH[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH[0] -= 1
            held = sorted(_HELD) if _DEPTH[0] == 0 else []
            _HELD.difference_update(held)
        for path in held:
            _publish_file(Path(path))


def publish(conn: duckdb.DuckDBPyConnection) -> Path | None:
    """Checkpoint ``conn``'s database and atomically replace its read-only snapshot with a copy (inside
    :func:`deferred`: later, once). Returns the snapshot path, or None for an in-memory database. Never
    raises for a failed copy: the write itself has succeeded, so a failure is logged as a warning and the
    previous snapshot stays."""
    src = database_file(conn)
    if src is None:
        return None
    with _LOCK:
        if _DEPTH[0]:
            _HELD.add(str(src))
            return snapshot_path(src)
    return _publish_now(conn, src)


def flush(conn: duckdb.DuckDBPyConnection) -> None:
    """Publish ``conn``'s database now if :func:`deferred` holds its snapshot back (before reading the
    snapshot in this process)."""
    src = database_file(conn)
    if src is None:
        return
    with _LOCK:
        if str(src) not in _HELD:
            return
        _HELD.discard(str(src))
    _publish_now(conn, src)


def _publish_file(path: Path) -> None:
    """:func:`publish` of the database file ``path`` through a connection of its own (a scope's end)."""
    try:
        conn = duckdb.connect(str(path))
    except duckdb.Error as e:
        log.warning("%s: snapshot not published (%s); readers keep the previous one", snapshot_path(path), e)
        return
    try:
        _publish_now(conn, path)
    finally:
        conn.close()


def _publish_now(conn: duckdb.DuckDBPyConnection, src: Path) -> Path | None:
    dst = snapshot_path(src)
    tmp = dst.with_name(f".{dst.name}.tmp{os.getpid()}")
    drop_stale_temps(dst)
    try:
        comment(conn)
        conn.execute("CHECKPOINT")
        shutil.copyfile(src, tmp)
        os.chmod(tmp, 0o444)
        os.replace(tmp, dst)
    except (OSError, duckdb.Error) as e:
        log.warning("%s: snapshot not published (%s); readers keep the previous one", dst, e)
        tmp.unlink(missing_ok=True)
        return None
    return dst
