"""A small ``varcap simulate`` as a whole process loads only what it uses: no numba (interpreted engine), no
``numpy.ma`` (the per-job table is made on first read), one OpenBLAS thread; the lazy tables equal the
eager ones."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from sim import random_walk, simulate
from sim.api import kill_log
from sim.metrics import job_table

ROOT = Path(__file__).resolve().parents[1]

_CLI = (
    "import os, sys\n"
    "from pipelines.cli import main\n"
    "rc = main(['simulate', '--jobs', sys.argv[1] + '/jobs.csv', '--capacity',\n"
    "           'random-walk:changes_per_hour=2,step=0.25,seed=0', '--machines', '200', '--cores', '8',\n"
    "           '--horizon-s', '86400', '--out', sys.argv[1] + '/m.json'] + sys.argv[2:])\n"
    "print('RESULT', rc, 'numba' in sys.modules, 'numpy.ma' in sys.modules)\n"
)


def _run(tmp_path: Path, *extra: str) -> list[str]:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "VARCAP_ENGINE": "auto"}
    out = subprocess.run(
        [sys.executable, "-c", _CLI, str(tmp_path), *extra],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return next(line for line in out.stdout.splitlines() if line.startswith("RESULT")).split()[1:]


def test_small_simulate_loads_neither_numba_nor_numpy_ma(tmp_path) -> None:
    from sim.bench.scale import engine_instance

    engine_instance(200, 200)[0].write_csv(tmp_path / "jobs.csv")  # the small benchmark's jobs
    assert _run(tmp_path) == ["0", "False", "False"]
    out = tmp_path / "jobs_out.csv"
    assert _run(tmp_path, "--jobs-out", str(out)) == ["0", "False", "True"]  # asked for: made
    assert pl.read_csv(out).height == 200


@pytest.mark.parametrize(
    "command",
    [
        "['simulate', '--jobs', sys.argv[1], '--capacity', 'constant', '--machines', '2', '--cores', '4', "
        "'--horizon-s', '100']",
        "['policies']",  # every command, and what it starts (Harmony's forecasts, the study workers)
    ],
)
def test_varcap_runs_openblas_with_one_thread_unless_told(tmp_path, command) -> None:
    code = (
        "import os, sys\n"
        "from pipelines.cli import main\n"
        f"main({command})\n"
        "import numpy\n"
        "print('RESULT', os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    jobs = tmp_path / "j.csv"
    jobs.write_text("job_id,submit_s,duration_s,cores\n0,0,10,1\n")
    for given, want in ((None, "1"), ("2", "2")):
        env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"} | (
            {"OPENBLAS_NUM_THREADS": given} if given else {}
        )
        out = subprocess.run([sys.executable, "-c", code, str(jobs)], capture_output=True, text=True, env=env)
        assert out.returncode == 0, out.stderr[-500:]
        assert out.stdout.splitlines()[-1] == f"RESULT {want}"


def test_lazy_tables_equal_eager_ones_and_pickle() -> None:
    jobs = pl.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(40)],
            "submit_s": [float(30 * i) for i in range(40)],
            "duration_s": [600.0 + 17 * i for i in range(40)],
            "cores": [float(1 + i % 4) for i in range(40)],
        }
    )
    cap = random_walk(6, 4000.0, changes_per_hour=6.0, step=0.5, seed=2)
    r = simulate(jobs, cap, 6, 4.0, 4000.0, "ff")
    t = r.tables
    assert r.jobs.equals(job_table(t.output, t.job_id, t.submit_s))
    assert r.kills is not None and r.kills.equals(kill_log(t.output, t.job_id))
    assert r.metrics["terminations"] == r.kills.height > 0
    back = pickle.loads(pickle.dumps(r))
    assert back.jobs.equals(r.jobs) and back.kills is not None and back.kills.equals(r.kills)
    e = simulate(jobs, cap, 6, 4.0, 4000.0, "ff", energy=True)
    assert e.jobs.columns[: len(r.jobs.columns)] == r.jobs.columns
    assert {"energy_kwh", "gco2", "wasted_gco2"} <= set(e.jobs.columns)


def test_a_policy_resolves_alike_from_its_own_module_or_after_every_module() -> None:
    """``entry(name)`` in a fresh process (the policy's own module, its family's pattern) gives the policy a
    process with every policy module loaded gives, and a family member (``ias-h4``) loads no numba."""
    from sim.policies import available, entry, modules

    code = (
        "import sys\nfrom sim.policies import entry\n"
        "for n in sys.argv[1:]:\n"
        "    e = entry(n)\n"
        "    print('|'.join((n, type(e.policy).__name__, e.policy.name, e.label, str('numba' in sys.modules))))\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    # a name that is its own module's (``ias_general`` → ``ias-general``) is found the same way as before
    # only the policies of sim/policies/: another test in this process may have registered a toy of its own
    names = [n for n in available() if type(entry(n).policy).__module__.startswith("sim.policies.")]
    for name in [n for n in names if n.replace("-", "_") not in modules()]:
        out = (
            subprocess.run(
                [sys.executable, "-c", code, name], capture_output=True, text=True, env=env, check=True
            )
            .stdout.strip()
            .split("|")
        )
        e = entry(name)
        assert out[:4] == [name, type(e.policy).__name__, e.policy.name, e.label], name
        if name.startswith("ias-h"):
            assert out[4] == "False", name  # resolved through the IAS family: target's numba kit not loaded
