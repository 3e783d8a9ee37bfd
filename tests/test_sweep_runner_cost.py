"""What ``varcap sweep`` pays besides simulating: the definitions of its study only (not the whole
catalogue's scenarios nor the compiled simulator), the results table's rows of its study only, and one
SQLite engine per event-log file for every event of the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest

from studies import sweep
from studies.catalogue import study

ROOT = Path(__file__).resolve().parents[1]


def test_a_sweep_builds_its_study_alone_without_the_simulator() -> None:
    code = (
        "import sys\n"
        "from pipelines.cli.sweeps import local_sweep_job\n"
        "job = local_sweep_job('smoke')\n"
        "from studies import catalogue\n"
        "print(sorted(catalogue._BUILT), 'numba' in sys.modules, 'pipelines.definitions' in sys.modules)\n"
        "print(sorted(k.to_user_string() for k in job.asset_layer.executable_asset_keys))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stderr
    built, assets = r.stdout.splitlines()[-2:]
    assert built == "['smoke'] False False"
    assert assets == "['out_sim__smoke', 'out_sim_results']"


def test_the_study_asset_and_every_study_asset_are_one_definition() -> None:
    from assets import sim

    assert sim.study_asset_def("smoke") is sim.study_asset_def("smoke")
    assert sim.study_asset_def("smoke") in sim.study_assets
    deps = {k.to_user_string() for k in sim.results_asset().asset_deps[dg.AssetKey("out_sim_results")]}
    assert deps == {a.key.to_user_string() for a in sim.study_assets}


@pytest.fixture
def smoke_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    for sc in study("smoke"):
        sweep.run_scenario(sc)
    return tmp_path


def test_a_study_rebuilds_its_rows_and_keeps_the_others(smoke_runs: Path) -> None:
    from assets.schema import OUT_SIM_RESULTS
    from assets.sim import _results_rows
    from assets.warehouse import replace_table

    smoke = {s.id for s in study("smoke")}
    with duckdb.connect(str(smoke_runs / "w.duckdb")) as conn:
        rows, problems = _results_rows(conn, ["smoke"])  # no table yet: the whole table
        assert set(rows["scenario_id"]) == smoke and not problems
        other = rows.head(1).with_columns(
            pl.lit("0123456789ab").alias("scenario_id"),
            pl.lit(9.0).alias("wall_s"),
            pl.lit(1.5).alias("carbon_saving_pct"),  # smoke's runs have no carbon signal: null
        )
        stale = rows.head(1).with_columns(pl.lit(-1.0).alias("wall_s"))  # a smoke row written before
        replace_table(conn, OUT_SIM_RESULTS, pl.concat([other, stale]))
        rows, _ = _results_rows(conn, ["smoke"])
        assert set(rows["scenario_id"]) == smoke | {"0123456789ab"}  # the other study's row is kept
        assert rows.filter(pl.col("scenario_id") == "0123456789ab")["wall_s"].to_list() == [9.0]
        assert (rows.filter(pl.col("scenario_id").is_in(list(smoke)))["wall_s"] >= 0).all()  # fresh
        replace_table(conn, OUT_SIM_RESULTS, rows)  # the rows fit the table's schema
        whole, _ = _results_rows(conn, [])  # the whole table: a scenario of no study is left out
        assert set(whole["scenario_id"]) == smoke


def test_event_log_engines_are_reused_and_events_recorded(tmp_path: Path) -> None:
    from pipelines.cli.common import reuse_event_log_engines

    @dg.asset(partitions_def=dg.StaticPartitionsDefinition(["a", "b", "c"]))
    def parts(context) -> None:  # noqa: ANN001 - Dagster reads the annotation, which is a string here
        for pk in context.partition_keys:
            context.add_asset_metadata({"n": 1}, partition_key=pk)

    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        assert reuse_event_log_engines(instance) and reuse_event_log_engines(instance)
        tags = {"dagster/asset_partition_range_start": "a", "dagster/asset_partition_range_end": "c"}
        assert dg.materialize([parts], instance=instance, tags=tags).success
        assert instance.get_materialized_partitions(dg.AssetKey("parts")) == {"a", "b", "c"}
        engines = instance.event_log_storage._varcap_engines
        assert "index" in engines and len(engines) == 2  # the index and this run's file, one engine each
        # one connection per file, kept, and shared by the process's threads in turn: a run in another
        # thread while this one reads the index
        import threading

        done: list[bool] = []
        th = threading.Thread(
            target=lambda: done.append(dg.materialize([parts], instance=instance, tags=tags).success)
        )
        th.start()
        while th.is_alive():
            assert instance.get_materialized_partitions(dg.AssetKey("parts")) == {"a", "b", "c"}
        th.join()
        assert done == [True] and len(engines) == 3
        assert len(instance.fetch_materializations(dg.AssetKey("parts"), limit=10).records) == 6
        # every kept connection of a WAL file commits without waiting for the disk (synchronous NORMAL = 1)
        for engine in engines.values():
            with engine.connect() as conn:
                assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
                assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1


def test_a_sqlite_file_not_in_wal_mode_keeps_full_sync(tmp_path: Path) -> None:
    import sqlalchemy as sa

    from pipelines.cli.common import _wal_normal_sync

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'x.db'}", poolclass=sa.pool.StaticPool)
    _wal_normal_sync(engine)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL, SQLite's default


def test_the_local_sweep_job_has_one_chunk_slot_and_the_ui_asset_all() -> None:
    """A sweep run in this process simulates in its plan step: its job carries one chunk slot (each
    unused slot is a skipped step recorded in the event log), the code location's asset every slot."""
    from assets import sim
    from pipelines.cli.sweeps import LOCAL_CHUNKS, local_sweep_job

    def slots(node_names: list[str]) -> int:
        return sum(n.startswith("sim_chunk_") for n in node_names)

    local = local_sweep_job("smoke").graph.node_dict["out_sim__smoke"].definition.node_dict
    assert slots(list(local)) == LOCAL_CHUNKS == 1
    ui = sim.study_asset_def("smoke").node_def.node_dict
    assert slots(list(ui)) == min(len(study("smoke")), sim.MAX_CHUNKS)


def _polars_threads() -> int:
    import polars as pl

    return pl.thread_pool_size()


def test_pool_workers_start_with_polars_on_one_thread(monkeypatch) -> None:
    """A sweep's worker processes run polars on one thread (sweep.WORKER_ENV); this process's environment
    is left as it was, and a value the user set is what the workers get."""
    import os

    from studies import sweep

    monkeypatch.delenv("POLARS_MAX_THREADS", raising=False)
    ex = sweep._new_pool(2)
    try:
        assert {ex.submit(_polars_threads).result() for _ in range(4)} == {1}
    finally:
        ex.shutdown()
    assert "POLARS_MAX_THREADS" not in os.environ
    monkeypatch.setenv("POLARS_MAX_THREADS", "3")
    ex = sweep._new_pool(1)
    try:
        assert ex.submit(_polars_threads).result() == 3
    finally:
        ex.shutdown()
