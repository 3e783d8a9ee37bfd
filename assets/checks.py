"""Asset checks generated from table schemas, in one place.

:func:`table_checks` turns a :class:`~assets.schema.TableSchema` into the checks every warehouse table
gets: columns and types (``schema``), a unique non-null key (``unique_key`` / ``<table>_key``), value
ranges when the schema declares any, and missing hours (a warning) for hourly series. The checks run
the queries of :mod:`assets.warehouse` on the ``duckdb`` resource.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import dagster as dg
import duckdb
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


def _result(o: CheckOutcome, spec: dg.AssetCheckSpec) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        asset_key=spec.asset_key,
        check_name=spec.name,
        passed=o.passed,
        description=o.description,
        metadata=o.metadata,
    )


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
    columns-and-types check out (the writer validates the frame against the schema itself). The checks of
    one table are one step on one connection (a multi-asset check that runs the selected ones: each
    check a step of its own cost 0.04 CPU s of Dagster events and a warehouse connection more)."""
    target = schema.name if asset is None else asset
    key = target.key if isinstance(target, dg.AssetsDefinition) else dg.AssetKey(target)
    t = f"{schema.name}_" if prefixed else ""
    Run = Callable[[duckdb.DuckDBPyConnection, dg.AssetCheckSpec], dg.AssetCheckResult]
    runs: list[tuple[dg.AssetCheckSpec, Run]] = []
    if with_schema:
        runs.append(
            (
                dg.AssetCheckSpec(
                    f"{t}schema", asset=key, blocking=True, description="columns and types match the schema"
                ),
                lambda conn, spec: _result(check_schema(conn, schema), spec),
            )
        )
    runs.append(
        (
            dg.AssetCheckSpec(
                f"{t}key" if prefixed else "unique_key",
                asset=key,
                blocking=True,
                description=f"unique non-null {schema.key}",
            ),
            lambda conn, spec: _result(check_key(conn, schema), spec),
        )
    )
    if schema.ranges:
        runs.append(
            (
                dg.AssetCheckSpec(
                    f"{t}ranges",
                    asset=key,
                    blocking=True,
                    description="every numeric column finite; " + "; ".join(r.name for r in schema.ranges),
                ),
                lambda conn, spec: _result(check_ranges(conn, schema), spec),
            )
        )
    if schema.hourly_series:
        runs.append(
            (
                dg.AssetCheckSpec(
                    f"{t}hourly_gaps", asset=key, description="missing hours per series (warning)"
                ),
                lambda conn, spec: _gaps_result(hourly_gaps(conn, schema), spec),
            )
        )

    @dg.multi_asset_check(
        name=f"{schema.name}_checks", specs=[spec for spec, _ in runs], can_subset=True, pool=POOL
    )
    # ``context`` unannotated: dagster refuses the string annotation of ``from __future__ import annotations``
    def _checks(context, duckdb: DuckDBResource) -> Iterator[dg.AssetCheckResult]:  # noqa: ANN001
        selected = context.selected_asset_check_keys
        with duckdb.get_connection() as conn:
            for spec, run in runs:
                if spec.key in selected:
                    # a cursor each: a check may leave its result unfinished, which the next query refuses
                    with conn.cursor() as cur:
                        yield run(cur, spec)

    return [_checks]


def _gaps_result(g: pl.DataFrame, spec: dg.AssetCheckSpec) -> dg.AssetCheckResult:
    missing = int(g["missing_hours"].sum()) if g.height else 0
    return dg.AssetCheckResult(
        asset_key=spec.asset_key,
        check_name=spec.name,
        passed=missing == 0,
        severity=dg.AssetCheckSeverity.WARN,
        description=f"{missing} missing hours across {g.height} series",
        metadata={"series": md_table(g), "missing_hours": missing},
    )


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
