"""The thesis' claims on the Interval-Aware Scheduler (§6.2–6.3, Table 6.2; §6.2's claim on a generic
heavy-tailed instance): anchors, bands, computations from the runs, and the evidence for rows outside
their band (one breakdown of terminations by job duration, shared by every IAS row)."""

from __future__ import annotations

import numpy as np
import polars as pl

from studies.claims import (
    CUT_BOUNDS,
    NULL_HISTORY,
    PP_BOUNDS,
    R_BOUNDS,
    SHARE_BOUNDS,
    Headline,
    MissingRuns,
    Profile,
    Runs,
    cut,
    factor2,
    metric,
    per_job,
    seeds,
    spearman,
    spearman_critical,
    workload,
)
from studies.scenarios import Scenario
from studies.thesis.decisive import ias_decision
from studies.thesis.scenarios import (
    ch6_scenarios,
    generic_scenarios,
)
from studies.thesis.window import TOLERANCE, WINDOW_HISTORY, window_cuts

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
#: Spearman's rho of Table 6.2's cut with the skew (−1: it falls at every step)
TABLE_6_2_RHO = spearman([float(s) for s in TABLE_6_2_CUT], list(TABLE_6_2_CUT.values()))
AZURE_CUT = 92.04  # §6.3 Table 6.2, Azure: "we can achieve 92 % lower terminations"
#: Table 6.2 ("Gain in goodput over FF"), per workload; §6.3: "Across all synthetic workloads, IAS achieves
#: 0.25–3.81% greater goodput and lower wasted resources, compared to FF" — read as a difference of goodput
#: fractions (percentage points), as eq. 3.1 compares them
TABLE_6_2_GOODPUT = {
    "1.1": 0.27,
    "1.2": 0.25,
    "1.3": 0.52,
    "1.4": 0.89,
    "1.5": 2.02,
    "1.6": 3.13,
    "1.7": 3.81,
    "1.8": 2.21,
}
#: Table 6.2 / §6.3: goodput difference IAS − FF (percentage points), every workload the table prints.
GOODPUT_PP = {**{f"zipf-{s}": v for s, v in TABLE_6_2_GOODPUT.items()}, "azure": -0.05}
#: §6.3, Fig. 6.5: "In the extremely heavy-tailed Azure workload, IAS decreases the wasted resource fraction
#: by 22.63%, while maintaining similar goodput to FF (-0.05%)"
AZURE_WASTED_CUT = 22.63
CUT_LOW_A = 98.0  # §6.2, Fig. 6.3: "further reduced by up to 98 % under lower aggressiveness"
CUT_A_0_9 = 32.0  # §6.2: 32 % fewer terminations at A = 90 % (the generic row's anchor; band: any cut)
GENERIC_DEFAULT = "pareto-1.5-300"


# ---- Table 6.2 and §6.3
_READING = {
    "ias-p90": "h1=p90",
    "ias-literal": "h4=literal (Alg. 5 as printed)",
    "ias-all": "survival_pool=all",
    "ias-no-h1": "no-h1 (H2+H4)",
}


def _ias_cut(wl: str, key: str = "ias"):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ch6_scenarios(pr)
        alts = [a for a in _READING if key == "ias" and (wl, a, 0) in sc]
        res: dict[str, list[float]] = {"default": [], **{_READING[a]: [] for a in alts}}
        for r in seeds(pr):
            ff = metric(runs, sc[(wl, "ff", r)], "terminations")
            res["default"].append(cut(ff, metric(runs, sc[(wl, key, r)], "terminations")))
            for a in alts:
                res[_READING[a]].append(cut(ff, metric(runs, sc[(wl, a, r)], "terminations")))
        if key == "ias":
            res.update(_window_readings(pr, runs, wl))
        return res

    return compute


def _window_readings(pr: Profile, runs: Runs, wl: str) -> dict[str, list[float]]:
    """Per replicate: the cut over the steady-state window and in each 30-day month of the run
    (:mod:`studies.thesis.window`); empty when a run has no kill log."""
    out: dict[str, list[float]] = {}
    try:
        per = [window_cuts(runs, f, i) for f, i in _ff_vs(wl)(pr)]
    except (MissingRuns, FileNotFoundError):
        return out
    names = [
        "steady",
        *sorted((k for k in per[0] if k.startswith("month ")), key=lambda k: int(k.split()[1])),
    ]
    for k in names:
        label = f"steady window (FF kill rate flat ±{TOLERANCE:.0%})" if k == "steady" else f"{k} of the run"
        out[label] = [p.get(k, float("nan")) for p in per]
    return out


def _window_notes(wl: str):
    """The cut per month of the run, its drift and the steady window, per replicate (seed order)."""

    def notes(pr: Profile, runs: Runs) -> str:
        per = [window_cuts(runs, f, i) for f, i in _ff_vs(wl)(pr)]
        parts = []
        for r, p in enumerate(per):
            months = ", ".join(f"{p[k]:.0f}" for k in p if k.startswith("month ") and np.isfinite(p[k]))
            steady = (
                f"steady from day {p['steady_from_d']:.0f}: {p['steady']:.1f} %"
                if np.isfinite(p["steady_from_d"])
                else "no steady window"
            )
            parts.append(f"seed {r}: months {months} % (drift {p['drift_pp']:+.0f} pp), {steady}")
        return f"Cut per 30-day month of the run ({wl}): " + "; ".join(parts) + "."

    return notes


def _ias_goodput(wl: str):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ch6_scenarios(pr)
        alts = [a for a in _READING if (wl, a, 0) in sc]
        res: dict[str, list[float]] = {"default": [], **{_READING[a]: [] for a in alts}}
        for r in seeds(pr):
            ff = metric(runs, sc[(wl, "ff", r)], "goodput")
            res["default"].append(100 * (metric(runs, sc[(wl, "ias", r)], "goodput") - ff))
            for a in alts:
                res[_READING[a]].append(100 * (metric(runs, sc[(wl, a, r)], "goodput") - ff))
        return res

    return compute


def _ff_vs(wl: str, key: str = "ias"):
    """The (FF, IAS) scenario pair of each replicate on ``wl`` (the arms of a termination cut)."""

    def pairs(pr: Profile) -> list[tuple[Scenario, Scenario]]:
        sc = ch6_scenarios(pr)
        return [(sc[(wl, "ff", r)], sc[(wl, key, r)]) for r in seeds(pr)]

    return pairs


def _ias_decisive(pairs):
    """A :attr:`Headline.degenerate` check for IAS rows: per replicate, why its (FF, IAS) pair does not
    test IAS (:func:`studies.thesis.decisive.ias_decision`; ``""``: decisive)."""

    def check(pr: Profile, runs: Runs) -> list[str]:
        return [ias_decision(runs, f, i) for f, i in pairs(pr)]

    return check


def _ias_decisive_readings(wl: str, key: str = "ias"):
    """As :func:`_ias_decisive` for ``wl``'s (FF, ``key``) pairs, and for each IAS-variant reading its own
    pairs (another H1 reading can leave other jobs to the variable machines); the window readings share
    the default's pairs."""

    def check(pr: Profile, runs: Runs) -> dict[str, list[str]]:
        sc = ch6_scenarios(pr)
        out = {"*": _ias_decisive(_ff_vs(wl, key))(pr, runs)}
        if key == "ias":
            for a, name in _READING.items():
                if (wl, a, 0) in sc:
                    out[name] = _ias_decisive(_ff_vs(wl, a))(pr, runs)
        return out

    return check


def _generic_decisive(pr: Profile, runs: Runs) -> dict[str, list[str]]:
    """Per reading of the generic row (workload and IAS variant), its own pairs' reasons."""
    sc = generic_scenarios(pr)
    out: dict[str, list[str]] = {}
    for wl in {k[0] for k in sc}:
        for key in ("ias", "ias-a0.1", "ias-a0.9", "ias-no-h1"):
            name = "default" if (wl, key) == (GENERIC_DEFAULT, "ias") else f"{wl}:{key}"
            out[name] = [ias_decision(runs, sc[(wl, "ff", r)], sc[(wl, key, r)]) for r in seeds(pr)]
    return out


def _trend_decisive(pr: Profile, runs: Runs) -> list[str]:
    """A replicate of the trend tests IAS only if every Table 6.2 workload's pair does."""
    out = []
    for r in seeds(pr):
        why = []
        for s in TABLE_6_2_CUT:
            f, i = _ff_vs(f"zipf-{s}")(pr)[r]
            if w := ias_decision(runs, f, i):
                why.append(f"zipf-{s}: {w}")
        out.append("; ".join(why))
    return out


def _wasted_cut(wl: str):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ch6_scenarios(pr)
        return {
            "default": [
                cut(
                    metric(runs, sc[(wl, "ff", r)], "wasted_fraction"),
                    metric(runs, sc[(wl, "ias", r)], "wasted_fraction"),
                )
                for r in seeds(pr)
            ]
        }

    return compute


def _wasted_lower_share(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    """Per replicate: the share (%) of Table 6.2's decisive Zipf workloads where IAS's wasted fraction is
    below First-Fit's (nan when none is decisive)."""
    sc = ch6_scenarios(pr)
    out = []
    for r in seeds(pr):
        ok = n = 0
        for s in TABLE_6_2_CUT:
            f, i = sc[(f"zipf-{s}", "ff", r)], sc[(f"zipf-{s}", "ias", r)]
            if ias_decision(runs, f, i):
                continue
            n += 1
            ok += metric(runs, i, "wasted_fraction") < metric(runs, f, "wasted_fraction")
        out.append(100.0 * ok / n if n else float("nan"))
    return {"default": out}


def _wasted_lower_reasons(pr: Profile, runs: Runs) -> list[str]:
    sc = ch6_scenarios(pr)
    return [
        f"zipf-{s}, seed {r}: {w}"
        if (w := ias_decision(runs, sc[(f"zipf-{s}", "ff", r)], sc[(f"zipf-{s}", "ias", r)]))
        else ""
        for r in seeds(pr)
        for s in TABLE_6_2_CUT
    ]


def _cut_trend(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    """Per replicate: Spearman's rank correlation of IAS's termination cut (A = 0.6) with the Zipf skew,
    over Table 6.2's eight skews."""
    out: list[float] = []
    skews = [float(s) for s in TABLE_6_2_CUT]
    sc = ch6_scenarios(pr)
    for r in seeds(pr):
        cuts = []
        for s in TABLE_6_2_CUT:
            wl = f"zipf-{s}"
            ff = metric(runs, sc[(wl, "ff", r)], "terminations")
            cuts.append(cut(ff, metric(runs, sc[(wl, "ias", r)], "terminations")))
        out.append(spearman(skews, cuts))
    return {"default": out}


# ---- §6.2's claim on a generic heavy-tailed instance
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


def h1_pools(runs: Runs, sc: Scenario) -> dict[str, float]:
    """H1's split in ``sc``'s run (an IAS scenario with H1): the share of the offered work (inside the
    horizon) that H1 sends to the always-on machines, and how much of each pool's core-seconds in the
    metrics window went to work that completed there (1 − that = idle or wasted). Under H1 a job runs only
    in its own pool, so a completed job's pool is known from its size. Raises :class:`MissingRuns`."""
    from sim.policies import get_policy, parse_params
    from sim.policies.ias import h1_split
    from sim.problem import Platform, Problem
    from studies.scenarios import build_capacity, build_jobs
    from studies.sweep import inputs_dir

    machines = sc.machines or int(runs.get(sc.id, {}).get("machines", 0))
    out = per_job(runs, sc)
    jobs = build_jobs(sc, inputs_dir(), machines).filter(pl.col("cores") <= sc.cores)
    cap = build_capacity(sc, inputs_dir(), machines)
    problem = Problem.build(jobs, Platform(machines, float(sc.cores)), cap, sc.horizon_s)
    stable, thresh = h1_split(problem, parse_params(get_policy(sc.policy), dict(sc.settings)))
    j = jobs.join(out.select("job_id", "end_s", "status"), on="job_id")
    sub_, dur, cores = (j[c].to_numpy() for c in ("submit_s", "duration_s", "cores"))
    big = dur * cores >= thresh
    offered = cores * np.clip(np.minimum(dur, sc.horizon_s - sub_), 0.0, None)
    w0, w1 = sc.window_start_s, sc.horizon_s
    done = (j["status"] == "completed").to_numpy()
    end = j["end_s"].fill_null(-1.0).fill_nan(-1.0).to_numpy()
    inside = np.clip(np.minimum(end, w1) - np.maximum(end - dur, w0), 0.0, None) * cores * done
    t = np.r_[cap.time_s, sc.horizon_s]
    seg = np.clip(np.minimum(t[1:], w1) - np.maximum(t[:-1], w0), 0.0, None)
    var_cs = float((np.clip(cap.machines_alive - stable, 0, None) * seg).sum()) * sc.cores
    st_cs = stable * sc.cores * (w1 - w0)
    return {
        "stable_share_offered": float(offered[big].sum() / offered.sum()) if offered.sum() else 0.0,
        "stable_used": float(inside[big].sum() / st_cs) if st_cs else 0.0,
        "variable_used": float(inside[~big].sum() / var_cs) if var_cs else 0.0,
        "stable_fraction": stable / machines,
        "offered_load": float(offered.sum()) / (machines * sc.cores * sc.horizon_s),
    }


def _fmt_pools(runs: Runs, sc: Scenario, name: str) -> str:
    try:
        h = h1_pools(runs, sc)
    except (MissingRuns, FileNotFoundError) as e:
        return f"{name}: pools not computed ({e})"
    return (
        f"{name}: {100 * h['stable_share_offered']:.0f} % of the offered work to the always-on machines "
        f"({100 * h['stable_fraction']:.0f} % of the platform), completed work fills "
        f"{100 * h['stable_used']:.0f} % of their core-seconds and {100 * h['variable_used']:.0f} % of the "
        "variable machines'"
    )


def _pools_evidence(pr: Profile, runs: Runs, wl: str) -> str:
    """H1's pools under the default (fit) and the p90 reading, seed 0."""
    sc = ch6_scenarios(pr)
    parts = [_fmt_pools(runs, sc[(wl, "ias", 0)], "h1=fit")]
    if (wl, "ias-p90", 0) in sc:
        parts.append(_fmt_pools(runs, sc[(wl, "ias-p90", 0)], "h1=p90"))
    return "H1's pools (seed 0) — " + "; ".join(parts) + "."


def _explain_ias_cut(wl: str):
    def evidence(pr: Profile, runs: Runs) -> str:
        sc = ch6_scenarios(pr)
        text, ias = breakdown(runs, sc[(wl, "ff", 0)], sc[(wl, "ias", 0)])
        return (
            f"Evidence ({wl}, seed 0, whole run; job durations {CLASS_NAMES}): {text}; never started under "
            f"IAS {_fmt_classes(ias, 'never')}. {_pools_evidence(pr, runs, wl)}"
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
        mf, mi = runs[f.id]["metrics"], runs[i.id]["metrics"]
        text = (
            f"Evidence ({wl}, seed 0): idle fraction FF {mf['idle_fraction']:.3f} vs IAS "
            f"{mi['idle_fraction']:.3f}; jobs never started FF {mf['jobs_not_scheduled']:,} vs IAS "
            f"{mi['jobs_not_scheduled']:,}; the load is 56 % of the platform (80 % of the 70 % mean). "
            f"{_pools_evidence(pr, runs, wl)}"
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


# ---- when and why anchors, bands and default readings changed after results (Headline.reading_history)
#: H1's threshold: every row whose default runs IAS with H1 (Table 6.2, Azure, the trend)
H1_FIT_HISTORY = (
    "Default reading changed in 9839cf1 (2026-11-24): H1's threshold `fit` (the biggest jobs' offered work "
    "fills the always-on machines, §6.1.1: 'as many big jobs as possible') replaced `p90` (the 90th "
    "percentile of the job sizes), after the full run of 2026-11-23 (22a27a7, 0528af8) had shown the p90 "
    "values (Table 6.2's cut 98.4 … 91.4 %, not falling with the skew). Reason stated: §6.1.1's text; p90 "
    "stays a reading (@h1=p90)."
)


def band_history(v: float) -> str:
    """The near-100 band change of a cut row anchored at ``v`` (> 50 %)."""
    lo, hi = sorted((v / 2, min(2 * v, 100.0)))
    return (
        f"Band narrowed in f72a04a (2026-11-24) from [{lo:.4g}, {hi:.4g}] to [{factor2(v)[0]:.4g}, "
        f"{factor2(v)[1]:.4g}], after the full run at 0528af8 had been seen: for a cut over 50 % the "
        "factor-of-two rule applies to what remains (100 − cut), since a factor of two on 96 % would accept "
        "a scheduler that leaves 13 times as much."
    )


def _history(*parts: str) -> str:
    return " ".join(p for p in parts if p)


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
        bounds=CUT_BOUNDS,
        null=0.0,  # a reduction in terminations: no cut does not show it
        degenerate=_ias_decisive_readings(f"zipf-{s}"),
        reading_history=_history(
            H1_FIT_HISTORY, band_history(v) if v > 50.0 else "", NULL_HISTORY, WINDOW_HISTORY
        ),
        notes=_window_notes(f"zipf-{s}"),
    )
    for s, v in TABLE_6_2_CUT.items()
]

#: Table 6.2's "Gain in goodput over FF" per Zipf workload; §6.3: "Across all synthetic workloads, IAS
#: achieves 0.25–3.81% greater goodput": a gain, so no effect (0 pp) must lie outside the interval, on the
#: side of the gain
TABLE_6_2_GOODPUT_ROWS: list[Headline] = [
    Headline(
        f"thesis-6.2-ias-goodput-zipf-{s}",
        "000 thesis",
        "§6.3 Table 6.2",
        v,
        f"Gain in goodput over FF: {v} % (Zipf-{s}); across all synthetic workloads IAS achieves 0.25–3.81% "
        "greater goodput",
        "pp",
        (round(v - 2.0, 2), round(v + 2.0, 2)),  # ± 2 pp (§3.3, eq. 3.1)
        "repro-thesis-ch6",
        _ias_goodput(f"zipf-{s}"),
        _explain_ias_goodput(f"zipf-{s}"),
        bounds=PP_BOUNDS,
        null=0.0,
        degenerate=_ias_decisive_readings(f"zipf-{s}"),
        reading_history=_history(H1_FIT_HISTORY, NULL_HISTORY if s == "1.5" else ""),  # others: new rows
    )
    for s, v in TABLE_6_2_GOODPUT.items()
]

HEADLINES: list[Headline] = [
    *TABLE_6_2,
    *TABLE_6_2_GOODPUT_ROWS,
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
        bounds=CUT_BOUNDS,
        null=0.0,
        reading_history=_history(H1_FIT_HISTORY, band_history(CUT_LOW_A), NULL_HISTORY),
        degenerate=_ias_decisive_readings("zipf-1.5", "ias-a0.1"),
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
        bounds=CUT_BOUNDS,
        null=0.0,
        degenerate=_ias_decisive_readings("azure"),
        reading_history=_history(H1_FIT_HISTORY, band_history(AZURE_CUT), NULL_HISTORY, WINDOW_HISTORY),
        notes=_window_notes("azure"),
    ),
    Headline(
        "thesis-6.3-ias-wasted-azure",
        "000 thesis",
        "§6.3 Fig. 6.5",
        AZURE_WASTED_CUT,
        "In the extremely heavy-tailed Azure workload, IAS decreases the wasted resource fraction by 22.63%",
        "%",
        factor2(AZURE_WASTED_CUT),
        "repro-thesis-ch6",
        _wasted_cut("azure"),
        bounds=CUT_BOUNDS,
        null=0.0,
        degenerate=_ias_decisive_readings("azure"),
    ),
    Headline(
        "thesis-6.3-ias-wasted-lower-zipf",
        "000 thesis",
        "§6.3 Fig. 6.5",
        100.0,
        "Across all synthetic workloads, IAS achieves 0.25–3.81% greater goodput and lower wasted resources, "
        "compared to FF (share of the decisive Zipf workloads with a lower wasted fraction than FF)",
        "% of workloads",
        (99.99, 100.0),  # "all synthetic workloads"
        "repro-thesis-ch6",
        _wasted_lower_share,
        bounds=SHARE_BOUNDS,
        degenerate=_wasted_lower_reasons,
        per_replicate=False,  # the share is over each replicate's decisive workloads already
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
        bounds=PP_BOUNDS,
        degenerate=_ias_decisive_readings("azure"),
        reading_history=H1_FIT_HISTORY,
    ),
    Headline(
        "thesis-6.3-ias-cut-trend",
        "000 thesis",
        "§6.3 Table 6.2",
        TABLE_6_2_RHO,
        "The relative reduction in terminations compared to the baseline increases as the workload becomes "
        "more heavy-tailed (the sentence says 'increases', but Table 6.2's cuts fall, 96.42 % at Zipf-1.1 to "
        "8.03 % at Zipf-1.8: this row tests the table's trend)",
        "Spearman rho",
        # a falling trend as the text states it, distinguishable from no trend: rho at or below the
        # one-sided 5 % critical value for Table 6.2's eight skews (exact: −0.643)
        (-1.0, -spearman_critical(len(TABLE_6_2_CUT))),
        "repro-thesis-ch6",
        _cut_trend,
        bounds=R_BOUNDS,
        null=0.0,
        degenerate=_trend_decisive,
        reading_history=_history(
            "Row added in f72a04a (2026-11-24), after Table 6.2's cuts had been seen under both H1 readings "
            "(p90: full run at 0528af8; fit: quick runs, f660e65); its band is the exact one-sided 5 % critical "
            "value of Spearman's rho for eight skews, fixed by the table's printed trend, not by varcap's values.",
            H1_FIT_HISTORY,
        ),
    ),
]

GENERIC: list[Headline] = [
    Headline(
        "thesis-6.2-ias-cut-generic",
        "000 thesis",
        "§6.2 (a generic heavy-tailed instance)",
        CUT_A_0_9,
        "IAS consistently outperforms the baseline in reducing job terminations, regardless of the "
        "scheduler's aggressiveness (32 % fewer at A = 90 %, up to 98 % at low A)",
        "%",
        (0.01, 100.0),
        "repro-generic",
        _generic_cut,
        _explain_generic,
        bounds=CUT_BOUNDS,
        null=0.0,  # "consistently outperforms … in reducing job terminations": no cut does not show it
        degenerate=_generic_decisive,
        reading_history=(
            "Null 0 added in f72a04a (2026-11-24), after the full run at 0528af8: in band only if the interval "
            "excludes no cut (the band (0.01, 100] unchanged)."
        ),
    )
]

_CUT_TREND = (
    "Direction reproduced. Full profile (1,000 × 24 cores, 30 + 30 days, 5 seeds; `varcap reproduce` at "
    "7f3d6d2, 2026-11-25): Zipf-1.1…1.8 98.4, 95.3, 90.6, 84.4, 74.5, 63.3, 49.8, 37.5 % (thesis 96.4 … 8.0), "
    "Spearman −1.00 in each of the 5 seeds; h1=p90 reading 98.4, 95.3, 90.6, 87.3, 86.0, 87.4, 87.8, 91.4 "
    "(does not fall; identical to the full table at 0528af8, whose model this reading is). Two rows sit outside their bands. Zipf-1.8: 37.5 % [17.7, 54.8] (seeds 49.0, 44.9, 35.4, "
    "9.3, 48.7): at Zipf-1.8 (seed 0, whole run, ≤1 h / 1–5 h / 5–30 h / >30 h) FF kills 14,776 / 28,226 / "
    "30,570 / 58,060 and IAS 0 / 81,099 / 20,767 / 0: H2 and H1 remove the shortest and the longest jobs' "
    "kills, H4 at A = 0.6 admits 1–5 h jobs on hourly intervals and they die, so the cut stays near half. "
    "Zipf-1.1: 98.4 % [97.7, 99.0], 0.2 points above its band (the thesis: 96.4): the same mechanism with "
    "few 1–30 h jobs (evidence below: IAS kills only 1–30 h jobs, 1,795 against FF's 81,820 kills). "
    "On the quick profile (3 seeds) the cut also falls with skew (100, 100, 100, 92, 93, 85, 70, 73 %, "
    "Spearman −0.93) but not to the thesis' 8 % at Zipf-1.8; the three 100 % cuts (Zipf-1.1–1.3) were by "
    "construction: there H1's fit threshold calls every job big in all 3 seeds (the 37-day run clips the "
    "long jobs' work below the always-on machines' capacity), IAS never uses a variable machine, and those "
    "rows (and the trend, whose every seed includes them) are now not tested on the quick profile; at full "
    "size every Table 6.2 workload is decisive in all 5 seeds. The thesis breaks down only IAS's "
    "terminations by duration (Fig. 6.7), not FF's, so what leaves FF's kills unprotected in its runs "
    "cannot be traced from its text."
)
#: Causes of rows outside their band, each with the run that isolates it.
EXPLANATIONS: dict[str, str] = {
    **{h.id: _CUT_TREND for h in TABLE_6_2},
    "thesis-6.3-ias-cut-trend": _CUT_TREND,
    "thesis-6.2-ias-goodput-zipf-1.5": (
        "H1 is the cause, and the reading without it isolates it: the same IAS as H2 + H4 on every machine "
        "(no-h1) gains goodput over FF, inside the band. With H1 the big jobs may run only on the always-on "
        "machines and the others only on the variable ones (Algorithm 1). Under h1=fit the big jobs' offered "
        'work equals the always-on machines\' capacity (§6.1.1: "as many big jobs as possible"), a queue at '
        "utilization 1, so they wait; under h1=p90 they offer more than those machines hold. Either way the "
        "jobs left to the variable machines do not fill them (H4 refuses the multi-hour ones on hourly "
        "intervals): pools in the evidence below."
    ),
    "thesis-6.3-ias-cut-azure": (
        "Under h1=fit IAS trades Azure's cut for goodput, and the isolating readings place the thesis' 92 % / "
        "−0.05 pp outside what the stand-in workload allows (full profile, branch ias24, 5 seeds: cut 30.6 % "
        "[20.0, 40.5], goodput +1.0 pp). Cause: H1's threshold decides which multi-hour VMs land on the "
        "variable machines, where H2 protects nothing longer than one period and H4 at A = 0.6 admits a "
        "placement that survives with probability ≥ 0.4. Under fit the big jobs' work fills the always-on "
        "machines exactly (73 % of the offered work on 41 % of the platform, seed 0), so the many 1-core VMs "
        "of 1–30 h stay variable: IAS kills no ≤1 h job (FF 1,088) but more 1–5 h jobs than FF (6,105 vs "
        "3,864) and 6,977 of FF's 9,192 5–30 h ones. The readings move along one trade-off: h1=p90 (83 % "
        "of the work to the always-on machines) cuts 62 % [50, 72] and loses 4.1 pp (3 seeds); without H1 "
        "(H2 + H4 on every machine) the cut is 45–47 % and goodput falls from FF's 0.73–0.75 to 0.42 (3 seeds: H4 "
        "refuses the long VMs everywhere). The stand-in is the embedded 30-day Azure sample (mean VM 7.4 h; "
        "the thesis' Azure trace: 60.12 h, Table 6.2), so the thesis' point cannot be separated from its "
        "workload with the embedded data; nothing was tuned to approach it."
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
