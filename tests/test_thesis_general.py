"""The generalization study of ``ias``/``ias-general`` against First-Fit (``--quick`` size)."""

from __future__ import annotations

import math

import polars as pl
import pytest

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


def test_kills_decompose_into_variable_starts_and_their_kill_share() -> None:
    """Under LIFO every kill is an attempt started on a variable machine: kills = starts × share."""
    t = generalization_table(2026, 3, 0.25, MAIN)
    assert t["ff_kills"].sum() > 0  # the check bites
    for r in t.iter_rows(named=True):
        for pre, kills in (("ff_", r["ff_kills"]), ("", r["kills"])):
            assert round(r[f"{pre}var_starts"] * r[f"{pre}var_kill_pct"] / 100.0) == kills


def test_index_selects_instances() -> None:
    t = generalization_table(2026, 3, 0.25, MAIN, only=[2]).drop("cpu_s", "ff_cpu_s")
    assert set(t["instance"]) == {"gen2026-002"}
    full = generalization_table(2026, 3, 0.25, MAIN).drop("cpu_s", "ff_cpu_s")
    assert t.equals(full.filter(pl.col("instance") == "gen2026-002"))
    with pytest.raises(ValueError, match="instance indices"):
        generalization_table(2026, 3, 0.25, MAIN, only=[3])
