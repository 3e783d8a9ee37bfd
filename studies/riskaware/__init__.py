"""Paper 001, risk-aware scheduling: FirstFitAware against TargetASAP and PackedTargetASAP
(:mod:`studies.riskaware.scenarios`: ``repro-riskaware``; :mod:`studies.riskaware.claims`)."""

from __future__ import annotations

from studies.riskaware.claims import EXPLANATIONS, HEADLINES
from studies.riskaware.scenarios import ra_scenarios
from studies.riskaware.sweeps import SWEEP_STUDIES

STUDY_BUILDERS = {"repro-riskaware": ra_scenarios}
FIGURES: dict[str, dict] = {}


#: this paper's headline ids before they named their section (2026-11-27), old → new
FORMER_IDS = {
    "seed001-targetasap-goodput-gain": "riskaware-6-targetasap-goodput-gain",
    "seed001-packed-goodput-gain": "riskaware-6-packed-goodput-gain",
}

__all__ = [
    "FORMER_IDS",
    "EXPLANATIONS",
    "FIGURES",
    "HEADLINES",
    "STUDY_BUILDERS",
    "SWEEP_STUDIES",
    "ra_scenarios",
]
