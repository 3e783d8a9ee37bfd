"""Per-attempt energy and carbon (sim/energy.py) and the ``defer`` policy."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from sim import simulate
from sim.capacity.trace import CapacityTrace
from sim.energy import CARBON_METRIC_NAMES, POWER, CarbonSignal
from studies.catalogue import study

H = 3600.0


def _jobs(submit: list[float], dur: list[float], cores: list[float]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "job_id": [str(i) for i in range(len(submit))],
            "submit_s": submit,
            "duration_s": dur,
            "cores": cores,
        }
    )


def test_energy_and_carbon_of_one_attempt_by_hand() -> None:
    sig = CarbonSignal(np.array([100.0, 300.0, 300.0, 300.0]))
    r = simulate(_jobs([0.0], [2 * H], [6.0]), CapacityTrace.constant(1, 4 * H), 1, 24, 4 * H, carbon=sig)
    kw = 6 / 24 * POWER.busy_w / 1000  # the attempt's share of the machine
    assert r.jobs["energy_kwh"][0] == pytest.approx(kw * 2)
    assert r.jobs["gco2"][0] == pytest.approx(kw * (100 + 300))
    idle, dyn = POWER.idle_w / 1000, 6 / 24 * (POWER.busy_w - POWER.idle_w) / 1000
    assert r.metrics["energy_kwh"] == pytest.approx(idle * 4 + dyn * 2)
    assert r.metrics["gco2"] == pytest.approx(idle * (100 + 300 * 3) + dyn * (100 + 300))
    assert r.metrics["gco2_per_useful_core_hour"] == pytest.approx(r.metrics["gco2"] / 12)
    assert r.metrics["wasted_gco2"] == 0 and r.metrics["carbon_saving_pct"] == pytest.approx(0)


def test_killed_attempts_carry_wasted_carbon() -> None:
    sig = CarbonSignal(np.full(10, 200.0))
    cap = CapacityTrace(np.array([0.0, H, 2 * H]), np.array([1, 0, 1]), 1, 8 * H)
    r = simulate(_jobs([0.0], [3 * H], [24.0]), cap, 1, 24, 8 * H, carbon=sig)
    assert r.jobs["terminations"][0] == 1
    assert r.metrics["wasted_gco2"] == pytest.approx(POWER.busy_w / 1000 * 200)  # one hour of a full machine
    assert r.jobs["wasted_gco2"][0] == pytest.approx(r.metrics["wasted_gco2"])
    assert r.metrics["carbon_saving_pct"] == pytest.approx(-100 / 3)  # 4 h of attempts for a 3-h job


def test_without_a_signal_energy_is_kept_and_carbon_is_nan() -> None:
    r = simulate(_jobs([0.0], [H], [1.0]), CapacityTrace.constant(1, 2 * H), 1, 24, 2 * H, energy=True)
    assert set(CARBON_METRIC_NAMES) <= set(r.metrics) and r.metrics["energy_kwh"] > 0
    assert math.isnan(r.metrics["gco2"]) and r.jobs["gco2"].is_nan().all()
    plain = simulate(_jobs([0.0], [H], [1.0]), CapacityTrace.constant(1, 2 * H), 1, 24, 2 * H)
    assert "gco2" not in plain.metrics and "gco2" not in plain.jobs.columns  # golden results unchanged


def _day_signal(days: int = 10) -> CarbonSignal:
    day = 300 + 200 * np.cos(np.arange(24) / 24 * 2 * np.pi)  # cleanest at hour 12
    rng = np.random.default_rng(1)
    return CarbonSignal(np.tile(day, days) * rng.uniform(0.8, 1.2, 24 * days), 0)


def test_defer_oracle_reaches_the_oracle_saving_and_honest_forecasts_fall_short() -> None:
    rng = np.random.default_rng(0)
    n = 300
    submit = np.sort(rng.uniform(2 * 86400, 8 * 86400, n))
    jobs = _jobs(list(submit), [H] * n, [1.0] * n)
    cap = CapacityTrace.constant(20, 10 * 86400)
    sig = _day_signal()
    out = {}
    for m in ("oracle", "persist24", "profile7d"):
        r = simulate(jobs, cap, 20, 24, 10 * 86400, "defer", {"method": m, "slack": "13"}, carbon=sig)
        out[m] = r.metrics
        assert r.metrics["deadline_miss_rate"] == 0
        first = r.jobs["first_start_s"].to_numpy()
        assert np.all(first >= submit) and np.all(first + H <= submit + 13 * H + 1e-6)
    assert out["oracle"]["oracle_share"] == pytest.approx(1.0)
    assert out["oracle"]["carbon_saving_pct"] > 30
    for m in ("persist24", "profile7d"):
        assert 0 < out[m]["oracle_share"] < 1
    ff = simulate(jobs, cap, 20, 24, 10 * 86400, "ff", carbon=sig).metrics
    assert ff["carbon_saving_pct"] == pytest.approx(0) and math.isnan(ff["oracle_share"])


def test_defer_misses_deadlines_when_the_platform_is_full() -> None:
    jobs = _jobs([0.0, 0.0], [H, H], [24.0, 24.0])
    r = simulate(jobs, CapacityTrace.constant(1, 10 * H), 1, 24, 10 * H, "defer", {"method": "oracle", "slack": "1"},
                 carbon=CarbonSignal(np.full(12, 100.0)))  # fmt: skip
    assert r.metrics["deadline_miss_rate"] == pytest.approx(0.5)


def test_defer_needs_a_signal() -> None:
    with pytest.raises(ValueError, match="carbon signal"):
        simulate(_jobs([0.0], [H], [1.0]), CapacityTrace.constant(1, 2 * H), 1, 24, 2 * H, "defer")


def test_carbon_defer_study_is_catalogued() -> None:
    sc = study("carbon-defer")
    assert len(sc) == 96 and {s.policy for s in sc} == {"defer"}
    assert {s.settings.get("method", "persist24") for s in sc} == {
        "oracle",
        "persist24",
        "profile7d",
        "sarimax",
    }


def test_savings_table_and_charts() -> None:
    from analysis import forecast as fc

    rows = [
        {"settings_json": f'{{"grid": "CAISO", "method": "{m}", "slack": "2.0"}}', "workload": "fixed-1",
         "carbon_saving_pct": v, "oracle_share": v / 10, "deadline_miss_rate": 0.0}
        for m, vals in (("oracle", (10.0, 12.0)), ("sarimax", (8.0, 9.0)))
        for v in vals
    ]  # fmt: skip
    sv = fc.savings(pl.DataFrame(rows))
    o = sv.filter(pl.col("method") == "oracle").row(0, named=True)
    assert o["mean"] == pytest.approx(11.0) and o["n"] == 2 and o["lo"] < 11.0 < o["hi"]
    assert o["job_hours"] == 1.0 and o["slack"] == 2.0
    fc.savings_chart(sv).to_dict()
    errs = pl.DataFrame({"grid": ["GB"] * 2, "method": ["persist24"] * 2, "horizon_h": [1.0, 2.0],
                         "mape_pct": [10.0, 11.0]})  # fmt: skip
    fc.error_chart(errs).to_dict()
