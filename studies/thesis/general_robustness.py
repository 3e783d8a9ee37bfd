"""A robustness grid for ``ias-general`` (varcap's extension of IAS), beside IAS's own (the ``ias-robustness``
grid of :mod:`studies.thesis.robustness`): does the claim of paper 000 §6.2 — fewer terminations than
First-Fit at a goodput no worse than First-Fit's − 2 pt — hold across offered load × minimum job
duration × capacity change rate?

Cells: heavy-tailed Pareto(1.5) durations capped at 72 h with the light core mix, minimum duration
(``xm``) 5 min or 1 h, offered load of the mean capacity, under the thesis' random walk (step 0.15, dynamic
range 60 %) at a change rate; ``machines`` × 24 cores for ``days`` days, the profile's seeds as capacity and
workload seeds. Each (cell, seed) is one instance run with First-Fit, ``ias`` and ``ias-general`` by
:func:`studies.thesis.general.run_pair`, decisive by the reproduction's rule
(:func:`studies.generalization.ias_decisive`). :func:`grid_shares` reports, per policy, the share of the
decisive (cell, seed) runs that hold, with the per-seed shares' mean and 95 % interval, and the share over
the runs where First-Fit terminates something (``ias-general`` has no "big" jobs, so it faces its decision
on every such run even where IAS's H1 makes the run degenerate for ``ias``).

``python -m studies.thesis.general_robustness [--profile quick|full] [--out FILE]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from studies.scenarios import Scenario, walk
from studies.thesis.general import MAIN, run_pair
from studies.thesis.observed import mean_ci


@dataclass(frozen=True)
class GridProfile:
    """The grid's axes, platform, horizon and seeds."""

    loads: tuple[float, ...]
    xms: tuple[float, ...]
    rates: tuple[float, ...]
    machines: int
    days: float
    seeds: tuple[int, ...]


PROFILES: dict[str, GridProfile] = {
    "quick": GridProfile((0.6, 0.9), (300.0, 3600.0), (1.0, 4.0), 8, 0.5, (0,)),
    "full": GridProfile((0.5, 0.7, 0.9), (300.0, 3600.0), (0.5, 1.0, 2.0, 4.0), 40, 7.0, (0, 1, 2)),
}
ALPHA = 1.5
STEP = 0.15


def grid_cells(pr: GridProfile) -> list[tuple[float, float, float]]:
    """The cells (load, xm in seconds, changes per hour) in table order."""
    return [(load, xm, f) for load in pr.loads for xm in pr.xms for f in pr.rates]


def grid_scenarios(pr: GridProfile) -> dict[tuple, Scenario]:
    """Key (load, xm, changes per hour, seed) → the instance as a First-Fit scenario."""
    return {
        (load, xm, f, r): Scenario(
            f"pareto-{ALPHA:g}-{xm:g}-light",
            walk(f, STEP, r),
            "ff",
            machines=pr.machines,
            horizon_days=pr.days,
            seed=r,
            load=load,
        )  # fmt: skip
        for load, xm, f in grid_cells(pr)
        for r in pr.seeds
    }


def grid_table(pr: GridProfile, keys: Sequence[str] = MAIN) -> pl.DataFrame:
    """One row per (cell, seed) and policy key: :func:`run_pair`'s columns with the cell's axes."""
    rows: list[dict[str, Any]] = []
    for (load, xm, f, r), sc in grid_scenarios(pr).items():
        label = f"load {load:g} xm {xm:g} s {f:g}/h s{r}"
        for row in run_pair(sc, keys, label):
            rows.append({"load": load, "xm_s": xm, "changes_per_hour": f, "seed": r, **row})
    return pl.DataFrame(rows)


def grid_shares(table: pl.DataFrame) -> pl.DataFrame:
    """Per policy: decisive and degenerate (cell, seed) runs, the share (%) of the decisive ones that hold
    and the per-seed shares' mean [95 % interval]; the same share over the runs where First-Fit terminates
    something."""
    rows = []
    for (pol,), g in table.group_by("policy", maintain_order=True):
        d = g.filter(pl.col("decisive"))
        k = g.filter(pl.col("ff_kills") > 0)
        per_seed = [
            100.0 * float(s["holds"].mean()) for _, s in d.group_by("seed", maintain_order=True) if s.height
        ]
        m, lo, hi = mean_ci(per_seed)
        rows.append({
            "policy": pol, "runs": g.height, "n_decisive": d.height, "n_degenerate": g.height - d.height,
            "n_hold": int(d["holds"].sum()) if d.height else 0,
            "hold_pct_decisive": 100.0 * float(d["holds"].mean()) if d.height else float("nan"),
            "seed_share_mean": m, "seed_share_lo": lo, "seed_share_hi": hi,
            "n_ff_kills": k.height,
            "hold_pct_ff_kills": 100.0 * float(k["holds"].mean()) if k.height else float("nan"),
        })  # fmt: skip
    return pl.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m studies.thesis.general_robustness", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    ap.add_argument("--out", type=Path, help="write the per-run table here (parquet)")
    a = ap.parse_args(argv)
    t = grid_table(PROFILES[a.profile])
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, fmt_str_lengths=60, float_precision=2):
        print(t.select("load", "xm_s", "changes_per_hour", "seed", "policy", "jobs", "ff_kills", "kills",
                       "cut_pct", "goodput_pt", "holds", "decisive"))  # fmt: skip
        print(grid_shares(t))
    if a.out:
        t.write_parquet(a.out)


if __name__ == "__main__":
    main()
