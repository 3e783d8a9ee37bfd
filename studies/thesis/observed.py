"""``ias``, ``ias-general`` and First-Fit under observed grid capacity: the question a user of the thesis'
chapter 6 asks next (paper 000 §2.1.2 and §4.2 observe variable capacity from a constant carbon budget on
the MISO, ERCOT, SPP and CAISO grids; §6 tests IAS on random walks only).

Capacity: :data:`studies.signals.GRIDS`' embedded carbon months (CAISO and ERCOT, Electricity Maps April
2024; MISO, EIA-930 April 2022; SPP is not embedded) as a ``carbon_budget`` trace (mean 70 % of the
machines alive, hourly changes: :func:`sim.capacity.generators.budget_trace`), read from the exported
sweep inputs (``data/sim/inputs/grid_carbon.parquet``, ``varcap`` materializes it). The trace is
deterministic, so the seeds are the workload's: heavy-tailed Pareto(1.5) durations capped at 72 h with
the light core mix, minimum 5 min (the thesis Zipf workloads' unit) and, on the full profile, 1 h (the
change period), offered at 80 % of the mean capacity on ``machines`` × 24 cores.

Each (grid, workload, seed) is one instance run with First-Fit, ``ias`` (the thesis' algorithm, its
defaults) and ``ias-general`` (varcap's extension): the catalogue study :data:`STUDY`
(``thesis-ias-observed[-quick]``, :func:`study_scenarios`; ``varcap run`` simulates the quick profile,
``varcap reproduce`` the full one). Its table ``out_thesis_ias_instances`` (:mod:`studies.thesis.ias_table`,
computed from the cached runs) gives per instance and policy kills, cut, goodput difference, and whether the
instance is *decisive* by the rule the reproduction counts with (:func:`studies.generalization.ias_decisive`:
First-Fit terminates something, some job is not "big" under H1, some such job is longer than the change
period). :func:`summary` gives per grid, workload and policy the decisive and degenerate counts, the runs
that hold the claim (cut > 0, goodput ≥ First-Fit's − 2 pt) and means with 95 % Student-t intervals over
the decisive seeds.

``python -m studies.thesis.ias_table thesis-ias-observed [--profile quick|full] [--out FILE]`` prints the
table from the cached runs, or the ``varcap sweep`` that simulates the runs it lacks.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from studies.claims import Profile
from studies.scenarios import Scenario
from studies.signals import GRIDS
from studies.thesis.general import MAIN, arms

#: the catalogue study (base name; ``-quick`` for the quick profile)
STUDY = "thesis-ias-observed"


@dataclass(frozen=True)
class ObservedProfile:
    """Platform size, horizon, workload seeds and workloads of one run of the study."""

    machines: int
    days: float
    seeds: tuple[int, ...]
    workloads: tuple[str, ...]


#: per reproduction profile (``quick``: ``varcap run``; ``full``: ``varcap reproduce``)
PROFILES: dict[str, ObservedProfile] = {
    # small enough for `varcap run` (18 runs of a few CPU seconds): the 1-h workload, where IAS has jobs to
    # judge on 20 machines in 3 days (on 10 machines in one day, or with the 5-min workload at this size,
    # every job is "big" under H1 or none outlives the hour: every instance degenerate)
    "quick": ObservedProfile(20, 3.0, (0, 1), ("pareto-1.5-3600-light",)),
    "full": ObservedProfile(40, 30.0, (0, 1, 2, 3, 4), ("pareto-1.5-300-light", "pareto-1.5-3600-light")),
}


def observed_scenarios(pr: ObservedProfile, grids: dict[str, str] | None = None) -> dict[tuple, Scenario]:
    """Key (grid, workload, seed) → the instance as a First-Fit :class:`~studies.scenarios.Scenario`
    (:func:`study_scenarios` runs the other policies on the same instance)."""
    out: dict[tuple, Scenario] = {}
    for grid, sig in (GRIDS if grids is None else grids).items():
        cap = {"kind": "carbon_budget", "grid": grid, "signal": sig}
        for wl in pr.workloads:
            for r in pr.seeds:
                out[(grid, wl, r)] = Scenario(
                    wl, cap, "ff", machines=pr.machines, horizon_days=pr.days, seed=r
                )
    return out


def study_scenarios(pr: Profile) -> dict[tuple, Scenario]:
    """:data:`STUDY` in reproduction profile ``pr`` (its :data:`PROFILES` entry): ``(grid, workload, seed,
    policy key) → Scenario`` keyed ``(grid, workload, policy key, seed)`` (the seed last, as every
    study's replicate), each instance of :func:`observed_scenarios` under First-Fit and
    :data:`~studies.thesis.general.MAIN` (First-Fit's scenario is the instance's own: same id)."""
    out: dict[tuple, Scenario] = {}
    for (grid, wl, r), sc in observed_scenarios(PROFILES[pr.name]).items():
        for key in ("ff", *MAIN):
            pol, st = arms(key)
            out[(grid, wl, key, r)] = dataclasses.replace(sc, policy=pol, settings=dict(st))
    return out


def mean_ci(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and 95 % Student-t interval of the finite values (a point for one value, nan for none)."""
    from scipy import stats

    x = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if x.size == 0:
        return (float("nan"),) * 3
    m = float(x.mean())
    if x.size < 2:
        return m, m, m
    half = float(stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return m, m - half, m + half


#: the values :func:`summary` averages over the decisive seeds (columns of ``out_thesis_ias_instances``)
SUMMARY_VALUES = ("ff_terminations", "terminations", "termination_cut_pct", "goodput_diff_pp")


def summary(table: pl.DataFrame) -> pl.DataFrame:
    """Per grid, workload and policy of ``table`` (rows of ``out_thesis_ias_instances`` of :data:`STUDY`):
    runs, decisive, degenerate and not-run runs (with the first degenerate reason), decisive runs that
    hold, and mean [95 % interval] over the decisive seeds of First-Fit's and the policy's terminations,
    the cut (%) and the goodput difference (pp): ``<value>``, ``<value>_lo``, ``<value>_hi``."""
    rows = []
    for (grid, wl, pol), g in table.group_by("grid", "workload", "policy", maintain_order=True):
        d = g.filter(pl.col("decisive"))
        not_run = g["degenerate_reason"].str.starts_with("not run: ")
        row: dict[str, Any] = {
            "grid": grid, "workload": wl, "policy": pol, "runs": g.height, "n_decisive": d.height,
            "n_degenerate": g.height - d.height - int(not_run.sum()), "n_not_run": int(not_run.sum()),
            "n_hold": int(d["holds"].sum()) if d.height else 0,
            "degenerate_reason": next((x for x, nr in zip(g["degenerate_reason"], not_run, strict=True)
                                       if x and not nr), ""),
        }  # fmt: skip
        for col in SUMMARY_VALUES:
            m, lo, hi = mean_ci(d[col].cast(pl.Float64).to_list())
            row |= {col: m, f"{col}_lo": lo, f"{col}_hi": hi}
        rows.append(row)
    return pl.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> None:
    """The study's table is read from its cached runs by :mod:`studies.thesis.ias_table` (which imports this
    module): say how."""
    ap = argparse.ArgumentParser(prog="python -m studies.thesis.observed", description=__doc__.split("\n")[0])
    ap.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    a = ap.parse_args(argv)
    raise SystemExit(f"python -m studies.thesis.ias_table {STUDY} --profile {a.profile}")


if __name__ == "__main__":
    main()
