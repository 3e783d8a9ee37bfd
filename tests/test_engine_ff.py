"""First-Fit's flat kernel (:mod:`sim.engine.ff`) takes the general kernel's decisions: the same starts,
completions, kills, attempt log, time series and float sums, interpreted and compiled, under every
termination rule, with memory, per-machine capacity and growth of its queue, heap and log; and run_kernel
gives it exactly the runs without predicate, bound, timed rule, naive rescan or checkpointing."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import sim.engine as engine
from sim import random_walk
from sim.engine import Admission, KernelResult, flat_kernel, run_kernel
from sim.engine.admission import PRED_IAS
from sim.engine.log import LOG_USEFUL
from tests.test_engine_python import _same as _same_fields


def _same(flat: KernelResult, general: KernelResult) -> None:
    """Every field equal; the flat kernel's attempt log has no work column (the general kernel's is 0
    without checkpointing)."""
    assert flat.attempt_log.shape[1] == LOG_USEFUL
    assert not general.attempt_log[:, LOG_USEFUL:].any()
    _same_fields(flat, dataclasses.replace(general, attempt_log=general.attempt_log[:, :LOG_USEFUL]))


def _instance(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    machines = int(rng.integers(1, 10))
    cores = float(rng.choice([1.0, 4.0, 8.0]))
    horizon = 20000.0
    cap = random_walk(machines, horizon, changes_per_hour=float(rng.choice([1, 8, 30])), step=0.3, seed=seed)
    mem = rng.choice([0.5, 1.0, 4.0], n) if seed % 3 == 0 else None
    return {
        "submit": np.sort(rng.choice(np.arange(0.0, 15000.0, 37.0), n)),
        "duration": rng.choice([1.0, 50.0, 300.0, 2000.0, 7000.0], n) * rng.integers(1, 3, n),
        "cores": np.minimum(rng.choice([0.5, 1.0, 2.0, 3.0, 4.0, 8.0], n), cores),
        "mem": mem,
        "cap": cap,
        "machines": machines,
        "machine_cores": cores,
        "machine_mem": 8.0 if mem is not None else 0.0,
        "horizon": horizon,
        "termination": ["lifo", "random", "lww", "lfd", "lifo-fail", "random-fail"][seed % 6],
    }


def _run(sc: dict, kind: str, per_machine: bool = False, row: np.ndarray | None = None) -> KernelResult:
    cap = sc["cap"]
    events = None
    if per_machine:  # each machine's cores follow the walk's machine count (0 or all its cores)
        ts, ms, cs = [], [], []
        for t, alive in zip(cap.time_s, cap.machines_alive, strict=True):
            for m in range(sc["machines"]):
                ts.append(t)
                ms.append(m)
                cs.append(sc["machine_cores"] if m < alive else 0.0)
        events = (np.array(ts), np.array(ms, np.int64), np.array(cs))
    return run_kernel(
        sc["submit"], sc["duration"], sc["cores"], sc["mem"], np.zeros(0) if per_machine else cap.time_s,
        np.zeros(0, np.int64) if per_machine else cap.machines_alive, sc["machines"], sc["machine_cores"],
        sc["machine_mem"], sc["horizon"], sc["termination"], 7, True, True, row=row, machine_events=events,
        engine=kind,
    )  # fmt: skip


@pytest.mark.parametrize("kind", ["python", "compiled"])
@pytest.mark.parametrize("per_machine", [False, True])
def test_flat_kernel_takes_the_general_kernels_decisions(kind: str, per_machine: bool, monkeypatch) -> None:
    for seed in range(24):
        sc = _instance(seed)
        flat = _run(sc, kind, per_machine)
        with monkeypatch.context() as mp:
            mp.setattr(engine, "flat_kernel", lambda adm, checkpointing: False)
            general = _run(sc, kind, per_machine)
        _same(flat, general)
        assert flat.violations == 0


@pytest.mark.parametrize("kind", ["python", "compiled"])
@pytest.mark.parametrize("per_machine", [False, True])
@pytest.mark.parametrize("flat", [True, False])
def test_no_row_is_the_identity(kind: str, per_machine: bool, flat: bool, monkeypatch) -> None:
    """No ``row`` (jobs in submit order: the kernel holds no identity) breaks kill ties as ``arange``."""
    monkeypatch.setattr(engine, "flat_kernel", lambda adm, checkpointing: flat)
    kills = 0
    for seed in range(12):
        sc = _instance(seed)
        a = _run(sc, kind, per_machine)
        _same_fields(a, _run(sc, kind, per_machine, np.arange(sc["submit"].size)))
        kills += a.terminations
    assert kills > 0


def test_flat_kernel_grows_its_queue_heap_and_log(monkeypatch) -> None:
    """A burst far past the queue's first size (1,024 positions), on a platform that kills often (stale
    heap entries, several attempts of a job): the flat kernel compacts and grows like the general one."""
    rng = np.random.default_rng(5)
    n = 3000
    sc = _instance(1) | {
        "submit": np.sort(rng.integers(0, 50, n).astype(float)),
        "duration": rng.choice([30.0, 600.0, 5000.0], n),
        "cores": rng.choice([1.0, 2.0], n),
        "mem": None,
        "machine_mem": 0.0,
        "machines": 6,
        "machine_cores": 4.0,
        "cap": random_walk(6, 20000.0, changes_per_hour=60.0, step=0.5, seed=3),
        "termination": "lifo",
    }
    flat = _run(sc, "python")
    monkeypatch.setattr(engine, "flat_kernel", lambda adm, checkpointing: False)
    _same(flat, _run(sc, "python"))
    assert flat.terminations > 100 and flat.attempt_log.shape[0] > 900


def test_flat_kernel_stops_for_every_array_it_grows_and_goes_on_as_the_general_one(monkeypatch) -> None:
    """The flat kernel's event loop allocates nothing: it stops at an instant whose worst case its heap, log,
    queue or time series may not hold, and goes on once they grew. Jobs killed every few minutes (about 15
    attempts a job) make each of them grow, and the run is still the general kernel's, interpreted and
    compiled."""
    import sim.engine.ff as ff

    rng = np.random.default_rng(5)
    n = 400
    sc = _instance(1) | {
        "submit": np.sort(rng.integers(0, 50, n).astype(float)),
        "duration": rng.choice([3000.0, 9000.0], n),
        "cores": rng.choice([1.0, 2.0], n),
        "mem": None,
        "machine_mem": 0.0,
        "machines": 6,
        "machine_cores": 4.0,
        "cap": random_walk(6, 40000.0, changes_per_hour=240.0, step=0.9, seed=3),
        "termination": "lifo",
        "horizon": 40000.0,
    }
    grown: dict[str, int] = {}

    def counted(name: str):
        fn = getattr(ff, name)

        def wrapper(*a):
            grown[name] = grown.get(name, 0) + 1
            return fn(*a)

        return wrapper

    with monkeypatch.context() as mp:  # the interpreted kernel calls them through the module's globals
        for name in ("_grown_heap", "_grown_log", "_q_room"):
            mp.setattr(ff, name, counted(name))
        flat = _run(sc, "python")
    assert set(grown) == {"_grown_heap", "_grown_log", "_q_room"}, grown
    assert flat.ts_time_s.size > 1024 and flat.attempt_log.shape[0] > 2 * n + 16  # both past their first size
    _same(_run(sc, "compiled"), flat)
    monkeypatch.setattr(engine, "flat_kernel", lambda adm, checkpointing: False)
    _same(flat, _run(sc, "python"))


def test_run_kernel_takes_the_flat_kernel_exactly_without_admission_machinery() -> None:
    assert flat_kernel(Admission(), False)
    assert not flat_kernel(Admission(), True)  # checkpointing
    assert not flat_kernel(Admission(full_rescan=True), False)
    assert not flat_kernel(Admission(pred=PRED_IAS), False)
    assert not flat_kernel(Admission(job_lo=np.zeros(3, np.int64), job_hi=np.full(3, 2, np.int64)), False)
