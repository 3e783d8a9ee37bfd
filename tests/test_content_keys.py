"""Content keys (assets/content_keys.py): equal inputs give equal keys, any changed row or file a new one."""

from __future__ import annotations

from pathlib import Path

import duckdb

from assets import content_keys as ck


def test_table_fingerprints_follow_the_rows_not_their_order_nor_when_they_were_written() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE out_reproduction (headline_id VARCHAR, value DOUBLE, computed_at_utc VARCHAR)")
    con.execute("INSERT INTO out_reproduction VALUES ('a', 1.0, 't0'), ('b', 2.0, 't0')")
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES (1, 'x'), (2, 'y')) v(i, s)")
    first = ck.tables_fingerprint(con)
    assert set(first) == {"out_reproduction", "t"}
    con.execute("UPDATE out_reproduction SET computed_at_utc = 't1'")  # rebuilt later with the same rows
    con.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM (VALUES (2, 'y'), (1, 'x')) v(i, s)")
    assert ck.tables_fingerprint(con) == first
    con.execute("UPDATE out_reproduction SET value = 1.5 WHERE headline_id = 'a'")
    assert ck.tables_fingerprint(con)["out_reproduction"] != first["out_reproduction"]
    con.execute("INSERT INTO t VALUES (1, 'x')")  # a repeated row counts
    assert ck.tables_fingerprint(con)["t"] != first["t"]
    assert ck.tables_fingerprint(con, ["t", "missing"]).keys() == {"t"}


def test_database_fingerprint_is_read_again_when_the_file_changes(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    assert ck.database_fingerprint(db) == {}
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS i")
    first = ck.database_fingerprint(db)
    assert ck.database_fingerprint(db) == first
    with duckdb.connect(str(db)) as con:
        con.execute("INSERT INTO t VALUES (2)")
    assert ck.database_fingerprint(db) != first


def test_code_fingerprint_covers_sources_notebooks_and_study_files(tmp_path: Path) -> None:
    for rel in ("assets/a.py", "notebooks/n.ipynb", "studies/files/s.toml", "sim/__pycache__/a.pyc"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("1")
    first = ck.code_fingerprint(tmp_path)
    ck.code_fingerprint.cache_clear()
    (tmp_path / "sim/__pycache__/a.pyc").write_text("2")  # compiled files do not count
    assert ck.code_fingerprint(tmp_path) == first
    for rel in ("assets/a.py", "notebooks/n.ipynb", "studies/files/s.toml"):
        ck.code_fingerprint.cache_clear()
        (tmp_path / rel).write_text("2")
        assert ck.code_fingerprint(tmp_path) != first, rel
        (tmp_path / rel).write_text("1")
    ck.code_fingerprint.cache_clear()
    assert ck.code_fingerprint(tmp_path) == first
    assert ck.digest("a", {"x": 1, "y": 2}) == ck.digest("a", {"y": 2, "x": 1}) != ck.digest("a", {"x": 2})
