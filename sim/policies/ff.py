"""``ff``: First-Fit (thesis FF, paper 001 FirstFitAware) with a pluggable termination policy.

Jobs start on the lowest-index alive machine with room; on a capacity drop the ``termination`` policy
chooses which machines turn off: ``lifo`` (default: highest alive index, the thesis platform), ``random``,
``lww`` (least wasted work: smallest Σ cores × (t − start) of its jobs), ``lfd`` (least fraction done:
smallest max (t − start)/duration of its jobs) — paper 003 §5.3 applied to machines; ties go to the higher
index. ``<rule>-fail`` (``lifo-fail``, ``random-fail``, ``lww-fail``, ``lfd-fail``) chooses the same way but
a killed job fails for good instead of going back to the queue (paper 003 §4.2). On a per-machine trace the
rule picks the jobs a shrinking machine kills, one at a time until the rest fit: ``lifo`` newest start
first, ``random``, ``lww`` least cores × (t − start), ``lfd`` least (t − start)/duration.

In per-machine (harvest-VM) mode the compiled engine runs FF as is; ``nodes`` (cluster size out of the
trace's pool) or ``acquirer=true`` (paper 002 Algorithm 2) switch to the harvest-VM loop of
:mod:`sim.harvest.cluster` with First-Fit placement, where a shrink kills the oldest start first as in every harvest
policy (paper 002 §4.1); that loop runs compiled (:func:`sim.harvest.loop.run_first_fit`, the same results).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.capacity.trace import MachineCapacityTrace
from sim.engine import TERMINATION_CODES
from sim.harvest.cluster import Cluster, ClusterOptions, place_first_fit
from sim.policies import Dispatched, register
from sim.problem import Compiled, Problem


@dataclass(frozen=True)
class FFParams(ClusterOptions):
    termination: str = "lifo"

    def __post_init__(self) -> None:
        if self.termination not in TERMINATION_CODES:
            raise ValueError(
                f"termination must be one of {sorted(TERMINATION_CODES)}, got {self.termination!r}"
            )


class FirstFit(Dispatched):
    name = "ff"
    description = "First-Fit: each job on the lowest-index alive machine with room; --set termination picks who goes at a drop"
    label = "FirstFit"
    warm = True
    Params = FFParams

    def declare(self, problem: Problem, params: FFParams, seed: int) -> Compiled | Cluster:
        if params.uses_loop():
            if not isinstance(problem.capacity, MachineCapacityTrace):
                raise ValueError("nodes/acquirer need a per-machine (harvest-VM) capacity trace")
            cl = Cluster(problem, params.cluster(), seed, place_first_fit)

            def compiled_run():  # the whole loop compiled (sim.harvest.loop: the same results)
                from sim.harvest.loop import run_first_fit

                return run_first_fit(cl)

            cl.compiled_run = compiled_run
            return cl
        return Compiled(params.termination)


register(FirstFit())
