"""``ias-forecast``: the Interval-Aware Scheduler with machine-interval ends predicted from an as-of forecast
of the grid signal.

A carbon-budget capacity (:func:`sim.capacity.generators.budget_trace`) is a rule: in hour ``h``,
``rint(clip(B / y[h], floor, 1) × machines)`` machines are on, the lowest indices first (LIFO). Applied to
the ``method`` forecast issued at the start of hour ``e`` (:func:`sim.forecast.forecast_matrix`: reads only
the hours before ``e``), it gives the predicted capacity of hours ``e+1 … e+H−1`` (hour ``e`` itself is
the capacity on now), and so, for machine ``m`` on now, its *predicted interval end*: the first hour whose
predicted capacity is ``≤ m``, or "not within the horizon".

IAS (``ias``: H1 + H2 + H4, :mod:`sim.policies.ias`, reused as it is) judges a job of length ``d`` on a
machine of uptime ``u`` by its survival model, ``S(u+d)/S(u) ≥ 1 − A``. ``ias-forecast`` hands the same
engine, per hour and per variable machine, a survival curve made of the forecast where the forecast is
*confident* in that hour:

* predicted end ``E`` within the horizon: the point mass ``S(x) = 1`` for ``x < E − up_since``, 0 after,
  so a job is admitted iff it ends before ``E``;
* no end within the horizon: ``S(x) = 1`` up to the horizon's end ``L_H``, then the survival model
  conditioned on having lasted ``L_H`` (``S(x)/S(L_H)``), so jobs longer than the forecast sees are judged
  by the survival model, knowing the machine outlasts the horizon;

and the survival model of ``ias`` otherwise (not confident, no forecast yet, a machine off now).

**Confident** (:func:`confidence_mask`): in hour ``e`` the forecast is trusted iff, over the forecasts issued
in the trailing ``conf_window_h`` hours whose whole horizon had ended by ``e`` (issue ``i ≤ e − H``: every
value they are scored on is known at ``e``, nothing later is read), the share of (issue, variable machine
on at the issue) whose predicted end did not fall *after* the actual end — both capped at the horizon —
is at least ``confidence`` (default 0.9: a forecast-admitted job outlives its machine at most one time in
ten, judged on the forecast's own recent record). The machines scored are those the forecast models
replace, ``[stable, machines)`` with ``stable`` IAS's H1 split (the trace's minimum machines on).
``confidence = 0`` trusts every forecast that exists (the perfect-confidence rule of the tests);
``confidence > 1`` never does (``ias`` exactly).

Needs the run's carbon signal (``Problem.carbon``: the series the capacity was built from; the scenario
runner hands it for a carbon_budget capacity) and a carbon_budget capacity trace with hour-aligned steps.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from sim.bounds import Bound, bounded
from sim.capacity.intervals import IntervalModel
from sim.forecast import METHODS, forecast_matrix
from sim.policies import Dispatched, register
from sim.policies.ias import IAS, IASParams, h1_split
from sim.problem import Compiled, Problem, require_machines_alive

HOUR = 3600.0


@bounded(
    horizon_h=Bound(2, 24, "hours"),
    confidence=Bound(0.0, math.inf, "(hit rate; > 1: never trusted)"),
    conf_window_h=Bound(0.0, 1e6, "hours", lo_open=True),
)
@dataclass(frozen=True)
class IASForecastParams(IASParams):
    method: str = "persist24"
    horizon_h: int = 24
    confidence: float = 0.9
    conf_window_h: float = 168.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.method not in METHODS:
            raise ValueError(f"ias-forecast: method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if not 2 <= self.horizon_h <= 24:
            raise ValueError(f"ias-forecast: horizon_h must lie in [2, 24], got {self.horizon_h}")
        if self.confidence < 0 or self.conf_window_h <= 0:
            raise ValueError("ias-forecast: confidence must be ≥ 0 and conf_window_h > 0")


def predicted_alive(f: np.ndarray, budget: float, floor: float, machines: int) -> np.ndarray:
    """The carbon-budget rule applied to forecast intensities ``f`` (any shape): machines on, as float
    (NaN where the forecast is NaN); a non-positive intensity is free power (every machine)."""
    f = np.asarray(f, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(f > 0, budget / np.where(f > 0, f, 1.0), 1.0)
    out = np.rint(np.clip(frac, floor, 1.0) * machines)
    return np.where(np.isfinite(f), out, np.nan)


def end_offsets(ahead: np.ndarray, machines: np.ndarray) -> np.ndarray:
    """Per row and machine: hours from the row's hour to the first of ``ahead[:, k]`` (capacity ``k + 1``
    hours later) that is ``≤ m``, i.e. when machine ``m`` is off; ``ahead.shape[1] + 1`` if none is.
    ``ahead``: (rows, H − 1); returns (rows, len(machines))."""
    q = np.minimum.accumulate(ahead, axis=1)  # non-increasing: machine m is off from the first q ≤ m on
    return 1 + (q[:, :, None] > machines[None, None, :]).sum(axis=1)


def confidence_mask(
    alive: np.ndarray, pred: np.ndarray, lo: int, confidence: float, window_h: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per hour ``e``: whether the forecast is confident then, and its trailing hit rate (NaN: nothing
    scored). ``alive[h]``: machines on in hour h (actual); ``pred[e, k]``: predicted machines on in hour
    ``e + k`` by the forecast issued at ``e`` (NaN rows: no forecast). Hour ``e`` reads only ``pred`` rows
    ``i ≤ e − H`` and ``alive`` hours ``< e``."""
    n, hz = pred.shape
    alive = np.asarray(alive, np.float64)
    ms = np.arange(lo, int(max(alive.max(initial=0), lo)) + 1)
    hits = np.zeros(n)
    scored = np.zeros(n)
    for i in range(max(0, n - hz + 1)):  # issue i is scored once its horizon has ended (at hour i + H)
        if not np.all(np.isfinite(pred[i])) or i + hz > len(alive):
            continue
        on = ms[ms < alive[i]]
        if on.size == 0:
            continue
        p = end_offsets(pred[i : i + 1, 1:], on)[0]
        a = end_offsets(alive[None, i + 1 : i + hz], on)[0]
        scored[i] = on.size
        hits[i] = np.sum(p <= a)
    ch, cs = np.r_[0.0, np.cumsum(hits)], np.r_[0.0, np.cumsum(scored)]
    e = np.arange(n)
    last = e - hz  # the latest issue whose horizon has ended by e: i + H ≤ e
    first = np.maximum(0, np.floor(e - window_h).astype(np.int64))
    top = np.clip(last + 1, 0, n)
    bot = np.minimum(first, top)
    s = cs[top] - cs[bot]
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(s > 0, (ch[top] - ch[bot]) / s, np.nan)
    trusted = (s > 0) & (rate >= confidence) if confidence > 0 else np.ones(n, bool)
    ok = trusted & np.all(np.isfinite(pred), axis=1)
    return ok, rate


class _Curve(IntervalModel):
    """An :class:`IntervalModel` whose tail areas are computed once: the same curve fills many (hour,
    machine) cells of the engine's model grid, which asks each cell for them."""

    @cached_property
    def _once(self) -> tuple[np.ndarray, np.ndarray]:
        return IntervalModel._tail_area(self)

    def _tail_area(self) -> tuple[np.ndarray, np.ndarray]:
        return self._once


def _curve(m: IntervalModel) -> _Curve:
    return m if isinstance(m, _Curve) else _Curve(m.times, m.surv, m.n, m.max_time)


def _point(length: float) -> IntervalModel:
    """Survival 1 below ``length``, 0 from it on (an interval known to end at ``length``)."""
    return _Curve(np.array([0.0, length]), np.array([1.0, 0.0]), 1, float(length))


def _outlasts(base: IntervalModel, lh: float) -> IntervalModel:
    """Survival 1 below ``lh``, then ``base`` conditioned on having lasted ``lh``."""
    s_lh = float(base.survival(np.array([lh]))[0]) if len(base.times) else 1.0
    if s_lh <= 0.0:
        return _point(lh)
    later = base.times > lh
    times = np.r_[0.0, base.times[later]]
    surv = np.r_[1.0, np.clip(base.surv[later] / s_lh, 0.0, 1.0)]
    return _Curve(times, surv, base.n, float(max(base.max_time, lh)))


def hourly_up_since(alive: np.ndarray, machines: int) -> np.ndarray:
    """``up[e, m]``: the start of machine m's current interval in hour e (LIFO: on iff ``m < alive[e]``),
    seconds; NaN while it is off."""
    up = np.full((len(alive), machines), np.nan)
    cur = np.full(machines, np.nan)
    m = np.arange(machines)
    prev = np.zeros(machines, bool)
    for e, a in enumerate(alive):
        on = m < a
        cur = np.where(on & ~prev, e * HOUR, np.where(on, cur, np.nan))
        up[e] = cur
        prev = on
    return up


def forecast_models(
    alive: np.ndarray,
    pred: np.ndarray,
    base: list[IntervalModel],
    base_epoch_s: float,
    lo: int,
    confident: np.ndarray,
) -> tuple[list[list[IntervalModel]], np.ndarray]:
    """Per hour ``e`` the survival model of each band — band 0: machines ``< lo`` and every machine where
    the forecast is not used (``base``'s model of that time); band ``1 + m − lo``: machine ``m ≥ lo`` — and
    the band of each machine. Hour ``e`` reads ``pred[e]``, ``alive[: e + 1]`` and ``confident[e]`` only."""
    n, hz = pred.shape
    top = int(np.max(alive, initial=0))
    nm = max(top, lo)
    up = hourly_up_since(alive, nm)
    ms = np.arange(lo, nm)
    band = np.r_[np.zeros(lo, np.int64), 1 + np.arange(nm - lo)]
    points: dict[float, IntervalModel] = {}
    tails: dict[tuple[int, float], IntervalModel] = {}
    grid: list[list[IntervalModel]] = []
    for e in range(n):
        b = base[min(int(e * HOUR // base_epoch_s), len(base) - 1)] if base_epoch_s > 0 else base[0]
        row = [b] * (1 + len(ms))
        if confident[e] and ms.size:
            ends = end_offsets(pred[e : e + 1, 1:], ms)[0]  # hours after e; hz: not within the horizon
            for x, m in enumerate(ms):
                if not m < alive[e]:
                    continue
                since = up[e, m]
                if ends[x] < hz:
                    length = (e + ends[x]) * HOUR - since
                    row[1 + x] = points.setdefault(length, _point(length))
                else:
                    lh = (e + hz) * HOUR - since
                    key = (id(b), lh)
                    if key not in tails:
                        tails[key] = _outlasts(b, lh)
                    row[1 + x] = tails[key]
        grid.append(row)
    return grid, band


class IASForecast(Dispatched):
    name = "ias-forecast"
    description = "IAS with machine-interval ends predicted from an as-of forecast of the grid signal (carbon-budget capacity)"
    label = "IAS-forecast"
    inputs = ("the grid's signal behind a carbon-budget capacity",)
    auto_defaults = IAS.auto_defaults
    Params = IASForecastParams
    warm_imports = IAS.warm_imports + ("statsmodels.tsa.statespace.sarimax",)

    def admission(self, problem: Problem, p: IASForecastParams):  # noqa: ANN201 - sim.engine.Admission
        """IAS's admission (H1 + H2 + H4) with the per-hour, per-machine forecast survival curves."""
        require_machines_alive(problem, self.name)
        trace, sig = problem.capacity, getattr(problem, "carbon", None)
        if sig is None:
            raise ValueError("policy 'ias-forecast' needs the run's carbon signal (a carbon_budget capacity)")
        if trace.generator != "carbon_budget" or "budget" not in trace.params:
            raise ValueError(f"policy 'ias-forecast' needs a carbon_budget capacity, got {trace.generator!r}")
        if np.any(np.mod(trace.time_s, HOUR) != 0):
            raise ValueError("policy 'ias-forecast' needs a capacity trace that changes on hour boundaries")
        adm = IAS(self.name, ("h1", "h2", "h4")).admission(problem, p)
        hours = int(np.ceil(problem.horizon_s / HOUR))
        idx = np.clip(np.searchsorted(trace.time_s, np.arange(hours) * HOUR, side="right") - 1, 0, None)
        alive = np.asarray(trace.machines_alive, np.float64)[idx]
        issues = np.minimum(sig.origin_h + np.arange(hours), len(sig.values))
        f = forecast_matrix(sig.values, issues, p.method, p.horizon_h)
        pred = predicted_alive(f, trace.params["budget"], trace.params.get("floor", 0.0), trace.machines)
        lo = h1_split(problem, p)[0]
        ok, _ = confidence_mask(alive, pred, lo, p.confidence, p.conf_window_h)
        base = [_curve(m) for m in adm.models or [IntervalModel(np.array([]), np.array([]), 0, 0.0)]]
        grid, band = forecast_models(alive, pred, base, adm.epoch_s, lo, ok)
        band = np.r_[band, np.zeros(trace.machines - len(band), np.int64)][: trace.machines]
        return dataclasses.replace(adm, models=grid, epoch_s=HOUR, band_of_machine=band)

    def declare(self, problem: Problem, params: IASForecastParams, seed: int) -> Compiled:
        return Compiled(params.termination, self.admission(problem, params))


register(IASForecast())
