"""The thesis' claims on First-Fit under variable capacity (§4.1), the capacity of observed grids (§2.1.2)
and the synthetic Zipf workloads (§4.3.1, Table 4.1): anchors, bands, computations from the runs and the
evidence for rows outside their band."""

from __future__ import annotations

import numpy as np
import polars as pl

from studies.claims import (
    CUT_BOUNDS,
    R_BOUNDS,
    SHARE_BOUNDS,
    Headline,
    MissingRuns,
    Profile,
    Runs,
    cut,
    factor2,
    metric,
    seeds,
    within25,
    workload,
)
from studies.scenarios import Scenario
from studies.thesis.scenarios import ch4_scenarios

#: Thesis §2.1.2, Fig. 2.2b: dynamic range of capacity under a constant carbon budget (fraction of the
#: machines). SPP has no headline: its carbon series is not embedded (the ch. 2 figure shows it if loaded).
DYNAMIC_RANGE = {"MISO": 0.393, "ERCOT": 0.545, "SPP": 0.597, "CAISO": 0.694}
#: §4.1, Fig. 4.1: goodput loss (%) against the fixed platform at 8 changes/hour, per workload.
GOODPUT_LOSS_8H = {"azure": 24.0, "borg": 19.0}


# ---- §4.1 goodput loss
def _loss(wl: str):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ch4_scenarios(pr)
        f = max(pr.ch4_freqs)
        pp, rel = [], []
        for r in seeds(pr):
            g0, g = (
                metric(runs, sc[(wl, "fixed", r)], "goodput"),
                metric(runs, sc[(wl, f, 0.15, r)], "goodput"),
            )
            pp.append(100 * (g0 - g))
            rel.append(cut(g0, g))
        return {"pp": pp, "relative": rel}

    return compute


def _explain_loss(wl: str):
    def evidence(pr: Profile, runs: Runs) -> str:
        sc = ch4_scenarios(pr)
        w = workload(runs, sc[(wl, max(pr.ch4_freqs), 0.15, 0)])
        d = w["duration_s"].to_numpy() / 3600.0
        trend = []
        for f in pr.ch4_freqs:
            losses = [
                100
                * (
                    metric(runs, sc[(wl, "fixed", r)], "goodput")
                    - metric(runs, sc[(wl, f, 0.15, r)], "goodput")
                )
                for r in seeds(pr)
            ]
            trend.append(f"{f:g}/h {np.mean(losses):.1f}")
        return (
            f"Evidence ({wl}): job duration mean {d.mean():.2f} h, median {np.median(d) * 60:.0f} min, P95 "
            f"{np.percentile(d, 95):.2f} h; goodput loss (pp, mean of seeds) by change frequency: "
            + ", ".join(trend)
            + "."
        )

    return evidence


# ---- §4.1 terminations vs intervals
def _intervals(sc: Scenario) -> int:
    from sim.capacity.generators import random_walk
    from sim.capacity.intervals import extract_intervals

    c = sc.capacity
    machines = sc.machines or 244
    tr = random_walk(
        machines, sc.horizon_s, c["changes_per_hour"], c["step"], c["dynamic_range"], seed=c["seed"]
    )
    return extract_intervals(tr).height


def _r_terms_intervals(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    sc = ch4_scenarios(pr)
    per: dict[str, list[float]] = {"min": [], "azure": [], "borg": []}
    for r in seeds(pr):
        rs = {}
        for wl, key in (("azure", "azure"), ("borg2011-native", "borg")):
            pts = [k for k in sc if k[0] == wl and k[1] != "fixed" and k[-1] == r]
            terms = [metric(runs, sc[k], "terminations") for k in pts]
            ivs = []
            for k in pts:
                s = sc[k]
                if s.machines == 0:  # platform sized by the sweep: take it from the run
                    s = Scenario(
                        s.workload,
                        s.capacity,
                        machines=int(runs[s.id]["machines"]),
                        horizon_days=s.horizon_days,
                        seed=s.seed,
                    )
                ivs.append(_intervals(s))
            rs[key] = float(np.corrcoef(ivs, terms)[0, 1])
        per["azure"].append(rs["azure"])
        per["borg"].append(rs["borg"])
        per["min"].append(min(rs.values()))
    return per


# ---- §4.3.1 Table 4.1
def _zipf_table(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    from sim.workloads.generators import THESIS_TABLE_4_1, zipf_durations

    out = []
    for r in seeds(pr):
        ok = 0
        for skew, printed in THESIS_TABLE_4_1.items():
            d = zipf_durations(skew, 1_000_000, np.random.default_rng([r, int(skew * 10)])) / 3600.0
            got = (d.mean(), *np.percentile(d, [50, 90, 95]))
            ok += sum(abs(g - p) <= 0.25 * p for g, p in zip(got, printed, strict=True))
        out.append(100.0 * ok / (4 * len(THESIS_TABLE_4_1)))
    return {"cells": out}


def _explain_zipf_table(pr: Profile, runs: Runs) -> str:
    from sim.workloads.generators import THESIS_TABLE_4_1, zipf_durations

    off = []
    for skew, printed in THESIS_TABLE_4_1.items():
        d = zipf_durations(skew, 1_000_000, np.random.default_rng([0, int(skew * 10)])) / 3600.0
        got = (d.mean(), *np.percentile(d, [50, 90, 95]))
        for name, g, p in zip(("mean", "P50", "P90", "P95"), got, printed, strict=True):
            if abs(g - p) > 0.25 * p:
                off.append(f"Zipf-{skew} {name}: varcap {g:.3g} h vs printed {p:.3g} h")
    return "Cells outside 25 %: " + ("; ".join(off) if off else "none") + "."


# ---- §2.1.2 dynamic range
def _dynamic_range(grid: str):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        trace = grid_capacity(grid)
        a = trace.machines_alive / trace.machines
        # readings of "dynamic range" (thesis §2.1.2, Fig. 2.2b gives no formula): the whole span of the
        # capacity distribution, its 5–95 % span, and the span relative to the mean (ub − lb)/mean
        return {
            "max-min": [100 * float(a.max() - a.min())],
            "p95-p5": [100 * float(np.percentile(a, 95) - np.percentile(a, 5))],
            "span/mean": [100 * float((a.max() - a.min()) / a.mean())],
        }

    return compute


def grid_capacity(grid: str):
    """The constant-carbon-budget capacity trace of ``grid`` over its April (mean 70 % of 1000 machines),
    from the exported sweep input ``grid_carbon.parquet`` (thesis §2.1.2)."""
    from sim.capacity.generators import budget_trace
    from studies.signals import GRIDS
    from studies.sweep import inputs_dir

    f = inputs_dir() / "grid_carbon.parquet"
    if not f.is_file():
        raise MissingRuns(f"{f}: sweep input missing; materialize out_sim_inputs (varcap reproduce does)")
    sig = pl.read_parquet(f).filter(pl.col("series") == f"{grid}:{GRIDS[grid]}").sort("hour")
    return budget_trace(sig["gco2_per_kwh"].to_numpy(), 1000, "carbon", label=grid)


def _dynamic_range_headline(grid: str, quote: str) -> Headline:
    v = round(100 * DYNAMIC_RANGE[grid], 6)
    return Headline(
        f"thesis-2.1.2-dynamic-range-{grid.lower()}",
        "000 thesis",
        "§2.1.2 Fig. 2.2b",
        v,
        quote.format(v=f"{v:g}"),
        "% of machines",
        within25(v),
        None,
        _dynamic_range(grid),
        bounds=SHARE_BOUNDS,
    )


HEADLINES: list[Headline] = [
    Headline(
        "thesis-4.1-goodput-loss-azure-8h",
        "000 thesis",
        "§4.1 Fig. 4.1a",
        GOODPUT_LOSS_8H["azure"],
        "As the change frequency increases to 8 changes/hour, the Azure workload experiences a goodput "
        "loss of 24 %",
        "%",
        factor2(GOODPUT_LOSS_8H["azure"]),
        "repro-thesis-ch4",
        _loss("azure"),
        _explain_loss("azure"),
        bounds=CUT_BOUNDS,
    ),
    Headline(
        "thesis-4.1-goodput-loss-borg-8h",
        "000 thesis",
        "§4.1 Fig. 4.1b",
        GOODPUT_LOSS_8H["borg"],
        "… and the Borg workload experiences a goodput loss of 19 %",
        "%",
        factor2(GOODPUT_LOSS_8H["borg"]),
        "repro-thesis-ch4",
        _loss("borg2011-native"),
        _explain_loss("borg2011-native"),
        bounds=CUT_BOUNDS,
    ),
    Headline(
        "thesis-4.1-terminations-vs-intervals-r",
        "000 thesis",
        "§4.1 Figs. 4.3–4.4",
        1.0,
        "the number of job terminations is proportional to the number of intervals … in both workloads",
        "Pearson r",
        (0.8, 1.0),
        "repro-thesis-ch4",
        _r_terms_intervals,
        bounds=R_BOUNDS,
    ),
    _dynamic_range_headline("CAISO", "a dynamic range of … {v} % in CAISO"),
    _dynamic_range_headline("ERCOT", "a dynamic range of … {v} % in ERCOT"),
    _dynamic_range_headline("MISO", "a dynamic range of {v} % in MISO"),
]

TABLE_4_1: list[Headline] = [
    Headline(
        "thesis-4.1-zipf-table",
        "000 thesis",
        "§4.3.1 Table 4.1",
        100.0,
        "Statistics of job duration in the synthetic workloads (mean, P50, P90, P95 per skew)",
        "% of cells within 25 %",
        (100.0, 100.0),
        None,
        _zipf_table,
        _explain_zipf_table,
        bounds=SHARE_BOUNDS,
    )
]

#: Causes of rows outside their band, each with the run that isolates it (see the README's reproduction
#: section).
EXPLANATIONS: dict[str, str] = {
    "thesis-4.1-goodput-loss-borg-8h": (
        "Direction reproduced (variable capacity loses goodput against the fixed platform, most at 8 "
        "changes/h; below 4 changes/h the loss is flat within the seeds' spread), magnitude about a third. "
        "The stand-in is the cause we can name: the embedded Borg 2011 sample's jobs are much shorter than the "
        "thesis' Borg 2019 sample (§2.2: mean 1.66 h, median 6 min, P95 4 h), so a kill wastes less work "
        "(evidence below). The thesis' own data are not embedded (data/samples/README.md), so no run isolates "
        "the workload effect further."
    ),
    "thesis-4.1-zipf-table": (
        "One cell of 32. The workloads are min(k × 5 min, 720 h) with k ~ Zipf(skew) (sim.workloads.generators), which "
        "matches the other 31 printed cells within 25 %; at skew 1.1 its median is 47.5 h where Table 4.1 "
        "prints 30.75 h. The unit and the cap are the thesis' and the skew is the table's, so no parameter is "
        "left to choose: the printed P50 and the stated distribution disagree."
    ),
}

#: What the ch. 2 notebook's charts show next to varcap's values (injected by the report asset).
FIGURES = {"ch2_capacity": {"paper_dynamic_range": dict(DYNAMIC_RANGE)}}
