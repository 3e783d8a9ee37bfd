"""``ias-general``: each design choice on a trace where it decides, the survival bands, the invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.api import simulate
from sim.capacity.intervals import extract_intervals
from sim.capacity.trace import CapacityTrace
from sim.policies import get_policy, parse_params
from sim.policies.ias_general import MIN_EVENTS, blind_survival, machine_models, own_blind_survival
from sim.problem import Platform, Problem
from tests.test_ias_index import _runs, _same
from tests.test_ias_index import instances as index_instances
from tests.test_sim_engine import frame, scenarios

H = 3600.0


def alternating(hours: int) -> CapacityTrace:
    """2 one-core machines: machine 0 always on, machine 1 on for one hour, off for the next, …"""
    vals = np.array([2 if i % 2 == 0 else 1 for i in range(hours)])
    return CapacityTrace(np.arange(hours) * H, vals, 2, hours * H, H, "alternating")


def starts(r) -> list[float]:
    return r.jobs["first_start_s"].to_list()


def test_registered_with_checked_settings() -> None:
    pol = get_policy("ias-general")
    assert pol.name == "ias-general"
    assert parse_params(pol, {"placement": "h1"}).placement == "h1"
    assert parse_params(pol, {}).h2 == "variable"
    assert parse_params(pol, {}).risk == "blind"
    for bad in ({"placement": "stable"}, {"risk": "mean"}, {"survival": "band"}, {"h2": "yes"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            parse_params(pol, bad)
    with pytest.raises(ValueError, match="aggressiveness"):
        parse_params(pol, {"aggressiveness": "1.5"})


def test_no_fit_cliff_variable_capacity_is_used() -> None:
    # two short jobs offer far less than the always-on machine: IAS's `fit` calls both "big" and runs them
    # one after the other on machine 0; ias-general runs the second on machine 1, which outlives it
    cap, jobs = alternating(48), frame([(0, 1800, 1), (0, 1800, 1)])
    assert starts(simulate(jobs, cap, 2, 1, 48 * H, "ias")) == [0.0, 1800.0]
    r = simulate(jobs, cap, 2, 1, 48 * H, "ias-general")
    assert starts(r) == [0.0, 0.0] and r.metrics["terminations"] == 0
    # reverting the placement choice brings the cliff back
    assert starts(simulate(jobs, cap, 2, 1, 48 * H, "ias-general", {"placement": "h1"})) == [0.0, 1800.0]


def test_a_short_job_uses_an_idle_always_on_machine() -> None:
    # in hour 1 only machine 0 is on; a small job (under H1's threshold) submitted then
    cap, jobs = alternating(48), frame([(H + 100, 600, 1)])
    small = {"long_job_thresh": "100000"}
    assert starts(simulate(jobs, cap, 2, 1, 48 * H, "ias", small)) == [2 * H]  # barred from machine 0
    assert starts(simulate(jobs, cap, 2, 1, 48 * H, "ias-general")) == [H + 100]


def test_a_job_starts_only_where_its_machine_more_likely_outlives_it() -> None:
    # machine 0 is busy for 3 h; machine 1's intervals last exactly one hour. A 2-hour job would be killed
    # there for sure: it waits for machine 0. A 30-minute job at uptime 0 cannot be: it starts at once.
    cap = alternating(48)
    jobs = frame([(0, 3 * H, 1), (0, 2 * H, 1), (0, 1800, 1)])
    r = simulate(jobs, cap, 2, 1, 48 * H, "ias-general")
    assert starts(r) == [0.0, 3 * H, 0.0] and r.metrics["terminations"] == 0
    ff = simulate(jobs, cap, 2, 1, 48 * H, "ff")
    assert ff.metrics["terminations"] > 0
    # uptime counts: a 40-minute job submitted 30 minutes into machine 1's interval would cross its end
    late = simulate(frame([(0, 3 * H, 1), (1800, 2400, 1)]), cap, 2, 1, 48 * H, "ias-general")
    assert starts(late)[1] == 2 * H  # the next interval, at uptime 0


def mostly_long() -> CapacityTrace:
    """2 one-core machines: machine 0 always on; machine 1's five intervals last 1, 10, 1, 10 and 10 hours
    (on at 1, 3, 14, 16 and 27 h), each followed by an hour off: S(1 h) = 0.6, and a 90-minute job started
    at a random on-instant completes with probability ∫_{1.5 h} S / ∫ S = 0.6 · 8.5 / 6.4."""
    on = [(1, 2), (3, 13), (14, 15), (16, 26), (27, 37)]
    vals = np.array([2 if any(a <= h < b for a, b in on) else 1 for h in range(38)])
    return CapacityTrace(np.arange(38) * H, vals, 2, 38 * H, H, "mostly-long")


def test_blind_survival_is_the_completion_odds_at_a_random_on_instant() -> None:
    cap = mostly_long()
    models, band = machine_models(extract_intervals(cap), 2, 1, True, cap.horizon_s)
    assert band[1] == 1 and models[1].survival(1.5 * H) == pytest.approx(0.6)
    assert blind_survival(models[1], np.array([1.5 * H])) == pytest.approx(0.6 * 8.5 / 6.4)
    assert blind_survival(models[1], np.array([1.5 * H, 20 * H])) == pytest.approx(0.6 * 8.5 / 6.4 / 2)
    assert blind_survival(models[1], np.array([])) == 0.0


def test_a_start_must_beat_a_blind_start_not_only_the_median() -> None:
    # two 90-minute jobs when machine 1 turns on (16 h); machine 0 takes the first. On machine 1 at uptime
    # 0 the second completes with probability 0.6 (≥ ½: the median starts it) but a blind start completes
    # with 0.797: it waits until machine 1 has passed the hour at which 40 % of its intervals end
    cap, jobs = mostly_long(), frame([(16 * H, 1.5 * H, 1), (16 * H, 1.5 * H, 1)])
    assert starts(simulate(jobs, cap, 2, 1, 38 * H, "ias-general")) == [16 * H, 17 * H]
    assert starts(simulate(jobs, cap, 2, 1, 38 * H, "ias-general", {"risk": "median"})) == [16 * H, 16 * H]
    # where a blind start is less likely than not to complete, the median decides
    short = frame([(16 * H, 1.5 * H, 1), (16 * H, 1.5 * H, 1), (0, 30 * H, 1), (0, 30 * H, 1)])
    models, _ = machine_models(extract_intervals(cap), 2, 1, True, cap.horizon_s)
    assert blind_survival(models[1], short["duration_s"].to_numpy()) < 0.5
    same = [simulate(short, cap, 2, 1, 38 * H, "ias-general", st).jobs for st in ({}, {"risk": "median"})]
    assert same[0].equals(same[1])


def test_risk_own_judges_each_job_against_its_own_blind_start() -> None:
    # machine 0 is busy until 30 h; a 9.5-hour job B comes when machine 1 turns on for 10 hours (16 h), nine
    # 30-minute jobs later. At uptime 0, B outlives the interval with probability S(9.5 h) = 0.6, far above
    # its own blind start's 0.6 · 0.5 / 6.4 (and ½); but the workload's blind start (the short jobs' 0.92)
    # makes risk=blind's bar 0.76, so blind holds B until machine 0 is free
    cap = mostly_long()
    jobs = frame([(0, 30 * H, 1), (16 * H, 9.5 * H, 1)] + [(30 * H, 1800, 1)] * 9)
    models, _ = machine_models(extract_intervals(cap), 2, 1, True, cap.horizon_s)
    own = own_blind_survival(models[1], jobs["duration_s"].to_numpy())
    assert own[1] == pytest.approx(0.6 * 0.5 / 6.4) and own[2] == pytest.approx(5.9 / 6.4)
    assert float(np.mean(own)) == pytest.approx(blind_survival(models[1], jobs["duration_s"].to_numpy()))
    assert blind_survival(models[1], jobs["duration_s"].to_numpy()) > 0.6
    assert starts(simulate(jobs, cap, 2, 1, 38 * H, "ias-general"))[1] == 30 * H
    r = simulate(jobs, cap, 2, 1, 38 * H, "ias-general", {"risk": "own"})
    assert starts(r)[1] == 16 * H and r.metrics["terminations"] == 0
    # a 90-minute job's own blind start completes with 0.797: own holds it past uptime 0 (S = 0.6) as blind
    # does for a workload of such jobs alone, where the median starts it at once
    two = frame([(16 * H, 1.5 * H, 1), (16 * H, 1.5 * H, 1)])
    assert starts(simulate(two, cap, 2, 1, 38 * H, "ias-general", {"risk": "own"})) == [16 * H, 17 * H]


def test_a_job_bar_below_the_pruning_bar_is_refused() -> None:
    from sim.engine import PRED_IAS, Admission

    with pytest.raises(ValueError, match="at least a_thresh"):
        Admission(PRED_IAS, a_thresh=0.5, job_thresh=np.array([0.6, 0.4])).thresholds(2)
    with pytest.raises(ValueError, match="needs 3 values"):
        Admission(PRED_IAS, a_thresh=0.5, job_thresh=np.array([0.6, 0.7])).thresholds(3)
    assert Admission(PRED_IAS, a_thresh=0.3).thresholds(2).size == 0  # every job at a_thresh
    own = Admission(PRED_IAS, a_thresh=0.5, job_thresh=np.array([0.5, 0.7]))
    assert own.thresholds(2).tolist() == [0.5, 0.7]


def test_h2_holds_short_jobs_on_variable_machines_only() -> None:
    # machine 1 is on for three hours, off for one: a 20-minute job at 50 minutes crosses the 1-hour change,
    # which machine 1 survives for sure (the survival test admits it), but H2 holds it to the change
    vals = np.array([2 if i % 4 != 3 else 1 for i in range(48)])
    cap = CapacityTrace(np.arange(48) * H, vals, 2, 48 * H, H, "three-on-one-off")
    busy = frame([(0, 5 * H, 1), (3000, 1200, 1)])  # machine 0 busy: the short job can only use machine 1
    assert starts(simulate(busy, cap, 2, 1, 48 * H, "ias-general"))[1] == H
    assert starts(simulate(busy, cap, 2, 1, 48 * H, "ias-general", {"h2": "off"}))[1] == 3000.0
    # on the always-on machine no change can end it: it starts at once, unless H2 holds it everywhere
    idle = frame([(3000, 1200, 1)])
    assert starts(simulate(idle, cap, 2, 1, 48 * H, "ias-general")) == [3000.0]
    assert starts(simulate(idle, cap, 2, 1, 48 * H, "ias-general", {"h2": "on"})) == [H]


def test_survival_bands_per_machine_where_informative() -> None:
    long, short = alternating(2 * (MIN_EVENTS + 5)), alternating(2 * (MIN_EVENTS - 5))
    for cap, own in ((long, True), (short, False)):
        models, band = machine_models(extract_intervals(cap), 2, 1, True, cap.horizon_s)
        assert band[0] == 0 and models[0].survival(cap.horizon_s) == 1.0  # always on: never ends
        assert band[1] == (2 if own else 1) and len(models) == (3 if own else 2)
        assert models[band[1]].p_survive(0.0, 1800.0) == 1.0 and models[band[1]].p_survive(0.0, 2 * H) == 0.0
    models, band = machine_models(extract_intervals(long), 2, 1, False, long.horizon_s)
    assert list(band) == [0, 1] and len(models) == 2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sc=scenarios(),
    variant=st.sampled_from(
        [
            {},
            {"placement": "h1"},
            {"risk": "median"},
            {"risk": "own"},
            {"risk": "fixed"},
            {"survival": "pooled"},
            {"h2": "on"},
            {"h2": "off"},
        ]
    ),
    seed=st.integers(0, 3),
)
def test_invariants_hold_for_every_variant(sc, variant, seed) -> None:
    machines, cores, horizon, jobs, cap = sc
    ts = sorted(cap)
    trace = CapacityTrace(np.array(ts, float), np.array([cap[t] for t in ts]), machines, float(horizon))
    problem = Problem.build(frame(jobs), Platform(machines, float(cores)), trace, float(horizon), check=True)
    pol = get_policy("ias-general")
    params = parse_params(pol, {**variant, "period_s": "3"})  # these traces' changes lie on no grid
    out = pol.run(problem, params, seed).output
    assert out.violations == 0
    assert out.completed_cs + out.wasted_cs + out.inflight_cs == pytest.approx(out.used_cs)
    assert out.used_cs <= out.available_cs + 1e-9
    assert int(out.terminations.sum()) == out.n_terminations
    again = pol.run(problem, params, seed).output
    assert np.array_equal(out.first_start_s, again.first_start_s)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=index_instances())
def test_pruned_passes_decide_as_the_full_rescan(sc) -> None:
    """Per-machine bands (an always-on band that admits everything among them): frontier on, off and the
    naive full rescan start the same jobs at the same times, in both engines."""
    from sim.engine import use_engine

    with use_engine("python"):
        py = _runs(*sc, "ias-general")
    _same(py)
    _same([py[0], _runs(*sc, "ias-general")[0]])  # compiled as the Python engine


def test_pruned_passes_decide_as_the_full_rescan_with_own_bands() -> None:
    """The same, compiled, on an instance where most variable machines have their own survival band."""
    from sim.engine import use_engine

    rng = np.random.default_rng(5)
    machines, horizon, n = 12, 4000, 1200
    jobs = [
        (int(s), int(d), float(c))
        for s, d, c in zip(
            np.sort(rng.integers(0, horizon, n)),
            rng.integers(1, 120, n),
            rng.choice([0.5, 1.0, 2.0, 4.0], n),
            strict=True,
        )
    ]
    cap = {int(t): int(rng.integers(3, machines + 1)) for t in range(0, horizon, 8)}
    trace = CapacityTrace(
        np.array(sorted(cap), float), np.array([cap[t] for t in sorted(cap)]), machines, 4000.0
    )
    _, band = machine_models(extract_intervals(trace), machines, 3, True, 4000.0)
    assert len(set(band[3:].tolist()) - {1}) >= 5  # per-machine bands are in play
    with use_engine("compiled"):
        _same(_runs(machines, horizon, jobs, cap, "ias-general"))
