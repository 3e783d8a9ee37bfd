"""Paper 001, risk-aware scheduling: FirstFitAware against TargetASAP and PackedTargetASAP
(:mod:`studies.riskaware.scenarios`: ``repro-riskaware``; :mod:`studies.riskaware.claims`)."""

from __future__ import annotations

from studies.riskaware.claims import EXPLANATIONS, HEADLINES
from studies.riskaware.scenarios import ra_scenarios
from studies.riskaware.sweeps import SWEEP_STUDIES

STUDY_BUILDERS = {"repro-riskaware": ra_scenarios}
FIGURES: dict[str, dict] = {}

__all__ = ["EXPLANATIONS", "FIGURES", "HEADLINES", "STUDY_BUILDERS", "SWEEP_STUDIES", "ra_scenarios"]
