"""``carbon-aware-sdk``: the Green Software Foundation's carbon-aware SDK (its ``/emissions/forecasts/current``
API: "the optimal window of `windowSize` minutes within the forecast between `dataStartAt` and
`dataEndAt`", the window with the lowest average forecast intensity). Each job asks with ``windowSize`` =
its duration and ``dataEndAt`` = its deadline (``submit + slack × duration``), so it starts at the lowest-
mean window of the forecast issued at its submit that ends by the deadline
(:func:`sim.backtest.choose_start`).

Then First-Fit places it under the capacity trace with LIFO termination, like ``ff``. Simulation time 0 is
the start of ``months``; the SGIP signal comes from the embedded sample or the pinned wheel once
``raw_sgip_moer`` has downloaded it. ``source``: ``issued``, ``perfect`` or ``persistence``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.backtest import check_twin
from sim.bounds import Bound, bounded
from sim.policies import register
from sim.policies._twin import TwinPolicy


@bounded(slack=Bound(1.0, 1e6, "× the job's duration"))
@dataclass(frozen=True)
class CarbonAwareSdkParams:
    signal: str = "sgip-pge"
    #: ``YYYY-MM..YYYY-MM`` (or one month): simulation time 0 is the first month's start
    months: str = "2021-06..2021-08"
    source: str = "issued"
    #: deadline = submit + slack × duration (the SDK's dataEndAt)
    slack: float = 3.0

    def __post_init__(self) -> None:
        check_twin("carbon-aware-sdk", self.signal, self.source, self.slack)


class CarbonAwareSdk(TwinPolicy):
    name = "carbon-aware-sdk"
    description = "carbon-aware SDK's rule: best forecast window of the job's duration ending by its deadline (SGIP), then First-Fit"
    label = "carbon-aware SDK"
    inputs = ("SGIP's 5-minute marginal emissions and issued forecasts (--set signal, months, source)",)
    Params = CarbonAwareSdkParams


register(CarbonAwareSdk())
