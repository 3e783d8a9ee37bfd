""": the H4-class frontier (sim.engine.queue._front_build) prunes IAS's full queue passes without
changing a decision: the same schedules with and without it, and as the naive full rescan."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import CapacityTrace
from sim.engine import kernel, use_engine
from sim.engine.queue import _front_best, _front_build, _front_drop
from sim.policies import get_policy, parse_params
from sim.problem import Platform, Problem, run_first_fit
from tests.test_sim_engine import frame

INF = np.inf


def _brute_best(alive, free, bound, lo, hi, c):
    best = -INF
    for m in range(lo, hi):
        if alive[m] and free[m] >= c and bound[m] > best:
            best = bound[m]
    return best


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_frontier_answers_like_a_scan_through_drops(data) -> None:
    """_front_best(c) = the best bound of an alive machine in range with at least c free cores, after the
    build and after every drop (a start lowering one machine's free cores)."""
    n = data.draw(st.integers(1, 12))
    lo = data.draw(st.integers(0, n - 1))
    hi = data.draw(st.integers(lo, n))
    quarter = st.integers(0, 32).map(lambda x: x / 4)
    free = np.array(data.draw(st.lists(quarter, min_size=n, max_size=n)))
    alive = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    bound = np.array(
        data.draw(st.lists(st.sampled_from([-INF, 1.0, 2.5, 7.0, 9.0, INF]), min_size=n, max_size=n))
    )
    msize = 16
    ma4 = np.full(2 * msize, -INF)
    ma4[msize : msize + n] = bound
    front = (np.zeros(n), np.zeros(n), np.zeros(n, np.int64), np.full(n, -1, np.int64), np.zeros(1, np.int64))
    _front_build(front, alive, free, ma4, msize, lo, hi)
    for _ in range(data.draw(st.integers(0, 6)) + 1):
        for c in (0.25, 0.5, 1.0, 2.0, 3.75, 5.0, 8.0, 9.0):
            assert _front_best(front[0], front[1], front[4][0], c) == _brute_best(
                alive, free, bound, lo, hi, c
            )
        m = data.draw(st.integers(0, n - 1))
        free[m] = max(free[m] - data.draw(quarter), 0.0)
        _front_drop(front, m, free[m], ma4, msize)


@st.composite
def instances(draw):
    """A few machines of 4 cores, fractional-core jobs mostly longer than the 4 s change period (H4's
    class), machines alive changing at random times."""
    machines = draw(st.integers(2, 8))
    horizon = draw(st.integers(20, 80))
    n = draw(st.integers(1, 40))
    jobs = [
        (
            draw(st.integers(0, horizon)),
            draw(st.integers(1, 40)),
            draw(st.sampled_from([0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0])),
        )
        for _ in range(n)
    ]
    times = sorted(set(draw(st.lists(st.integers(1, horizon), max_size=12))))
    cap = {0: draw(st.integers(1, machines))}
    for t in times:
        cap[t] = draw(st.integers(0, machines))
    return machines, horizon, jobs, cap


def _runs(machines, horizon, jobs, cap, policy):
    ts = sorted(cap)
    trace = CapacityTrace(np.array(ts, float), np.array([cap[t] for t in ts]), machines, float(horizon), 4.0)
    problem = Problem.build(frame(jobs), Platform(machines, 4.0), trace, float(horizon), check=True)
    if policy == "oracle":  # the interval-end bound prunes by the same frontier
        from sim.engine import PRED_ORACLE, Admission
        from sim.policies.oracle import interval_ends_csr

        ptr, ends = interval_ends_csr(problem)
        adm = Admission(PRED_ORACLE, iv_ptr=ptr, iv_end=ends)
    else:
        name, _, reading = policy.partition(":")
        pol = get_policy(name)
        params = dict(x.split("=") for x in reading.split(",") if x)
        adm = pol.admission(problem, pol.Params(**params))
    out = []
    for a in (adm, dataclasses.replace(adm, frontier=False), dataclasses.replace(adm, full_rescan=True)):
        r = run_first_fit(problem, "lifo", 0, a).output
        out.append((r.first_start_s, r.end_s, r.n_terminations))
    return out


def _same(runs) -> None:
    (fs0, end0, k0), *rest = runs
    for fs, end, k in rest:
        assert np.array_equal(fs0, fs) and np.array_equal(end0, end) and k0 == k


#: every admission the index prunes: IAS's heuristics, ias-general (banded survival, H2 on the variable
#: machines only, every job on every machine) and its isolating readings, the Oracle's interval ends
INDEXED = [
    "ias", "ias-h4", "ias-h1+h4", "ias-general", "ias-general:h2=on", "ias-general:placement=h1",
    "ias-general:risk=fixed", "ias-general:risk=own", "ias-general:survival=pooled", "oracle",
]  # fmt: skip
LITERAL = "ias:h4_reading=literal"


@settings(max_examples=200, deadline=None)
@given(sc=instances(), policy=st.sampled_from(INDEXED))
def test_indexed_admission_decides_as_unindexed(sc, policy) -> None:
    """Frontier on, frontier off and the naive full rescan (every queued job on every machine, every
    instant) start the same jobs at the same times."""
    with use_engine("python"):
        _same(_runs(*sc, policy))


@settings(max_examples=100, deadline=None)
@given(sc=instances(), policy=st.sampled_from(INDEXED[:-1]), after=st.sampled_from([1, 2]))
def test_frontier_built_mid_pass_decides_as_unindexed(sc, policy, after) -> None:
    """A full pass builds the frontier only after some refused H4-class jobs (kernel.FRONT_AFTER_MISSES), so
    small instances seldom build it at all: built after the first or second refusal (mid-pass, after
    earlier starts of the same pass) it still starts the same jobs at the same times as without it and as
    the naive rescan (interpreted engine: the constant is read at run time)."""
    with pytest.MonkeyPatch.context() as mp, use_engine("python"):
        mp.setattr(kernel, "FRONT_AFTER_MISSES", after)
        _same(_runs(*sc, policy))


@settings(max_examples=100, deadline=None)
@given(sc=instances())
def test_literal_reading_decides_as_unindexed(sc) -> None:
    """Algorithm 5's literal H4 (admit iff S(u+d)/S(u) < A, class L: pruned by each machine's bound L,
    t + d ≥ L, and woken when a queued job reaches it): frontier on, frontier off and the naive rescan
    start the same jobs at the same times."""
    with use_engine("python"):
        _same(_runs(*sc, LITERAL))


#: literal H4 with the other heuristics, a trailing survival history (model epochs: a global wake that
#: recomputes every bound) and other aggressiveness
LITERAL_VARIANTS = [
    ("ias-h4", {}),
    ("ias-h1+h3+h4", {}),
    ("ias-h3+h4", {"aggressiveness": "0.3"}),
    ("ias", {"aggressiveness": "0.9"}),
    ("ias-h2+h4", {"history": "trailing", "refit_h": str(12 / 3600), "window_h": str(30 / 3600)}),
]


@settings(max_examples=150, deadline=None)
@given(sc=instances(), variant=st.sampled_from(LITERAL_VARIANTS))
def test_literal_variants_decide_as_the_naive_rescan(sc, variant) -> None:
    """Each literal variant: frontier on, off and the naive rescan start the same jobs at the same times."""
    machines, horizon, jobs, cap = sc
    ts = sorted(cap)
    trace = CapacityTrace(np.array(ts, float), np.array([cap[t] for t in ts]), machines, float(horizon), 4.0)
    problem = Problem.build(frame(jobs), Platform(machines, 4.0), trace, float(horizon), check=True)
    pol = get_policy(variant[0])
    adm = pol.admission(problem, parse_params(pol, {"h4_reading": "literal", **variant[1]}))
    out = []
    with use_engine("python"):
        for a in (adm, dataclasses.replace(adm, frontier=False), dataclasses.replace(adm, full_rescan=True)):
            r = run_first_fit(problem, "lifo", 0, a).output
            out.append((r.first_start_s, r.end_s, r.n_terminations))
    _same(out)


def test_literal_reading_decides_as_the_naive_rescan() -> None:
    """Under the literal reading admission turns true when u + d reaches a knot of the survival curve
    (S(u+d) drops): the engine wakes the queued job then (t = L − d). Both the indexed engine and the
    naive rescan start the 5 s job at 25 (S(30)/S(25) = 0 < A), not at the next completion (26)."""
    jobs = [(0, 1, 0.25)] * 4 + [(25, 1, 0.25)] + [(0, 1, 0.25)] * 8 + [(0, 5, 0.25)] + [(0, 1, 0.25)] * 3
    with use_engine("python"):
        runs = _runs(2, 31, jobs, {0: 1, 30: 0}, LITERAL)
    _same(runs)
    assert runs[0][0][13] == 25.0


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_literal_job_wakes_at_its_bound_alone(engine) -> None:
    """No event of the run falls at 25 (the short jobs end at 1, the capacity changes at 30): the 5 s job,
    refused at 0 (S(5)/S(0) = 1 ≥ A), starts at 25 = L − d by its own wake-up, where t + d reaches the
    machine's bound L = 30, in both engines and with the naive rescan."""
    jobs = [(0, 1, 0.25)] * 4 + [(0, 5, 0.25)]
    with use_engine(engine):
        runs = _runs(2, 31, jobs, {0: 1, 30: 0}, LITERAL)
    _same(runs)
    assert runs[0][0].tolist() == [0.0, 0.0, 0.0, 0.0, 25.0]


def test_indexed_admission_decides_as_unindexed_compiled() -> None:
    """The same on a larger random instance, compiled (where the frontier prunes thousands of times)."""
    rng = np.random.default_rng(3)
    machines, horizon = 40, 3000
    n = 1500
    jobs = [
        (int(s), int(d), float(c))
        for s, d, c in zip(
            np.sort(rng.integers(0, horizon, n)),
            rng.integers(1, 200, n),
            rng.choice([0.25, 0.5, 1.0, 1.5, 2.0, 4.0], n),
            strict=True,
        )
    ]
    cap = {int(t): int(rng.integers(machines // 3, machines + 1)) for t in range(0, horizon, 40)}
    with use_engine("compiled"):
        for policy in ("ias", "ias-general", "ias-general:survival=pooled"):
            _same(_runs(machines, horizon, jobs, cap, policy))
        _same(_runs(machines, horizon, jobs, cap, LITERAL)[:2])
