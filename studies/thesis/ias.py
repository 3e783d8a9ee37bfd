"""The thesis' claims on the Interval-Aware Scheduler (§6.2–6.3, Table 6.2; issue #10's generic
heavy-tailed instance): anchors, bands, computations from the runs, and the evidence for rows outside
their band (one breakdown of terminations by job duration, shared by every IAS row)."""

from __future__ import annotations

import numpy as np
import polars as pl

from studies.claims import Headline, Profile, Runs, cut, factor2, metric, per_job, seeds, workload
from studies.scenarios import Scenario
from studies.thesis.scenarios import ch6_scenarios, generic_scenarios

#: Thesis §6.3 Table 6.2: IAS (A = 60 %) reduction in terminations over FF (%), per Zipf skew.
TABLE_6_2_CUT = {
    "1.1": 96.42,
    "1.2": 93.52,
    "1.3": 88.82,
    "1.4": 82.94,
    "1.5": 74.93,
    "1.6": 59.09,
    "1.7": 41.15,
    "1.8": 8.03,
}
AZURE_CUT = 92.04  # §6.3 Table 6.2, Azure: "we can achieve 92 % lower terminations"
#: Table 6.2 / §6.3: goodput difference IAS − FF (percentage points) where the text prints it.
GOODPUT_PP = {"zipf-1.5": 2.02, "azure": -0.05}
CUT_LOW_A = 98.0  # §6.2, Fig. 6.3: "further reduced by up to 98 % under lower aggressiveness"
CUT_A_0_9 = 32.0  # §6.2: 32 % fewer terminations at A = 90 % (issue #10's anchor; its band: any cut)
GENERIC_DEFAULT = "pareto-1.5-300"


# ---- Table 6.2 and §6.3
_READING = {"ias-all": "survival_pool=all", "ias-no-h1": "no-h1 (H2+H4)"}


def _ias_cut(wl: str, key: str = "ias"):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ch6_scenarios(pr)
        alts = [a for a in ("ias-all", "ias-no-h1") if key == "ias" and (wl, a, 0) in sc]
        res: dict[str, list[float]] = {"default": [], **{_READING[a]: [] for a in alts}}
        for r in seeds(pr):
            ff = metric(runs, sc[(wl, "ff", r)], "terminations")
            res["default"].append(cut(ff, metric(runs, sc[(wl, key, r)], "terminations")))
            for a in alts:
                res[_READING[a]].append(cut(ff, metric(runs, sc[(wl, a, r)], "terminations")))
        return res

    return compute


def _ias_goodput(wl: str):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ch6_scenarios(pr)
        res: dict[str, list[float]] = {"default": [], **{v: [] for v in _READING.values()}}
        for r in seeds(pr):
            ff = metric(runs, sc[(wl, "ff", r)], "goodput")
            res["default"].append(100 * (metric(runs, sc[(wl, "ias", r)], "goodput") - ff))
            for a, name in _READING.items():
                res[name].append(100 * (metric(runs, sc[(wl, a, r)], "goodput") - ff))
        return res

    return compute


# ---- issue #10's generic instance
def _generic_cut(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    """Termination cut of IAS vs FF on the generic instance; default α = 1.5, xm = 5 min, A = 0.6."""
    sc = generic_scenarios(pr)
    wls = sorted({k[0] for k in sc}, key=lambda w: (w != GENERIC_DEFAULT, w))
    res: dict[str, list[float]] = {}
    for wl in wls:
        for key in ("ias", "ias-a0.1", "ias-a0.9", "ias-no-h1"):
            name = "default" if (wl, key) == (GENERIC_DEFAULT, "ias") else f"{wl}:{key}"
            res.setdefault(name, [])
    res = {"default": res.pop("default"), **res}
    for r in seeds(pr):
        for wl in wls:
            ff = metric(runs, sc[(wl, "ff", r)], "terminations")
            for key in ("ias", "ias-a0.1", "ias-a0.9", "ias-no-h1"):
                name = "default" if (wl, key) == (GENERIC_DEFAULT, "ias") else f"{wl}:{key}"
                res[name].append(cut(ff, metric(runs, sc[(wl, key, r)], "terminations")))
    return res


# ---- evidence for rows outside their band
_CLASSES = ((3600.0, "≤1 h"), (5 * 3600.0, "1–5 h"), (30 * 3600.0, "5–30 h"), (float("inf"), ">30 h"))
CLASS_NAMES = " / ".join(n for _, n in _CLASSES)


def _by_class(out: pl.DataFrame, wl: pl.DataFrame) -> pl.DataFrame:
    """Terminations, jobs and never-started jobs per duration class (whole run, every job)."""
    j = out.join(wl, on="job_id")
    cls = pl.lit(_CLASSES[-1][1])
    for lim, name in reversed(_CLASSES[:-1]):
        cls = pl.when(pl.col("duration_s") <= lim).then(pl.lit(name)).otherwise(cls)
    return (
        j.with_columns(cls.alias("cls"))
        .group_by("cls")
        .agg(
            pl.col("terminations").sum().alias("terms"),
            pl.len().alias("jobs"),
            (pl.col("status") == "never_started").sum().alias("never"),
        )
    )


def _fmt_classes(t: pl.DataFrame, col: str) -> str:
    d = dict(zip(t["cls"].to_list(), t[col].to_list(), strict=True))
    return " / ".join(f"{d.get(name, 0):,}" for _, name in _CLASSES)


def breakdown(runs: Runs, ff: Scenario, ias: Scenario) -> tuple[str, pl.DataFrame]:
    """Terminations of FF and IAS and jobs per duration class (:data:`CLASS_NAMES`), as the text every
    IAS evidence shows, and IAS's per-class frame (for further columns)."""
    w = workload(runs, ff)
    f, i = _by_class(per_job(runs, ff), w), _by_class(per_job(runs, ias), w)
    text = f"terminations FF {_fmt_classes(f, 'terms')}, IAS {_fmt_classes(i, 'terms')}; jobs {_fmt_classes(f, 'jobs')}"
    return text, i


def _explain_ias_cut(wl: str):
    def evidence(pr: Profile, runs: Runs) -> str:
        sc = ch6_scenarios(pr)
        text, ias = breakdown(runs, sc[(wl, "ff", 0)], sc[(wl, "ias", 0)])
        return (
            f"Evidence ({wl}, seed 0, whole run; job durations {CLASS_NAMES}): {text}; never started under "
            f"IAS {_fmt_classes(ias, 'never')}."
        )

    return evidence


def _explain_generic(pr: Profile, runs: Runs) -> str:
    sc = generic_scenarios(pr)
    f, i = sc[(GENERIC_DEFAULT, "ff", 0)], sc[(GENERIC_DEFAULT, "ias", 0)]
    text, _ = breakdown(runs, f, i)
    mf, mi = runs[f.id]["metrics"], runs[i.id]["metrics"]
    return (
        f"Evidence ({GENERIC_DEFAULT}, seed 0; durations {CLASS_NAMES}): {text}; "
        f"idle fraction FF {mf['idle_fraction']:.3f}, IAS {mi['idle_fraction']:.3f}."
    )


def _explain_ias_goodput(wl: str):
    def evidence(pr: Profile, runs: Runs) -> str:
        sc = ch6_scenarios(pr)
        f, i = sc[(wl, "ff", 0)], sc[(wl, "ias", 0)]
        w = workload(runs, f)
        work = (w["duration_s"] * w["cores"]).to_numpy()
        big = work >= np.percentile(work, 90)
        mf, mi = runs[f.id]["metrics"], runs[i.id]["metrics"]
        text = (
            f"Evidence ({wl}, seed 0): idle fraction FF {mf['idle_fraction']:.3f} vs IAS "
            f"{mi['idle_fraction']:.3f}; jobs never started FF {mf['jobs_not_scheduled']:,} vs IAS "
            f"{mi['jobs_not_scheduled']:,}; the big jobs H1 confines to the always-on machines (duration × cores"
            f" ≥ P90) carry {100 * work[big].sum() / work.sum():.0f} % of the offered work, and the always-on "
            f"machines are 40 % of the platform while the load is 56 % (80 % of the 70 % mean)."
        )
        n = sc.get((wl, "ias-no-h1", 0))
        if n is not None and n.id in runs:
            mn = runs[n.id]["metrics"]
            text += (
                f" Without H1 (H2 + H4 on every machine): idle fraction {mn['idle_fraction']:.3f}, jobs never "
                f"started {mn['jobs_not_scheduled']:,}, terminations {mn['terminations']:,} (FF "
                f"{mf['terminations']:,}, IAS {mi['terminations']:,})."
            )
        return text

    return evidence


# ---- headlines
TABLE_6_2: list[Headline] = [
    Headline(
        f"thesis-6.2-ias-cut-zipf-{s}",
        "000 thesis",
        "§6.3 Table 6.2",
        v,
        f"IAS (A = 60 %) reduces terminations over FF by {v} % on Zipf-{s}",
        "%",
        factor2(v),
        "repro-thesis-ch6",
        _ias_cut(f"zipf-{s}"),
        _explain_ias_cut(f"zipf-{s}"),
    )
    for s, v in TABLE_6_2_CUT.items()
]

HEADLINES: list[Headline] = [
    *TABLE_6_2,
    Headline(
        "thesis-6.2-ias-goodput-zipf-1.5",
        "000 thesis",
        "§6.3 Table 6.2",
        GOODPUT_PP["zipf-1.5"],
        f"Gain in goodput over FF: {GOODPUT_PP['zipf-1.5']} % (Zipf-1.5)",
        "pp",
        (0.02, 4.02),  # ± 2 pp (§3.3, eq. 3.1)
        "repro-thesis-ch6",
        _ias_goodput("zipf-1.5"),
        _explain_ias_goodput("zipf-1.5"),
    ),
    Headline(
        "thesis-6.2-ias-cut-a0.1-zipf-1.5",
        "000 thesis",
        "§6.2 Fig. 6.3",
        CUT_LOW_A,
        "The number of terminations can be further reduced by up to 98 % under lower aggressiveness",
        "%",
        factor2(CUT_LOW_A),
        "repro-thesis-ch6",
        _ias_cut("zipf-1.5", "ias-a0.1"),
    ),
    Headline(
        "thesis-6.3-ias-cut-azure",
        "000 thesis",
        "§6.3 Table 6.2",
        AZURE_CUT,
        "In the Azure workload, we can achieve 92 % lower terminations",
        "%",
        factor2(AZURE_CUT),
        "repro-thesis-ch6",
        _ias_cut("azure"),
        _explain_ias_cut("azure"),
    ),
    Headline(
        "thesis-6.3-ias-goodput-azure",
        "000 thesis",
        "§6.3 Table 6.2",
        GOODPUT_PP["azure"],
        "while maintaining similar goodput to FF (−0.05 %)",
        "pp",
        (-2.05, 1.95),  # ± 2 pp (§3.3, eq. 3.1)
        "repro-thesis-ch6",
        _ias_goodput("azure"),
        _explain_ias_goodput("azure"),
    ),
]

GENERIC: list[Headline] = [
    Headline(
        "issue10-generic-ias-cut",
        "000 thesis",
        "§6.2 (issue #10's generic heavy-tailed instance)",
        CUT_A_0_9,
        "IAS consistently outperforms the baseline in reducing job terminations, regardless of the "
        "scheduler's aggressiveness (32 % fewer at A = 90 %, up to 98 % at low A)",
        "%",
        (0.01, 100.0),
        "repro-generic",
        _generic_cut,
        _explain_generic,
    )
]

_CUT_TREND = (
    "Direction reproduced, the trend across skews is not: varcap's cut does not fall as the workload gets "
    "lighter-tailed, where the thesis' falls to 8 % at Zipf-1.8. Most of FF's terminations hit jobs longer "
    "than 30 h, which FF restarts from scratch after every kill (thesis §3.2: re-queued at the back) and "
    "which die again at a later drop; IAS's H1 runs every big job on the always-on machines, where nothing "
    "is killed, and H2 removes every termination of jobs up to one period, leaving only the 1–5 h jobs "
    "that H4 admits (evidence below). A falling cut needs FF terminations dominated by jobs IAS cannot "
    "protect; the thesis breaks down only IAS's terminations by duration (Fig. 6.7), not FF's, so the "
    "difference cannot be traced further from its text."
)
#: Causes of rows outside their band, each with the run that isolates it.
EXPLANATIONS: dict[str, str] = {
    **{h.id: _CUT_TREND for h in TABLE_6_2},
    "thesis-6.2-ias-goodput-zipf-1.5": (
        "H1 is the cause, and the reading without it isolates it: the same IAS as H2 + H4 on every machine "
        "(no-h1) gains goodput over FF, inside the band. With H1, the big jobs (duration × cores ≥ the "
        "workload's P90, Algorithm 1's longJobThresh, which the text does not fix otherwise) may run only on "
        "the always-on machines, which cannot hold them in steady state, so they queue while the variable "
        "machines idle (evidence below)."
    ),
    "thesis-6.3-ias-goodput-azure": (
        "Same mechanism as on Zipf-1.5: H1 queues the big jobs for the always-on machines while variable "
        "machines idle (evidence below). Unlike Zipf-1.5, dropping H1 does not recover the goodput here (no-h1 "
        "reading: fewer terminations and fewer never-started jobs than FF, yet far less completed work); why "
        "was not isolated in this session. The stand-in matters: the embedded Azure sample averages 7.4 h per "
        "job against the thesis' 60.12 h (Table 6.2) and its platform is sized to the 80 % load (244 machines), "
        "so the thesis' −0.05 % cannot be separated from the workload with the embedded data."
    ),
}

#: What the ch. 6 notebook's Table 6.2 shows next to varcap's values (injected by the report asset).
FIGURES = {
    "ch6_ias": {
        "paper_cut": {**{f"zipf-{s}": v for s, v in TABLE_6_2_CUT.items()}, "azure": AZURE_CUT},
        "paper_goodput_pp": dict(GOODPUT_PP),
    }
}
