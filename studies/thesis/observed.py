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
defaults) and ``ias-general`` (varcap's extension) by :func:`studies.thesis.general.run_pair`: kills, cut,
goodput difference, and whether the instance is *decisive* by the rule the reproduction counts with
(:func:`studies.generalization.ias_decisive`: First-Fit terminates something, some job is not "big" under
H1, some such job is longer than the change period). :func:`summary` gives per grid, workload and policy
the decisive and degenerate counts, the runs that hold the claim (cut > 0, goodput ≥ First-Fit's − 2 pt)
and means with 95 % Student-t intervals over the decisive seeds.

``python -m studies.thesis.observed [--profile quick|medium|full] [--inputs DIR] [--out FILE]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sim.paths import data_dir
from studies.scenarios import Scenario
from studies.signals import GRIDS
from studies.thesis.general import MAIN, run_pair


@dataclass(frozen=True)
class ObservedProfile:
    """Platform size, horizon, workload seeds and workloads of one run of the study."""

    machines: int
    days: float
    seeds: tuple[int, ...]
    workloads: tuple[str, ...]


PROFILES: dict[str, ObservedProfile] = {
    # small enough for the tests: 10 machines, one day, two seeds of the 5-min workload
    "quick": ObservedProfile(10, 1.0, (0, 1), ("pareto-1.5-300-light",)),
    # a few CPU minutes: 20 machines for a week, three seeds of both workloads
    "medium": ObservedProfile(20, 7.0, (0, 1, 2), ("pareto-1.5-300-light", "pareto-1.5-3600-light")),
    "full": ObservedProfile(40, 30.0, (0, 1, 2, 3, 4), ("pareto-1.5-300-light", "pareto-1.5-3600-light")),
}


def observed_scenarios(pr: ObservedProfile, grids: dict[str, str] | None = None) -> dict[tuple, Scenario]:
    """Key (grid, workload, seed) → the instance as a First-Fit :class:`~studies.scenarios.Scenario`
    (:func:`run_pair` runs the other policies on the same instance)."""
    out: dict[tuple, Scenario] = {}
    for grid, sig in (GRIDS if grids is None else grids).items():
        cap = {"kind": "carbon_budget", "grid": grid, "signal": sig}
        for wl in pr.workloads:
            for r in pr.seeds:
                out[(grid, wl, r)] = Scenario(
                    wl, cap, "ff", machines=pr.machines, horizon_days=pr.days, seed=r
                )
    return out


def observed_table(
    pr: ObservedProfile, inputs: Path, grids: dict[str, str] | None = None, keys: Sequence[str] = MAIN
) -> pl.DataFrame:
    """One row per instance of :func:`observed_scenarios` and policy key: :func:`run_pair`'s columns with
    grid, workload and seed. Raises FileNotFoundError when the exported carbon input is missing."""
    rows: list[dict[str, Any]] = []
    for (grid, wl, r), sc in observed_scenarios(pr, grids).items():
        for row in run_pair(sc, keys, f"{grid} {wl} s{r}", inputs):
            rows.append({"grid": grid, "workload": wl, "seed": r, **row})
    return pl.DataFrame(rows)


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


def summary(table: pl.DataFrame) -> pl.DataFrame:
    """Per grid, workload and policy: runs, decisive and degenerate runs (with the first degenerate
    reason), decisive runs that hold, and mean [95 % interval] over the decisive seeds of First-Fit's and
    the policy's kills, the cut (%) and the goodput difference (pt)."""
    rows = []
    for (grid, wl, pol), g in table.group_by("grid", "workload", "policy", maintain_order=True):
        d = g.filter(pl.col("decisive"))
        row: dict[str, Any] = {
            "grid": grid, "workload": wl, "policy": pol, "runs": g.height, "n_decisive": d.height,
            "n_degenerate": g.height - d.height, "n_hold": int(d["holds"].sum()) if d.height else 0,
            "degenerate_reason": next((x for x in g["degenerate_reason"] if x), ""),
        }  # fmt: skip
        for col in ("ff_kills", "kills", "cut_pct", "goodput_pt"):
            m, lo, hi = mean_ci(d[col].cast(pl.Float64).to_list())
            row |= {col: m, f"{col}_lo": lo, f"{col}_hi": hi}
        rows.append(row)
    return pl.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.thesis.observed", description=__doc__.split("\n")[0])
    ap.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    ap.add_argument(
        "--inputs", type=Path, default=None, help="exported sweep inputs (default data/sim/inputs)"
    )
    ap.add_argument("--out", type=Path, help="write the per-instance table here (parquet)")
    a = ap.parse_args(argv)
    inputs = a.inputs or data_dir() / "sim" / "inputs"
    try:
        t = observed_table(PROFILES[a.profile], inputs)
    except (FileNotFoundError, ValueError) as e:
        raise SystemExit(f"{e}") from None
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, fmt_str_lengths=60, float_precision=2):
        print(t.select("grid", "workload", "seed", "policy", "machines", "jobs", "ff_kills", "kills", "cut_pct",
                       "goodput_pt", "holds", "decisive", "cpu_s", "ff_cpu_s"))  # fmt: skip
        print(summary(t).drop("degenerate_reason"))
    if a.out:
        t.write_parquet(a.out)


if __name__ == "__main__":
    main()
