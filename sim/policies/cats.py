"""``cats``: the Climate-Aware Task Scheduler (GreenScheduler/cats; its README: "cats … uses a forecast of
the carbon intensity … to find the time window of the given duration with the lowest average intensity
and schedules the job to start at the beginning of that window", reading a 48-h forecast; here the
forecast the signal has: SGIP's 3-h one). Each job starts at the beginning of the window of its duration
with the lowest mean forecast among the windows lying whole inside the forecast issued at its submit
(:func:`sim.backtest.choose_start`). CATS is not told a deadline, so ``slack`` only scores misses.

Then First-Fit places it under the capacity trace with LIFO termination, like ``ff`` (a full platform or a
kill can still delay it). Simulation time 0 is the start of ``months``; the SGIP signal comes from the
embedded sample or the pinned wheel once ``raw_sgip_moer`` has downloaded it. ``source``: ``issued``
(SGIP's forecasts), ``perfect`` (the realized values over the same horizon), ``persistence``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.backtest import check_twin
from sim.bounds import Bound, bounded
from sim.policies import register
from sim.policies._twin import TwinPolicy


@bounded(slack=Bound(1.0, 1e6, "× the job's duration"))
@dataclass(frozen=True)
class CatsParams:
    signal: str = "sgip-pge"
    #: ``YYYY-MM..YYYY-MM`` (or one month): simulation time 0 is the first month's start
    months: str = "2021-06..2021-08"
    source: str = "issued"
    #: deadline = submit + slack × duration (CATS does not read it: it scores deadline misses)
    slack: float = 3.0

    def __post_init__(self) -> None:
        check_twin("cats", self.signal, self.source, self.slack)


class Cats(TwinPolicy):
    name = "cats"
    description = (
        "CATS' rule: start at the lowest-mean forecast window of the job's duration (SGIP), then First-Fit"
    )
    label = "CATS"
    inputs = ("SGIP's 5-minute marginal emissions and issued forecasts (--set signal, months, source)",)
    Params = CatsParams


register(Cats())
