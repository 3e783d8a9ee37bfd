"""``ias-general``: varcap's extension of the Interval-Aware Scheduler — not the thesis' algorithm.

It keeps IAS's intent (paper 000 §6: use what is known about machine intervals to avoid starting work that
will be killed) and drops the parts of Algorithms 1, 2 and 5 that make IAS lose that intent off the
thesis' platform. Each choice removes a cause, and each has a setting that reverts it alone (the isolating
runs of :mod:`studies.thesis.general`):

* ``placement=any`` (default; ``h1`` reverts): no strict partition. Every job may run on every machine;
  the engine's pass goes through the queue front to back and puts each job on the lowest-index machine
  that admits it, so the always-on machines (the lowest indices under LIFO) are tried first and the
  earliest waiting job gets a freed always-on machine first. A short job uses an idle always-on machine
  when no job ahead of it in the queue can (§6.1.1's prose: "schedule as many big jobs as possible on the
  … stable resources"; Algorithm 1 also bars small jobs from them), and no job is barred from the
  variable machines, so there is no ``fit`` cliff (offered work at most the always-on pool made every job
  "big" and left the variable capacity idle). ``h1`` is IAS's partition with its threshold and ``lb``.
* ``risk=blind`` (default; ``median`` and ``fixed`` revert): a job starts on a machine only if the
  machine's current interval, given its uptime, outlives the job with probability
  ``S(u + d) / S(u) ≥ max(½, b)``. ½: the interval more likely outlives the job than not. ``b``
  (:func:`blind_survival`) is the probability that a job of the workload started *blind* — at a random
  instant of a variable machine's on-time, as a placer that ignores intervals starts it — completes:
  a start less likely to complete than that adds kills against First-Fit, whatever its odds against ½.
  Where intervals are long against the jobs, ``b`` is well above ½ (0.75 and 0.85 on the two generated
  instances where the median alone cut no kills: it admitted starts killed with probability up to ½, two
  to three times a blind start's); where they are short, ``b`` is below ½ and the median decides. ``median`` is the bar ½ alone;
  ``fixed`` is H4's ``p_survive ≥ 1 − A`` with ``aggressiveness``. An always-on machine's interval never
  ends, so it admits every job. ``own`` (a reading) bars each job at its own blind start's odds,
  ``max(½, A(d) / A(0))`` (:func:`own_blind_survival`): ``b`` is their average over the workload, set by its
  many short jobs, which on the thesis' Zipf and Azure set-ups closes the variable machines to jobs of a few
  hours (docs/ias-general.md); ``own`` costs CPU, as the machines' pruning bounds then use ½.
* ``survival=machine`` (default; ``pooled`` reverts to one curve over the variable machines, as IAS's
  ``survival_pool=variable``): each machine's survival curve comes from its own intervals where they are
  informative — at least :data:`MIN_EVENTS` observed interval ends, so the Kaplan–Meier estimate near ½
  has a standard error of at most 0.1 (√(½·½/25)) — and from the variable machines' pooled curve
  otherwise. Under LIFO a machine's index fixes how often it turns off, which one pooled curve blurs.
* ``h2=variable`` (default; ``off`` and ``on`` revert): H2 (paper 000 §6.1.1, Algorithm 2) for jobs no
  longer than the change period, on the variable machines only: there such a job starts only if it ends
  before the next change (or at a change), on top of the survival test. Where the per-boundary hazard is
  below ½, the survival test alone admits a short job that crosses a change (First-Fit's kills of short
  jobs stay), while waiting at most one period makes it safe. IAS's H2 (``on``) also holds short jobs off
  the always-on machines, where no change can hurt them, which moves long jobs onto variable machines.

Like ``ias``'s default (``history=full``), the survival curves are fitted on the whole capacity trace (the
thesis' profiling assumption). H2's period is :func:`sim.policies.ias.h2_period`'s: a trace read from a file
needs one (inferred, or ``period_s``) unless ``h2=off``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from sim.bounds import Bound, bounded
from sim.capacity.intervals import FIT_MODULES, IntervalModel, extract_intervals
from sim.engine import H2_FLAG, H4_FLAG, PRED_IAS, Admission
from sim.engine.admission import H2_BANDED_FLAG
from sim.policies import Dispatched, register
from sim.policies.ias import IASParams, h1_split, h2_period
from sim.problem import Compiled, Problem, require_machines_alive

MIN_EVENTS = 25  # observed interval ends for a machine's own survival curve (S.E. ≤ 0.1 near S = ½)
MEDIAN = 0.5


@bounded(
    aggressiveness=Bound(0.0, 1.0),
    period_s=Bound(
        0.0, 1e9, "seconds", lo_open=True, auto="the trace's change period", step_s=1.0, what="periods"
    ),
)
@dataclass(frozen=True)
class IASGeneralParams:
    placement: str = "any"  # any | h1 (IAS's strict partition)
    # blind: S(u+d)/S(u) ≥ max(½, blind_survival) | own: ≥ max(½, the job's own blind_survival) | median: ≥ ½
    # | fixed: ≥ 1 − A (H4)
    risk: str = "blind"
    aggressiveness: float = 0.6  # read by risk=fixed only
    survival: str = "machine"  # machine (own curve where informative) | pooled (variable machines)
    h2: str = "variable"  # variable (H2 on the variable machines) | on (on every machine) | off
    period_s: float = -1.0  # H2's period (< 0: the trace's, or inferred)
    termination: str = "lifo"

    def __post_init__(self) -> None:
        choices = {
            "placement": ("any", "h1"),
            "risk": ("blind", "own", "median", "fixed"),
            "survival": ("machine", "pooled"),
            "h2": ("variable", "on", "off"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)} (got {getattr(self, name)!r})")
        if not 0.0 <= self.aggressiveness <= 1.0:
            raise ValueError("aggressiveness must lie in [0, 1]")


def _never_on() -> IntervalModel:
    return IntervalModel(np.array([0.0]), np.array([0.0]), 0, 0.0)


def blind_survival(model: IntervalModel, durations_s: np.ndarray) -> float:
    """The probability that a job of ``durations_s`` (drawn uniformly) completes when started at a random
    instant of an interval of ``model``: the uptime of a random on-instant has density ``S(u) / A(0)``
    (renewal), so it is ``E_d[A(d)] / A(0)`` with ``A(x) = ∫_x S`` (restricted to the last observed time,
    as :meth:`IntervalModel.mean_remaining`). 0 for no durations or a curve with no area."""
    d = np.asarray(durations_s, dtype=np.float64)
    a0 = float(model.mean_remaining(0.0) * model.survival(0.0))
    if d.size == 0 or a0 <= 0.0:
        return 0.0
    return float(np.mean(model.mean_remaining(d) * model.survival(d)) / a0)


def own_blind_survival(model: IntervalModel, durations_s: np.ndarray) -> np.ndarray:
    """Per job: the probability that it completes when started at a random instant of an interval of
    ``model`` (:func:`blind_survival` of that job alone), ``A(d) / A(0)``; zeros for a curve with no area."""
    d = np.asarray(durations_s, dtype=np.float64)
    a0 = float(model.mean_remaining(0.0) * model.survival(0.0))
    if a0 <= 0.0:
        return np.zeros(d.shape)
    return np.asarray(model.mean_remaining(d) * model.survival(d), dtype=np.float64) / a0


def machine_models(
    intervals: pl.DataFrame, machines: int, stable: int, per_machine: bool, horizon_s: float
) -> tuple[list[IntervalModel], np.ndarray]:
    """Survival models and the band (model index) of each machine: band 0 the always-on machines (their
    one interval never ends: every job survives), band 1 the variable machines' pooled curve, then one
    band per variable machine with at least :data:`MIN_EVENTS` observed interval ends (``per_machine``)."""
    always_on = IntervalModel(np.array([]), np.array([]), 0, float(horizon_s))
    variable = intervals.filter(pl.col("machine") >= stable)
    pooled = (
        IntervalModel.from_intervals(variable, include_left_censored=True) if variable.height else _never_on()
    )
    models = [always_on, pooled]
    band = np.where(np.arange(machines) < stable, 0, 1).astype(np.int64)
    if per_machine and variable.height:
        ends = variable.filter(~pl.col("right_censored")).group_by("machine").len()
        for m in sorted(ends.filter(pl.col("len") >= MIN_EVENTS)["machine"].to_list()):
            own = variable.filter(pl.col("machine") == m)
            band[m] = len(models)
            models.append(IntervalModel.from_intervals(own, include_left_censored=True))
    return models, band


class IASGeneral(Dispatched):
    name = "ias-general"
    Params = IASGeneralParams
    warm_imports = FIT_MODULES
    description = (
        "varcap's extension of IAS (not the thesis' algorithm): every job on every machine, always-on first; "
        "a job starts where the machine's interval more likely outlives it than not and than a blind start's; "
        "H2 on variable machines"
    )
    label = "IAS-general"
    warm = True
    timed_admission = True  # PRED_IAS
    auto_defaults = {"period_s": "the trace's change period, else inferred from its change times"}  # noqa: RUF012

    def admission(self, problem: Problem, p: IASGeneralParams) -> Admission:
        """The compiled admission rules of ``ias-general`` with ``p`` (ValueError as ``ias``'s H2 period
        for a trace without one unless ``h2=off``)."""
        require_machines_alive(problem, self.name)
        trace = problem.capacity
        n, machines = len(problem.submit_s), problem.platform.machines
        dur, cores = problem.duration_s, problem.cores
        stable = int(trace.machines_alive.min())  # always on under LIFO: never above the trace's minimum
        lo = np.zeros(n, np.int64)
        hi = np.full(n, machines, np.int64)
        judged = np.ones(n, dtype=bool)
        if p.placement == "h1":
            ias = IASParams(aggressiveness=p.aggressiveness)
            stable_h1, thresh = h1_split(problem, ias)
            big = dur * cores >= thresh
            hi[big] = stable_h1
            lo[~big] = stable_h1
            judged = ~big
        flags = np.where(judged, H4_FLAG, 0).astype(np.int8)
        period = None
        if p.h2 != "off":
            period = h2_period(trace, p.period_s)
            if period is not None:
                flags[judged] |= H2_FLAG if p.h2 == "on" else H2_BANDED_FLAG
        iv = extract_intervals(trace)
        if iv.height == 0:
            models, band = [_never_on()], np.zeros(machines, np.int64)
        else:
            models, band = machine_models(iv, machines, stable, p.survival == "machine", trace.horizon_s)
        job_theta = None
        if p.risk == "fixed":
            theta = 1.0 - p.aggressiveness
        elif p.risk == "own" and iv.height:
            # each job against its own blind start (models[1]: the pooled curve a blind start lands on);
            # the machines' pruning bounds use ½, below every job's bar
            theta = MEDIAN
            job_theta = np.maximum(MEDIAN, own_blind_survival(models[1], dur))
        elif p.risk == "blind" and iv.height:
            # models[1]: the variable machines' pooled curve (a blind start lands on any of them)
            theta = max(MEDIAN, blind_survival(models[1], dur))
        else:
            theta = MEDIAN
        return Admission(
            PRED_IAS,
            lo,
            hi,
            flags,
            period if period is not None else 3600.0,
            theta,
            float(np.percentile(dur, 90)) if n else 0.0,
            [models],
            0.0,
            band_of_machine=band,
            job_thresh=job_theta,
        )

    def declare(self, problem: Problem, params: IASGeneralParams, seed: int) -> Compiled:
        return Compiled(params.termination, self.admission(problem, params))


register(IASGeneral())
