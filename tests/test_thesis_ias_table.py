"""The thesis' ``ias``/``ias-general`` studies as catalogue studies (stable ids, the generalization arms
shared with the reproduction) and their table ``out_thesis_ias_instances`` computed from (synthetic)
cached runs: decisive or degenerate, holds, not run, missing; the asset registered with its schema."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from studies.claims import FULL, QUICK
from studies.generalization import IASFacts
from studies.scenarios import Scenario
from studies.signals import GRIDS
from studies.thesis import general, ias_table, observed
from studies.thesis.general import MAIN, cut_pct, holds
from tests.conftest import REPO

DECISIVE = IASFacts(small_jobs=50, variable_machines=8, outliving_jobs=5, ff_terminations=0)


def _run(kills: int, goodput: float, machines: int = 10, jobs: int = 100) -> dict[str, Any]:
    """A ``run.json`` row as the sweep writes it (the fields the table reads)."""
    return {"machines": machines, "metrics": {"terminations": kills, "goodput": goodput, "jobs": jobs}, "wall_s": 1.5}


def _facts(by_instance: dict[str, IASFacts]):  # noqa: ANN202
    """Facts per First-Fit scenario id → ``by_instance``, with First-Fit's terminations filled in."""

    def facts(ff: Scenario, machines: int, ff_kills: int, inputs: Path) -> IASFacts:
        f = by_instance.get(ff.id, DECISIVE)
        return IASFacts(f.small_jobs, f.variable_machines, f.outliving_jobs, ff_kills)

    return facts


@pytest.fixture(autouse=True)
def _no_budget_marks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ias_table, "_over_budget", lambda sc, inputs: None)


# ------------------------------------------------------------------------------------------------ studies
def test_observed_study_ids_are_the_instances_own() -> None:
    """First-Fit's scenario of every instance is :func:`observed_scenarios`' (same id); ``ias`` and
    ``ias-general`` differ only in the policy; quick and full are the module's profiles."""
    for pr in (QUICK, FULL):
        op = observed.PROFILES[pr.name]
        base = observed.observed_scenarios(op)
        sc = observed.study_scenarios(pr)
        assert len(sc) == len(base) * (1 + len(MAIN)) == len(GRIDS) * len(op.workloads) * len(op.seeds) * 3
        for (grid, wl, r), ff in base.items():
            assert sc[(grid, wl, "ff", r)].id == ff.id
            for key in MAIN:
                s = sc[(grid, wl, key, r)]
                assert s.policy == key and s.settings == {} and s.id not in (ff.id,)
                assert Scenario(wl, ff.capacity, key, machines=op.machines, horizon_days=op.days, seed=r).id == s.id
    assert observed.PROFILES["full"] == observed.ObservedProfile(
        40, 30.0, (0, 1, 2, 3, 4), ("pareto-1.5-300-light", "pareto-1.5-3600-light")
    )
    # ids pinned (First-Fit's full one is the id the module's instances had before they were a study):
    # a change of the study's scenarios, which would simulate them again, shows here
    full, quick = observed.study_scenarios(FULL), observed.study_scenarios(QUICK)
    assert full[("ERCOT", "pareto-1.5-300-light", "ff", 0)].id == "c3292607643e"
    assert full[("ERCOT", "pareto-1.5-300-light", "ias-general", 0)].id == "b38f7477b4f0"
    assert quick[("ERCOT", "pareto-1.5-3600-light", "ias-general", 0)].id == "59f2a0a6c2f3"
    assert general.study_scenarios(FULL)[("ias-general", 0)].id == "202e5302380a"


def test_generalization_study_reuses_the_reproductions_runs() -> None:
    """First-Fit's and ``ias``' scenarios are the reproduction's generalization arms (nothing simulated
    twice); the study adds ``ias-general`` on the same instances."""
    from studies.generalization_claims.claims import gen_scenarios

    for pr in (QUICK, FULL):
        repro = {s.id for s in gen_scenarios(pr).values()}
        sc = general.study_scenarios(pr)
        assert len(sc) == pr.gen_instances * 3
        shared = {k: s for k, s in sc.items() if k[0] in ("ff", "ias")}
        assert all(s.id in repro for s in shared.values())
        assert not [s for k, s in sc.items() if k[0] == "ias-general" and s.id in repro]
        for inst in general.study_instances(pr):
            assert sc[("ias-general", inst.index)] == inst.scenario("ias-general")


def test_the_studies_are_in_the_catalogue_in_both_profiles() -> None:
    from studies import catalogue
    from studies import reproduction as repro

    for base, build in ((observed.STUDY, observed.study_scenarios), (general.STUDY, general.study_scenarios)):
        for pr in (QUICK, FULL):
            name = repro.study_name(base, pr)
            assert name in repro.profile_studies(pr)
            assert [s.id for s in catalogue.study(name)] == list(dict.fromkeys(s.id for s in build(pr).values()))
    assert len(catalogue.study("thesis-ias-observed-quick")) == 18  # small enough for `varcap run`


# ------------------------------------------------------------------------------------------------- table
def _quick_units() -> list[ias_table.Unit]:
    return list(ias_table.units(general.STUDY, QUICK))


def test_table_from_synthetic_runs_decisive_degenerate_holds() -> None:
    u0, u1, u2, u3 = _quick_units()
    runs = {
        # decisive: ias cuts 40 % at −1 pp (holds), ias-general terminates more (does not)
        u0.ff.id: _run(10, 0.80), u0.arms["ias"].id: _run(6, 0.79), u0.arms["ias-general"].id: _run(12, 0.81),
        # every job big under H1: degenerate whatever the counts; the cut is still reported
        u1.ff.id: _run(4, 0.70), u1.arms["ias"].id: _run(0, 0.60), u1.arms["ias-general"].id: _run(1, 0.695),
        # First-Fit terminates nothing: no cut (null), never holds
        u2.ff.id: _run(0, 0.90), u2.arms["ias"].id: _run(0, 0.90), u2.arms["ias-general"].id: _run(2, 0.90),
        # ias-general has not run: its row is left out and the scenario reported missing
        u3.ff.id: _run(5, 0.5), u3.arms["ias"].id: _run(5, 0.5),
    }  # fmt: skip
    facts = _facts({u1.ff.id: IASFacts(0, 8, 0, 0)})
    t, missing = ias_table.instance_table(QUICK, runs, Path("/nonexistent"), (general.STUDY,), facts)
    assert list(t.schema.items()) == list(ias_table.SCHEMA.items())
    assert [s.id for s in missing] == [u3.arms["ias-general"].id]
    assert t.height == 7 and set(t["profile"]) == {"quick"} and t["grid"].null_count() == 7
    row = {(r["instance"], r["policy"]): r for r in t.iter_rows(named=True)}

    a, b = row[(u0.instance, "ias")], row[(u0.instance, "ias-general")]
    assert a["decisive"] and a["degenerate_reason"] == "" and a["holds"] is True
    assert a["termination_cut_pct"] == pytest.approx(40.0) and a["goodput_diff_pp"] == pytest.approx(-1.0)
    assert (a["ff_terminations"], a["terminations"], a["jobs"], a["machines"]) == (10, 6, 100, 10)
    assert b["decisive"] and b["holds"] is False and b["termination_cut_pct"] == pytest.approx(-20.0)

    c = row[(u1.instance, "ias")]
    assert not c["decisive"] and c["degenerate_reason"].startswith("every job is big under H1")
    assert c["holds"] is False and c["goodput_diff_pp"] == pytest.approx(-10.0)  # 10 pp lost: does not hold
    assert row[(u1.instance, "ias-general")]["holds"] is True  # holds, but degenerate: not counted
    assert c["small_jobs"] == 0 and c["outliving_jobs"] == 0

    for key in MAIN:
        d = row[(u2.instance, key)]
        assert not d["decisive"] and d["degenerate_reason"] == "First-Fit terminates nothing"
        assert d["termination_cut_pct"] is None and d["holds"] is False
    for r in t.iter_rows(named=True):  # the same rule as an ad-hoc run (run_pair)
        assert r["holds"] == holds(cut_pct(r["ff_terminations"], r["terminations"]), r["goodput_diff_pp"])
        assert r["decisive"] == (r["degenerate_reason"] == "")

    s = {r["policy"]: r for r in ias_table.shares(t).iter_rows(named=True)}
    assert (s["ias"]["n_decisive"], s["ias"]["n_degenerate"], s["ias"]["n_hold"], s["ias"]["hold_pct"]) == (2, 2, 1, 50.0)
    assert (s["ias-general"]["n_decisive"], s["ias-general"]["n_hold"], s["ias-general"]["hold_pct"]) == (1, 0, 0.0)


def test_an_arm_over_the_budget_is_a_not_run_row(monkeypatch: pytest.MonkeyPatch) -> None:
    u = _quick_units()[0]
    monkeypatch.setattr(ias_table, "_over_budget", lambda sc, inputs: 60.0 if sc.id == u.arms["ias"].id else None)
    runs = {u.ff.id: _run(10, 0.8), u.arms["ias-general"].id: _run(3, 0.8)}
    rows, missing = ias_table.unit_rows(u, runs, Path("/nonexistent"), "quick", _facts({}))
    assert not missing and [r["policy"] for r in rows] == ["ias", "ias-general"]
    nr = rows[0]
    assert nr["degenerate_reason"] == "not run: over the 60 s scenario budget" and nr["decisive"] is False
    assert "terminations" not in nr and "holds" not in nr and nr["ff_terminations"] == 10
    t = pl.DataFrame([{c: r.get(c) for c in ias_table.SCHEMA} for r in rows], schema=ias_table.SCHEMA)
    s = ias_table.shares(t).row(0, named=True)
    assert (s["n_decisive"], s["n_degenerate"], s["n_not_run"]) == (0, 0, 1) and s["hold_pct"] is None


def test_real_facts_of_a_generated_instance_match_run_pairs() -> None:
    """Without injected facts the table rebuilds the instance as :func:`run_pair` does (no input file:
    a generated workload under a random walk)."""
    from studies.generalization import ias_decisive, ias_facts
    from studies.scenarios import build_capacity, sized_jobs

    u = min(_quick_units(), key=lambda x: x.ff.machines)
    machines, jobs = sized_jobs(u.ff, Path("/nonexistent"))
    cap = build_capacity(u.ff, Path("/nonexistent"), machines)
    jobs = jobs.filter(pl.col("cores") <= u.ff.cores)
    want = ias_facts(jobs, cap, machines, u.ff.cores, u.ff.horizon_s, 7)
    runs = {u.ff.id: _run(7, 0.8, machines, jobs.height), u.arms["ias"].id: _run(3, 0.8, machines)}
    rows, missing = ias_table.unit_rows(u, runs, Path("/nonexistent"), "quick")
    assert [s.id for s in missing] == [u.arms["ias-general"].id]
    (r,) = rows
    assert (r["small_jobs"], r["outliving_jobs"]) == (want.small_jobs, want.outliving_jobs)
    assert (r["decisive"], r["degenerate_reason"]) == ias_decisive(want)


def _ercot_inputs(tmp_path: Path) -> Path:
    """``grid_carbon.parquet`` holding ERCOT April 2024 (lifecycle intensity, as the pipeline exports it)."""
    raw = pl.read_parquet(REPO / "data/samples/electricitymaps/US-TEX-ERCO_2024_hourly.parquet")
    ts = pl.col("Datetime (UTC)").str.to_datetime("%Y-%m-%d %H:%M:%S", time_zone="UTC")
    start, end = datetime(2024, 4, 1, tzinfo=UTC), datetime(2024, 5, 1, tzinfo=UTC)
    df = (
        raw.select(ts.alias("ts_utc"), pl.col("Carbon Intensity gCO₂eq/kWh (LCA)").cast(pl.Float64).alias("gco2_per_kwh"))
        .filter((pl.col("ts_utc") >= start) & (pl.col("ts_utc") < end))
        .with_row_index("hour")
        .with_columns(pl.lit("ERCOT:" + GRIDS["ERCOT"]).alias("series"), pl.col("hour").cast(pl.Int64))
        .select("series", "hour", "ts_utc", "gco2_per_kwh")
    )  # fmt: skip
    df.write_parquet(tmp_path / "grid_carbon.parquet")
    return tmp_path


def test_observed_facts_read_the_exported_carbon_input(tmp_path: Path) -> None:
    (u, *_) = [x for x in ias_table.units(observed.STUDY, QUICK) if x.grid == "ERCOT"]
    runs = {u.ff.id: _run(4, 0.8), **{s.id: _run(2, 0.8) for s in u.arms.values()}}
    with pytest.raises(FileNotFoundError, match="grid_carbon.parquet"):
        ias_table.unit_rows(u, runs, tmp_path, "quick")
    rows, missing = ias_table.unit_rows(u, runs, _ercot_inputs(tmp_path), "quick")
    assert not missing and [r["policy"] for r in rows] == list(MAIN)
    assert rows[0]["instance"] == "ERCOT pareto-1.5-3600-light s0" and rows[0]["grid"] == "ERCOT"
    assert rows[0]["small_jobs"] > 0 and rows[0]["outliving_jobs"] > 0  # the quick profile has jobs to judge
    assert rows[0]["decisive"] and rows[0]["degenerate_reason"] == ""


# ------------------------------------------------------------------------------------------------- asset
def test_the_asset_writes_its_schema_and_passes_its_checks() -> None:
    import duckdb

    from assets.schema import ALL_TABLES, OUT_THESIS_IAS_INSTANCES
    from assets.warehouse import CheckFailed, replace_table

    assert ALL_TABLES["out_thesis_ias_instances"] is OUT_THESIS_IAS_INSTANCES
    assert OUT_THESIS_IAS_INSTANCES.column_names == list(ias_table.SCHEMA)
    u0, u1, *_ = _quick_units()
    runs = {u0.ff.id: _run(10, 0.8), u0.arms["ias"].id: _run(6, 0.79), u0.arms["ias-general"].id: _run(0, 0.8),
            u1.ff.id: _run(0, 0.9), u1.arms["ias"].id: _run(0, 0.9)}  # fmt: skip
    t, _ = ias_table.instance_table(QUICK, runs, Path("/nonexistent"), (general.STUDY,), _facts({}))
    con = duckdb.connect()
    assert replace_table(con, OUT_THESIS_IAS_INSTANCES, t) == 3
    bad = t.with_columns(pl.lit("").alias("degenerate_reason"), pl.lit(False).alias("decisive"))
    with pytest.raises(CheckFailed, match="degenerate_has_a_reason"):
        replace_table(con, OUT_THESIS_IAS_INSTANCES, bad)


def test_the_asset_is_registered_partitioned_by_profile_on_its_studies() -> None:
    import dagster as dg

    from assets.reproduction import PROFILE_PARTITIONS
    from pipelines.definitions import defs
    from studies.papers import chapter

    graph = defs.resolve_asset_graph()
    node = graph.get(dg.AssetKey("out_thesis_ias_instances"))
    assert node.partitions_def == PROFILE_PARTITIONS
    parents = {k.to_user_string() for k in node.parent_keys}
    studies = {"out_sim__thesis_ias_observed", "out_sim__thesis_ias_generalization"}  # both profiles each
    assert studies <= parents and "out_sim_grid_signals" in parents
    checks = {k.name for k in defs.resolve_asset_graph().asset_check_keys if k.asset_key == node.key}
    assert {"schema", "unique_key", "ranges"} <= checks
    assert "out_thesis_ias_instances" in chapter("ch6_ias").tables
