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
    def names(checks: list[dg.AssetChecksDefinition]) -> set[str]:
        assert len(checks) == 1  # one step per table
        return {k.name for k in checks[0].check_keys}

    assert names(table_checks(T)) == {"schema", "unique_key", "ranges"}
    assert names(table_checks(T, t_demo, prefixed=True, with_schema=False)) == {"t_demo_key", "t_demo_ranges"}
    cols = (Col("g", "VARCHAR", "", ""), Col("ts_utc", "TIMESTAMPTZ", "", ""))
    hourly = TableSchema("h", "", cols, ("g", "ts_utc"), hourly_series=("g",))
    assert "hourly_gaps" in names(table_checks(hourly))


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


K2 = TableSchema(
    "t_k2",
    "two-column key",
    (Col("a", "VARCHAR", "", "a"), Col("b", "INTEGER", "", "b"), Col("x_s", "DOUBLE", "s", "x")),
    ("a", "b"),
    (),
)


@pytest.mark.parametrize(
    ("a", "b", "dtype", "expect"),
    [
        (["p", "p", "q"], [1, 2, 0], "i32", True),
        (["p", "p", "q"], [1, 1, 0], "i32", False),  # a duplicate
        (["q", "p", "p"], [0, 1, 2], "i32", False),  # unique but not in order: grouped as usual
        (["p", "q", "r"], [1, None, 0], "i32", False),  # a null decided by neither column's order
        # any integer type: the insert's CAST to INTEGER keeps each value or fails (out of range)
        (["p", "p", "q"], [1, 2, 0], "i64", True),
        (["p", "p", "q"], [1, 2, 0], "u8", True),
        (["p", "p", "q"], [1.0, 2.0, 0.0], "f64", False),  # the CAST rounds: not the stored values
        (["p"], [None], "i32", False),
        ([], [], "i32", True),
    ],
)
def test_key_order_proves_uniqueness_only_when_it_holds(a, b, dtype, expect) -> None:
    import polars as pl

    from assets.warehouse import key_strictly_increasing

    df = pl.DataFrame(
        {"a": a, "b": b, "x_s": [0.0] * len(a)},
        schema={
            "a": pl.String,
            "b": {"i32": pl.Int32, "i64": pl.Int64, "u8": pl.UInt8, "f64": pl.Float64}[dtype],
            "x_s": pl.Float64,
        },
    )
    assert key_strictly_increasing(df, K2) is expect


def test_write_tables_skips_the_grouping_of_a_frame_in_key_order(monkeypatch) -> None:
    """A frame written in strictly increasing key order passes its key check without grouping; one with a
    duplicate is still refused, the previous table kept."""
    import polars as pl

    from assets import warehouse as wh

    monkeypatch.setattr(wh, "_KEY_PASSED", {})
    monkeypatch.setattr(wh.snapshot, "publish", lambda conn: None)
    conn = duckdb.connect()
    grouped: list[str] = []
    real = wh.check_key

    def spy(c, schema, table=None):  # noqa: ANN001, ANN202
        before = len(wh._KEY_PASSED)
        out = real(c, schema, table)
        grouped.append(schema.name) if len(wh._KEY_PASSED) > before or not out.passed else None
        return out

    monkeypatch.setattr(wh, "check_key", spy)
    ok = pl.DataFrame(
        {"a": ["p", "p", "q"], "b": [1, 2, 0], "x_s": [0.0, 1.0, 2.0]}, schema_overrides={"b": pl.Int32}
    )
    wh.write_tables(conn, [(K2, ok)])
    assert grouped == []  # passed through the order, not the grouping
    dup = ok.with_columns(pl.Series("b", [1, 1, 0], pl.Int32), pl.Series("x_s", [9.0, 9.0, 9.0]))
    with pytest.raises(wh.CheckFailed, match="duplicated"):
        wh.write_tables(conn, [(K2, dup)])
    assert conn.execute("SELECT sum(x_s) FROM t_k2").fetchone()[0] == 3.0
    # an Int64 key for an INTEGER column (as the intervals' machine): the order route too; a value out of
    # the column's range fails the insert, the previous table kept
    wide = ok.with_columns(pl.col("b").cast(pl.Int64), pl.Series("x_s", [5.0, 5.0, 5.0]))
    grouped.clear()  # the duplicate's grouping
    wh.write_tables(conn, [(K2, wide)])
    assert grouped == [] and conn.execute("SELECT sum(x_s) FROM t_k2").fetchone()[0] == 15.0
    big = wide.with_columns(pl.Series("b", [1, 2**40, 0], pl.Int64), pl.Series("x_s", [7.0, 7.0, 7.0]))
    with pytest.raises(duckdb.ConversionException):
        wh.write_tables(conn, [(K2, big)])
    assert conn.execute("SELECT sum(x_s) FROM t_k2").fetchone()[0] == 15.0


def test_a_selected_check_runs_alone(tmp_path) -> None:
    """The checks of a table are one step, but a run that selects one of them (the UI's "execute check")
    evaluates that one only, on the table as it is."""
    db = str(tmp_path / "w.duckdb")
    with duckdb.connect(db) as con:
        con.sql(T.ddl())
        con.sql("INSERT INTO t_demo VALUES ('a', -1.0), ('a', 2.0)")  # a duplicate key and a negative value
    ranges = dg.AssetCheckKey(dg.AssetKey("t_demo"), "ranges")
    res = dg.materialize(
        [t_demo, *table_checks(T, t_demo)],
        selection=dg.AssetSelection.assets(t_demo).without_checks() | dg.AssetSelection.checks(ranges),
        resources={"duckdb": DuckDBResource(database=db)},
        raise_on_error=False,
    )
    assert [(e.check_name, e.passed) for e in res.get_asset_check_evaluations()] == [("ranges", False)]


def test_a_failed_blocking_check_stops_what_depends_on_the_table(tmp_path) -> None:
    """The blocking checks keep their force in the table's one step: a duplicate key stops the assets that
    read the table, and the table's other checks are still evaluated."""

    @dg.asset(deps=["t_demo"])
    def reader() -> None:
        return None

    db = str(tmp_path / "w.duckdb")
    with duckdb.connect(db) as con:
        con.sql(T.ddl())
        con.sql("INSERT INTO t_demo VALUES ('a', 1.0), ('a', 2.0)")
    res = dg.materialize(
        [t_demo, reader, *table_checks(T, t_demo)],
        resources={"duckdb": DuckDBResource(database=db)},
        raise_on_error=False,
    )
    evals = {e.check_name: e.passed for e in res.get_asset_check_evaluations()}
    assert evals == {"schema": True, "unique_key": False, "ranges": True}
    done = {e.event_specific_data.materialization.asset_key for e in res.get_asset_materialization_events()}
    assert dg.AssetKey("t_demo") in done and dg.AssetKey("reader") not in done
