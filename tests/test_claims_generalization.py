"""Generalization rows: the central claims on generated instances, decisive instances only, able to fail."""

from __future__ import annotations

import pytest

from studies import reproduction as repro
from studies.claims import FULL, QUICK, Runs
from studies.generalization_claims import claims as gc


def test_instances_per_claim_and_profile() -> None:
    for pr, least in ((FULL, 20), (QUICK, 3)):
        sc = gc.gen_scenarios(pr)
        n = len(gc.gen_instances(pr))
        assert n >= least and len(sc) == n * len(gc.CLAIMS) * 2
    assert QUICK.gen_instances < FULL.gen_instances
    sc = gc.gen_scenarios(QUICK)
    assert sc[("ias", "policy", 0)].policy == "ias" and sc[("ias", "baseline", 0)].policy == "ff"
    assert sc[("targetasap", "policy", 1)].policy == "target-asap"
    ss = sc[("slacksched", "policy", 2)]
    assert ss.policy == "slacksched" and ss.capacity["kind"] == "harvest"
    assert sc[("slacksched", "baseline", 2)].policy == "capsched"
    inst = gc.gen_instances(QUICK)[2]
    assert ss.machines == inst.machines and ss.load == inst.load
    # the studies register and the rows are in the table
    assert "repro-generalization-quick" in repro.studies()
    ids = [h.id for h in repro.HEADLINES]
    assert all(f"{v}" in ids for v in gc.ROW_IDS.values())
    assert all(i.endswith("-generalization") for i in gc.ROW_IDS.values())


def _runs(pr, terms, goodput) -> Runs:
    return {
        s.id: {"metrics": {"terminations": terms(k), "goodput": goodput(k), "goodput_partial": goodput(k)}}
        for k, s in gc.gen_scenarios(pr).items()
    }


def test_the_row_is_the_share_of_decisive_instances_that_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    import studies.thesis.decisive as dec

    pr = QUICK
    n = len(gc.gen_instances(pr))
    # IAS: instance 0 degenerate (and "holds" there), instance 1 kills more than FF, the rest hold
    monkeypatch.setattr(
        dec,
        "ias_decision",
        lambda runs, f, i: (
            "H2 protects every one" if i.id == gc.gen_scenarios(pr)[("ias", "policy", 0)].id else ""
        ),
    )

    def terms(k):
        if k[1] == "baseline":
            return 100.0
        return 150.0 if (k[0], k[2]) == ("ias", 1) else 10.0

    runs = _runs(pr, terms, lambda k: 0.7)
    h = next(x for x in repro.HEADLINES if x.id == gc.ROW_IDS["ias"])
    monkeypatch.setattr(repro, "HEADLINES", [h])
    row = repro.reproduction_rows(pr, runs).row(0, named=True)
    assert (row["n_decisive"], row["n_degenerate"]) == (n - 1, 1)
    assert row["varcap_mean"] == pytest.approx(100.0 * (n - 2) / (n - 1))
    assert not row["within_band"] and row["verdict"] == "out of band"  # the row fails, and says where
    assert "gen0-001" in row["explanation"]
    t = gc.instance_table(pr, runs)
    ias = t.filter(t["claim"] == gc.ROW_IDS["ias"])
    assert ias.height == n and ias["decisive"].to_list() == [False] + [True] * (n - 1)
    assert ias["holds"].to_list() == [None, False] + [True] * (n - 2)


def test_targetasap_and_slacksched_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    pr = QUICK
    n = len(gc.gen_instances(pr))

    def goodput(k):  # TargetASAP loses goodput on instance 0
        return 0.6 if k == ("targetasap", "policy", 0) else 0.7

    runs = _runs(pr, lambda k: 0.0 if k[2] == n - 1 else 5.0, goodput)  # the last instance: nobody kills
    monkeypatch.setattr(gc, "_mean_jct", lambda runs, b, s: (100.0, 90.0))  # SlackSched always faster
    ta = gc._share("targetasap")(pr, runs)["default"]
    assert ta[0] == 0.0 and ta[1:-1] == [100.0] * (n - 2)
    assert gc._reasons("targetasap")(pr, runs)[-1] == "FirstFitAware interrupts no job"
    assert gc._reasons("slacksched")(pr, runs)[-1].startswith("random matching")
    monkeypatch.setattr(repro, "HEADLINES", [h for h in repro.HEADLINES if h.id in gc.ROW_IDS.values()][1:])
    df = repro.reproduction_rows(pr, runs)
    ta_row, ss_row = df.row(0, named=True), df.row(1, named=True)
    assert ta_row["n_decisive"] == n - 1 and not ta_row["within_band"]
    assert ss_row["within_band"] and ss_row["varcap_mean"] == 100.0 and ss_row["n_degenerate"] == 1
