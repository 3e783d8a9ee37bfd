"""Every simulation is a materialization of a study asset's partition (the one runner of ``varcap sweep``,
``varcap run``, ``varcap reproduce`` and the UI): partitions with per-scenario metadata, cached scenarios
recorded without simulating again, empty chunk slots skipped by the UI's executor, and the capacity and
interval assets upstream of the simulator."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from studies import catalogue, sweep
from studies.catalogue import study


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / ".dagster_home"))
    monkeypatch.delenv("VARCAP_WAREHOUSE", raising=False)
    return tmp_path


def _range_tags(name: str) -> dict[str, str]:
    scs = study(name)
    keys = sweep.partition_keys(scs)
    return {
        "dagster/asset_partition_range_start": keys[scs[0].id],
        "dagster/asset_partition_range_end": keys[scs[-1].id],
    }


def _partition_meta(instance: dg.DagsterInstance, key: dg.AssetKey, pk: str) -> dict:
    recs = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, asset_partitions=[pk]), limit=1
    ).records
    return recs[0].asset_materialization.metadata


def _started(res) -> set[str]:
    return {e.step_key for e in res.all_events if e.event_type_value == "STEP_START"}


def test_materialize_records_partitions_then_cached_scenarios_without_simulating(home: Path) -> None:
    from assets.sim import NoStorageIOManager, partition_metadata, sim_study_asset

    asset = sim_study_asset("smoke")
    scs = study("smoke")
    keys = sweep.partition_keys(scs)
    key = dg.AssetKey("out_sim__smoke")
    with dg.instance_for_test() as instance:
        res = dg.materialize(
            [asset],
            instance=instance,
            resources={"sim_runs_io": NoStorageIOManager()},
            tags=_range_tags("smoke"),
            run_config={"ops": {"out_sim__smoke": {"ops": {"plan_smoke": {"config": {"chunks": 2}}}}}},
        )
        assert res.success
        assert instance.get_materialized_partitions(key) == set(keys.values())
        first = {}
        for sid, pk in keys.items():
            meta = _partition_meta(instance, key, pk)
            assert meta["scenario_id"].value == sid and meta["cache_hit"].value is False
            row = sweep.cached_result(next(s for s in scs if s.id == sid))
            # the partition shows the stored run's wall time, a smoke scenario's few milliseconds included
            assert meta["jobs"].value > 0 and row["wall_s"] > 0
            assert meta["sim_wall_s"].value == pytest.approx(row["wall_s"], abs=5e-5)
            assert partition_metadata({**row, "wall_s": 0.0031}, pk)["sim_wall_s"] == 0.0031
            first[sid] = row["finished_at"]
        assert {k for k in _started(res) if "sim_chunk" in k} == {
            "out_sim__smoke.sim_chunk_0",
            "out_sim__smoke.sim_chunk_1",
        }
        # again: every partition is recorded again (a new materialization, marked cache_hit), none simulated
        again = dg.materialize(
            [asset],
            instance=instance,
            resources={"sim_runs_io": NoStorageIOManager()},
            tags=_range_tags("smoke"),
        )
        assert again.success
        assert not {k for k in _started(again) if "sim_chunk" in k}, _started(again)
        mats = [e for e in again.get_asset_materialization_events() if e.asset_key == key]
        assert {e.partition for e in mats} == set(keys.values())
        for sid, pk in keys.items():
            meta = _partition_meta(instance, key, pk)
            assert meta["cache_hit"].value is True and meta["scenario_id"].value == sid
            row = sweep.cached_result(next(s for s in scs if s.id == sid))
            assert row["finished_at"] == first[sid]  # not simulated again

        # the UI's executor (multi_or_in_process) starts no process for an unused chunk slot: with two of
        # the four scenarios to simulate and four slots asked for, two chunk steps run and two are skipped
        runs = sweep.runs_dir()
        for sc in scs[:2]:
            shutil.rmtree(runs / sc.id)
        from pipelines.definitions import ui_asset_job  # noqa: F401 — reconstructable target

        job = dg.build_reconstructable_job(
            "pipelines.definitions", "ui_asset_job", reconstructable_args=("smoke",)
        )
        with dg.execute_job(
            job,
            instance=instance,
            tags=_range_tags("smoke"),
            run_config={
                "execution": {"config": {"multiprocess": {"max_concurrent": 2}}},
                "ops": {"out_sim__smoke": {"ops": {"plan_smoke": {"config": {"chunks": 4}}}}},
            },
        ) as ui:
            assert ui.success
            chunks = {k for k in _started(ui) if "sim_chunk" in k}
            skipped = {e.step_key for e in ui.all_events if e.event_type_value == "STEP_SKIPPED"}
        assert len(chunks) == 2, chunks
        assert {"out_sim__smoke.sim_chunk_2", "out_sim__smoke.sim_chunk_3"} <= skipped
        assert all(sweep.is_cached(sc) for sc in scs)


def test_an_empty_chunk_returns_before_simulating(monkeypatch: pytest.MonkeyPatch) -> None:
    """On an executor that runs every step (dask), an unused slot gets ``[]`` and returns at once."""
    from assets import sim

    monkeypatch.setattr(sweep, "run_scenario", lambda sc: pytest.fail("simulated an empty chunk"))
    sim.simulate_chunk(dg.build_op_context(), [])


def test_study_assets_depend_on_the_data_their_scenarios_read() -> None:
    """A study asset's parents are the assets that write what its scenarios read (workload exports, grid
    signal exports, spot traces), nothing more: capacity traces and IAS's interval model are built in the
    scenario's process (the code is shared with the capacity and interval assets, not their tables)."""
    from assets.sim import GRID_SIGNALS, SIM_INPUTS, SPOT_ASSET, scenario_deps
    from pipelines.definitions import defs
    from studies.catalogue import study

    graph = defs.resolve_asset_graph()

    def parents(name: str) -> set[str]:
        return {k.to_user_string() for k in graph.get(dg.AssetKey(name)).parent_keys}

    ias = parents("out_sim__repro_thesis_ch6")
    assert ias == {SIM_INPUTS}  # the azure/borg templates; no capacity, interval, carbon or spot asset
    for base in ("repro-thesis-ch6", "repro-thesis-ch4", "repro-riskaware", "repro-grids", "spot-real"):
        # one asset holds both profiles: it reads what the scenarios of either read
        want = {d for name in (base, f"{base}-quick") for sc in study(name) for d in scenario_deps(sc)}
        assert parents(f"out_sim__{base.replace('-', '_')}") == want, base
    assert GRID_SIGNALS in parents("out_sim__repro_grids")  # carbon-budget capacity of observed grids
    assert SPOT_ASSET in parents("out_sim__spot_real")


def test_scenario_deps_follow_the_inputs_a_scenario_reads() -> None:
    from assets.sim import GRID_SIGNALS, SIM_INPUTS, SPOT_ASSET, scenario_deps
    from studies.scenarios import Scenario, walk
    from studies.signals import GRIDS

    grid = next(iter(GRIDS))
    budget = {"kind": "carbon_budget", "grid": grid, "signal": GRIDS[grid]}
    assert scenario_deps(Scenario("synthetic-uniform", walk(1.0, 0.2))) == []
    assert scenario_deps(Scenario("azure", walk(1.0, 0.2))) == [SIM_INPUTS]
    assert scenario_deps(Scenario("azure", budget)) == [SIM_INPUTS, GRID_SIGNALS]
    assert scenario_deps(Scenario("synthetic-uniform", {"kind": "spot", "trace": "x"})) == [SPOT_ASSET]
    pool = {"kind": "pool", "of": {"kind": "spot", "trace": "x"}}
    assert scenario_deps(Scenario("synthetic-uniform", pool)) == [SPOT_ASSET]  # a nested spec counts


def test_reproduce_quick_leaves_the_study_partitions_materialized(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``varcap reproduce --quick`` simulates through the study assets (one small study here: the
    riskaware quick study; Harmony's rows have their own tests)."""
    from pipelines.cli import main
    from pipelines.cli import run as run_cli
    from studies import reproduction as repro

    name = "repro-riskaware-quick"
    monkeypatch.setattr(repro, "profile_studies", lambda pr: [name])
    monkeypatch.setattr(run_cli, "run_harmony", lambda study, show=True: True)
    assert main(["reproduce", "--quick", "--workers", "2"]) == 0
    keys = catalogue.partition_keys(name)
    assert all(k.startswith("quick/") for k in keys.values())  # the profile is the key's first segment
    instance = dg.DagsterInstance.get()
    key = dg.AssetKey("out_sim__repro_riskaware")
    # the quick partitions only: the full profile's partitions of the same asset are left alone
    assert instance.get_materialized_partitions(key) == set(keys.values())
    for sid, pk in keys.items():
        assert _partition_meta(instance, key, pk)["scenario_id"].value == sid
    assert instance.get_latest_materialization_event(dg.AssetKey("out_sim_results")) is not None
    assert instance.get_latest_materialization_event(dg.AssetKey("out_reproduction")) is not None


def test_a_report_partition_stands_on_its_profile_only_and_is_green_once_its_upstream_is() -> None:
    """The lineage check of ``python -m pipelines.lineage``: report_ch6_ias[quick] reaches raw → core →
    sim (no capacity or interval asset: the studies read the simulator's code, not those tables) (the quick studies' partitions of its own studies, none of the full ones);
    it is green only once every one of those asset partitions has a materialization."""
    from pipelines.definitions import defs
    from pipelines.lineage import report_lineage

    graph = defs.resolve_asset_graph()
    report = dg.AssetKey("report_ch6_ias")
    with dg.instance_for_test() as instance:
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=report, partition="quick"))
        lineages, unrendered = report_lineage(instance, defs)
        assert "report_ch6_ias" not in unrendered and "report_ch2_capacity" in unrendered
        (lin,) = [x for x in lineages if x.report == "report_ch6_ias"]
        assert lin.partition == "quick"
        groups = {graph.get(dg.AssetKey(a)).group_name for a in lin.upstream}
        assert {"raw", "core", "sim", "reports"} <= groups
        assert not {"capacity", "intervals"} & groups
        # the quick studies with every partition; no full study partition, no sweep study, no
        # out_sim_results (its sweep studies are never run by make run)
        from assets.sim import study_asset_name

        for name in ("repro-thesis-ch6-quick", "repro-generic-quick"):
            assert lin.upstream[study_asset_name(name)] == set(study_partition_keys(name))
            assert all(k.startswith("quick/") for k in lin.upstream[study_asset_name(name)])
        assert "out_sim_results" not in lin.upstream
        assert "out_study_results" not in lin.upstream  # it reads its own studies' runs
        assert len(lin.missing) == lin.partitions  # nothing upstream materialized yet
        for a, pks in lin.upstream.items():
            for pk in pks:
                if (a, pk) != ("core_jobs", None):
                    instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=a, partition=pk))
        (lin,) = [x for x in report_lineage(instance, defs)[0] if x.report == "report_ch6_ias"]
        assert lin.missing == [("core_jobs", None)]  # the check names what is missing
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key="core_jobs"))
        (lin,) = [x for x in report_lineage(instance, defs)[0] if x.report == "report_ch6_ias"]
        assert lin.missing == []


def study_partition_keys(name: str) -> list[str]:
    return list(catalogue.partition_keys(name).values())


def test_varcap_run_materializes_every_asset_upstream_of_the_reports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What `varcap run` selects — its first half, the quick study assets, Harmony's assets, then the
    results and reports at partition quick — covers every asset upstream of every report (a report
    reading a table `varcap run` leaves out would show a missing upstream in the UI)."""
    from rich.console import Console

    from assets.sim import study_asset_name
    from pipelines.cli import run as run_cli
    from pipelines.cli import sweeps as sweeps_cli
    from pipelines.definitions import defs
    from studies import reproduction as repro

    calls: list[tuple[list[str], str | None]] = []

    def fake_materialize(keys, console, ops_config=None, partition_key=None) -> bool:
        calls.append((list(keys), partition_key))
        return True

    monkeypatch.setattr(run_cli, "_materialize", fake_materialize)
    monkeypatch.setattr(run_cli, "_has_tables", lambda names: True)
    monkeypatch.setattr(run_cli, "tables_stamp", lambda names, profile, instance=None: None)  # never kept
    assert run_cli.run_reports(Console(quiet=True), 1, simulate=False, with_profiled_first_half=True) == 0
    graph = defs.resolve_asset_graph()
    done = {k.to_user_string() for k in run_cli.first_half().resolve(graph)}
    done |= {study_asset_name(n) for n in run_cli.quick_studies()} | set(sweeps_cli.HARMONY_ASSETS)
    ((rendered, pk),) = calls
    assert pk == "quick"
    done |= set(rendered)
    reports = [k for k in graph.get_all_asset_keys() if k.to_user_string().startswith("report_")]
    assert {k.to_user_string() for k in reports} <= set(rendered)
    for key in reports:
        upstream = {k.to_user_string() for k in graph.upstream_key_iterator(key)}
        # the full-profile-only study assets (none now: a profiled study's asset holds both profiles and
        # `varcap run` materializes its quick partitions) are upstream only of the full partitions
        upstream -= {study_asset_name(n) for n in repro.profile_studies(repro.FULL)} - done
        assert upstream <= done, (key.to_user_string(), sorted(upstream - done))


def test_varcap_runs_first_half_holds_no_partitioned_asset() -> None:
    """`varcap run`'s first half is one unpartitioned run: a profile-partitioned asset in it fails the run
    ("Cannot access partition_key for a non-partitioned run"); those assets go with the reports instead."""
    from pipelines.cli import run as run_cli
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    partitioned = [
        k.to_user_string()
        for k in run_cli.first_half().resolve(graph)
        if graph.get(k).partitions_def is not None
    ]
    assert partitioned == []
    assert "out_backtest" in run_cli.profiled_first_half()


def test_profile_partitioned_assets_share_one_partitions_definition() -> None:
    """Every asset partitioned by profile uses one definition (same keys, same order): `varcap run`
    materializes them in one run at its profile, which Dagster refuses for two different definitions
    ("Failed to resolve asset job")."""
    import dagster as dg

    from assets.reproduction import PROFILE_PARTITIONS
    from pipelines.cli import run as run_cli
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    profiled = [
        k
        for k in graph.get_all_asset_keys()
        if isinstance(graph.get(k).partitions_def, dg.StaticPartitionsDefinition)
        and set(graph.get(k).partitions_def.get_partition_keys()) == {"quick", "full"}
    ]
    assert len(profiled) > 3
    for k in profiled:
        assert graph.get(k).partitions_def == PROFILE_PARTITIONS, k.to_user_string()
    keys = [*run_cli.profiled_first_half(), "out_sim_results", *run_cli.report_keys()]
    job = defs.resolve_implicit_global_asset_job_def()
    job.get_subset(asset_selection={dg.AssetKey(k) for k in keys})  # resolves as one job


def test_a_study_job_runs_the_whole_study_in_one_run_as_the_cli_does(home: Path) -> None:
    """``study__<study>`` needs no partition, range or config from the launchpad: its own tags cover every
    partition, its plan step simulates them (no chunk steps), and the same run rebuilds the results."""
    from pipelines.definitions import STUDY_JOBS, with_current_resources

    job = with_current_resources(STUDY_JOBS["smoke"])
    keys = catalogue.partition_keys("smoke")
    with dg.instance_for_test() as instance:
        res = job.execute_in_process(instance=instance)
        assert res.success
        assert instance.get_materialized_partitions(dg.AssetKey("out_sim__smoke")) == set(keys.values())
        assert not {k for k in _started(res) if "sim_chunk" in k}
        assert "out_sim_results" in _started(res)
        assert all(sweep.is_cached(sc) for sc in study("smoke"))
