"""The beyond_backtest chapter: its study's table (both regions, signal level and a finite platform) obeys the
bounds a backtest must, the full profile without the wheel names the span the files hold, and the chapter's
notebook renders offline from the tables."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from sim import backtest as bt
from studies.beyond_backtest import run_profile
from tests.conftest import REPO

SAMPLE = REPO / "data" / "samples" / "sgip"


@pytest.fixture(scope="module")
def june() -> tuple[pl.DataFrame, pl.DataFrame]:
    return run_profile("quick", bt.sample_files(SAMPLE), months=("2021-06", "2021-06"))


def test_the_study_table_keeps_the_bounds(june) -> None:
    res, err = june
    a = res.filter(pl.col("month") == "all")
    assert set(a["signal"]) == {"sgip-pge", "sgip-sce"} and set(a["level"]) == {"signal", "platform"}
    assert set(res["month"]) == {"2021-06", "all"} and (res["profile"] == "quick").all()
    for (sig, level), g in a.group_by(["signal", "level"]):
        oracle = g.filter(pl.col("policy") == "oracle").row(0, named=True)
        assert oracle["oracle_share_marginal"] == pytest.approx(1.0) and oracle["saved_pct_marginal"] > 0
        pers = g.filter(pl.col("forecast") == "persistence")
        assert (pers["saved_pct_marginal"].abs() < 1e-9).all()  # a flat forecast runs now
        if level == "signal":  # nothing beats the clairvoyant start on the same signal
            assert (g["saved_pct_marginal"] <= oracle["saved_pct_marginal"] + 1e-9).all(), sig
            knows = g.filter(pl.col("policy").is_in(["carbon-aware-sdk", "compute-gardener", "oracle"]))
            assert (knows["deadline_misses"] == 0).all()
            assert g["saved_pct_average"].is_not_null().all()  # June 2021: Electricity Maps' CAISO year
        else:
            assert g["saved_pct_average"].is_null().all()
    assert (a["cpu_s"] >= 0).all() and (a["optimises"] == "marginal").all()
    # the chapter's summary: one row per rule, region and level; a rule without a forecast has one run
    from analysis.backtest import summary

    s = summary(res)
    assert s.height == 3 * 2 * 2 and (s["saved_oracle_pct"] > 0).all()
    cg = s.filter(pl.col("policy") == "compute-gardener")
    assert cg["saved_perfect_pct"].is_null().all() and cg["saved_issued_pct"].is_not_null().all()
    cats = s.filter((pl.col("policy") == "cats") & (pl.col("level") == "signal"))
    assert (cats["saved_persistence_pct"].abs() < 1e-9).all() and (cats["deadline_misses"] > 0).all()
    # the forecast's error grows with the horizon (5 min vs 3 h), per region
    for _, e in err.group_by("signal"):
        e = e.sort("horizon_min")
        assert e.height == 36 and e["mae_g"][0] < e["mae_g"][-1]


def test_full_profile_without_the_wheel_names_the_span() -> None:
    with pytest.raises(ValueError, match=r"2019-05.csv.gz: not in .*\(months there: 2021-06 … 2021-08\)"):
        run_profile("full", bt.sample_files(SAMPLE))
    with pytest.raises(ValueError, match=r"unknown profile 'medium'; profiles: quick, full"):
        run_profile("medium")


@pytest.mark.slow  # starts a Jupyter kernel and executes the chapter
def test_the_chapter_renders_offline(june, tmp_path: Path) -> None:
    from assets.reports import execute_notebook
    from assets.schema import OUT_BACKTEST, OUT_BACKTEST_ERRORS
    from assets.warehouse import write_tables

    res, err = june
    wh = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(wh)) as con:
        write_tables(con, [(OUT_BACKTEST, res), (OUT_BACKTEST_ERRORS, err)])
    nb = REPO / "notebooks" / "beyond_backtest.ipynb"
    ex = execute_notebook(nb, tmp_path, wh, {"profile": "auto"}, 600)
    page = ex.html_path.read_text()
    assert {
        "saving_per_rule",
        "saving_per_month",
        "oracle_share",
        "deadline_misses",
        "forecast_error",
    } <= {p.stem for p in ex.figures}, ex.figures
    assert "out_backtest (quick): " in page and "saved_issued_pct" in page
