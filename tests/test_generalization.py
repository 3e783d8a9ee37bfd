"""The generalization family: deterministic from its master seed, inside its ranges, and the IAS decisive rule."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sim.capacity.trace import CapacityTrace
from studies.generalization import (
    ALPHA,
    CHANGES_PER_HOUR,
    LOAD,
    MACHINES,
    STEP,
    IASFacts,
    change_gap_s,
    draw_instance,
    ias_decisive,
    ias_facts,
    instances,
)


def test_deterministic_from_the_master_seed() -> None:
    a, b = instances(11, 8), instances(11, 8)
    assert a == b
    assert [i.scenario("ias").id for i in a] == [i.scenario("ias").id for i in b]
    # asking for more keeps the first ones; another master seed draws other instances
    assert instances(11, 12)[:8] == a
    assert draw_instance(11, 5) == a[5]
    assert [i.row() for i in instances(12, 8)] != [i.row() for i in a]
    assert len({i.id for i in a}) == 8 and a[3].id == "gen11-003"
    # the instance's policies share everything but the policy
    ff, ias = a[0].scenario("ff"), a[0].scenario("ias")
    assert ff.id != ias.id and ff.params() | {"policy": "ias"} == ias.params()


def test_draws_stay_in_the_family_ranges() -> None:
    draws = instances(3, 300)
    for i in draws:
        assert MACHINES[0] <= i.machines <= MACHINES[1]
        assert CHANGES_PER_HOUR[0] <= i.changes_per_hour <= CHANGES_PER_HOUR[1]
        assert STEP[0] <= i.step <= STEP[1]
        assert ALPHA[0] <= i.alpha <= ALPHA[1]
        assert LOAD[0] <= i.load <= LOAD[1]
        assert i.workload == f"pareto-{i.alpha:g}-{i.min_duration_s:g}-{i.mix}"
        assert i.period_s == pytest.approx(3600.0 / i.changes_per_hour)
    # both duration families and both core mixes appear, and the ranges are covered, not a corner
    assert {i.min_duration_s for i in draws} == {300.0, 3600.0}
    assert {i.mix for i in draws} == {"light", "heavy"}
    m = np.array([i.machines for i in draws])
    assert m.min() < 40 and m.max() > 180
    f = np.array([i.changes_per_hour for i in draws])
    assert f.min() < 0.7 and f.max() > 3.8


def test_bad_arguments_name_the_value() -> None:
    with pytest.raises(ValueError, match="≥ 0"):
        instances(1, -1)
    with pytest.raises(ValueError, match="horizon_days"):
        draw_instance(1, 0, horizon_days=0.0)


def test_a_generated_instance_builds_and_runs() -> None:
    from pathlib import Path

    from sim.api import simulate
    from studies.scenarios import build_capacity, sized_jobs

    inst = draw_instance(7, 2, horizon_days=0.5)
    sc = inst.scenario("ff")
    machines, jobs = sized_jobs(sc, Path("/nonexistent"))
    cap = build_capacity(sc, Path("/nonexistent"), machines)
    assert machines == inst.machines and jobs.height > 0
    assert cap.period_s == pytest.approx(inst.period_s)
    assert jobs["duration_s"].min() >= inst.min_duration_s
    r = simulate(jobs, cap, machines, 24, sc.horizon_s, "ff", seed=sc.seed)
    assert 0.0 <= r.metrics["goodput"] <= 1.0


def test_decisive_names_the_first_missing_condition() -> None:
    ok = IASFacts(small_jobs=5, variable_machines=3, outliving_jobs=1, ff_terminations=2)
    assert ias_decisive(ok) == (True, "")
    cases = {
        "every job is big": IASFacts(0, 3, 0, 2),
        "no variable machine": IASFacts(5, 0, 1, 2),
        "outlives": IASFacts(5, 3, 0, 2),
        "First-Fit terminates nothing": IASFacts(5, 3, 1, 0),
    }
    for words, facts in cases.items():
        flag, reason = ias_decisive(facts)
        assert not flag and words in reason


def test_change_gap_reads_the_period_or_the_changes() -> None:
    walk = CapacityTrace(np.arange(4) * 1800.0, np.array([4, 3, 4, 3]), 4, 7200.0, period_s=1800.0)
    assert change_gap_s(walk, 7200.0) == 1800.0
    # no period: median gap between points where the value changes (a repeated value is no change)
    f = CapacityTrace(np.array([0.0, 600, 1200, 3000, 4800]), np.array([4, 3, 3, 4, 3]), 4, 9000.0)
    assert change_gap_s(f, 9000.0) == pytest.approx(np.median([2400.0, 1800.0]))


def test_facts_follow_h1_and_the_change_period() -> None:
    # 4 machines, at least 2 alive: H1's stable pool is 2 machines; a 1-hour period
    cap = CapacityTrace(np.arange(3) * 3600.0, np.array([4, 2, 4]), 4, 3 * 3600.0, period_s=3600.0)
    jobs = pl.DataFrame(
        {
            "job_id": ["big", "short", "long"],
            "submit_s": [0.0, 0.0, 0.0],
            "duration_s": [3 * 3600.0, 600.0, 5400.0],
            "cores": [24.0, 1.0, 1.0],
        }
    )
    settings = {"long_job_thresh": str(24 * 3600.0)}  # only the 3-hour, 24-core job is big
    f = ias_facts(jobs, cap, 4, 24.0, 3 * 3600.0, ff_terminations=1, settings=settings)
    assert f == IASFacts(small_jobs=2, variable_machines=2, outliving_jobs=1, ff_terminations=1)
    assert ias_decisive(f)[0]
