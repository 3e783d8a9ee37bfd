"""The study catalogue: every named study that expands to :class:`~studies.scenarios.Scenario` runs —
the sweep studies (:data:`studies.scenarios.SWEEP_STUDIES`) and each paper's reproduction studies in both
profiles (:func:`studies.reproduction.studies`), assembled here explicitly, once, at import.

Harmony's studies (seed 004) choose their capacity themselves and have their own runner
(:mod:`studies.harmony.runner`); they are not in this catalogue.
"""

from __future__ import annotations

from collections.abc import Callable

from studies import carbon, reproduction
from studies.scenarios import SWEEP_STUDIES, Scenario

#: name → scenario list builder, in catalogue order (sweep studies, then the reproduction studies)
STUDIES: dict[str, Callable[[], list[Scenario]]] = {**SWEEP_STUDIES, **reproduction.studies()}
STUDIES["carbon-defer"] = carbon.carbon_defer  # issue #27 (studies/carbon)
# issue #28: spot-real and spot-real-quick come with the reproduction studies (CHAPTER_STUDY_BUILDERS)


def study(name: str) -> list[Scenario]:
    """The scenarios of a study, in catalogue order, without duplicates. KeyError lists the studies."""
    if name not in STUDIES:
        raise KeyError(f"unknown study {name!r}; studies: {', '.join(STUDIES)}")
    return list({s.id: s for s in STUDIES[name]()}.values())


def all_scenarios() -> dict[str, Scenario]:
    """Every scenario of every catalogue study, by id."""
    return {s.id: s for name in STUDIES for s in study(name)}
