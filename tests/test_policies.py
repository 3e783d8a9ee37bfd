"""Seed schedulers on hand-built micro-scenarios that make each rule fire, and core invariants for all."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import CapacityTrace, simulate
from sim.policies import available, get_policy
from sim.problem import Platform, Problem
from tests.test_sim_engine import frame, scenarios

H = 3600.0


def alternating(hours: int, high: int, low: int) -> CapacityTrace:
    """Hourly trace alternating high, low, high, … (machines ≥ low always on)."""
    vals = np.array([high if i % 2 == 0 else low for i in range(hours)])
    return CapacityTrace(np.arange(hours) * H, vals, high, hours * H, H, "alternating")


def starts(r) -> list[float]:
    return r.jobs["first_start_s"].to_list()


def test_h2_delays_a_short_job_to_the_change_boundary() -> None:
    cap = CapacityTrace(np.arange(10) * H, np.full(10, 2), 2, 10 * H, H, "constant-hourly")
    jobs = frame([(3000, 1000, 1), (3000, 500, 1)])
    ff = simulate(jobs, cap, 2, 1, 10 * H, policy="ff")
    h2 = simulate(jobs, cap, 2, 1, 10 * H, policy="ias-h2")
    assert starts(ff) == [3000.0, 3000.0]
    # 600 s remain before the 3600 s boundary: the 1000 s job waits for it, the 500 s job fits before it
    assert starts(h2) == [3600.0, 3000.0]


def test_h4_refuses_machines_whose_intervals_will_not_last() -> None:
    # machine 1 is on every other hour; machine 0 is always on. A long job X holds machine 0 once the pooled
    # survival curve says machine 0 (uptime ≥ 1 h) survives; job Y (5000 s) then must not go to machine 1,
    # whose fresh intervals last exactly an hour.
    cap = alternating(48, 2, 1)
    jobs = frame([(0, 100_000, 1), (4000, 5000, 1)])
    ff = simulate(jobs, cap, 2, 1, 48 * H, policy="ff")
    h4 = simulate(jobs, cap, 2, 1, 48 * H, policy="ias-h4", settings={"aggressiveness": "0.6"})
    assert ff.jobs["terminations"].to_list()[1] > 0  # FF keeps putting Y on machine 1 and losing it
    assert h4.jobs["terminations"].to_list() == [0, 0]
    assert starts(h4)[0] == 3600.0  # X waits for uptime 1 h, where the curve flattens
    # A = 1 means fully optimistic: H4 accepts everything and behaves like FF
    opt = simulate(jobs, cap, 2, 1, 48 * H, policy="ias-h4", settings={"aggressiveness": "1.0"})
    assert opt.metrics == ff.metrics


def test_h3_needs_enough_mean_remaining_time() -> None:
    cap = alternating(48, 2, 1)
    # ten short jobs make the 100 000 s job the only one above the workload's P90 duration
    jobs = frame([(0, 100_000, 1)] + [(7200 + 60 * i, 60, 1) for i in range(10)])
    h3 = simulate(jobs, cap, 2, 1, 48 * H, policy="ias-h3")
    assert starts(h3)[0] == 3600.0 and h3.metrics["terminations"] == 0


def test_h1_keeps_big_jobs_on_stable_machines_and_small_jobs_off_them() -> None:
    cap = alternating(10, 4, 2)  # machines 0, 1 are stable (never below 2 alive)
    jobs = frame([(0, 5000, 1), (0, 100, 1), (10, 100, 1)])
    r = simulate(
        jobs,
        cap,
        4,
        1,
        10 * H,
        policy="ias-h1",
        settings={"long_job_thresh": "1000", "lb": "0.5"},
        check_invariants=True,
    )
    problem = Problem.build(jobs, Platform(4, 1.0), cap, 10 * H)
    adm = get_policy("ias-h1").admission(problem, get_policy("ias-h1").Params(long_job_thresh=1000, lb=0.5))
    assert adm.job_hi.tolist()[0] == 2 and adm.job_lo.tolist()[1:] == [2, 2]
    assert starts(r) == [0.0, 0.0, 10.0] and r.metrics["terminations"] == 0


def test_h1_fit_threshold_fills_the_stable_pool_with_the_biggest_jobs() -> None:
    from sim.policies.ias import fit_threshold, h1_split

    # horizon 100 s, one stable machine of 2 cores: the pool holds 200 core-seconds. duration × cores keys
    # 100, 80, 50, 30, 10; the key-50 job is submitted at 90 s, so only 10 core-seconds of it fall inside
    # the horizon. Cumulative offered work from the top: 100, 180, 190, 220, 230 -> the threshold is 50
    # (unclipped, the key-50 job would add 50 and the threshold would be 80).
    jobs = frame([(0, 50, 2), (0, 40, 2), (90, 50, 1), (0, 30, 1), (0, 10, 1)])
    sub, dur, cores = (jobs[c].to_numpy().astype(float) for c in ("submit_s", "duration_s", "cores"))
    assert fit_threshold(sub, dur, cores, 100.0, 200.0) == 50.0
    assert fit_threshold(sub, dur, cores, 100.0, 230.0) == 10.0  # everything fits
    assert fit_threshold(sub, dur, cores, 100.0, 99.0) == 100.0  # the biggest job alone overfills it
    assert fit_threshold(sub, dur, cores, 100.0, 0.0) == float("inf")  # no stable pool: no big jobs
    # equal keys enter together: two key-80 jobs (160) do not fit in 150, so only the key-100 job is big
    tie = frame([(0, 50, 2), (0, 40, 2), (0, 80, 1)])
    st_ = (tie[c].to_numpy().astype(float) for c in ("submit_s", "duration_s", "cores"))
    assert fit_threshold(*st_, 1000.0, 150.0 + 100.0) == 100.0

    # through the policy: 4 machines × 2 cores, at least 1 always on (lb = 1/4): the same 200 core-seconds
    cap = CapacityTrace(np.array([0.0, 50.0]), np.array([4, 1]), 4, 100.0, 50.0, "step")
    problem = Problem.build(jobs, Platform(4, 2.0), cap, 100.0)
    pol = get_policy("ias-h1")
    fit = pol.admission(problem, pol.Params())
    assert h1_split(problem, pol.Params()) == (1, 50.0)
    assert fit.job_hi.tolist() == [1, 1, 1, 4, 4] and fit.job_lo.tolist() == [0, 0, 0, 1, 1]
    p90 = pol.admission(problem, pol.Params(h1_threshold="p90"))  # P90 of the keys = 92: one big job
    assert p90.job_hi.tolist() == [1, 4, 4, 4, 4]
    with pytest.raises(ValueError, match="h1_threshold"):
        pol.Params(h1_threshold="p95")


def _fit_threshold_every_row(
    submit_s: np.ndarray, duration_s: np.ndarray, cores: np.ndarray, horizon_s: float, stable_cs: float
) -> float:
    """H1's ``fit`` threshold as first written: a stable sort of every row (the reference)."""
    key = duration_s * cores
    if stable_cs <= 0 or key.size == 0:
        return float("inf")
    work = cores * np.minimum(duration_s, np.clip(horizon_s - submit_s, 0.0, None))
    order = np.argsort(-key, kind="stable")
    k, cum = key[order], np.cumsum(work[order])
    fits = np.r_[k[1:] != k[:-1], True] & (cum <= stable_cs)
    return float(k[np.flatnonzero(fits)[-1]]) if fits.any() else float(k[0])


def test_h1_fit_threshold_equal_sizes_sum_in_input_order() -> None:
    from sim.policies.ias import _desc_order, fit_threshold

    # the order itself: numpy's stable one, also with -0.0 beside 0.0, NaN, one row, long runs of a size
    rng = np.random.default_rng(0)
    for key in (
        rng.choice(np.array([0.0, -0.0, 1.0, 2.5, 1e9]), 5000),
        rng.choice(np.array([3.0, np.nan, 1.0]), 300),
        np.array([7.0]),
        rng.uniform(0.0, 1.0, 2000).round(2),
    ):
        assert np.array_equal(_desc_order(key), np.argsort(-key, kind="stable"))
    # many ties of few sizes and work of every magnitude, so another order of equal sizes rounds the
    # cumulative work differently; pools cut exactly at a group's cumulative work (a last-bit difference
    # decides whether that group fits), between groups, below the biggest job and above everything
    checked = 0
    for trial in range(60):
        n = int(rng.integers(1, 4000)) if trial % 3 else int(rng.integers(1, 40))
        dur = rng.choice(np.array([1.0, 3.0, 7.5, 10.0, 1e3, 3.3e4]), n) * rng.choice([1.0, 1.0 + 2**-40], n)
        cores = rng.choice(np.array([1.0, 2.0, 4.0, 8.0]), n)
        submit = rng.uniform(0.0, 1.2e5, n)
        horizon = 1e5
        ref_work = cores * np.minimum(dur, np.clip(horizon - submit, 0.0, None))
        key = dur * cores
        order = np.argsort(-key, kind="stable")
        cum = np.cumsum(ref_work[order])
        ends = np.flatnonzero(np.r_[key[order][1:] != key[order][:-1], True])
        pools = [0.0, -1.0, cum[-1], cum[-1] * 2, key.max() * 0.5, float(np.nextafter(cum[ends[0]], -1))]
        for e in rng.choice(ends, min(8, ends.size), replace=False):
            pools += [cum[e], float(np.nextafter(cum[e], -1)), float(np.nextafter(cum[e], np.inf))]
        for pool in pools:
            assert fit_threshold(submit, dur, cores, horizon, pool) == _fit_threshold_every_row(
                submit, dur, cores, horizon, pool
            ), (trial, pool)
            checked += 1
    # the scale case's own sizes (heavy tails, 134k jobs) at several pools
    from sim.bench.scale import heavy_tailed_case

    jobs, _, horizon = heavy_tailed_case(100, 30.0)
    sub, dur, cores = (jobs[c].to_numpy().astype(float) for c in ("submit_s", "duration_s", "cores"))
    total = float(np.sum(cores * dur))
    for frac in (0.01, 0.1, 0.3, 0.5, 0.9):
        pool = total * frac
        assert fit_threshold(sub, dur, cores, horizon, pool) == _fit_threshold_every_row(
            sub, dur, cores, horizon, pool
        )
    assert checked > 1000


def test_h4_literal_reading_admits_where_the_text_reading_refuses() -> None:
    # Algorithm 5 prints prob(remaining >= exec | uptime) < A: at A = 0.6 it starts X at once on machine 0
    # (a fresh interval is unlikely to last 100 000 s) and keeps putting Y on machine 1, where the text
    # reading (>= 1 - A) waits and loses nothing (test above)
    cap = alternating(48, 2, 1)
    jobs = frame([(0, 100_000, 1), (4000, 5000, 1)])
    lit = simulate(
        jobs, cap, 2, 1, 48 * H, policy="ias-h4", settings={"aggressiveness": "0.6", "h4_reading": "literal"}
    )
    assert starts(lit)[0] == 0.0 and lit.jobs["terminations"].to_list()[1] > 0
    with pytest.raises(ValueError, match="h4_reading"):
        get_policy("ias").Params(h4_reading="inverse")


def test_ias_trailing_history_uses_no_future() -> None:
    from sim.capacity.intervals import extract_intervals
    from sim.policies.ias import trailing_models

    cap = alternating(72, 2, 1)
    models = trailing_models(extract_intervals(cap), cap.horizon_s, 24 * H, 24 * H)
    assert len(models) == 3 and models[0].n == 0  # nothing known before the first refit
    # the day-1 model saw only day 0: machine 1's hour-long intervals, machine 0 censored at 24 h
    assert models[1].survival(3599.0) == 1.0 and models[1].survival(3600.0) < 0.2
    r = simulate(frame([(0, 5000, 1)]), cap, 2, 1, 72 * H, policy="ias", settings={"history": "trailing"})
    assert r.metrics["completed"] == 1


def test_oracle_never_loses_a_job_on_a_volatile_trace() -> None:
    cap = alternating(96, 3, 1)  # jobs over an hour long can only ever finish on machine 0
    jobs = frame([(i * 500, 2000 + 300 * i, 1) for i in range(30)])
    r = simulate(jobs, cap, 3, 1, 96 * H, policy="oracle", check_invariants=True)
    assert r.metrics["terminations"] == 0 and r.metrics["completed"] == 30
    assert simulate(jobs, cap, 3, 1, 96 * H, policy="ff").metrics["terminations"] > 0


def test_registry_names_and_bad_combinations() -> None:
    names = available()
    assert {"ff", "ff-unaware", "ias", "ias-h4", "oracle"} <= set(names)
    assert get_policy("ias-h3+h1").heuristics == ("h1", "h3")
    with pytest.raises(KeyError, match="unknown IAS combination"):
        get_policy("ias-h9")
    with pytest.raises(ValueError, match="aggressiveness"):
        simulate(
            frame([(0, 1, 1)]),
            CapacityTrace.constant(1, 10),
            1,
            1,
            10,
            policy="ias",
            settings={"aggressiveness": "2"},
        )


POLICIES = ["ff-unaware", "ias", "ias-h1+h3", "ias-h4", "ias-h2", "oracle"]


@settings(max_examples=60, deadline=None)
@given(sc=scenarios(), policy=st.sampled_from(POLICIES), seed=st.integers(0, 3))
def test_invariants_hold_for_every_policy(sc, policy, seed) -> None:
    machines, cores, horizon, jobs, cap = sc
    ts = sorted(cap)
    trace = CapacityTrace(np.array(ts, float), np.array([cap[t] for t in ts]), machines, float(horizon))
    problem = Problem.build(frame(jobs), Platform(machines, float(cores)), trace, float(horizon), check=True)
    pol = get_policy(policy)
    # IAS needs H2's change period for a trace whose changes lie on no grid (it refuses to guess one)
    params = pol.Params(period_s=3600.0) if policy.startswith("ias") else pol.Params()
    out = pol.run(problem, params, seed).output
    assert out.violations == 0
    assert out.completed_cs + out.wasted_cs + out.inflight_cs == pytest.approx(out.used_cs)
    assert out.used_cs <= out.available_cs + 1e-9
    assert int(out.terminations.sum()) == out.n_terminations
    assert np.all(out.attempts - out.terminations <= 1)
    if policy == "oracle":
        assert out.n_terminations == 0
    again = pol.run(problem, params, seed).output
    assert np.array_equal(out.first_start_s, again.first_start_s)


def test_jobs_frame_helper_is_plain() -> None:
    assert isinstance(frame([(0, 1, 1)]), pl.DataFrame)


@settings(max_examples=80, deadline=None)
@given(
    sc=scenarios(),
    policy=st.sampled_from(["ias", "ias-h1", "ias-h4", "ias-h3", "ias-h2", "ias-h1+h3+h4", "oracle"]),
    trailing=st.booleans(),
)
def test_wakeup_rescans_equal_full_rescans(sc, policy, trailing) -> None:
    """The indexed pass (pruned queue/machine trees, rescans only when admission can turn true) gives
    exactly the schedule of the naive pass (every queued job, every machine, every instant)."""
    import dataclasses

    from sim.policies.ias import IAS
    from sim.problem import run_first_fit

    machines, cores, horizon, jobs, cap = sc
    ts = sorted(cap)
    trace = CapacityTrace(np.array(ts, float), np.array([cap[t] for t in ts]), machines, float(horizon), 2.0)
    problem = Problem.build(frame(jobs), Platform(machines, float(cores)), trace, float(horizon), check=True)
    pol = get_policy(policy)
    if policy == "ff":
        from sim.engine import Admission

        adm = Admission()
    elif isinstance(pol, IAS):
        params = (
            pol.Params(history="trailing", window_h=10 / 3600, refit_h=4 / 3600) if trailing else pol.Params()
        )
        adm = pol.admission(problem, params)
    else:
        from sim.engine import PRED_ORACLE, Admission
        from sim.policies.oracle import interval_ends_csr

        ptr, ends = interval_ends_csr(problem)
        adm = Admission(PRED_ORACLE, iv_ptr=ptr, iv_end=ends)
    fast = run_first_fit(problem, "lifo", 0, adm).output
    slow = run_first_fit(problem, "lifo", 0, dataclasses.replace(adm, full_rescan=True)).output
    assert np.array_equal(fast.first_start_s, slow.first_start_s)
    assert np.array_equal(fast.end_s, slow.end_s) and fast.n_terminations == slow.n_terminations


def test_h2_wakes_at_a_boundary_even_without_any_event_there() -> None:
    cap = CapacityTrace(np.array([0.0]), np.array([2]), 2, 10 * H, H, "constant")  # period known, one point
    r = simulate(frame([(3000, 1000, 1)]), cap, 2, 1, 10 * H, policy="ias-h2")
    assert starts(r) == [3600.0]


def test_target_asap_sends_the_longest_job_to_the_safest_machine() -> None:
    from tests.reference_target import _Sim

    cap = alternating(48, 8, 4)  # M⁻ = 4 usable machines at first
    # reference windows of one hour: the first hour holds short jobs (601-639 s); in the second hour a job
    # longer than all of them gets category 0 (safest machine), one shorter than all category 1 (riskiest
    # usable machine)
    jobs = frame([(10 * i, 600 + i, 1) for i in range(1, 40)] + [(5000, 40_000, 1), (5100, 300, 1)])
    problem = Problem.build(jobs, Platform(8, 4.0), cap, 48 * H)
    params = get_policy("target-asap").Params(reference_days=1 / 24)
    sim = _Sim(problem, params, "target-asap")
    sim.alive = 8
    long_j = int(np.where(problem.order == 39)[0][0])
    short_j = int(np.where(problem.order == 40)[0][0])
    assert sim._category(long_j, 5000.0) == 0.0 and sim._target(long_j, 5000.0) == 0
    assert sim._category(short_j, 5100.0) == 1.0 and sim._target(short_j, 5100.0) == sim.m_use - 1 == 3
    r = simulate(jobs, cap, 8, 4, 48 * H, policy="target-asap", settings={"reference_days": str(1 / 24)})
    assert r.jobs["terminations"][39] == 0 and r.jobs["status"][39] == "completed"


@pytest.mark.parametrize("impl", ["plain", "compiled"])
def test_earliest_start_respects_the_plan(impl) -> None:
    from sim.policies.target import plan_earliest_start
    from tests.reference_target import earliest_start

    es = earliest_start if impl == "plain" else plan_earliest_start
    plan = [(0.0, 10.0, 20.0), (5.0, 15.0, 4.0), (12.0, 20.0, 10.0)]
    assert es(plan, 0.0, 3.0, 4.0, 24.0) == 0.0
    assert es(plan, 0.0, 3.0, 10.0, 24.0) == 10.0  # [10, 13) leaves 24 − 14 = 10 cores
    assert es(plan, 0.0, 20.0, 24.0, 24.0) == 20.0
    assert es([], 7.0, 1.0, 1.0, 1.0) == 7.0


@settings(max_examples=300, deadline=None)
@given(
    plan=st.lists(
        st.tuples(st.integers(0, 30), st.integers(1, 15), st.sampled_from([0.5, 1.0, 2.0, 3.0])), max_size=12
    ),
    t=st.integers(0, 30),
    w=st.integers(1, 20),
    c=st.sampled_from([0.5, 1.0, 2.5, 4.0]),
)
def test_compiled_earliest_start_equals_the_plain_one(plan, t, w, c) -> None:
    from sim.policies.target import plan_earliest_start
    from tests.reference_target import earliest_start

    p = [(float(s), float(s + d), float(k)) for s, d, k in plan]
    assert plan_earliest_start(p, float(t), float(w), c, 4.0) == earliest_start(p, float(t), float(w), c, 4.0)


@settings(max_examples=60, deadline=None)
@given(
    sc=scenarios(),
    policy=st.sampled_from(["target-stretch", "target-asap", "packed-target-asap"]),
    ref_s=st.sampled_from([4.0, 10.0, 1e6]),
    d=st.integers(0, 4),
    sweep=st.booleans(),
)
def test_indexed_target_equals_the_plain_one(sc, policy, ref_s, d, sweep) -> None:
    """The indexed/compiled Target* (shared loop) makes the plain implementation's choices, job for job."""
    from sim.policies.target import Target, TargetParams, _TargetHooks
    from tests.reference_target import run_reference

    machines, cores, horizon, jobs, cap = sc
    ts = sorted(cap)
    trace = CapacityTrace(np.array(ts, float), np.array([cap[t] for t in ts]), machines, float(horizon))
    problem = Problem.build(frame(jobs), Platform(machines, float(cores)), trace, float(horizon))
    params = TargetParams(search_distance=d, reference_days=ref_s / 86400, pack=2)
    a = run_reference(problem, params, policy)
    hooks = Target(policy).declare(problem, params, 0)
    assert isinstance(hooks, _TargetHooks)
    hooks.stale_slack = 0 if sweep else 4096  # sweep stale events at every re-allocation, or never here
    b = hooks.loop.run(hooks)
    for f in ("first_start_s", "end_s", "attempts", "terminations", "status", "att_job", "att_start_s"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert a.completed_cs == b.completed_cs and a.wasted_cs == b.wasted_cs


@settings(max_examples=40, deadline=None)
@given(sc=scenarios(), policy=st.sampled_from(["target-stretch", "target-asap", "packed-target-asap"]))
def test_target_policies_keep_the_books(sc, policy) -> None:
    machines, cores, horizon, jobs, cap = sc
    ts = sorted(cap)
    trace = CapacityTrace(np.array(ts, float), np.array([cap[t] for t in ts]), machines, float(horizon))
    r = simulate(frame(jobs), trace, machines, cores, horizon, policy=policy)
    m = r.metrics
    out_used = m["goodput"] + m["wasted_fraction"] + m["in_flight_fraction"]
    assert -1e-9 <= m["idle_fraction"] <= 1 + 1e-9 and out_used <= 1 + 1e-9
    done = r.jobs.filter(pl.col("status") == "completed")
    assert (done["end_s"] - done["first_start_s"] >= 0).all()
    assert m["terminations"] == int(r.jobs["terminations"].sum())
