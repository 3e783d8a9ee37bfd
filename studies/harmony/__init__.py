"""Paper 004, Harmony: heterogeneity-aware dynamic capacity provisioning.

* :mod:`studies.harmony.runner` — the Harmony studies (``harmony``, ``harmony-quick``, ``harmony-7d``,
  ``harmony-headline``, ``harmony-smoke``), their runner and result cache (``data/sim/harmony/<id>/``);
* :mod:`studies.harmony.claims` — the §9.2 energy-cost headline.

The runner's names are re-exported here for callers that only read (``HARMONY_STUDIES``…); code that
patches the runner (tests) patches :mod:`studies.harmony.runner` itself.
"""

from __future__ import annotations

import importlib

#: Harmony's studies (:func:`studies.harmony.runner.harmony_scenarios` expands them)
HARMONY_STUDIES = ("harmony", "harmony-quick", "harmony-7d", "harmony-headline", "harmony-smoke")

#: the names re-exported from the claims and the runner, imported on first use: the runner loads the
#: compiled simulator (numba), which a caller asking whether a study is Harmony's (``varcap sweep``), or
#: the catalogue reading ``STUDY_BUILDERS``, does not need
_LAZY = {
    **dict.fromkeys(("EXPLANATIONS", "FIGURES", "HEADLINES", "energy_reduction_readings"), "claims"),
    **dict.fromkeys(("OMEGAS", "SCHEMES", "HarmonyScenario", "harmony_scenarios", "load_results"), "runner"),
}


def __getattr__(name: str) -> object:
    """A name of :data:`_LAZY`, from its module (imported now); AttributeError for any other."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


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
