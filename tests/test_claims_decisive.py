"""Decisive and degenerate runs, effects that must be shown, and rows with one run."""

from __future__ import annotations

import numpy as np
import pytest

from studies import reproduction as repro
from studies import thesis
from studies.claims import CUT_BOUNDS, Headline, Profile, Runs

H = 3600.0


def _fake(values: list[float], reasons: list[str] | None = None, **kw) -> Headline:
    """A headline whose replicates are ``values`` and whose degenerate check returns ``reasons``."""

    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        return {"default": list(values)}

    deg = (lambda pr, runs: list(reasons)) if reasons is not None else None
    base = dict(
        id="fake-cut",
        paper="000 thesis",
        section="§0",
        anchor_value=50.0,
        anchor_text="a cut of 50 %",
        unit="%",
        band=(25.0, 75.0),
        study=None,
        compute=compute,
        bounds=CUT_BOUNDS,
        null=0.0,
        degenerate=deg,
    )
    return Headline(**{**base, **kw})


def _row(monkeypatch: pytest.MonkeyPatch, h: Headline) -> dict:
    monkeypatch.setattr(repro, "HEADLINES", [h])
    return repro.reproduction_rows(repro.QUICK, {}).row(0, named=True)


def test_a_degenerate_replicate_never_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    # replicate 0 is a 100 % cut by construction; the two decisive ones are out of band
    row = _row(monkeypatch, _fake([100.0, 5.0, 6.0], ["IAS cannot terminate anything", "", ""]))
    assert (row["n_decisive"], row["n_degenerate"]) == (2, 1) and row["replicates"] == 2
    assert row["varcap_mean"] == pytest.approx(5.5) and not row["within_band"]
    assert row["verdict"] == "out of band" and "1 of 3 runs degenerate" in row["flag"]
    # counted, the degenerate replicate would have put the mean (37 %) in the band
    assert 25.0 <= np.mean([100.0, 5.0, 6.0]) <= 75.0
    ok = _row(monkeypatch, _fake([5.0, 50.0, 52.0], ["First-Fit terminates nothing", "", ""]))
    assert ok["within_band"] and ok["varcap_mean"] == pytest.approx(51.0)


def test_a_row_whose_runs_are_all_degenerate_is_not_tested(monkeypatch: pytest.MonkeyPatch) -> None:
    row = _row(monkeypatch, _fake([50.0, 50.0, 50.0], ["every job is 'big'"] * 3))
    assert row["verdict"] == "not tested" and not row["within_band"] and row["varcap_mean"] is None
    assert repro.value_text(row) == "not tested"


def test_an_effect_must_lie_on_the_claimed_side_of_no_effect(monkeypatch: pytest.MonkeyPatch) -> None:
    # a claimed gain of 0.27 pp (band ± 2 pp): a clear loss excludes 0 but on the wrong side
    loss = _fake([-1.0, -1.1, -0.9], anchor_value=0.27, band=(-1.73, 2.27), bounds=(-100.0, 100.0))
    row = _row(monkeypatch, loss)
    assert row["ci_high"] < 0 and not row["within_band"] and row["verdict"] == "effect not shown"
    gain = _fake([0.5, 0.6, 0.55], anchor_value=0.27, band=(-1.73, 2.27), bounds=(-100.0, 100.0))
    assert _row(monkeypatch, gain)["within_band"]
    # a claimed fall (rho −1, null 0) must have its interval below 0
    fall = _fake([-0.9, -0.95, -0.97], anchor_value=-1.0, band=(-1.0, -0.64), bounds=(-1.0, 1.0))
    assert _row(monkeypatch, fall)["within_band"]


def test_one_run_prints_n_1_and_no_interval_and_cannot_show_an_effect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    row = _row(monkeypatch, _fake([40.0]))
    assert row["ci_low"] is None and row["ci_high"] is None and row["replicates"] == 1
    assert repro.value_text(row) == "40 (n = 1)" and not row["within_band"]
    assert row["flag"].startswith("one run: no interval")
    # without an effect claim one run can be in its band, still with no interval
    plain = _row(monkeypatch, _fake([40.0], null=None))
    assert plain["within_band"] and plain["ci_low"] is None and "[" not in repro.value_text(plain)


def test_every_effect_claim_carries_null_zero() -> None:
    gain_or_cut = [
        h for h in repro.HEADLINES if any(w in h.id for w in ("cut", "gain", "reduction", "decline", "loss"))
    ]
    assert len(gain_or_cut) > 15
    for h in gain_or_cut:
        if h.id.endswith("-robustness"):
            continue  # a share of cells, not an effect
        assert h.null == 0.0, h.id
    # Table 6.2's goodput gains: every Zipf workload has a row with the printed value
    from studies.thesis.ias import TABLE_6_2_GOODPUT

    for s, v in TABLE_6_2_GOODPUT.items():
        h = next(x for x in repro.HEADLINES if x.id == f"thesis-6.2-ias-goodput-zipf-{s}")
        assert h.anchor_value == v and h.null == 0.0 and h.band == pytest.approx((v - 2, v + 2))


def test_table_6_2_rows_count_only_runs_where_ias_faces_a_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    from studies.thesis import ias

    h = next(x for x in repro.HEADLINES if x.id == "thesis-6.2-ias-cut-zipf-1.5")
    pr = repro.QUICK
    sc = thesis.ch6_scenarios(pr)
    runs: Runs = {s.id: {"metrics": {"terminations": 100.0 if k[1] == "ff" else 20.0}} for k, s in sc.items()}
    ias_r0 = sc[("zipf-1.5", "ias", 0)]
    runs[ias_r0.id] = {"metrics": {"terminations": 0.0}}  # a 100 % cut in replicate 0 …
    # … where no job left to the variable machines outlives a change period
    monkeypatch.setattr(
        ias, "ias_decision", lambda runs, f, i: "H2 protects every one" if i.id == ias_r0.id else ""
    )
    monkeypatch.setattr(repro, "HEADLINES", [h])
    row = repro.reproduction_rows(pr, runs).row(0, named=True)
    assert (row["n_decisive"], row["n_degenerate"]) == (2, 1) and row["varcap_mean"] == pytest.approx(80.0)


def test_ias_decision_reasons() -> None:
    from studies.thesis.decisive import problem_decision

    dur = np.array([600.0, 1800.0, 5 * H])
    cores = np.array([1.0, 1.0, 4.0])
    # H1 keeps the 5-hour job on the always-on machines; the rest end within one period: H2 protects them
    why, facts = problem_decision(dur, cores, H, threshold_cs=4 * H)
    assert "H2 protects every one" in why and facts["longest_variable_h"] == pytest.approx(0.5)
    assert problem_decision(dur, cores, H, threshold_cs=0.0)[0].startswith("every job is big under H1")
    assert (
        "no variable machine" in problem_decision(dur, cores, H, threshold_cs=4 * H, variable_machines=0)[0]
    )
    assert problem_decision(dur, cores, H, threshold_cs=None)[0] == ""  # no H1: the 5-h job is judged
    assert problem_decision(dur, cores, 0.25 * H, threshold_cs=4 * H)[0] == ""  # 30 min > 15-min period


def test_ias_decision_needs_first_fit_to_terminate_something() -> None:
    from studies.thesis.decisive import ias_decision

    sc = thesis.ch6_scenarios(repro.QUICK)
    f, i = sc[("zipf-1.5", "ff", 0)], sc[("zipf-1.5", "ias", 0)]
    runs: Runs = {f.id: {"metrics": {"terminations": 0}}, i.id: {"metrics": {"terminations": 0}}}
    assert ias_decision(runs, f, i) == "First-Fit terminates nothing"


def test_robustness_share_is_over_decisive_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    from studies.thesis import robustness
    from studies.thesis.scenarios import robustness_cells, robustness_scenarios
    from tests.test_ias_studies import _fake_runs

    pr = repro.QUICK
    sc = robustness_scenarios(pr)
    cells = robustness_cells(pr)
    worse = cells[0]  # IAS kills more than FF there: the one decisive cell that fails
    easy = set(cells[2:])  # these hold by construction

    def terms(k):
        return {"ff": 100, "ias-a0.6": 150 if k[:4] == worse else 0}.get(k[4], 50)

    runs = _fake_runs(sc, terms, lambda k: 0.8)
    by_id = {s.id: k for k, s in sc.items()}
    monkeypatch.setattr(
        robustness,
        "ias_decision",
        lambda runs, f, i: "H2 protects every one" if by_id[i.id][:4] in easy else "",
    )
    got = robustness._robust(pr, runs)
    assert got["default"] == pytest.approx([50.0] * pr.replicates)  # 1 of the 2 decisive cells holds
    reasons = robustness._robust_decisive(pr, runs)
    assert (
        len(reasons) == len(cells) * pr.replicates
        and sum(bool(w) for w in reasons) == len(easy) * pr.replicates
    )
    # every cell degenerate: no share at all
    monkeypatch.setattr(robustness, "ias_decision", lambda runs, f, i: "every job is 'big'")
    assert all(np.isnan(v) for v in robustness._robust(pr, runs)["default"])


def test_riskaware_stretch_rows_fail_on_a_loss(monkeypatch: pytest.MonkeyPatch) -> None:
    from studies.riskaware.scenarios import ra_scenarios

    pr = repro.QUICK
    sc = ra_scenarios(pr)
    ids = [h.id for h in repro.HEADLINES if h.id.startswith("riskaware-7-") and h.id.endswith("-stretch")]
    assert len(ids) == 4  # TargetASAP and PackedTargetASAP, mean and max

    def runs(policy_stretch: float, ff_kills: float = 10.0) -> Runs:
        return {
            s.id: {
                "metrics": {
                    "terminations": ff_kills if k[1] == "ff" else 1.0,
                    "mean_stretch": 2.0 if k[1] == "ff" else policy_stretch,
                    "max_stretch": 2.0 if k[1] == "ff" else policy_stretch,
                }
            }
            for k, s in sc.items()
        }

    h = next(x for x in repro.HEADLINES if x.id == "riskaware-7-targetasap-max-stretch")
    monkeypatch.setattr(repro, "HEADLINES", [h])
    assert repro.reproduction_rows(pr, runs(1.5)).row(0, named=True)["verdict"] == "in band"  # −25 %
    loss = repro.reproduction_rows(pr, runs(2.2)).row(0, named=True)
    assert loss["varcap_mean"] == pytest.approx(10.0) and loss["verdict"] == "out of band"
    # FirstFitAware interrupts nothing: nothing for Target* to protect, not tested
    assert repro.reproduction_rows(pr, runs(1.5, 0.0)).row(0, named=True)["verdict"] == "not tested"


def test_each_reading_is_judged_on_its_own_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from studies.thesis import ias

    pr = repro.QUICK
    sc = thesis.generic_scenarios(pr)
    runs: Runs = {s.id: {"metrics": {"terminations": 100.0 if k[1] == "ff" else 0.0}} for k, s in sc.items()}
    # the default instance (5-minute minimum) is degenerate; the 1-hour one is decisive
    monkeypatch.setattr(
        ias, "ias_decision", lambda runs, f, i: "H2 protects every one" if i.workload.endswith("-300") else ""
    )
    h = next(x for x in repro.HEADLINES if x.id == "thesis-6.2-ias-cut-generic")
    monkeypatch.setattr(repro, "HEADLINES", [h])
    by = {r["reading"]: r for r in repro.reproduction_rows(pr, runs).iter_rows(named=True)}
    assert by["default"]["verdict"] == "not tested" and by["default"]["n_degenerate"] == pr.replicates
    hour = by["pareto-1.5-3600:ias"]
    assert hour["varcap_mean"] == 100.0 and (hour["n_decisive"], hour["n_degenerate"]) == (pr.replicates, 0)


def test_fig_6_5_wasted_share_counts_decisive_workloads(monkeypatch: pytest.MonkeyPatch) -> None:
    from studies.thesis import ias

    pr = repro.QUICK
    sc = thesis.ch6_scenarios(pr)

    def wasted(k) -> float:  # IAS wastes more than FF on Zipf-1.8 only
        if k[1] == "ff":
            return 0.10
        return 0.20 if k[0] == "zipf-1.8" else 0.05

    runs: Runs = {
        s.id: {"metrics": {"terminations": 9.0, "wasted_fraction": wasted(k)}} for k, s in sc.items()
    }
    monkeypatch.setattr(
        ias, "ias_decision", lambda runs, f, i: "every job is 'big'" if "zipf-1.1" in i.workload else ""
    )
    h = next(x for x in repro.HEADLINES if x.id == "thesis-6.3-ias-wasted-lower-zipf")
    monkeypatch.setattr(repro, "HEADLINES", [h])
    row = repro.reproduction_rows(pr, runs).row(0, named=True)
    assert row["varcap_mean"] == pytest.approx(100.0 * 6 / 7)  # Zipf-1.1 left out, Zipf-1.8 fails
    assert (row["n_decisive"], row["n_degenerate"]) == (7 * pr.replicates, pr.replicates)
    assert row["verdict"] == "out of band"


def test_the_generic_default_instance_cannot_test_ias() -> None:
    """The generic row's default instance (Pareto 1.5, 5-minute minimum) leaves no job longer than the
    1-hour change period to the variable machines: IAS's 100 % cut there is by construction."""
    from studies.thesis.decisive import scenario_decision

    sc = thesis.generic_scenarios(repro.QUICK)
    s = sc[("pareto-1.5-300", "ias", 0)]
    why, facts = scenario_decision(s, s.machines)
    assert "H2 protects every one" in why and facts["longest_variable_h"] < facts["period_h"] == 1.0
    s = sc[("pareto-1.5-3600", "ias", 0)]
    assert scenario_decision(s, s.machines)[0] == ""
