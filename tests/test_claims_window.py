"""Table 6.2's cut per month, its drift and the steady-state window; the kill log they read."""

from __future__ import annotations

import numpy as np
import pytest

from studies.thesis import window as w

DAY = 86400.0


def _times(rate_per_day: list[float], block_days: float = 5.0) -> np.ndarray:
    """Evenly spread kill times with ``rate_per_day[k]`` kills a day in block k."""
    out = []
    for k, r in enumerate(rate_per_day):
        n = int(round(r * block_days))
        out.append(k * block_days * DAY + (np.arange(n) + 0.5) * block_days * DAY / max(n, 1))
    return np.concatenate(out)


def test_steady_state_starts_where_first_fits_kill_rate_goes_flat() -> None:
    # FF's kills per day grow for 20 days, then stay at 100 ± 10 %: steady from day 20
    rates = [10, 30, 60, 70, 100, 95, 105, 100, 98, 102, 100, 99]
    assert w.steady_start(_times(rates), 60 * DAY) == pytest.approx(20 * DAY)
    # a rate that keeps growing has no steady tail of two blocks within ±20 %
    assert w.steady_start(_times([10, 20, 40, 80, 160, 320]), 30 * DAY) is None
    assert w.steady_start(np.array([]), 30 * DAY) is None  # FF kills nothing


def test_month_cuts_drift_and_steady_window(monkeypatch: pytest.MonkeyPatch) -> None:
    from studies.claims import QUICK
    from studies.thesis.scenarios import ch6_scenarios

    sc = ch6_scenarios(QUICK)
    ff, ias = sc[("zipf-1.8", "ff", 0)], sc[("zipf-1.8", "ias", 0)]
    h = ff.horizon_s  # 37 days: month 1 (30 d) and 7 days of month 2
    tf = _times([20.0] * 2 + [100.0] * 6, 5.0)  # FF: 100 kills in days 0–10, 600 in days 10–40 …
    tf = tf[tf <= h]
    ti = _times([40.0] * 8, 5.0)  # IAS: flat 40 a day
    ti = ti[ti <= h]
    monkeypatch.setattr(w, "kill_times", lambda runs, s: tf if s.id == ff.id else ti)
    got = w.window_cuts({}, ff, ias)
    f1, i1 = (tf <= 30 * DAY).sum(), (ti <= 30 * DAY).sum()
    assert got["month 1"] == pytest.approx(100 * (f1 - i1) / f1)
    assert got["month 2"] == pytest.approx(60.0)  # 100 vs 40 a day
    assert got["drift_pp"] == pytest.approx(got["month 2"] - got["month 1"]) and got["drift_pp"] > 10
    assert got["steady_from_d"] == pytest.approx(10.0) and got["steady"] == pytest.approx(60.0)


def test_kill_log_matches_the_terminations() -> None:
    from sim import CapacityTrace
    from sim.api import simulate
    from tests.test_sim_engine import frame

    jobs = frame([(0, 7200, 1), (0, 7200, 1), (100, 600, 1), (4000, 9000, 1)])
    cap = CapacityTrace(np.array([0.0, 3600.0, 5400.0, 9000.0]), np.array([2, 0, 2, 1]), 2, 20000.0)
    r = simulate(jobs, cap, 2, 1.0, 20000.0, "ff")
    assert r.kills is not None and r.kills.height == r.metrics["terminations"] > 0
    assert r.kills["kill_s"].is_sorted() and set(r.kills["kill_s"].to_list()) <= {3600.0, 9000.0}
    per_job = r.kills.group_by("job_id").len()
    t = r.jobs.join(per_job, on="job_id", how="left").fill_null(0)
    assert t["terminations"].to_list() == t["len"].to_list()


def test_table_6_2_rows_report_the_months_and_the_steady_window(monkeypatch: pytest.MonkeyPatch) -> None:
    from studies import reproduction as repro
    from studies import thesis
    from studies.thesis import ias

    pr = repro.QUICK
    sc = thesis.ch6_scenarios(pr)
    runs = {s.id: {"metrics": {"terminations": 100.0 if k[1] == "ff" else 20.0}} for k, s in sc.items()}
    monkeypatch.setattr(ias, "ias_decision", lambda runs, f, i: "")
    fake = {"month 1": -45.0, "month 2": 51.0, "drift_pp": 96.0, "steady": 50.0, "steady_from_d": 25.0}
    monkeypatch.setattr(ias, "window_cuts", lambda runs, f, i: fake)
    h = next(x for x in repro.HEADLINES if x.id == "thesis-6.2-ias-cut-zipf-1.8")
    monkeypatch.setattr(repro, "HEADLINES", [h])
    df = repro.reproduction_rows(pr, runs)
    by = {r["reading"]: r for r in df.iter_rows(named=True)}
    assert by["month 1 of the run"]["varcap_mean"] == pytest.approx(-45.0)
    assert by["steady window (FF kill rate flat ±20%)"]["varcap_mean"] == pytest.approx(50.0)
    main = by["default"]
    assert "drift +96 pp" in main["notes"] and "steady from day 25" in main["notes"]
    assert "steady-state" in main["reading_history"] and "after" in main["reading_history"]
