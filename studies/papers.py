"""The registry of papers and chapters: one line per paper (or chapter beyond the papers), from which the
reproduction table (:mod:`studies.reproduction`), the study catalogue (:mod:`studies.catalogue`), the report
assets (``assets/reports.py``) and their study lineage are built.

A paper's package ``studies/<package>/`` holds everything of it, written once; its ``__init__`` exports

* ``STUDY_BUILDERS`` — its profiled studies (``<base>`` for ``full``, ``<base>-quick``): base → builder;
* ``SWEEP_STUDIES`` — its sweep studies (one run per point; optional): name → scenario list builder;
* ``HEADLINES`` — its rows of the reproduction table (anchor, band, compute; none for a chapter beyond
  the papers), ``EXPLANATIONS`` (causes of rows outside their band) and ``FIGURES`` (per chapter, the
  paper's numbers its charts show next to varcap's);

and its line here names its chapters: the notebook ``notebooks/<chapter>.ipynb`` each renders (asset
``report_<chapter>``), the warehouse tables and the profiled studies it reads. Adding a paper is its folder
and one :class:`Paper` line in :data:`PAPERS`.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

#: tables with one asset partition per reproduction profile: a chapter reading one is partitioned too
PROFILED_TABLES = frozenset({"out_study_results", "out_reproduction", "out_thesis_ias_instances"})


@dataclass(frozen=True)
class Chapter:
    """A notebook ``notebooks/<name>.ipynb`` (asset ``report_<name>``), its title and blurb for the index,
    the warehouse tables it reads and the profiled studies (bases) whose rows it reads: its report asset
    depends on exactly those study assets and hands the notebook their rows as ``out_study_results``."""

    name: str
    title: str
    blurb: str
    tables: tuple[str, ...]
    studies: tuple[str, ...] = ()

    @property
    def profiled(self) -> bool:
        """One report per reproduction profile (an asset partition each): it reads studies or the
        profile-partitioned tables."""
        return bool(self.studies) or bool(set(self.tables) & PROFILED_TABLES)


@dataclass(frozen=True)
class Paper:
    """One home under ``studies/``: a paper (``seed`` its document's number, e.g. ``"000"``) or a
    chapter beyond the papers (``seed`` empty: its studies are read by its chapter, it has no headline)."""

    package: str
    seed: str
    title: str
    chapters: tuple[Chapter, ...] = ()

    @property
    def module(self) -> ModuleType:
        """The package ``studies.<package>`` (imported on first use)."""
        return _module(self.package)

    @property
    def beyond(self) -> bool:
        """A chapter beyond the papers (no seed document)."""
        return not self.seed

    @property
    def study_builders(self) -> dict[str, Callable[..., dict[tuple, Any]]]:
        return dict(self.module.STUDY_BUILDERS)

    @property
    def sweep_studies(self) -> dict[str, Callable[[], list[Any]]]:
        return dict(getattr(self.module, "SWEEP_STUDIES", {}))

    @property
    def headlines(self) -> list[Any]:
        return list(self.module.HEADLINES)

    @property
    def explanations(self) -> dict[str, str]:
        return dict(self.module.EXPLANATIONS)

    @property
    def figures(self) -> dict[str, dict[str, Any]]:
        return dict(self.module.FIGURES)


@functools.cache
def _module(package: str) -> ModuleType:
    return importlib.import_module(f"studies.{package}")


#: what a chapter that reads studies reads besides its studies' runs (which its report asset hands its
#: notebook as ``out_study_results``: the rows of exactly its studies, so its lineage holds only those)
_PROFILED = ("out_study_scenarios",)

#: Every paper and chapter beyond the papers, in seed order (the order of the reproduction table, the
#: catalogue and the report index).
PAPERS: tuple[Paper, ...] = (
    Paper("thesis", "000", "The thesis: variable capacity and the Interval-Aware Scheduler", (
        Chapter("ch2_capacity", "Thesis ch. 2 — Variable capacity and cloud workloads",
                "Table 2.2 workload statistics; Fig. 2.2 capacity under a constant carbon budget per grid.",
                ("core_grid_carbon", "out_capacity_traces", "out_capacity_points",
                 "out_capacity_characterization", "out_workload_stats")),
        Chapter("ch4_variable_capacity", "Thesis ch. 4 — First-Fit under variable capacity",
                "Figs. 4.1–4.8 goodput, terminations, latency vs change frequency and step; Figs. 4.9–4.10 "
                "observed grids; Table 4.1 Zipf workloads.",
                (*_PROFILED, "out_workload_stats"), ("repro-thesis-ch4", "repro-grids")),
        Chapter("ch5_intervals", "Thesis ch. 5 — Machine intervals",
                "Figs. 5.1–5.4 interval lengths vs change frequency and step, observed grids, remaining time.",
                ("out_capacity_characterization", "out_machine_intervals", "out_interval_survival",
                 "out_interval_conditional")),
        Chapter("ch6_ias", "Thesis ch. 6 — The Interval-Aware Scheduler",
                "Figs. 6.1–6.3 heuristics and aggressiveness; Table 6.2 IAS vs First-Fit; ias and ias-general "
                "on the observed grids' carbon budgets.",
                (*_PROFILED, "out_thesis_ias_instances"), ("repro-thesis-ch6", "repro-generic")),
    )),
    Paper("riskaware", "001", "Risk-aware scheduling", (
        Chapter("riskaware", "Paper 001 — Risk-aware scheduling",
                "Figs. 1–4: goodput of FirstFitAware, TargetASAP and PackedTargetASAP over replicates.",
                _PROFILED, ("repro-riskaware",)),
    )),
    Paper("slacksched", "002", "SlackSched on harvest VMs", (
        Chapter("slacksched", "Paper 002 — SlackSched on harvest VMs",
                "Figs. 9–10: job completion time CDFs and their reduction vs the CapacityScheduler.",
                _PROFILED, ("repro-slacksched",)),
    )),
    Paper("zhang_chien", "003", "Termination policies under variable capacity", (
        Chapter("zhang_chien", "Paper 003 — Termination policies under variable capacity",
                "Figs. 8–11: goodput decline with dynamic range and by termination policy.",
                _PROFILED, ("repro-zhang-chien",)),
    )),
    Paper("harmony", "004", "Harmony: heterogeneity-aware capacity provisioning", (
        Chapter("harmony", "Paper 004 — Harmony: heterogeneity-aware capacity provisioning",
                "Figs. 10–33: task classes, ARIMA forecast vs actual arrivals, energy cost of CBS/CBP vs the "
                "baseline, machines on, cost/delay over ω (varcap sweep harmony).",
                ("out_harmony_task_classes", "out_harmony_demand", "out_harmony_results",
                 "out_harmony_intervals")),
    )),
    Paper("beyond_carbon", "", "Carbon a scheduler could really have known", (
        Chapter("beyond_carbon", "Beyond the papers — carbon a scheduler could really have known",
                "As-of forecast error per horizon; deferral savings with an oracle against honest forecasts "
                "per grid (95 % intervals); ias-forecast against ias and ff on CAISO, ERCOT, MISO; carbon of "
                "killed work.",
                ("core_grid_carbon", "core_grid_marginal", "core_grid_forecast", *_PROFILED),
                ("carbon-defer", "carbon-ias-forecast", "repro-grids")),
    )),
    Paper("beyond_preemption", "", "Real preemption on spot pools", (
        Chapter("beyond_preemption", "Beyond the papers — real preemption on spot pools",
                "FF's waste on three AWS spot availability traces vs matched random walks; IAS without a "
                "stable floor; checkpoint/restart and the checkpoint interval against IAS without (spot-real).",
                ("core_spot_availability", *_PROFILED), ("spot-real",)),
    )),
    Paper("beyond_backtest", "", "The carbon-aware rules people deploy, on forecasts that were really issued", (
        Chapter("beyond_backtest", "Beyond the papers — deployed carbon-aware rules on issued forecasts",
                "CATS, the carbon-aware SDK and Compute Gardener on SGIP's issued marginal-emissions forecasts "
                "(PG&E, SCE), at signal level and on a finite platform: saving with the oracle, issued and "
                "persistence forecasts, oracle_share, deadline misses; forecast error by horizon.",
                ("core_marginal_signal", "out_backtest", "out_backtest_errors")),
    )),
    # each paper's central claim off its own instances: rows, no chapter of its own (the papers' chapters and
    # the reproduction page show them)
    Paper("generalization_claims", "", "Central claims on generated instances"),
)  # fmt: skip

#: The chapter that belongs to no paper: every headline of every paper next to varcap's.
REPRODUCTION_CHAPTER = Chapter(
    "reproduction",
    "Reproduction — every paper's headlines next to varcap's",
    "out_reproduction: paper value, varcap mean ± 95 % CI, acceptance band.",
    ("out_reproduction",),
)

#: Every chapter, in report-index order: the papers' in :data:`PAPERS` order, then the reproduction table.
CHAPTERS: tuple[Chapter, ...] = (*(ch for p in PAPERS for ch in p.chapters), REPRODUCTION_CHAPTER)


def paper(package: str) -> Paper:
    """The registry line of ``package``. KeyError lists the packages."""
    for p in PAPERS:
        if p.package == package:
            return p
    raise KeyError(f"unknown paper {package!r}; papers: {', '.join(p.package for p in PAPERS)}")


def chapter(name: str) -> Chapter:
    """The chapter named ``name``. KeyError lists the chapters."""
    for ch in CHAPTERS:
        if ch.name == name:
            return ch
    raise KeyError(f"unknown chapter {name!r}; chapters: {', '.join(c.name for c in CHAPTERS)}")
