"""``out_sim_inputs`` exports the workloads the simulator reads: right-censored runs included."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource


def test_out_sim_inputs_keeps_the_borg_samples_core_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every borg2011 run that fits a 24-core machine reaches ``workload_borg2011.parquet``, censored runs at
    their observed length, so the export carries the sample's core-time (not the 9 % of it the finished runs
    hold)."""
    from assets.core import JobsConfig, build_jobs
    from assets.normalize import RawFile
    from assets.schema import ALL_TABLES, CORE_GRID_CARBON, CORE_JOBS
    from assets.sim import out_sim_inputs
    from assets.sources import DATASETS
    from assets.warehouse import replace_table
    from sim import paths
    from studies.signals import GRIDS

    ds = DATASETS["borg2011_task_events"]
    files = [RawFile(paths.samples_dir() / r, r, ds.has_header, ds.columns) for r in ds.sample_files]
    borg, rejects = build_jobs([], [], files, JobsConfig())
    azure = borg.head(5).with_columns(
        pl.lit("azure").alias("workload"),
        pl.lit(2.0).alias("cores"),
        pl.lit(None, pl.Float64).alias("cpu_request_norm"),
    )
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(ALL_TABLES["raw_files"].ddl())
        replace_table(con, CORE_JOBS, pl.concat([borg, azure]), rejects)
        con.execute(CORE_GRID_CARBON.ddl())
        for grid, spec in GRIDS.items():
            source, month = spec.split(":")
            con.execute(
                "INSERT INTO core_grid_carbon (grid, zone, ts_utc, gco2_per_kwh, source, factor_set, estimated, "
                "source_file) VALUES (?, ?, ?::TIMESTAMPTZ, 100.0, ?, 'lca', false, 'f.csv')",
                [grid, grid, f"{month}-01 00:00:00+00", source],
            )
    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    res = dg.materialize([out_sim_inputs], resources={"duckdb": DuckDBResource(database=str(db))})
    assert res.success
    got = pl.read_parquet(tmp_path / "data" / "sim" / "inputs" / "workload_borg2011.parquet")

    fits = borg.filter(pl.col("cpu_request_norm") * 24 <= 24)
    sample_cs = float((fits["duration_s"] * fits["cpu_request_norm"] * 24).sum())
    finished_cs = float(
        fits.filter(~pl.col("censored"))
        .select(pl.col("duration_s") * pl.col("cpu_request_norm") * 24)
        .sum()
        .item()
    )
    assert got.height == fits.height and fits["censored"].sum() > 0.4 * fits.height
    assert float((got["duration_s"] * got["cores"]).sum()) == pytest.approx(sample_cs, rel=1e-9)
    assert finished_cs < 0.2 * sample_cs  # what the export held while it dropped the censored runs
