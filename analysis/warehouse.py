"""Read-only access to the warehouse for notebooks and charts.

:func:`connect` opens the read-only snapshot that the pipeline publishes after every write
(``data/warehouse.snapshot.duckdb``, see :mod:`assets.snapshot`), so a notebook never blocks the pipeline
and the pipeline never fails because a notebook is open. Sessions are in UTC whatever the machine's time
zone, so ``date_trunc``/``month()`` on ``ts_utc`` give UTC days and months.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import polars as pl

from sim.paths import warehouse_path


def snapshot_path(warehouse: str | Path | None = None) -> Path:
    """The read-only snapshot published beside ``warehouse`` (default: the project's warehouse)."""
    p = Path(warehouse) if warehouse else warehouse_path()
    return p.with_name(f"{p.stem}.snapshot{p.suffix or '.duckdb'}")


def connect(path: str | Path | None = None) -> duckdb.DuckDBPyConnection:
    """Open the warehouse read-only, in UTC: the published snapshot of ``path`` (default
    ``$VARCAP_WAREHOUSE`` or ``data/warehouse.duckdb``), or ``path`` itself if no snapshot exists yet (a
    warehouse built before snapshots; such a connection does block writers). FileNotFoundError if neither
    exists. With ``$VARCAP_STUDY_RESULTS`` set (a parquet file; a chapter's report asset sets it), that
    file is ``out_study_results`` in this connection: the rows of the chapter's own studies."""
    p = Path(path) if path else warehouse_path()
    snap = snapshot_path(p)
    target = snap if snap.exists() else p
    if not target.exists():
        raise FileNotFoundError(f"{p}: no warehouse yet; run `make run`")
    con = duckdb.connect(str(target), read_only=True)
    con.execute("SET TimeZone = 'UTC'")
    rows = os.environ.get("VARCAP_STUDY_RESULTS")
    if rows:  # a chapter's report: its own studies' rows stand in for out_study_results
        quoted = rows.replace("'", "''")
        con.execute(f"CREATE TEMP VIEW out_study_results AS SELECT * FROM read_parquet('{quoted}')")
    return con


def query(con: duckdb.DuckDBPyConnection, sql: str) -> pl.DataFrame:
    return con.sql(sql).pl()


def carbon_capacity(con: duckdb.DuckDBPyConnection) -> tuple[pl.DataFrame, dict[str, int]]:
    """Points and sizes of the constant-carbon-budget traces."""
    pts = query(
        con, "SELECT trace_id, time_s, machines_alive FROM out_capacity_points WHERE trace_id LIKE 'carbon-%'"
    )
    sizes = dict(
        con.sql(
            "SELECT trace_id, machines FROM out_capacity_traces WHERE trace_id LIKE 'carbon-%'"
        ).fetchall()
    )
    return pts, sizes


def survival(con: duckdb.DuckDBPyConnection, pattern: str = "rw-f%-s0.15-%") -> pl.DataFrame:
    return query(
        con,
        f"SELECT trace_id, time_s, survival FROM out_interval_survival WHERE band = -1 AND trace_id LIKE '{pattern}' "
        "ORDER BY trace_id, time_s",
    )


def sweep_results(con: duckdb.DuckDBPyConnection, capacity_kind: str = "random_walk") -> pl.DataFrame:
    """``out_sim_results`` rows of one capacity kind with ``changes_per_hour`` and ``step`` as columns."""
    return query(
        con,
        "SELECT *, CAST(json_extract(capacity_json, '$.changes_per_hour') AS DOUBLE) AS changes_per_hour, "
        "CAST(json_extract(capacity_json, '$.step') AS DOUBLE) AS step FROM out_sim_results "
        f"WHERE capacity_kind = '{capacity_kind}' ORDER BY workload, changes_per_hour, step",
    )
