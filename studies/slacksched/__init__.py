"""Paper 002, SlackSched on harvest VMs: job completion time against YARN's CapacityScheduler
(:mod:`studies.slacksched.scenarios`: ``repro-slacksched``; :mod:`studies.slacksched.claims`)."""

from __future__ import annotations

from studies.slacksched.claims import EXPLANATIONS, FIGURES, HEADLINES
from studies.slacksched.scenarios import POLS_SS, ss_scenarios
from studies.slacksched.sweeps import SWEEP_STUDIES

STUDY_BUILDERS = {"repro-slacksched": ss_scenarios}

__all__ = ["EXPLANATIONS", "FIGURES", "HEADLINES", "POLS_SS", "STUDY_BUILDERS", "SWEEP_STUDIES", "ss_scenarios"]
