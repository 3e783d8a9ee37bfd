"""``capsched``: paper 002's baseline, YARN's CapacityScheduler as a *random matching* (§4.1 "Schemes", §4.2:
"SlackSched can make poor decisions for some individual tasks compared to a random matching decision
(taken by CapacityScheduler)").

A task goes to a node drawn uniformly at random among the allocated nodes that have its cores free now
(resource-aware, stability-oblivious); with none it waits for the next instant. Runs in the harvest-VM
loop (:mod:`sim.harvest.cluster`) like SlackSched, so both see the same HVM changes and the same kill order
(oldest start first when a node shrinks, paper 002 §4.1 "Extensions to the simulator"). The draw uses a
generator seeded from the run's seed, so a run is reproducible. Without checkpointing the
whole loop runs compiled (:mod:`sim.harvest.loop`, drawing from the same generator: the same nodes, bit for bit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.harvest.cluster import Cluster, ClusterOptions
from sim.policies import Dispatched, register
from sim.problem import Problem


@dataclass(frozen=True)
class CapSchedParams(ClusterOptions):
    pass


class CapacityScheduler(Dispatched):
    name = "capsched"
    description = (
        "YARN's CapacityScheduler as a random matching: a node drawn uniformly among those with room"
    )
    label = "CapacityScheduler"
    warm = True
    warm_capacity = "harvest"
    Params = CapSchedParams

    def placement(self, seed: int, rng: np.random.Generator | None = None):
        """The placement, drawing from ``rng`` (default: the run's own stream, ``default_rng([seed, 2])``)."""
        if rng is None:
            rng = np.random.default_rng([seed, 2])  # a stream of its own, apart from the Acquirer's draws

        def place(cl: Cluster, j: int, t: float) -> int:
            room = np.flatnonzero(cl.free() >= cl.cores[j])
            return int(room[rng.integers(room.size)]) if room.size else -1

        return place

    def declare(self, problem: Problem, params: CapSchedParams, seed: int) -> Cluster:
        rng = np.random.default_rng([seed, 2])
        cl = Cluster(problem, params.cluster(), seed, self.placement(seed, rng))

        def compiled_run():  # the whole loop compiled, drawing from the placement's generator (sim.harvest.loop)
            from sim.harvest.loop import run_capsched

            return run_capsched(cl, rng)

        cl.compiled_run = compiled_run
        return cl


register(CapacityScheduler())
