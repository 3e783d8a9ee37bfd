"""Seed 003's LWW-vs-Random evidence: who each rule kills and what the window's end leaves running."""

from __future__ import annotations

import polars as pl
import pytest

from studies.claims import QUICK
from studies.zhang_chien import claims


def _metrics(goodput: float, partial: float) -> dict[str, float]:
    return {
        "goodput": goodput,
        "goodput_partial": partial,
        "in_flight_fraction": partial - goodput,
        "wasted_fraction": 0.01,
    }


def test_victims_and_evidence_from_hand_made_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # jobs a (2 h), b (48 h), c (100 h); Random kills b and c, LWW kills a only
    work = pl.DataFrame(
        {"job_id": ["a", "b", "c"], "duration_s": [7200.0, 172800.0, 360000.0], "cores": [1, 2, 4]}
    )
    kills = {"random": [0, 1, 1], "lww": [1, 0, 0]}
    pairs = claims._random_vs_lww(QUICK)
    runs, which = {}, {}
    for rnd, lww in pairs:
        runs[rnd.id] = {"metrics": _metrics(0.30, 0.50)}
        runs[lww.id] = {"metrics": _metrics(0.29, 0.60)}
        which[rnd.id], which[lww.id] = "random", "lww"
    monkeypatch.setattr(
        claims,
        "per_job",
        lambda runs, sc: pl.DataFrame({"job_id": ["a", "b", "c"], "terminations": kills[which[sc.id]]}),
    )
    monkeypatch.setattr(claims, "workload", lambda runs, sc: work)
    v = claims.victims(runs, pairs[0][0])
    assert v["kills"] == 2 and v["victim_mean_h"] == pytest.approx((48 + 100) / 2)
    assert v["victim_over_day"] == 1.0 and v["in_flight"] == pytest.approx(0.20)
    w = claims.victims(runs, pairs[0][1])
    assert w["kills"] == 1 and w["victim_mean_h"] == pytest.approx(2.0) and w["victim_over_day"] == 0.0
    text = claims._explain_lww(QUICK, runs)
    assert text.count("seed ") == QUICK.replicates and "7-day window" in text
    assert "kills Random 2 / LWW 1" in text and "+20.0 %" in text  # (0.60 − 0.50) / 0.50


def test_lww_row_carries_the_evidence_and_the_explanation() -> None:
    h = next(x for x in claims.HEADLINES if x.id == "zhang-chien-5.3-lww-vs-random-goodput")
    assert h.explain is claims._explain_lww
    assert "window" in claims.EXPLANATIONS[h.id]
