"""The study catalogue: every named study that expands to :class:`~studies.scenarios.Scenario` runs —
the sweep studies (:data:`studies.scenarios.SWEEP_STUDIES`) and each paper's reproduction studies in both
profiles (:func:`studies.reproduction.studies`), assembled here explicitly, once, at import.

Harmony's studies (seed 004) choose their capacity themselves and have their own runner
(:mod:`studies.harmony.runner`); they are not in this catalogue.
"""

from __future__ import annotations

from collections.abc import Callable

from studies import carbon, reproduction, spot
from studies.scenarios import SWEEP_STUDIES, Scenario

#: name → scenario list builder, in catalogue order (sweep studies, then the reproduction studies)
STUDIES: dict[str, Callable[[], list[Scenario]]] = {**SWEEP_STUDIES, **reproduction.studies()}
STUDIES["carbon-defer"] = carbon.carbon_defer  # issue #27 (studies/carbon)
STUDIES["carbon-defer-quick"] = carbon.carbon_defer_quick  # issue #27: the chapter's quick profile
STUDIES["carbon-ias-forecast"] = carbon.carbon_ias_forecast  # issue #27: ias-forecast backtest
STUDIES["carbon-ias-forecast-quick"] = carbon.carbon_ias_forecast_quick
STUDIES.update(spot.STUDIES)  # issue #28: spot-real


#: Studies outside the reproduction that a chapter reads (``assets.reports.Chapter.studies``): base names whose
#: ``<base>-quick`` study ``varcap run`` simulates and whose ``<base>`` study ``varcap reproduce`` does; their
#: rows join the reproduction studies' in ``out_study_results`` (per profile).
CHAPTER_STUDIES: list[str] = []
CHAPTER_STUDIES.append("carbon-defer")  # issue #27: beyond_carbon
CHAPTER_STUDIES.append("carbon-ias-forecast")  # issue #27: beyond_carbon


def chapter_studies(profile: str) -> list[str]:
    """The catalogue names of :data:`CHAPTER_STUDIES` in ``profile`` (``quick`` or ``full``)."""
    return [b if profile == "full" else f"{b}-{profile}" for b in CHAPTER_STUDIES]


def study(name: str) -> list[Scenario]:
    """The scenarios of a study, in catalogue order, without duplicates. KeyError lists the studies."""
    if name not in STUDIES:
        raise KeyError(f"unknown study {name!r}; studies: {', '.join(STUDIES)}")
    return list({s.id: s for s in STUDIES[name]()}.values())


def all_scenarios() -> dict[str, Scenario]:
    """Every scenario of every catalogue study, by id."""
    return {s.id: s for name in STUDIES for s in study(name)}
