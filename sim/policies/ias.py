"""Interval-Aware Scheduler family (thesis ch. 6, Algorithms 1–5): ``ias`` = H1 + H2 + H4, and any
combination by name: ``ias-h1``, ``ias-h2``, ``ias-h3``, ``ias-h4``, ``ias-h1+h3``, ``ias-h1+h2+h3+h4`` …

* H1 (prioritize big jobs): machines below ``lb × machines`` are stable (never turned off under LIFO when
  capacity never falls below ``lb``). Jobs with ``duration × cores ≥ long_job_thresh`` run only there; the
  others only above. The threshold, unless given, is read from §6.1.1 by ``h1_threshold``:
  ``fit`` (default): "Schedule as many big jobs as possible on the fraction of resources that do not
  experience variable capacity (stable resources) … fitting jobs with high resource consumption to stable
  resources": the smallest ``duration × cores`` at which the offered work (core-seconds inside the horizon)
  of the jobs at or above it still fits the stable pool's capacity (stable machines × cores × horizon), see
  :func:`fit_threshold`; derived from the workload and ``lb``, nothing to tune. ``p90``: the workload's P90 of
  ``duration × cores`` ("a workload-based … percentile"; varcap ≤ 0.2's only reading).
* H2 (capacity-change aligned): a job no longer than the change period starts only if it ends strictly
  before the next period boundary, or exactly at a boundary. The period is ``period_s`` if given, else the
  trace's own (a generated trace's); a trace read from a file has none and IAS infers it by
  :func:`change_period_s` (the greatest common divisor of the change times, at least a minute), refusing a
  trace without one unless ``period_s`` is given (a trace that never changes needs none: H2 holds nothing) (varcap ≤ 0.3 aligned such a trace to the
  hour, whatever its changes).
* H3 (mean remaining): a job longer than the workload's P90 duration starts on a machine only if the mean
  remaining time of the machine's interval, given its uptime, is at least the duration.
* H4 (conditional probability), read by ``h4_reading``: ``text`` (default): start only if
  ``p_survive(uptime, duration) ≥ 1 − A`` (A = aggressiveness, 0.6 by default), as §6.2's text has it:
  "Higher aggressiveness indicates that the scheduler is more optimistic about intervals lasting longer".
  ``literal``: Algorithm 5 as printed, start only if ``prob(remaining ≥ exec | uptime) < A`` (higher A also
  admits more, but on the intervals least likely to last). The engine prunes and wakes on the ``text``
  reading's monotone bound; under ``literal`` it keeps each machine's bound L (t + d ≥ L admits a job of
  duration d; L grows as the uptime passes survival knots) and wakes a queued job when t reaches L − d on
  a machine where it fits, besides the events that touch a machine (a completion, a capacity change, a
  knot crossing) and each period boundary: the same starts as re-trying every queued job at every instant.

No stable floor (spot pools are at zero machines half the time, so ``lb = 0`` and H1's stable
pool is empty): ``no_floor=h1`` (default) keeps H1 as written — big jobs may only run on the empty pool,
so they never run; ``no_floor=drop-h1`` drops H1 when its pool is empty and judges every job by the other
heuristics (``ias`` becomes H2 + H4).

Combination (the thesis gives only H1+H2+H4): big jobs on stable machines face no further test; for the
other jobs H2 decides alone for jobs no longer than the period (as in Algorithm 5, which applies H4 only
to longer jobs), otherwise H3 and H4 must both hold when selected.

The survival model comes from the capacity trace's own LIFO intervals; intervals already on at time 0
count from 0, as the engine measures uptime from 0. ``survival_pool`` says whose intervals: ``variable``
pools the machines that ever turn off, ``all`` also the always-on machines (whose one horizon-long
interval each makes every uptime look safe). ``auto`` (default) is ``variable`` when H1 is on — H1 sends
every job that H3/H4 judge to exactly the variable machines, Table 6.1 conditions H4 on uptime only (no
machine index), and §5 characterizes "machine intervals under variable capacity" — and ``all`` without H1,
where H3/H4 judge every machine. (varcap ≤ 0.1 always pooled ``all``; the reproduction reports both.) ``history=full`` fits it once on
the whole trace (the thesis' profiling assumption: it sees the future of the trace). ``history=trailing``
refits every ``refit_h`` hours on the last ``window_h`` hours only (left-truncated, right-censored at the
refit time), so no future information leaks; before the first refit there is no model and H3/H4 accept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from sim.bounds import Bound, bounded
from sim.capacity.intervals import FIT_MODULES, IntervalModel, extract_intervals
from sim.capacity.trace import CapacityTrace
from sim.engine import H2_FLAG, H3_FLAG, H4_FLAG, PRED_IAS, Admission
from sim.engine.admission import H4_LITERAL_FLAG
from sim.policies import Dispatched, register_family
from sim.problem import Compiled, Problem, require_machines_alive

ALL_H = ("h1", "h2", "h3", "h4")


@bounded(
    aggressiveness=Bound(0.0, 1.0),
    lb=Bound(0.0, 1.0, "of the machines", auto="the trace's least fraction of machines alive"),
    long_job_thresh=Bound(0.0, math.inf, "core-seconds", auto="the workload's threshold (h1_threshold)"),
    period_s=Bound(
        0.0, 1e9, "seconds", lo_open=True, auto="the trace's change period", step_s=1.0, what="periods"
    ),
    window_h=Bound(0.0, 1e6, "hours", lo_open=True),
    refit_h=Bound(0.0, 1e6, "hours", lo_open=True, step_s=3600.0, max_steps=1e4, what="refits"),
)
@dataclass(frozen=True)
class IASParams:
    aggressiveness: float = 0.6
    lb: float = -1.0  # stable fraction of machines; < 0: the trace's minimum machines alive / machines
    long_job_thresh: float = -1.0  # core-seconds; < 0: workload P90 of duration × cores
    period_s: float = -1.0  # < 0: the trace's change period (inferred for a file trace: change_period_s)
    history: str = "full"  # full | trailing
    window_h: float = 168.0
    refit_h: float = 24.0
    termination: str = "lifo"
    survival_pool: str = "auto"  # auto | variable | all
    h1_threshold: str = "fit"  # fit | p90 (used when long_job_thresh < 0)
    h4_reading: str = "text"  # text: S(u+d)/S(u) >= 1 - A | literal: Algorithm 5's S(u+d)/S(u) < A
    no_floor: str = "h1"  # h1 | drop-h1: without H1 when its stable pool is empty

    def __post_init__(self) -> None:
        if self.h1_threshold not in ("fit", "p90"):
            raise ValueError("h1_threshold must be 'fit' or 'p90'")
        if self.no_floor not in ("h1", "drop-h1"):
            raise ValueError("no_floor must be 'h1' or 'drop-h1'")
        if self.h4_reading not in ("text", "literal"):
            raise ValueError("h4_reading must be 'text' or 'literal'")
        if self.survival_pool not in ("auto", "variable", "all"):
            raise ValueError("survival_pool must be 'auto', 'variable' or 'all'")
        if not 0.0 <= self.aggressiveness <= 1.0:
            raise ValueError("aggressiveness must lie in [0, 1]")
        if self.history not in ("full", "trailing"):
            raise ValueError("history must be 'full' or 'trailing'")


def fit_threshold(
    submit_s: np.ndarray, duration_s: np.ndarray, cores: np.ndarray, horizon_s: float, stable_cs: float
) -> float:
    """H1's ``fit`` threshold: the smallest ``duration × cores`` value v such that the jobs with
    ``duration × cores ≥ v`` offer at most ``stable_cs`` core-seconds inside [0, horizon_s) (each job's work
    clipped to the horizon). Ties enter together. ``inf`` (no big jobs) when the pool holds nothing
    (``stable_cs ≤ 0``) or the workload is empty; the largest value when even the biggest jobs alone
    overfill the pool (they still are the ones H1 protects).

    The work is summed largest value first, equal values in input order (:func:`_desc_order`), over the
    rows at or above a cut (:func:`_top_rows`): they come first in that order, so each cumulative sum is
    the same float as over every row, and once theirs exceeds the pool the sums past them (work ≥ 0) only
    grow, so no later group fits; if theirs does not, every row is summed."""
    key = np.asarray(duration_s, float) * np.asarray(cores, float)
    if stable_cs <= 0 or key.size == 0:
        return float("inf")
    inside = np.clip(horizon_s - np.asarray(submit_s, float), 0.0, None)
    work = np.asarray(cores, float) * np.minimum(np.asarray(duration_s, float), inside)
    rows = _top_rows(key, work, stable_cs)
    while True:
        order = _desc_order(key) if rows is None else rows[_desc_order(key[rows])]
        k, cum = key[order], np.cumsum(work[order])
        if rows is None or cum[-1] > stable_cs:
            break
        rows = None  # the cut's rows still fit the pool: every row
    last = np.r_[k[1:] != k[:-1], True]  # last row of each group of equal keys
    fits = last & (cum <= stable_cs)
    if not fits.any():
        return float(k[0])
    return float(k[np.flatnonzero(fits)[-1]])


#: :func:`_top_rows` estimates its cut from every this-many-th row
TOP_SAMPLE_STRIDE = 64


def _top_rows(key: np.ndarray, work: np.ndarray, stable_cs: float) -> np.ndarray | None:
    """The rows (ascending) with ``key`` at or above a cut above which the work likely exceeds ``stable_cs``
    by 10 % (estimated from every :data:`TOP_SAMPLE_STRIDE`-th row), or None (every row): a small workload,
    some work negative or NaN, no such cut, or a cut that keeps half the rows or more."""
    if key.size < 8 * TOP_SAMPLE_STRIDE or not work.min() >= 0.0:
        return None
    sk, sw = key[::TOP_SAMPLE_STRIDE], work[::TOP_SAMPLE_STRIDE]
    so = np.argsort(-sk)
    reach = np.flatnonzero(np.cumsum(sw[so]) * TOP_SAMPLE_STRIDE > 1.1 * stable_cs)
    if reach.size == 0:
        return None
    rows = np.flatnonzero(key >= sk[so[reach[0]]])
    return rows if 2 * rows.size < key.size else None


def _desc_order(key: np.ndarray) -> np.ndarray:
    """``np.argsort(-key, kind="stable")`` (largest first, equal keys in input order), the same permutation
    in a fraction of its time: numpy's unstable sort (vectorized, 5× faster on 1.3M floats), then each run of
    equal keys put back in input order. A key with NaN takes the stable sort itself."""
    if np.isnan(key).any():
        return np.argsort(-key, kind="stable")
    order = np.argsort(-key)
    k = key[order]
    eq = k[1:] == k[:-1]  # position i + 1 holds the same key as position i
    if eq.any():
        pos = np.flatnonzero(np.r_[eq, False] | np.r_[False, eq])  # the positions in a run of equal keys
        # each one's run, numbered in sorted order: a run starts where the key differs from the one before
        run = np.cumsum(np.r_[True, ~eq[pos[1:] - 1]])
        rows = order[pos]
        order[pos] = rows[np.lexsort((rows, run))]
    return order


def change_period_s(time_s: np.ndarray, machines_alive: np.ndarray, min_period_s: float = 60.0) -> float:
    """The change period of a machines-alive trace without a stated one: the greatest common divisor of the
    times (whole seconds) at which the value changes, so every change falls on a period boundary (a
    period whose value repeats is no change and does not break the grid). ValueError when the trace never
    changes, changes off whole seconds, or on no grid of at least ``min_period_s`` (irregular changes)."""
    t = np.asarray(time_s, np.float64)
    alive = np.asarray(machines_alive)
    ch = t[np.r_[False, alive[1:] != alive[:-1]]]
    if ch.size == 0:
        raise ValueError(
            "capacity trace never changes: IAS cannot infer its change period for H2; give period_s"
        )
    whole = np.round(ch)
    period = float(np.gcd.reduce(whole.astype(np.int64)))
    if np.abs(ch - whole).max() > 1e-6 or period < min_period_s:
        raise ValueError(
            f"capacity trace has no change period (its changes lie on no grid of whole seconds of at least "
            f"{min_period_s:g} s): IAS cannot align H2; give period_s"
        )
    return period


def h2_period(trace: CapacityTrace, period_s: float = -1.0) -> float | None:
    """H2's change period: ``period_s`` if > 0, the trace's own, else inferred (:func:`change_period_s`);
    None for a trace that never changes (H2 then holds nothing). ValueError as :func:`change_period_s`."""
    if period_s > 0:
        return float(period_s)
    if trace.period_s:
        return float(trace.period_s)
    alive = np.asarray(trace.machines_alive)
    if not (alive[1:] != alive[:-1]).any():
        return None
    return change_period_s(trace.time_s, alive)


def h1_split(problem: Problem, p: IASParams) -> tuple[int, float]:
    """H1's partition for ``problem``: (stable machines ``floor(machines × lb)``, long-job threshold in
    core-seconds: ``long_job_thresh`` if ≥ 0, else by ``h1_threshold``). Jobs with ``duration × cores`` at or
    above the threshold run on machines ``[0, stable)``, the others on ``[stable, machines)``."""
    machines, dur, cores = problem.platform.machines, problem.duration_s, problem.cores
    lb = p.lb if p.lb >= 0 else problem.capacity.machines_alive.min() / machines
    stable = int(np.floor(machines * lb))
    if p.long_job_thresh >= 0:
        return stable, float(p.long_job_thresh)
    if p.h1_threshold == "p90":
        return stable, float(np.percentile(dur * cores, 90))
    cap_cs = stable * problem.platform.cores * problem.horizon_s
    return stable, fit_threshold(problem.submit_s, dur, cores, problem.horizon_s, cap_cs)


def trailing_models(
    intervals: pl.DataFrame, horizon_s: float, window_s: float, refit_s: float
) -> list[IntervalModel]:
    """Model k is fitted at time k·refit_s on what was observable in [k·refit_s − window_s, k·refit_s)."""
    models = [IntervalModel(np.array([]), np.array([]), 0, 0.0)]  # epoch 0: no history yet
    s = intervals["start_s"].to_numpy()
    e = intervals["end_s"].to_numpy()
    rc = intervals["right_censored"].to_numpy()
    for k in range(1, int(np.ceil(horizon_s / refit_s))):
        now = k * refit_s
        ws = max(0.0, now - window_s)
        sel = (s < now) & (e > ws)  # started before now and overlaps the window
        if not sel.any():
            models.append(models[-1])
            continue
        start, end = s[sel], e[sel]
        observed = (end <= now) & ~rc[sel]
        length = np.minimum(end, now) - start
        entry = np.maximum(ws - start, 0.0)
        keep = length > entry
        if not (observed & keep).any():
            models.append(models[-1])
            continue
        models.append(IntervalModel.fit(length[keep], observed[keep], entry_s=entry[keep]))
    return models


class IAS(Dispatched):
    Params = IASParams
    warm_imports = FIT_MODULES  # it fits survival models
    description = (
        "Interval-Aware Scheduler (H1 + H2 + H4; any of H1–H4 by name): big jobs on stable machines, starts "
        "aligned to capacity changes, and admitted by the machine interval's survival odds"
    )
    label = "IAS"
    warm = True
    timed_admission = True  # PRED_IAS
    auto_defaults = {  # noqa: RUF012 (read only)
        "lb": "the trace's minimum machines alive / machines",
        "long_job_thresh": "by h1_threshold: fit = long jobs fill the stable machines, p90 = P90 of duration × cores",
        "period_s": "the trace's change period, else 3600",
    }

    def __init__(self, name: str, heuristics: tuple[str, ...]) -> None:
        self.name = name
        self.heuristics = heuristics

    def admission(self, problem: Problem, p: IASParams) -> Admission:
        require_machines_alive(problem, self.name)
        trace = problem.capacity
        n, machines = len(problem.submit_s), problem.platform.machines
        dur, cores = problem.duration_s, problem.cores
        h2 = "h2" in self.heuristics
        period = h2_period(trace, p.period_s) if h2 else None
        if period is None:  # no H2, or a trace that never changes (H2 has no change to align to)
            h2 = False
            period = p.period_s if p.period_s > 0 else (trace.period_s or 3600.0)  # paces literal re-tries
        lo = np.zeros(n, np.int64)
        hi = np.full(n, machines, np.int64)
        flags = np.zeros(n, np.int8)
        small = np.ones(n, dtype=bool)
        h1 = "h1" in self.heuristics
        if h1 and p.no_floor == "drop-h1" and h1_split(problem, p)[0] == 0:
            h1 = False  # no stable floor: the other heuristics judge every job
        if h1:
            stable, thresh = h1_split(problem, p)
            big = dur * cores >= thresh
            hi[big] = stable
            lo[~big] = stable
            small = ~big
        if h2:
            flags[small] |= H2_FLAG
        if "h3" in self.heuristics:
            flags[small] |= H3_FLAG
        if "h4" in self.heuristics:
            flags[small] |= H4_FLAG if p.h4_reading == "text" else H4_LITERAL_FLAG
        models, epoch = None, 0.0
        if "h3" in self.heuristics or "h4" in self.heuristics:
            iv = extract_intervals(trace)
            pool = p.survival_pool if p.survival_pool != "auto" else ("variable" if h1 else "all")
            if pool == "variable":
                iv = iv.filter(pl.col("machine") >= int(trace.machines_alive.min()))
            if iv.height == 0:  # no machine is ever on: nothing survives (nothing can run anyway)
                models = [IntervalModel(np.array([0.0]), np.array([0.0]), 0, 0.0)]
            elif p.history == "full":
                # machines on since t = 0 count from 0: the engine measures their uptime from 0 as well,
                # and leaving them out would make always-on machines look doomed (S = 0 past the data)
                models = [IntervalModel.from_intervals(iv, include_left_censored=True)]
            else:
                epoch = p.refit_h * 3600.0
                models = trailing_models(iv, trace.horizon_s, p.window_h * 3600.0, epoch)
        return Admission(
            PRED_IAS,
            lo,
            hi,
            flags,
            period,
            1.0 - p.aggressiveness if p.h4_reading == "text" else p.aggressiveness,
            float(np.percentile(dur, 90)),
            models,
            epoch,
        )

    def declare(self, problem: Problem, params: IASParams, seed: int) -> Compiled:
        return Compiled(params.termination, self.admission(problem, params))


def _resolve(name: str) -> IAS | None:
    if name == "ias":
        return IAS("ias", ("h1", "h2", "h4"))
    if not name.startswith("ias-"):
        return None
    parts = tuple(sorted(set(name[4:].split("+"))))
    if not parts or any(x not in ALL_H for x in parts):
        raise KeyError(f"unknown IAS combination {name!r}: use ias-<h1|h2|h3|h4>[+…]")
    return IAS(name, parts)


register_family("ias", _resolve, examples=["ias", "ias-h1", "ias-h2", "ias-h3", "ias-h4", "ias-h1+h3"])
