"""Reproduction studies: seed-faithful workloads, the CapacityScheduler baseline, IAS's survival pool,
per-job JCT over task groups, confidence intervals and headline rows."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sim.api import simulate
from sim.capacity.generators import harvest_trace, random_walk
from sim.capacity.intervals import IntervalModel, extract_intervals
from sim.capacity.trace import CapacityTrace
from sim.workloads.generators import group_completion_times, harvest_jobs, native_bootstrap
from studies import reproduction as repro
from studies.catalogue import STUDIES, study
from studies.scenarios import Scenario
from studies.thesis.ias import _generic_cut
from studies.thesis.scenarios import ch4_scenarios, ch6_scenarios, generic_scenarios
from studies.zhang_chien.claims import _lww_vs_random, _range_decline
from studies.zhang_chien.scenarios import ZC_MODELS, zc_scenarios


def test_existing_ids_unchanged_and_warmup_changes_id() -> None:
    # the smoke study's first id predates the reproduction fields: adding fields must not change it
    assert study("smoke")[0].id == "5edffef50576"
    a = Scenario("zipf-1.5", {"kind": "random_walk", "changes_per_hour": 1.0, "step": 0.15, "seed": 0})
    b = Scenario("zipf-1.5", a.capacity, warmup_days=7.0)
    assert "warmup_days" not in a.params() and b.params()["warmup_days"] == 7.0
    assert a.id != b.id and Scenario.from_params(b.params()).id == b.id
    assert b.window_start_s == 7 * 86400.0


def test_reproduction_studies_registered_with_replicates() -> None:
    for pr in repro.PROFILES.values():
        for base in repro.STUDY_BUILDERS:
            name = repro.study_name(base, pr)
            assert name in STUDIES
            if base == "repro-generalization":  # generated instances draw their own seeds
                assert len(study(name)) == 5 * pr.gen_instances, name  # FF runs once for IAS and Target*
                continue
            if base == "thesis-ias-generalization":  # the same instances under ff, ias and ias-general
                assert len(study(name)) == 3 * pr.gen_instances, name
                continue
            seeds = {s.seed for s in study(name)}
            if base == "thesis-ias-observed":  # its own profiles' workload seeds
                from studies.thesis.observed import PROFILES as OBSERVED

                assert seeds == set(OBSERVED[pr.name].seeds), name
                continue
            assert seeds == set(range(pr.replicates)), name
    assert repro.FULL.replicates >= 5


def test_native_bootstrap_keeps_durations_and_hits_load() -> None:
    rng = np.random.default_rng(1)
    tmpl = pl.DataFrame(
        {"duration_s": rng.uniform(60, 7200, 500).round(), "cores": rng.choice([1.0, 2.0], 500)}
    )
    jobs = native_bootstrap(tmpl, target_cores=100.0, horizon_s=7 * 86400.0, seed=3)
    assert set(jobs["duration_s"].to_list()) <= set(np.maximum(tmpl["duration_s"].to_numpy(), 1.0).tolist())
    load = float((jobs["duration_s"] * jobs["cores"]).sum()) / (7 * 86400.0)
    assert load == pytest.approx(100.0, rel=0.05)
    assert native_bootstrap(tmpl, 100.0, 7 * 86400.0, seed=3).equals(jobs)


def test_harvest_jobs_groups_and_group_jct() -> None:
    jobs = harvest_jobs(1600.0, 2 * 86400.0, seed=4)
    g = jobs.group_by("group").agg(pl.col("submit_s").n_unique().alias("u"), pl.len().alias("n"))
    assert (g["u"] == 1).all() and g["n"].min() >= 100 and g["n"].max() <= 300
    assert jobs["duration_s"].min() >= 300 and jobs["duration_s"].max() <= 4500
    out = pl.DataFrame(
        {
            "job_id": ["g0-t0", "g0-t1", "g1-t0", "g1-t1"],
            "submit_s": [10.0, 10.0, 50.0, 50.0],
            "end_s": [100.0, 250.0, 80.0, None],
            "status": ["completed", "completed", "completed", "requeued"],
        }
    )
    jct = group_completion_times(out)
    assert jct["jct_s"].to_list() == [240.0, None] and jct["complete"].to_list() == [True, False]
    with pytest.raises(ValueError, match="g<job>-t<task>"):
        group_completion_times(out.with_columns(pl.lit("x").alias("job_id")))


def _tiny_harvest_jobs() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "job_id": [f"g0-t{i}" for i in range(40)],
            "submit_s": np.zeros(40),
            "duration_s": np.full(40, 600.0),
            "cores": np.ones(40),
        }
    )


def test_capsched_random_matching_is_seeded_and_resource_aware() -> None:
    import sim.policies.capsched as cs

    class FakeCluster:
        cores = np.array([2.0])

        def free(self) -> np.ndarray:
            return np.array([1.0, 5.0, 5.0, 0.0, 5.0])

    def choices(seed: int) -> list[int]:
        place = cs.CapacityScheduler().placement(seed)
        return [place(FakeCluster(), 0, 0.0) for _ in range(300)]

    a = choices(5)
    assert set(a) == {1, 2, 4}  # only nodes with room, each of them (first-fit would always say 1)
    assert choices(5) == a and choices(6) != a

    class Full(FakeCluster):
        def free(self) -> np.ndarray:
            return np.array([1.0, 0.0])

    assert cs.CapacityScheduler().placement(0)(Full(), 0, 0.0) == -1
    cap = harvest_trace(8, 86400.0, max_cores=16, seed=2)
    r = simulate(_tiny_harvest_jobs(), cap, 8, 16, 86400.0, "capsched", seed=5, check_invariants=True)
    assert r.invariant_violations == 0 and r.metrics["jobs"] == 40


def test_ias_survival_pool_variable_excludes_always_on_machines() -> None:
    tr = random_walk(40, 14 * 86400.0, 1.0, 0.15, 0.6, seed=3)
    iv = extract_intervals(tr)
    stable = int(tr.machines_alive.min())
    all_m = IntervalModel.from_intervals(iv, include_left_censored=True)
    var_m = IntervalModel.from_intervals(iv.filter(pl.col("machine") >= stable), include_left_censored=True)
    # always-on machines contribute horizon-long intervals: the pooled model is far more optimistic
    assert float(var_m.p_survive(3600.0, 6 * 3600.0)) < float(all_m.p_survive(3600.0, 6 * 3600.0))
    from sim.policies import get_policy, parse_params
    from sim.problem import Platform, Problem

    pol = get_policy("ias")
    jobs = pl.DataFrame({"job_id": ["a"], "submit_s": [0.0], "duration_s": [7200.0], "cores": [1.0]})
    prob = Problem.build(jobs, Platform(40, 24, None), tr, tr.horizon_s, False, False)
    adm_var = pol.admission(prob, parse_params(pol, {}))
    adm_all = pol.admission(prob, parse_params(pol, {"survival_pool": "all"}))
    assert adm_var.models[0].n < adm_all.models[0].n  # `ias` (H1 on) pools the variable machines only
    h4 = get_policy("ias-h4")  # without H1, H4 judges every machine: the default pools them all
    assert h4.admission(prob, parse_params(h4, {})).models[0].n == adm_all.models[0].n
    with pytest.raises(ValueError, match="survival_pool"):
        parse_params(pol, {"survival_pool": "some"})


def test_mean_ci_student_t() -> None:
    m, lo, hi = repro.mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert m == 3.0 and hi - m == pytest.approx(2.7764451 * np.std([1, 2, 3, 4, 5], ddof=1) / np.sqrt(5))
    assert repro.mean_ci([2.0]) == (2.0, 2.0, 2.0)


def test_headline_rows_bands_and_readings(monkeypatch: pytest.MonkeyPatch) -> None:
    pr = repro.QUICK
    sc = ch4_scenarios(pr)
    runs: repro.Runs = {}
    for k, s in sc.items():
        fixed = k[1] == "fixed"
        runs[s.id] = {"metrics": {"goodput": 0.8 if fixed else 0.6}, "machines": 10}
    h = next(x for x in repro.HEADLINES if x.id == "thesis-4.1-goodput-loss-azure-8h")
    monkeypatch.setattr(repro, "HEADLINES", [h])
    df = repro.reproduction_rows(pr, runs)
    assert df["headline_id"].to_list() == [h.id, f"{h.id}@relative"]
    assert df["varcap_mean"].to_list() == pytest.approx([20.0, 25.0])
    assert df["within_band"].to_list() == [True, True] and df["replicates"].to_list() == [3, 3]
    assert tuple(df.columns) == repro.COLUMNS
    with pytest.raises(repro.MissingRuns, match="has not run"):
        repro.reproduction_rows(pr, {}, strict=True)
    empty = repro.reproduction_rows(pr, {})
    assert empty.height == 1 and not empty["within_band"][0] and empty["explanation"][0].startswith("not run")


def test_constant_capacity_kind() -> None:
    from studies.scenarios import build_capacity

    s = Scenario("azure", {"kind": "constant", "fraction": 0.7}, machines=10)
    tr = build_capacity(s, None, 10)  # type: ignore[arg-type]
    assert isinstance(tr, CapacityTrace) and tr.machines_alive.tolist() == [7]


def test_pool_capacity_is_one_machine_holding_every_core() -> None:
    from sim.capacity.trace import MachineCapacityTrace
    from studies.scenarios import build_capacity

    walk = {"kind": "random_walk", "changes_per_hour": 1.0, "step": 0.15, "dynamic_range": 0.6, "seed": 2}
    s = Scenario("azure", {"kind": "pool", "of": walk}, cores=16, horizon_days=2.0)
    pool = build_capacity(s, None, 50)  # type: ignore[arg-type]
    machines = build_capacity(Scenario("azure", walk, cores=16, horizon_days=2.0), None, 50)  # type: ignore[arg-type]
    assert isinstance(pool, MachineCapacityTrace) and pool.machines == 1
    assert set(pool.machine.tolist()) == {0}
    assert pool.cores.tolist() == (machines.machines_alive * 16.0).tolist()


def test_seed003_readings_and_range_decline(monkeypatch: pytest.MonkeyPatch) -> None:
    pr = repro.QUICK
    sc = zc_scenarios(pr)
    assert {k[0] for k in sc if k[0] != "fixed"} == set(ZC_MODELS)
    # pool readings use the pool capacity; fail readings the <rule>-fail termination
    s = sc[("pool-fail", "random", 0)]
    assert s.capacity["kind"] == "pool" and s.settings["termination"] == "random-fail"
    assert sc[("machines-requeue", "lifo", 0)].settings == {}
    goodput = {"fixed": 0.7, "random": 0.35, "lww": 0.63, "lfd": 0.5, "lifo": 0.6}
    runs: repro.Runs = {
        s.id: {"metrics": {"goodput": goodput[k[0] if k[0] == "fixed" else k[1]]}} for k, s in sc.items()
    }
    out = _lww_vs_random(pr, runs)
    assert list(out) == list(ZC_MODELS) and out["pool-fail"] == pytest.approx([80.0] * pr.replicates)
    dec = _range_decline(pr, runs)
    assert next(iter(dec)) == "pool-fail:random" and dec["pool-fail:random"][0] == pytest.approx(50.0)


def test_generic_headline_default_reading_first_and_evidence_on_miss() -> None:
    pr = repro.QUICK
    sc = generic_scenarios(pr)
    runs: repro.Runs = {
        s.id: {"metrics": {"terminations": 100.0 if k[1] == "ff" else 40.0}} for k, s in sc.items()
    }
    res = _generic_cut(pr, runs)
    assert next(iter(res)) == "default" and res["default"] == pytest.approx([60.0] * pr.replicates)
    assert all(k.startswith("pareto-") for k in list(res)[1:])
    h = next(x for x in repro.HEADLINES if x.id == "thesis-6.2-ias-cut-generic")
    # the evidence needs per-job tables; without them the row still says why it is outside its band
    text = repro._explain(h, {"default": (-5.0, -6.0, -4.0)}, {h.id: "cause"}, pr, runs)
    assert text.startswith("cause") and "evidence not computed" in text


# ------------------------------------------------------------------------------ the honest headline table
def test_intervals_never_leave_the_possible_range() -> None:
    from studies.claims import CUT_BOUNDS, R_BOUNDS

    # a cut near 100 % with spread: Student t would pass 100 ("86.8 [62.8, 111]")
    cuts = [70.0, 92.0, 98.5]
    m, lo, hi = repro.mean_ci(cuts)
    assert hi > 100.0  # the unbounded interval does leave the range
    m2, lo2, hi2, how = repro.mean_ci_method(cuts, CUT_BOUNDS)
    assert m2 == pytest.approx(m) and lo2 <= m2 <= hi2 <= 100.0 and how == "t on log(b − x)"
    # a Pearson r near 1 (t on logit) and one exactly on the bound (bootstrap)
    _, lo, hi, how = repro.mean_ci_method([0.93, 0.99, 0.97], R_BOUNDS)
    assert -1.0 <= lo <= hi <= 1.0 and how == "t on logit"
    _, lo, hi, how = repro.mean_ci_method([1.0, 0.98, 0.9], R_BOUNDS)
    assert -1.0 <= lo <= hi <= 1.0 and how == "bootstrap"
    assert repro.mean_ci_method([100.0, 100.0, 100.0], CUT_BOUNDS)[1:3] == (100.0, 100.0)
    assert repro.mean_ci_method([5.0], CUT_BOUNDS)[3] == "single replicate"
    # every headline declares a range, and every cut-like headline is capped at 100 %
    for h in repro.HEADLINES:
        assert h.bounds != (-np.inf, np.inf), f"{h.id}: no possible range declared"
        if h.unit.startswith("%") and "gain" not in h.id and "vs-random" not in h.id:
            assert h.bounds[1] <= 100.0, h.id


def test_factor_two_applies_to_the_remaining_fraction_near_100() -> None:
    from studies.claims import factor2

    assert factor2(24.0) == (12.0, 48.0)  # a small change: on the change itself
    lo, hi = factor2(96.42)  # Table 6.2, Zipf-1.1: 3.58 % remain; the band keeps 1.79 … 7.16 % remaining
    assert (100 - hi, 100 - lo) == pytest.approx((1.79, 7.16))
    # the old band [48.2, 100] accepted a cut of 87 %, which leaves 3.6 times as much
    assert not lo <= 87.0 <= hi
    assert factor2(-10.0) == (-20.0, -5.0)


def test_table_6_2_trend_headline() -> None:
    from studies.claims import spearman_critical
    from studies.thesis.ias import TABLE_6_2_CUT, TABLE_6_2_RHO

    h = next(x for x in repro.HEADLINES if x.id == "thesis-6.3-ias-cut-trend")
    assert TABLE_6_2_RHO == -1.0 and h.anchor_value == -1.0  # the printed cut falls at every step
    assert spearman_critical(8) == pytest.approx(0.642857, abs=1e-6)  # the tabulated n = 8, α = 0.05 value
    assert h.band == pytest.approx((-1.0, -0.642857), abs=1e-6) and h.bounds == (-1.0, 1.0)
    pr = repro.QUICK
    sc = ch6_scenarios(pr)

    def runs_with(cut_of: dict[str, float]) -> repro.Runs:
        out: repro.Runs = {}
        for (wl, key, _r), s in sc.items():
            ff = 1000.0
            ias = ff * (1 - cut_of.get(wl, 50.0) / 100)
            out[s.id] = {"metrics": {"terminations": ff if key == "ff" else ias}}
        return out

    falling = runs_with({f"zipf-{s}": v for s, v in TABLE_6_2_CUT.items()})
    assert h.compute(pr, falling)["default"] == pytest.approx([-1.0] * pr.replicates)
    flat = runs_with({f"zipf-{s}": 90.0 + (i % 2) for i, s in enumerate(TABLE_6_2_CUT)})
    rho = h.compute(pr, flat)["default"][0]
    assert not h.band[0] <= rho <= h.band[1]  # no trend does not pass


def _zc_runs(goodput: dict[str, float], terminations: dict[str, float]) -> repro.Runs:
    sc = zc_scenarios(repro.QUICK)
    return {
        s.id: {
            "metrics": {
                "goodput": goodput[k[0] if k[0] == "fixed" else k[1]],
                "terminations": terminations[k[0] if k[0] == "fixed" else k[1]],
            }
        }
        for k, s in sc.items()
    }


def test_degenerate_rows_are_flagged_not_in_band(monkeypatch: pytest.MonkeyPatch) -> None:
    h = next(x for x in repro.HEADLINES if x.id == "zhang-chien-5.3-lww-vs-random-goodput")
    monkeypatch.setattr(repro, "HEADLINES", [h])
    g = {"fixed": 0.7, "random": 0.5, "lww": 0.5, "lfd": 0.5, "lifo": 0.5}
    idle = repro.reproduction_rows(repro.QUICK, _zc_runs(g, dict.fromkeys(g, 0.0)))
    row = idle.row(0, named=True)
    # every replicate degenerate: no value, "not tested" (0.0 would lie on the band's low end)
    assert row["varcap_mean"] is None and not row["within_band"] and row["verdict"] == "not tested"
    assert row["n_decisive"] == 0 and row["n_degenerate"] == 3
    assert row["flag"].startswith("not tested: every one of the 3 runs is degenerate — no terminations")
    assert "**not tested**" in repro.markdown(idle)
    assert "77c8a6b" in row["reading_history"] and "after" in row["reading_history"]
    # an effect claim: a mean in the band whose interval includes no effect does not pass
    runs = _zc_runs(g, dict.fromkeys(g, 5.0))
    sc = zc_scenarios(repro.QUICK)
    for r, v in zip(range(3), (0.49, 0.52, 0.505), strict=True):  # LWW − Random: −2 %, +4 %, +1 %
        runs[sc[("pool-fail", "lww", r)].id]["metrics"] = {"goodput": v, "terminations": 5.0}
    row = repro.reproduction_rows(repro.QUICK, runs).row(0, named=True)
    assert h.band[0] <= row["varcap_mean"] <= h.band[1] and row["ci_low"] < 0 < row["ci_high"]
    assert not row["within_band"] and "includes no effect" in row["flag"]
    for r, v in zip(range(3), (0.60, 0.61, 0.62), strict=True):  # a clear gain: in band
        runs[sc[("pool-fail", "lww", r)].id]["metrics"] = {"goodput": v, "terminations": 5.0}
    row = repro.reproduction_rows(repro.QUICK, runs).row(0, named=True)
    assert row["within_band"] and row["flag"] == "" and row["verdict"] == "in band"
    assert (row["n_decisive"], row["n_degenerate"]) == (3, 0)


def test_index_labels_quick_rows_a_smoke_test_and_flags_degenerate_rows() -> None:
    from assets.reports import index_html

    row = {
        "headline_id": "zhang-chien-5.3-lww-vs-random-goodput",
        "section": "§5.3",
        "anchor_value": 44.0,
        "unit": "%",
        "varcap_mean": 0.0,
        "ci_low": 0.0,
        "ci_high": 0.0,
        "band_low": 0.0,
        "band_high": 44.0,
        "within_band": False,
        "flag": "degenerate: no terminations in either arm in 3 of 3 replicates",
        "profile": "quick",
    }
    page = index_html([], pl.DataFrame([row]), "")
    assert "Smoke test, not a reproduction" in page and "quick (smoke test)" in page
    assert ">degenerate</td>" in page and ">yes</td>" not in page
    full = index_html([], pl.DataFrame([row | {"profile": "full", "flag": "", "within_band": True}]), "")
    assert "Smoke test" not in full and ">yes</td>" in full


def test_spearman_matches_scipy_with_ties() -> None:
    from scipy import stats

    from studies.claims import spearman

    rng = np.random.default_rng(1)
    for _ in range(100):
        x, y = rng.integers(0, 4, 8).astype(float), rng.normal(size=8)
        a, b = spearman(list(x), list(y)), float(stats.spearmanr(x, y).statistic)
        assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b)
