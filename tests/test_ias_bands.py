"""IAS admission with one survival model per machine band (compiled H3/H4)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim import CapacityTrace
from sim.capacity.intervals import BandedIntervalModel, IntervalModel, extract_intervals
from sim.policies import get_policy
from sim.problem import Platform, Problem, run_first_fit
from tests.test_sim_engine import frame, scenarios

H = 3600.0


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sc=scenarios(),
    policy=st.sampled_from(["ias", "ias-h4", "ias-h3", "ias-h1+h2+h3+h4"]),
    trailing=st.booleans(),
    rescan=st.booleans(),
)
def test_two_identical_bands_equal_one_band(sc, policy, trailing, rescan) -> None:
    machines, cores, horizon, jobs, cap = sc
    ts = sorted(cap)
    trace = CapacityTrace(np.array(ts, float), np.array([cap[t] for t in ts]), machines, float(horizon), 2.0)
    problem = Problem.build(frame(jobs), Platform(machines, float(cores)), trace, float(horizon), check=True)
    pol = get_policy(policy)
    params = (
        pol.Params(history="trailing", window_h=10 / 3600, refit_h=4 / 3600) if trailing else pol.Params()
    )
    one = dataclasses.replace(pol.admission(problem, params), full_rescan=rescan)
    two = dataclasses.replace(
        one, models=[(m, m) for m in one.models], band_of_machine=np.arange(machines) % 2
    )
    a = run_first_fit(problem, "lifo", 0, one).output
    b = run_first_fit(problem, "lifo", 0, two).output
    assert np.array_equal(a.first_start_s, b.first_start_s) and np.array_equal(a.end_s, b.end_s)
    assert np.array_equal(a.att_machine, b.att_machine) and b.violations == 0


def test_a_band_of_its_own_changes_decisions() -> None:
    # machine 0 always on, machine 1 on every other hour. Pooled, the curve says a fresh machine dies
    # within the hour, so the long job X waits until machine 0 is an hour old; with machine 0's own band
    # (it never turns off) X starts at once, and Y still avoids machine 1 (its band: 1-hour intervals).
    hours = 48
    vals = np.array([2 if i % 2 == 0 else 1 for i in range(hours)])
    cap = CapacityTrace(np.arange(hours) * H, vals, 2, hours * H, H, "alternating")
    problem = Problem.build(frame([(0, 100_000, 1), (4000, 5000, 1)]), Platform(2, 1.0), cap, hours * H)
    pol = get_policy("ias-h4")
    pooled = pol.admission(problem, pol.Params())
    banded = BandedIntervalModel.from_intervals(extract_intervals(cap), machines=2, bands=2)
    per_band = dataclasses.replace(
        pooled, models=[banded.models], band_of_machine=banded.band_of(np.arange(2))
    )
    a = run_first_fit(problem, "lifo", 0, pooled).output
    b = run_first_fit(problem, "lifo", 0, per_band).output
    assert a.first_start_s.tolist() == [H, H + 100_000]
    # Y (5000 s) never goes to machine 1, whose band's intervals last one hour: it waits for machine 0
    assert b.first_start_s.tolist() == [0.0, 100_000.0]
    assert b.att_machine.tolist() == [0, 0] and b.n_terminations == 0


def test_band_inputs_are_checked() -> None:
    m = IntervalModel(np.array([1.0]), np.array([0.5]), 2, 2.0)
    cap = CapacityTrace(np.array([0.0]), np.array([2]), 2, 10.0)
    problem = Problem.build(frame([(0, 1, 1)]), Platform(2, 1.0), cap, 10.0)
    adm = get_policy("ias-h4").admission(problem, get_policy("ias-h4").Params())
    with pytest.raises(ValueError, match="band_of_machine"):
        run_first_fit(problem, "lifo", 0, dataclasses.replace(adm, models=[(m, m)], band_of_machine=[0, 2]))
    with pytest.raises(ValueError, match="same number of band models"):
        run_first_fit(problem, "lifo", 0, dataclasses.replace(adm, models=[(m, m), (m,)]))


def test_a_model_shared_by_many_cells_fills_them_as_copies_would() -> None:
    from sim.engine.admission import Admission

    rng = np.random.default_rng(4)

    def model(k: int) -> IntervalModel:
        t = np.sort(rng.uniform(10.0, 5000.0, k))
        return IntervalModel(t, np.linspace(0.95, 0.05, k), k + 3, float(t[-1]) + 100.0)

    a, b, c = model(3), model(7), model(1)
    shared = [[a, b], [b, c], [a, a], [c, b]]  # objects repeated across epochs and bands
    copies = [[dataclasses.replace(m) for m in row] for row in shared]
    band = np.array([0, 1, 1])
    got = Admission(models=shared, epoch_s=60.0, band_of_machine=band).inputs(3)
    want = Admission(models=copies, epoch_s=60.0, band_of_machine=band).inputs(3)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    mt, mn, mkn = got[3], got[5], got[8]
    assert mt.shape == (4, 2, 7) and mn.tolist() == [[3, 7], [7, 1], [3, 3], [1, 7]]
    np.testing.assert_array_equal(mt[2, 1, :3], a.times)
    assert mkn[1, 1] == 3  # c's knots: 0, its time, its last observed time
