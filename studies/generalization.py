"""Generalization instances: platforms, capacity and workloads that no study was built around.

:func:`instances` draws ``n`` instances from one master seed; instance ``i`` depends on ``(master_seed, i)``
only (``numpy.random.default_rng([master_seed, i])``), so asking for more instances keeps the first ones.
Each instance is drawn uniformly from the family's ranges:

* platform: 20–200 machines of 24 cores;
* capacity: the thesis' random walk (dynamic range 60 %) at 0.5–4 changes per hour, step 0.1–0.3;
* workload: ``pareto-<alpha>-<xm_s>-<mix>`` (:mod:`sim.workloads.registry`): heavy-tailed Pareto(α) durations
  capped at 72 h, α in 1.1–2.5 (the IAS robustness grid's range), minimum ``xm_s`` 5 min or 1 h (two
  duration families, equally likely), core mix ``light`` or ``heavy`` (equally likely), offered load 0.5–0.9
  of the mean capacity;
* seeds: the capacity walk and the workload take their own seeds from the same generator.

Drawn values are rounded (α, load and changes per hour to 0.01, step to 0.001) so an instance reads as it
is simulated. :meth:`Instance.scenario` is the instance under a policy, a :class:`studies.scenarios.Scenario`
with the usual stable id.

:func:`ias_decisive` says whether an IAS-vs-First-Fit pair of runs faces the decision the thesis' claim is
about (paper 000 §6.2: IAS reduces terminations): at least one job that IAS sends to the variable machines
outlives the time to the next capacity change, some job is not "big" under H1, and First-Fit terminates
something. :func:`ias_facts` computes what it reads from an instance's jobs and capacity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from studies.scenarios import Scenario

MACHINES = (20, 200)
CHANGES_PER_HOUR = (0.5, 4.0)
STEP = (0.1, 0.3)
LOAD = (0.5, 0.9)
ALPHA = (1.1, 2.5)
MIN_DURATION_S = (300.0, 3600.0)
MIXES = ("light", "heavy")
DYNAMIC_RANGE = 0.6
CORES = 24


@dataclass(frozen=True)
class Instance:
    """One generated instance: ``id`` is ``gen<master_seed>-<index>`` (stable: it names the draw)."""

    master_seed: int
    index: int
    machines: int
    changes_per_hour: float
    step: float
    alpha: float
    min_duration_s: float
    mix: str
    load: float
    capacity_seed: int
    workload_seed: int
    horizon_days: float

    @property
    def id(self) -> str:
        return f"gen{self.master_seed}-{self.index:03d}"

    @property
    def workload(self) -> str:
        return f"pareto-{self.alpha:g}-{self.min_duration_s:g}-{self.mix}"

    @property
    def capacity(self) -> dict[str, Any]:
        return {
            "kind": "random_walk",
            "changes_per_hour": self.changes_per_hour,
            "step": self.step,
            "dynamic_range": DYNAMIC_RANGE,
            "seed": self.capacity_seed,
        }

    @property
    def period_s(self) -> float:
        """The walk's change period."""
        return 3600.0 / self.changes_per_hour

    def scenario(self, policy: str = "ff", settings: dict[str, str] | None = None) -> Scenario:
        """This instance run by ``policy`` with ``settings``."""
        return Scenario(
            self.workload,
            self.capacity,
            policy,
            dict(settings or {}),
            machines=self.machines,
            cores=CORES,
            horizon_days=self.horizon_days,
            seed=self.workload_seed,
            load=self.load,
        )

    def row(self) -> dict[str, Any]:
        """The instance's drawn values as one table row."""
        return {
            "instance": self.id,
            "machines": self.machines,
            "changes_per_hour": self.changes_per_hour,
            "step": self.step,
            "alpha": self.alpha,
            "min_duration_s": self.min_duration_s,
            "mix": self.mix,
            "load": self.load,
            "horizon_days": self.horizon_days,
        }


def draw_instance(master_seed: int, index: int, horizon_days: float = 3.0) -> Instance:
    """Instance ``index`` of the family drawn from ``master_seed`` (see the module). ValueError for a
    negative seed or index or a horizon that is not positive."""
    if master_seed < 0 or index < 0:
        raise ValueError(f"generalization: master seed and index must be ≥ 0 (got {master_seed}, {index})")
    if not horizon_days > 0:
        raise ValueError(f"generalization: horizon_days must be > 0 (got {horizon_days})")
    rng = np.random.default_rng([master_seed, index])
    machines = int(rng.integers(MACHINES[0], MACHINES[1] + 1))
    f = round(float(rng.uniform(*CHANGES_PER_HOUR)), 2)
    step = round(float(rng.uniform(*STEP)), 3)
    alpha = round(float(rng.uniform(*ALPHA)), 2)
    xm = float(MIN_DURATION_S[int(rng.integers(0, len(MIN_DURATION_S)))])
    mix = MIXES[int(rng.integers(0, len(MIXES)))]
    load = round(float(rng.uniform(*LOAD)), 2)
    cap_seed, wl_seed = (int(x) for x in rng.integers(0, 2**31 - 1, 2))
    return Instance(
        master_seed, index, machines, f, step, alpha, xm, mix, load, cap_seed, wl_seed, horizon_days
    )


def instances(master_seed: int, n: int, horizon_days: float = 3.0) -> list[Instance]:
    """The first ``n`` instances drawn from ``master_seed`` (ValueError for ``n < 0``)."""
    if n < 0:
        raise ValueError(f"generalization: the number of instances must be ≥ 0 (got {n})")
    return [draw_instance(master_seed, i, horizon_days) for i in range(n)]


# ----------------------------------------------------------------------------------- decisive or not
@dataclass(frozen=True)
class IASFacts:
    """What decides whether an IAS-vs-First-Fit pair is decisive.

    ``small_jobs``: jobs not "big" under IAS's H1 (they may run only on the variable machines);
    ``variable_machines``: machines above H1's stable pool; ``outliving_jobs``: small jobs longer than the
    time between two capacity changes (:func:`change_gap_s`: H2 cannot place them between two changes);
    ``ff_terminations``: First-Fit's terminations in the same instance."""

    small_jobs: int
    variable_machines: int
    outliving_jobs: int
    ff_terminations: int


def ias_decisive(facts: IASFacts) -> tuple[bool, str]:
    """``(True, "")`` when the pair is decisive, else ``(False, reason)`` naming the first missing
    condition: some job not "big" under H1, a variable machine, a job there that outlives the time to the
    next change, First-Fit terminating something."""
    if facts.small_jobs == 0:
        return False, "every job is big under H1: IAS never uses a variable machine"
    if facts.variable_machines == 0:
        return False, "H1's stable pool is the whole platform: no variable machine"
    if facts.outliving_jobs == 0:
        return False, "no job on the variable machines outlives the time to the next change"
    if facts.ff_terminations == 0:
        return False, "First-Fit terminates nothing"
    return True, ""


def change_gap_s(capacity: Any, horizon_s: float) -> float:
    """The time between two capacity changes: the trace's change period when it has one, else the median
    time between consecutive points where the machines alive change (the horizon without a change)."""
    if getattr(capacity, "period_s", None):
        return float(capacity.period_s)
    alive = np.asarray(capacity.machines_alive)
    t = np.asarray(capacity.time_s, float)[np.r_[True, alive[1:] != alive[:-1]]]
    t = t[t > 0]
    return float(np.median(np.diff(t))) if t.size > 1 else float(horizon_s)


def ias_facts(
    jobs: pl.DataFrame,
    capacity: Any,
    machines: int,
    cores: float,
    horizon_s: float,
    ff_terminations: int,
    settings: dict[str, str] | None = None,
) -> IASFacts:
    """:class:`IASFacts` of ``jobs`` under the machines-alive trace ``capacity`` on ``machines`` × ``cores``,
    H1 as ``ias`` with ``settings`` splits them (:func:`sim.policies.ias.h1_split`)."""
    from sim.policies import get_policy, parse_params
    from sim.policies.ias import h1_split
    from sim.problem import Platform, Problem

    params = parse_params(get_policy("ias"), dict(settings or {}))
    jobs = jobs.filter(pl.col("cores") <= cores)
    problem = Problem.build(jobs, Platform(machines, cores, None), capacity, horizon_s)
    stable, thresh = h1_split(problem, params)  # type: ignore[arg-type]
    small = problem.duration_s * problem.cores < thresh
    gap = change_gap_s(capacity, horizon_s)
    return IASFacts(
        small_jobs=int(small.sum()),
        variable_machines=int(machines - stable),
        outliving_jobs=int((small & (problem.duration_s > gap)).sum()),
        ff_terminations=int(ff_terminations),
    )
