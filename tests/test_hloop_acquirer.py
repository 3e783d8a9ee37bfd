"""The compiled harvest-VM loop with the Acquirer (paper 002 Algorithm 2), a cluster smaller than the pool, and the
``ff``/``oracle`` placements (sim.harvest.loop) is the Python loop (:class:`sim.harvest.cluster.Cluster`), bit
for bit: the same decommissions, the same seeded replacements (the Cluster's generator left in the same state),
the same per-job outcomes and accounting."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.capacity.generators import harvest_trace
from sim.harvest.cluster import Cluster
from sim.metrics import EngineOutput
from sim.problem import Platform, Problem
from tests.test_hloop import _assert_same, run_harvest
from tests.test_sim_engine import frame, per_machine_scenarios
from tests.test_slacksched import _cap, _jobs

#: every policy whose harvest loop runs compiled
POLICIES = ("slacksched-nodelay", "slacksched", "capsched", "ff", "oracle", "slacksched-heartbeat")
#: Algorithm 3's heartbeats every 5 s on the 6-h pools (the Python loop at YARN's 1 s is slow)
POOL_KW = {"slacksched-heartbeat": {"heartbeat_s": 5.0, "min_samples": 5}}
#: the Cluster's state the run leaves behind (compared after both runs)
STATE = ("cap", "used", "allocated", "decom", "last_change", "last_dir")


def _params(policy: str, **kw):
    from sim.policies import get_policy

    return get_policy(policy).Params(**kw)


def _run(problem: Problem, policy: str, compiled: bool, seed: int, **kw) -> tuple[EngineOutput, Cluster]:
    out, cl, _ = run_harvest(policy, _params(policy, **kw), problem, compiled, seed)
    return out, cl


def _same(problem: Problem, policy: str, seed: int = 0, **kw) -> tuple[EngineOutput, Cluster]:
    """Both paths on ``problem``: outputs, the Cluster's final state, its Acquirer's generator and count equal."""
    (a, ca), (b, cb) = (_run(problem, policy, c, seed, **kw) for c in (False, True))
    _assert_same(a, b)
    for f in STATE:
        x, y = getattr(ca, f), getattr(cb, f)
        assert x.dtype == y.dtype and np.array_equal(x, y), f
    assert ca.acquisitions == cb.acquisitions
    assert ca.rng.bit_generator.state == cb.rng.bit_generator.state  # as many draws, of the same bounds
    return b, cb


def _pool(n: int, load: float, machines: int = 12) -> Problem:
    horizon = 6 * 3600.0
    tr = harvest_trace(machines, horizon, seed=3, stability_spread=1.0, mean_inter_change_s=900.0)
    jobs = _jobs(n, horizon * 0.8, (300, int(4500 * load)), 12, seed=4)
    return Problem.build(jobs, Platform(machines, 48.0), tr, horizon, check=True)


def test_choice_is_numpys_generator_choice_bit_for_bit() -> None:
    """The Acquirer's draw (``rng.choice(cand, k, replace=False)``): Floyd's branch and the tail-shuffle branch
    (pools above 10,000), the same sample and the generator left in the same state."""
    from sim.harvest.loop import choice

    r = np.random.default_rng(0)
    cases = [(int(r.integers(1, 80)), None) for _ in range(200)]
    cases += [(1, 1), (2, 2), (64, 64), (10_001, 201), (10_001, 200), (12_000, 3000), (20_000, 5)]
    for i, (pop, size) in enumerate(cases):
        size = size or int(r.integers(1, pop + 1))
        a = np.sort(r.choice(50_000, pop, replace=False)).astype(np.int64)
        g1, g2 = np.random.default_rng([i, 7]), np.random.default_rng([i, 7])
        want = g1.choice(a, size, replace=False)
        got = choice(g2, a, size)
        assert np.array_equal(want, got), (pop, size)
        assert g1.bit_generator.state == g2.bit_generator.state, (pop, size)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    ("nodes", "period_h", "fraction", "seed"),
    [
        (8, 0.5, 0.25, 0),  # 8 of 12 HVMs, a quarter replaced every half hour
        (0, 1.0, 0.5, 1),  # the whole pool allocated: replacements only from nodes freed before
        (6, 0.25, 1.0, 2),  # every live node marked at each period
    ],
)
def test_compiled_acquirer_equals_the_python_loop(policy, nodes, period_h, fraction, seed) -> None:
    problem = _pool(600, 1.0)
    b, cl = _same(
        problem,
        policy,
        seed,
        **POOL_KW.get(policy, {}),
        nodes=nodes,
        acquirer=True,
        acquirer_period_h=period_h,
        acquirer_fraction=fraction,
    )
    assert b.violations == 0 and b.events > 600
    if nodes:
        assert cl.acquisitions > 0  # replacements were drawn
    assert np.unique(b.cap_cores).size > 10


@pytest.mark.parametrize("policy", POLICIES)
def test_compiled_cluster_smaller_than_the_pool_equals_the_python_loop(policy) -> None:
    """``nodes`` < pool without the Acquirer (the seeded initial choice in Python, the run compiled)."""
    b, _ = _same(_pool(500, 1.2), policy, 3, nodes=7, **POOL_KW.get(policy, {}))
    assert b.n_terminations > 0 or policy == "oracle"


def test_oracle_on_the_whole_pool_equals_the_python_loop_and_is_never_killed() -> None:
    b, _ = _same(_pool(700, 1.4), "oracle", 0)
    assert b.n_terminations == 0 and (b.attempts == 1).sum() > 100


def test_acquirer_decides_the_run() -> None:
    """The comparisons above can fail: the Acquirer's period changes the run (the tick events reach the loop)
    and another seed draws other replacements."""
    problem = _pool(400, 1.0)
    kw = {"nodes": 8, "acquirer": True, "acquirer_fraction": 0.25}
    a, _ = _run(problem, "ff", True, 0, acquirer_period_h=0.5, **kw)
    b, _ = _run(problem, "ff", True, 0, acquirer_period_h=0.75, **kw)
    c, _ = _run(problem, "ff", True, 1, acquirer_period_h=0.5, **kw)
    assert not np.array_equal(a.cap_cores, b.cap_cores)
    assert not np.array_equal(a.att_machine, c.att_machine)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sc=per_machine_scenarios(),
    policy=st.sampled_from(POLICIES),
    nodes=st.integers(0, 3),
    period_s=st.integers(1, 8),
    fraction=st.sampled_from([0.0, 0.34, 0.5, 1.0]),
    acquirer=st.booleans(),
    reserve=st.booleans(),
)
def test_compiled_loop_equals_the_python_loop_on_random_instances(
    sc, policy, nodes, period_s, fraction, acquirer, reserve
) -> None:
    machines, max_cores, horizon, jobs, events = sc
    cap = _cap([(t, m, c) for t, evs in events.items() for m, c in evs], machines, float(horizon))
    problem = Problem.build(
        frame(jobs), Platform(machines, float(max_cores)), cap, float(horizon), check=True
    )
    kw = {
        "nodes": min(nodes, machines),
        "acquirer": acquirer or policy == "ff",  # ff runs this loop only with nodes or the Acquirer
        "acquirer_period_h": period_s / 3600.0,
        "acquirer_fraction": fraction,
    }
    if policy.startswith("slacksched"):
        kw |= {"min_samples": 1, "window_h": 5 / 3600}
    if policy == "slacksched":
        kw["reserve"] = reserve
    _same(problem, policy, len(jobs), **kw)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sc=per_machine_scenarios(),
    nodes=st.integers(0, 3),
    acquirer=st.booleans(),
    min_samples=st.sampled_from([1, 3, 10_000]),
    threshold=st.sampled_from([0.0, 0.5, 0.9, 1.0]),
    scope=st.sampled_from(["job", "queue"]),
    beat=st.sampled_from([("event", 1.0), ("interval", 1.0), ("interval", 3.0)]),
    apps=st.sampled_from(["move-on", "first"]),
)
def test_compiled_heartbeat_loop_equals_the_python_loop_on_random_instances(
    sc, nodes, acquirer, min_samples, threshold, scope, beat, apps
) -> None:
    """Algorithm 3 (its compiled pass in both loops): heartbeats at an interval or at every instant, the
    Acquirer at the first heartbeat at or after its period, both queue scopes and both app readings."""
    machines, max_cores, horizon, jobs, events = sc
    cap = _cap([(t, m, c) for t, evs in events.items() for m, c in evs], machines, float(horizon))
    problem = Problem.build(
        frame(jobs), Platform(machines, float(max_cores)), cap, float(horizon), check=True
    )
    kw = {
        "nodes": min(nodes, machines),
        "acquirer": acquirer,
        "acquirer_period_h": 2.5 / 3600.0,
        "acquirer_fraction": 0.5,
        "min_samples": min_samples,
        "window_h": 5 / 3600,
        "threshold": threshold,
        "scope": scope,
        "heartbeat": beat[0],
        "heartbeat_s": beat[1],
        "apps": apps,
    }
    _same(problem, "slacksched-heartbeat", len(jobs), **kw)


def test_options_the_compiled_loop_does_not_serve_run_in_python() -> None:
    """Checkpointing: the compiled runs decline and the Python loop runs."""
    from sim.checkpoint import Checkpoint
    from sim.harvest.loop import run_first_fit, run_oracle
    from sim.policies import get_policy

    horizon = 3600.0
    tr = harvest_trace(4, horizon, seed=1)
    jobs = _jobs(40, horizon * 0.8, (60, 600), 8, seed=2)
    pc = Problem.build(jobs, Platform(4, 48.0), tr, horizon, checkpoint=Checkpoint(600.0, 10.0, 5.0))
    ff, oracle = get_policy("ff"), get_policy("oracle")
    assert run_first_fit(ff.declare(pc, _params("ff", acquirer=True), 0)) is None
    assert run_oracle(oracle.declare(pc, _params("oracle"), 0)) is None
    p = Problem.build(jobs, Platform(4, 48.0), tr, horizon)
    assert run_oracle(oracle.declare(p, _params("oracle", acquirer=True), 0)) is not None


def test_the_kept_window_is_the_window_sorted_afresh() -> None:
    """The compiled loop's change-history window (:func:`sim.harvest.loop._window`): after any sequence of
    moves (samples added, expired, both, many at once), the sorted values and prefix sums that sorting the
    window afresh and summing in order give, bit for bit (integer-valued samples: many equal values)."""
    from sim.harvest.loop import _window

    r = np.random.default_rng(5)
    x = np.round(r.exponential(900.0, 6000)) + r.integers(0, 2, 6000) * r.uniform(0, 1, 6000)
    sx, scum, ns = np.empty(4), np.zeros(5), 0
    mhead = mnh = -1
    h = nh = 0
    for _ in range(1500):
        nh = min(x.size, nh + int(r.choice([0, 1, 2, 5, 40])))
        h = min(nh, h + int(r.choice([0, 0, 1, 3, 50])))
        sx, scum, ns = _window(sx, scum, ns, x, mhead, mnh, h, nh)
        mhead, mnh = h, nh
        want = np.sort(x[h:nh])
        assert ns == want.size and np.array_equal(sx[:ns], want)
        assert np.array_equal(scum[: ns + 1], np.concatenate(([0.0], np.cumsum(want))))
