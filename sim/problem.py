"""A simulation problem (jobs + platform + capacity) and the shared First-Fit runner."""

from __future__ import annotations

import ctypes
import functools
import mmap
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from sim.capacity.trace import CapacityTrace, MachineCapacityTrace
from sim.checkpoint import KEYS as CHECKPOINT_KEYS
from sim.checkpoint import Checkpoint, per_job
from sim.engine import Admission, run_kernel
from sim.engine.log import LOG_END, LOG_JOB, LOG_MACHINE, LOG_OUTCOME, LOG_START, LOG_USEFUL
from sim.metrics import EngineOutput, step_cores


@dataclass(frozen=True)
class Platform:
    machines: int
    cores: float
    memory_gb: float | None = None

    def __post_init__(self) -> None:
        if self.machines <= 0 or self.cores <= 0:
            raise ValueError("platform needs machines > 0 and cores > 0")


@dataclass(frozen=True)
class Problem:
    """Jobs in input row order plus the sorted view the engine consumes."""

    job_id: pl.Series  # Arrow strings (~11 bytes a job; a numpy array of str objects took ~60)
    submit_s: np.ndarray
    duration_s: np.ndarray
    cores: np.ndarray
    memory_gb: np.ndarray | None
    platform: Platform
    capacity: CapacityTrace | MachineCapacityTrace
    horizon_s: float
    #: engine index -> input row (the stable sort by submit), or None when the jobs come in submit order:
    #: the identity is not held (8 bytes a job of a run's peak memory); :attr:`order` is it either way
    sort_order: np.ndarray | None
    record_ts: bool = False
    check: bool = False
    carbon: Any = None  # sim.energy.CarbonSignal of the run, if any (the ``defer`` policy reads it)
    checkpoint: Checkpoint | None = None  # checkpoint/restart (sim.checkpoint); None: off
    #: per-job (τ, δ, R) rows in input order when the jobs frame has checkpoint columns (sim.checkpoint.per_job)
    checkpoint_jobs: np.ndarray | None = None

    @property
    def order(self) -> np.ndarray:
        """Engine index -> input row (int64; a new ``arange`` each read when the jobs are in submit order)."""
        return np.arange(self.submit_s.size) if self.sort_order is None else self.sort_order

    @property
    def submit_ordered(self) -> bool:
        """Whether the engine order is the input order (jobs already sorted by submit time)."""
        return self.sort_order is None or in_submit_order(self.sort_order)

    @property
    def checkpointing(self) -> bool:
        """Whether any job checkpoints or restarts with recovery time."""
        return self.checkpoint is not None or self.checkpoint_jobs is not None

    def checkpoint_rows(self) -> np.ndarray | None:
        """(τ, δ, R): one row per job in engine order when set per job, else the run's triple; None: off."""
        if self.checkpoint_jobs is not None:
            return self.checkpoint_jobs if self.sort_order is None else self.checkpoint_jobs[self.sort_order]
        return None if self.checkpoint is None else np.asarray(self.checkpoint.as_array(), np.float64)

    @classmethod
    def build(
        cls,
        jobs: pl.DataFrame,
        platform: Platform,
        capacity: CapacityTrace | MachineCapacityTrace,
        horizon_s: float,
        record_ts: bool = False,
        check: bool = False,
        checkpoint: Checkpoint | None = None,
    ) -> Problem:
        """Validate a jobs frame (``job_id, submit_s, duration_s, cores[, memory_gb]``, optional per-job
        checkpoint columns overriding ``checkpoint``: :func:`sim.checkpoint.per_job`). Raises ValueError."""
        missing = {"job_id", "submit_s", "duration_s", "cores"} - set(jobs.columns)
        if missing:
            raise ValueError(f"jobs frame lacks columns {sorted(missing)}")
        submit = jobs["submit_s"].cast(pl.Float64).to_numpy()
        dur = jobs["duration_s"].cast(pl.Float64).to_numpy()
        cores = jobs["cores"].cast(pl.Float64).to_numpy()
        mem = None
        if platform.memory_gb is not None:
            if "memory_gb" not in jobs.columns:
                raise ValueError("platform has memory_gb but the jobs frame has no memory_gb column")
            mem = jobs["memory_gb"].cast(pl.Float64).fill_null(0.0).to_numpy()
        for name, arr in (("submit_s", submit), ("duration_s", dur), ("cores", cores)):
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"jobs.{name} has null or non-finite values")
        if np.any(dur <= 0) or np.any(cores <= 0) or np.any(submit < 0):
            raise ValueError("jobs need duration_s > 0, cores > 0 and submit_s >= 0")
        too_big = cores > platform.cores
        if np.any(too_big):
            raise ValueError(
                f"{int(too_big.sum())} jobs ask for more than {platform.cores} cores per machine "
                f"(max {cores.max()}); filter or rescale them first"
            )
        # already in submit order (the usual file): the stable sort's answer without sorting (0.4 CPU s at 6M)
        ordered = submit.size < 2 or bool(np.all(submit[1:] >= submit[:-1]))
        order = None if ordered else np.argsort(submit, kind="stable")
        ck_cols = {k: jobs[k].cast(pl.Float64).to_numpy() for k in CHECKPOINT_KEYS if k in jobs.columns}
        ck_jobs = per_job(ck_cols, jobs.height, checkpoint) if ck_cols else None
        return cls(
            jobs["job_id"].cast(pl.Utf8),
            submit,
            dur,
            cores,
            mem,
            platform,
            capacity,
            float(horizon_s),
            order,
            record_ts,
            check,
            checkpoint=None if ck_cols else checkpoint,
            checkpoint_jobs=ck_jobs,
        )


def require_machines_alive(problem: Problem, policy: str) -> None:
    """Raise ValueError if ``problem`` has per-machine capacity (the policy reasons about LIFO intervals)."""
    if isinstance(problem.capacity, MachineCapacityTrace):
        raise ValueError(f"policy {policy!r} needs a machines-alive capacity trace, not per-machine capacity")


@dataclass(frozen=True)
class Compiled:
    """A policy's declaration for the compiled First-Fit engine: its termination rule and admission rules
    (``None``: plain First-Fit). The other kind of declaration is a :class:`sim.engine.loop.Hooks` object."""

    termination: str = "lifo"
    admission: Admission | None = None


@dataclass(frozen=True)
class RunArtifacts:
    output: EngineOutput
    timeseries: pl.DataFrame | None


def _unsort(order: np.ndarray, arr: np.ndarray) -> np.ndarray:
    out = np.empty_like(arr)
    out[order] = arr
    return out


def in_submit_order(order: np.ndarray) -> bool:
    """Whether the engine order is the input order (jobs already sorted by submit time)."""
    return bool(np.all(order[1:] > order[:-1])) and (order.size == 0 or order[0] == 0)


def _engine_order(order: np.ndarray, sorted_: bool, arr: np.ndarray) -> np.ndarray:
    """``arr`` (input order) in engine order: itself when the jobs are already sorted (``order`` is then not
    read) and it is a writable C array (the kernel reads it as is; a read-only one would be copied by the
    engine anyway), else a copy."""
    if sorted_:
        return arr if arr.flags.writeable and arr.flags.c_contiguous else np.array(arr)
    return arr[order]


def attempt_fields(
    alog: np.ndarray, row: np.ndarray, useful: bool = False, consume: bool = False
) -> dict[str, np.ndarray]:
    """``EngineOutput.att_*`` from the kernel's attempt log (``row``: engine job index → input row; empty:
    the identity); ``useful``: with the work column (checkpointing runs). ``consume``: the log is the
    caller's to destroy — a large one is copied a block of rows at a time and each copied block's memory
    given back to the system (:func:`release_rows`), so the log and its columns are not held twice (the
    Borg-scale peak RSS); the log reads as zeros afterwards."""
    n = alog.shape[0]
    # jobs in input order (the usual file): the engine index is the row, without a gather and a copy
    # (two 8-byte columns a job of the run's peak memory)
    ordered = in_submit_order(row)
    cols = {
        "att_job": np.empty(n, np.int64),
        "att_start_s": np.empty(n),
        "att_end_s": np.empty(n),
        "att_outcome": np.empty(n, np.int8),
        "att_machine": np.empty(n, np.int32),
        **({"att_useful_s": np.empty(n)} if useful else {}),
    }
    src = (
        ("att_job", LOG_JOB),
        ("att_start_s", LOG_START),
        ("att_end_s", LOG_END),
        ("att_outcome", LOG_OUTCOME),
        ("att_machine", LOG_MACHINE),
        *((("att_useful_s", LOG_USEFUL),) if useful else ()),
    )
    block = RELEASE_BLOCK_ROWS if consume and alog.nbytes >= RELEASE_MIN_BYTES else max(n, 1)
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        for name, c in src:
            cols[name][lo:hi] = alog[lo:hi, c]  # the integers are exact in float64
        if block < n:
            release_rows(alog, hi)
    if not ordered:
        cols["att_job"] = np.asarray(row[cols["att_job"]], np.int64)
    return cols


#: :func:`attempt_fields` gives a consumed log back a block of this many rows at a time, once it is this big
RELEASE_BLOCK_ROWS = 1 << 18
RELEASE_MIN_BYTES = 64 << 20


def release_rows(a: np.ndarray, upto: int) -> None:
    """Give the memory of ``a``'s rows before ``upto`` back to the system (Linux ``madvise(MADV_DONTNEED)`` on
    the whole pages inside them; elsewhere nothing). Those rows read as zeros afterwards: only for an array
    nothing reads again, allocated on its own (a large allocation is its own mapping)."""
    if not sys.platform.startswith("linux") or not a.flags.c_contiguous or upto <= 0:
        return
    page = mmap.PAGESIZE
    base = a.ctypes.data
    lo = (base + page - 1) // page * page  # the first whole page of the array (never its allocator's header)
    hi = (base + min(upto, a.shape[0]) * a.strides[0]) // page * page
    if hi > lo:
        _libc().madvise(ctypes.c_void_p(lo), ctypes.c_size_t(hi - lo), MADV_DONTNEED)


MADV_DONTNEED = 4


@functools.cache
def _libc() -> ctypes.CDLL:
    lib = ctypes.CDLL(None, use_errno=True)
    lib.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return lib


def capacity_steps(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Alive cores over time as the engines apply the trace (changes before the horizon; 0 before the first)."""
    cap, h = problem.capacity, problem.horizon_s
    if isinstance(cap, MachineCapacityTrace):
        order = np.lexsort((np.arange(cap.time_s.size), cap.time_s))  # time, then event order
        t, m, c = cap.time_s[order], cap.machine[order], cap.cores[order]
        keep = t < h
        t, m, c = t[keep], m[keep], c[keep]
        g = np.lexsort((np.arange(t.size), m))  # per machine, in time order
        cg = c[g]
        prev = np.r_[0.0, cg[:-1]]
        prev[np.r_[True, m[g][1:] != m[g][:-1]]] = 0.0  # a machine's first event starts from 0 cores
        delta = np.empty(t.size)
        delta[g] = cg - prev
        return step_cores(t, np.cumsum(delta))
    t = np.asarray(cap.time_s, np.float64)
    alive = np.clip(np.asarray(cap.machines_alive), 0, problem.platform.machines)
    keep = t < h
    return step_cores(t[keep], alive[keep] * float(problem.platform.cores))


def run_first_fit(
    problem: Problem, termination: str, seed: int, admission: Admission | None = None
) -> RunArtifacts:
    """Run the compiled First-Fit engine and return outputs in input row order.

    ``admission`` arrays are given in input row order; they are reordered for the engine here."""
    # jobs already in submit order (the usual case): the arrays themselves, not copies (the
    # copies were ~25 MB of the Borg-scale run's peak), and outputs are not permuted back
    srt = problem.submit_ordered
    o = np.zeros(0, np.int64) if srt else problem.order  # sorted: each job's index is its row (not held)
    if admission is not None:
        admission = Admission(
            **{
                **admission.__dict__,
                **{
                    k: _engine_order(o, srt, getattr(admission, k))
                    for k in ("job_lo", "job_hi", "jflag")
                    if getattr(admission, k) is not None
                },
            }
        )
    cap = problem.capacity
    per_machine = isinstance(cap, MachineCapacityTrace)
    if per_machine and admission is not None:
        raise ValueError("this policy needs a machines-alive capacity trace, not per-machine capacity")
    cap_t = np.zeros(0) if per_machine else cap.time_s
    cap_n = np.zeros(0, np.int64) if per_machine else cap.machines_alive
    events = (cap.time_s, cap.machine, cap.cores) if per_machine else None
    k = run_kernel(
        _engine_order(o, srt, problem.submit_s),
        _engine_order(o, srt, problem.duration_s),
        _engine_order(o, srt, problem.cores),
        None if problem.memory_gb is None else _engine_order(o, srt, problem.memory_gb),
        cap_t,
        cap_n,
        problem.platform.machines,
        problem.platform.cores,
        problem.platform.memory_gb or 0.0,
        problem.horizon_s,
        termination,
        seed,
        problem.record_ts,
        problem.check,
        row=None if srt else o,
        admission=admission,
        machine_events=events,
        checkpoint=problem.checkpoint_rows(),
    )
    un = (lambda a: a) if srt else (lambda a: _unsort(o, a))  # the kernel's outputs are its own arrays
    out = EngineOutput(
        un(k.first_start_s),
        un(k.end_s),
        un(k.attempts),
        un(k.terminations_per_job),
        un(k.status),
        k.completed_core_s,
        k.wasted_core_s,
        k.inflight_core_s,
        k.available_core_s,
        k.used_core_s,
        k.terminations,
        k.aborted_s,
        k.violations,
        k.events,
        **attempt_fields(k.attempt_log, o, problem.checkpointing, consume=True),
        **dict(zip(("cap_time_s", "cap_cores"), capacity_steps(problem), strict=True)),
    )
    ts = (
        pl.DataFrame({"time_s": k.ts_time_s, "alive_cores": k.ts_alive_cores, "used_cores": k.ts_used_cores})
        if problem.record_ts
        else None
    )
    return RunArtifacts(out, ts)
