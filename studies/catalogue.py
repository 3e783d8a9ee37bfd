"""The study catalogue: every named study that expands to :class:`~studies.scenarios.Scenario` runs —
each paper's sweep studies (``SWEEP_STUDIES`` of its package, :data:`studies.papers.PAPERS` order), the
generic smoke study (:data:`studies.scenarios.SWEEP_STUDIES`) and every profiled study in both profiles
(:func:`studies.reproduction.studies`: the papers' reproduction studies and the chapters' studies), assembled
here, once, at import.

Harmony's studies (paper 004) choose their capacity themselves and have their own runner
(:mod:`studies.harmony.runner`); they are not in this catalogue.
"""

from __future__ import annotations

from collections.abc import Callable

from studies import reproduction
from studies.papers import PAPERS
from studies.scenarios import SWEEP_STUDIES, Scenario

#: name → scenario list builder, in catalogue order (sweep studies, then the profiled studies)
STUDIES: dict[str, Callable[[], list[Scenario]]] = {
    **{name: build for p in PAPERS for name, build in p.sweep_studies.items()},
    **SWEEP_STUDIES,
    **reproduction.studies(),
}

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
