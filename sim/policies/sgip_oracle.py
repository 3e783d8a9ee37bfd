"""``sgip-oracle``: the clairvoyant bound of the deployed rules' backtest: each job is held until the start
within its slack (deadline ``submit + slack × duration``) with the lowest realized SGIP marginal emissions
over its run (:func:`sim.backtest.choose_start`), then First-Fit places it under the capacity trace with
LIFO termination, like ``ff`` (so on a finite platform the bound is the signal's, not the schedule's).
Simulation time 0 is the start of ``months``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.backtest import check_twin
from sim.bounds import Bound, bounded
from sim.policies import register
from sim.policies._twin import TwinPolicy


@bounded(slack=Bound(1.0, 1e6, "× the job's duration"))
@dataclass(frozen=True)
class SgipOracleParams:
    signal: str = "sgip-pge"
    #: ``YYYY-MM..YYYY-MM`` (or one month): simulation time 0 is the first month's start
    months: str = "2021-06..2021-08"
    #: deadline = submit + slack × duration
    slack: float = 3.0

    def __post_init__(self) -> None:
        check_twin("sgip-oracle", self.signal, "issued", self.slack)


class SgipOracle(TwinPolicy):
    name = "sgip-oracle"
    rule = "oracle"
    description = "clairvoyant bound: each job held to the cleanest realized SGIP start within its slack, then First-Fit"
    label = "SGIP oracle"
    inputs = ("SGIP's 5-minute marginal emissions (--set signal, months)",)
    Params = SgipOracleParams


register(SgipOracle())
