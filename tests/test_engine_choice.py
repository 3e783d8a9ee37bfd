"""The engine is chosen by the work (jobs, machines, capacity changes), and the interpreted path never
loads numba."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from sim.engine import (
    PYTHON_MACHINE_CHANGES_PER_JOB,
    PYTHON_MAX_JOBS,
    PYTHON_MAX_MACHINES,
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
            assert percentiles(x, qs) == [float(np.percentile(x, q)) for q in qs]
    assert all(np.isnan(v) for v in percentiles(np.zeros(0), (50, 99)))
    assert np.isnan(percentiles(np.array([1.0, np.nan, 3.0]), (50,))[0])
