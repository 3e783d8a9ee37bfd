"""The discrete-event engine: First-Fit family under variable capacity, compiled with numba.

Semantics (pinned; see the README "Simulator semantics" section):

* Machines ``0..M-1`` (lower index = safer), each with ``machine_cores`` cores (and optionally
  ``machine_mem_gb``). The capacity trace gives the number of machines alive; which machines turn off on a
  drop is the termination policy's choice (``lifo``: highest alive index; ``random``; ``lww``: least
  wasted work; ``lfd``: least fraction done). On a rise, the lowest-index off machines turn on.
* Time runs over ``[0, horizon)``; nothing happens at or after the horizon. At each instant ``t``:
  1. jobs ending at ``t`` complete and free their cores;
  2. a capacity change at ``t`` takes effect; jobs on machines turning off are terminated (wasted work
     ``cores * (t - start)``) and appended to the back of the queue, earlier start first, then input order;
  3. jobs submitted at ``t`` are appended (input order);
  4. one pass walks the queue front to back and starts each job on the lowest-index alive machine with
     enough free cores (and memory) that the admission rule allows; jobs that do not fit keep their place
     (no head-of-line blocking).
* A restarted job runs its full duration again — unless checkpointing is on (:mod:`sim.checkpoint`): then it
  resumes from its last committed checkpoint after a recovery time, and each attempt's wall length includes
  its checkpoint writes.

Speed: a max segment tree over machines finds the first machine with ``free >= c`` in O(log M); a min
segment tree over queue positions finds the next queued job whose demand is at most the largest free
block in O(log Q). A pass therefore costs O((placements + 1) log) instead of a queue rescan, and a pass
after an instant that freed nothing only looks at the jobs appended in that instant (nothing older can
fit, since free capacity only shrank).

Modules: ``kit`` (the compiled-loop kit: event heap, pairwise sum, attempt-log append), ``trees``
(machine/queue segment trees), ``queue`` (queue classes and compaction), ``log`` (attempt log), ``admission``
(admission predicates, the :data:`RULES` a predicate declares, :class:`Admission`), ``kernel`` (the phase functions and ``_kernel``), ``ff``
(First-Fit's flat kernel: the same results without the admission machinery), ``_jit`` (lazy
compilation). Two ways to run the same code: compiled (numba, ``cache=True``) or interpreted (the plain
functions, for small instances: no numba import, no cache load). :func:`run_kernel` picks by size
(:func:`choose_engine`); both give identical results (``tests/test_engine_python.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from sim.engine import _jit
from sim.engine._jit import compiled, plain
from sim.engine.admission import (
    BOUND_INTERVAL_END,
    BOUND_NONE,
    BOUND_SURVIVAL,
    H2_FLAG,
    H3_FLAG,
    H4_FLAG,
    PRED_IAS,
    PRED_NONE,
    PRED_ORACLE,
    RULES,
    Admission,
    Rule,
    _arr,
)
from sim.engine.kernel import N_ACC
from sim.engine.log import LOG_END, LOG_JOB, LOG_MACHINE, LOG_OUTCOME, LOG_START
from sim.engine.queue import CLS_H2, CLS_H4, CLS_L, CLS_U, N_CLASSES, QUEUE_MIN_SIZE
from sim.engine.trees import pow2

__all__ = [
    "BOUND_INTERVAL_END",
    "BOUND_NONE",
    "BOUND_SURVIVAL",
    "CLS_H2",
    "CLS_H4",
    "CLS_U",
    "H2_FLAG",
    "H3_FLAG",
    "H4_FLAG",
    "LOG_END",
    "LOG_JOB",
    "LOG_MACHINE",
    "LOG_OUTCOME",
    "LOG_START",
    "PRED_IAS",
    "PRED_NONE",
    "PRED_ORACLE",
    "PYTHON_MAX_JOBS",
    "PYTHON_MACHINE_CHANGES_PER_JOB",
    "PYTHON_MAX_MACHINES",
    "PYTHON_UNTIMED_MACHINE_CHANGES_PER_JOB",
    "RULES",
    "TERMINATION_CODES",
    "Admission",
    "KernelResult",
    "Rule",
    "flat_kernel",
    "python_work",
    "run_kernel",
    "use_engine",
]

INF = np.inf

# ``<rule>-fail``: the victim is chosen by ``<rule>`` but a killed job fails for good instead of going back
# to the queue (paper 003 §4.2: a job is either completed or failed)
TERMINATION_CODES = {
    "lifo": 0,
    "random": 1,
    "lww": 2,
    "lfd": 3,
    "lifo-fail": 4,
    "random-fail": 5,
    "lww-fail": 6,
    "lfd-fail": 7,
}

# the interpreted engine runs an instance whose work (:func:`python_work`, in job-equivalents) is at most
# PYTHON_MAX_JOBS when the compiled engine is not loaded yet. The job cut-over is the measured break-even
# (`python -m sim.bench engines`, CPU s, 2026-11-24, load ~3): numba's start in a fresh process (import, CPU
# target, cache load) is 0.52 s; interpreted equals start + compiled at 13,834 jobs on FF, 5,461 on IAS, 6,145
# on the Oracle; the rule does not know the policy, so the cut-over is the smallest, rounded down. Machines
# count through the per-instant loops over them at a capacity change (turning machines on, resetting them
# after kills): interpreted, a machine costs ~0.6 µs a change against ~45 µs a job (FF, 2026-11-27, load
# ~13: 200 jobs on 5,000 machines with 48 changes 0.17 CPU s, on 200 machines 0.014), so a machine-change
# is 1/PYTHON_MACHINE_CHANGES_PER_JOB of a job. Beyond PYTHON_MAX_MACHINES machines the compiled engine
# runs whatever the work (the set-up per machine and IAS's per-machine wake-ups). That holds for timed
# admission rules (IAS: its wake-ups visit machines every instant, 200 jobs on 5,000 machines 0.47 CPU s
# interpreted, 2026-11-28) and for per-machine capacity events. An untimed rule's (First-Fit, the Oracle)
# only per-machine work is the capacity change itself, which turns machines on and off in whole-array
# steps: ~16 ns a machine-change against ~60 µs a job (FF, 2026-11-28, load ~6: 200 jobs on 200,000
# machines under 48 changes 0.17 CPU s, on 200 machines 0.017; 5,000 jobs on 200 machines 0.31), so a
# machine-change is 1/PYTHON_UNTIMED_MACHINE_CHANGES_PER_JOB of a job (rounded down from ~3,800), and no
# machine count is too many by itself.
PYTHON_MAX_JOBS = 5000
PYTHON_MAX_MACHINES = 8192
PYTHON_MACHINE_CHANGES_PER_JOB = 75
PYTHON_UNTIMED_MACHINE_CHANGES_PER_JOB = 2000
_FORCED: list[str] = []  # use_engine() stack


@contextmanager
def use_engine(kind: str) -> Iterator[None]:
    """Force ``kind`` (``compiled`` or ``python``) for every :func:`run_kernel` inside the block."""
    if kind not in ("compiled", "python"):
        raise ValueError(f"engine must be 'compiled' or 'python', got {kind!r}")
    _FORCED.append(kind)
    try:
        yield
    finally:
        _FORCED.pop()


def python_work(
    n_jobs: int, machines: int = 1, cap_points: int = 0, timed: bool = True, machine_events: int = 0
) -> float:
    """The interpreted engine's work on ``n_jobs`` jobs and ``machines`` machines under a machines-alive
    trace of ``cap_points`` changes and ``machine_events`` per-machine capacity events, in job-equivalents
    (what :func:`choose_engine` compares with :data:`PYTHON_MAX_JOBS`): a trace's machine-change weighs
    1/:data:`PYTHON_MACHINE_CHANGES_PER_JOB` of a job under a ``timed`` admission rule (IAS; the
    conservative default), 1/:data:`PYTHON_UNTIMED_MACHINE_CHANGES_PER_JOB` under an untimed one."""
    per_job = PYTHON_MACHINE_CHANGES_PER_JOB if timed else PYTHON_UNTIMED_MACHINE_CHANGES_PER_JOB
    return (
        float(n_jobs)
        + float(machines) * float(cap_points) / per_job
        + float(machines) * float(machine_events) / PYTHON_MACHINE_CHANGES_PER_JOB
    )


def choose_engine(
    n_jobs: int,
    seed: int,
    machines: int = 1,
    loaded: bool | None = None,
    cap_points: int = 0,
    timed: bool = True,
    machine_events: int = 0,
) -> str:
    """``compiled`` once it is loaded in this process (``loaded``; default: whether it is), else ``python``
    when the work (:func:`python_work` of the jobs, machines, ``cap_points`` capacity changes and
    ``machine_events`` per-machine events under a ``timed`` admission rule or not) is at most
    :data:`PYTHON_MAX_JOBS` — on at most :data:`PYTHON_MAX_MACHINES` machines for a timed rule or
    per-machine events — and the seed within numba's 32-bit range, else ``compiled``; :func:`use_engine`,
    then ``$VARCAP_ENGINE`` (``auto``, ``compiled``, ``python``) override — a long-lived process running
    many small instances (a sweep worker) is faster compiled, since numba's start is paid once. Both give
    identical results."""
    if _FORCED:
        return _FORCED[-1]
    env = os.environ.get("VARCAP_ENGINE", "auto")
    if env in ("compiled", "python"):
        return env
    if env != "auto":
        raise ValueError(f"VARCAP_ENGINE must be auto, compiled or python, got {env!r}")
    if loaded is None:
        loaded = _jit.is_compiled()
    small = (
        python_work(n_jobs, machines, cap_points, timed, machine_events) <= PYTHON_MAX_JOBS
        and (machines <= PYTHON_MAX_MACHINES or not (timed or machine_events))
        and 0 <= seed < 2**32
    )
    return "python" if small and not loaded else "compiled"


@dataclass(frozen=True)
class KernelResult:
    """What one kernel run returns (engine index order; the caller reorders to input rows)."""

    first_start_s: np.ndarray  # -1: never started
    end_s: np.ndarray  # -1: not completed
    attempts: np.ndarray
    terminations_per_job: np.ndarray
    status: np.ndarray  # sim.metrics QUEUED/RUNNING/COMPLETED/FAILED
    completed_core_s: float
    wasted_core_s: float
    inflight_core_s: float
    available_core_s: float
    used_core_s: float
    terminations: int
    aborted_s: float
    violations: int
    events: int
    ts_time_s: np.ndarray  # per instant (record_ts): time, alive cores, used cores
    ts_alive_cores: np.ndarray
    ts_used_cores: np.ndarray
    attempt_log: np.ndarray  # rows (job, start, end, outcome, machine): see sim.engine.log
    engine: str  # "compiled" or "python"


def run_kernel(
    submit: np.ndarray,
    duration: np.ndarray,
    cores: np.ndarray,
    mem: np.ndarray | None,
    cap_t: np.ndarray,
    cap_n: np.ndarray,
    n_machines: int,
    machine_cores: float,
    machine_mem_gb: float,
    horizon_s: float,
    termination: str = "lifo",
    seed: int = 0,
    record_ts: bool = False,
    check: bool = False,
    row: np.ndarray | None = None,
    admission: Admission | None = None,
    machine_events: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    engine: str | None = None,
    checkpoint: tuple[float, float, float] | np.ndarray | None = None,
) -> KernelResult:
    """Run the engine on jobs sorted by submit time (ties in input order). See the module doc.

    ``row``: each job's input row (None: its index); ``engine``: ``compiled``, ``python`` or None
    (:func:`choose_engine`); ``checkpoint``: (τ, δ, R) seconds of :mod:`sim.checkpoint` for every job, or one
    row per job in engine order (None: off). Raises ValueError for an unknown termination policy, admission
    predicate or engine."""
    if termination not in TERMINATION_CODES:
        raise ValueError(
            f"unknown termination policy {termination!r}; choose from {sorted(TERMINATION_CODES)}"
        )
    from sim.validate import check_seed

    check_seed(seed)  # numba's generator takes 32 bits: a TypingError deep in the kernel otherwise
    n = len(submit)
    adm = admission or Admission()
    rule = adm.rule
    events = 0 if machine_events is None else len(machine_events[0])
    kind = engine or choose_engine(
        n, int(seed), int(n_machines), cap_points=len(cap_t), timed=rule.timed, machine_events=events
    )
    if kind not in ("compiled", "python"):
        raise ValueError(f"engine must be 'compiled' or 'python', got {kind!r}")
    use_mem = mem is not None
    dur = _arr(duration, np.float64)
    ck_rows = _checkpoint_rows(checkpoint, n)
    flat = flat_kernel(adm, ck_rows.shape[0] > 0)
    if flat:  # every job on every machine: no per-job ranges (16 bytes a job)
        job_lo, job_hi = np.zeros(0, np.int64), np.zeros(0, np.int64)
    else:
        job_lo, job_hi = adm.job_ranges(n, int(n_machines))
    inputs = adm.inputs(int(n_machines))
    adm_tuple = (adm.flags(n), *inputs[:3], np.zeros(int(n_machines)), *inputs[3:], adm.thresholds(n))
    args = (
        # no row: each job's index is its row (the kernel does not hold the identity)
        _arr(row if row is not None else np.zeros(0, np.int64), np.int64),
        _arr(submit, np.float64),
        dur,
        _arr(cores, np.float64),
        _arr(mem if use_mem else np.zeros(n), np.float64),
        use_mem,
        _arr(cap_t, np.float64),
        _arr(cap_n, np.int64),
        int(n_machines),
        pow2(int(n_machines)),
        float(machine_cores),
        float(machine_mem_gb if use_mem else 0.0),
        float(horizon_s),
        TERMINATION_CODES[termination],
        int(seed),
        QUEUE_MIN_SIZE,
        bool(record_ts),
        bool(check),
        int(adm.pred),
        int(rule.bound),
        bool(rule.timed),
        job_lo,
        job_hi,
        adm_tuple,
        bool(adm.full_rescan),
        bool(adm.frontier),
        *(
            _flat_classes(n, int(n_machines))
            if flat
            else _classes(adm, dur, int(n_machines), checkpoint is not None)
        ),
        *_machine_event_arrays(machine_events),
        ck_rows,
        # the kernel's per-job termination counts: numpy's zeros take memory only where a job is killed (the
        # kernel's own np.zeros writes every page: 8 bytes a job of the run's peak memory)
        np.zeros(n, np.int64),
    )
    name = "_ff_kernel" if flat else "_kernel"
    if kind == "compiled":
        out = compiled()[name](*args)
    else:
        state = np.random.get_state()  # the interpreted kernel seeds numpy's global generator
        try:
            out = plain(name)(*args)
        finally:
            np.random.set_state(state)
    fs, end, att, terms, status, acc, ts, alog = out
    assert acc.shape[0] == N_ACC
    return KernelResult(
        fs,
        end,
        att,
        terms,
        status,
        float(acc[0]),
        float(acc[1]),
        float(acc[2]),
        float(acc[3]),
        float(acc[4]),
        int(acc[5]),
        float(acc[6]),
        int(acc[7]),
        int(acc[8]),
        np.ascontiguousarray(ts[0]),
        np.ascontiguousarray(ts[1]),
        np.ascontiguousarray(ts[2]),
        alog,
        kind,
    )


def flat_kernel(adm: Admission, checkpointing: bool) -> bool:
    """Whether a run takes First-Fit's flat kernel (:mod:`sim.engine.ff`, the same results as the general
    one): no admission predicate, no per-job machine range, no time bound, no timed rule, no naive rescan,
    no checkpointing."""
    rule = adm.rule
    return (
        adm.pred == PRED_NONE
        and adm.job_lo is None
        and adm.job_hi is None
        and rule.bound == BOUND_NONE
        and not rule.timed
        and not adm.full_rescan
        and not checkpointing
    )


def _flat_classes(n: int, machines: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_classes` of a flat-kernel run (every job class U on every machine), without building the
    per-job ranges it would derive them from."""
    lo, hi = np.zeros(N_CLASSES, np.int64), np.zeros(N_CLASSES, np.int64)
    if n:
        hi[CLS_U] = machines
    return np.zeros(n, np.int8), lo, hi


def _classes(
    adm: Admission, dur: np.ndarray, machines: int, checkpointing: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The admission's pruning classes; with checkpointing, jobs of the time-bound classes (H2, H4, L) are
    pruned by cores only (class U): a restart changes a job's attempt length, and with it which test the
    predicate applies (H2 for attempts no longer than the period), so a class fixed at the start could
    prune a job the predicate would admit."""
    cls, lo, hi = adm.classes(dur, machines)
    if not checkpointing:
        return cls, lo, hi
    timed = (cls == CLS_H2) | (cls == CLS_H4) | (cls == CLS_L)
    if timed.any():
        cls = cls.copy()
        cls[timed] = CLS_U
        lo, hi = lo.copy(), hi.copy()
        jl, jh = adm.job_ranges(len(dur), machines)
        u = cls == CLS_U
        lo[CLS_U], hi[CLS_U] = int(np.min(jl[u])), int(np.max(jh[u]))
    return cls, lo, hi


def _checkpoint_rows(ck: tuple[float, float, float] | np.ndarray | None, n: int) -> np.ndarray:
    """The kernel's per-job (τ, δ, R) rows: none when off (no job has τ or R > 0), one per job otherwise
    (a run-wide triple is repeated)."""
    a = np.zeros((0, 3)) if ck is None else np.asarray(ck, np.float64)
    if not (np.any(a[..., 0] > 0) or np.any(a[..., 2] > 0)):
        return np.zeros((0, 3), np.float64)
    out = np.empty((n, 3), np.float64)  # always a fresh writable C array: one kernel signature
    out[:] = a
    return out


def _machine_event_arrays(ev: tuple | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if ev is None:
        return np.zeros(0), np.zeros(0, np.int64), np.zeros(0)
    t, m, c = (np.asarray(x) for x in ev)
    order = np.lexsort((m, t))  # time, then machine index
    return (
        _arr(t[order], np.float64),
        _arr(m[order], np.int64),
        _arr(c[order], np.float64),
    )


class _Lazy:
    """An engine function imported by name from outside the package before anything was compiled: calls
    (and attribute reads) go to the compiled version, compiled on first use; importing it costs nothing.
    The first call rebinds the caller's module-level name to the compiled function."""

    __slots__ = ("_f", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._f: Any = None

    def _resolve(self) -> Any:
        if self._f is None:
            self._f = compiled()[self._name]
        return self._f

    def __call__(self, *args: Any) -> Any:
        f = self._f
        if f is None:
            f = self._resolve()
            # the calling module's globals that hold this handle get the compiled function itself, so its
            # later calls skip this wrapper (~0.3 µs a call in sim.harvest.cluster's loops)
            caller = sys._getframe(1).f_globals
            for k, v in list(caller.items()):
                if v is self:
                    caller[k] = f
        return f(*args)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._resolve(), attr)


def __getattr__(name: str) -> Any:
    """Engine functions by name (``_kernel``, ``_qt_set``, …): the compiled versions, or a :class:`_Lazy`
    handle to them while nothing is compiled yet (so importing one does not import numba)."""
    if name not in _jit._PLAIN:
        raise AttributeError(f"module 'sim.engine' has no attribute {name!r}")
    return compiled()[name] if _jit.is_compiled() else _Lazy(name)
