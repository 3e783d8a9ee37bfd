"""The observed-grid study's summary and chart, and ``ias-general``'s robustness grid (quick profiles, no
pipeline). The study's table from cached runs: tests/test_thesis_ias_table.py."""

from __future__ import annotations

import math

import polars as pl
import pytest

from studies.thesis.general import MAIN
from studies.thesis.general_robustness import PROFILES as GRID_PROFILES
from studies.thesis.general_robustness import grid_cells, grid_shares, grid_table
from studies.thesis.observed import mean_ci, summary


def test_mean_ci() -> None:
    assert mean_ci([2.0]) == (2.0, 2.0, 2.0)
    m, lo, hi = mean_ci([1.0, 3.0, float("nan")])
    assert m == 2.0 and lo < 1.0 and hi > 3.0
    assert all(math.isnan(x) for x in mean_ci([]))


def test_summary_counts_and_means_over_decisive_rows_only() -> None:
    wl = "pareto-1.5-300-light"
    rows = [
        # (grid, seed, policy, decisive, reason, holds, ff kills, kills, cut, goodput)
        ("ERCOT", 0, "ias", True, "", True, 10, 5, 50.0, -1.0),
        ("ERCOT", 1, "ias", True, "", False, 10, 15, -50.0, 0.5),
        ("ERCOT", 2, "ias", False, "First-Fit terminates nothing", False, 0, 0, None, 0.0),
        ("ERCOT", 3, "ias", False, "not run: over the 60 s scenario budget", None, 10, None, None, None),
        ("MISO", 0, "ias", False, "First-Fit terminates nothing", False, 0, 1, None, -0.2),
    ]
    cols = ("grid", "seed", "policy", "decisive", "degenerate_reason", "holds", "ff_terminations",
            "terminations", "termination_cut_pct", "goodput_diff_pp")  # fmt: skip
    t = pl.DataFrame([dict(zip(cols, r, strict=True)) for r in rows], infer_schema_length=None)
    s = summary(t.with_columns(pl.lit(wl).alias("workload")))
    ercot, miso = s.row(0, named=True), s.row(1, named=True)
    assert (ercot["runs"], ercot["n_decisive"], ercot["n_degenerate"], ercot["n_not_run"], ercot["n_hold"]) == (4, 2, 1, 1, 1)
    assert ercot["degenerate_reason"] == "First-Fit terminates nothing"
    assert ercot["termination_cut_pct"] == 0.0 and ercot["terminations"] == 10.0
    assert ercot["termination_cut_pct_lo"] < -50.0 and ercot["termination_cut_pct_hi"] > 50.0
    assert miso["n_decisive"] == 0 and math.isnan(miso["termination_cut_pct"])


def test_general_robustness_quick_grid() -> None:
    pr = GRID_PROFILES["quick"]
    t = grid_table(pr)
    assert t.height == len(grid_cells(pr)) * len(pr.seeds) * len(MAIN)
    s = grid_shares(t)
    for r in s.iter_rows(named=True):
        d = t.filter((pl.col("policy") == r["policy"]) & pl.col("decisive"))
        assert r["n_decisive"] == d.height and r["n_hold"] == int(d["holds"].sum())
        if d.height:
            assert r["hold_pct_decisive"] == pytest.approx(100.0 * r["n_hold"] / d.height)


def test_observed_chart_marks_decisive_rows_only() -> None:
    from analysis.ias import observed_chart

    rows = [
        {"grid": g, "workload": "pareto-1.5-300-light", "policy": p, "n_decisive": n, "termination_cut_pct": 10.0,
         "termination_cut_pct_lo": 5.0, "termination_cut_pct_hi": 15.0, "goodput_diff_pp": -0.5}
        for g, n in (("ERCOT", 2), ("MISO", 0))
        for p in MAIN
    ]  # fmt: skip
    spec = observed_chart(pl.DataFrame(rows)).to_dict()
    data = next(iter(spec["datasets"].values()))
    assert {r["grid"] for r in data} == {"ERCOT"} and len(data) == len(MAIN)
