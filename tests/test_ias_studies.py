"""study set-up: IAS readings in the ch. 6 study, the ias-robustness grid and its headline,
H1's pool evidence, and seed 003's platform sized from the work inside the horizon."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from studies.claims import PROFILES
from studies.scenarios import Scenario, _size_for, build_jobs, clipped_load


def _fake_runs(scs, terms, goodput) -> dict:
    return {s.id: {"metrics": {"terminations": terms(k), "goodput": goodput(k)}} for k, s in scs.items()}


def test_ch6_runs_both_readings_of_h1_everywhere_and_algorithm_5_as_printed_where_goodput_is() -> None:
    from studies.thesis.ias import _ias_cut, _ias_goodput
    from studies.thesis.scenarios import ZIPFS, ch6_scenarios

    pr = PROFILES["quick"]
    sc = ch6_scenarios(pr)
    for wl in (*ZIPFS, "azure"):
        for r in range(pr.replicates):
            assert sc[(wl, "ias-p90", r)].settings == {"h1_threshold": "p90"}  # A = 0.6 is the default
            assert sc[(wl, "ias", r)].settings == {}  # fit + text: the defaults
            if wl in ("zipf-1.5", "azure"):  # §6.3 prints IAS's goodput there (both profiles)
                assert sc[(wl, "ias-literal", r)].settings == {"h4_reading": "literal"}
            else:
                assert (wl, "ias-literal", r) not in sc
    cuts = {
        "ff": 100,
        "ias": 10,
        "ias-p90": 40,
        "ias-literal": 150,
        "ias-all": 20,
        "ias-no-h1": 90,
        "ias-a0.1": 1,
    }
    runs = _fake_runs(sc, lambda k: cuts[k[1]], lambda k: 0.5 + 0.01 * (k[1] == "ias-p90"))
    assert _ias_cut("zipf-1.3")(pr, runs) == {"default": [90.0] * 3, "h1=p90": [60.0] * 3}
    got = _ias_cut("zipf-1.5")(pr, runs)
    assert {k: got[k] for k in ("default", "h1=p90", "h4=literal (Alg. 5 as printed)")} == {
        "default": [90.0] * 3, "h1=p90": [60.0] * 3, "h4=literal (Alg. 5 as printed)": [-50.0] * 3
    }  # fmt: skip
    assert set(_ias_cut("zipf-1.5")(pr, runs)) == {
        "default", "h1=p90", "h4=literal (Alg. 5 as printed)", "survival_pool=all", "no-h1 (H2+H4)"
    }  # fmt: skip
    assert _ias_goodput("zipf-1.3")(pr, runs)["h1=p90"] == pytest.approx([1.0] * 3)


def test_full_profile_runs_algorithm_5_as_printed_where_the_text_prints_goodput() -> None:
    from studies.thesis.ias import _ias_cut
    from studies.thesis.scenarios import ZIPFS, ch6_scenarios

    pr = PROFILES["full"]
    sc = ch6_scenarios(pr)
    lit = {wl for (wl, key, _r) in sc if key == "ias-literal"}
    assert lit == {"zipf-1.5", "azure"} == set(pr.ch6_literal_workloads)
    assert all((wl, "ias-p90", 4) in sc for wl in (*ZIPFS, "azure"))  # H1's readings still everywhere
    runs = _fake_runs(sc, lambda k: 100 if k[1] == "ff" else 10, lambda k: 0.5)
    assert set(_ias_cut("zipf-1.8")(pr, runs)) == {"default", "h1=p90"}  # no empty literal row
    assert "h4=literal (Alg. 5 as printed)" in _ias_cut("zipf-1.5")(pr, runs)


@pytest.mark.parametrize("profile", ["quick", "full"])
def test_ias_robustness_grid(profile: str) -> None:
    from studies.catalogue import study
    from studies.thesis.scenarios import ROBUSTNESS_POLICIES, robustness_cells, robustness_scenarios

    pr = PROFILES[profile]
    sc = robustness_scenarios(pr)
    cells = robustness_cells(pr)
    assert {c[0] for c in cells} == set(pr.rob_alphas) and {c[1] for c in cells} == {300.0, 3600.0}
    assert {c[2] for c in cells} == {"light", "heavy"} and {c[3] for c in cells} == set(pr.rob_loads)
    assert len(sc) == len(cells) * pr.replicates * len(ROBUSTNESS_POLICIES)  # full: five capacity seeds
    a = sc[(cells[0] + ("ias-a0.9", 2))]
    assert a.workload == f"pareto-{cells[0][0]:g}-300-light" and a.load == cells[0][3] and a.warmup_days == 0
    assert a.settings == {"aggressiveness": "0.9"} and a.capacity["seed"] == 2 and a.seed == 2
    name = "ias-robustness" if profile == "full" else "ias-robustness-quick"
    assert len(study(name)) == len(sc)
    if profile == "full":
        assert pr.replicates >= 5
        assert set(pr.rob_alphas) == {1.1, 1.5, 2.0, 2.5} and set(pr.rob_loads) == {0.5, 0.7, 0.9}


def test_robustness_headline_counts_the_cells_where_ias_holds_the_claim(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from studies.thesis import robustness
    from studies.thesis.robustness import _robust, robustness_table

    monkeypatch.setattr(robustness, "ias_decision", lambda runs, f, i: "")  # every cell decisive
    from studies.thesis.scenarios import robustness_cells, robustness_scenarios

    pr = PROFILES["quick"]
    sc = robustness_scenarios(pr)
    cells = robustness_cells(pr)
    worse, poorer = cells[0], cells[1]  # more terminations than FF; 3 pp less goodput

    def terms(k):
        return {"ff": 100, "ias-a0.6": 150 if k[:4] == worse else 40}.get(k[4], 50)

    def goodput(k):
        return 0.8 - (0.03 if k[:4] == poorer and k[4] == "ias-a0.6" else 0.0)

    got = _robust(pr, _fake_runs(sc, terms, goodput))
    n = len(cells)
    k = pr.replicates
    assert got["default"] == pytest.approx([100.0 * (n - 2) / n] * k)
    assert got["A=0.1"] == [100.0] * k and got["A=0.9"] == [100.0] * k
    t = robustness_table(pr, _fake_runs(sc, terms, goodput))
    assert t.height == n and t.filter(~pl.col("holds")).height == 2
    assert t["cut"][0] == pytest.approx(-50.0) and t["goodput_pp"][1] == pytest.approx(-3.0)


def test_pareto_core_mixes() -> None:
    light = build_jobs(
        Scenario("pareto-1.5-300-light", {"kind": "constant"}, horizon_days=2.0), Path("."), 10
    )
    heavy = build_jobs(
        Scenario("pareto-1.5-300-heavy", {"kind": "constant"}, horizon_days=2.0), Path("."), 10
    )
    assert light["cores"].mean() == pytest.approx(2.05, abs=0.15) and heavy["cores"].mean() > 8
    assert light.height > 3 * heavy.height  # same load, smaller jobs
    with pytest.raises(ValueError, match="core mix"):
        build_jobs(Scenario("pareto-1.5-300-huge", {"kind": "constant"}), Path("."), 10)


def test_seed003_sizes_its_platform_from_the_work_inside_the_horizon() -> None:
    from studies.zhang_chien.scenarios import zc_scenarios

    for pr in PROFILES.values():
        assert all(s.sizing == "clipped" for s in zc_scenarios(pr).values())
    day = 86400.0
    # 7-day horizon: a 10-day VM submitted on day 6 offers 1 day inside it, not 10
    jobs = pl.DataFrame(
        {"submit_s": [0.0, 6 * day], "duration_s": [7 * day, 10 * day], "cores": [16.0, 16.0]}
    )
    assert clipped_load(jobs, 7 * day) == pytest.approx(16.0 * 8 / 7)
    sc = Scenario("azure", {"kind": "constant"}, cores=16, horizon_days=7.0, load=0.8, sizing="clipped")
    # 18.3 cores offered inside; 0.8 × 0.7 × 16 = 8.96 cores a machine -> 2 machines (unclipped: 38.9 -> 4)
    assert _size_for(sc, jobs) == 2
    assert _size_for(Scenario("azure", {"kind": "constant"}, cores=16, horizon_days=7.0), jobs) == 4
    assert "sizing" not in Scenario("azure", {"kind": "constant"}).params()  # ids of old scenarios kept
    with pytest.raises(ValueError, match="sizing"):
        Scenario("azure", {"kind": "constant"}, sizing="whole")


def test_h1_pools_split_the_offered_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from studies.sweep import run_scenario
    from studies.thesis.ias import h1_pools

    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    walk = {"kind": "random_walk", "changes_per_hour": 1.0, "step": 0.15, "dynamic_range": 0.6, "seed": 0}
    got = {}
    for reading in ("fit", "p90"):
        sc = Scenario(
            "pareto-1.5-300-light", walk, "ias", {"h1_threshold": reading}, machines=6, horizon_days=1.0
        )
        row = run_scenario(sc, tmp_path / "in", tmp_path / "runs")
        got[reading] = h1_pools({sc.id: row}, sc)
    for h in got.values():
        assert (
            0 < h["stable_share_offered"] < 1 and 0 <= h["stable_used"] <= 1 and 0 <= h["variable_used"] <= 1
        )
    # fit sends the always-on machines at most the work they can hold over the horizon
    fit = got["fit"]
    assert fit["stable_share_offered"] * fit["offered_load"] <= fit["stable_fraction"] + 1e-12
    assert got["p90"]["stable_share_offered"] != fit["stable_share_offered"]


def test_robustness_evidence_names_each_failing_cells_cause() -> None:
    from studies.thesis.robustness import _explain_robust, cell_cause, short_share
    from studies.thesis.scenarios import robustness_cells, robustness_scenarios

    pr = PROFILES["quick"]
    sc = robustness_scenarios(pr)
    cells = robustness_cells(pr)
    worse, poorer = cells[0], cells[1]

    def terms(k):  # `worse`: IAS and H1 alone kill more than FF (100), IAS without H1 fewer
        if k[:4] == worse and k[4] in ("ias-a0.6", "ias-h1"):
            return 150
        return 100 if k[4] == "ff" else 40

    def goodput(k):  # `poorer`: IAS and H1 alone lose 3 pp, IAS without H1 nothing
        return 0.8 - (0.03 if k[:4] == poorer and k[4] in ("ias-a0.6", "ias-h1") else 0.0)

    text = _explain_robust(pr, _fake_runs(sc, terms, goodput))
    assert "(2 of " in text and text.count("α ") == 2
    assert "cut lost to H1's split" in text and "goodput lost to H1's two pools" in text
    assert "H1 alone -50 % / +0.0 pp, without H1 60 % / +0.0 pp" in text
    assert cell_cause(-5.0, 0.0, (10.0, 0.0), (-1.0, 0.0)) == "H2 + H4 admit what FF would (H1 alone cuts)"
    assert cell_cause(-5.0, 0.0, (-9.0, 0.0), (-1.0, 0.0)) == (
        "H1's split adds terminations and H2 + H4 cut none without it"
    )
    assert cell_cause(5.0, -3.0, (5.0, -1.0), (5.0, -1.0)) == "goodput lost only when H1 and H2 + H4 combine"
    # Pareto(α, xm): 1 − (xm / 3600)^α of the jobs end within one change period; none when xm is the period
    assert short_share(1.5, 300.0) == pytest.approx(1 - (1 / 12) ** 1.5) and short_share(2.5, 3600.0) == 0.0


def test_a_study_builder_per_profile_builds_once_and_hands_out_a_read_only_mapping() -> None:
    """The claims read the ch. 6 and robustness studies many times (:func:`studies.claims.per_profile`):
    one build per profile, the same scenarios after, and no caller can change them for the next."""
    import dataclasses

    from studies.thesis.scenarios import ch6_scenarios, robustness_scenarios

    quick = PROFILES["quick"]
    for build in (ch6_scenarios, robustness_scenarios):
        first = build(quick)
        assert build(quick) is first
        with pytest.raises(TypeError):
            first[("x",)] = next(iter(first.values()))  # type: ignore[index]
        fewer = build(dataclasses.replace(quick, replicates=1))
        assert fewer is not first and 0 < len(fewer) < len(first)
        assert {k: s.id for k, s in fewer.items()}.items() <= {k: s.id for k, s in first.items()}.items()
