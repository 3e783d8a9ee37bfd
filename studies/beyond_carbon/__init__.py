"""Beyond the papers: carbon a scheduler could really have known (the ``beyond_carbon`` chapter).

* :mod:`studies.beyond_carbon.scenarios` — its studies ``carbon-defer`` and ``carbon-ias-forecast`` (one per
  profile, ``<base>[-quick]``). No paper headline reads them: the chapter shows them.
"""

from __future__ import annotations

from studies.beyond_carbon.scenarios import STUDY_BUILDERS

HEADLINES: list = []
EXPLANATIONS: dict[str, str] = {}
FIGURES: dict[str, dict] = {}

__all__ = ["EXPLANATIONS", "FIGURES", "HEADLINES", "STUDY_BUILDERS"]
