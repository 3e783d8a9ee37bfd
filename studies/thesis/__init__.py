"""Paper 000, the thesis: variable capacity (ch. 2, 4) and the Interval-Aware Scheduler (ch. 6).

* :mod:`studies.thesis.scenarios` — the ``repro-thesis-ch4``, ``repro-thesis-ch6``, ``repro-grids`` and
  ``repro-generic`` scenario sets;
* :mod:`studies.thesis.ch4` — claims of §2.1.2, §4.1 and Table 4.1;
* :mod:`studies.thesis.ias` — claims of §6.2–6.3 (Table 6.2) and §6.2's claim on a generic heavy-tailed instance;
* :mod:`studies.thesis.robustness` — the ``ias-robustness`` grid (§6.2's claim on heavy-tailed instances);
* :mod:`studies.thesis.observed` and :mod:`studies.thesis.general` — ``thesis-ias-observed`` (``ias``,
  ``ias-general`` and First-Fit on the observed-grid carbon budgets) and ``thesis-ias-generalization`` (the
  same on the reproduction's generated instances), their table in :mod:`studies.thesis.ias_table`.
"""

from __future__ import annotations

from typing import Any

from studies.thesis import ch4, ias, robustness
from studies.thesis.scenarios import (
    GENERIC_POLICIES,
    ZIPFS,
    ch4_scenarios,
    ch6_scenarios,
    generic_scenarios,
    grid_scenarios,
    robustness_scenarios,
)
from studies.thesis.sweeps import SWEEP_STUDIES


def _observed_scenarios(pr: Any) -> dict[tuple, Any]:
    from studies.thesis import observed  # lazily: `python -m studies.thesis.observed` runs it as __main__

    return observed.study_scenarios(pr)


def _generalization_scenarios(pr: Any) -> dict[tuple, Any]:
    from studies.thesis import general  # lazily, as above

    return general.study_scenarios(pr)


STUDY_BUILDERS = {
    "repro-grids": grid_scenarios,
    "repro-generic": generic_scenarios,
    "repro-thesis-ch4": ch4_scenarios,
    "repro-thesis-ch6": ch6_scenarios,
    "ias-robustness": robustness_scenarios,
    "thesis-ias-observed": _observed_scenarios,  # observed.STUDY
    "thesis-ias-generalization": _generalization_scenarios,  # general.STUDY
}
#: the generic heavy-tailed instance's rows (thesis §6.2's claim off the thesis' workloads)
GENERIC_HEADLINES = [*ias.GENERIC, *robustness.ROBUSTNESS]
#: the thesis' rows in table order (§4.1 and §2.1.2, Table 6.2 and §6.2–6.3, Table 4.1), then the generic
#: instance's
HEADLINES = [*ch4.HEADLINES, *ias.HEADLINES, *ch4.TABLE_4_1, *GENERIC_HEADLINES]
EXPLANATIONS = {**ch4.EXPLANATIONS, **ias.EXPLANATIONS, **robustness.EXPLANATIONS}
FIGURES = {**ch4.FIGURES, **ias.FIGURES}

__all__ = [
    "EXPLANATIONS",
    "FIGURES",
    "GENERIC_HEADLINES",
    "GENERIC_POLICIES",
    "HEADLINES",
    "STUDY_BUILDERS",
    "SWEEP_STUDIES",
    "ZIPFS",
    "ch4",
    "ch4_scenarios",
    "ch6_scenarios",
    "generic_scenarios",
    "grid_scenarios",
    "robustness_scenarios",
    "ias",
]
