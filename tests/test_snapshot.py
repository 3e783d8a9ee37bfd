"""Reading while writing: a reader in another process holds the published snapshot open while the pipeline
materializes; both succeed. Sessions opened by ``analysis.connect`` are in UTC whatever the machine's zone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource

from analysis.warehouse import connect, snapshot_path
from assets import snapshot
from assets.core import core_assets
from assets.raw import raw_assets
from assets.resources import DownloaderResource

REPO = Path(__file__).resolve().parents[1]
ASSETS = [
    a for a in (*raw_assets, *core_assets) if a.key.path[0] in ("raw_watttime_moer", "core_grid_marginal")
]

READER = textwrap.dedent(
    """
    import sys
    from analysis.warehouse import connect
    con = connect(sys.argv[1])
    n = con.execute("select count(*) from core_grid_marginal").fetchone()[0]
    print("ready", n, flush=True)
    sys.stdin.readline()  # hold the connection open until the writer is done
    print("again", con.execute("select count(*) from core_grid_marginal").fetchone()[0], flush=True)
    """
)


def _materialize(db: Path, cache: Path) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        ASSETS,
        resources={
            "duckdb": DuckDBResource(database=str(db)),
            "downloader": DownloaderResource(cache_dir=str(cache)),
        },
    )


def test_reader_open_during_materialization_both_succeed(tmp_path: Path) -> None:
    db = tmp_path / "warehouse.duckdb"
    assert _materialize(db, tmp_path / "raw").success
    snap = snapshot_path(db)
    assert snap.is_file() and snap.stat().st_mode & 0o222 == 0  # read-only file
    first_inode = snap.stat().st_ino
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(db)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = reader.stdout.readline().split()
        assert line[0] == "ready" and int(line[1]) > 0, line
        rows = int(line[1])
        # the pipeline writes while the notebook's connection is open: no lock conflict, no wait
        assert _materialize(db, tmp_path / "raw").success
        with duckdb.connect(str(db)) as w:  # the writer's file itself is free
            w.execute("create table scratch as select 1 as x")
        out, _ = reader.communicate("\n", timeout=60)
    finally:
        reader.kill()
    assert reader.returncode == 0
    assert out.split() == ["again", str(rows)]  # the reader kept a consistent view
    assert snap.stat().st_ino != first_inode  # a new snapshot was swapped in
    con = connect(db)
    assert con.execute("select count(*) from core_grid_marginal").fetchone()[0] == rows
    con.close()


def test_publish_skips_memory_and_keeps_previous_snapshot_on_failure(tmp_path: Path, monkeypatch) -> None:
    assert snapshot.publish(duckdb.connect()) is None
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute("create table t as select 1 as x")
    snap = snapshot.publish(con)
    assert snap == snapshot_path(db) and snap.is_file()
    con.execute("insert into t values (2)")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(snapshot.shutil, "copyfile", boom)
    assert snapshot.publish(con) is None  # logged, not raised: the write itself succeeded
    con.close()
    assert not list(tmp_path.glob(".*tmp*"))
    with duckdb.connect(str(snap), read_only=True) as r:
        assert r.execute("select count(*) from t").fetchone()[0] == 1


def test_connect_is_utc_in_any_machine_time_zone(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create table t as select TIMESTAMPTZ '2024-04-01 03:00:00+00' as ts_utc")
        snapshot.publish(con)
    code = textwrap.dedent(
        f"""
        import duckdb
        from analysis.warehouse import connect
        plain = duckdb.connect()
        print(plain.execute("select current_setting('TimeZone')").fetchone()[0])
        con = connect({str(db)!r})
        print(con.execute("select current_setting('TimeZone')").fetchone()[0])
        print(con.execute("select day(ts_utc), hour(date_trunc('day', ts_utc)) from t").fetchone())
        """
    )
    env = {**os.environ, "TZ": "America/Los_Angeles"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "America/Los_Angeles"  # the machine's zone leaks into plain sessions ...
    assert out[1] == "UTC" and out[2] == "(1, 0)"  # ... but not into connect()'s


def test_deferred_publishes_once_at_the_end_and_a_flush_before_a_reader(tmp_path: Path, monkeypatch) -> None:
    """Inside ``snapshot.deferred()`` writes note the warehouse instead of copying it; ``flush`` publishes
    it for a reader in the scope, and the scope's end publishes what was written after; nested scopes
    publish at the outermost end. Outside a scope every publish copies, as before."""
    import shutil

    copies: list[str] = []
    real = shutil.copyfile
    monkeypatch.setattr(snapshot.shutil, "copyfile", lambda a, b: (copies.append(str(a)), real(a, b))[1])
    db = tmp_path / "warehouse.duckdb"

    def write(value: int) -> None:
        with duckdb.connect(str(db)) as con:
            con.execute("CREATE OR REPLACE TABLE t AS SELECT ? AS v", [value])
            snapshot.publish(con)

    def seen() -> int:
        with connect(db) as con:
            return con.execute("SELECT v FROM t").fetchone()[0]

    write(1)
    assert len(copies) == 1 and seen() == 1
    with snapshot.deferred():
        write(2)
        with snapshot.deferred():
            write(3)
        assert len(copies) == 1 and seen() == 1  # held back: the inner scope is not the outermost
        assert snapshot.fresh_snapshot(db) is None  # and a reader can tell it is stale
        with duckdb.connect(str(db)) as con:
            snapshot.flush(con)
            snapshot.flush(con)  # nothing held any more
        assert len(copies) == 2 and seen() == 3
        write(4)
        assert len(copies) == 2
    assert len(copies) == 3 and seen() == 4  # once, at the end
    with snapshot.deferred():
        pass
    assert len(copies) == 3  # nothing written: nothing copied
