"""Paper 004, Harmony: heterogeneity-aware dynamic capacity provisioning.

* :mod:`studies.harmony.runner` — the Harmony studies (``harmony``, ``harmony-7d``, ``harmony-headline``,
  ``harmony-smoke``), their runner and result cache (``data/sim/harmony/<id>/``);
* :mod:`studies.harmony.claims` — the §9.2 energy-cost headline.

The runner's names are re-exported here for callers that only read (``HARMONY_STUDIES``…); code that
patches the runner (tests) patches :mod:`studies.harmony.runner` itself.
"""

from __future__ import annotations

from studies.harmony.claims import EXPLANATIONS, FIGURES, HEADLINES, energy_reduction_readings
from studies.harmony.runner import (
    HARMONY_STUDIES,
    OMEGAS,
    SCHEMES,
    HarmonyScenario,
    harmony_scenarios,
    load_results,
)

STUDY_BUILDERS: dict = {}  # Harmony scenarios choose their capacity themselves: not catalogue studies


#: this paper's headline ids before they named their section (2026-11-27), old → new
FORMER_IDS = {"seed004-cbs-energy-reduction": "harmony-9.2-cbs-energy-reduction"}

__all__ = [
    "FORMER_IDS",
    "EXPLANATIONS",
    "FIGURES",
    "HARMONY_STUDIES",
    "HEADLINES",
    "OMEGAS",
    "SCHEMES",
    "STUDY_BUILDERS",
    "HarmonyScenario",
    "energy_reduction_readings",
    "harmony_scenarios",
    "load_results",
]
