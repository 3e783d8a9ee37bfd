"""Reads of the warehouse tables the simulator consumes — one query per table, parameterized.

The connection is passed in (a DuckDB connection or anything with ``sql(query, params=...)`` returning a
relation with ``.pl()``), so ``sim`` itself never imports DuckDB.
"""

from __future__ import annotations

from typing import Any

import polars as pl

CORE_JOBS_SQL = "SELECT * FROM core_jobs WHERE workload = ? ORDER BY submit_s, job_id"


def read_core_jobs(con: Any, workload: str) -> pl.DataFrame:
    """Every ``core_jobs`` row of ``workload`` ordered by ``submit_s, job_id`` (empty if none)."""
    return con.sql(CORE_JOBS_SQL, params=[workload]).pl()
