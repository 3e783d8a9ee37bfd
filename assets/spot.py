"""Spot availability traces: ``core_spot_availability`` from ``raw_spot_availability``.

The raw asset (generated from :data:`assets.sources.DATASETS`) registers the embedded sample
(``data/samples/spot/*.parquet``: ``tick``, ``available``) or downloads the upstream JSONs
(``{"metadata": {"gap_seconds": …}, "data": [...]}``) through the shared download client; this core asset
normalizes either into one row per trace and tick. A value outside ``[0, nodes]`` is a reject row (the
trace keeps its tick index, so the simulator's step function would carry the previous value; the
capacity kind reads only clean traces). Each clean trace is also exported to ``data/sim/inputs/spot/``
(:func:`sim.paths.spot_dir`), which the ``spot`` capacity kind reads before the embedded sample.
"""

import json
import time
from collections.abc import Sequence

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from assets.checks import md_table, table_checks
from assets.core import _fail_on_bad_file, _write
from assets.normalize import base as nz
from assets.raw import raw_files_for
from assets.schema import CORE_SPOT_AVAILABILITY
from sim.capacity.spot import TRACES, parse_json
from sim.paths import spot_dir

POOL = "duckdb_write"


def _trace_of(name: str) -> str:
    """The trace a raw file holds, from its cache or sample name (``…/<trace>.json|parquet``)."""
    stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if stem not in TRACES:
        raise nz.BadFileError(f"{name}: not a known spot trace (known: {', '.join(TRACES)})")
    return stem


def read_spot_file(f: nz.RawFile) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(rows, rejects) of one raw spot file. ValueError naming the file for an unreadable one."""
    trace = TRACES[_trace_of(f.name)]
    if f.path.suffix == ".json":
        try:
            doc = json.loads(f.path.read_text())
        except ValueError as e:
            raise nz.BadFileError(f"{f.name}: not JSON ({e})") from e
        try:
            vals, gap = parse_json(doc, f.name)
        except ValueError as e:  # not the upstream layout
            raise nz.BadFileError(str(e)) from e
        df = pl.DataFrame({"tick": range(len(vals)), "available": vals})
    else:
        df = pl.read_parquet(f.path).select("tick", "available")
        gap = trace.gap_s
    df = df.with_columns(
        pl.lit(trace.name).alias("trace"),
        pl.col("tick").cast(pl.Int64),
        (pl.col("tick").cast(pl.Float64) * gap).alias("time_s"),
        pl.col("available").cast(pl.Int64),
        pl.lit(trace.nodes, pl.Int64).alias("nodes"),
        pl.lit(f.name).alias("source_file"),
    )
    bad = (pl.col("available") < 0) | (pl.col("available") > pl.col("nodes")) | pl.col("available").is_null()
    rejects = df.filter(bad).select(
        pl.lit(CORE_SPOT_AVAILABILITY.name).alias("table_name"),
        pl.col("source_file"),
        (pl.col("tick") + 1).alias("line"),
        pl.format("available {} outside [0, {}]", pl.col("available"), pl.col("nodes")).alias("reason"),
        pl.col("available").cast(pl.Utf8).alias("raw_row"),
    )
    return df.filter(~bad).select(CORE_SPOT_AVAILABILITY.column_names), rejects


def build_spot(files: Sequence[nz.RawFile]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every registered spot file, normalized: (rows, rejects)."""
    out = [read_spot_file(f) for f in files]
    return (
        pl.concat([o[0] for o in out]) if out else pl.DataFrame(),
        pl.concat([o[1] for o in out]) if out else nz.empty_rejects(),
    )


@dg.asset(
    group_name="core",
    pool=POOL,
    kinds={"duckdb", "polars"},
    deps=["raw_spot_availability"],
    code_version="1",
    description="Spot availability per trace and tick (AWS 16-node V100 pools, 300 s ticks).",
)
def core_spot_availability(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> dg.MaterializeResult:
    t0 = time.perf_counter()
    with duckdb.get_connection() as conn:
        files = raw_files_for(conn, "spot_availability")
    df, rej = _fail_on_bad_file(lambda: build_spot(files))
    summary = df.group_by("trace").agg(
        pl.len().alias("ticks"), (pl.col("available") / pl.col("nodes")).mean().alias("mean_fraction")
    )
    res = _write(
        context,
        duckdb,
        CORE_SPOT_AVAILABILITY,
        df,
        rej,
        t0,
        {"traces": md_table(summary.sort("trace"))},
        ("spot_availability",),
    )
    exported, skipped = export_traces(df, rej)
    context.log.info(f"spot traces exported to {spot_dir()}: {', '.join(exported) or 'none'}")
    return dg.MaterializeResult(
        metadata={
            **(res.metadata or {}),
            "exported": ", ".join(exported) or "none",
            **({"not_exported": ", ".join(skipped)} if skipped else {}),
        }
    )


def export_traces(df: pl.DataFrame, rejects: pl.DataFrame) -> tuple[list[str], list[str]]:
    """Write each clean trace of ``df`` (rows of ``core_spot_availability``) to
    ``<spot_dir>/<trace>.parquet`` (``tick, available``; atomically), where the ``spot`` capacity kind
    reads it; a trace with rejected ticks (a gap) is not exported and its old export removed, as is the
    export of a trace no longer in the table. Returns (exported, skipped) trace names."""
    from studies.sweep import write_parquet_atomic

    out = spot_dir()
    out.mkdir(parents=True, exist_ok=True)
    bad = (
        set(rejects["source_file"].map_elements(_trace_of, return_dtype=pl.Utf8)) if rejects.height else set()
    )
    exported, skipped = [], []
    for name in TRACES:
        path = out / f"{name}.parquet"
        rows = df.filter(pl.col("trace") == name)
        if rows.height == 0 or name in bad:
            path.unlink(missing_ok=True)
            if name in bad:
                skipped.append(name)
            continue
        write_parquet_atomic(rows.select("tick", "available").sort("tick"), path)
        exported.append(name)
    return exported, skipped


spot_assets = [core_spot_availability]
spot_checks = table_checks(CORE_SPOT_AVAILABILITY)
