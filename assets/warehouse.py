"""DuckDB writes and table checks (no Dagster here).

:func:`replace_table` swaps a core table and its reject rows in one transaction, so readers see either
the old or the new version, never a half-written one. The ``check_*`` functions return plain results the
Dagster asset checks and the tests share.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
import polars as pl

from assets.schema import CORE_REJECTS, TableSchema


def _ensure(conn: duckdb.DuckDBPyConnection, schema: TableSchema) -> None:
    conn.execute(schema.ddl().replace("CREATE OR REPLACE TABLE", "CREATE TABLE IF NOT EXISTS"))


def replace_table(
    conn: duckdb.DuckDBPyConnection,
    schema: TableSchema,
    df: pl.DataFrame,
    rejects: pl.DataFrame | None = None,
) -> int:
    """Atomically replace ``schema.name`` with ``df`` and its ``core_rejects`` rows with ``rejects``.

    ``df`` must have exactly the schema's columns (extra columns are an error). Returns rows written.
    Raises ``ValueError`` on a column mismatch, before touching the database.
    """
    missing = [c for c in schema.column_names if c not in df.columns]
    extra = [c for c in df.columns if c not in schema.column_names]
    if missing or extra:
        raise ValueError(
            f"{schema.name}: frame columns differ from schema (missing {missing}, extra {extra})"
        )
    new = df.select(schema.column_names).to_arrow()  # noqa: F841 - referenced by name in SQL
    rej = (
        rejects
        if rejects is not None
        else pl.DataFrame(schema=dict.fromkeys(CORE_REJECTS.column_names, pl.Utf8))
    )
    rej = rej.select(CORE_REJECTS.column_names).to_arrow()  # noqa: F841
    cols = ", ".join(f'CAST("{c.name}" AS {c.sql_type})' for c in schema.columns)
    _ensure(conn, CORE_REJECTS)
    conn.execute("BEGIN TRANSACTION")
    try:
        conn.execute(schema.ddl())
        conn.execute(f"INSERT INTO {schema.name} SELECT {cols} FROM new")
        conn.execute("DELETE FROM core_rejects WHERE table_name = ?", [schema.name])
        rcols = ", ".join(f'CAST("{c.name}" AS {c.sql_type})' for c in CORE_REJECTS.columns)
        conn.execute(f"INSERT INTO core_rejects SELECT {rcols} FROM rej")
        conn.execute("COMMIT")
    except Exception:
        conn.execute("ROLLBACK")
        raise
    return df.height


def write_tables(
    conn: duckdb.DuckDBPyConnection, tables: list[tuple[TableSchema, pl.DataFrame]]
) -> dict[str, int]:
    """Replace several tables in one transaction (all or nothing). Returns rows written per table."""
    frames = []
    for schema, df in tables:
        missing = [c for c in schema.column_names if c not in df.columns]
        if missing:
            raise ValueError(f"{schema.name}: frame lacks columns {missing}")
        frames.append((schema, df.select(schema.column_names).to_arrow()))
    conn.execute("BEGIN TRANSACTION")
    try:
        for i, (schema, arrow) in enumerate(frames):
            conn.register(f"_new_{i}", arrow)
            cols = ", ".join(f'CAST("{c.name}" AS {c.sql_type})' for c in schema.columns)
            conn.execute(schema.ddl())
            conn.execute(f"INSERT INTO {schema.name} SELECT {cols} FROM _new_{i}")
            conn.unregister(f"_new_{i}")
        conn.execute("COMMIT")
    except Exception:
        conn.execute("ROLLBACK")
        raise
    return {schema.name: df.height for schema, df in tables}


@dataclass
class CheckOutcome:
    passed: bool
    description: str
    metadata: dict[str, object] = field(default_factory=dict)


def check_schema(conn: duckdb.DuckDBPyConnection, schema: TableSchema) -> CheckOutcome:
    """The table exists with exactly the schema's columns and types (in order)."""
    rows = conn.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
        [schema.name],
    ).fetchall()
    want = [(c.name, c.sql_type) for c in schema.columns]
    if not rows:
        return CheckOutcome(False, f"{schema.name} does not exist")
    got = [(n, t) for n, t in rows]
    ok = got == want
    diff = [f"{w} != {g}" for w, g in zip(want, got, strict=False) if w != g]
    if len(got) != len(want):
        diff.append(f"{len(got)} columns, expected {len(want)}")
    return CheckOutcome(ok, "schema matches" if ok else "; ".join(diff[:5]), {"columns": len(got)})


def check_key(conn: duckdb.DuckDBPyConnection, schema: TableSchema) -> CheckOutcome:
    """No null key column and no duplicate key."""
    k = ", ".join(f'"{c}"' for c in schema.key)
    nulls = " OR ".join(f'"{c}" IS NULL' for c in schema.key)
    n_null = conn.execute(f"SELECT count(*) FROM {schema.name} WHERE {nulls}").fetchone()[0]
    dups = conn.execute(
        f"SELECT count(*) FROM (SELECT {k} FROM {schema.name} GROUP BY {k} HAVING count(*) > 1)"
    ).fetchone()[0]
    example = None
    if dups:
        example = conn.execute(
            f"SELECT {k}, count(*) n FROM {schema.name} GROUP BY {k} HAVING count(*) > 1 LIMIT 1"
        ).fetchone()
    ok = n_null == 0 and dups == 0
    return CheckOutcome(
        ok,
        f"key ({', '.join(schema.key)}) unique and non-null"
        if ok
        else f"{n_null} null keys, {dups} duplicated keys (e.g. {example})",
        {"null_keys": n_null, "duplicate_keys": dups},
    )


def check_ranges(conn: duckdb.DuckDBPyConnection, schema: TableSchema) -> CheckOutcome:
    """Every :class:`~assets.schema.Range` rule holds on every row."""
    bad = {
        r.name: conn.execute(f"SELECT count(*) FROM {schema.name} WHERE {r.violation}").fetchone()[0]
        for r in schema.ranges
    }
    ok = not any(bad.values())
    return CheckOutcome(
        ok, "all ranges hold" if ok else f"violations: { {k: v for k, v in bad.items() if v} }", bad
    )


def hourly_gaps(conn: duckdb.DuckDBPyConnection, schema: TableSchema) -> pl.DataFrame:
    """Per hourly series: first/last hour, rows, missing hours inside the span, largest gap (h)."""
    assert schema.hourly_series, schema.name
    g = ", ".join(schema.hourly_series)
    return conn.sql(
        f"""
        WITH s AS (
          SELECT {g}, ts_utc,
                 date_diff('hour', lag(ts_utc) OVER (PARTITION BY {g} ORDER BY ts_utc), ts_utc) AS step_h
          FROM {schema.name})
        SELECT {g}, min(ts_utc) AS first_ts, max(ts_utc) AS last_ts, count(*) AS hours,
               coalesce(sum(greatest(step_h - 1, 0)), 0) AS missing_hours,
               coalesce(max(step_h), 1) AS max_step_h
        FROM s GROUP BY {g} ORDER BY {g}
        """
    ).pl()
