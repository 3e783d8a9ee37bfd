"""SlackSched, the per-machine Oracle and the Acquirer (seed 002) in the harvest-VM loop."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

from sim import simulate
from sim.capacity.generators import harvest_trace, random_walk
from sim.capacity.trace import CapacityTrace, MachineCapacityTrace
from sim.harvest.cluster import ClusterConfig, machine_trace, place_first_fit, run_cluster
from sim.policies.slacksched import completion_probability, expected_completion, expected_waste
from sim.problem import Platform, Problem, run_first_fit
from tests.test_sim_engine import frame, per_machine_scenarios


def _cap(rows: list[tuple[float, int, float]], machines: int, horizon: float) -> MachineCapacityTrace:
    t, m, c = (np.array(x, float) for x in zip(*rows, strict=True))
    return MachineCapacityTrace(t, m.astype(int), c, machines, horizon)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=per_machine_scenarios())
def test_loop_first_fit_equals_compiled_engine(sc) -> None:
    """The Python harvest-VM loop with FF placement, no Acquirer and the engine's kill order (newest start
    first) is the compiled engine, job by job."""
    machines, max_cores, horizon, jobs, events = sc
    cap = _cap([(t, m, c) for t, evs in events.items() for m, c in evs], machines, float(horizon))
    problem = Problem.build(
        frame(jobs), Platform(machines, float(max_cores)), cap, float(horizon), check=True
    )
    a = run_first_fit(problem, "lifo", 0).output
    b = run_cluster(problem, place_first_fit, ClusterConfig(kill_order="newest"), 0).output
    for f in ("first_start_s", "end_s", "attempts", "terminations", "status"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    for f in ("completed_cs", "wasted_cs", "inflight_cs", "available_cs", "used_cs", "aborted_time_s"):
        assert getattr(b, f) == pytest.approx(getattr(a, f)), f
    assert b.n_terminations == a.n_terminations and b.violations == 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=per_machine_scenarios(), acquirer=hst.booleans(), reserve=hst.booleans())
def test_schedule_pass_over_fitting_jobs_equals_asking_about_every_job(sc, acquirer, reserve) -> None:
    """The queue min-tree pass (placement asked only about jobs that fit somewhere) makes the choices of
    the plain pass that asks about every queued job, for every placement of the loop."""
    from sim.harvest.cluster import Cluster, place_oracle
    from sim.policies.capsched import CapacityScheduler
    from sim.policies.slacksched import SlackSched, SlackSchedParams

    machines, max_cores, horizon, jobs, events = sc
    cap = _cap([(t, m, c) for t, evs in events.items() for m, c in evs], machines, float(horizon))
    problem = Problem.build(frame(jobs), Platform(machines, float(max_cores)), cap, float(horizon))
    cfg = ClusterConfig(acquirer=acquirer, acquirer_period_s=3.0, acquirer_fraction=0.5)
    ss = SlackSchedParams(min_samples=1)
    placements = {
        "ff": lambda: place_first_fit,
        "oracle": lambda: place_oracle,
        "slacksched": lambda: SlackSched("slacksched", True).placement(ss),
        "slacksched-nodelay": lambda: SlackSched("slacksched-nodelay", False).placement(ss),
        "capsched": lambda: CapacityScheduler().placement(3),
    }
    for name, make in placements.items():
        qa = name == "slacksched"  # the waiting placement's claims need every queued job asked
        a, b = (
            Cluster(problem, cfg, 1, make(), 10.0, full_pass=fp, queue_aware=qa, reserve=reserve).run()
            for fp in (False, True)
        )
        for f in (
            "first_start_s",
            "end_s",
            "attempts",
            "terminations",
            "att_job",
            "att_start_s",
            "att_machine",
        ):
            assert np.array_equal(getattr(a, f), getattr(b, f)), (name, f)


_ATTEMPT_FIELDS = (
    "first_start_s",
    "end_s",
    "attempts",
    "terminations",
    "att_job",
    "att_start_s",
    "att_machine",
)


def _compiled_scans(ss):
    """(name, Python placement, compiled scan) of every placement that has a compiled pass."""
    from sim.harvest.cluster import place_oracle, scan_oracle
    from sim.policies.slacksched import SlackSched

    pol, nd = SlackSched("slacksched", True), SlackSched("slacksched-nodelay", False)
    return [
        ("oracle", place_oracle, scan_oracle),
        ("slacksched", pol.placement(ss), pol.scan(ss)),
        ("slacksched-nodelay", nd.placement(ss), nd.scan(ss)),
    ]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sc=per_machine_scenarios(),
    acquirer=hst.booleans(),
    min_samples=hst.sampled_from([1, 3, 10_000]),
    reserve=hst.booleans(),
)
def test_compiled_passes_equal_the_python_placements(sc, acquirer, min_samples, reserve) -> None:
    """The compiled schedule passes (waiting SlackSched's eq. 2 costs, the Oracle's look-ahead) make the
    choices of asking their Python placement about every fitting job, attempt by attempt."""
    from sim.harvest.cluster import Cluster
    from sim.policies.slacksched import SlackSchedParams

    machines, max_cores, horizon, jobs, events = sc
    cap = _cap([(t, m, c) for t, evs in events.items() for m, c in evs], machines, float(horizon))
    problem = Problem.build(frame(jobs), Platform(machines, float(max_cores)), cap, float(horizon))
    cfg = ClusterConfig(acquirer=acquirer, acquirer_period_s=3.0, acquirer_fraction=0.5)
    for name, place, scan in _compiled_scans(SlackSchedParams(min_samples=min_samples)):
        qa = name == "slacksched"
        a = Cluster(problem, cfg, 1, place, 10.0, queue_aware=qa, reserve=reserve).run()
        b = Cluster(problem, cfg, 1, place, 10.0, scan=scan, queue_aware=qa, reserve=reserve).run()
        for f in _ATTEMPT_FIELDS:
            assert np.array_equal(getattr(a, f), getattr(b, f)), (name, f)


def test_compiled_passes_equal_the_python_placements_on_a_harvest_pool() -> None:
    """The same on a seeded harvest pool under load, where SlackSched mostly waits (long queues, a rolling
    window of hundreds of inter-change times): a golden comparison at realistic scale."""
    from sim.harvest.cluster import Cluster
    from sim.policies.slacksched import SlackSchedParams

    horizon = 6 * 3600.0
    tr = harvest_trace(12, horizon, seed=3, stability_spread=1.0)
    jobs = _jobs(900, horizon * 0.8, (300, 4500), 8, seed=4)
    problem = Problem.build(jobs, Platform(12, 48.0), tr, horizon)
    waits = 0
    for (name, place, scan), rv in itertools.product(
        _compiled_scans(SlackSchedParams(min_samples=5)), (0, 1)
    ):
        qa = name == "slacksched"
        a = Cluster(problem, ClusterConfig(), 2, place, 3600.0, queue_aware=qa, reserve=bool(rv)).run()
        b = Cluster(
            problem, ClusterConfig(), 2, place, 3600.0, scan=scan, queue_aware=qa, reserve=bool(rv)
        ).run()
        for f in _ATTEMPT_FIELDS:
            assert np.array_equal(getattr(a, f), getattr(b, f)), (name, rv, f)
        waits += int((b.first_start_s > jobs["submit_s"].to_numpy()).sum())
    assert waits > 100  # the queues were long: the passes had many jobs to decide about


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=per_machine_scenarios())
def test_every_harvest_policy_keeps_invariants_and_oracle_never_loses_a_job(sc) -> None:
    machines, max_cores, horizon, jobs, events = sc
    cap = _cap([(t, m, c) for t, evs in events.items() for m, c in evs], machines, float(horizon))
    for policy, st in [
        ("oracle", {}),
        ("slacksched", {"min_samples": "1"}),
        ("slacksched-nodelay", {"min_samples": "1"}),
        ("ff", {"acquirer": "1", "acquirer_period_h": str(3 / 3600), "acquirer_fraction": "0.5"}),
    ]:
        r = simulate(frame(jobs), cap, machines, max_cores, horizon, policy, st, check_invariants=True)
        m = r.metrics
        assert r.invariant_violations == 0, policy
        total = m["goodput"] + m["wasted_fraction"] + m["in_flight_fraction"] + m["idle_fraction"]
        assert total == pytest.approx(1.0) and m["idle_fraction"] >= -1e-9, policy
        if policy == "oracle":
            assert m["terminations"] == 0


def test_equation_one_and_two_by_hand() -> None:
    xs = np.array([100.0, 200.0, 300.0, 400.0])  # S(t) = P(X > t)
    cum = np.concatenate(([0.0], np.cumsum(xs)))
    # e = 150, d = 200: P(X ≤ 350 | X > 150) = 1 − S(350)/S(150) = 1 − (1/4)/(3/4) = 2/3
    p = completion_probability(xs, np.array([0.5]), np.array([150.0]), 200.0)
    assert p[0] == pytest.approx(1 - 0.5 * 2 / 3)
    # w = E[X − 150 | 150 < X ≤ 350] = mean(200, 300) − 150 = 100
    assert expected_waste(xs, cum, np.array([150.0]), 200.0)[0] == pytest.approx(100.0)
    # a node older than every sample is not expected to change
    assert completion_probability(xs, np.array([1.0]), np.array([500.0]), 50.0)[0] == 1.0
    # eq. 2 with a = 0: E = p d + (1 − p)(w + E0); E0 = d + w0 (1 − p0)/p0, p0 = 1 − ps(1 − S(d)) with d = 200
    ps = 0.5
    p0 = 1 - ps * (1 - 0.5)
    w0 = 150.0  # mean(100, 200)
    e0 = 200 + w0 * (1 - p0) / p0
    got = expected_completion(xs, cum, np.array([ps]), ps, np.array([0.0]), np.array([150.0]), 200.0)[0]
    assert got == pytest.approx(p[0] * 200 + (1 - p[0]) * (100 + e0))
    # waiting 60 s on a node shifts e by the wait and adds it
    got2 = expected_completion(xs, cum, np.array([ps]), ps, np.array([60.0]), np.array([150.0]), 200.0)[0]
    p2 = completion_probability(xs, np.array([ps]), np.array([210.0]), 200.0)[0]
    w2 = expected_waste(xs, cum, np.array([210.0]), 200.0)[0]
    assert got2 == pytest.approx(60 + p2 * 200 + (1 - p2) * (w2 + e0))
    assert np.isinf(
        expected_completion(xs, cum, np.array([ps]), ps, np.array([np.inf]), np.array([0.0]), 1.0)[0]
    )


def _jobs(n: int, until_s: float, dur: tuple[int, int], max_cores: int, seed: int) -> pl.DataFrame:
    """``n`` jobs, uniform arrivals in [0, until_s), integer durations in ``dur``, 1…max_cores cores."""
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "job_id": np.arange(n),
            "submit_s": np.sort(rng.uniform(0, until_s, n)).round(),
            "duration_s": rng.integers(*dur, n).astype(float),
            "cores": rng.integers(1, max_cores + 1, n).astype(float),
        }
    )


def _waiting_scenario() -> tuple[pl.DataFrame, MachineCapacityTrace, float]:
    """Machine 0 is stable and busy until T + 60; machine 1 is free (48 cores since T − 100) but flaps 48 ↔ 4
    cores every 600 s."""
    T, horizon = 20_500.0, 40_000.0
    rows = [(0.0, 0, 48.0), (0.0, 1, 48.0)]
    rows += [(k * 600.0, 1, 4.0 if k % 2 else 48.0) for k in range(1, int(horizon // 600))]
    jobs = pl.DataFrame(
        {"job_id": ["A", "B"], "submit_s": [0.0, T], "duration_s": [T + 60.0, 3600.0], "cores": [48.0, 8.0]}
    )
    return jobs, _cap(rows, 2, horizon), T


def test_slacksched_waits_when_equation_two_says_waiting_is_cheaper() -> None:
    jobs, cap, T = _waiting_scenario()
    wait = simulate(jobs, cap, 2, 48, cap.horizon_s, "slacksched", check_invariants=True).jobs
    now = simulate(jobs, cap, 2, 48, cap.horizon_s, "slacksched-nodelay", check_invariants=True).jobs
    b_wait = wait.filter(pl.col("job_id") == "B").row(0, named=True)
    b_now = now.filter(pl.col("job_id") == "B").row(0, named=True)
    assert b_wait["first_start_s"] == T + 60 and b_wait["terminations"] == 0  # waited for the stable node
    assert b_now["first_start_s"] == T and b_now["terminations"] >= 1  # took the flapping node, was killed
    # FF (work-conserving) does what nodelay does here
    ff = (
        simulate(jobs, cap, 2, 48, cap.horizon_s, "ff")
        .jobs.filter(pl.col("job_id") == "B")
        .row(0, named=True)
    )
    assert ff["first_start_s"] == T


def test_nodelay_prefers_the_node_with_higher_completion_probability() -> None:
    """Both nodes have room; FF takes machine 0 (the flapping one), SlackSched-NoDelay machine 1."""
    T, horizon = 20_500.0, 30_000.0
    rows = [(0.0, 0, 48.0), (0.0, 1, 48.0)]
    rows += [(k * 600.0, 0, 4.0 if k % 2 else 48.0) for k in range(1, int(horizon // 600))]
    jobs = pl.DataFrame({"job_id": ["B"], "submit_s": [T], "duration_s": [3600.0], "cores": [8.0]})
    cap = _cap(rows, 2, horizon)
    assert simulate(jobs, cap, 2, 48, horizon, "ff").metrics["terminations"] >= 1
    r = simulate(jobs, cap, 2, 48, horizon, "slacksched-nodelay")
    assert r.metrics["terminations"] == 0 and r.metrics["completed"] == 1


def test_acquirer_converges_to_stable_hvms_and_decommissions_gracefully() -> None:
    horizon = 2 * 86400.0
    rows = [(0.0, m, 16.0) for m in range(20)]
    # machines 0–9 flap every 5 min, 10–19 never change
    rows += [(k * 300.0, m, 8.0 if k % 2 else 16.0) for m in range(10) for k in range(1, int(horizon // 300))]
    cap = _cap(rows, 20, horizon)
    jobs = _jobs(400, horizon * 0.9, (600, 3600), 8, seed=0)
    problem = Problem.build(jobs, Platform(20, 16.0), cap, horizon, check=True)
    from sim.harvest.cluster import Cluster

    cl = Cluster(problem, ClusterConfig(nodes=10, acquirer=True), 7, place_first_fit)
    initial_stable = int(cl.allocated[10:].sum())
    out = cl.run()
    assert out.violations == 0 and cl.acquisitions > 0
    assert int(cl.allocated[10:].sum()) > initial_stable and int((cl.allocated & ~cl.decom)[:10].sum()) <= 2
    # graceful: with no capacity changes at all, the Acquirer's churn kills nothing
    flat = _cap([(0.0, m, 16.0) for m in range(20)], 20, horizon)
    r = simulate(jobs, flat, 20, 16, horizon, "ff", {"nodes": "10", "acquirer": "1"}, check_invariants=True)
    assert r.metrics["terminations"] == 0 and r.invariant_violations == 0
    # and the Acquirer lowers terminations against the same cluster without it
    base = simulate(jobs, cap, 20, 16, horizon, "ff", {"nodes": "10"}).metrics["terminations"]
    acq = simulate(jobs, cap, 20, 16, horizon, "ff", {"nodes": "10", "acquirer": "1"}).metrics["terminations"]
    assert acq < base


def test_machines_alive_traces_run_through_their_per_machine_view() -> None:
    tr = random_walk(10, 2 * 86400.0, changes_per_hour=2, step=0.3, seed=4)
    pm = machine_trace(tr, 8.0)
    assert len(np.unique(tr.machines_alive)) >= 3
    for tt in (0.0, 3600.0 * 5.5, 86400.0 + 7.0):
        last = (
            pm.frame()
            .filter(pl.col("time_s") <= tt)
            .group_by("machine")
            .agg(pl.col("cores_available").last())
        )
        assert int((last["cores_available"] > 0).sum()) == int(tr.at(tt))
    jobs = _jobs(300, 86400, (60, 7200), 4, seed=2)
    # FF on the per-machine view equals FF on the machines-alive trace (LIFO)
    a = simulate(jobs, tr, 10, 8, tr.horizon_s, "ff").metrics
    b = simulate(jobs, pm, 10, 8, tr.horizon_s, "ff").metrics
    assert a == pytest.approx(b, nan_ok=True) and a["terminations"] > 0
    s = simulate(jobs, tr, 10, 8, tr.horizon_s, "slacksched", check_invariants=True)
    assert s.invariant_violations == 0 and s.metrics["completed"] > 0


def test_harvest_policies_are_deterministic() -> None:
    tr = harvest_trace(16, 86400.0, seed=5, stability_spread=1.0)
    jobs = _jobs(500, 80000, (60, 7200), 8, seed=3)
    st = {"nodes": "8", "acquirer": "1"}
    a = simulate(jobs, tr, 16, 48, 86400.0, "slacksched", st, seed=11)
    b = simulate(jobs, tr, 16, 48, 86400.0, "slacksched", st, seed=11)
    assert a.metrics == pytest.approx(b.metrics, nan_ok=True) and a.jobs.equals(b.jobs)


def test_unsupported_combinations_fail_clearly() -> None:
    tr = CapacityTrace.constant(4, 1000.0)
    jobs = pl.DataFrame({"job_id": [1], "submit_s": [0.0], "duration_s": [10.0], "cores": [1.0]})
    with pytest.raises(ValueError, match="per-machine"):
        simulate(jobs, tr, 4, 8, 1000.0, "ff", {"acquirer": "1"})
    with pytest.raises(ValueError, match="exceeds"):
        simulate(jobs, harvest_trace(4, 1000.0, seed=1), 4, 48, 1000.0, "slacksched", {"nodes": "9"})


def _flat_cluster(n_jobs: int, queue_aware: bool, reserve: bool = False):
    """Two stable 8-core nodes and ``n_jobs`` 8-core jobs submitted at 0 (not yet started)."""
    from sim.harvest.cluster import Cluster
    from sim.policies.slacksched import SlackSched, SlackSchedParams

    jobs = pl.DataFrame(
        {
            "job_id": np.arange(n_jobs),
            "submit_s": np.zeros(n_jobs),
            "duration_s": [100.0, 300.0, 500.0, 500.0][:n_jobs],
            "cores": np.full(n_jobs, 8.0),
        }
    )
    cap = _cap([(0.0, 0, 8.0), (0.0, 1, 8.0)], 2, 10_000.0)
    problem = Problem.build(jobs, Platform(2, 8.0), cap, 10_000.0)
    place = SlackSched("slacksched", True).placement(SlackSchedParams())  # unmodelled: E = a + d
    cl = Cluster(problem, ClusterConfig(), 0, place, queue_aware=queue_aware, reserve=reserve)
    cl.cap[:] = 8.0
    return cl, place


def test_a_waiting_jobs_claim_counts_in_the_expected_wait_of_the_jobs_behind_it() -> None:
    """Eq. 2's ``a`` is queue-aware: node 0 (busy until 100) has room for one job when it frees; job B
    waits for it and claims its cores until 100 + 500, so job C behind it sees ``a`` = 600 there and waits
    for node 1 (free at 300) instead of piling onto node 0."""
    cl, place = _flat_cluster(4, queue_aware=True)
    cl._start(0, 0, 0.0)  # A: node 0 until 100
    cl._start(1, 1, 0.0)  # A2: node 1 until 300
    assert cl.next_avail(0, 8.0, 0.0) == 100.0
    assert place(cl, 2, 0.0) == -1  # B waits for node 0 (E = 100 + 500 < 300 + 500) …
    assert cl.nclaim[0] == 1 and cl.claimed[0] == 8.0  # … and claims it
    assert cl.next_avail(0, 8.0, 0.0) == 600.0  # the second waiter's wait includes the first's
    assert cl.next_avail(0, 4.0, 0.0) == 600.0
    assert place(cl, 3, 0.0) == -1 and cl.nclaim[1] == 1  # C: node 1 (800) beats node 0 (600 + 500)
    cl._reset_claims()  # a new pass starts from no claims
    assert cl.next_avail(0, 8.0, 0.0) == 100.0 and cl.claimed.sum() == 0


@pytest.mark.parametrize("reserve", [False, True])
def test_claims_hold_free_cores_only_when_reserving(reserve) -> None:
    """Node 0 has 4 free cores and a waiter claiming 8 there: a 4-core job fits now (Algorithm 1's
    ``feasible``) unless claims reserve the node (YARN-style), then it waits for the claim's end."""
    cl, _ = _flat_cluster(2, queue_aware=True, reserve=reserve)
    cl.cores[0] = 4.0
    cl._start(0, 0, 0.0)  # 4 of node 0's 8 cores until 100
    cl._start(1, 1, 0.0)  # node 1 full until 300
    cl.claim(0, 8.0, 700.0)
    assert cl.next_avail(0, 4.0, 0.0) == (700.0 if reserve else 0.0)
    assert cl.next_avail(0, 8.0, 0.0) == 700.0  # needs the claim's cores back in any case
    assert cl.top_free() == (0.0 if reserve else 4.0)  # node 0: 4 free (−4 reserving); node 1: 0


@pytest.mark.parametrize(
    "policy,st",
    [
        ("ff", {"nodes": "1"}),
        ("capsched", {}),
        ("slacksched", {}),
        ("slacksched-nodelay", {}),
        ("slacksched-heartbeat", {}),
    ],
)
def test_a_shrink_kills_the_oldest_start_first_in_every_harvest_policy(policy, st) -> None:
    """Seed 002 §4.1: "containers are killed (in increasing order of their start time) until the available
    resources on the node exceed or equal the used resources"."""
    cap = _cap([(0.0, 0, 8.0), (100.0, 0, 4.0), (200.0, 0, 8.0)], 1, 5000.0)
    jobs = pl.DataFrame(
        {"job_id": ["X", "Y"], "submit_s": [0.0, 10.0], "duration_s": [1000.0, 1000.0], "cores": [4.0, 4.0]}
    )
    r = simulate(jobs, cap, 1, 8, 5000.0, policy, st, check_invariants=True)
    t = dict(zip(r.jobs["job_id"], r.jobs["terminations"], strict=True))
    assert t == {"X": 1, "Y": 0} and r.invariant_violations == 0


def _heartbeat_pair(problem: Problem, params, seed: int):
    from sim.policies.slacksched_heartbeat import Heartbeat

    hb = Heartbeat()
    return hb.cluster(problem, params, seed, compiled=False).run(), hb.cluster(problem, params, seed).run()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sc=per_machine_scenarios(),
    acquirer=hst.booleans(),
    min_samples=hst.sampled_from([1, 3, 10_000]),
    threshold=hst.sampled_from([0.0, 0.5, 0.9, 1.0]),
    scope=hst.sampled_from(["job", "queue"]),
    beat=hst.sampled_from([("event", 1.0), ("interval", 1.0), ("interval", 3.0)]),
    apps=hst.sampled_from(["move-on", "first"]),
)
def test_heartbeat_compiled_pass_equals_its_python_pass(
    sc, acquirer, min_samples, threshold, scope, beat, apps
) -> None:
    from dataclasses import replace

    from sim.policies.slacksched_heartbeat import HeartbeatParams

    machines, max_cores, horizon, jobs, events = sc
    cap = _cap([(t, m, c) for t, evs in events.items() for m, c in evs], machines, float(horizon))
    problem = Problem.build(
        frame(jobs), Platform(machines, float(max_cores)), cap, float(horizon), check=True
    )
    params = replace(
        HeartbeatParams(
            min_samples=min_samples,
            threshold=threshold,
            scope=scope,
            heartbeat=beat[0],
            heartbeat_s=beat[1],
            apps=apps,
        ),
        acquirer=acquirer,
        acquirer_period_h=3 / 3600,
        acquirer_fraction=0.5,
    )
    a, b = _heartbeat_pair(problem, params, 1)
    for f in _ATTEMPT_FIELDS:
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert a.violations == 0 == b.violations


def test_heartbeat_compiled_pass_equals_its_python_pass_on_a_harvest_pool() -> None:
    from sim.policies.slacksched_heartbeat import HeartbeatParams

    horizon = 6 * 3600.0
    tr = harvest_trace(12, horizon, seed=3, stability_spread=1.0)
    jobs = _jobs(900, horizon * 0.8, (300, 4500), 8, seed=4)
    problem = Problem.build(jobs, Platform(12, 48.0), tr, horizon)
    # the Python pass at 1-s heartbeats over 6 h is slow: the interval reading runs at 60 s here
    for thr, scope, beat, apps in (
        (0.5, "job", "interval", "move-on"),
        (0.9, "job", "event", "first"),
        (0.9, "job", "event", "move-on"),
        (0.5, "queue", "interval", "first"),
    ):
        params = HeartbeatParams(min_samples=5, threshold=thr, scope=scope, heartbeat=beat, heartbeat_s=60.0,
                                 apps=apps)  # fmt: skip
        a, b = _heartbeat_pair(problem, params, 2)
        for f in _ATTEMPT_FIELDS:
            assert np.array_equal(getattr(a, f), getattr(b, f)), (thr, beat, apps, f)
        assert int((b.first_start_s > jobs["submit_s"].to_numpy()).sum()) > 100


def test_heartbeat_takes_a_node_above_the_threshold_else_waits_through_matchmaker() -> None:
    """Algorithm 3 on the waiting scenario: at T the free node 1 flaps every 600 s, so a 1-hour task's
    completion probability there is low. Threshold 0.7: below it, MatchMaker finds node 0 (free at T + 60,
    stable) cheaper, so the task waits for it; threshold 0: node 1 passes and the task starts at once."""
    jobs, cap, T = _waiting_scenario()
    rows = {}
    for thr in ("0.7", "0"):
        st = {"threshold": thr, "heartbeat": "event"}
        r = simulate(jobs, cap, 2, 48, cap.horizon_s, "slacksched-heartbeat", st)
        rows[thr] = r.jobs.filter(pl.col("job_id") == "B").row(0, named=True)
    assert rows["0.7"]["first_start_s"] == T + 60 and rows["0.7"]["terminations"] == 0
    assert rows["0"]["first_start_s"] == T and rows["0"]["terminations"] >= 1
    # YARN's 1-s heartbeats (the default): the same choice, placed at the first heartbeat after node 0 frees
    r = simulate(jobs, cap, 2, 48, cap.horizon_s, "slacksched-heartbeat", {"threshold": "0.7"})
    b = r.jobs.filter(pl.col("job_id") == "B").row(0, named=True)
    assert T + 60 <= b["first_start_s"] <= T + 61 and b["terminations"] == 0


def test_heartbeat_moves_on_to_the_next_job_when_one_takes_nothing() -> None:
    """The waiting scenario plus C, a 10-s task submitted at T + 1: on node 1 (last change 100 s ago, every gap
    600 s) C is sure to finish while B (1 h) is not and MatchMaker makes B wait for node 0. ``apps=move-on``
    (YARN's CapacityScheduler offers the node to the next application): C starts on node 1 at T + 1;
    ``apps=first``: the heartbeat ends with B, and C starts only when B has gone to node 0 (T + 60)."""
    jobs, cap, T = _waiting_scenario()
    jobs = pl.concat([jobs, pl.DataFrame({"job_id": ["C"], "submit_s": [T + 1], "duration_s": [10.0],
                                          "cores": [8.0]})])  # fmt: skip
    first = {}
    for apps in ("move-on", "first"):
        st = {"threshold": "0.7", "heartbeat": "event", "apps": apps}
        r = simulate(jobs, cap, 2, 48, cap.horizon_s, "slacksched-heartbeat", st, check_invariants=True)
        first[apps] = dict(zip(r.jobs["job_id"], r.jobs["first_start_s"], strict=True))
    assert first["move-on"]["C"] == T + 1 and first["move-on"]["B"] == T + 60
    assert first["first"]["C"] == T + 60 and first["first"]["B"] == T + 60


def test_interval_heartbeats_place_only_at_heartbeats() -> None:
    """With heartbeats every ``heartbeat_s`` nothing is placed between them: a task arriving at 10.5 s on an
    idle node starts at the next heartbeat (11 s; 15 s at a 5-s interval), at once with ``heartbeat=event``."""
    cap = _cap([(0.0, 0, 8.0)], 1, 5000.0)
    jobs = pl.DataFrame({"job_id": ["X"], "submit_s": [10.5], "duration_s": [100.0], "cores": [4.0]})
    got = {}
    for st in ({}, {"heartbeat_s": "5"}, {"heartbeat": "event"}):
        r = simulate(jobs, cap, 1, 8, 5000.0, "slacksched-heartbeat", st)
        got[tuple(st.items())] = float(r.jobs["first_start_s"][0])
    assert list(got.values()) == [11.0, 15.0, 10.5]
    with pytest.raises(ValueError, match="heartbeat"):
        simulate(jobs, cap, 1, 8, 5000.0, "slacksched-heartbeat", {"heartbeat": "sometimes"})


def test_heartbeat_serves_jobs_in_order_or_the_shortest_task_by_scope() -> None:
    """Z holds the node until 100; X (submitted at 10, 1000 s) and Y (at 20, 50 s) wait. When the node
    frees, ``scope=job`` serves the earlier job (X, §3.1: job order stays the orchestrator's); ``scope=queue``
    (the pseudocode's ``T`` = every queued task) takes the most likely, i.e. shortest, task (Y)."""
    cap = _cap([(0.0, 0, 8.0)], 1, 5000.0)
    jobs = pl.DataFrame(
        {
            "job_id": ["Z", "X", "Y"],
            "submit_s": [0.0, 10.0, 20.0],
            "duration_s": [100.0, 1000.0, 50.0],
            "cores": [8.0, 8.0, 8.0],
        }
    )
    first = {}
    for scope in ("job", "queue"):
        r = simulate(jobs, cap, 1, 8, 5000.0, "slacksched-heartbeat", {"scope": scope, "heartbeat": "event"})
        first[scope] = dict(zip(r.jobs["job_id"], r.jobs["first_start_s"], strict=True))
    assert first["job"]["X"] == 100.0 and first["job"]["Y"] == 1100.0
    assert first["queue"]["Y"] == 100.0 and first["queue"]["X"] == 150.0


_cores = hst.one_of(hst.sampled_from([0.0, 0.1, 0.2, 0.3, 1.0 / 3.0, 24.0]), hst.floats(0.0, 48.0))


@settings(max_examples=200, deadline=None)
@given(rows=hst.lists(hst.tuples(_cores, _cores, hst.booleans()), min_size=1, max_size=12))
def test_compiled_max_free_is_the_clusters_most_free_cores(rows) -> None:
    """The harvest loop's compiled ``max_free`` (the pass skip's test) is ``Cluster.free().max()``
    exactly: free cores ``cap − used`` where a node takes jobs, −1 elsewhere (rounded sums included)."""
    from sim.harvest.passes import max_free

    cap = np.array([r[0] for r in rows])
    used = np.array([r[0] - r[1] if r[1] <= r[0] else r[1] for r in rows])
    accept = np.array([r[2] for r in rows])
    assert max_free(cap, used, accept) == float(np.where(accept, cap - used, -1.0).max())
