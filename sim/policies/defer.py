"""``defer``: carbon-aware deferral with deadlines.

Every job may finish as late as ``submit + slack × duration``. At its submit time the policy reads the
``method`` forecast of the grid's intensity issued at the start of that hour (:mod:`sim.forecast`: an
as-of forecast, or ``oracle`` for perfect foresight) and holds the job until the start in
``[submit, submit + (slack − 1) × duration]`` — its submit or a later hour boundary — whose forecast mean
over the job's run is lowest (:func:`sim.forecast.best_starts`); from then on it is placed by First-Fit
under the capacity trace with LIFO termination, like ``ff`` (so a full platform or a kill can still make
it miss its deadline). Needs the run's carbon signal (``sim.simulate(..., carbon=CarbonSignal)``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from sim.bounds import Bound, bounded
from sim.forecast import METHODS, best_starts, forecast_matrix
from sim.metrics import EngineOutput
from sim.policies import Dispatched, register
from sim.problem import Problem, require_machines_alive, run_first_fit


@bounded(slack=Bound(1.0, 1e6, "× the job's duration"))
@dataclass(frozen=True)
class DeferParams:
    method: str = "persist24"
    slack: float = 1.5
    #: the intensity series a scenario runner hands the run (``<grid>:<source>:<YYYY-MM>`` of the exported
    #: sweep inputs, as a carbon_budget capacity names it; :func:`studies.sweep.run_scenario`)
    grid: str = ""
    signal: str = ""

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"defer: method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if not self.slack >= 1.0:
            raise ValueError(
                f"defer: slack must be ≥ 1 (deadline = submit + slack × duration), got {self.slack}"
            )


class _Released:
    """First-Fit over the jobs released at their chosen starts (the dispatcher's ``decl.loop.run(decl)``)."""

    def __init__(self, problem: Problem, seed: int) -> None:
        self.problem, self.seed, self.loop = problem, seed, self

    def run(self, _decl: object) -> EngineOutput:
        return run_first_fit(self.problem, "lifo", self.seed).output


def release_times(problem: Problem, params: DeferParams) -> np.ndarray:
    """Per job (input row order) the start the policy holds it until. ValueError without a carbon signal."""
    sig = getattr(problem, "carbon", None)
    if sig is None:
        raise ValueError("policy 'defer' needs the run's carbon signal (a carbon_budget capacity or a grid)")
    hours = int(np.ceil(problem.horizon_s / 3600.0)) + 1
    issues = np.minimum(sig.origin_h + np.arange(hours), len(sig.values))
    f = forecast_matrix(sig.values, issues, params.method)
    return best_starts(problem.submit_s, problem.duration_s, params.slack, f)


class Defer(Dispatched):
    name = "defer"
    description = "carbon-aware deferral: each job held to its forecast-cleanest start before submit + slack × duration, then First-Fit"
    label = "Defer"
    inputs = ("the grid's carbon-intensity signal (--set grid, signal)",)
    Params = DeferParams
    warm_imports = ("statsmodels.tsa.statespace.sarimax",)

    def declare(self, problem: Problem, params: DeferParams, seed: int) -> _Released:
        require_machines_alive(problem, self.name)
        rel = release_times(problem, params)
        held = dataclasses.replace(problem, submit_s=rel, sort_order=np.argsort(rel, kind="stable"))
        return _Released(held, seed)


register(Defer())
