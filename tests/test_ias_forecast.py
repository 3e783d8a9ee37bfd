"""``ias-forecast`` (item 2): forecast-predicted machine-interval ends inside IAS."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sim import simulate
from sim.capacity.trace import CapacityTrace
from sim.energy import CarbonSignal
from sim.forecast import forecast_matrix
from sim.policies.ias_forecast import (
    confidence_mask,
    end_offsets,
    forecast_models,
    predicted_alive,
)

H = 3600.0
BUDGET = 100.0


def _case() -> tuple[CarbonSignal, CapacityTrace]:
    """Two machines under a carbon budget B = 100: intensity 100 → both on, 200 → machine 0 only. Machine 1
    is on for [0, 2 h) and [3 h, 13 h): its survival model says a 5-h job survives with probability 0.5."""
    y = np.array([100.0, 100.0, 200.0] + [100.0] * 10 + [200.0] * 35)
    alive = predicted_alive(y[:20], BUDGET, 0.0, 2).astype(np.int64)
    assert alive.tolist() == [2, 2, 1] + [2] * 10 + [1] * 7
    cap = CapacityTrace(
        np.arange(20) * H, alive, 2, 20 * H, H, "carbon_budget", {"budget": BUDGET, "floor": 0.0}
    )
    return CarbonSignal(y), cap


def _run(policy: str, settings: dict[str, str]) -> pl.DataFrame:
    sig, cap = _case()
    jobs = pl.DataFrame({"job_id": ["a"], "submit_s": [0.0], "duration_s": [5 * H], "cores": [24.0]})
    # no job is big (H1 would send it to the stable machine 0): every job is judged on machine 1
    st = {"long_job_thresh": "1e18", **settings}
    return simulate(jobs, cap, 2, 24, 20 * H, policy, st, carbon=sig).jobs


def test_oracle_forecast_trusted_waits_for_the_interval_that_outlasts_the_job() -> None:
    ias = _run("ias", {})
    assert ias["terminations"][0] == 1  # S(5 h)/S(0) = 0.5 ≥ 1 − A: started at 0, killed at 2 h
    fc = _run("ias-forecast", {"method": "oracle", "confidence": "0"})
    # the forecast says machine 1 is off at 2 h: not before 3 h, when it is on until 13 h
    assert fc["terminations"][0] == 0
    assert fc["first_start_s"][0] == pytest.approx(3 * H) and fc["end_s"][0] == pytest.approx(8 * H)
    # never confident (confidence > 1): the survival model alone, i.e. ias
    never = _run("ias-forecast", {"method": "oracle", "confidence": "1.5"})
    assert never["terminations"][0] == 1


def test_predicted_ends_and_confidence_by_hand() -> None:
    # capacity 3, 1, 3 one, two, three hours on: machine 0 stays on through the horizon (offset H = 4), 1
    # and 2 are off two hours on (their interval ends even though capacity recovers after)
    assert end_offsets(np.array([[3.0, 1.0, 3.0]]), np.array([0, 1, 2])).tolist() == [[4, 2, 2]]
    alive = np.array([2.0, 2.0, 1.0, 1.0, 2.0, 2.0])
    good = np.array([[2.0, 2.0, 1.0], [2.0, 1.0, 1.0], [1.0, 1.0, 2.0], [1.0, 2.0, 2.0]] + [[2.0] * 3] * 2)
    ok, rate = confidence_mask(alive, good, 1, 0.9, 168)
    # the forecast issued at hour 0 is scored at hour 3 (its horizon ends then): machine 1 predicted off at 2 h, actual 2 h
    assert np.isnan(rate[:3]).all() and rate[3] == 1.0 and ok[3] and not ok[:3].any()
    late = good.copy()
    late[0] = [2.0, 2.0, 2.0]  # predicted on through the horizon, actually off at 2 h: an overshoot
    ok, rate = confidence_mask(alive, late, 1, 0.9, 168)
    assert rate[3] == 0.0 and not ok[3]


def test_models_and_confidence_never_read_forecasts_or_capacity_after_the_decision_hour() -> None:
    rng = np.random.default_rng(3)
    y = rng.uniform(50, 400, 24 * 20)
    machines = 10
    pred = predicted_alive(forecast_matrix(y, np.arange(len(y)), "persist24"), 150.0, 0.0, machines)
    alive = predicted_alive(y, 150.0, 0.0, machines)
    from sim.capacity.intervals import IntervalModel

    base = [IntervalModel(np.array([H, 5 * H]), np.array([0.5, 0.0]), 2, 5 * H)]
    ok, _ = confidence_mask(alive, pred, 2, 0.5, 168)
    grid, _ = forecast_models(alive, pred, base, 0.0, 2, ok)
    assert ok.any() and not ok.all()  # the check below compares both kinds of hour
    k = 24 * 12
    pred2, alive2 = pred.copy(), alive.copy()
    pred2[k + 1 :] = rng.integers(0, machines + 1, pred2[k + 1 :].shape)  # forecasts issued later
    alive2[k + 1 :] = rng.integers(0, machines + 1, len(alive2) - k - 1)  # capacity of later hours
    ok2, _ = confidence_mask(alive2, pred2, 2, 0.5, 168)
    assert (ok2[: k + 1] == ok[: k + 1]).all()
    grid2, _ = forecast_models(alive2, pred2, base, 0.0, 2, ok2)
    for e in range(k + 1):
        for a, b in zip(grid[e], grid2[e], strict=True):
            assert np.array_equal(a.times, b.times) and np.array_equal(a.surv, b.surv), e
    assert any(
        not np.array_equal(a.times, b.times)
        for e in range(k + 1, len(y))
        for a, b in zip(grid[e], grid2[e], strict=True)
    )


def test_ias_forecast_refuses_a_run_without_a_carbon_budget() -> None:
    jobs = pl.DataFrame({"job_id": ["a"], "submit_s": [0.0], "duration_s": [H], "cores": [1.0]})
    cap = CapacityTrace.constant(2, 4 * H)
    with pytest.raises(ValueError, match="carbon"):
        simulate(jobs, cap, 2, 24, 4 * H, "ias-forecast", {}, carbon=CarbonSignal(np.full(48, 100.0)))
