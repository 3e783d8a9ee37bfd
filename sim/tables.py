"""Reads of the warehouse tables the simulator consumes — one query per table, parameterized.

The connection is passed in (a DuckDB connection or anything with ``sql(query, params=...)`` returning a
relation with ``.pl()``), so ``sim`` itself never imports DuckDB.
"""

from __future__ import annotations

from typing import Any

import polars as pl

CORE_JOBS_SQL = "SELECT * FROM core_jobs WHERE workload = ? ORDER BY submit_s, job_id"


def read_core_jobs(con: Any, workload: str) -> pl.DataFrame:
    """Every ``core_jobs`` row of ``workload`` ordered by ``submit_s, job_id`` (empty if none), as the
    simulator reads it.

    ``cores`` is vCPU in ``core_jobs`` and null for borg2011, whose request is ``cpu_request_norm`` (a
    fraction of the largest machine). The simulator's job frame carries that fraction in ``cores`` for the
    workloads of ``sim.workloads.generators.NORMALIZED_WORKLOADS``, which ``to_sim_jobs`` scales by the platform's cores
    per machine — so the jobs built from the table are the same as before the column was split."""
    df = con.sql(CORE_JOBS_SQL, params=[workload]).pl()
    if "cpu_request_norm" in df.columns:
        df = df.with_columns(pl.coalesce("cores", "cpu_request_norm").alias("cores"))
    return df
