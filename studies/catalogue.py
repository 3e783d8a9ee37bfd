"""The study catalogue: every named study that expands to :class:`~studies.scenarios.Scenario` runs —
the sweep studies (:data:`studies.scenarios.SWEEP_STUDIES`) and each paper's reproduction studies in both
profiles (:func:`studies.reproduction.studies`), assembled here explicitly, once, at import.

Harmony's studies (seed 004) choose their capacity themselves and have their own runner
(:mod:`studies.harmony.runner`); they are not in this catalogue.
"""

from __future__ import annotations

from collections.abc import Callable

from studies import reproduction
from studies.riskaware.sweeps import SWEEP_STUDIES as RISKAWARE_SWEEPS
from studies.scenarios import SWEEP_STUDIES, Scenario
from studies.slacksched.sweeps import SWEEP_STUDIES as SLACKSCHED_SWEEPS
from studies.thesis.sweeps import SWEEP_STUDIES as THESIS_SWEEPS
from studies.zhang_chien.sweeps import SWEEP_STUDIES as ZHANG_CHIEN_SWEEPS

#: name → scenario list builder, in catalogue order (sweep studies, then the reproduction studies)
STUDIES: dict[str, Callable[[], list[Scenario]]] = {
    **THESIS_SWEEPS,
    **RISKAWARE_SWEEPS,
    **ZHANG_CHIEN_SWEEPS,
    **SLACKSCHED_SWEEPS,
    **SWEEP_STUDIES,
    **reproduction.studies(),
}
# the chapters' studies beyond the seeds (carbon-defer, carbon-ias-forecast, spot-real, each with its -quick
# profile) come with the reproduction studies: studies.reproduction.CHAPTER_STUDY_BUILDERS

#: base names of the studies outside the reproduction that a chapter reads (``assets.reports.Chapter.studies``):
#: ``varcap run`` simulates their ``<base>-quick`` study, ``varcap reproduce`` their ``<base>`` study; their rows
#: join the reproduction studies' in ``out_study_results`` (per profile)
CHAPTER_STUDIES: list[str] = list(reproduction.CHAPTER_STUDY_BUILDERS)


def chapter_studies(profile: str) -> list[str]:
    """The catalogue names of :data:`CHAPTER_STUDIES` in ``profile`` (``quick`` or ``full``)."""
    return [reproduction.study_name(b, reproduction.PROFILES[profile]) for b in CHAPTER_STUDIES]


def study(name: str) -> list[Scenario]:
    """The scenarios of a study, in catalogue order, without duplicates. KeyError lists the studies."""
    if name not in STUDIES:
        raise KeyError(f"unknown study {name!r}; studies: {', '.join(STUDIES)}")
    return list({s.id: s for s in STUDIES[name]()}.values())


def all_scenarios() -> dict[str, Scenario]:
    """Every scenario of every catalogue study, by id."""
    return {s.id: s for name in STUDIES for s in study(name)}
