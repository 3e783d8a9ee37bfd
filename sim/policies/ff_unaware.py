"""``ff-unaware``: paper 001 FirstFitUnaware — First-Fit placement, but a capacity drop turns off a random
alive machine (seeded) instead of the highest index."""

from __future__ import annotations

from dataclasses import dataclass

from sim.policies import Dispatched, register
from sim.problem import Compiled, Problem


@dataclass(frozen=True)
class Params:
    pass


class FirstFitUnaware(Dispatched):
    name = "ff-unaware"
    description = "First-Fit placement; a capacity drop turns off a random alive machine (seeded)"
    label = "FirstFitUnaware"
    Params = Params

    def declare(self, problem: Problem, params: Params, seed: int) -> Compiled:
        return Compiled("random")


register(FirstFitUnaware())
