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

from studies import files, reproduction
from studies.papers import PAPERS
from studies.scenarios import SWEEP_STUDIES, Scenario

#: name → scenario list builder, in catalogue order (sweep studies, then the profiled studies)
STUDIES: dict[str, Callable[[], list[Scenario]]] = {
    **{name: build for p in PAPERS for name, build in p.sweep_studies.items()},
    **SWEEP_STUDIES,
    **reproduction.studies(),
}
#: the study files found (``studies/files/`` and the user folder, :mod:`studies.files`): their studies join
#: the catalogue after the built-in ones; a file that does not load is one line in ``FILE_PROBLEMS``
_FOUND = files.discover(frozenset(STUDIES))
STUDY_FILES: dict[str, files.StudyFile] = _FOUND.files
FILE_PROBLEMS: list[str] = _FOUND.problems
STUDIES.update(files.builders(_FOUND))


def add_study_file(sf: files.StudyFile) -> None:
    """Put the studies of a loaded study file into the catalogue (``varcap sweep --file``); ValueError if a
    name is a study of another source."""
    for n in sf.studies:
        if n in STUDIES and (n not in STUDY_FILES or STUDY_FILES[n].path.resolve() != sf.path.resolve()):
            src = STUDY_FILES[n].path if n in STUDY_FILES else "a built-in study"
            raise ValueError(f"{sf.path}: name: study {n!r} is already {src}; rename it")
    for n, scs in sf.studies.items():
        STUDY_FILES[n] = sf
        STUDIES[n] = lambda scs=scs: list(scs)

#: base names of the studies outside the reproduction that a chapter reads (``assets.reports.Chapter.studies``):
#: ``varcap run`` simulates their ``<base>-quick`` study, ``varcap reproduce`` their ``<base>`` study; their rows
#: join the reproduction studies' in ``out_study_results`` (per profile)
CHAPTER_STUDIES: list[str] = list(reproduction.CHAPTER_STUDY_BUILDERS)


def chapter_studies(profile: str) -> list[str]:
    """The catalogue names of :data:`CHAPTER_STUDIES` in ``profile`` (``quick`` or ``full``)."""
    return [reproduction.study_name(b, reproduction.PROFILES[profile]) for b in CHAPTER_STUDIES]


#: a profiled study's catalogue name → (its base, its profile): both profiles of a base share one study asset
_PROFILED: dict[str, tuple[str, str]] = {
    reproduction.study_name(base, pr): (base, pr.name)
    for base in reproduction.study_builders()
    for pr in reproduction.PROFILES.values()
}


def study_asset(name: str) -> tuple[str, str]:
    """``(base, partition-key prefix)`` of study ``name``'s asset ``out_sim__<base>``: a profiled study's two
    profiles share their base's asset, profile the first segment of its keys (``quick/…``, ``full/…``);
    every other study has an asset of its own, keys without a prefix."""
    if name in _PROFILED:
        base, profile = _PROFILED[name]
        return base, f"{profile}/"
    return name, ""


def asset_name(name: str) -> str:
    """The Dagster asset of study ``name`` (``out_sim__<base>``, :func:`study_asset`)."""
    return "out_sim__" + study_asset(name)[0].replace("-", "_")


def partition_keys(name: str) -> dict[str, str]:
    """Study ``name``'s partition keys in its asset, by scenario id in catalogue order (the readable keys
    of :func:`studies.sweep.partition_keys` after the profile prefix of :func:`study_asset`)."""
    from studies import sweep

    prefix = study_asset(name)[1]
    return {i: prefix + k for i, k in sweep.partition_keys(study(name)).items()}


#: study name → (the builder it was built by, its scenarios): each study is built once per process (the
#: Dagster definitions, the CLI and the reproduction all ask for the same lists); a builder replaced in
#: :data:`STUDIES` (a study file, a test) is built afresh
_BUILT: dict[str, tuple[Callable[[], list[Scenario]], list[Scenario]]] = {}


def study(name: str) -> list[Scenario]:
    """The scenarios of a study, in catalogue order, without duplicates. KeyError lists the studies."""
    if name not in STUDIES:
        raise KeyError(f"unknown study {name!r}; studies: {', '.join(STUDIES)}")
    build = STUDIES[name]
    hit = _BUILT.get(name)
    if hit is None or hit[0] is not build:
        hit = (build, list({s.id: s for s in build()}.values()))
        _BUILT[name] = hit
    return list(hit[1])


def all_scenarios() -> dict[str, Scenario]:
    """Every scenario of every catalogue study, by id."""
    return {s.id: s for name in STUDIES for s in study(name)}
