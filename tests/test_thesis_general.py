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


def test_mechanism_measures_a_hand_made_run() -> None:
    """Machine 0 always on and busy for 3 h; machine 1 on every other hour. ias-general starts the
    30-minute job on machine 1 at once and holds the 2-hour job for machine 0 (3 h): machine 1 idles
    0.5 h + 1 h while that job waits."""
    import numpy as np

    from sim.api import simulate
    from studies.thesis.general import mechanism
    from tests.test_ias_general import H, alternating
    from tests.test_sim_engine import frame

    cap, jobs = alternating(48), frame([(0, 3 * H, 1), (0, 2 * H, 1), (0, 1800, 1)])
    out = simulate(jobs, cap, 2, 1, 48 * H, "ias-general").tables.output
    assert np.asarray(out.first_start_s).tolist() == [0.0, 3 * H, 0.0]
    m = mechanism(out, jobs, cap, 1, 1.0, 48 * H, H)
    assert m["var_starts_period"] == 1 and m["var_starts_day"] == 0
    assert m["done_kch_period"] == pytest.approx(0.5e-3) and m["done_kch_day"] == pytest.approx(5e-3)
    assert m["wait_kjh_day"] == pytest.approx(3e-3) and m["wait_kjh_period"] == 0.0
    assert m["idle_var_long_kch"] == pytest.approx(1.5e-3) == m["idle_var_queue_kch"]
    assert m["done_var_kch"] == pytest.approx(0.5e-3) and m["lost_kch"] == 0.0
    assert m["mean_wait_h"] == pytest.approx(1.0) and m["never_started"] == 0


def test_isolate_adds_first_fit_and_the_mechanism_on_decisive_instances_only() -> None:
    from studies.thesis.general import CLASSES, isolation_table, markdown

    # half a day of instances 1 (degenerate: every job big under H1) and 3 (decisive) of master seed 0
    full = generalization_table(0, 4, 0.5, MAIN, only=[1, 3])
    t = generalization_table(0, 4, 0.5, MAIN, only=[1, 3], decisive_only=True, isolate=True)
    decisive = set(full.filter(pl.col("decisive"))["instance"])
    assert decisive == {"gen0-003"} and set(t["instance"]) == decisive
    assert t.filter(pl.col("policy") == "ff").height == len(decisive)
    for r in t.iter_rows(named=True):
        assert sum(r[f"var_starts_{c}"] for c in CLASSES) == r["var_starts"]
        if r["policy"] == "ff":
            assert r["kills"] == r["ff_kills"] and r["goodput_pt"] == 0.0
    same = t.filter(pl.col("policy") != "ff").select(full.columns).drop("cpu_s", "ff_cpu_s")
    assert same.equals(full.filter(pl.col("decisive")).drop("cpu_s", "ff_cpu_s"))
    iso = isolation_table(t)
    assert iso.filter(pl.col("policy") == "ias")["vs_ias_pt"].to_list() == [0.0] * len(decisive)
    md = markdown(iso)
    assert md.count("\n") == iso.height + 1 and "| gen0-003 | `ias` |" in md


def test_open_share_is_the_on_time_a_job_passes_the_survival_test() -> None:
    """Machine 1's intervals last exactly an hour: a 30-minute job passes S(u + d)/S(u) ≥ ½ in the first
    half of each (its own and the workload's blind start both complete with ½); a 90-minute job never."""
    import numpy as np

    from studies.thesis.general import open_share
    from tests.test_ias_general import alternating

    share = open_share(alternating(48), np.array([1800.0]), hours=(0.5, 1.5))
    assert share == {"blind": [50.0, 0.0], "own": [50.0, 0.0], "median": [50.0, 0.0]}
    # intervals of 1, 10, 1, 10 and 10 h (32 h, 384 five-minute samples): a 90-minute job outlives the
    # interval with 0.6 at uptime < 1 h, 1 up to 8.5 h, 0 after. The median passes 2·12 + 3·102 samples;
    # its own blind start (0.797) only the 3·90 between 1 and 8.5 h of the long intervals
    from tests.test_ias_general import H, mostly_long

    graded = open_share(mostly_long(), np.array([1.5 * H]), hours=(1.5,))
    assert graded["median"] == [pytest.approx(100.0 * 330 / 384)]
    assert graded["own"] == graded["blind"] == [pytest.approx(100.0 * 270 / 384)]
