"""What the deployed rules' policy twins share (``cats``, ``carbon-aware-sdk``, ``compute-gardener``,
``sgip-oracle``): each holds a job to the start its rule picks on the SGIP signal
(:func:`sim.backtest.twin_problem`), then First-Fit places it with LIFO termination. Not a policy itself."""

from __future__ import annotations

from typing import Any, ClassVar

from sim.backtest import twin_problem
from sim.policies import Dispatched
from sim.policies.defer import _Released
from sim.problem import Problem, require_machines_alive


class TwinPolicy(Dispatched):
    """A deployed rule's twin: ``rule`` names the backtest rule it runs (its own name unless set).
    Raises what :func:`sim.problem.require_machines_alive` raises on a problem without a capacity trace."""

    rule: ClassVar[str | None] = None

    def declare(self, problem: Problem, params: Any, seed: int) -> _Released:
        require_machines_alive(problem, self.name)
        return _Released(twin_problem(problem, self.rule or self.name, params), seed)
