"""analysis.robustness: the ias-robustness grid's per-cell cut and goodput against FF, and its chart."""

from __future__ import annotations

import json

import polars as pl
import pytest
from vl_convert import vegalite_to_png

from analysis import robustness


def _rows() -> pl.DataFrame:
    """Two cells × (ff, ias-a0.6) × two replicates, keys as study_results gives them (strings)."""
    keys, terms, good = [], [], []
    # cell A (α 1.5, xm 300, light, 0.5): FF 100/200 terminations, IAS 50/50, goodput −1 pp both seeds
    # cell B (α 1.5, xm 3600, light, 0.9): FF 100/100, IAS 300/100, goodput −3 / −1 pp
    for cell, ff_t, ias_t, ias_g in (
        ((1.5, 300.0, "light", 0.5), (100, 200), (50, 50), (0.49, 0.49)),
        ((1.5, 3600.0, "light", 0.9), (100, 100), (300, 100), (0.47, 0.49)),
    ):
        for r in (0, 1):
            for variant, t, g in (("ff", ff_t[r], 0.5), ("ias-a0.6", ias_t[r], ias_g[r])):
                keys.append([str(x) for x in (*cell, variant, r)])
                terms.append(t)
                good.append(g)
    return pl.DataFrame(
        {"key": keys, "replicate": [int(k[-1]) for k in keys], "terminations": terms, "goodput": good}
    )


def test_grid_cut_goodput_and_holds_per_cell() -> None:
    tab = robustness.grid(_rows())
    a, b = tab.row(0, named=True), tab.row(1, named=True)
    assert (a["alpha"], a["xm_s"], a["mix"], a["load"]) == (1.5, 300.0, "light", 0.5)
    assert a["cut_pct"] == pytest.approx((50 + 75) / 2) and a["goodput_pp"] == pytest.approx(-1.0)
    assert a["holds"] and a["replicates"] == 2
    # mean cut (−200 + 0) / 2 = −100 % and goodput −2 pp: fails on the cut (goodput −2.0 itself holds)
    assert b["cut_pct"] == pytest.approx(-100.0) and b["goodput_pp"] == pytest.approx(-2.0)
    assert not b["holds"]


def test_grid_cut_is_null_and_fails_where_ff_has_no_termination() -> None:
    df = _rows().with_columns(pl.lit(0).alias("terminations"))
    tab = robustness.grid(df)
    assert tab["cut_pct"].null_count() == 2 and not tab["holds"].any()


def test_grid_refuses_keys_of_another_study() -> None:
    df = pl.DataFrame(
        {"key": [["zipf-1.5", "ff", "0"]], "replicate": [0], "terminations": [1], "goodput": [0.5]}
    )
    with pytest.raises(ValueError, match="alpha, xm_s, mix, load"):
        robustness.grid(df)


def test_grid_chart_marks_failing_cells_and_renders() -> None:
    ch = robustness.grid_chart(robustness.grid(_rows()))
    spec = ch.to_dict()
    data = [d for ds in spec["datasets"].values() for d in ds]
    labels = sorted(d["label"] for d in data)
    assert labels == ["-1.0", "-100 ✗", "-2.0 ✗", "62"]  # cut 62.5 rounds to 62 (half to even)
    assert "1 of 2 cells hold" in json.dumps(spec["title"])
    png = vegalite_to_png(spec, scale=1)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000
