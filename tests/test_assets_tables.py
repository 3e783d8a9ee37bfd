"""Every warehouse table is an asset with its layer prefix; renamed tables keep their old names as views;
``write_tables`` validates before it commits; the ``raw_files`` / ``core_builds`` assets catch a changed
registry."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource

from assets.core import builds_current, core_builds
from assets.raw import file_problems, raw_files
from assets.schema import ALL_TABLES, CAPACITY_POINTS, CAPACITY_TRACES
from assets.warehouse import CheckFailed, write_tables

PREFIXES = ("raw_", "core_", "out_")


def test_every_dictionary_table_is_an_asset_with_a_layer_prefix() -> None:
    from pipelines.definitions import defs

    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    for name, schema in ALL_TABLES.items():
        assert name in keys, f"table {name} is not an asset"
        assert name.startswith(PREFIXES), name
        for alias in schema.aliases:
            assert alias not in ALL_TABLES and alias not in keys, alias


def _points(times: list[float]) -> pl.DataFrame:
    return pl.DataFrame({"trace_id": "t", "time_s": times, "machines_alive": [3] * len(times)})


def _trace() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "trace_id": ["t"],
            "generator": ["random_walk"],
            "machines": [4],
            "horizon_s": [10.0],
            "period_s": [1.0],
            "seed": [0],
            "params_json": ["{}"],
            "source": ["synthetic"],
        }
    )


def test_old_base_table_becomes_a_view_and_a_bad_write_keeps_the_previous_tables(tmp_path: Path) -> None:
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        # a warehouse from before the rename: the data under the old name, as a base table
        con.execute("CREATE TABLE capacity_points (trace_id VARCHAR, time_s DOUBLE, machines_alive INTEGER)")
        con.execute("INSERT INTO capacity_points VALUES ('old', 0, 1)")
        write_tables(con, [(CAPACITY_TRACES, _trace()), (CAPACITY_POINTS, _points([0.0, 5.0]))])
        kinds = dict(con.execute("SELECT table_name, table_type FROM information_schema.tables").fetchall())
        assert kinds["out_capacity_points"] == "BASE TABLE" and kinds["capacity_points"] == "VIEW"
        assert kinds["capacity_traces"] == "VIEW"
        assert con.execute("SELECT time_s FROM capacity_points ORDER BY 1").fetchall() == [(0.0,), (5.0,)]

        # a duplicated key: nothing is committed, neither table changes, the message names table and key
        with pytest.raises(CheckFailed, match=r"out_capacity_points: blocking check failed: .*duplicated"):
            write_tables(con, [(CAPACITY_TRACES, _trace()), (CAPACITY_POINTS, _points([0.0, 7.0, 7.0]))])
        assert con.execute("SELECT time_s FROM capacity_points ORDER BY 1").fetchall() == [(0.0,), (5.0,)]
        assert con.execute("SELECT count(*) FROM out_capacity_traces").fetchone()[0] == 1

        # a range violation is refused the same way
        bad = _points([0.0]).with_columns(pl.lit(-1).alias("machines_alive"))
        with pytest.raises(CheckFailed, match="nonnegative"):
            write_tables(con, [(CAPACITY_POINTS, bad)])
        assert con.execute("SELECT min(machines_alive) FROM out_capacity_points").fetchone()[0] == 3


def _registry(con: duckdb.DuckDBPyConnection, path: Path, size: int) -> None:
    con.execute(ALL_TABLES["raw_files"].ddl())
    con.execute(
        "INSERT INTO raw_files VALUES ('power_prices', 'sample', ?, 'p.csv', NULL, ?, ?, true, now())",
        [str(path), size, "a" * 64],
    )


def test_raw_files_asset_fails_when_a_registered_file_changed(tmp_path: Path) -> None:
    f = tmp_path / "p.csv"
    f.write_text("a,b\n1,2\n")
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        _registry(con, f, f.stat().st_size)
    res = dg.materialize([raw_files], resources={"duckdb": DuckDBResource(database=str(db))})
    assert res.success
    meta = res.asset_materializations_for_node("raw_files")[0].metadata
    assert meta["dagster/row_count"].value == 1 and "power_prices" in meta["datasets"].value

    f.write_text("a,b\n1,2\n3,4\n")
    res = dg.materialize(
        [raw_files], resources={"duckdb": DuckDBResource(database=str(db))}, raise_on_error=False
    )
    assert not res.success
    df = pl.DataFrame({"dataset": ["power_prices"], "path": [str(f)], "bytes": [8]})
    assert file_problems(df) == [f"power_prices: {f} has 12 bytes, 8 recorded"]
    f.unlink()
    assert file_problems(df) == [f"power_prices: {f} is missing"]


def test_builds_current_warns_when_a_core_table_is_older_than_the_registry(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        _registry(con, tmp_path / "p.csv", 8)
        con.execute(ALL_TABLES["core_builds"].ddl())
        con.execute(
            "INSERT INTO core_builds VALUES ('core_power_price', 'power_prices', 'p.csv', ?, now())",
            ["a" * 64],
        )
    resources = {"duckdb": DuckDBResource(database=str(db))}

    def check() -> dg.AssetCheckEvaluation:
        res = dg.materialize([core_builds, builds_current], resources=resources, raise_on_error=False)
        return next(
            e.event_specific_data for e in res.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"
        )

    assert check().passed
    with duckdb.connect(str(db)) as con:  # the raw asset registered a new version of the file
        con.execute("UPDATE raw_files SET sha256 = ?", ["b" * 64])
    ev = check()
    assert not ev.passed and ev.severity == dg.AssetCheckSeverity.WARN
    assert "core_power_price" in ev.description


def test_core_jobs_has_one_cpu_unit_and_the_borg2011_sim_jobs_are_unchanged() -> None:
    """``cores`` is vCPU only (null for borg2011, whose request is ``cpu_request_norm``); the simulator's
    borg2011 jobs built from the stored table equal those built from the former mixed-unit ``cores``."""
    from assets.core import JobsConfig, build_jobs
    from assets.normalize import RawFile
    from assets.schema import CORE_JOBS
    from assets.sources import DATASETS
    from assets.warehouse import replace_table
    from sim import paths
    from sim.tables import read_core_jobs
    from sim.workloads.generators import to_sim_jobs

    ds = DATASETS["borg2011_task_events"]
    files = [RawFile(paths.samples_dir() / r, r, ds.has_header, ds.columns) for r in ds.sample_files]
    jobs, rejects = build_jobs([], [], files, JobsConfig())
    assert jobs["cores"].null_count() == jobs.height and jobs["cpu_request_norm"].is_between(0, 1).all()
    con = duckdb.connect()
    raw = ALL_TABLES["raw_files"]
    con.execute(raw.ddl())
    replace_table(con, CORE_JOBS, jobs, rejects)  # the blocking checks incl. one_cpu_unit pass
    new = to_sim_jobs(read_core_jobs(con.cursor(), "borg2011").filter(~pl.col("censored")), 24)

    # as core_jobs stored it before the split: the normalized request in `cores`
    old_rows = (
        jobs.with_columns(pl.col("cpu_request_norm").alias("cores"))
        .drop("cpu_request_norm")
        .sort("submit_s", "job_id")
        .filter(~pl.col("censored"))
    )
    old = to_sim_jobs(old_rows, 24)
    assert new[1] == old[1] and new[0].equals(old[0]) and new[0].height > 200_000

    # a row in both units (or in none) is refused before it is swapped in
    bad = jobs.head(3).with_columns(pl.lit(2.0).alias("cores"))
    with pytest.raises(CheckFailed, match="one_cpu_unit"):
        replace_table(con, CORE_JOBS, bad)
    assert con.execute("SELECT count(*) FROM core_jobs").fetchone()[0] == jobs.height
