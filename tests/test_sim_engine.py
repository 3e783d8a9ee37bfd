"""Simulator core: agreement with a brute-force reference, invariants (hypothesis), determinism."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim import CapacityTrace, random_walk, simulate
from sim.problem import Platform, Problem, run_first_fit
from tests.reference_sim import reference


def frame(jobs: list[tuple[float, float, float]]) -> pl.DataFrame:
    """A jobs table from ``(submit_s, duration_s, cores)`` tuples."""
    return pl.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(len(jobs))],
            "submit_s": [float(j[0]) for j in jobs],
            "duration_s": [float(j[1]) for j in jobs],
            "cores": [float(j[2]) for j in jobs],
        }
    )


def random_jobs(
    rng: np.random.Generator, n: int, span_s: float, mean_s: float, min_s: float, max_cores: int
) -> pl.DataFrame:
    """``n`` jobs drawn from ``rng`` in this order: submits uniform over ``[0, span_s)`` (sorted), durations
    exponential with mean ``mean_s`` plus ``min_s``, cores uniform in ``1 … max_cores``."""
    return pl.DataFrame(
        {
            "job_id": [str(i) for i in range(n)],
            "submit_s": np.sort(rng.uniform(0, span_s, n)),
            "duration_s": rng.exponential(mean_s, n) + min_s,
            "cores": rng.integers(1, max_cores + 1, n).astype(float),
        }
    )


@st.composite
def scenarios(draw):
    machines = draw(st.integers(1, 4))
    cores = draw(st.integers(1, 4))
    horizon = draw(st.integers(5, 30))
    n = draw(st.integers(1, 25))
    jobs = [
        (draw(st.integers(0, horizon)), draw(st.integers(1, 8)), draw(st.integers(1, cores)))
        for _ in range(n)
    ]
    times = sorted(set(draw(st.lists(st.integers(1, horizon + 2), max_size=8))))
    cap = {0: draw(st.integers(0, machines))}
    for t in times:
        cap[t] = draw(st.integers(0, machines))
    return machines, cores, horizon, jobs, cap


def run(machines, cores, horizon, jobs, cap, termination="lifo", seed=0):
    ts = sorted(cap)
    trace = CapacityTrace(np.array(ts, float), np.array([cap[t] for t in ts]), machines, float(horizon))
    problem = Problem.build(frame(jobs), Platform(machines, float(cores)), trace, float(horizon), check=True)
    return run_first_fit(problem, termination, seed).output


@pytest.mark.parametrize("termination", ["lifo", "lww", "lfd"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenarios())
def test_engine_agrees_with_brute_force(sc, termination) -> None:
    machines, cores, horizon, jobs, cap = sc
    out = run(machines, cores, horizon, jobs, cap, termination)
    ref, tot = reference(jobs, cap, machines, cores, horizon, termination)
    for j, r in enumerate(ref):
        assert out.first_start_s[j] == r["first"], (j, r)
        assert out.end_s[j] == r["end"], (j, r)
        assert out.attempts[j] == r["attempts"] and out.terminations[j] == r["terms"], (j, r)
    assert out.n_terminations == tot["terminations"]
    assert out.completed_cs == pytest.approx(tot["completed"])
    assert out.wasted_cs == pytest.approx(tot["wasted"])
    assert out.inflight_cs == pytest.approx(tot["inflight"])
    assert out.available_cs == pytest.approx(tot["available"])
    assert out.violations == 0


@settings(max_examples=150, deadline=None)
@given(sc=scenarios(), termination=st.sampled_from(["lifo", "random", "lww", "lfd"]), seed=st.integers(0, 5))
def test_invariants_hold_for_every_termination_policy(sc, termination, seed) -> None:
    machines, cores, horizon, jobs, cap = sc
    out = run(machines, cores, horizon, jobs, cap, termination, seed)
    # no over-commit, no job on an off machine, tree consistent: checked inside the engine at every instant
    assert out.violations == 0
    # accounting: completed + wasted + in-flight work equals the integral of used cores (independent sum)
    assert out.completed_cs + out.wasted_cs + out.inflight_cs == pytest.approx(out.used_cs)
    assert out.used_cs <= out.available_cs + 1e-9
    # a job completes at most once; terminations are those counted at drops
    assert int(out.terminations.sum()) == out.n_terminations
    assert np.all(out.attempts >= out.terminations)
    assert np.all(out.attempts - out.terminations <= 1)
    # same seed -> same output
    again = run(machines, cores, horizon, jobs, cap, termination, seed)
    assert np.array_equal(out.first_start_s, again.first_start_s) and np.array_equal(out.end_s, again.end_s)


def test_constant_full_capacity_has_no_terminations_and_fixed_goodput() -> None:
    rng = np.random.default_rng(3)
    n = 2000
    jobs = pl.DataFrame(
        {
            "job_id": [str(i) for i in range(n)],
            "submit_s": np.sort(rng.uniform(0, 80_000, n)),
            "duration_s": rng.integers(60, 3600, n).astype(float),
            "cores": rng.integers(1, 9, n).astype(float),
        }
    )
    horizon = 100_000.0
    r = simulate(
        jobs,
        CapacityTrace.constant(20, horizon),
        machines=20,
        cores=16,
        horizon_s=horizon,
        check_invariants=True,
    )
    m = r.metrics
    assert m["terminations"] == 0 and m["completed"] == n and r.invariant_violations == 0
    work = float((jobs["duration_s"] * jobs["cores"]).sum())
    assert m["goodput"] == pytest.approx(work / (20 * 16 * horizon))
    assert m["wasted_fraction"] == 0 and m["in_flight_fraction"] == 0
    assert sum(
        m[k] for k in ("goodput", "wasted_fraction", "in_flight_fraction", "idle_fraction")
    ) == pytest.approx(1)


def test_variable_capacity_terminates_and_seeded_random_is_deterministic() -> None:
    rng = np.random.default_rng(5)
    n = 3000
    horizon = 3 * 86400.0
    jobs = pl.DataFrame(
        {
            "job_id": [str(i) for i in range(n)],
            "submit_s": np.sort(rng.uniform(0, horizon * 0.9, n)),
            "duration_s": rng.lognormal(8, 1.2, n).clip(60, 86400),
            "cores": rng.integers(1, 9, n).astype(float),
        }
    )
    cap = random_walk(50, horizon, changes_per_hour=4, step=0.15, seed=1)
    a = simulate(jobs, cap, 50, 16, horizon, policy="ff-unaware", seed=7)
    b = simulate(jobs, cap, 50, 16, horizon, policy="ff-unaware", seed=7)
    c = simulate(jobs, cap, 50, 16, horizon, policy="ff-unaware", seed=8)
    ff = simulate(jobs, cap, 50, 16, horizon, policy="ff")
    assert a.metrics == b.metrics and a.jobs.equals(b.jobs)
    assert a.metrics != c.metrics
    assert ff.metrics["terminations"] > 0
    # LIFO kills on the riskiest machines only; random termination hits long-running jobs on safe ones
    assert a.metrics["wasted_fraction"] > ff.metrics["wasted_fraction"]


def test_memory_constraint_blocks_placement() -> None:
    jobs = frame([(0, 10, 1), (0, 10, 1)]).with_columns(pl.Series("memory_gb", [6.0, 6.0]))
    r = simulate(jobs, CapacityTrace.constant(2, 100), machines=2, cores=4, horizon_s=100, memory_gb=8.0)
    # cores alone would co-locate both on machine 0; memory forces the second onto machine 1 at t=0
    assert r.jobs["first_start_s"].to_list() == [0.0, 0.0]
    jobs3 = frame([(0, 10, 1)] * 3).with_columns(pl.Series("memory_gb", [6.0] * 3))
    r3 = simulate(jobs3, CapacityTrace.constant(2, 100), machines=2, cores=4, horizon_s=100, memory_gb=8.0)
    assert r3.jobs["first_start_s"].to_list() == [0.0, 0.0, 10.0]


def test_bad_inputs_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="more than 4 cores"):
        simulate(frame([(0, 1, 8)]), CapacityTrace.constant(1, 10), 1, 4, 10)
    with pytest.raises(KeyError, match="unknown policy 'nope'"):
        simulate(frame([(0, 1, 1)]), CapacityTrace.constant(1, 10), 1, 4, 10, policy="nope")
    with pytest.raises(KeyError, match="no parameter 'x'"):
        simulate(frame([(0, 1, 1)]), CapacityTrace.constant(1, 10), 1, 4, 10, settings={"x": "1"})
    with pytest.raises(ValueError, match="termination must be one of"):
        simulate(
            frame([(0, 1, 1)]), CapacityTrace.constant(1, 10), 1, 4, 10, settings={"termination": "fifo"}
        )
    with pytest.raises(ValueError, match="must start at time 0"):
        CapacityTrace(np.array([5.0]), np.array([1]), 1, 10.0)


def test_golden_killed_jobs_requeue_earlier_start_first_then_row_order() -> None:
    # 3 machines x 1 core. t=0 j0->m0; t=1 j2->m1; t=2 j1->m2; t=3 j3 (1 s long) queues; t=5 capacity 1:
    # m2, m1 off, killed jobs requeue behind j3 as [j2 (started 1), j1 (started 2)]; t=6 m1 back: j3 runs
    # 6..7, then the earlier-started j2 restarts at 7 and j1 keeps waiting.
    jobs = [(0, 100, 1), (2, 100, 1), (1, 100, 1), (3, 1, 1)]
    out = run(3, 1, 50, jobs, {0: 3, 5: 1, 6: 2})
    assert out.first_start_s.tolist() == [0.0, 2.0, 1.0, 6.0]
    assert out.end_s.tolist() == [-1.0, -1.0, -1.0, 7.0]
    assert out.attempts.tolist() == [1, 1, 2, 1] and out.terminations.tolist() == [0, 1, 1, 0]
    assert out.inflight_cs == (50 - 0) + (50 - 7)  # j0 and the restarted j2 run at the horizon
    # equal start times: input row order decides (j1 before j2)
    out2 = run(3, 1, 50, [(0, 100, 1), (1, 100, 1), (1, 100, 1)], {0: 3, 5: 1, 6: 2})
    assert out2.attempts.tolist() == [1, 2, 1]


@st.composite
def per_machine_scenarios(draw):
    machines = draw(st.integers(1, 3))
    max_cores = draw(st.integers(1, 4))
    horizon = draw(st.integers(5, 25))
    jobs = [
        (draw(st.integers(0, horizon)), draw(st.integers(1, 8)), draw(st.integers(1, max_cores)))
        for _ in range(draw(st.integers(1, 20)))
    ]
    events: dict[int, list[tuple[int, int]]] = {
        0: [(m, draw(st.integers(0, max_cores))) for m in range(machines)]
    }
    for _ in range(draw(st.integers(0, 10))):
        t = draw(st.integers(1, horizon + 2))
        m = draw(st.integers(0, machines - 1))
        events.setdefault(t, [])
        if all(mm != m for mm, _ in events[t]):
            events[t].append((m, draw(st.integers(0, max_cores))))
    for t in events:
        events[t].sort()
    return machines, max_cores, horizon, jobs, events


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=per_machine_scenarios())
def test_per_machine_capacity_agrees_with_brute_force(sc) -> None:
    from sim.capacity.trace import MachineCapacityTrace
    from tests.reference_sim import reference_per_machine

    machines, max_cores, horizon, jobs, events = sc
    rows = [(t, m, c) for t, evs in events.items() for m, c in evs]
    cap = MachineCapacityTrace(
        *(np.array(x, float) for x in zip(*rows, strict=True)), machines, float(horizon)
    )
    problem = Problem.build(
        frame(jobs), Platform(machines, float(max_cores)), cap, float(horizon), check=True
    )
    out = run_first_fit(problem, "lifo", 0).output
    ref, tot = reference_per_machine(jobs, events, machines, horizon)
    for j, r in enumerate(ref):
        assert (out.first_start_s[j], out.end_s[j], out.attempts[j], out.terminations[j]) == (
            r["first"],
            r["end"],
            r["attempts"],
            r["terms"],
        ), (j, r)
    assert out.completed_cs == pytest.approx(tot["completed"]) and out.wasted_cs == pytest.approx(
        tot["wasted"]
    )
    assert out.available_cs == pytest.approx(tot["available"]) and out.inflight_cs == pytest.approx(
        tot["inflight"]
    )
    assert out.completed_cs + out.wasted_cs + out.inflight_cs == pytest.approx(out.used_cs)
    assert out.violations == 0
