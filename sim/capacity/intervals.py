"""Machine intervals under LIFO termination, trace characterization, and survival models.

Under LIFO the machines alive at ``t`` are ``0 … n(t)−1``: when capacity drops the highest-index alive
machines go off, when it rises the lowest-index off machines come on. An *interval* is a maximal stretch
of time a machine is on. Intervals already running at time 0 are left-censored (their start is unknown),
those still running at the horizon right-censored.

:class:`IntervalModel` wraps a Kaplan–Meier fit of interval length (statsmodels ``SurvfuncRight``, right
censoring and optional left truncation) and answers, vectorized and in O(log n) per query:
``p_survive(u, d) = S(u + d) / S(u)``, ``mean_remaining(u)`` (restricted to the last observed time) and
``quantile_remaining(u, q)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import polars as pl

from sim.capacity.trace import CapacityTrace

#: what :meth:`IntervalModel.fit` imports (statsmodels, scipy.stats, pandas: ~1 s): imported only when a
#: model is fitted, or ahead of time by a warm worker process (``Policy.warm_imports``)
FIT_MODULES = ("statsmodels.duration.survfunc",)

INTERVAL_COLUMNS = ["machine", "start_s", "end_s", "length_s", "left_censored", "right_censored"]


def extract_intervals(trace: CapacityTrace) -> pl.DataFrame:
    """All machine intervals of ``trace`` under LIFO termination (see module doc)."""
    t = trace.time_s[trace.time_s < trace.horizon_s]
    n = trace.machines_alive[: len(t)]
    start = np.full(trace.machines, np.nan)
    ms, ss, es = [], [], []
    prev = 0
    for k in range(len(t)):
        cur = int(n[k])
        if cur > prev:
            start[prev:cur] = t[k]
        elif cur < prev:
            ms.append(np.arange(cur, prev))
            ss.append(start[cur:prev].copy())
            es.append(np.full(prev - cur, t[k]))
            start[cur:prev] = np.nan
        prev = cur
    if prev > 0:
        ms.append(np.arange(0, prev))
        ss.append(start[:prev].copy())
        es.append(np.full(prev, trace.horizon_s))
    m = np.concatenate(ms) if ms else np.array([], dtype=np.int64)
    s = np.concatenate(ss) if ss else np.array([])
    e = np.concatenate(es) if es else np.array([])
    df = pl.DataFrame(
        {
            "machine": m.astype(np.int64),
            "start_s": s,
            "end_s": e,
            "length_s": e - s,
            "left_censored": s <= 0.0,
            "right_censored": e >= trace.horizon_s,
        }
    )
    return df.sort(["machine", "start_s"])


def on_time_per_machine(trace: CapacityTrace) -> np.ndarray:
    """Seconds each machine is on over ``[0, horizon)`` (independent of interval extraction)."""
    t = np.append(trace.time_s[trace.time_s < trace.horizon_s], trace.horizon_s)
    n = trace.machines_alive[: len(t) - 1]
    dt = np.diff(t)
    idx = np.arange(trace.machines)
    return ((n[None, :] > idx[:, None]) * dt[None, :]).sum(axis=1)


def characterize(trace: CapacityTrace) -> dict[str, float]:
    """Mean, CV, min/max, dynamic range (fractions of machines), change count, step-size distribution and
    realized change frequency of a trace."""
    t = np.append(trace.time_s[trace.time_s < trace.horizon_s], trace.horizon_s)
    n = trace.machines_alive[: len(t) - 1].astype(float)
    w = np.diff(t)
    mean = float(np.sum(n * w) / np.sum(w))
    sd = float(np.sqrt(np.sum(w * (n - mean) ** 2) / np.sum(w)))
    d = np.diff(n)
    steps = np.abs(d[d != 0]) / trace.machines
    hours = trace.horizon_s / 3600.0
    return {
        "mean_frac": mean / trace.machines,
        "cv": sd / mean if mean > 0 else float("nan"),
        "min_frac": float(n.min() / trace.machines),
        "max_frac": float(n.max() / trace.machines),
        "dynamic_range": float((n.max() - n.min()) / trace.machines),
        "change_count": int((d != 0).sum()),
        "up_count": int((d > 0).sum()),
        "down_count": int((d < 0).sum()),
        "step_mean_frac": float(steps.mean()) if steps.size else 0.0,
        "step_p50_frac": float(np.median(steps)) if steps.size else 0.0,
        "step_max_frac": float(steps.max()) if steps.size else 0.0,
        "realized_changes_per_hour": float((d != 0).sum() / hours) if hours > 0 else 0.0,
    }


def machine_state_changes(trace: CapacityTrace) -> pl.DataFrame:
    """Per-machine on/off changes (``machine, time_s, kind``) implied by LIFO; input for inter-change times."""
    iv = extract_intervals(trace)
    on = iv.filter(~pl.col("left_censored")).select(
        "machine", pl.col("start_s").alias("time_s"), pl.lit("on").alias("kind")
    )
    off = iv.filter(~pl.col("right_censored")).select(
        "machine", pl.col("end_s").alias("time_s"), pl.lit("off").alias("kind")
    )
    return pl.concat([on, off]).sort(["machine", "time_s"])


def interval_inter_change_times(intervals: pl.DataFrame) -> pl.DataFrame:
    """:func:`inter_change_times` of :func:`machine_state_changes` from a trace's intervals (as
    :func:`extract_intervals` returns them, by machine and start), the same rows without extracting the
    intervals a second time: a machine's changes are its intervals' uncensored starts and ends in turn."""
    n = intervals.height
    m = intervals["machine"].to_numpy()
    t = np.empty(2 * n)
    t[0::2] = intervals["start_s"].to_numpy()
    t[1::2] = intervals["end_s"].to_numpy()
    keep = np.empty(2 * n, np.bool_)
    keep[0::2] = ~intervals["left_censored"].to_numpy()
    keep[1::2] = ~intervals["right_censored"].to_numpy()
    mm, t = np.repeat(m, 2)[keep], t[keep]
    same = np.flatnonzero(mm[1:] == mm[:-1]) + 1
    return pl.DataFrame(
        {"machine": mm[same].astype(np.int64), "time_s": t[same], "gap_s": t[same] - t[same - 1]}
    )


def inter_change_times(changes: pl.DataFrame) -> pl.DataFrame:
    """Time between consecutive changes of the same machine (``machine, time_s, gap_s``), SlackSched's
    input (paper 002 §3.1.1). ``changes`` has ``machine, time_s`` (any further columns are ignored)."""
    return (
        changes.sort(["machine", "time_s"])
        .with_columns((pl.col("time_s") - pl.col("time_s").shift(1).over("machine")).alias("gap_s"))
        .filter(pl.col("gap_s").is_not_null())
        .select("machine", "time_s", "gap_s")
    )


def bigram_probabilities(changes: pl.DataFrame) -> dict[str, float]:
    """For per-machine core traces (``machine, time_s, cores``): P(shrink | previous change was a growth) and
    P(shrink | previous change was a shrink), over consecutive changes of the same machine."""
    c = (
        changes.sort(["machine", "time_s"])
        .with_columns((pl.col("cores") - pl.col("cores").shift(1).over("machine")).alias("delta"))
        .filter(pl.col("delta").is_not_null() & (pl.col("delta") != 0))
    )
    c = c.with_columns(pl.col("delta").shift(1).over("machine").alias("prev")).filter(
        pl.col("prev").is_not_null()
    )
    after_g = c.filter(pl.col("prev") > 0)
    after_s = c.filter(pl.col("prev") < 0)
    return {
        "p_shrink_after_growth": float((after_g["delta"] < 0).mean()) if after_g.height else float("nan"),
        "p_shrink_after_shrink": float((after_s["delta"] < 0).mean()) if after_s.height else float("nan"),
        "n_after_growth": after_g.height,
        "n_after_shrink": after_s.height,
    }


@dataclass(frozen=True)
class IntervalModel:
    """Kaplan–Meier survival of interval length as a right-continuous step function.

    ``times`` are the distinct event times (ascending) and ``surv`` the survival just after each, so
    ``S(x) = surv[k]`` for ``times[k] ≤ x < times[k+1]`` and ``S(x) = 1`` before the first event.
    """

    times: np.ndarray
    surv: np.ndarray
    n: int
    max_time: float

    @classmethod
    def fit(
        cls,
        length_s: np.ndarray,
        observed: np.ndarray,
        entry_s: np.ndarray | None = None,
    ) -> IntervalModel:
        """Fit from lengths, an event flag (False = right-censored) and optional left-truncation ages."""
        length_s = np.asarray(length_s, dtype=np.float64)
        if length_s.size == 0:
            raise ValueError("cannot fit a survival model on zero intervals")
        status = np.asarray(observed, dtype=np.int64)
        if not status.any():
            return cls(np.array([]), np.array([]), int(length_s.size), float(length_s.max()))
        from statsmodels.duration.survfunc import SurvfuncRight  # ~1 s of imports (FIT_MODULES)

        sf = SurvfuncRight(length_s, status, entry=entry_s)
        return cls(
            np.asarray(sf.surv_times, float),
            np.asarray(sf.surv_prob, float),
            int(length_s.size),
            float(length_s.max()),
        )

    @classmethod
    def from_intervals(cls, intervals: pl.DataFrame, include_left_censored: bool = False) -> IntervalModel:
        """Fit from :func:`extract_intervals` output. Left-censored intervals (start unknown) are left out
        unless asked for, in which case they count from time 0."""
        iv = intervals if include_left_censored else intervals.filter(~pl.col("left_censored"))
        return cls.fit(iv["length_s"].to_numpy(), ~iv["right_censored"].to_numpy())

    # ---------------------------------------------------------------------------------------- queries
    def survival(self, x: np.ndarray | float) -> np.ndarray:
        """S(x), vectorized (O(log n) per value)."""
        x = np.asarray(x, dtype=np.float64)
        if self.times.size == 0:
            return np.ones_like(x)
        k = np.searchsorted(self.times, x, side="right") - 1
        return np.where(k >= 0, self.surv[np.clip(k, 0, None)], 1.0)

    def p_survive(self, uptime_s: np.ndarray | float, duration_s: np.ndarray | float) -> np.ndarray:
        """P(R ≥ d | U = u) = S(u + d) / S(u); 0 where S(u) = 0."""
        su = self.survival(uptime_s)
        sud = self.survival(np.asarray(uptime_s, dtype=np.float64) + np.asarray(duration_s, dtype=np.float64))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(su > 0, sud / su, 0.0)

    def _tail_area(self) -> tuple[np.ndarray, np.ndarray]:
        """Knots (0, times…, max_time) and ∫_{knot}^{max_time} S(x) dx at each knot."""
        knots = np.concatenate([[0.0], self.times[self.times < self.max_time], [self.max_time]])
        vals = self.survival(knots[:-1])
        seg = vals * np.diff(knots)
        tail = np.concatenate([np.cumsum(seg[::-1])[::-1], [0.0]])
        return knots, tail

    @cached_property
    def _tail(self) -> tuple[np.ndarray, np.ndarray]:
        return self._tail_area()

    def mean_remaining(self, uptime_s: np.ndarray | float) -> np.ndarray:
        """E[R | U = u] restricted to the last observed time: ∫_u^{max} S(x) dx / S(u)."""
        knots, tail = self._tail
        u = np.clip(np.asarray(uptime_s, dtype=np.float64), 0.0, self.max_time)
        k = np.clip(np.searchsorted(knots, u, side="right") - 1, 0, len(knots) - 2)
        area = tail[k + 1] + self.survival(u) * (knots[k + 1] - u)
        su = self.survival(u)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(su > 0, area / su, 0.0)

    def quantile_remaining(self, uptime_s: np.ndarray | float, q: float) -> np.ndarray:
        """Smallest r with P(R ≤ r | U = u) ≥ q (∞ if the curve never falls that far)."""
        u = np.asarray(uptime_s, dtype=np.float64)
        target = (1.0 - q) * self.survival(u)
        # surv is non-increasing: first index where surv <= target
        neg = -self.surv
        k = np.searchsorted(neg, -target, side="left")
        k = np.maximum(k, np.searchsorted(self.times, u, side="right"))
        ok = k < self.times.size
        r = (
            np.where(ok, self.times[np.clip(k, 0, max(self.times.size - 1, 0))] - u, np.inf)
            if self.times.size
            else np.full_like(u, np.inf)
        )
        return np.maximum(r, 0.0)

    def curve(self) -> pl.DataFrame:
        return pl.DataFrame({"time_s": self.times, "survival": self.surv})

    def conditional_table(self, uptimes_s: np.ndarray, durations_s: np.ndarray) -> pl.DataFrame:
        """``p_survive`` on the grid uptimes × durations (long format)."""
        u, d = np.meshgrid(np.asarray(uptimes_s, float), np.asarray(durations_s, float), indexing="ij")
        return pl.DataFrame(
            {
                "uptime_s": u.ravel(),
                "duration_s": d.ravel(),
                "p_survive": self.p_survive(u.ravel(), d.ravel()),
            }
        )


@dataclass(frozen=True)
class BandedIntervalModel:
    """One :class:`IntervalModel` per machine-index band (LIFO risk grows with the index)."""

    edges: np.ndarray  # band b covers machines [edges[b], edges[b+1])
    models: tuple[IntervalModel, ...]

    @classmethod
    def from_intervals(cls, intervals: pl.DataFrame, machines: int, bands: int = 10) -> BandedIntervalModel:
        edges = np.linspace(0, machines, bands + 1).round().astype(np.int64)
        models = []
        for b in range(bands):
            part = intervals.filter(pl.col("machine").is_between(edges[b], edges[b + 1] - 1))
            if part.height == 0:  # never on: nothing survives
                models.append(IntervalModel(np.array([0.0]), np.array([0.0]), 0, 0.0))
                continue
            # a band that is always on has only left-censored intervals: count them from time 0
            only_left = part.filter(~pl.col("left_censored")).height == 0
            models.append(IntervalModel.from_intervals(part, include_left_censored=only_left))
        return cls(edges, tuple(models))

    def band_of(self, machine: np.ndarray | int) -> np.ndarray:
        return np.clip(
            np.searchsorted(self.edges, np.asarray(machine), side="right") - 1, 0, len(self.models) - 1
        )

    def for_machine(self, machine: int) -> IntervalModel:
        return self.models[int(self.band_of(machine))]
