"""``varcap run``'s first half is not materialized again when its state (code, samples, source, its tables
and exported inputs, a materialization of each asset) is the one its last complete run left."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / ".dagster_home"))
    monkeypatch.delenv("VARCAP_WAREHOUSE", raising=False)
    monkeypatch.delenv("VARCAP_SOURCE", raising=False)
    (tmp_path / "data" / "samples").mkdir(parents=True)
    (tmp_path / "data" / "samples" / "jobs.csv").write_text("a,b\n1,2\n")
    (tmp_path / "data" / "sim" / "inputs").mkdir(parents=True)
    (tmp_path / "data" / "sim" / "inputs" / "workload.parquet").write_bytes(b"1")
    with duckdb.connect(str(tmp_path / "data" / "warehouse.duckdb")) as con:
        con.execute("CREATE TABLE core_jobs AS SELECT 1 AS i")
        con.execute("CREATE TABLE raw_files AS SELECT 'x' AS sha256, now() AS registered_at")
        con.execute("CREATE TABLE out_sim__other AS SELECT 1 AS i")
    return tmp_path


NAMES = ["core_jobs", "raw_files", "out_sim_inputs"]


def test_the_state_follows_tables_samples_inputs_source_and_materializations(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipelines.cli.run import first_half_stamp, read_first_half_stamp, write_first_half_stamp

    wh = home / "data" / "warehouse.duckdb"
    with dg.instance_for_test() as instance:
        assert first_half_stamp(NAMES, instance) is None  # nothing materialized yet
        for n in NAMES:
            instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=n))
        first = first_half_stamp(NAMES, instance)
        assert first is not None and read_first_half_stamp() is None
        write_first_half_stamp(first)
        assert read_first_half_stamp() == first == first_half_stamp(NAMES, instance)
        with duckdb.connect(str(wh)) as con:  # a table it does not write; raw_files registered again
            con.execute("INSERT INTO out_sim__other VALUES (2)")
            con.execute("UPDATE raw_files SET registered_at = now() + INTERVAL 1 HOUR")
        assert first_half_stamp(NAMES, instance) == first
        with duckdb.connect(str(wh)) as con:  # a row of one of its tables changed
            con.execute("UPDATE core_jobs SET i = 2")
        assert first_half_stamp(NAMES, instance) not in (None, first)
        with duckdb.connect(str(wh)) as con:
            con.execute("UPDATE core_jobs SET i = 1")
        assert first_half_stamp(NAMES, instance) == first
        (home / "data" / "samples" / "jobs.csv").write_text("a,b\n1,3\n")  # a sample changed
        assert first_half_stamp(NAMES, instance) not in (None, first)
        (home / "data" / "samples" / "jobs.csv").write_text("a,b\n1,2\n")
        (home / "data" / "sim" / "inputs" / "workload.parquet").write_bytes(b"2")  # an exported input
        assert first_half_stamp(NAMES, instance) not in (None, first)
        (home / "data" / "sim" / "inputs" / "workload.parquet").write_bytes(b"1")
        assert first_half_stamp(NAMES, instance) == first
        monkeypatch.setenv("VARCAP_SOURCE", "remote")  # downloads may change: never skipped
        assert first_half_stamp(NAMES, instance) is None
        monkeypatch.delenv("VARCAP_SOURCE")
    with dg.instance_for_test() as fresh:  # another instance: no materializations to show for them
        assert first_half_stamp(NAMES, fresh) is None


def test_varcap_run_skips_the_first_half_only_when_its_state_is_unchanged(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from pipelines.cli import run

    state = {"inputs": "a"}
    ran: list[str] = []
    monkeypatch.setattr(run, "first_half_stamp", lambda names, instance: dict(state))
    monkeypatch.setattr(run, "_second_half", lambda args, console: ran.append("second") or 0)

    class Job:
        def execute_in_process(self, **kw):  # noqa: ANN003, ANN201
            ran.append("first")
            return SimpleNamespace(
                success=True, all_events=[], run_id="r", get_asset_materialization_events=lambda: []
            )

    from pipelines.definitions import defs

    monkeypatch.setattr(type(defs), "resolve_implicit_global_asset_job_def", lambda self: Job())
    args = SimpleNamespace(free_slots=None, source=None, groups=None, force=False)
    assert run.cmd_run(args) == 0 and ran == ["first", "second"]  # no state recorded yet
    assert run.cmd_run(args) == 0 and ran == ["first", "second", "second"]  # unchanged: skipped
    assert run.cmd_run(SimpleNamespace(**{**vars(args), "force": True})) == 0
    assert ran[3:] == ["first", "second"]
    state["inputs"] = "b"
    assert run.cmd_run(args) == 0 and ran[5:] == ["first", "second"]


def test_the_tables_state_follows_runs_tables_and_the_profiles_materializations(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second half's tables (results, reproduction, backtest) are kept only as the last run left them."""
    from pipelines.cli.run import tables_stamp

    names = ["out_sim_results", "out_backtest"]  # unpartitioned, partitioned by profile
    run_json = home / "data" / "sim" / "runs" / "abc" / "run.json"
    run_json.parent.mkdir(parents=True)
    run_json.write_text('{"metrics": {"goodput": 0.5}}')
    wh = home / "data" / "warehouse.duckdb"
    with dg.instance_for_test() as instance:
        assert tables_stamp(names, "quick", instance) is None  # nothing materialized yet
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key="out_sim_results"))
        instance.report_runless_asset_event(
            dg.AssetMaterialization(asset_key="out_backtest", partition="full")
        )
        assert tables_stamp(names, "quick", instance) is None  # the backtest's quick partition is missing
        instance.report_runless_asset_event(
            dg.AssetMaterialization(asset_key="out_backtest", partition="quick")
        )
        first = tables_stamp(names, "quick", instance)
        assert first is not None and tables_stamp(names, "quick", instance) == first
        assert tables_stamp(names, "full", instance) not in (None, first)  # another profile's key
        run_json.write_text('{"metrics": {"goodput": 0.6}}')  # a cached run changed
        assert tables_stamp(names, "quick", instance) not in (None, first)
        run_json.write_text('{"metrics": {"goodput": 0.5}}')
        assert tables_stamp(names, "quick", instance) == first
        with duckdb.connect(str(wh)) as con:  # any table of the warehouse (read or written) changed
            con.execute("INSERT INTO out_sim__other VALUES (2)")
        assert tables_stamp(names, "quick", instance) not in (None, first)
        monkeypatch.setenv("VARCAP_SOURCE", "remote")
        assert tables_stamp(names, "quick", instance) is None


def test_the_reports_phase_rebuilds_its_tables_only_when_their_state_changed(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rich.console import Console

    from pipelines.cli import run
    from pipelines.cli.common import prepare_dagster_home

    prepare_dagster_home()
    state = {"inputs": "a"}
    asked: list[list[str]] = []
    monkeypatch.setattr(run, "tables_stamp", lambda names, profile, instance=None: dict(state))
    monkeypatch.setattr(run, "_materialize", lambda keys, console, **kw: asked.append(list(keys)) or True)

    def go(force: bool = False) -> list[str]:
        assert run.run_reports(Console(quiet=True), 1, simulate=False, reproduction=False, force=force) == 0
        return asked[-1]

    first = go()
    assert "out_sim_results" in first and any(k.startswith("report_") for k in first)
    again = go()  # unchanged: only the chapters (which keep their pages by their own keys)
    assert again == [k for k in first if k.startswith("report_")]
    assert go(force=True) == first
    state["inputs"] = "b"
    assert go() == first
