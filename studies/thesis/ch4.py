"""The thesis' claims on First-Fit under variable capacity (§4.1), the capacity of observed grids (§2.1.2)
and the synthetic Zipf workloads (§4.3.1, Table 4.1): anchors, bands, computations from the runs and the
evidence for rows outside their band."""

from __future__ import annotations

import functools

import numpy as np
import polars as pl

from studies.claims import (
    CUT_BOUNDS,
    NULL_HISTORY,
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
def table_4_1_exact(skew: float) -> tuple[float, float, float, float]:
    """(mean, P50, P90, P95) in hours of the thesis' own definition of its synthetic durations (§4.3.1:
    ``min(k × 5 min, 720 h)``, ``k ~ Zipf(skew)``), exactly, from the distribution (no sampling)."""
    from scipy.special import zeta

    cap_k = 720 * 12  # the 720 h cap in 5-minute units
    k = np.arange(1, cap_k + 1, dtype=float)
    p = k**-skew / float(zeta(skew))
    cdf = np.cumsum(p)
    mean_k = float((k * p).sum()) + cap_k * (1.0 - float(cdf[-1]))

    def q(a: float) -> float:
        i = int(np.searchsorted(cdf, a - 1e-12))
        return float(min(i + 1, cap_k))

    return (mean_k / 12.0, q(0.5) / 12.0, q(0.9) / 12.0, q(0.95) / 12.0)


def table_4_1_reference() -> dict[float, tuple[tuple[float, float, float, float], list[str]]]:
    """Per skew, the values a Table 4.1 row is compared with and the cells where the printed value gives
    way: the printed cell, except where it lies more than 25 % from what the thesis' own definition gives
    exactly (:func:`table_4_1_exact`) — the printed number then contradicts the stated distribution, and
    the definition's value is the reference (the one such cell: Zipf-1.1's median, printed 30.75 h, exact
    48.33 h)."""
    from sim.workloads.generators import THESIS_TABLE_4_1

    out = {}
    for skew, printed in THESIS_TABLE_4_1.items():
        exact = table_4_1_exact(skew)
        ref, swapped = [], []
        for name, p, e in zip(("mean", "P50", "P90", "P95"), printed, exact, strict=True):
            if abs(e - p) > 0.25 * p:
                ref.append(e)
                swapped.append(f"Zipf-{skew} {name}: printed {p:.4g} h, definition {e:.4g} h")
            else:
                ref.append(p)
        out[skew] = (tuple(ref), swapped)
    return out


@functools.lru_cache(maxsize=128)
def _sampled_row(skew: float, r: int) -> tuple[float, ...]:
    """(mean, P50, P90, P95) in hours of 1,000,000 of varcap's Zipf-``skew`` durations of replicate ``r``
    (kept per process: the headline and its explanation read replicate 0's alike; 0.15 CPU s a row)."""
    from sim.workloads.generators import zipf_durations

    d = zipf_durations(skew, 1_000_000, np.random.default_rng([r, int(skew * 10)])) / 3600.0
    return (float(d.mean()), *(float(v) for v in np.percentile(d, [50, 90, 95])))


def _zipf_table(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    """Per replicate, the share of Table 4.1's 32 cells that varcap's sampled durations match within 25 %:
    against the reference of :func:`table_4_1_reference` (default) and against every printed value."""
    from sim.workloads.generators import THESIS_TABLE_4_1

    refs = table_4_1_reference()
    out: dict[str, list[float]] = {"default": [], "printed": []}
    for r in seeds(pr):
        ok = {"default": 0, "printed": 0}
        for skew, printed in THESIS_TABLE_4_1.items():
            got = _sampled_row(skew, r)
            for name, ref in (("default", refs[skew][0]), ("printed", printed)):
                ok[name] += sum(abs(g - p) <= 0.25 * p for g, p in zip(got, ref, strict=True))
        for name, n in ok.items():
            out[name].append(100.0 * n / (4 * len(THESIS_TABLE_4_1)))
    return out


def _explain_zipf_table(pr: Profile, runs: Runs) -> str:
    off = []
    for skew, (ref, _) in table_4_1_reference().items():
        got = _sampled_row(skew, 0)
        for name, g, p in zip(("mean", "P50", "P90", "P95"), got, ref, strict=True):
            if abs(g - p) > 0.25 * p:
                off.append(f"Zipf-{skew} {name}: varcap {g:.3g} h vs {p:.3g} h")
    swapped = [s for _, sw in table_4_1_reference().values() for s in sw]
    return (
        "Cells outside 25 % (seed 0): "
        + ("; ".join(off) if off else "none")
        + ". Compared with the definition instead of the printed value: "
        + ("; ".join(swapped) if swapped else "none")
        + "."
    )


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
        null=0.0,  # a loss: no loss does not show it
        reading_history=NULL_HISTORY,
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
        null=0.0,
        reading_history=NULL_HISTORY,
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
        "Statistics of job duration in the synthetic workloads (mean, P50, P90, P95 per skew); "
        "Zipf-1.1's P50 against the exact median of §4.3.1's definition (48.33 h), the table prints 30.75 h",
        "% of cells within 25 %",
        (100.0, 100.0),
        None,
        _zipf_table,
        _explain_zipf_table,
        bounds=SHARE_BOUNDS,
        reading_history=(
            "Default reading changed on 2026-11-27 (the commit that adds this sentence: git log -S'exact "
            "median of §4.3.1'), after the full run at 7f3d6d2 had shown 31 of 32 cells within 25 %: Table 4.1 "
            "prints Zipf-1.1's median as 30.75 h, but §4.3.1 defines the durations as min(k × 5 min, 720 h) "
            "with k ~ Zipf(1.1), whose exact median is 48.33 h (k = 580); no sample of that distribution can "
            "give the printed value, so the default compares that cell with the definition (every other "
            "printed cell lies within 20 % of it and stays the reference). Comparing with every printed value "
            "is the reading `printed`."
        ),
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
        "The workloads are min(k × 5 min, 720 h) with k ~ Zipf(skew) (sim.workloads.generators, §4.3.1). "
        "Under the printed reading one cell of 32 is off: Zipf-1.1's median, 47.5 h sampled (48.33 h exact) "
        "where Table 4.1 prints 30.75 h. The unit and the cap are the thesis' and the skew is the table's, so "
        "no parameter is left to choose: the printed P50 and the stated distribution disagree."
    ),
}

#: What the ch. 2 notebook's charts show next to varcap's values (injected by the report asset).
FIGURES = {"ch2_capacity": {"paper_dynamic_range": dict(DYNAMIC_RANGE)}}
