"""The ``ias-robustness`` grid: does IAS keep §6.2's claim ("consistently outperforms the baseline in
reducing job terminations, regardless of the scheduler's aggressiveness") on heavy-tailed instances it was not
designed on? The headline is the share of the grid's cells where it does; its evidence names each failing cell."""

from __future__ import annotations

import numpy as np
import polars as pl

from studies.claims import SHARE_BOUNDS, Headline, Profile, Runs, cut, metric, seeds
from studies.thesis.decisive import ias_decision
from studies.thesis.scenarios import robustness_cells, robustness_scenarios


def _cell_values(pr: Profile, runs: Runs, cell: tuple, key: str) -> tuple[list[float], list[float]]:
    """Per seed: termination cut (%) and goodput difference (pp) of ``key`` against FF in ``cell``."""
    sc = robustness_scenarios(pr)
    cuts, gps = [], []
    for r in seeds(pr):
        f, x = sc[(*cell, "ff", r)], sc[(*cell, key, r)]
        cuts.append(cut(metric(runs, f, "terminations"), metric(runs, x, "terminations")))
        gps.append(100 * (metric(runs, x, "goodput") - metric(runs, f, "goodput")))
    return cuts, gps


def _holds(ff_terms: float, ias_terms: float, gp: float) -> bool:
    """The claim in one run: fewer terminations than FF (none where FF has none) and goodput ≥ FF − 2 pp."""
    return (ias_terms < ff_terms or ias_terms == ff_terms == 0) and gp >= -2.0


def _cell_reasons(pr: Profile, runs: Runs) -> dict[tuple, str]:
    """Per (cell, seed): why the pair does not test IAS (``""``: decisive; the default A = 0.6 run's
    workload, the same H1 and trace as A = 0.1 and 0.9): :func:`studies.thesis.decisive.ias_decision`."""
    sc = robustness_scenarios(pr)
    return {
        (*cell, r): ias_decision(runs, sc[(*cell, "ff", r)], sc[(*cell, "ias-a0.6", r)])
        for r in seeds(pr)
        for cell in robustness_cells(pr)
    }


def _robust(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    """Share of the grid's decisive cells (%) where IAS holds the claim, per seed (nan when a seed has no
    decisive cell); default A = 0.6, readings A = 0.1 and 0.9. A degenerate cell (IAS cannot terminate
    anything there, or First-Fit terminates nothing) holds by construction and is left out."""
    sc = robustness_scenarios(pr)
    cells = robustness_cells(pr)
    why = _cell_reasons(pr, runs)
    res: dict[str, list[float]] = {"default": [], "A=0.1": [], "A=0.9": []}
    for r in seeds(pr):
        live = [c for c in cells if not why[(*c, r)]]
        for name, key in (("default", "ias-a0.6"), ("A=0.1", "ias-a0.1"), ("A=0.9", "ias-a0.9")):
            ok = 0
            for cell in live:
                f, x = sc[(*cell, "ff", r)], sc[(*cell, key, r)]
                g = 100 * (metric(runs, x, "goodput") - metric(runs, f, "goodput"))
                ok += _holds(metric(runs, f, "terminations"), metric(runs, x, "terminations"), g)
            res[name].append(100.0 * ok / len(live) if live else float("nan"))
    return res


def _robust_decisive(pr: Profile, runs: Runs) -> list[str]:
    """Every (cell, seed) run of the grid, its reason (``""``: decisive), for the row's counts."""
    return [
        f"α {k[0]:g}, xm {k[1]:g} s, {k[2]}, load {k[3]:g}, seed {k[4]}: {w}" if w else ""
        for k, w in _cell_reasons(pr, runs).items()
    ]


def _mean_ci(values: list[float]) -> tuple[float, float, float]:
    """Mean and 95 % Student-t interval of the finite values (a point for one value)."""
    from scipy import stats

    x = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if x.size == 0:
        return (float("nan"),) * 3
    m = float(x.mean())
    if x.size < 2:
        return m, m, m
    half = float(stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return m, m - half, m + half


def robustness_table(pr: Profile, runs: Runs, key: str = "ias-a0.6") -> pl.DataFrame:
    """Per cell: mean cut and goodput difference of ``key`` against FF with a 95 % t interval over the
    seeds, whether the mean holds the claim, and in how many seeds the cell tests IAS at all
    (``decisive_seeds``; :func:`studies.thesis.decisive.ias_decision`) with the first reason it does not."""
    rows = []
    why = _cell_reasons(pr, runs)
    for cell in robustness_cells(pr):
        reasons = [why[(*cell, r)] for r in seeds(pr)]
        cuts, gps = _cell_values(pr, runs, cell, key)
        (cm, clo, chi), (gm, glo, ghi) = _mean_ci(cuts), _mean_ci(gps)
        rows.append(
            {
                "alpha": cell[0], "xm_s": cell[1], "mix": cell[2], "load": cell[3], "cut": cm, "cut_lo": clo,
                "cut_hi": chi, "goodput_pp": gm, "goodput_lo": glo, "goodput_hi": ghi,
                "holds": bool(cm > 0 and gm >= -2.0),
                "decisive_seeds": sum(not w for w in reasons),
                "degenerate_reason": next((w for w in reasons if w), ""),
            }
        )  # fmt: skip
    return pl.DataFrame(rows)


PERIOD_S = (
    3600.0  # the grid's change period (1 change/hour): H2 protects a job that ends before the next change
)


def short_share(alpha: float, xm_s: float) -> float:
    """Share of a Pareto(α, xm) workload's jobs shorter than one change period (before the 72 h cap):
    1 − (xm / period)^α, 0 when xm ≥ the period — the jobs H2 can protect (Algorithm 2)."""
    return 0.0 if xm_s >= PERIOD_S else 1.0 - (xm_s / PERIOD_S) ** alpha


def cell_cause(cut: float, gp: float, h1: tuple[float, float], no_h1: tuple[float, float]) -> str:
    """The heuristic a failing cell's explaining runs point at, from the mean cut (%) and goodput
    difference (pp) of IAS, H1 alone (``h1``) and IAS without H1 (``no_h1``) against FF."""
    why = []
    if not cut > 0:
        if not h1[0] > 0 and no_h1[0] > 0:
            why.append("cut lost to H1's split (H1 alone cuts none, without H1 IAS cuts)")
        elif not h1[0] > 0:
            why.append("H1's split adds terminations and H2 + H4 cut none without it")
        elif not no_h1[0] > 0:
            why.append("H2 + H4 admit what FF would (H1 alone cuts)")
        else:
            why.append("cut lost only when H1 and H2 + H4 combine")
    if gp < -2.0:
        if h1[1] < -2.0 and no_h1[1] >= -2.0:
            why.append("goodput lost to H1's two pools (H1 alone loses it, without H1 IAS does not)")
        elif no_h1[1] < -2.0:
            why.append("goodput lost without H1 too (H2 + H4 delay admissions)")
        else:
            why.append("goodput lost only when H1 and H2 + H4 combine")
    return "; ".join(why)


def _explain_robust(pr: Profile, runs: Runs) -> str:
    """Per failing cell at A = 0.6: IAS's cut and goodput against FF, the explaining runs (H1 alone, IAS
    without H1), the cause they point at and the share of jobs shorter than one change period (what H2
    can protect; the thesis' own workloads have most of their jobs there)."""
    t = robustness_table(pr, runs)
    bad = t.filter(~pl.col("holds"))
    if bad.height == 0:
        return "Every cell holds the claim at A = 0.6."
    items = []
    for row in bad.iter_rows(named=True):
        cell = (row["alpha"], row["xm_s"], row["mix"], row["load"])
        h1c, h1g = _cell_values(pr, runs, cell, "ias-h1")
        noc, nog = _cell_values(pr, runs, cell, "ias-no-h1")
        h1, no = (float(np.mean(h1c)), float(np.mean(h1g))), (float(np.mean(noc)), float(np.mean(nog)))
        items.append(
            f"α {row['alpha']:g}, xm {row['xm_s']:g} s, {row['mix']}, load {row['load']:g}: cut "
            f"{row['cut']:.0f} % [{row['cut_lo']:.0f}, {row['cut_hi']:.0f}], goodput {row['goodput_pp']:+.1f} pp; "
            f"H1 alone {h1[0]:.0f} % / {h1[1]:+.1f} pp, without H1 {no[0]:.0f} % / {no[1]:+.1f} pp; "
            f"{cell_cause(row['cut'], row['goodput_pp'], h1, no)}; jobs under one period "
            f"{100 * short_share(row['alpha'], row['xm_s']):.0f} %"
        )
    return (
        f"Cells failing at A = 0.6 ({bad.height} of {t.height}; vs FF, mean over seeds): "
        + "; ".join(items)
        + "."
    )


ROBUSTNESS: list[Headline] = [
    Headline(
        "thesis-6.2-ias-robustness-grid",
        "000 thesis",
        "§6.2 (a grid of heavy-tailed instances)",
        100.0,
        "IAS consistently outperforms the baseline in reducing job terminations, regardless of the "
        "scheduler's aggressiveness (share of the grid's cells with fewer terminations than FF and goodput "
        "≥ FF − 2 pp)",
        "% of cells",
        (99.99, 100.0),
        "ias-robustness",
        _robust,
        _explain_robust,
        bounds=SHARE_BOUNDS,
        degenerate=_robust_decisive,
        per_replicate=False,  # the share is over the decisive cells of each seed already
    )
]


EXPLANATIONS: dict[str, str] = {
    "thesis-6.2-ias-robustness-grid": (
        "Full grid (40 × 24 cores, 14 days, 5 capacity seeds; 1,440 runs; `varcap reproduce` at 7f3d6d2, "
        "2026-11-25): 31 of 48 cells hold at A = 0.6 (65.4 % of cells per seed), 36 at A = 0.1 (74.6 %), 31 at "
        "A = 0.9 (65.0 %). Every cell with a 5-minute minimum duration holds but one, and every cell at load "
        "0.5 holds; the 17 failing cells, each with its explaining runs (H1 alone, IAS without H1), are in the "
        "evidence below. (1) The 16 cells with a 1-hour minimum at load 0.7 and 0.9 lose the cut (−7 … −313 "
        "%): H1 alone kills more than FF (−16 … −322 %) and IAS without H1 cuts −23 … +24 %. With every job at "
        "least one change period long, H2 (Algorithm 2: start a job only if it ends before the next change) "
        "protects none, and H1 (Algorithm 1: a job below the threshold may run only on machines above "
        "stableMachineIndex) moves the small jobs off the always-on machines where First-Fit would have kept "
        "many; H4 at A = 0.6 admits placements that survive with probability ≥ 0.4, which hourly intervals "
        "reach (per attempt the survival model is calibrated: seed 0 of an earlier run, predicted 0.82, "
        "observed 0.85). At load 0.5 the same cells cut 100 %: the variable machines are rarely needed. The "
        'thesis reports this of H1 itself (§6.1.1: "Prioritize big jobs (H1) increases the number of '
        "terminations and the number of jobs not scheduled\"); IAS's cut comes from H2 and H4 on the jobs H1 "
        "leaves to the variable machines. (2) α 2.5, 5-minute minimum, heavy mix, load 0.9: cut 100 % but "
        "goodput −3.6 pp; H1 alone loses the same (−3.5 pp) and IAS without H1 does not (−0.1 pp): the two "
        "pools, packed separately with 4–24-core jobs, strand capacity in each. Why the thesis' text does not "
        "cover them: its workloads (Zipf with a 5-minute unit, Azure) have most jobs shorter than one period "
        "(here 0 % in the 1-hour cells), which is what H2 relies on, and its evaluation runs at 80 % of a 70 % "
        "mean capacity; Algorithm 1's strict partition (a small job is scheduled only if i > "
        "stableMachineIndex) and A = 0.6 are prescribed (§6.1.1, Algorithm 5, §6.2), so no model change is "
        "supported. The quick grid (20 × 24, 7 days, 3 seeds) gave 11 of 16; in an earlier run h1=p90 failed "
        "in more cells (at load 0.5 too: it sends 90 % of the jobs to the variable machines)."
        " Those shares counted every cell. The row now counts decisive cells only "
        "(studies/thesis/decisive.py): by the workloads alone (seed 0, full grid) 30 of the 48 cells cannot "
        "test IAS — in the 16 load-0.5 cells the offered work fits the always-on pool, so H1 calls every job "
        "'big' and IAS never uses a variable machine; in 14 cells with a 5-minute minimum no job left to the "
        "variable machines is longer than the 1-hour change period (longest 0.17–0.71 h), so H2 protects every "
        "one — each a 100 % cut by construction. The 18 decisive cells are the 16 with a 1-hour minimum at "
        "load 0.7 and 0.9 (all failing above) and α 1.1, 5-minute minimum, load 0.9 (light and heavy); on the "
        "quick grid 12 of 48 cell runs are decisive."
    ),
}
