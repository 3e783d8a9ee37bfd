"""IAS's H2 on a capacity trace read from a file: the change period is inferred, or the trace refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sim.api import simulate
from sim.policies.ias import change_period_s


def _csv(tmp_path: Path, times: list[float], alive: list[int]) -> Path:
    f = tmp_path / "cap.csv"
    pl.DataFrame({"time_s": times, "machines_alive": alive}).write_csv(f)
    return f


def _one_job(submit_s: float, duration_s: float) -> pl.DataFrame:
    return pl.DataFrame({"job_id": ["j"], "submit_s": [submit_s], "duration_s": [duration_s], "cores": [1.0]})


def test_h2_aligns_to_a_csv_traces_30_minute_period(tmp_path: Path) -> None:
    # changes every 30 minutes: 4 machines ↔ 3
    times = [1800.0 * k for k in range(8)]
    cap = _csv(tmp_path, times, [4, 3] * 4)
    # a 20-minute job submitted at 25 min ends at 45 min, past the 30-minute boundary: H2 holds it to 30 min
    # (hourly alignment, varcap ≤ 0.3's, would have started it at once: 45 min is before the hour)
    r = simulate(_one_job(1500.0, 1200.0), cap, 4, 24.0, 4 * 3600.0, "ias-h2")
    assert r.jobs["first_start_s"][0] == 1800.0
    assert r.params["period_s"] == -1.0  # inferred, not given
    # the full IAS (H1 + H2 + H4) reads the same period
    from sim.capacity.trace import read_capacity
    from sim.policies import get_policy, parse_params
    from sim.problem import Platform, Problem

    trace = read_capacity(cap, 4, 4 * 3600.0)
    assert trace.period_s is None
    problem = Problem.build(_one_job(1500.0, 1200.0), Platform(4, 24.0, None), trace, 4 * 3600.0)
    pol = get_policy("ias")
    assert pol.admission(problem, parse_params(pol, {})).period_s == 1800.0


def test_period_rule() -> None:
    # the grid every change lies on; a repeated value is no change and does not break it
    assert change_period_s(np.array([0.0, 1800, 3600, 5400, 9000]), np.array([4, 3, 3, 4, 3])) == 1800.0
    assert change_period_s(np.array([0.0, 900, 2700, 3600]), np.array([4, 3, 4, 3])) == 900.0
    assert change_period_s(np.arange(6) * 3600.0, np.array([5, 4, 5, 5, 4, 3])) == 3600.0
    with pytest.raises(ValueError, match="never changes.*period_s"):
        change_period_s(np.array([0.0, 3600.0]), np.array([4, 4]))
    # a trace that never changes needs no period: H2 holds nothing there
    from sim.capacity.trace import CapacityTrace
    from sim.policies.ias import h2_period

    assert h2_period(CapacityTrace.constant(4, 7200.0)) is None
    assert h2_period(CapacityTrace.constant(4, 7200.0), 900.0) == 900.0
    with pytest.raises(ValueError, match="no change period.*period_s"):
        change_period_s(np.array([0.0, 1000, 2011, 3517]), np.array([4, 3, 4, 3]))
    with pytest.raises(ValueError, match="no change period"):
        change_period_s(np.array([0.0, 1000.5, 2001]), np.array([4, 3, 4]))


def test_a_trace_without_a_period_is_refused_unless_given(tmp_path: Path) -> None:
    cap = _csv(tmp_path, [0.0, 1000.0, 2011.0, 3517.0], [4, 3, 4, 3])
    with pytest.raises(ValueError, match="period_s"):
        simulate(_one_job(0.0, 600.0), cap, 4, 24.0, 7200.0, "ias")
    r = simulate(_one_job(1500.0, 600.0), cap, 4, 24.0, 7200.0, "ias-h2", {"period_s": "1000"})
    assert r.jobs["first_start_s"][0] == 2000.0  # ends after the 2000 s boundary: held to it
    # a constant trace: no change to align to, the job starts at once
    const = _csv(tmp_path, [0.0], [4])
    assert (
        simulate(_one_job(1500.0, 1200.0), const, 4, 24.0, 7200.0, "ias").jobs["first_start_s"][0] == 1500.0
    )
    # without H2 no period is needed
    assert simulate(_one_job(0.0, 600.0), cap, 4, 24.0, 7200.0, "ias-h4").jobs["first_start_s"][0] == 0.0
