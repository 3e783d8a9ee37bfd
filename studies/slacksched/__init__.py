"""Paper 002, SlackSched on harvest VMs: job completion time against YARN's CapacityScheduler
(:mod:`studies.slacksched.scenarios`: ``repro-slacksched``; :mod:`studies.slacksched.claims`)."""

from __future__ import annotations

from studies.slacksched.claims import EXPLANATIONS, FIGURES, HEADLINES
from studies.slacksched.scenarios import POLS_SS, ss_scenarios
from studies.slacksched.sweeps import SWEEP_STUDIES

STUDY_BUILDERS = {"repro-slacksched": ss_scenarios}


#: this paper's headline ids before they named their section (2026-11-27), old → new
FORMER_IDS = {
    "seed002-slacksched-mean-jct-reduction": "slacksched-4.2-mean-jct-reduction",
    "seed002-slacksched-p90-jct-reduction": "slacksched-4.2-p90-jct-reduction",
}

__all__ = [
    "FORMER_IDS",
    "EXPLANATIONS",
    "FIGURES",
    "HEADLINES",
    "POLS_SS",
    "STUDY_BUILDERS",
    "SWEEP_STUDIES",
    "ss_scenarios",
]
