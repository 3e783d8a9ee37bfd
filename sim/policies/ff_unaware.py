"""``ff-unaware``: seed 001 FirstFitUnaware — First-Fit placement, but a capacity drop turns off a random
alive machine (seeded) instead of the highest index."""

from __future__ import annotations

from dataclasses import dataclass

from sim.policies import register
from sim.problem import Problem, run_first_fit


@dataclass(frozen=True)
class Params:
    pass


class FirstFitUnaware:
    name = "ff-unaware"
    Params = Params

    def run(self, problem: Problem, params: Params, seed: int):
        return run_first_fit(problem, "random", seed)


register(FirstFitUnaware())
