"""``oracle``: First-Fit that knows the future capacity (paper 002 §5 baseline). Under LIFO termination the
end of every machine interval follows from the trace, so a job starts on the lowest-index machine with
room whose current interval lasts until the job ends — it is never terminated. (With another termination
policy machine choice at a drop depends on the schedule, so the oracle is defined for LIFO only.)

On per-machine (harvest-VM) capacity it runs in :mod:`sim.harvest.cluster`: a job starts on the lowest-index node
with room whose future capacity stays at or above the node's current use plus the job until the job ends
(such a job is never killed, whatever the kill order: :func:`sim.harvest.cluster.place_oracle`). ``nodes``/``acquirer`` as for ``ff``. That loop runs compiled
(:func:`sim.harvest.loop.run_oracle`, the same results)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.capacity.intervals import extract_intervals
from sim.capacity.trace import MachineCapacityTrace
from sim.engine import PRED_ORACLE, Admission
from sim.harvest.cluster import Cluster, ClusterOptions, place_oracle, scan_oracle
from sim.policies import Dispatched, register
from sim.problem import Compiled, Problem, require_machines_alive


@dataclass(frozen=True)
class OracleParams(ClusterOptions):
    pass


def interval_ends_csr(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    iv = extract_intervals(problem.capacity).sort(["machine", "start_s"])
    counts = np.bincount(iv["machine"].to_numpy(), minlength=problem.platform.machines)
    ptr = np.concatenate([[0], np.cumsum(counts)])
    return ptr, iv["end_s"].to_numpy()


class Oracle(Dispatched):
    name = "oracle"
    description = (
        "First-Fit that knows the future capacity: a job starts only where its machine outlasts it (LIFO)"
    )
    label = "Oracle"
    warm = True
    warm_capacity = "harvest"
    Params = OracleParams

    def declare(self, problem: Problem, params: OracleParams, seed: int) -> Compiled | Cluster:
        if isinstance(problem.capacity, MachineCapacityTrace):
            cl = Cluster(problem, params.cluster(), seed, place_oracle, scan=scan_oracle)

            def compiled_run():  # the whole loop compiled (sim.harvest.loop: the same results)
                from sim.harvest.loop import run_oracle

                return run_oracle(cl)

            cl.compiled_run = compiled_run
            return cl
        require_machines_alive(problem, self.name)
        ptr, ends = interval_ends_csr(problem)
        return Compiled("lifo", Admission(PRED_ORACLE, iv_ptr=ptr, iv_end=ends))


register(Oracle())
