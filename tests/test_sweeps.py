"""Scenario catalogue, cached scenario runs, and sweep runs on the multiprocess and dask executors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from studies import sweep
from studies.catalogue import STUDIES, all_scenarios, study
from studies.scenarios import Scenario


def test_catalogue_sizes_and_stable_unique_ids() -> None:
    sizes = {name: len(study(name)) for name in STUDIES}
    assert sizes["thesis-ch4-synthetic"] == 48 and sizes["thesis-ch6-ias"] == 18 and sizes["smoke"] == 4
    assert sizes["thesis-ch6-aggressiveness"] == 81 and sizes["thesis-grids"] == 6
    # the id is a hash of the parameters: equal parameters, equal id; any change, another id
    a = Scenario("azure", {"kind": "random_walk", "changes_per_hour": 1.0, "step": 0.15})
    b = Scenario("azure", {"step": 0.15, "changes_per_hour": 1.0, "kind": "random_walk"})
    assert a.id == b.id and len(a.id) == 12
    assert Scenario("azure", a.capacity, seed=1).id != a.id
    assert Scenario.from_params(a.params()) == a
    # a setting equal to the policy default is the same simulation, hence the same id
    assert Scenario("azure", a.capacity, "ff", {"termination": "lifo"}).id == a.id
    assert Scenario("azure", a.capacity, "ff", {"termination": "lww"}).id != a.id
    # shared scenarios are one scenario: ch6 ias at A = 0.6 is also in the aggressiveness study
    ch6 = {s.id for s in study("thesis-ch6-ias")}
    agg = {s.id for s in study("thesis-ch6-aggressiveness")}
    assert len(ch6 & agg) == 9
    assert len(all_scenarios()) < sum(sizes.values())
    with pytest.raises(KeyError, match="unknown study"):
        study("nope")


def test_run_scenario_caches_on_code_and_input_versions(tmp_path: Path, monkeypatch) -> None:
    sc = study("smoke")[0]
    first = sweep.run_scenario(sc, tmp_path / "in", tmp_path / "runs")
    assert not first["cache_hit"] and (tmp_path / "runs" / sc.id / "jobs.parquet").is_file()
    again = sweep.run_scenario(sc, tmp_path / "in", tmp_path / "runs")
    assert again["cache_hit"] and again["metrics"] == first["metrics"]
    monkeypatch.setattr(sweep, "code_version", lambda: "changed")
    assert not sweep.run_scenario(sc, tmp_path / "in", tmp_path / "runs")["cache_hit"]
    # a scenario that reads warehouse exports fails clearly without them
    with pytest.raises(FileNotFoundError, match="out_sim_inputs"):
        sweep.run_scenario(study("thesis-ch4-synthetic")[0], tmp_path / "in", tmp_path / "runs")


def test_cache_trusts_only_what_it_can_read(tmp_path: Path) -> None:
    sc = study("smoke")[0]
    runs, inputs = tmp_path / "runs", tmp_path / "in"
    first = sweep.run_scenario(sc, inputs, runs)
    jobs = runs / sc.id / "jobs.parquet"
    assert first["jobs_bytes"] == jobs.stat().st_size and first["jobs_sha256"] == sweep.file_sha256(jobs)
    # a truncated per-job file is not a cache hit: the scenario is simulated again
    jobs.write_bytes(jobs.read_bytes()[:100])
    again = sweep.run_scenario(sc, inputs, runs)
    assert not again["cache_hit"] and again["metrics"] == first["metrics"]
    assert sweep.run_scenario(sc, inputs, runs)["cache_hit"]
    # same size, other bytes: the sha256 catches it
    data = bytearray(jobs.read_bytes())
    data[len(data) // 2] ^= 0xFF
    jobs.write_bytes(bytes(data))
    assert not sweep.run_scenario(sc, inputs, runs)["cache_hit"]
    # an unreadable run.json is recomputed too
    (runs / sc.id / "run.json").write_text("{not json")
    assert not sweep.run_scenario(sc, inputs, runs)["cache_hit"]


def test_scan_runs_reports_a_bad_directory_by_path_and_skips_it(tmp_path: Path) -> None:
    a, b = study("smoke")[:2]
    runs = tmp_path / "runs"
    for sc in (a, b):
        sweep.run_scenario(sc, tmp_path / "in", runs)
    (runs / b.id / "run.json").write_text('{"scenario_id": "x"')  # cut short
    (runs / "0123456789ab").mkdir()
    (runs / "0123456789ab" / "run.json").write_text("[]")  # valid JSON, not a run
    rows, problems = sweep.scan_runs(out=runs)
    assert [r["scenario_id"] for r in rows] == [a.id]
    assert len(problems) == 2 and any(str(runs / b.id / "run.json") in p for p in problems)
    assert [r["scenario_id"] for r in sweep.load_runs(out=runs)] == [a.id]  # warns, does not raise


def test_partition_keys_are_readable_unique_and_valid() -> None:
    for name in STUDIES:
        scs = study(name)
        keys = sweep.partition_keys(scs)
        assert len(set(keys.values())) == len(scs), name
        for sc in scs:
            k = keys[sc.id]
            assert k.split("/")[0].split()[0] == sc.policy and sc.workload in k, k
            assert not any(bad in k for bad in (",", "[", "]", "...", "\n")), k
    assert sweep.partition_keys(study("smoke"))[study("smoke")[1].id] == "ias/zipf-1.5/rw f=1"


def test_cli_lists_studies_and_policies(capsys) -> None:
    from pipelines.cli import main

    assert main(["studies"]) == 0
    out = capsys.readouterr().out
    assert "thesis-ch4-synthetic" in out and "smoke" in out
    assert main(["studies", "smoke"]) == 0
    assert "ias/zipf-1.5/rw f=4" in capsys.readouterr().out
    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    assert "aggressiveness=0.6" in out and "termination=lifo" in out and "slacksched-nodelay" in out
    # a bad policy or parameter is refused before any data is read (the jobs file does not exist)
    args = ["simulate", "--jobs", "missing.csv", "--capacity", "random-walk", "--machines", "2"]
    args += ["--cores", "2", "--horizon-s", "100"]
    assert main([*args, "--policy", "nope"]) == 2
    assert "unknown policy 'nope'" in capsys.readouterr().err
    assert main([*args, "--policy", "ias", "--set", "foo=1"]) == 2
    assert "no parameter 'foo'" in capsys.readouterr().err


def _sweep(home: Path, executor: str, run_config: dict) -> dict[str, dict]:
    """Run the smoke study's sweep job over all its partitions; return run.json rows by scenario id."""
    scs = study("smoke")
    ids = [s.id for s in scs]
    keys = sweep.partition_keys(scs)
    # the reconstructable targets `varcap sweep` runs: the dask workers rebuild the study's job alone
    job = (
        dg.build_reconstructable_job(
            "pipelines.dask_sweep", "dask_sweep_job", reconstructable_args=("smoke",)
        )
        if executor == "dask"
        else dg.build_reconstructable_job(
            "pipelines.definitions", "sweep_job", reconstructable_args=("smoke",)
        )
    )
    tags = {
        "dagster/asset_partition_range_start": keys[ids[0]],
        "dagster/asset_partition_range_end": keys[ids[-1]],
    }
    with dg.instance_for_test() as instance:
        with dg.execute_job(job, instance=instance, run_config=run_config, tags=tags) as res:
            assert res.success
        # every partition shows as materialized (what the UI's partition bar reads), with its own metadata
        key = dg.AssetKey("out_sim__smoke")
        assert instance.get_materialized_partitions(key) == set(keys.values())
        for sid, pk in keys.items():
            recs = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=key, asset_partitions=[pk]), limit=1
            ).records
            meta = recs[0].asset_materialization.metadata
            assert meta["scenario_id"].value == sid and meta["scenario"].value == pk
            assert meta["policy"].value == pk.split("/")[0] and meta["jobs"].value > 0
        if executor == "multiprocess":
            # the same run rebuilt the results table (dask's job leaves it to `varcap sweep`: see sweep_job)
            assert instance.get_latest_materialization_event(dg.AssetKey("out_sim_results")) is not None
            with duckdb.connect(str(home / "data" / "warehouse.duckdb"), read_only=True) as con:
                got = {r[0] for r in con.execute("select scenario_id from out_sim_results").fetchall()}
            assert got == set(ids)
        if executor == "multiprocess":  # fully cached: plan, summary and results only, no chunk step starts
            with dg.execute_job(job, instance=instance, run_config=run_config, tags=tags) as res:
                assert res.success
                ran = {e.step_key for e in res.all_events if e.event_type_value == "STEP_START"}
            sims = {k for k in ran if k.startswith("out_sim__smoke.")}
            assert sims == {"out_sim__smoke.plan_smoke", "out_sim__smoke.summarize_smoke"}, ran
            assert "out_sim_results" in ran
    return {r["scenario_id"]: r for r in sweep.load_runs(ids, home / "data" / "sim" / "runs")}


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / ".dagster_home"))
    monkeypatch.delenv("VARCAP_WAREHOUSE", raising=False)
    return tmp_path


@pytest.mark.slow  # a dask LocalCluster and a multiprocess sweep of the same study
def test_sweep_multiprocess_then_dask_give_the_same_metrics(home: Path, monkeypatch) -> None:
    from distributed import LocalCluster

    from pipelines.cli import sweep_run_config

    mp = _sweep(home, "multiprocess", sweep_run_config("multiprocess", 2, None, "smoke"))
    assert len(mp) == 4 and len({r["code_version"] for r in mp.values()}) == 1
    other = home / "dask"
    other.mkdir()
    monkeypatch.setenv("VARCAP_HOME", str(other))  # fresh results dir: no cache hits
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        dk = _sweep(other, "dask", sweep_run_config("dask", 2, cluster.scheduler_address, "smoke"))
    assert dk.keys() == mp.keys()
    for k in mp:
        assert dk[k]["metrics"] == pytest.approx(mp[k]["metrics"], nan_ok=True)
        assert dk[k]["params"] == mp[k]["params"]


@pytest.mark.slow  # a dask LocalCluster started by `varcap sweep`
def test_sweep_cli_on_dask_rebuilds_its_rows_of_the_results(home: Path) -> None:
    """``varcap sweep --executor dask``: the cluster's job leaves ``out_sim_results`` out, and the sweep
    rebuilds the study's rows of it afterwards from the results asset alone."""
    import dagster as dg

    from pipelines.cli import main

    assert main(["sweep", "smoke", "--max-workers", "2", "--executor", "dask"]) == 0
    with duckdb.connect(str(home / "data" / "warehouse.duckdb"), read_only=True) as con:
        rows = con.execute("select scenario_id from out_sim_results").fetchall()
    assert {r[0] for r in rows} == {s.id for s in study("smoke")}
    with dg.DagsterInstance.get() as instance:
        assert instance.get_latest_materialization_event(dg.AssetKey("out_sim_results")) is not None


def test_sweep_cli_end_to_end_and_results_export(home: Path) -> None:
    from pipelines.cli import main

    assert main(["sweep", "smoke", "--max-workers", "2"]) == 0
    first = {r["scenario_id"]: r["finished_at"] for r in sweep.load_runs()}
    with duckdb.connect(str(home / "data" / "warehouse.duckdb"), read_only=True) as con:
        n, policies = con.execute("select count(*), count(distinct policy) from out_sim_results").fetchone()
    assert (n, policies) == (4, 2)
    from analysis.charts import save_png, sweep_grid
    from analysis.warehouse import connect, sweep_results

    res = sweep_results(connect(home / "data" / "warehouse.duckdb"))
    assert res.height == 4 and set(res["changes_per_hour"]) == {1.0, 4.0}
    assert save_png(sweep_grid(res, "terminations"), home / "g.png").stat().st_size > 10_000
    out = home / "smoke.csv"
    assert main(["results", "smoke", "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 5
    # re-running an unchanged study is a cache hit: no scenario is simulated again; an unreadable run
    # directory of another scenario is skipped (reported by path), not fatal
    bad = home / "data" / "sim" / "runs" / "0123456789ab"
    bad.mkdir()
    (bad / "run.json").write_text("{truncated")
    assert main(["sweep", "smoke", "--max-workers", "2"]) == 0
    assert {r["scenario_id"]: r["finished_at"] for r in sweep.load_runs()} == first
    assert json.loads((home / "data" / "sim" / "runs" / next(iter(first)) / "run.json").read_text())[
        "metrics"
    ]
    assert os.environ["VARCAP_HOME"] == str(home)


def test_results_table_rebuilds_after_a_study_materializes_from_the_ui() -> None:
    """out_sim_results' automation condition: requested once after any study partition materializes."""
    from pipelines.definitions import defs

    key = next(iter(sweep.partition_keys(study("smoke")).values()))
    results = dg.AssetKey("out_sim_results")
    with dg.instance_for_test() as instance:
        r = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        assert r.get_num_requested(results) == 0
        instance.report_runless_asset_event(dg.AssetMaterialization("out_sim__smoke", partition=key))
        r = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=r.cursor)
        assert r.total_requested == 1 and r.get_num_requested(results) == 1
        r = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=r.cursor)
        assert r.total_requested == 0  # handled: not requested again until a study updates again


def test_dask_sizes_step_results_without_a_warning(caplog) -> None:
    """dask walks a task's result as a tuple; a Dagster event holds records that refuse iteration, and each
    step result printed a "Sizeof calculation ... failed" warning line until pipelines.dask_worker sized
    events by themselves."""
    from distributed.sizeof import safe_sizeof

    import pipelines.dask_worker  # noqa: F401 — registers the event size (the workers' preload)

    @dg.asset
    def one() -> int:
        return 1

    events = dg.materialize([one]).all_events
    assert any(e.asset_key is not None for e in events)  # events holding an AssetKey record
    with caplog.at_level("WARNING"):
        assert safe_sizeof(events) > 0 and safe_sizeof({"step": events}) > 0
    assert not [r for r in caplog.records if "Sizeof" in r.getMessage()]


def test_plan_local_workers_come_from_config_then_the_run_tag() -> None:
    """The UI's study jobs ask for local workers by run tag (a partitioned job's config is per partition)."""
    from assets.sim import LOCAL_WORKERS_TAG, PlanConfig, local_workers

    assert local_workers(PlanConfig(), {}) == 0
    assert local_workers(PlanConfig(), {LOCAL_WORKERS_TAG: "3"}) == 3
    assert local_workers(PlanConfig(local_workers=2), {LOCAL_WORKERS_TAG: "3"}) == 2
    with pytest.raises(ValueError, match=LOCAL_WORKERS_TAG):
        local_workers(PlanConfig(), {LOCAL_WORKERS_TAG: "all"})


def test_every_study_has_a_one_run_job_whose_tags_cover_its_partitions() -> None:
    from pipelines.definitions import STUDY_JOBS, defs
    from studies.catalogue import STUDIES, partition_keys

    assert set(STUDY_JOBS) == set(STUDIES)
    for name in ("smoke", "repro-riskaware-quick"):
        keys = list(partition_keys(name).values())
        tags = defs.resolve_job_def(STUDY_JOBS[name].name).run_tags
        assert (tags["dagster/asset_partition_range_start"], tags["dagster/asset_partition_range_end"]) == (
            keys[0],
            keys[-1],
        )


def test_dask_sweep_job_has_a_step_slot_per_worker_only() -> None:
    """dagster-dask submits every step, each capturing its output through processes of its own: the dask
    job of a sweep on 2 workers has 2 simulation steps, not the UI's 32 optional slots."""
    from assets.sim import MAX_CHUNKS
    from pipelines.dask_sweep import dask_sweep_job

    def slots(job) -> int:
        return sum(h.name.startswith("sim_chunk_") for h in job.graph.iterate_node_handles())

    assert slots(dask_sweep_job("repro-thesis-ch6-quick", 2)) == 2
    assert slots(dask_sweep_job("repro-thesis-ch6-quick")) == MAX_CHUNKS
