"""Run metrics from engine outputs, written once for every engine (no numba here).

Every engine returns an :class:`EngineOutput`: per-job outcomes, its own running aggregates (kept for
invariant tests) and two logs the metrics are computed from:

* the **attempt log**: one row per attempt (job row, start, end, outcome, machine; outcome 0 completed,
  1 killed, 2 still running at the horizon with end = horizon);
* the **capacity step function** ``cap_time_s, cap_cores``: alive (or allocated) cores from each time on.

Metrics over a measurement window ``[a, b]`` (default ``[0, horizon]``), all fractions of
``available_core_seconds`` = ∫_a^b alive cores dt:

* ``goodput`` — Σ over attempts completed by b of ``c·(end − max(start, a))⁺``;
* ``goodput_partial`` (paper 001 GOODPUT(T)) — goodput plus ``in_flight_fraction``;
* ``in_flight_fraction`` — Σ over attempts running at b (start < b < end) of ``c·(b − max(start, a))``;
* ``wasted_fraction`` — Σ over kills at times in (a, b] of ``c·(kill − max(start, a))``;
  ``aborted_volume`` (paper 001 ABORTEDVOLUME) — the same kills' whole attempts ``c·(kill − start)``;
* ``idle_fraction`` = 1 − goodput − wasted − in_flight; ``terminations`` = kills in (a, b];
* job-level metrics over jobs submitted in [a, b) (b = horizon: every job submitted at or after a, so jobs
  the input has past the horizon count as never started, as without a window); a job counts as
  started/completed if it did so by b.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np
import polars as pl

# job status codes (per-job table), shared by every engine
QUEUED, RUNNING, COMPLETED, FAILED = 0, 1, 2, 3  # FAILED: killed and not requeued (``<rule>-fail``)
STATUS_NAMES = {QUEUED: "queued", RUNNING: "running", COMPLETED: "completed", FAILED: "failed"}
# attempt outcomes (attempt log)
ATT_COMPLETED, ATT_KILLED, ATT_RUNNING = 0, 1, 2


@dataclass(frozen=True)
class Metric:
    """One run metric: ``name`` (a key of :func:`compute_metrics`' dict), ``kind`` (int or float), unit and
    description. :data:`METRICS` is the one list: ``out_sim_results``' metric columns, their units and
    descriptions (``assets/schema.py``, the data dictionary) are derived from it."""

    name: str
    kind: type
    unit: str
    description: str


METRICS: tuple[Metric, ...] = (
    Metric("jobs", int, "jobs", "jobs simulated"),
    Metric("completed", int, "jobs", "jobs completed before the horizon"),
    Metric("terminations", int, "kills", "job terminations by capacity drops"),
    Metric("failure_rate", float, "kills/job", "terminations / jobs"),
    Metric("jobs_not_scheduled", int, "jobs", "jobs never started"),
    Metric("goodput", float, "fraction", "completed work / available core-seconds"),
    Metric("wasted_fraction", float, "fraction", "work lost to terminations / available core-seconds"),
    Metric("in_flight_fraction", float, "fraction", "work of jobs running at the horizon"),
    Metric("idle_fraction", float, "fraction", "available core-seconds left idle"),
    Metric("latency_mean_s", float, "s", "mean wait from submit to first start"),
    Metric("latency_p50_s", float, "s", "median wait to first start"),
    Metric("latency_p90_s", float, "s", "P90 wait to first start"),
    Metric("latency_p95_s", float, "s", "P95 wait to first start"),
    Metric("latency_p99_s", float, "s", "P99 wait to first start"),
    Metric("mean_stretch", float, "-", "mean (end − submit) / duration of completed jobs"),
    Metric("max_stretch", float, "-", "max stretch of completed jobs"),
    Metric("avg_aborted_time_s", float, "s", "mean run time lost per termination"),
    Metric("slo_miss_rate", float, "fraction", "jobs not done within 1.1 × duration of submit"),
    Metric("available_core_seconds", float, "core·s", "∫ available cores dt over the measurement window"),
    Metric(
        "goodput_partial",
        float,
        "fraction",
        "paper 001 GOODPUT(T): goodput plus the work of jobs running at the window's end",
    ),
    Metric(
        "aborted_volume",
        float,
        "fraction",
        "paper 001 ABORTEDVOLUME: whole attempts killed in the window / available core-seconds",
    ),
)
METRIC_NAMES = tuple(m.name for m in METRICS)


@dataclass(frozen=True)
class EngineOutput:
    """What an engine returns, in input row order (attempt log: ``att_job`` is the input row)."""

    first_start_s: np.ndarray
    end_s: np.ndarray
    attempts: np.ndarray
    terminations: np.ndarray
    status: np.ndarray
    completed_cs: float
    wasted_cs: float
    inflight_cs: float
    available_cs: float
    used_cs: float
    n_terminations: int
    aborted_time_s: float
    violations: int
    events: int
    att_job: np.ndarray
    att_start_s: np.ndarray
    att_end_s: np.ndarray
    att_outcome: np.ndarray
    att_machine: np.ndarray
    cap_time_s: np.ndarray
    cap_cores: np.ndarray
    #: checkpointing runs only (:mod:`sim.checkpoint`): per attempt, the job's own work it delivered
    #: (completed) or saved in checkpoints (killed); the rest of its time is recovery, checkpoint writes
    #: or lost work
    att_useful_s: np.ndarray | None = None


class AttemptLog:
    """A growable attempt log for the Python engines (the compiled kernel keeps its own buffer)."""

    def __init__(self, horizon_s: float) -> None:
        self.horizon = horizon_s
        # typed arrays, not lists: 29 bytes an attempt instead of ~120 (boxed floats and ints)
        self.job = array("i")  # engine job index
        self.start = array("d")
        self.end = array("d")
        self.outcome = array("b")
        self.machine = array("i")
        self.useful = array("d")  # the job's own work per attempt (checkpointing runs)

    def open(self, j: int, m: int, t: float) -> int:
        """Record attempt of engine job ``j`` on machine ``m`` from ``t``; returns its log index."""
        self.job.append(j)
        self.start.append(t)
        self.end.append(self.horizon)
        self.outcome.append(ATT_RUNNING)
        self.machine.append(m)
        self.useful.append(0.0)
        return len(self.job) - 1

    def close(self, k: int, t: float, outcome: int) -> None:
        self.end[k] = t
        self.outcome[k] = outcome

    def arrays(self, row: np.ndarray, useful: bool = False) -> dict[str, np.ndarray]:
        """``att_*`` fields with engine job indices mapped to input rows through ``row`` (``useful``: with
        ``att_useful_s``)."""
        extra = {"att_useful_s": np.asarray(self.useful, np.float64)} if useful else {}
        return {
            **extra,
            "att_job": row[np.asarray(self.job, np.int64)].astype(np.int64),
            "att_start_s": np.asarray(self.start, np.float64),
            "att_end_s": np.asarray(self.end, np.float64),
            "att_outcome": np.asarray(self.outcome, np.int8),
            "att_machine": np.asarray(self.machine, np.int32),
        }


def step_cores(times: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Canonical step function: last value per time, repeats of the previous value dropped."""
    t = np.asarray(times, np.float64)
    v = np.asarray(values, np.float64)
    if t.size == 0:
        return t, v
    last = np.r_[t[1:] != t[:-1], True]
    t, v = t[last], v[last]
    keep = np.r_[True, v[1:] != v[:-1]]
    return t[keep], v[keep]


def integrate_step(times: np.ndarray, values: np.ndarray, a: float, b: float) -> float:
    """∫_a^b of the step function (0 before its first time)."""
    t, v = step_cores(times, values)
    if t.size == 0 or b <= a:
        return 0.0
    nxt = np.r_[t[1:], np.inf]
    lo = np.maximum(t, a)
    hi = np.minimum(nxt, b)
    seg = hi > lo
    return float(np.sum(v[seg] * (hi[seg] - lo[seg])))


def percentiles(x: np.ndarray, qs: tuple[float, ...], overwrite: bool = False) -> list[float]:
    """``np.percentile(x, q)`` (method ``linear``) for each q in ``qs``, bit for bit, from one partition of
    one copy (numpy partitions once per call) and without ``np.unique``, whose first call imports
    ``numpy.ma`` (~0.03 CPU s of a small run); NaN for an empty ``x`` or one holding NaN. ``overwrite``: a
    float64 ``x`` is partitioned in place (its order is lost), not copied."""
    n = x.size
    if n == 0:
        return [float("nan")] * len(qs)
    v = (n - 1) * np.true_divide(np.asarray(qs, np.float64), 100)  # numpy's virtual indexes
    prev = np.floor(v)
    nxt = prev + 1
    above = v >= n - 1
    prev[above] = n - 1
    nxt[above] = n - 1
    pi, ni = prev.astype(np.intp), nxt.astype(np.intp)
    a = x if overwrite and x.dtype == np.float64 else np.array(x, np.float64)
    a.partition(np.array(sorted({0, n - 1, *pi.tolist(), *ni.tolist()}), np.intp))
    if np.isnan(a[n - 1]):
        return [float("nan")] * len(qs)
    lo, hi = a[pi], a[ni]
    gamma = v - np.where(above, -1, pi)  # numpy's weight (its index of the last value is -1)
    diff = hi - lo
    out = lo + diff * gamma
    np.subtract(hi, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return [float(y) for y in out]


def _minus(x: np.ndarray, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``x[idx] - y[idx]`` in one new array (``idx``: a mask's positions; a gather by positions is ~4× as
    fast as indexing by the mask)."""
    out = x.take(idx)
    out -= y.take(idx)
    return out


def _times(c: np.ndarray, idx: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``c[idx] * x``, written into ``x``."""
    np.multiply(c.take(idx), x, out=x)
    return x


#: :func:`compute_metrics` works through a run's attempts and jobs this many at a time (a run of at most this
#: many takes one block: its sums are numpy's over the whole array)
METRIC_BLOCK = 1 << 20


def _blocks(n: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` blocks of :data:`METRIC_BLOCK` covering ``range(n)`` (one block, maybe empty, for small n)."""
    return [(lo, min(n, lo + METRIC_BLOCK)) for lo in range(0, max(n, 1), METRIC_BLOCK)]


def _attempt_sums(
    out: EngineOutput, cores: np.ndarray, a: float, b: float
) -> tuple[float, float, float, float, float, int]:
    """Core-seconds over ``[a, b]`` of the attempts that completed, were killed (wasted, and aborted from
    their starts) and are in flight, the killed attempts' aborted seconds and their count — a block of
    attempts at a time (one block with checkpointing, whose accounting takes the whole log)."""
    n = out.att_job.size
    blocks = _blocks(n) if out.att_useful_s is None else [(0, n)]
    done_cs = wasted_cs = aborted_cs = inflight_cs = aborted_time = 0.0
    n_kills = 0
    for lo, hi in blocks:
        c = cores.take(out.att_job[lo:hi])
        s, e, oc = out.att_start_s[lo:hi], out.att_end_s[lo:hi], out.att_outcome[lo:hi]
        s_in = np.maximum(s, a)
        done = (oc == ATT_COMPLETED) & (e <= b)
        killed = (oc == ATT_KILLED) & (e > a) & (e <= b)
        running = (s < b) & ((e > b) | (oc == ATT_RUNNING))
        # the same products as c·max(e − s_in, 0) etc., each made in one array
        i_done, i_killed, i_running = np.flatnonzero(done), np.flatnonzero(killed), np.flatnonzero(running)
        done_cs += float(np.sum(_times(c, i_done, np.maximum(_minus(e, s_in, i_done), 0.0))))
        wasted_cs += float(np.sum(_times(c, i_killed, _minus(e, s_in, i_killed))))
        aborted_cs += float(np.sum(_times(c, i_killed, _minus(e, s, i_killed))))
        x = s_in.take(i_running)
        np.subtract(b, x, out=x)
        inflight_cs += float(np.sum(_times(c, i_running, x)))
        del x, i_done, i_running
        if out.att_useful_s is not None:  # checkpointing: only the jobs' own work is goodput
            done_cs, wasted_cs, inflight_cs = _checkpointed(out, c, a, b, s_in, done, killed, running)
        n_kills += i_killed.size
        aborted_time += float(np.sum(_minus(e, s, i_killed)))
    return done_cs, wasted_cs, aborted_cs, inflight_cs, aborted_time, n_kills


def compute_metrics(
    out: EngineOutput,
    submit_s: np.ndarray,
    duration_s: np.ndarray,
    cores: np.ndarray,
    horizon_s: float,
    slo_threshold: float = 0.10,
    window_start_s: float = 0.0,
    window_end_s: float | None = None,
) -> dict[str, float]:
    """The metric dict of one run over ``[window_start_s, window_end_s]`` (names in :data:`METRIC_NAMES`).

    Raises ValueError unless ``0 ≤ window_start_s < window_end_s ≤ horizon_s``."""
    a = float(window_start_s)
    b = float(horizon_s if window_end_s is None else window_end_s)
    if not (0.0 <= a < b <= horizon_s):
        raise ValueError(f"window [{a:g}, {b:g}] must satisfy 0 ≤ start < end ≤ horizon ({horizon_s:g})")
    avail = integrate_step(out.cap_time_s, out.cap_cores, a, b)
    done_cs, wasted_cs, aborted_cs, inflight_cs, aborted_time, n_kills = _attempt_sums(out, cores, a, b)

    def frac(x: float) -> float:
        return x / avail if avail > 0 else 0.0

    goodput, wasted, inflight = frac(done_cs), frac(wasted_cs), frac(inflight_cs)
    sel = (submit_s >= a) & ((submit_s < b) | (b >= horizon_s))  # a window to the horizon keeps later jobs
    n = int(sel.sum())
    if n == sel.size:  # every job (the usual window): the arrays themselves, not copies (peak RSS)
        sub, dur, fs, end, st = submit_s, duration_s, out.first_start_s, out.end_s, out.status
    else:
        sub, dur = submit_s[sel], duration_s[sel]
        fs, end, st = out.first_start_s[sel], out.end_s[sel], out.status[sel]
    n_started, n_done, n_miss, stretch_sum, stretch_max = 0, 0, 0, 0.0, -np.inf
    # every started job's latency is kept (its percentiles): one array, filled block by block
    lat = np.empty(int(np.count_nonzero((fs >= 0) & (fs < b))))
    for lo, hi in _blocks(sub.size):  # a block of jobs at a time: the temporaries' memory is a block's
        fs_, sub_, dur_ = fs[lo:hi], sub[lo:hi], dur[lo:hi]
        i_started = np.flatnonzero((fs_ >= 0) & (fs_ < b))
        lat[n_started : n_started + i_started.size] = _minus(fs_, sub_, i_started)
        n_started += i_started.size
        del i_started
        jdone = (st[lo:hi] == COMPLETED) & (end[lo:hi] <= b)
        i_jdone = np.flatnonzero(jdone)
        stretch = _minus(end[lo:hi], sub_, i_jdone)
        stretch /= dur_.take(i_jdone)
        if stretch.size:
            stretch_sum += float(np.sum(stretch))
            stretch_max = max(stretch_max, float(stretch.max()))
        n_done += i_jdone.size
        del i_jdone, stretch
        # paper 003: a job misses its SLO unless it finishes within (1 + X) × its duration of arriving
        late = end[lo:hi] - sub_
        late -= dur_
        n_miss += int(np.count_nonzero(~jdone | (late >= slo_threshold * dur_)))
        del late, jdone

    # the mean before the percentiles partition the latencies in place (a copy was 8 bytes a started job of
    # the run's peak memory; the mean's pairwise sum depends on the order)
    lat_mean = float(lat.mean()) if lat.size else float("nan")
    p50, p90, p95, p99 = percentiles(lat, (50, 90, 95, 99), overwrite=True)
    return {
        "jobs": n,
        "completed": n_done,
        "terminations": n_kills,
        "failure_rate": n_kills / n if n else 0.0,
        "jobs_not_scheduled": n - n_started,
        "goodput": float(goodput),
        "wasted_fraction": float(wasted),
        "in_flight_fraction": float(inflight),
        "idle_fraction": float(1.0 - goodput - wasted - inflight),
        "latency_mean_s": lat_mean,
        "latency_p50_s": p50,
        "latency_p90_s": p90,
        "latency_p95_s": p95,
        "latency_p99_s": p99,
        "mean_stretch": stretch_sum / n_done if n_done else float("nan"),
        "max_stretch": stretch_max if n_done else float("nan"),
        "avg_aborted_time_s": aborted_time / n_kills if n_kills else 0.0,
        "slo_miss_rate": n_miss / n if n else 0.0,
        "available_core_seconds": float(avail),
        "goodput_partial": float(goodput + inflight),
        "aborted_volume": float(frac(aborted_cs)),
    }


def _checkpointed(
    out: EngineOutput,
    c: np.ndarray,
    a: float,
    b: float,
    s_in: np.ndarray,
    done: np.ndarray,
    killed: np.ndarray,
    running: np.ndarray,
) -> tuple[float, float, float]:
    """(goodput, wasted, in-flight core-seconds) of a checkpointing run over ``[a, b]``: a row's own work
    (``att_useful_s``, taken as spread evenly over the row when the window cuts it) is goodput if its job
    completed by b, else in flight (saved, not delivered); the rest of completed and killed rows is
    wasted (recovery, checkpoint writes, work lost since the last checkpoint)."""
    s, e, u = out.att_start_s, out.att_end_s, out.att_useful_s
    assert u is not None
    length = e - s
    inside = np.clip(np.minimum(e, b) - s_in, 0.0, None)
    own = np.where(length > 0, u * inside / np.where(length > 0, length, 1.0), 0.0)
    job_done = (out.status == COMPLETED) & (out.end_s >= 0) & (out.end_s <= b)
    jd = job_done[out.att_job]
    good = done | (killed & jd)
    done_cs = float(np.sum(c[good] * own[good]))
    closed = done | killed
    wasted_cs = float(np.sum(c[closed] * (inside[closed] - own[closed])))
    saved = killed & ~jd
    inflight_cs = float(np.sum(c[running] * (b - s_in[running])) + np.sum(c[saved] * own[saved]))
    return done_cs, wasted_cs, inflight_cs


def job_table(out: EngineOutput, job_id: pl.Series | np.ndarray, submit_s: np.ndarray) -> pl.DataFrame:
    """Per-job outcomes: first_start_s, end_s, attempts, terminations, status."""
    # a code per job, then its name (nested np.where over strings held 4 arrays of 52 bytes a job)
    code = np.where(out.first_start_s >= 0, 3, 4).astype(np.int8)
    code[out.status == FAILED] = 2
    code[out.status == RUNNING] = 1
    code[out.status == COMPLETED] = 0
    names = [STATUS_NAMES[k] for k in (COMPLETED, RUNNING, FAILED)] + ["requeued", "never_started"]
    status = pl.Series("status", names, pl.String).gather(code)
    return pl.DataFrame(
        {
            "job_id": job_id,
            "submit_s": submit_s,
            "first_start_s": np.where(out.first_start_s >= 0, out.first_start_s, np.nan),
            "end_s": np.where(out.end_s >= 0, out.end_s, np.nan),
            "attempts": out.attempts,
            "terminations": out.terminations,
            "status": status,
        }
    )


#: the per-job table of a run (``SimResult.jobs``, ``varcap simulate --jobs-out``): column, type, meaning
JOB_TABLE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("job_id", "as given", "the job's id, as in the input"),
    ("submit_s", "float64", "submission time, s from the start of the run"),
    ("first_start_s", "float64", "start of its first attempt, s (NaN: never started)"),
    ("end_s", "float64", "end of its last attempt, s (NaN: never started)"),
    ("attempts", "int", "attempts started (a killed job that is requeued starts again)"),
    ("terminations", "int", "attempts killed by a capacity drop"),
    (
        "status",
        "string",
        "at the horizon: completed | running | failed (killed, not requeued) | requeued (killed, waiting "
        "again) | never_started",
    ),
)
#: with energy or a carbon signal, the per-job table also has (``sim.energy``)
JOB_TABLE_ENERGY_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("energy_kwh", "float64", "energy of all its attempts, kWh"),
    ("gco2", "float64", "carbon of all its attempts, gCO2eq"),
    ("wasted_gco2", "float64", "carbon of its killed attempts' lost work, gCO2eq"),
)
#: the per-attempt table (``SimResult.attempts``, ``varcap simulate --attempts-out``)
ATTEMPT_TABLE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("job_id", "as given", "the job's id"),
    ("machine", "int32", "machine index (0 … machines − 1)"),
    ("cores", "float64", "cores the attempt held"),
    ("start_s", "float64", "start, s"),
    ("end_s", "float64", "end, s (the horizon for an attempt still running)"),
    ("outcome", "string", "completed | killed | running (at the horizon)"),
)
#: the run over time (``SimResult.timeseries``, ``varcap simulate --plot``), one row per time step
TIMESERIES_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("time_s", "float64", "start of the step, s"),
    ("capacity_cores", "float64", "cores alive (or allocated) at time_s"),
    ("used_cores", "float64", "cores held by running attempts at time_s"),
    ("running_jobs", "int64", "attempts running at time_s"),
    ("queued_jobs", "int64", "jobs submitted by time_s, not running and not finished"),
    ("kills", "int64", "attempts killed in [time_s, next time_s)"),
)
ATT_OUTCOME_NAMES = ("completed", "killed", "running")


def attempt_table(out: EngineOutput, job_id: pl.Series | np.ndarray, cores: np.ndarray) -> pl.DataFrame:
    """The attempt log as a table (:data:`ATTEMPT_TABLE_COLUMNS`), in the log's order."""
    ids = job_id if isinstance(job_id, pl.Series) else pl.Series("job_id", job_id)
    return pl.DataFrame(
        {
            "job_id": ids.gather(out.att_job).alias("job_id"),
            "machine": out.att_machine.astype(np.int32),
            "cores": np.asarray(cores, np.float64)[out.att_job],
            "start_s": out.att_start_s,
            "end_s": out.att_end_s,
            "outcome": pl.Series("outcome", ATT_OUTCOME_NAMES, pl.String).gather(
                out.att_outcome.astype(np.int64)
            ),
        }
    )


def run_over_time(
    out: EngineOutput, submit_s: np.ndarray, cores: np.ndarray, horizon_s: float, steps: int = 500
) -> pl.DataFrame:
    """The run over time on ``steps`` equal steps of ``[0, horizon_s)`` (:data:`TIMESERIES_COLUMNS`), from the
    attempt log and capacity steps, so every policy's run has one. Levels are read at each step's start;
    kills are counted over the step. ValueError for ``steps < 1`` or a horizon that is not positive."""
    if steps < 1 or not horizon_s > 0:
        raise ValueError(f"run_over_time: steps must be ≥ 1 and horizon_s > 0 (got {steps}, {horizon_s})")
    t = np.linspace(0.0, float(horizon_s), int(steps) + 1)
    edges, t = t, t[:-1]
    cap_i = np.searchsorted(out.cap_time_s, t, side="right") - 1
    capacity = np.where(cap_i >= 0, np.asarray(out.cap_cores, np.float64)[np.clip(cap_i, 0, None)], 0.0)
    c = np.asarray(cores, np.float64)[out.att_job]
    s, e = out.att_start_s, out.att_end_s

    def level(weights: np.ndarray) -> np.ndarray:  # Σ weights of attempts with start ≤ t < end
        on = np.searchsorted(np.sort(s), t, side="right")
        order = np.argsort(s, kind="stable")
        cum_on = np.r_[0.0, np.cumsum(weights[order])]
        eo = np.argsort(e, kind="stable")
        cum_off = np.r_[0.0, np.cumsum(weights[eo])]
        off = np.searchsorted(e[eo], t, side="right")
        return cum_on[on] - cum_off[off]

    used = level(c)
    running = np.rint(level(np.ones_like(c))).astype(np.int64)
    submitted = np.searchsorted(np.sort(np.asarray(submit_s, np.float64)), t, side="right")
    finished_at = np.where((out.status == COMPLETED) | (out.status == FAILED), out.end_s, np.inf)
    finished = np.searchsorted(np.sort(finished_at[finished_at >= 0]), t, side="right")
    queued = np.maximum(submitted - running - finished, 0).astype(np.int64)
    kills = np.histogram(e[out.att_outcome == ATT_KILLED], bins=edges)[0].astype(np.int64)
    return pl.DataFrame(
        {
            "time_s": t,
            "capacity_cores": capacity,
            "used_cores": np.maximum(used, 0.0),
            "running_jobs": running,
            "queued_jobs": queued,
            "kills": kills,
        }
    )
