"""Capacity generators, interval extraction and survival models."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sim.capacity.generators import budget_trace, random_uniform, random_walk, risk_aware_walk, stranded_trace
from sim.capacity.intervals import (
    BandedIntervalModel,
    IntervalModel,
    bigram_probabilities,
    characterize,
    extract_intervals,
    inter_change_times,
    interval_inter_change_times,
    machine_state_changes,
    on_time_per_machine,
)
from sim.capacity.trace import CapacityTrace

P = 900.0  # period (s)


def bernoulli_machine(p: float, periods: int, seed: int) -> CapacityTrace:
    on = (np.random.default_rng(seed).random(periods) < p).astype(np.int64)
    return CapacityTrace(np.arange(periods) * P, on, 1, periods * P, P, "bernoulli")


def test_bernoulli_machine_has_geometric_intervals() -> None:
    p = 0.8
    trace = bernoulli_machine(p, 200_000, seed=1)
    iv = extract_intervals(trace)
    model = IntervalModel.from_intervals(iv)
    # interval length in periods is geometric: S(k periods) = p^k
    k = np.arange(1, 15)
    s = model.survival(k * P)
    n = int((~iv["left_censored"]).sum())
    se = np.sqrt(p**k * (1 - p**k) / n)
    assert np.all(np.abs(s - p**k) < 5 * se + 1e-3)
    # memoryless: P(R >= d | U = u) = p^(d/P) for any uptime
    for u in (1, 3, 6):
        got = model.p_survive(u * P, np.array([1, 2, 4]) * P)
        assert got == pytest.approx(p ** np.array([1, 2, 4]), abs=0.02)
    # mean remaining from a fresh start ≈ E[L] = P / (1 - p) (restricted mean, tiny truncation)
    assert model.mean_remaining(0.0) == pytest.approx(P / (1 - p), rel=0.03)
    assert model.quantile_remaining(0.0, 0.5) == pytest.approx(P * np.ceil(np.log(0.5) / np.log(p)), rel=1e-9)


def test_random_walk_statistics() -> None:
    tr = random_walk(1000, 30 * 86400, changes_per_hour=8, step=0.15, seed=3)
    n = tr.machines_alive
    assert n.min() >= 400 and n.max() <= 1000
    c = characterize(tr)
    assert c["mean_frac"] == pytest.approx(0.7, abs=0.03)
    assert c["step_max_frac"] == pytest.approx(0.15)
    d = np.diff(n)
    inside = (n[:-1] - 150 >= 400) & (n[:-1] + 150 <= 1000)  # moves not affected by a bound
    counts = [(d[inside] > 0).sum(), (d[inside] < 0).sum(), (d[inside] == 0).sum()]
    assert stats.chisquare(counts).pvalue > 0.001  # up / down / stay equally likely
    assert np.all(np.mod(tr.time_s, 450.0) == 0)  # changes only at period boundaries (8/h)
    same = random_walk(1000, 30 * 86400, changes_per_hour=8, step=0.15, seed=3)
    assert np.array_equal(same.machines_alive, n)


@pytest.mark.parametrize("step", [0.15, 0.3, 0.45, 0.6])
@pytest.mark.parametrize("boundary", ["reflect", "clip"])
def test_random_walk_long_run_mean_for_every_step(step: float, boundary: str) -> None:
    tr = random_walk(1000, 200 * 86400, changes_per_hour=8, step=step, seed=11, boundary=boundary)
    c = characterize(tr)
    assert c["mean_frac"] == pytest.approx(0.7, abs=0.01)
    assert c["step_max_frac"] == pytest.approx(step) and c["change_count"] > 1000
    assert tr.machines_alive.min() >= 400 and tr.machines_alive.max() <= 1000


def test_uniform_and_risk_aware_generators() -> None:
    u = random_uniform(100, 86400 * 10, changes_per_hour=2, seed=1)
    assert u.machines_alive.min() >= 40 and u.machines_alive.max() <= 100
    assert characterize(u)["mean_frac"] == pytest.approx(0.7, abs=0.02)
    r = risk_aware_walk(24, 8, 1200, 21 * 86400, seed=2)
    assert r.machines == 32 and r.machines_alive.min() >= 16 and r.machines_alive.max() <= 32
    assert set(np.unique(np.abs(np.diff(r.machines_alive)))) <= {0, 2}


def test_carbon_budget_mean_and_monotone() -> None:
    rng = np.random.default_rng(0)
    ci = rng.uniform(50, 500, 720)
    tr = budget_trace(ci, 1000, "carbon", target_mean=0.7)
    assert tr.machines_alive.mean() / 1000 == pytest.approx(0.7, abs=0.002)
    order = np.argsort(ci)
    assert np.all(np.diff(tr.machines_alive[order]) <= 0)  # lower intensity -> never fewer machines
    cost = budget_trace(np.r_[rng.uniform(-5, 80, 700), [-1] * 20], 100, "cost", floor=0.2)
    assert cost.machines_alive.min() >= 20 and cost.machines_alive.mean() / 100 == pytest.approx(
        0.7, abs=0.01
    )
    s = stranded_trace(np.array([3.0, -1.0, 0.0, 5.0]), 10, threshold=0.0)
    assert s.machines_alive.tolist() == [0, 10, 10, 0]


def brute_force_intervals(trace: CapacityTrace, step: float) -> list[tuple[int, float, float]]:
    """Scan every period and every machine: the naive definition of LIFO intervals."""
    grid = np.arange(0, trace.horizon_s, step)
    alive = trace.at(grid)
    out = []
    for m in range(trace.machines):
        on = alive > m
        t = 0
        while t < len(grid):
            if on[t]:
                s = t
                while t < len(grid) and on[t]:
                    t += 1
                out.append((m, grid[s], grid[t] if t < len(grid) else trace.horizon_s))
            else:
                t += 1
    return sorted(out)


@settings(max_examples=200, deadline=None)
@given(
    machines=st.integers(1, 6),
    values=st.lists(st.integers(0, 6), min_size=1, max_size=30),
)
def test_interval_extraction_matches_brute_force(machines: int, values: list[int]) -> None:
    vals = np.minimum(np.array(values), machines)
    trace = CapacityTrace(np.arange(len(vals)) * 10.0, vals, machines, len(vals) * 10.0)
    iv = extract_intervals(trace)
    got = sorted(zip(iv["machine"].to_list(), iv["start_s"].to_list(), iv["end_s"].to_list(), strict=True))
    assert got == brute_force_intervals(trace, 10.0)
    # intervals tile each machine's on-time exactly
    per = iv.group_by("machine").agg(pl.col("length_s").sum()).sort("machine")
    on = on_time_per_machine(trace)
    for m, total in per.iter_rows():
        assert total == pytest.approx(on[m])
    assert on[[m for m in range(machines) if m not in per["machine"].to_list()]].sum() == 0


def test_censoring_flags_and_left_truncation() -> None:
    tr = CapacityTrace(np.array([0.0, 10.0, 20.0]), np.array([2, 1, 2]), 2, 40.0)
    iv = extract_intervals(tr)
    assert iv.rows() == [
        (0, 0.0, 40.0, 40.0, True, True),
        (1, 0.0, 10.0, 10.0, True, False),
        (1, 20.0, 40.0, 20.0, False, True),
    ]
    # left truncation: an interval observed only from age 15 is not at risk at 10
    lengths, events = np.array([10.0, 20.0, 30.0]), np.array([True, True, True])
    plain = IntervalModel.fit(lengths, events)
    assert plain.survival(10.0) == pytest.approx(2 / 3) and plain.survival(20.0) == pytest.approx(1 / 3)
    m = IntervalModel.fit(lengths, events, entry_s=np.array([0.0, 0.0, 15.0]))
    assert m.survival(10.0) == pytest.approx(1 / 2) and m.survival(20.0) == pytest.approx(1 / 4)


@given(
    machines=st.integers(1, 6),
    values=st.lists(st.integers(0, 6), min_size=1, max_size=30),
)
def test_inter_change_times_from_intervals_equal_those_from_the_changes(
    machines: int, values: list[int]
) -> None:
    vals = np.minimum(np.array(values), machines)
    trace = CapacityTrace(np.arange(len(vals)) * 10.0, vals, machines, len(vals) * 10.0)
    want = inter_change_times(machine_state_changes(trace))
    got = interval_inter_change_times(extract_intervals(trace))
    assert got.equals(want)


def test_inter_change_times_from_intervals_of_a_walk() -> None:
    tr = random_walk(200, 20 * 86400, changes_per_hour=4, step=0.3, seed=3)
    want = inter_change_times(machine_state_changes(tr))
    assert want.height > 1000
    assert interval_inter_change_times(extract_intervals(tr)).equals(want)


def test_banded_model_and_change_statistics() -> None:
    tr = random_walk(100, 10 * 86400, changes_per_hour=4, step=0.15, seed=1)
    iv = extract_intervals(tr)
    banded = BandedIntervalModel.from_intervals(iv, 100, bands=5)
    assert banded.band_of(0) == 0 and banded.band_of(99) == 4
    # high-index machines live shorter intervals than low-index ones under LIFO
    assert banded.models[4].mean_remaining(0.0) < banded.models[1].mean_remaining(0.0)
    ch = pl.DataFrame({"machine": [0] * 5, "time_s": [0.0, 5, 7, 20, 21], "cores": [8, 12, 8, 4, 10]})
    gaps = inter_change_times(ch)
    assert gaps["gap_s"].to_list() == [5.0, 2.0, 13.0, 1.0]
    big = bigram_probabilities(ch)
    # changes: +4, -4, -4, +6 -> after growth: [-4] shrink; after shrink: [-4 shrink, +6 growth]
    assert big["p_shrink_after_growth"] == 1.0 and big["p_shrink_after_shrink"] == 0.5


def test_conditional_table_monotone() -> None:
    iv = extract_intervals(random_walk(200, 5 * 86400, changes_per_hour=2, step=0.3, seed=0))
    m = IntervalModel.from_intervals(iv)
    tab = m.conditional_table(np.array([0.0, 3600, 7200]), np.array([600.0, 3600, 36000]))
    assert tab.height == 9 and tab["p_survive"].is_between(0, 1).all()
    for u in (0.0, 3600.0, 7200.0):
        p = tab.filter(pl.col("uptime_s") == u)["p_survive"].to_numpy()
        assert np.all(np.diff(p) <= 1e-12)


def test_harvest_trace_realizes_its_parameters_and_runs() -> None:
    from sim import simulate
    from sim.capacity.generators import harvest_trace

    tr = harvest_trace(
        40,
        30 * 86400,
        mean_inter_change_s=1800,
        p_shrink_after_growth=0.7,
        p_shrink_after_shrink=0.3,
        eviction_prob=0.0,
        seed=2,
    )
    ch = tr.frame().rename({"cores_available": "cores"})
    assert ch["cores"].min() >= 2 and ch["cores"].max() <= 48
    gaps = inter_change_times(ch)
    assert gaps["gap_s"].mean() == pytest.approx(1800, rel=0.1)
    big = bigram_probabilities(ch)
    # the chain's intent is blurred only by moves reflected at the bounds
    assert big["p_shrink_after_growth"] == pytest.approx(0.7, abs=0.06)
    assert big["p_shrink_after_shrink"] == pytest.approx(0.3, abs=0.06)
    assert harvest_trace(40, 30 * 86400, seed=2).frame().equals(harvest_trace(40, 30 * 86400, seed=2).frame())
    jobs = pl.DataFrame(
        {
            "job_id": [str(i) for i in range(500)],
            "submit_s": np.linspace(0, 86400 * 20, 500),
            "duration_s": np.full(500, 3600.0),
            "cores": np.full(500, 2.0),
        }
    )
    r = simulate(jobs, harvest_trace(10, 30 * 86400, seed=1), 10, 48, 30 * 86400, check_invariants=True)
    assert r.invariant_violations == 0 and r.metrics["completed"] > 400
