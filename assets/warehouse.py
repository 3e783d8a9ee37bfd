"""DuckDB writes and table checks (no Dagster here).

:func:`replace_table` builds a core table in a staging table, runs the blocking checks there and only
then swaps it and its reject rows in, in one transaction: readers see either the old or the new version,
never a half-written or unchecked one, and a failing check leaves the old table exactly as it was. The ``check_*`` functions return plain results the
Dagster asset checks and the tests share.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import duckdb
import polars as pl

from assets import snapshot
from assets.schema import CORE_BUILDS, CORE_REJECTS, CORE_TABLES, Range, TableSchema


def rollback(conn: duckdb.DuckDBPyConnection) -> None:
    """Roll back the open transaction; a failure of the rollback itself (DuckDB has already aborted the
    transaction after, say, a full disk: "cannot rollback - no transaction is active") is dropped so the
    error that caused it is the one reported."""
    with contextlib.suppress(duckdb.Error):
        conn.execute("ROLLBACK")


def _ensure(conn: duckdb.DuckDBPyConnection, schema: TableSchema) -> None:
    conn.execute(schema.ddl().replace("CREATE OR REPLACE TABLE", "CREATE TABLE IF NOT EXISTS"))


class CheckFailed(RuntimeError):
    """A blocking check failed on the staged rows; the previous table was kept. The message says which."""


#: A cross-table consistency check run on the staging table: ``(conn, staging_table) -> outcome``.
Consistency = Callable[[duckdb.DuckDBPyConnection, str], "CheckOutcome"]


def create_aliases(conn: duckdb.DuckDBPyConnection, schema: TableSchema) -> None:
    """(Re)create each former name of ``schema``'s table (``schema.aliases``) as a view over it, so queries
    written before a rename keep working. A base table left under a former name by an older version is
    dropped first: it held an earlier build of the same data, which the new table replaces. Call inside the
    transaction that writes the table."""
    for alias in schema.aliases:
        kind = conn.execute(
            "SELECT table_type FROM information_schema.tables WHERE table_schema = 'main' AND table_name = ?",
            [alias],
        ).fetchall()
        if kind and kind[0][0] == "BASE TABLE":
            conn.execute(f"DROP TABLE {alias}")
        conn.execute(f"CREATE OR REPLACE VIEW {alias} AS SELECT * FROM {schema.name}")


def staging_name(schema: TableSchema) -> str:
    return f"{schema.name}__staging"


def blocking_checks(
    conn: duckdb.DuckDBPyConnection,
    schema: TableSchema,
    table: str,
    consistency: Sequence[tuple[str, Consistency]] = (),
) -> list[tuple[str, CheckOutcome]]:
    """Schema, key, ranges (incl. finiteness of every DOUBLE column) and ``consistency`` on ``table``."""
    out = [
        ("schema", check_schema(conn, schema, table)),
        ("unique_key", check_key(conn, schema, table)),
        ("ranges", check_ranges(conn, schema, table)),
    ]
    out += [(name, fn(conn, table)) for name, fn in consistency]
    return out


def same_input(schema: TableSchema, df: pl.DataFrame, datasets: Sequence[str]) -> tuple[str, Consistency]:
    """Cross-table check: ``df``, the rows of ``schema``'s table built from the same raw ``datasets`` as the
    table being staged, passes ``schema``'s blocking checks too (staged beside it, then dropped). So a
    file one table refuses cannot feed another (``core_grid_carbon`` and ``core_grid_fuel_mix`` share
    the EIA-930 files)."""

    def _check(conn: duckdb.DuckDBPyConnection, table: str) -> CheckOutcome:
        what = f"{schema.name}, built from the same {list(datasets)} files,"
        if df.height == 0:
            return CheckOutcome(True, f"{what} has no rows")
        sibling_rows = df.select(schema.column_names).to_arrow()  # noqa: F841 - referenced in SQL
        name = f"{schema.name}__same_input"
        cols = ", ".join(f'CAST("{c.name}" AS {c.sql_type})' for c in schema.columns)
        conn.execute(schema.ddl().replace(f"TABLE {schema.name} (", f"TABLE {name} (", 1))
        try:
            conn.execute(f"INSERT INTO {name} SELECT {cols} FROM sibling_rows")
        except duckdb.Error as e:  # the transaction is aborted: fail the build here (it rolls back)
            raise CheckFailed(
                f"{table.removesuffix('__staging')}: {what} does not fit its schema "
                f"({str(e).splitlines()[0]}); previous table kept"
            ) from e
        failed = [
            f"{n} failed: {o.description}" for n, o in blocking_checks(conn, schema, name) if not o.passed
        ]
        conn.execute(f"DROP TABLE {name}")
        return CheckOutcome(
            not failed,
            f"{what} passes its blocking checks"
            if not failed
            else f"{what} fails its blocking checks ({'; '.join(failed)}), so this table refuses them too",
        )

    return (f"same_input_as_{schema.name}", _check)


def replace_table(
    conn: duckdb.DuckDBPyConnection,
    schema: TableSchema,
    df: pl.DataFrame,
    rejects: pl.DataFrame | None = None,
    consistency: Sequence[tuple[str, Consistency]] = (),
    built_from: Sequence[str] = (),
    also: Sequence[tuple[TableSchema, pl.DataFrame]] = (),
) -> int:
    """Validate ``df`` in a staging table, then atomically swap it in as ``schema.name`` together with
    its ``core_rejects`` rows and, when ``built_from`` names raw datasets, its ``core_builds`` rows (the
    ``raw_files`` of those datasets as they are now). ``also``: companion tables written from the same
    input (e.g. a rejects table with more columns), staged and checked the same way and swapped in the
    same transaction.

    In one transaction: the rows go into ``<name>__staging``; the blocking checks of
    :func:`blocking_checks` run there; only if all pass is the staging table renamed over the old one and
    the rejects replaced. Otherwise the transaction rolls back (the previous table and rejects stay exactly
    as they were) and :class:`CheckFailed` names the check, the rule and an offending row (file, line).
    ``df`` must have exactly the schema's columns: ``ValueError`` before touching the database otherwise.
    Returns rows written.
    """
    missing = [c for c in schema.column_names if c not in df.columns]
    extra = [c for c in df.columns if c not in schema.column_names]
    if missing or extra:
        raise ValueError(
            f"{schema.name}: frame columns differ from schema (missing {missing}, extra {extra})"
        )
    new = df.select(schema.column_names).to_arrow()
    rej = (
        rejects
        if rejects is not None
        else pl.DataFrame(schema=dict.fromkeys(CORE_REJECTS.column_names, pl.Utf8))
    )
    rej = rej.select(CORE_REJECTS.column_names).to_arrow()  # noqa: F841
    _ensure(conn, CORE_REJECTS)
    staged = [(schema, new, consistency), *((s, f.select(s.column_names).to_arrow(), ()) for s, f in also)]
    conn.execute("BEGIN TRANSACTION")
    try:
        for i, (sch, arrow, cons) in enumerate(staged):
            st = staging_name(sch)
            conn.register(f"_stage_{i}", arrow)
            conn.execute(sch.ddl().replace(f"TABLE {sch.name} (", f"TABLE {st} (", 1))
            scols = ", ".join(f'CAST("{c.name}" AS {c.sql_type})' for c in sch.columns)
            try:
                conn.execute(f"INSERT INTO {st} SELECT {scols} FROM _stage_{i}")
            except duckdb.Error as e:
                raise CheckFailed(
                    f"{sch.name}: the new rows do not fit the schema ({type(e).__name__}: "
                    f"{str(e).splitlines()[0]}); previous table kept"
                ) from e
            finally:
                conn.unregister(f"_stage_{i}")
            failed = [(n, o) for n, o in blocking_checks(conn, sch, st, cons) if not o.passed]
            if failed:
                raise CheckFailed(
                    f"{sch.name}: blocking check "
                    + "; ".join(f"{n} failed: {o.description}" for n, o in failed)
                    + " — previous table kept"
                )
        for sch, _, _ in staged:
            conn.execute(f"DROP TABLE IF EXISTS {sch.name}")
            conn.execute(f"ALTER TABLE {staging_name(sch)} RENAME TO {sch.name}")
            create_aliases(conn, sch)
        conn.execute("DELETE FROM core_rejects WHERE table_name = ?", [schema.name])
        rcols = ", ".join(f'CAST("{c.name}" AS {c.sql_type})' for c in CORE_REJECTS.columns)
        conn.execute(f"INSERT INTO core_rejects SELECT {rcols} FROM rej")
        if built_from:
            _ensure(conn, CORE_BUILDS)
            conn.execute("DELETE FROM core_builds WHERE table_name = ?", [schema.name])
            conn.execute(
                "INSERT INTO core_builds SELECT ?, dataset, name, sha256, now() FROM raw_files "
                f"WHERE dataset IN ({', '.join('?' for _ in built_from)})",
                [schema.name, *built_from],
            )
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    snapshot.publish(conn)  # readers (analysis.connect) see the new table; never blocks on them
    return df.height


def other_profile_rows(conn: duckdb.DuckDBPyConnection, table: str, profile: str) -> pl.DataFrame | None:
    """The rows of a profile-partitioned ``table`` that profiles other than ``profile`` wrote (its asset
    replaces its own profile's rows only), or None when the table does not exist yet."""
    exists = conn.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]
    ).fetchall()[0][0]  # fetchall: DuckDB refuses the next query while a result is unfinished
    if not exists:
        return None
    return conn.sql(f"SELECT * FROM {table} WHERE profile <> ?", params=[profile]).pl()


def replace_profile_rows(
    conn: duckdb.DuckDBPyConnection, schema: TableSchema, df: pl.DataFrame, profile: str
) -> None:
    """Replace ``schema``'s table with ``df`` (profile ``profile``'s rows) and the rows other profiles wrote
    before, kept when their columns are ``df``'s (a table written before a column changed loses them)."""
    other = other_profile_rows(conn, schema.name, profile)
    if other is not None and set(other.columns) == set(df.columns):
        df = pl.concat([df, other.select(df.columns).cast(df.schema)])  # type: ignore[arg-type]
    replace_table(conn, schema, df)


def write_tables(
    conn: duckdb.DuckDBPyConnection, tables: list[tuple[TableSchema, pl.DataFrame]]
) -> dict[str, int]:
    """Replace several tables in one transaction (all or nothing), with their former names as views
    (:func:`create_aliases`). Before the commit every table passes its key and range checks
    (:func:`check_key`, :func:`check_ranges`); otherwise the transaction rolls back, the previous tables
    stay, and :class:`CheckFailed` names the table, the rule and a row. Returns rows written per table."""
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
        # after every insert: a check leaves a query result open, which a later register() refuses
        for schema, df in tables:
            key = (
                _sorted_key_pass(conn, schema)
                if key_strictly_increasing(df, schema)
                else check_key(conn, schema)
            )
            failed = [o for o in (key, check_ranges(conn, schema)) if not o.passed]
            if failed:
                raise CheckFailed(
                    f"{schema.name}: blocking check failed: "
                    + "; ".join(o.description for o in failed)
                    + " — previous tables kept"
                )
            create_aliases(conn, schema)
        conn.execute("COMMIT")
    except Exception:
        rollback(conn)
        raise
    snapshot.publish(conn)
    return {schema.name: df.height for schema, df in tables}


@dataclass
class CheckOutcome:
    passed: bool
    description: str
    metadata: dict[str, object] = field(default_factory=dict)


def check_schema(
    conn: duckdb.DuckDBPyConnection, schema: TableSchema, table: str | None = None
) -> CheckOutcome:
    """The table (``table``, default ``schema.name``) has exactly the schema's columns and types."""
    table = table or schema.name
    rows = conn.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    want = [(c.name, c.sql_type) for c in schema.columns]
    if not rows:
        return CheckOutcome(False, f"{table} does not exist")
    got = [(n, t) for n, t in rows]
    ok = got == want
    diff = [f"{w} != {g}" for w, g in zip(want, got, strict=False) if w != g]
    if len(got) != len(want):
        diff.append(f"{len(got)} columns, expected {len(want)}")
    return CheckOutcome(ok, "schema matches" if ok else "; ".join(diff[:5]), {"columns": len(got)})


def _where(schema: TableSchema) -> str:
    """How to point at a row in a message: file and line when the table has them, else the key."""
    cols = set(schema.column_names)
    if {"source_file", "line"} <= cols:
        return "source_file || ' line ' || line"
    key = " || ', ' || ".join(f"'{c}=' || coalesce(CAST(\"{c}\" AS VARCHAR), 'null')" for c in schema.key)
    return f"{'source_file || ' + repr(': ') + ' || ' if 'source_file' in cols else ''}{key}"


#: Key checks passed in this process, by what they read: (key columns, rows, sum of the rows' key hashes).
#: Whether a key is unique and non-null depends only on the multiset of its values, so a table whose key
#: columns give the same count and hash sum as one that passed passes too, without the grouping again.
#: A table written through :func:`write_tables` or :func:`replace_table` is key-checked before the swap and
#: again by its Dagster asset check, in the same process in ``varcap run``: the grouping of the largest
#: (11.0 M rows of ``out_machine_inter_change_times``) took 4.2–5.4 CPU s a time, its fingerprint 0.13–0.15
#: (DuckDB on 2 threads, 2026-12-04). Bounded: the oldest fingerprints go first.
_KEY_PASSED: dict[tuple[tuple[str, ...], int, str], None] = {}
KEY_PASSED_KEEP = 256


def _key_fingerprint(conn: duckdb.DuckDBPyConnection, table: str, key: Sequence[str]) -> tuple[int, str]:
    """Rows of ``table`` and the sum of the hashes of their ``key`` values (a multiset fingerprint)."""
    k = ", ".join(f'"{c}"' for c in key)
    n, h = conn.execute(
        f"SELECT count(*), coalesce(sum(hash({k})::HUGEINT), 0)::VARCHAR FROM {table}"
    ).fetchone()
    return int(n), str(h)


#: polars types whose values DuckDB stores unchanged in a column of the SQL type (the insert's CAST is then
#: the identity on them); an integer column takes any polars integer type: DuckDB's CAST between integer
#: types keeps the value or fails the insert (out of range), so the stored order is the frame's
_INTEGERS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)
_SAME_VALUES: dict[str, tuple[type[pl.DataType], ...]] = {
    "VARCHAR": (pl.String,),
    "INTEGER": _INTEGERS,
    "BIGINT": _INTEGERS,
    "DOUBLE": (pl.Float64,),
}


def key_strictly_increasing(df: pl.DataFrame, schema: TableSchema) -> bool:
    """True if ``df``'s rows are in strictly increasing order of ``schema.key`` (lexicographic, no nulls;
    polars orders NaN as DuckDB does, above every number and equal to itself, and -0.0 equal to 0.0) in key
    columns that the insert stores unchanged (:data:`_SAME_VALUES`): then no two rows share a key, which one
    pass over the frame shows without the grouping of :func:`check_key`. False says nothing (the table is
    grouped as usual). ``out_machine_intervals`` writes its rows in key order: 0.48–0.69 CPU s for its
    11.0 M inter-change times and 0.27–0.37 for its 5.5 M intervals, against 4.2–5.4 and 1.7–1.8 for the
    grouping (2026-12-04; on the frames as that asset writes them, machine index Int64: 0.47 and 0.24)."""
    cols = {c.name: c.sql_type for c in schema.columns}
    key = list(schema.key)
    if not key or any(df.schema.get(c) not in _SAME_VALUES.get(cols.get(c, ""), ()) for c in key):
        return False
    if any(df[c].null_count() for c in key):
        return False
    if df.height < 2:
        return True
    less, equal = pl.lit(False), pl.lit(True)
    for c in key:
        a, b = pl.col(c).head(df.height - 1), pl.col(c).tail(df.height - 1)
        less = less | (equal & (a < b))
        equal = equal & (a == b)
    return bool(df.select(less.all()).item())


def check_key(conn: duckdb.DuckDBPyConnection, schema: TableSchema, table: str | None = None) -> CheckOutcome:
    """No null key column and no duplicate key (in ``table``, default ``schema.name``). A key whose values
    passed before in this process (the same count and hash sum, :data:`_KEY_PASSED`) passes without being
    grouped again."""
    table = table or schema.name
    fp = (tuple(schema.key), *_key_fingerprint(conn, table, schema.key))
    if fp in _KEY_PASSED:
        return _key_outcome(schema, 0, 0, None)
    k = ", ".join(f'"{c}"' for c in schema.key)
    nulls = " OR ".join(f'"{c}" IS NULL' for c in schema.key)
    n_null = conn.execute(f"SELECT count(*) FROM {table} WHERE {nulls}").fetchone()[0]
    dups = conn.execute(
        f"SELECT count(*) FROM (SELECT {k} FROM {table} GROUP BY {k} HAVING count(*) > 1)"
    ).fetchone()[0]
    example = None
    if dups:
        keys = conn.execute(
            f"SELECT {k} FROM {table} GROUP BY {k} HAVING count(*) > 1 ORDER BY {k} LIMIT 1"
        ).fetchone()
        cond = " AND ".join(f'"{c}" IS NOT DISTINCT FROM ?' for c in schema.key)
        where = conn.execute(
            f"SELECT {_where(schema)} FROM {table} WHERE {cond} LIMIT 3", list(keys)
        ).fetchall()
        example = f"key {tuple(str(v) for v in keys)} on {' and '.join(w[0] for w in where)}"
    if n_null == 0 and dups == 0:
        _key_passed(fp)
    return _key_outcome(schema, n_null, dups, example)


def _sorted_key_pass(conn: duckdb.DuckDBPyConnection, schema: TableSchema) -> CheckOutcome:
    """:func:`check_key`'s pass for a table written from a frame in strictly increasing key order
    (:func:`key_strictly_increasing`), noted so the asset check after it passes without grouping."""
    _key_passed((tuple(schema.key), *_key_fingerprint(conn, schema.name, schema.key)))
    return _key_outcome(schema, 0, 0, None)


def _key_passed(fp: tuple[tuple[str, ...], int, str]) -> None:
    """Note a key fingerprint that passed (:data:`_KEY_PASSED`), the oldest forgotten past the bound."""
    _KEY_PASSED[fp] = None
    while len(_KEY_PASSED) > KEY_PASSED_KEEP:
        del _KEY_PASSED[next(iter(_KEY_PASSED))]


def _key_outcome(schema: TableSchema, n_null: int, dups: int, example: str | None) -> CheckOutcome:
    ok = n_null == 0 and dups == 0
    return CheckOutcome(
        ok,
        f"key ({', '.join(schema.key)}) unique and non-null"
        if ok
        else f"{n_null} null keys, {dups} duplicated keys (e.g. {example})",
        {"null_keys": n_null, "duplicate_keys": dups},
    )


def range_rules(schema: TableSchema) -> list[Range]:
    """The schema's rules plus, for core tables, one ``<col>_finite`` rule per DOUBLE column (NaN and
    ±inf never pass; derived ``out_`` tables may use NaN for an undefined metric)."""
    finite = [
        Range(f"{c.name}_finite", f'NOT isfinite("{c.name}")')
        for c in schema.columns
        if c.sql_type == "DOUBLE" and schema.name in CORE_TABLES
    ]
    return [*finite, *schema.ranges]


def check_ranges(
    conn: duckdb.DuckDBPyConnection, schema: TableSchema, table: str | None = None
) -> CheckOutcome:
    """Every rule of :func:`range_rules` holds on every row; a failure names the first bad row."""
    table = table or schema.name
    rules = range_rules(schema)
    bad = {
        r.name: conn.execute(f"SELECT count(*) FROM {table} WHERE {r.violation}").fetchone()[0] for r in rules
    }
    msgs = []
    for r in rules:
        if not bad[r.name]:
            continue
        shown = [c.name for c in schema.columns if re.search(rf"\b{re.escape(c.name)}\b", r.violation)]
        vals = " || ', ' || ".join(f"'{c} = ' || coalesce(CAST(\"{c}\" AS VARCHAR), 'null')" for c in shown)
        where, got = conn.execute(
            f"SELECT {_where(schema)}, {vals or repr('')} FROM {table} WHERE {r.violation} LIMIT 1"
        ).fetchone()
        msgs.append(f"{r.name} ({r.violation}): {bad[r.name]} rows, e.g. {where}: {got}")
    ok = not msgs
    return CheckOutcome(ok, "all ranges hold" if ok else "; ".join(msgs), bad)


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
