"""Paper 003's claims (Zhang and Chien, variable capacity): LWW against Random (§5.3, Fig. 11) and the goodput decline at range 0.6 (§5.2)."""

from __future__ import annotations

from studies.claims import (
    CUT_BOUNDS,
    GAIN_BOUNDS,
    NULL_HISTORY,
    Headline,
    Profile,
    Runs,
    cut,
    metric,
    no_terminations,
    per_job,
    seeds,
    workload,
)
from studies.zhang_chien.scenarios import ZC_MODELS, zc_scenarios


def _lww_vs_random(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    sc = zc_scenarios(pr)
    out: dict[str, list[float]] = {k: [] for k in ZC_MODELS}
    for r in seeds(pr):
        for k in ZC_MODELS:
            rnd = metric(runs, sc[(k, "random", r)], "goodput")
            out[k].append(
                100 * (metric(runs, sc[(k, "lww", r)], "goodput") - rnd) / rnd if rnd else float("nan")
            )
    return out


def _range_decline(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    """§5.2 does not name the termination rule; §5.3 introduces LWW and LFD against Random, the rule that
    needs no knowledge, which we read as the one in force before (default); LIFO and LWW are readings."""
    sc = zc_scenarios(pr)
    keys = [
        ("pool-fail", "random"),
        ("pool-fail", "lifo"),
        ("pool-fail", "lww"),
        ("machines-requeue", "lifo"),
    ]
    out: dict[str, list[float]] = {f"{m}:{t}": [] for m, t in keys}
    for r in seeds(pr):
        g0 = metric(runs, sc[("fixed", r)], "goodput")
        for m, t in keys:
            out[f"{m}:{t}"].append(cut(g0, metric(runs, sc[(m, t, r)], "goodput")))
    return out


def victims(runs: Runs, sc) -> dict[str, float]:
    """What a termination rule's kills cost in ``sc``'s run: jobs killed, their mean duration (h) and the
    share of them longer than a day, and the metrics that count the window's end (work in flight, work
    wasted, goodput with the in-flight work). Raises :class:`MissingRuns`."""
    import polars as pl

    j = per_job(runs, sc).join(workload(runs, sc), on="job_id")
    k = j.filter(pl.col("terminations") > 0)
    m = runs[sc.id]["metrics"]
    return {
        "kills": float(k.height),
        "victim_mean_h": float(k["duration_s"].mean() or 0.0) / 3600.0,
        "victim_over_day": float((k["duration_s"] > 86400.0).mean() or 0.0),
        "in_flight": float(m["in_flight_fraction"]),
        "wasted": float(m["wasted_fraction"]),
        "goodput": float(m["goodput"]),
        "goodput_partial": float(m["goodput_partial"]),
    }


def _explain_lww(pr: Profile, runs: Runs) -> str:
    """Random's and LWW's victims and the work each leaves running at the window's end, per seed."""
    parts = []
    for rnd, lww in _random_vs_lww(pr):
        a, b = victims(runs, rnd), victims(runs, lww)
        gain = 100 * (b["goodput_partial"] - a["goodput_partial"]) / a["goodput_partial"]
        parts.append(
            f"seed {rnd.seed}: kills Random {a['kills']:,.0f} / LWW {b['kills']:,.0f}, victims' mean duration "
            f"{a['victim_mean_h']:.0f} / {b['victim_mean_h']:.1f} h ({100 * a['victim_over_day']:.0f} / "
            f"{100 * b['victim_over_day']:.0f} % over a day), in flight at the window's end "
            f"{a['in_flight']:.3f} / {b['in_flight']:.3f}, wasted {a['wasted']:.3f} / {b['wasted']:.3f}; "
            f"LWW vs Random with the in-flight work counted (goodput_partial) {gain:+.1f} %"
        )
    return f"Evidence (pool-fail, {pr.zc_days:g}-day window): " + "; ".join(parts) + "."


def _random_vs_lww(pr: Profile) -> list:
    """The (Random, LWW) pair of each replicate under the default reading ``pool-fail``."""
    sc = zc_scenarios(pr)
    return [(sc[("pool-fail", "random", r)], sc[("pool-fail", "lww", r)]) for r in seeds(pr)]


#: when and why the default readings changed (out_reproduction.reading_history)
_HISTORY_77C8A6B = (
    "Default changed in 77c8a6b (2026-11-23) from the one model varcap had (machines turned off with "
    "their jobs, killed jobs re-queued; now reading machines-requeue{lifo}) to pool-fail{random}, citing "
    "§5.3 ('jobs must be terminated (fail)', 'until the desired (lower) resource level is reached') and "
    "§4.2's failure rate; the switch was made after the earlier default's values had been seen, so this "
    "default is not a reading fixed before the runs — the earlier one is still reported as a row."
)

LWW_GAIN_UP_TO = 44.0  # §5.3: "an average of 44 % improvement over Random [HPC]"; Azure: "smaller benefits"
RANGE_DECLINE = (25.0, 45.0)  # §5.2: "the goodput has declined by 25–45 %"

HEADLINES: list[Headline] = [
    Headline(
        "zhang-chien-5.3-lww-vs-random-goodput",
        "003 variable capacity",
        "§5.3 Fig. 11",
        LWW_GAIN_UP_TO,
        "LWW … an average of 44 % improvement over Random [HPC]. For Azure … with smaller benefits",
        "%",
        (0.0, LWW_GAIN_UP_TO),
        "repro-zhang-chien",
        _lww_vs_random,
        _explain_lww,
        bounds=GAIN_BOUNDS,
        null=0.0,  # "improvement over Random … smaller benefits" for Azure: smaller, not none
        degenerate=no_terminations(_random_vs_lww),
        reading_history=_HISTORY_77C8A6B.format(lifo="", random=""),
    ),
    Headline(
        "zhang-chien-5.2-range-0.6-goodput-decline",
        "003 variable capacity",
        "§5.2 Fig. 8",
        sum(RANGE_DECLINE) / 2,
        "with the largest range, 0.6: [0.4, 1.0], the goodput has declined by 25–45 %",
        "%",
        RANGE_DECLINE,
        "repro-zhang-chien",
        _range_decline,
        bounds=CUT_BOUNDS,
        null=0.0,  # a decline
        reading_history=_HISTORY_77C8A6B.format(lifo=" with LIFO", random=" with Random")
        + " "
        + NULL_HISTORY,
    ),
]

#: Causes of rows outside their band, each with the run that isolates it.
EXPLANATIONS: dict[str, str] = {
    "zhang-chien-5.3-lww-vs-random-goodput": (
        "Outside the band only on the quick profile (LWW −2…−3 % against Random), and the cause is its 7-day "
        "window, not the termination rule: §4.2's goodput counts completed work only, and the Azure sample's "
        "VMs run up to weeks. Isolating measurement (quick, pool-fail, seeds 0/1/2, 356 machines; same runs): "
        "Random's victims are drawn from the running VMs, which are length-biased — mean duration 336 / 338 / "
        "345 h, 64–67 % longer than a day, so most of them could not have completed inside the window and "
        "killing them costs the windowed goodput almost nothing; LWW kills the youngest VMs (least cores × "
        "elapsed: mean duration 9.1 / 10.5 / 8.5 h, 9–12 % longer than a day), 2.1–2.9× as many (987 / 874 / "
        "1,221 against 409 / 465 / 424) and keeps the long VMs running past the window: work in flight at the "
        "window's end 0.341 / 0.333 / 0.359 of the capacity against Random's 0.231 / 0.205 / 0.237, wasted "
        "work 0.004–0.005 against 0.049–0.061. Counting that in-flight work (goodput_partial) LWW leads Random "
        "by +19 / +25 / +21 %. The full profile's 30-day window (0528af8: +35.4 % [28.6, 42.2], in band) lets "
        "most of the kept VMs complete inside it. No model change: Random and LWW choose their victims as "
        "§5.3 says (test_termination_readings); the window length is the quick profile's set-up choice."
    ),
}
