"""Checks generated from a table schema (assets.checks.table_checks) bite on a small DuckDB table."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from assets.checks import table_checks
from assets.schema import Col, Range, TableSchema

T = TableSchema(
    "t_demo",
    "demo table",
    (Col("k", "VARCHAR", "", "key", nullable=False), Col("x_s", "DOUBLE", "s", "value")),
    ("k",),
    (Range("x_nonnegative", "x_s < 0"),),
)


@dg.asset(name="t_demo")
def t_demo() -> None:
    return None


def test_names_plain_and_prefixed() -> None:
    plain = [next(iter(c.check_keys)).name for c in table_checks(T)]
    assert plain == ["schema", "unique_key", "ranges"]
    prefixed = [
        next(iter(c.check_keys)).name for c in table_checks(T, t_demo, prefixed=True, with_schema=False)
    ]
    assert prefixed == ["t_demo_key", "t_demo_ranges"]
    cols = (Col("g", "VARCHAR", "", ""), Col("ts_utc", "TIMESTAMPTZ", "", ""))
    hourly = TableSchema("h", "", cols, ("g", "ts_utc"), hourly_series=("g",))
    assert [next(iter(c.check_keys)).name for c in table_checks(hourly)][-1] == "hourly_gaps"


@pytest.mark.parametrize(
    ("rows", "failing"),
    [
        ("('a', 1.0), ('b', 2.0)", set()),
        ("('a', 1.0), ('a', 2.0)", {"unique_key"}),
        ("('a', -1.0), ('b', 2.0)", {"ranges"}),
    ],
)
def test_checks_pass_and_fail_on_the_table(tmp_path, rows: str, failing: set[str]) -> None:
    db = str(tmp_path / "w.duckdb")
    with duckdb.connect(db) as con:
        con.sql(T.ddl())
        con.sql(f"INSERT INTO t_demo VALUES {rows}")
    res = dg.materialize(
        [t_demo, *table_checks(T, t_demo)],
        resources={"duckdb": DuckDBResource(database=db)},
        raise_on_error=False,
    )
    evals = res.get_asset_check_evaluations()
    assert {e.check_name for e in evals} == {"schema", "unique_key", "ranges"}
    assert {e.check_name for e in evals if not e.passed} == failing


def test_key_check_reuses_a_pass_only_for_the_same_key_values(monkeypatch) -> None:
    """A key check that passed is not grouped again for the same key values (the asset check after the
    writer's own check), and any change to the key values groups again: a duplicate added after a pass
    fails."""
    from assets import warehouse as wh

    monkeypatch.setattr(wh, "_KEY_PASSED", {})
    conn = duckdb.connect()
    conn.execute("CREATE TABLE t_demo (k VARCHAR, x_s DOUBLE)")
    conn.execute("INSERT INTO t_demo SELECT 'k' || i, i FROM range(1000) r(i)")
    grouped: list[str] = []

    class Spy:
        def execute(self, sql: str, *a):  # noqa: ANN202
            if "HAVING" in sql:
                grouped.append(sql)
            return conn.execute(sql, *a)

    assert wh.check_key(Spy(), T).passed and len(grouped) == 1
    assert wh.check_key(Spy(), T).passed and len(grouped) == 1  # the same values: the pass reused
    conn.execute("UPDATE t_demo SET x_s = -1")  # not the key: still reused
    assert wh.check_key(Spy(), T).passed and len(grouped) == 1
    conn.execute("INSERT INTO t_demo VALUES ('k7', 3.0)")
    out = wh.check_key(Spy(), T)
    assert not out.passed and out.metadata["duplicate_keys"] == 1 and len(grouped) >= 2
    conn.execute("DELETE FROM t_demo WHERE k = 'k7' AND x_s = 3.0")
    conn.execute("UPDATE t_demo SET k = NULL WHERE k = 'k8'")  # a null key, same row count
    out = wh.check_key(Spy(), T)
    assert not out.passed and out.metadata["null_keys"] == 1
