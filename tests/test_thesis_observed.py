"""The observed-grid study and ``ias-general``'s robustness grid (quick profiles, no pipeline: the carbon
input is written from the embedded Electricity Maps sample)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from studies.signals import GRIDS
from studies.thesis.general import MAIN, cut_pct, holds
from studies.thesis.general_robustness import PROFILES as GRID_PROFILES
from studies.thesis.general_robustness import grid_cells, grid_shares, grid_table
from studies.thesis.observed import PROFILES, mean_ci, observed_table, summary
from tests.conftest import REPO

ERCOT = {"ERCOT": GRIDS["ERCOT"]}


def _inputs(tmp_path: Path) -> Path:
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
    assert df.height == 720
    df.write_parquet(tmp_path / "grid_carbon.parquet")
    return tmp_path


def test_mean_ci() -> None:
    assert mean_ci([2.0]) == (2.0, 2.0, 2.0)
    m, lo, hi = mean_ci([1.0, 3.0, float("nan")])
    assert m == 2.0 and lo < 1.0 and hi > 3.0
    assert all(math.isnan(x) for x in mean_ci([]))


def test_observed_quick_profile(tmp_path: Path) -> None:
    pr = PROFILES["quick"]
    t = observed_table(pr, _inputs(tmp_path), ERCOT)
    assert t.height == len(pr.seeds) * len(pr.workloads) * len(MAIN)
    assert set(t["grid"]) == {"ERCOT"} and set(t["policy"]) == set(MAIN)
    for r in t.iter_rows(named=True):
        assert r["cut_pct"] == cut_pct(r["ff_kills"], r["kills"])
        assert r["holds"] == holds(r["cut_pct"], r["goodput_pt"])
        assert r["decisive"] == (r["degenerate_reason"] == "")
    s = summary(t)
    assert s.height == len(MAIN)
    for r in s.iter_rows(named=True):
        d = t.filter((pl.col("policy") == r["policy"]) & pl.col("decisive"))
        assert r["n_decisive"] == d.height and r["n_decisive"] + r["n_degenerate"] == r["runs"]
        assert r["n_hold"] == int(d["holds"].sum())
        if d.height:
            assert r["kills"] == pytest.approx(float(d["kills"].mean()))


def test_observed_missing_input_says_so(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="grid_carbon.parquet"):
        observed_table(PROFILES["quick"], tmp_path, ERCOT)


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
        {"grid": g, "workload": "pareto-1.5-300-light", "policy": p, "n_decisive": n, "cut_pct": 10.0,
         "cut_pct_lo": 5.0, "cut_pct_hi": 15.0, "goodput_pt": -0.5}
        for g, n in (("ERCOT", 2), ("MISO", 0))
        for p in MAIN
    ]  # fmt: skip
    spec = observed_chart(pl.DataFrame(rows)).to_dict()
    data = next(iter(spec["datasets"].values()))
    assert {r["grid"] for r in data} == {"ERCOT"} and len(data) == len(MAIN)
