"""The generalization study of ``ias``/``ias-general`` against First-Fit (``--quick`` size)."""

from __future__ import annotations

import math

import polars as pl

from studies.thesis.general import MAIN, cut_pct, generalization_table, holds, main, shares


def test_cut_and_holds() -> None:
    assert cut_pct(10, 4) == 60.0 and cut_pct(0, 0) == 0.0 and math.isinf(cut_pct(0, 3))
    assert cut_pct(10, 12) == -20.0
    assert holds(5.0, -2.0) and not holds(5.0, -2.01) and not holds(0.0, 3.0)


def test_quick_table_runs_and_is_consistent(capsys, tmp_path) -> None:
    main(["--quick", "--out", str(tmp_path / "t.parquet")])
    out = capsys.readouterr().out
    assert "ias-general" in out and "hold_pct_decisive" in out
    t = pl.read_parquet(tmp_path / "t.parquet")
    assert t.height == 6 and set(t["policy"]) == set(MAIN)
    assert t.select("instance", "ff_kills").unique().height == 3  # First-Fit's side shared per instance
    for r in t.iter_rows(named=True):
        assert r["cut_pct"] == cut_pct(r["ff_kills"], r["kills"])
        assert r["holds"] == holds(r["cut_pct"], r["goodput_pt"])
        assert r["decisive"] == (r["degenerate_reason"] == "")
    s = shares(t)
    assert s["n_decisive"].to_list() == [int(t.filter(pl.col("policy") == p)["decisive"].sum()) for p in MAIN]
    again = generalization_table(2026, 1, 0.25, MAIN).drop("cpu_s", "ff_cpu_s")
    assert again.equals(t.head(2).drop("cpu_s", "ff_cpu_s"))  # deterministic from the master seed
