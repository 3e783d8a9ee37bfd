"""The scenario time budget: a scenario that ran past it is recorded, not tried again under the same code,
inputs and budget, and the reproduction reports it as not run (never as a result or a degenerate run)."""

from __future__ import annotations

import time
from pathlib import Path

import polars as pl
import pytest

from pipelines.cli import docs_results
from studies import budget, sweep
from studies import reproduction as repro
from studies.catalogue import study
from studies.claims import QUICK, Runs
from studies.generalization_claims import claims as gc


def test_a_mark_holds_for_its_code_inputs_and_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sc = study("smoke")[0]
    runs, inputs = tmp_path / "runs", tmp_path / "in"
    assert budget.over_budget(sc, inputs=inputs, out=runs) is None
    budget.record(sc, 600.0, inputs, runs)
    assert budget.over_budget(sc, inputs=inputs, out=runs) == 600.0
    assert budget.over_budget(sc, 600.0, inputs, runs) == 600.0  # the same budget: not tried again
    assert budget.over_budget(sc, 300.0, inputs, runs) == 600.0  # a smaller one neither
    assert budget.over_budget(sc, 900.0, inputs, runs) is None  # a larger budget tries it
    budget.record(sc, 300.0, inputs, runs)  # a smaller budget recorded later keeps the larger one
    assert budget.over_budget(sc, inputs=inputs, out=runs) == 600.0
    # other code: the mark is stale
    monkeypatch.setattr(sweep, "code_version", lambda: "changed")
    assert budget.over_budget(sc, inputs=inputs, out=runs) is None
    monkeypatch.undo()
    # a valid result wins over any mark
    sweep.run_scenario(sc, inputs, runs)
    assert budget.over_budget(sc, inputs=inputs, out=runs) is None
    # an unreadable mark is no mark
    (runs / "x").mkdir()
    (runs / "x" / budget.MARK).write_text("{oops")
    assert budget._read(runs / "x" / budget.MARK) is None


def test_run_many_reports_a_timeout_the_budget_recognises(monkeypatch: pytest.MonkeyPatch) -> None:
    sc = study("smoke")[0]

    def slow(s, inputs=None, out=None):
        while True:  # Python code: the in-process timer interrupts it
            time.sleep(0.01)

    monkeypatch.setattr(sweep, "run_scenario", slow)
    seen: list[str | None] = []
    errors = sweep.run_many([sc], 1, lambda s, row, err: seen.append(err), timeout_s=0.2)
    assert len(errors) == 1 and budget.is_timeout(errors[0]) and budget.is_timeout(seen[0])
    assert not budget.is_timeout(f"{sc.id} {sc.label()}: ValueError: bad") and not budget.is_timeout(None)


def _runs(pr, skip: set) -> Runs:
    return {
        s.id: {"metrics": {"terminations": 5.0, "goodput": 0.7, "goodput_partial": 0.7}}
        for k, s in gc.gen_scenarios(pr).items()
        if k not in skip
    }


def test_an_instance_over_budget_is_not_run_not_degenerate(monkeypatch: pytest.MonkeyPatch) -> None:
    pr = QUICK
    n = len(gc.gen_instances(pr))
    sc = gc.gen_scenarios(pr)
    over = sc[("slacksched", "policy", 1)]
    runs = _runs(pr, {("slacksched", "policy", 1), ("slacksched", "policy", 2)})
    monkeypatch.setattr(gc, "_mean_jct", lambda runs, b, s: (100.0, 90.0))  # SlackSched faster
    marked = {over.id: 900.0}
    monkeypatch.setattr(budget, "over_budget", lambda s, *a, **k: marked.get(s.id))
    # instance 2's policy run is missing without a mark: the row cannot be computed
    with pytest.raises(repro.MissingRuns):
        gc._share("slacksched")(pr, runs)
    marked[sc[("slacksched", "policy", 2)].id] = 600.0
    share = gc._share("slacksched")(pr, runs)["default"]
    assert share[0] == 100.0 and share[1] != share[1] and share[2] != share[2]
    reasons = gc._reasons("slacksched")(pr, runs)
    assert reasons[1] == "not run: over the 900 s scenario budget"
    t = gc.instance_table(pr, runs).filter(pl.col("claim") == gc.ROW_IDS["slacksched"])
    assert t.height == n and t["holds"].to_list()[1:3] == [None, None]
    assert t["degenerate_reason"].to_list()[2] == "not run: over the 600 s scenario budget"
    h = next(x for x in repro.HEADLINES if x.id == gc.ROW_IDS["slacksched"])
    monkeypatch.setattr(repro, "HEADLINES", [h])
    row = repro.reproduction_rows(pr, runs).row(0, named=True)
    assert (row["n_decisive"], row["n_degenerate"], row["n_not_run"]) == (n - 2, 0, 2)
    assert row["varcap_mean"] == 100.0 and row["within_band"]
    assert "2 not run (over the 900 s scenario budget), left out" in row["flag"]
    assert docs_results.decisive_text(row) == f"{n - 2}/{n}, 2 not run"
    # every instance over budget: no value, "not run", never "in band"
    for i in range(n):
        marked[sc[("slacksched", "policy", i)].id] = 900.0
    runs = _runs(pr, {("slacksched", "policy", i) for i in range(n)})
    row = repro.reproduction_rows(pr, runs).row(0, named=True)
    assert row["n_not_run"] == n and not row["within_band"] and row["verdict"] == "not run"


def test_a_study_records_a_scenario_over_budget_and_does_not_try_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dagster as dg

    from assets.sim import NoStorageIOManager, sim_study_asset

    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / ".dagster_home"))
    monkeypatch.delenv("VARCAP_WAREHOUSE", raising=False)
    monkeypatch.setenv("VARCAP_SCENARIO_TIMEOUT_S", "10")  # the real smoke scenarios take a second or two
    scs = study("smoke")
    slow_id = scs[1].id
    real, calls = sweep.run_scenario, []

    def run(sc, inputs=None, out=None):
        calls.append(sc.id)
        while sc.id == slow_id:  # Python code: the in-process timer ends it
            time.sleep(0.01)
        return real(sc, inputs, out)

    monkeypatch.setattr(sweep, "run_scenario", run)
    keys = sweep.partition_keys(scs)
    tags = {
        "dagster/asset_partition_range_start": keys[scs[0].id],
        "dagster/asset_partition_range_end": keys[scs[-1].id],
    }
    config = {"ops": {"out_sim__smoke": {"ops": {"plan_smoke": {"config": {"local_workers": 1}}}}}}
    key = dg.AssetKey("out_sim__smoke")
    with dg.instance_for_test() as instance:
        for attempt in (1, 2):
            calls.clear()
            res = dg.materialize(
                [sim_study_asset("smoke")],
                instance=instance,
                resources={"sim_runs_io": NoStorageIOManager()},
                tags=tags,
                run_config=config,
            )
            assert res.success  # a scenario over budget does not fail the study
            assert budget.over_budget(scs[1], 10.0) == 10.0 and not sweep.is_cached(scs[1])
            assert all(sweep.is_cached(s) for s in scs if s.id != slow_id)
            # the first run tried every scenario; the second none (the others are cached, the slow one marked)
            assert sorted(calls) == (sorted(s.id for s in scs) if attempt == 1 else [])
        rec = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=key, asset_partitions=[keys[slow_id]]), limit=1
        ).records
        assert rec[0].asset_materialization.metadata["not_run"].value == "over the 10 s scenario budget"
    # a larger budget tries it again
    monkeypatch.setenv("VARCAP_SCENARIO_TIMEOUT_S", "11")
    assert budget.over_budget(scs[1], sweep.scenario_timeout_s()) is None
