"""``compute-gardener``: the Compute Gardener Scheduler (elevated-systems/compute-gardener-scheduler, a
Kubernetes scheduler plugin; its documentation: a pod waits while the current carbon intensity is above
``CARBON_INTENSITY_THRESHOLD`` — default 200 gCO2/kWh — and is scheduled once it falls to it or when
``MAX_SCHEDULING_DELAY`` — default 24 h — has passed). It reads no forecast: each job is held from its
submit until the first 5-minute step whose *current* SGIP marginal emissions are at or below
``threshold_g``, or until the maximum delay, capped by the job's slack (its deadline less its duration, as
a pod's annotation would set it; :func:`sim.backtest.choose_start`).

Then First-Fit places it under the capacity trace with LIFO termination, like ``ff``. Simulation time 0 is
the start of ``months``; the SGIP signal comes from the embedded sample or the pinned wheel once
``raw_sgip_moer`` has downloaded it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.backtest import CG_MAX_DELAY_S, CG_THRESHOLD_G, check_twin
from sim.bounds import Bound, bounded
from sim.policies import register
from sim.policies._twin import TwinPolicy


@bounded(
    slack=Bound(1.0, 1e6, "× the job's duration"),
    threshold_g=Bound(0.0, 5000.0, "gCO2/kWh"),
    max_delay_s=Bound(0.0, 30 * 86400.0, "s"),
)
@dataclass(frozen=True)
class ComputeGardenerParams:
    signal: str = "sgip-pge"
    #: ``YYYY-MM..YYYY-MM`` (or one month): simulation time 0 is the first month's start
    months: str = "2021-06..2021-08"
    #: CARBON_INTENSITY_THRESHOLD (the tool's default)
    threshold_g: float = CG_THRESHOLD_G
    #: MAX_SCHEDULING_DELAY (the tool's default, 24 h)
    max_delay_s: float = CG_MAX_DELAY_S
    #: deadline = submit + slack × duration (caps the delay)
    slack: float = 3.0

    def __post_init__(self) -> None:
        check_twin("compute-gardener", self.signal, "issued", self.slack)


class ComputeGardener(TwinPolicy):
    name = "compute-gardener"
    description = "Compute Gardener's rule: hold while current SGIP intensity is above a threshold, up to a maximum delay, then First-Fit"
    label = "Compute Gardener"
    inputs = ("SGIP's 5-minute marginal emissions (--set signal, months, threshold_g, max_delay_s)",)
    Params = ComputeGardenerParams


register(ComputeGardener())
