"""The engine's two ways to run one source — compiled (numba) and interpreted (small instances) — give
identical results, the choice by size is the documented one, a stale numba cache of the split package is
dropped, and a small ``varcap simulate`` never imports numba (its start-up is why the Python path exists)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim.engine as engine
from sim import simulate
from sim.capacity.generators import random_walk
from sim.engine import (
    PYTHON_MAX_JOBS,
    PYTHON_MAX_MACHINES,
    KernelResult,
    _jit,
    choose_engine,
    run_kernel,
    use_engine,
)
from tests.test_golden import CASES, GOLDEN, SEEDS, _key, run_case
from tests.test_sim_engine import frame, per_machine_scenarios, scenarios

ROOT = Path(__file__).resolve().parents[1]


def _kernel_args(jobs, cap, machines, cores, horizon):
    s = np.array([j[0] for j in jobs], float)
    o = np.argsort(s, kind="stable")
    d = np.array([j[1] for j in jobs], float)[o]
    c = np.array([j[2] for j in jobs], float)[o]
    ts = sorted(cap)
    return (s[o], d, c, None, np.array(ts, float), np.array([cap[t] for t in ts]), machines, float(cores), 0.0,
            float(horizon))  # fmt: skip


def _same(a: KernelResult, b: KernelResult) -> None:
    for f in dataclasses.fields(KernelResult):
        if f.name == "engine":
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), f.name
        else:
            assert x == y, f.name


@pytest.mark.parametrize("termination", ["lifo", "random", "lww", "lfd-fail"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenarios(), seed=st.integers(0, 3))
def test_compiled_and_interpreted_engines_agree(sc, termination, seed) -> None:
    """Every result field equal (tests.test_sim_engine checks the small-instance engine, the interpreted
    one, against the brute-force reference; so this ties the compiled one to it too)."""
    machines, cores, horizon, jobs, cap = sc
    args = _kernel_args(jobs, cap, machines, cores, horizon)
    kw = {"termination": termination, "seed": seed, "record_ts": True, "check": True}
    a = run_kernel(*args, engine="compiled", **kw)
    b = run_kernel(*args, engine="python", **kw)
    assert (a.engine, b.engine) == ("compiled", "python")
    _same(a, b)
    assert a.violations == 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=per_machine_scenarios())
def test_engines_agree_on_per_machine_capacity(sc) -> None:
    machines, max_cores, horizon, jobs, events = sc
    rows = [(t, m, c) for t, evs in events.items() for m, c in evs]
    t, m, c = (np.array(x, float) for x in zip(*rows, strict=True))
    args = _kernel_args(jobs, {0: 0}, machines, max_cores, horizon)
    empty = (np.zeros(0), np.zeros(0, np.int64))
    a, b = (
        run_kernel(
            *args[:4], *empty, *args[6:], check=True, machine_events=(t, m.astype(np.int64), c), engine=e
        )
        for e in ("compiled", "python")
    )
    _same(a, b)


@pytest.mark.parametrize("policy", ["ias", "ias-h1+h3", "oracle", "ff"])
def test_policies_agree_across_engines(policy) -> None:
    rng = np.random.default_rng(3)
    n, horizon = 150, 24 * 3600.0
    jobs = pl.DataFrame(
        {
            "job_id": np.arange(n),
            "submit_s": np.sort(rng.uniform(0, 0.8 * horizon, n)).round(-1),
            "duration_s": np.minimum((rng.pareto(1.3, n) + 1) * 1200, 0.5 * horizon).round(),
            "cores": rng.choice([0.5, 1.0, 2.0, 4.0], n),
        }
    )
    cap = random_walk(6, horizon, changes_per_hour=3.0, step=0.25, seed=1)
    runs = []
    for kind in ("compiled", "python"):
        with use_engine(kind):
            runs.append(simulate(jobs, cap, 6, 8.0, horizon, policy, seed=1))
    a, b = runs
    assert a.metrics == b.metrics or all(
        (x == y) or (x != x and y != y) for x, y in zip(a.metrics.values(), b.metrics.values(), strict=True)
    )
    assert a.jobs.equals(b.jobs)


def test_queue_growth_from_a_tiny_queue_changes_nothing(monkeypatch) -> None:
    """A queue that starts at 16 positions compacts and grows many times (each a global rescan): the
    results equal those of the default start."""
    rng = np.random.default_rng(0)
    n, horizon = 3000, 48 * 3600.0
    jobs = pl.DataFrame(
        {
            "job_id": np.arange(n),
            "submit_s": np.sort(rng.uniform(0, 0.5 * horizon, n)).round(),
            "duration_s": (rng.pareto(1.5, n) + 1) * 900,
            "cores": rng.choice([1.0, 2.0, 3.0], n),
        }
    )
    cap = random_walk(8, horizon, changes_per_hour=4.0, step=0.25, seed=2)
    for policy in ("ff", "ias"):
        base = simulate(jobs, cap, 8, 8.0, horizon, policy, seed=0)
        with monkeypatch.context() as mp:
            mp.setattr(engine, "QUEUE_MIN_SIZE", 16)
            small = simulate(jobs, cap, 8, 8.0, horizon, policy, seed=0)
        assert base.jobs.equals(small.jobs) and base.metrics == small.metrics, policy


def test_engine_choice_by_size_and_override() -> None:
    assert choose_engine(PYTHON_MAX_JOBS, 0, 8, loaded=False) == "python"
    assert choose_engine(PYTHON_MAX_JOBS + 1, 0, 8, loaded=False) == "compiled"
    assert choose_engine(10, 0, PYTHON_MAX_MACHINES + 1, loaded=False) == "compiled"
    assert choose_engine(10, 2**32, 8, loaded=False) == "compiled"  # outside numba's 32-bit seed
    assert choose_engine(10, 0, 8, loaded=True) == "compiled"  # loaded already: the faster one
    with use_engine("compiled"):
        assert choose_engine(10, 0, loaded=False) == "compiled"
        with use_engine("python"):
            assert choose_engine(10**6, 0) == "python"
    with pytest.raises(ValueError, match="engine must be"):
        use_engine("gpu").__enter__()
    sc = (2, 4, 30, [(0, 5, 2), (1, 8, 4), (3, 2, 1)], {0: 2, 4: 1, 9: 2})
    r = run_kernel(*_kernel_args(*[sc[i] for i in (3, 4, 0, 1, 2)]))
    assert r.engine == choose_engine(3, 0, 2)


def test_engine_choice_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("VARCAP_ENGINE", "compiled")
    assert choose_engine(10, 0, 2, loaded=False) == "compiled"
    monkeypatch.setenv("VARCAP_ENGINE", "python")
    assert choose_engine(10**6, 0, 500, loaded=True) == "python"
    monkeypatch.setenv("VARCAP_ENGINE", "auto")
    assert choose_engine(10, 0, 2, loaded=False) == "python"
    monkeypatch.setenv("VARCAP_ENGINE", "gpu")
    with pytest.raises(ValueError, match="VARCAP_ENGINE"):
        choose_engine(10, 0)
    with use_engine("python"):  # the block wins over the environment
        assert choose_engine(10, 0) == "python"


COMPILED_CASES = [c for c in CASES if c[1] in ("ff", "ff-unaware", "oracle") or c[1].startswith("ias")]


@pytest.mark.parametrize("case", [c for c in COMPILED_CASES if "acq" not in c[0]], ids=lambda c: c[0])
@pytest.mark.parametrize("kind", ["compiled", "python"])
def test_golden_results_from_either_engine(case, kind) -> None:
    """tests/golden_sim.json, bit for bit, from each engine forced (sizes would pick one of them)."""
    want = json.loads(GOLDEN.read_text())
    for s in SEEDS:
        with use_engine(kind):
            got = json.loads(json.dumps(run_case(*case, seed=s)))
        assert got["metrics"] == want[_key(case[0], s)]["metrics"], _key(case[0], s)
        assert got["jobs_sha256"] == want[_key(case[0], s)]["jobs_sha256"], _key(case[0], s)


def test_interpreted_engine_leaves_numpys_global_generator_alone() -> None:
    np.random.seed(123)
    want = np.random.random()
    np.random.seed(123)
    run_kernel(*_kernel_args([(0, 5, 1), (1, 4, 1)], {0: 1, 2: 0, 3: 1}, 1, 1, 20), termination="random",
               engine="python")  # fmt: skip
    assert np.random.random() == want


def test_stale_engine_cache_files_are_deleted(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(_jit, "cache_dirs", lambda: [tmp_path])
    stale = tmp_path / "kernel._kernel-470.py311.nbi"
    other = tmp_path / "harvest.f-1.py311.nbi"
    stale.write_text("x")
    other.write_text("x")
    (tmp_path / "varcap_engine.sha256").write_text("not the sources")
    _jit._invalidate_stale_cache()
    assert not stale.exists() and other.exists()
    assert (tmp_path / "varcap_engine.sha256").read_text() == _jit.sources_hash()
    stale.write_text("x")  # current stamp: kept
    _jit._invalidate_stale_cache()
    assert stale.exists()


def test_small_simulate_does_not_import_numba(tmp_path) -> None:
    """``varcap simulate`` on 10 jobs runs interpreted: numba (≈1 s of start-up) is never imported."""
    jobs = tmp_path / "jobs.csv"
    frame([(i * 60, 300, 1 + i % 3) for i in range(10)]).write_csv(jobs)
    code = (
        "import sys; from pipelines.cli import main; "
        f"sys.argv = ['varcap', 'simulate', '--jobs', {str(jobs)!r}, '--capacity', "
        "'random-walk:changes_per_hour=1,step=0.15,seed=0', '--machines', '4', '--cores', '8', "
        "'--horizon-s', '7200']; rc = main(); "
        "print('NUMBA' if 'numba' in sys.modules else 'NO-NUMBA'); sys.exit(rc)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ},
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "NO-NUMBA"
    assert "goodput" in out.stdout


def test_lazy_engine_function_rebinds_its_caller_to_the_compiled_one() -> None:
    """``from sim.engine import _qt_set`` (sim.harvest.cluster does this) costs no numba import; the first call
    compiles and rebinds the caller's name, so later calls go straight to numba."""
    mod = type(sys)("lazy_user")
    exec(
        "import sim.engine\n_qt_set = sim.engine._Lazy('_qt_set')\n"
        "def put(tree, i, v):\n    _qt_set(tree, 4, i, v)\n",
        mod.__dict__,
    )
    assert type(mod._qt_set).__name__ == "_Lazy"
    a, b = np.full(8, np.inf), np.full(8, np.inf)
    mod.put(a, 2, 3.0)
    mod.put(a, 1, 5.0)
    assert mod._qt_set is _jit.compiled()["_qt_set"]
    _jit.plain("_qt_set")(b, 4, 2, 3.0)
    _jit.plain("_qt_set")(b, 4, 1, 5.0)
    assert np.array_equal(a, b) and a[1] == 3.0


def test_hot_admission_helpers_are_compiled_without_reference_counting() -> None:
    """The pass's per-node and per-machine helpers are compiled uncounted (``_nrt=False``: no atomic count
    per array at each call); every other engine function states counting, so numba's own helpers do not
    inherit an uncounted compilation from whichever caller compiled them first."""
    disp = _jit.compiled()
    for name in ("_q_first_ias", "_q_node_ok", "_dirty_any", "_class_bounds", "_admit_flat", "_wakeups"):
        assert disp[name].targetoptions["_nrt"] is False, name
    for name in ("_kernel", "_ff_kernel", "_grown_heap", "heap_room", "_terminate"):
        assert disp[name].targetoptions["_nrt"] is True, name
    with pytest.raises(ValueError, match="inlined"):
        _jit.kernel_fn(inline=True, counted=False)
