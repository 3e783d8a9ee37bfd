"""Reading simulation results of the reproduction studies from the warehouse (read-only).

``out_study_scenarios`` says which scenarios make up each study and profile (with the study builder's
key); ``out_study_results`` holds their metrics per profile (the reproduction studies' rows of
``out_sim_results``, one asset partition per profile). A chapter shows the profile of its report's
partition (``make run``: quick; ``varcap reproduce`` then ``varcap reports``: full)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl

from sim.paths import home


def has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(
        con.sql(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", params=[name]
        ).fetchall()[0][0]
    )


def coverage(con: duckdb.DuckDBPyConnection, bases: list[str]) -> dict[str, float]:
    """Fraction of each profile's scenarios (of the studies ``bases``) that have results."""
    if not (has_table(con, "out_study_scenarios") and has_table(con, "out_study_results")):
        return {}
    rows = con.sql(
        "SELECT m.profile, avg(CASE WHEN r.scenario_id IS NULL THEN 0 ELSE 1 END) FROM out_study_scenarios m "
        "LEFT JOIN out_study_results r ON r.scenario_id = m.scenario_id AND r.profile = m.profile "
        "WHERE m.base_study IN (SELECT unnest(?)) GROUP BY 1",
        params=[bases],
    ).fetchall()
    return {p: float(f) for p, f in rows}


def pick_profile(con: duckdb.DuckDBPyConnection, bases: list[str], profile: str = "auto") -> str:
    """``profile`` unless ``auto``: then ``full`` if every full scenario of ``bases`` has run, else the
    profile with the best coverage (``quick`` when none has any). ``ValueError`` for an unknown profile."""
    cov = coverage(con, bases)
    if profile != "auto":
        if cov and profile not in cov:
            raise ValueError(f"unknown profile {profile!r}; known: {sorted(cov)}")
        return profile
    if cov.get("full", 0.0) >= 1.0:
        return "full"
    return max(cov, key=lambda p: (cov[p], p == "quick")) if cov else "quick"


def study_results(con: duckdb.DuckDBPyConnection, base: str, profile: str) -> pl.DataFrame:
    """``out_study_results`` rows of study ``base`` in ``profile`` (the columns of ``out_sim_results``),
    with the builder's ``key`` (a list) and ``replicate``. Empty (with those columns) when nothing has run;
    ``LookupError`` if the tables are missing (run ``varcap run``)."""
    for t in ("out_study_scenarios", "out_study_results"):
        if not has_table(con, t):
            raise LookupError(f"warehouse has no {t}: run `varcap run` (or `varcap reproduce --quick`)")
    df = con.sql(
        "SELECT r.* EXCLUDE (profile), m.key_json, m.replicate FROM out_study_scenarios m "
        "JOIN out_study_results r ON r.scenario_id = m.scenario_id AND r.profile = m.profile "
        "WHERE m.base_study = ? AND m.profile = ? ORDER BY m.key_json",
        params=[base, profile],
    ).pl()
    return df.with_columns(
        pl.col("key_json")
        .map_elements(lambda s: [str(x) for x in json.loads(s)], return_dtype=pl.List(pl.Utf8))
        .alias("key")
        if df.height
        else pl.lit(None, dtype=pl.List(pl.Utf8)).alias("key")
    )


def key_part(df: pl.DataFrame, i: int, name: str, dtype: pl.DataType = pl.Utf8) -> pl.DataFrame:
    """Add ``key[i]`` as column ``name`` (cast to ``dtype``; non-numeric values become null)."""
    col = pl.col("key").list.get(i, null_on_oob=True)
    return df.with_columns(col.cast(dtype, strict=False).alias(name))


def json_field(
    df: pl.DataFrame, column: str, field: str, name: str, dtype: pl.DataType = pl.Utf8
) -> pl.DataFrame:
    """Add field ``field`` of the JSON object in ``column`` (``capacity_json``, ``settings_json``) as column
    ``name`` (cast to ``dtype``; null where the object has no such field). Analyses read scenario fields by
    name, never by their position in a study builder's key (whose shape changes with the study)."""
    vals = [json.loads(s).get(field) if s else None for s in df[column]]
    strs = [None if v is None else str(v) for v in vals]
    return df.with_columns(pl.Series(name, strs, dtype=pl.Utf8).cast(dtype, strict=False))


def jobs_table(jobs_path: str) -> pl.DataFrame:
    """A run's per-job table (``jobs_path`` as stored: relative to the project home, or absolute)."""
    p = Path(jobs_path)
    return pl.read_parquet(p if p.is_absolute() else home() / p)


def mean_ci(df: pl.DataFrame, by: list[str], value: str) -> pl.DataFrame:
    """Mean of ``value`` per ``by`` over replicates with a normal-approximation 95 % interval
    (``lo``/``hi``; the mean itself for one replicate) and the count ``n``."""
    return (
        df.group_by(by)
        .agg(
            pl.col(value).mean().alias("mean"),
            pl.col(value).std().fill_null(0.0).alias("sd"),
            pl.len().alias("n"),
        )
        .with_columns(
            (pl.col("mean") - 1.96 * pl.col("sd") / pl.col("n").sqrt()).alias("lo"),
            (pl.col("mean") + 1.96 * pl.col("sd") / pl.col("n").sqrt()).alias("hi"),
        )
        .sort(by)
    )
