"""The engine is chosen by the work (jobs, machines, capacity changes), and the interpreted path never
loads numba."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sim.engine import (
    PYTHON_MACHINE_CHANGES_PER_JOB,
    PYTHON_MAX_JOBS,
    PYTHON_MAX_MACHINES,
    PYTHON_UNTIMED_MACHINE_CHANGES_PER_JOB,
    choose_engine,
    python_work,
)
from sim.metrics import percentiles

ROOT = Path(__file__).resolve().parents[1]


def test_many_machines_few_jobs_run_interpreted() -> None:
    assert choose_engine(200, 0, 200, loaded=False, cap_points=48) == "python"
    assert choose_engine(200, 0, 1000, loaded=False, cap_points=48) == "python"


def test_work_of_machine_changes_counts() -> None:
    # 200 jobs on 5,000 machines under 2,000 changes: 133,533 job-equivalents, compiled
    assert python_work(200, 5000, 2000) == 200 + 5000 * 2000 / PYTHON_MACHINE_CHANGES_PER_JOB
    assert choose_engine(200, 0, 5000, loaded=False, cap_points=2000) == "compiled"
    # at the limit of work exactly: interpreted; one more job: compiled
    changes = PYTHON_MACHINE_CHANGES_PER_JOB
    assert choose_engine(PYTHON_MAX_JOBS - 100, 0, 100, loaded=False, cap_points=changes) == "python"
    assert choose_engine(PYTHON_MAX_JOBS - 99, 0, 100, loaded=False, cap_points=changes) == "compiled"
    assert choose_engine(10, 0, PYTHON_MAX_MACHINES + 1, loaded=False, cap_points=0) == "compiled"


def test_small_run_on_many_machines_does_not_import_numba() -> None:
    code = (
        "import sys\n"
        "from sim import simulate\n"
        "from sim.bench.scale import engine_instance\n"
        "jobs, cap, h = engine_instance(200, 200)\n"
        "r = simulate(jobs, cap, 200, 8.0, h, 'ff')\n"
        "assert r.metrics['completed'] > 0\n"
        "print('numba' in sys.modules)\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "VARCAP_ENGINE": "auto"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


def test_percentiles_equal_numpys_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    qs = (0, 50, 90, 95, 99, 100)
    for n in (1, 2, 3, 7, 100, 1001):
        for x in (rng.uniform(0, 1e5, n), rng.integers(0, 9, n).astype(float), rng.exponential(50.0, n)):
            want = [float(np.percentile(x, q)) for q in qs]
            assert percentiles(x, qs) == want
            y = x.copy()  # in place: the same values, y partitioned (its values kept)
            assert percentiles(y, qs, overwrite=True) == want and sorted(y) == sorted(x)
    assert all(np.isnan(v) for v in percentiles(np.zeros(0), (50, 99)))
    assert np.isnan(percentiles(np.array([1.0, np.nan, 3.0]), (50,))[0])


def test_untimed_rules_run_interpreted_whatever_the_machine_count() -> None:
    # First-Fit's only per-machine work is the capacity change (whole-array steps): 200 jobs under a day's
    # random walk on 100,000 machines is small; under IAS (timed: wake-ups visit machines) it is not
    assert choose_engine(200, 0, 100_000, loaded=False, cap_points=48, timed=False) == "python"
    assert choose_engine(200, 0, 100_000, loaded=False, cap_points=48, timed=True) == "compiled"
    assert choose_engine(200, 0, 5000, loaded=False, cap_points=48, timed=True) == "python"
    assert choose_engine(10, 0, PYTHON_MAX_MACHINES + 1, loaded=False, cap_points=1, timed=False) == "python"
    # per-machine capacity events keep the conservative weight and the machine cap
    assert python_work(200, 5000, 0, False, 48) == python_work(200, 5000, 48, True)
    assert (
        choose_engine(10, 0, PYTHON_MAX_MACHINES + 1, loaded=False, timed=False, machine_events=1)
        == "compiled"
    )
    # the weights: a trace's machine-change is cheaper under an untimed rule
    assert python_work(0, 2000, 1, timed=False) == 2000 / PYTHON_UNTIMED_MACHINE_CHANGES_PER_JOB
    assert PYTHON_UNTIMED_MACHINE_CHANGES_PER_JOB > PYTHON_MACHINE_CHANGES_PER_JOB


def test_varcap_simulate_picks_the_engine_by_the_policys_rule() -> None:
    """engine_for (what ``varcap simulate`` asks before warming numba) follows each policy's rule, in a
    process where nothing is compiled yet."""
    code = (
        "from sim import random_walk\n"
        "from sim.api import engine_for\n"
        "cap = random_walk(20000, 86400.0, changes_per_hour=2.0, step=0.25, seed=0)\n"
        "print(' '.join(engine_for(p, 200, cap, 20000) for p in ('ff', 'oracle', 'ias', 'ias-general')))\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "VARCAP_ENGINE": "auto"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["python", "python", "compiled", "compiled"]


def test_timed_admission_fact_matches_each_policys_declared_rule() -> None:
    import polars as pl

    from sim import random_walk
    from sim.engine import RULES
    from sim.policies import entries, parse_params
    from sim.problem import Compiled, Platform, Problem

    jobs = pl.DataFrame(
        {
            "job_id": [0, 1, 2],
            "submit_s": [0.0, 60.0, 600.0],
            "duration_s": [300.0, 900.0, 60.0],
            "cores": [1.0] * 3,
        }
    )
    cap = random_walk(4, 7200.0, changes_per_hour=2.0, step=0.25, seed=0)
    problem = Problem.build(jobs, Platform(4, 4.0, None), cap, 7200.0)
    seen = set()
    for name, e in entries():
        pol = e.policy
        if pol is None or e.inputs:  # a policy reading a signal besides jobs and capacity: not declared here
            continue
        decl = pol.declare(problem, parse_params(pol, {}), 0)
        if isinstance(decl, Compiled):
            timed = decl.admission is not None and RULES[decl.admission.pred].timed
            assert bool(getattr(pol, "timed_admission", True)) == timed, name
            seen.add(timed)
    assert seen == {True, False}  # both kinds were checked


@pytest.mark.parametrize(
    ("policy", "settings"),
    [
        ("ff", {"termination": "lifo"}),
        ("ff", {"termination": "random"}),
        ("ff", {"termination": "lww"}),
        ("ff", {"termination": "lfd"}),
        ("ff", {"termination": "lifo-fail"}),
        ("oracle", {}),
        ("ias", {}),
    ],
)
def test_engines_agree_when_changes_turn_hundreds_of_machines_on_and_off(policy, settings) -> None:
    """A capacity change turns machines on and off in whole-array steps (sim.engine.kernel): on 300 machines
    under a random walk of ±50 % steps, loaded with long jobs of 2.5 to 8 cores, both engines give the
    same per-job results and metrics, and the kernel's invariant checks find nothing."""
    import polars as pl

    from sim import random_walk, simulate
    from sim.engine import use_engine

    rng = np.random.default_rng(5)
    n, horizon, machines = 2500, 86400.0, 300
    jobs = pl.DataFrame(
        {
            "job_id": np.arange(n),
            "submit_s": np.sort(rng.uniform(0, 0.7 * horizon, n)).round(),
            "duration_s": np.minimum((rng.pareto(1.2, n) + 1) * 7200, 0.4 * horizon).round(),
            "cores": rng.choice([2.5, 4.0, 7.0, 8.0], n),
        }
    )
    cap = random_walk(machines, horizon, changes_per_hour=3.0, step=0.5, seed=4)
    runs = []
    for kind in ("compiled", "python"):
        with use_engine(kind):
            runs.append(
                simulate(jobs, cap, machines, 8.0, horizon, policy, settings, seed=2, check_invariants=True)
            )
    a, b = runs
    assert a.invariant_violations == b.invariant_violations == 0
    assert a.jobs.equals(b.jobs)
    assert all(
        (x == y) or (x != x and y != y) for x, y in zip(a.metrics.values(), b.metrics.values(), strict=True)
    )
    assert a.metrics["terminations"] > 0 or policy != "ff"  # First-Fit loses jobs to the drops
