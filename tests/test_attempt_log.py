"""Attempt log and measurement window: the log agrees with every engine's own books, the Python loop and
the compiled engine log the same attempts, and the windowed metrics match hand-computed values."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.cli import main
from sim import CapacityTrace, simulate
from sim.capacity.trace import MachineCapacityTrace
from sim.harvest.cluster import ClusterConfig, place_first_fit, run_cluster
from sim.metrics import (
    ATT_COMPLETED,
    ATT_KILLED,
    ATT_RUNNING,
    COMPLETED,
    RUNNING,
    EngineOutput,
    compute_metrics,
    integrate_step,
)
from sim.policies import get_policy, parse_params
from sim.problem import Platform, Problem, run_first_fit
from tests.test_sim_engine import frame, per_machine_scenarios, scenarios

COUNT_POLICIES = [
    ("ff", {}),
    ("ff", {"termination": "random"}),
    ("ff", {"termination": "lww"}),
    ("ff", {"termination": "lfd"}),
    ("ff-unaware", {}),
    ("ias", {}),
    ("ias-h1+h2+h3+h4", {}),
    ("ias-h4", {"history": "trailing", "window_h": str(10 / 3600), "refit_h": str(4 / 3600)}),
    ("oracle", {}),
    ("target-stretch", {}),
    ("target-asap", {}),
    ("packed-target-asap", {}),
    ("slacksched", {"min_samples": "1"}),
    ("slacksched-nodelay", {"min_samples": "1"}),
]
MACHINE_POLICIES = [
    ("ff", {}),
    ("oracle", {}),
    ("slacksched", {"min_samples": "1"}),
    ("slacksched-nodelay", {"min_samples": "1"}),
    ("ff", {"acquirer": "1", "acquirer_period_h": str(3 / 3600), "acquirer_fraction": "0.5"}),
]


def count_problem(sc) -> Problem:
    machines, cores, horizon, jobs, cap = sc
    ts = sorted(cap)
    trace = CapacityTrace(np.array(ts, float), np.array([cap[t] for t in ts]), machines, float(horizon), 2.0)
    return Problem.build(frame(jobs), Platform(machines, float(cores)), trace, float(horizon), check=True)


def machine_problem(sc) -> Problem:
    machines, max_cores, horizon, jobs, events = sc
    rows = [(t, m, c) for t, evs in events.items() for m, c in evs]
    t, m, c = (np.array(x, float) for x in zip(*rows, strict=True))
    cap = MachineCapacityTrace(t, m.astype(int), c, machines, float(horizon))
    return Problem.build(frame(jobs), Platform(machines, float(max_cores)), cap, float(horizon), check=True)


def check_log(out: EngineOutput, problem: Problem) -> None:
    """The attempt log reproduces the engine's aggregates and per-job outcomes."""
    n, h = len(problem.submit_s), problem.horizon_s
    c = problem.cores[out.att_job]
    s, e, oc = out.att_start_s, out.att_end_s, out.att_outcome
    assert out.att_job.dtype == np.int64 and out.att_outcome.dtype == np.int8
    assert out.att_machine.dtype == np.int32
    assert np.all((out.att_machine >= 0) & (out.att_machine < problem.platform.machines))
    assert np.all(s >= 0) and np.all(e >= s) and np.all(e <= h) and np.all(s < h)
    done, kill, run = oc == ATT_COMPLETED, oc == ATT_KILLED, oc == ATT_RUNNING
    assert np.all(done | kill | run)
    assert np.all(e[run] == h)
    assert np.allclose(e[done] - s[done], problem.duration_s[out.att_job[done]])
    assert float(np.sum(c[done] * (e[done] - s[done]))) == pytest.approx(out.completed_cs)
    assert float(np.sum(c[kill] * (e[kill] - s[kill]))) == pytest.approx(out.wasted_cs)
    assert float(np.sum(c[run] * (h - s[run]))) == pytest.approx(out.inflight_cs)
    assert float(np.sum(e[kill] - s[kill])) == pytest.approx(out.aborted_time_s)
    assert int(kill.sum()) == out.n_terminations
    assert np.array_equal(np.bincount(out.att_job, minlength=n), out.attempts)
    assert np.array_equal(np.bincount(out.att_job[kill], minlength=n), out.terminations)
    first = np.full(n, np.inf)
    np.minimum.at(first, out.att_job, s)
    assert np.array_equal(np.where(np.isinf(first), -1.0, first), out.first_start_s)
    assert np.array_equal(np.flatnonzero(out.status == COMPLETED), np.sort(out.att_job[done]))
    assert np.array_equal(np.flatnonzero(out.status == RUNNING), np.sort(out.att_job[run]))
    assert np.array_equal(out.end_s[out.att_job[done]], e[done])
    # a job's attempts do not overlap, and only its last one may be open or completed
    for j in range(n):
        k = np.flatnonzero(out.att_job == j)
        k = k[np.argsort(s[k], kind="stable")]
        assert np.all(s[k][1:] >= e[k][:-1])
        assert np.all(oc[k][:-1] == ATT_KILLED)
    assert integrate_step(out.cap_time_s, out.cap_cores, 0.0, h) == pytest.approx(out.available_cs)


def legacy_metrics(out: EngineOutput, problem: Problem, slo: float = 0.10) -> dict[str, float]:
    """The pre-window metric definitions, from the engine's running aggregates."""
    submit, dur = problem.submit_s, problem.duration_s
    n = len(submit)
    started = out.first_start_s >= 0
    done = out.status == COMPLETED
    lat = out.first_start_s[started] - submit[started]
    av = out.available_cs
    g, w, f = (x / av if av > 0 else 0.0 for x in (out.completed_cs, out.wasted_cs, out.inflight_cs))
    stretch = (out.end_s[done] - submit[done]) / dur[done]
    miss = ~done | ((out.end_s - submit - dur) >= slo * dur)
    nan = float("nan")
    return {
        "jobs": n,
        "completed": int(done.sum()),
        "terminations": out.n_terminations,
        "failure_rate": out.n_terminations / n,
        "jobs_not_scheduled": int((~started).sum()),
        "goodput": g,
        "wasted_fraction": w,
        "in_flight_fraction": f,
        "idle_fraction": 1 - g - w - f,
        "latency_mean_s": float(lat.mean()) if lat.size else nan,
        **{f"latency_p{q}_s": float(np.percentile(lat, q)) if lat.size else nan for q in (50, 90, 95, 99)},
        "mean_stretch": float(stretch.mean()) if stretch.size else nan,
        "max_stretch": float(stretch.max()) if stretch.size else nan,
        "avg_aborted_time_s": out.aborted_time_s / out.n_terminations if out.n_terminations else 0.0,
        "slo_miss_rate": float(miss.mean()),
        "available_core_seconds": av,
        "goodput_partial": g + f,
    }


def run_policy(problem: Problem, policy: str, st_: dict[str, str], seed: int = 0) -> EngineOutput:
    pol = get_policy(policy)
    return pol.run(problem, parse_params(pol, st_), seed).output


def assert_same_metrics(new: dict, old: dict) -> None:
    for k, v in old.items():
        if isinstance(v, float) and np.isnan(v):
            assert np.isnan(new[k]), k
        else:
            assert new[k] == pytest.approx(v, rel=1e-12, abs=1e-12), k


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenarios(), k=st.integers(0, len(COUNT_POLICIES) - 1), seed=st.integers(0, 3))
def test_log_agrees_with_aggregates_for_every_policy_family(sc, k, seed) -> None:
    problem = count_problem(sc)
    out = run_policy(problem, *COUNT_POLICIES[k], seed)
    check_log(out, problem)
    m = compute_metrics(out, problem.submit_s, problem.duration_s, problem.cores, problem.horizon_s)
    assert_same_metrics(m, legacy_metrics(out, problem))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=per_machine_scenarios(), k=st.integers(0, len(MACHINE_POLICIES) - 1))
def test_log_agrees_with_aggregates_on_per_machine_capacity(sc, k) -> None:
    problem = machine_problem(sc)
    out = run_policy(problem, *MACHINE_POLICIES[k])
    check_log(out, problem)
    m = compute_metrics(out, problem.submit_s, problem.duration_s, problem.cores, problem.horizon_s)
    assert_same_metrics(m, legacy_metrics(out, problem))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=per_machine_scenarios())
def test_python_ff_logs_the_compiled_engines_attempts(sc) -> None:
    problem = machine_problem(sc)
    a = run_first_fit(problem, "lifo", 0).output
    b = run_cluster(problem, place_first_fit, ClusterConfig(kill_order="newest"), 0).output  # engine order

    def rows(o: EngineOutput) -> list[tuple]:
        return sorted(
            zip(
                o.att_start_s.tolist(),
                o.att_job.tolist(),
                o.att_end_s.tolist(),
                o.att_outcome.tolist(),
                o.att_machine.tolist(),
                strict=True,
            )
        )

    assert rows(a) == rows(b)
    assert np.array_equal(a.cap_time_s, b.cap_time_s) and np.allclose(a.cap_cores, b.cap_cores)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenarios(), a=st.floats(0, 1), b=st.floats(0, 1))
def test_window_parts_sum_and_full_window_is_the_default(sc, a, b) -> None:
    machines, cores, horizon, jobs, cap = sc
    problem = count_problem(sc)
    lo, hi = sorted((a * horizon, b * horizon))
    full = simulate(frame(jobs), problem.capacity, machines, cores, horizon)
    same = simulate(frame(jobs), problem.capacity, machines, cores, horizon, window_start_s=0.0,
                    window_end_s=float(horizon))  # fmt: skip
    assert_same_metrics(same.metrics, full.metrics)
    if hi - lo < 1e-6:
        return
    m = simulate(frame(jobs), problem.capacity, machines, cores, horizon, window_start_s=lo, window_end_s=hi)
    m = m.metrics
    parts = m["goodput"] + m["wasted_fraction"] + m["in_flight_fraction"]
    assert parts + m["idle_fraction"] == pytest.approx(1.0)
    assert m["idle_fraction"] >= -1e-9 and m["goodput_partial"] == pytest.approx(
        m["goodput"] + m["in_flight_fraction"]
    )
    assert m["aborted_volume"] >= m["wasted_fraction"] - 1e-12
    assert m["terminations"] <= full.metrics["terminations"]


def test_golden_three_jobs_in_a_window() -> None:
    # 2 machines × 2 cores on [0, 100): machine 1 off over [40, 60). Window [20, 80].
    # j0: 0..50 on m0 (1 core), completes at 50 → in window 1·(50 − 20) = 30.
    # j1: 10..70 on m1 (2 cores) killed at 40 → wasted 2·(40 − 20) = 40, whole attempt 2·30 = 60; requeued,
    #     restarts at 50 on m0 (j0 frees it), runs past 80 → in flight 2·(80 − 50) = 60.
    # j2: submitted 30 (in window), 1 core, 5 s on m0 → 30..35, completed: 1·5 = 5.
    # available: 4 cores × 20 + 2 × 20 + 4 × 20 = 200 core·s.
    cap = CapacityTrace(np.array([0.0, 40.0, 60.0]), np.array([2, 1, 2]), 2, 100.0)
    jobs = frame([(0, 50, 1), (10, 60, 2), (30, 5, 1)])
    r = simulate(jobs, cap, 2, 2, 100, window_start_s=20, window_end_s=80)
    m = r.metrics
    assert m["available_core_seconds"] == 200.0
    assert m["goodput"] == pytest.approx((30 + 5) / 200)
    assert m["wasted_fraction"] == pytest.approx(40 / 200)
    assert m["aborted_volume"] == pytest.approx(60 / 200)
    assert m["in_flight_fraction"] == pytest.approx(60 / 200)
    assert m["goodput_partial"] == pytest.approx((35 + 60) / 200)
    assert m["idle_fraction"] == pytest.approx(1 - (35 + 40 + 60) / 200)
    assert m["terminations"] == 1 and m["avg_aborted_time_s"] == 30.0
    # jobs submitted in [20, 80): only j2 (waited 0 s, stretch 1)
    assert m["jobs"] == 1 and m["completed"] == 1 and m["failure_rate"] == 1.0
    assert m["latency_mean_s"] == 0.0 and m["mean_stretch"] == 1.0
    # a window ending at j1's restart: an attempt starting at b is not in flight; j0 completing at b counts
    m2 = simulate(jobs, cap, 2, 2, 100, window_start_s=20, window_end_s=50).metrics
    assert m2["in_flight_fraction"] == 0.0 and m2["goodput"] == pytest.approx((30 + 5) / (4 * 20 + 2 * 10))
    with pytest.raises(ValueError, match="window"):
        simulate(jobs, cap, 2, 2, 100, window_start_s=50, window_end_s=20)
    with pytest.raises(ValueError, match="window"):
        simulate(jobs, cap, 2, 2, 100, window_end_s=120)


def test_cli_window_options_match_the_python_api(tmp_path) -> None:
    jobs = frame([(0, 50, 1), (10, 60, 2), (30, 5, 1)])
    jobs.write_csv(tmp_path / "jobs.csv")
    pl.DataFrame({"time_s": [0.0, 40.0, 60.0], "machines_alive": [2, 1, 2]}).write_csv(tmp_path / "cap.csv")
    args = ["simulate", "--jobs", str(tmp_path / "jobs.csv"), "--capacity", str(tmp_path / "cap.csv")]
    args += ["--machines", "2", "--cores", "2", "--horizon-s", "100", "--out", str(tmp_path / "r.json")]
    assert main([*args, "--window-start-s", "20", "--window-end-s", "80"]) == 0
    got = json.loads((tmp_path / "r.json").read_text())
    api = simulate(jobs, tmp_path / "cap.csv", 2, 2, 100, window_start_s=20, window_end_s=80).metrics
    assert got == pytest.approx(api, nan_ok=True) and got["aborted_volume"] == pytest.approx(0.3)
