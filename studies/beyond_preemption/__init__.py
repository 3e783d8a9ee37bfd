"""Beyond the papers: real preemption on spot pools (the ``beyond_preemption`` chapter).

* :mod:`studies.beyond_preemption.scenarios` — its study ``spot-real`` (one per profile,
  ``spot-real[-quick]``). No paper headline reads it: the chapter shows it.
"""

from __future__ import annotations

from studies.beyond_preemption.scenarios import STUDY_BUILDERS, spot_scenarios

HEADLINES: list = []
EXPLANATIONS: dict[str, str] = {}
FIGURES: dict[str, dict] = {}

__all__ = ["EXPLANATIONS", "FIGURES", "HEADLINES", "STUDY_BUILDERS", "spot_scenarios"]
