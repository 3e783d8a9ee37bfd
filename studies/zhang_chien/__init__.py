"""Paper 003, Zhang and Chien's termination policies under variable capacity
(:mod:`studies.zhang_chien.scenarios`: ``repro-zhang-chien``; :mod:`studies.zhang_chien.claims`)."""

from __future__ import annotations

from studies.zhang_chien.claims import EXPLANATIONS, HEADLINES, _lww_vs_random, _range_decline
from studies.zhang_chien.scenarios import ZC_MODELS, zc_scenarios
from studies.zhang_chien.sweeps import SWEEP_STUDIES

STUDY_BUILDERS = {"repro-zhang-chien": zc_scenarios}
FIGURES: dict[str, dict] = {}


#: this paper's headline ids before they named their section (2026-11-27), old → new
FORMER_IDS = {
    "seed003-lww-vs-random-goodput": "zhang-chien-5.3-lww-vs-random-goodput",
    "seed003-range-0.6-goodput-decline": "zhang-chien-5.2-range-0.6-goodput-decline",
}

__all__ = [
    "FORMER_IDS",
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
