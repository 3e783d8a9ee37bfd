"""Paper 003, Zhang and Chien's termination policies under variable capacity
(:mod:`studies.zhang_chien.scenarios`: ``repro-zhang-chien``; :mod:`studies.zhang_chien.claims`)."""

from __future__ import annotations

from studies.zhang_chien.claims import EXPLANATIONS, HEADLINES, _lww_vs_random, _range_decline
from studies.zhang_chien.scenarios import ZC_MODELS, zc_scenarios
from studies.zhang_chien.sweeps import SWEEP_STUDIES

STUDY_BUILDERS = {"repro-zhang-chien": zc_scenarios}
FIGURES: dict[str, dict] = {}

__all__ = [
    "EXPLANATIONS",
    "FIGURES",
    "HEADLINES",
    "STUDY_BUILDERS",
    "SWEEP_STUDIES",
    "ZC_MODELS",
    "_lww_vs_random",
    "_range_decline",
    "zc_scenarios",
]
