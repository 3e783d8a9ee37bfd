"""Asset checks generated from table schemas, in one place.

:func:`table_checks` turns a :class:`~assets.schema.TableSchema` into the checks every warehouse table
gets: columns and types (``schema``), a unique non-null key (``unique_key`` / ``<table>_key``), value
ranges when the schema declares any, and missing hours (a warning) for hourly series. The checks run
the queries of :mod:`assets.warehouse` on the ``duckdb`` resource.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from assets.schema import TableSchema
from assets.warehouse import CheckOutcome, check_key, check_ranges, check_schema, hourly_gaps

#: checks open the warehouse read-write like its writers: they queue in the writers' pool rather than
#: wait on DuckDB's file lock (which the ``duckdb`` resource waits for only a few seconds)
POOL = "duckdb_write"


def md_table(df: pl.DataFrame) -> dg.MetadataValue:
    """A small frame as a Markdown table for asset metadata."""
    head = "| " + " | ".join(df.columns) + " |\n|" + "---|" * df.width + "\n"
    return dg.MetadataValue.md(
        head + "\n".join("| " + " | ".join(str(v) for v in r) + " |" for r in df.rows())
    )


def _result(o: CheckOutcome) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=o.passed, description=o.description, metadata=o.metadata)


def table_checks(
    schema: TableSchema,
    asset: dg.AssetsDefinition | str | None = None,
    *,
    prefixed: bool = False,
    with_schema: bool = True,
) -> list[dg.AssetChecksDefinition]:
    """The checks of ``schema``'s table, attached to ``asset`` (default: the asset named like the table).

    Names are ``schema``, ``unique_key``, ``ranges``, ``hourly_gaps`` — or, ``prefixed`` (for an asset
    that writes several tables), ``<table>_schema``, ``<table>_key``, ``<table>_ranges``,
    ``<table>_hourly_gaps``. All but the gaps warning are blocking. ``with_schema=False`` leaves the
    columns-and-types check out (the writer validates the frame against the schema itself)."""
    target = schema.name if asset is None else asset
    t = f"{schema.name}_" if prefixed else ""
    out: list[dg.AssetChecksDefinition] = []
    if with_schema:

        @dg.asset_check(
            pool=POOL,
            asset=target,
            name=f"{t}schema",
            blocking=True,
            description="columns and types match the schema",
        )
        def _schema(duckdb: DuckDBResource) -> dg.AssetCheckResult:
            with duckdb.get_connection() as conn:
                return _result(check_schema(conn, schema))

        out.append(_schema)

    @dg.asset_check(
        pool=POOL,
        asset=target,
        name=f"{t}key" if prefixed else "unique_key",
        blocking=True,
        description=f"unique non-null {schema.key}",
    )
    def _key(duckdb: DuckDBResource) -> dg.AssetCheckResult:
        with duckdb.get_connection() as conn:
            return _result(check_key(conn, schema))

    out.append(_key)
    if schema.ranges:

        @dg.asset_check(
            pool=POOL,
            asset=target,
            name=f"{t}ranges",
            blocking=True,
            description="every numeric column finite; " + "; ".join(r.name for r in schema.ranges),
        )
        def _ranges(duckdb: DuckDBResource) -> dg.AssetCheckResult:
            with duckdb.get_connection() as conn:
                return _result(check_ranges(conn, schema))

        out.append(_ranges)
    if schema.hourly_series:

        @dg.asset_check(
            pool=POOL, asset=target, name=f"{t}hourly_gaps", description="missing hours per series (warning)"
        )
        def _gaps(duckdb: DuckDBResource) -> dg.AssetCheckResult:
            with duckdb.get_connection() as conn:
                g = hourly_gaps(conn, schema)
            missing = int(g["missing_hours"].sum()) if g.height else 0
            return dg.AssetCheckResult(
                passed=missing == 0,
                severity=dg.AssetCheckSeverity.WARN,
                description=f"{missing} missing hours across {g.height} series",
                metadata={"series": md_table(g), "missing_hours": missing},
            )

        out.append(_gaps)
    return out


def table_spec(
    schema: TableSchema,
    group: str,
    deps: Sequence[str | dg.AssetKey],
    kinds: set[str],
    what: str,
    code_version: str = "1",
) -> dg.AssetSpec:
    """The asset spec of ``schema``'s table for a multi-asset that writes several tables: description
    ``what`` plus the table name and its former name (a view; ``schema.aliases[0]``)."""
    return dg.AssetSpec(
        schema.name,
        group_name=group,
        deps=list(deps),
        kinds=kinds,
        code_version=code_version,
        description=f"{what} Table `{schema.name}` (former name `{schema.aliases[0]}`, a view).",
    )
