"""Seed 002's claims: SlackSched's reduction of mean and P90 job completion time (§4.2, Fig. 10)."""

from __future__ import annotations

import numpy as np
import polars as pl

from studies.claims import CUT_BOUNDS, Headline, MissingRuns, Profile, Runs, cut, per_job, seeds
from studies.scenarios import Scenario
from studies.slacksched.scenarios import HB_READINGS, HB_THRESHOLDS, job_tasks, mean_task_s, ss_scenarios

#: §4.2, Fig. 10: "SlackSched reduces mean JCT by 25–27 %" ("mean reduction in JCT 20–27 %") "and p90
#: JCT by 20–44 %": the ranges the paper states are the bands; the anchors are inside them.
MEAN_JCT_BAND = (20.0, 27.0)
P90_JCT_BAND = (20.0, 44.0)


def _jct(runs: Runs, sc: Scenario) -> pl.DataFrame:
    from sim.workloads.generators import group_completion_times

    return group_completion_times(per_job(runs, sc))


def _jct_pair(runs: Runs, base: Scenario, other: Scenario) -> tuple[np.ndarray, np.ndarray]:
    """Per-job completion times of the jobs completed under both scenarios (base, other)."""
    both = _jct(runs, base).join(_jct(runs, other), on="group", suffix="_s")
    both = both.filter(pl.col("complete") & pl.col("complete_s"))
    return both["jct_s"].to_numpy(), both["jct_s_s"].to_numpy()


def _slack(stat: str):
    """Seed 002 §4.1 defines three aggregates: (a) "mean reduction in JCT (1 − GeometricMean(nJCT))", (b)
    "reduction in mean JCT", (c) "reduction in tail (p90) JCT". Fig. 10's caption quotes (a) as 20–27 % and
    (b) as 25–27 %: the mean headline reports (b) by default and (a) as reading ``geomean-njct``."""
    f = np.mean if stat == "mean" else (lambda x: np.percentile(x, 90))

    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ss_scenarios(pr)
        # the Oracle (never killed: it reads the future capacity) bounds what avoiding kills can gain
        pols = tuple(
            p for p in ("slacksched", "slacksched-heartbeat", "slacksched-nodelay", "oracle") if (p, 0) in sc
        )
        res: dict[str, list[float]] = {p: [] for p in pols}
        if stat == "mean":
            res.update({f"{p}:geomean-njct": [] for p in pols})
        for r in seeds(pr):
            for p in pols:
                if sc[(p, r)].id not in runs and any(sc[(q, r)].id in runs for q in pols if q != p):
                    continue  # this policy's runs are missing but the other's are there: report what ran
                b, s = _jct_pair(runs, sc[("capsched", r)], sc[(p, r)])
                if not b.size:
                    raise MissingRuns(f"no job completed under both capsched and {p} (seed {r})")
                res[p].append(cut(float(f(b)), float(f(s))))
                if stat == "mean":
                    res[f"{p}:geomean-njct"].append(100.0 * (1.0 - float(np.exp(np.mean(np.log(s / b))))))
            # readings: Algorithm 3's threshold sweep and task-set scope; the former 100–300-task jobs
            pairs = [
                (
                    f"slacksched-heartbeat:threshold-{t:g}",
                    ("capsched", r),
                    ("slacksched-heartbeat", f"threshold-{t:g}", r),
                )
                for t in HB_THRESHOLDS
            ]
            pairs += [
                (f"slacksched-heartbeat:{name}", ("capsched", r), ("slacksched-heartbeat", name, r))
                for name in HB_READINGS
            ]
            pairs.append(
                (
                    "slacksched-heartbeat:scope-queue",
                    ("capsched", r),
                    ("slacksched-heartbeat", "scope-queue", r),
                )
            )
            pairs.append(
                ("slacksched-nodelay:burst", ("capsched", "burst", r), ("slacksched-nodelay", "burst", r))
            )
            # the former HVM stand-in (log-normal gaps, spread 1), the default until the calibrated model
            pairs += [
                (f"{p}:former-trace", ("capsched", "former-trace", r), (p, "former-trace", r)) for p in pols
            ]
            for name, kb, ko in pairs:
                base, other = sc.get(kb), sc.get(ko)
                if base is not None and other is not None and base.id in runs and other.id in runs:
                    b, s = _jct_pair(runs, base, other)
                    if b.size:  # tiny profiles may complete no job under both: nothing to compare
                        res.setdefault(name, []).append(cut(float(f(b)), float(f(s))))
        return res

    return compute


def _mean_wait(runs: Runs, sc: Scenario) -> float:
    j = per_job(runs, sc).filter(pl.col("first_start_s") >= 0)
    return float((j["first_start_s"] - j["submit_s"]).mean())


def waste_share(row: dict) -> float:
    """§4.2's waste of one run: "work wasted due to preemptions divided by total work done" (wasted /
    (completed + wasted) core-seconds), in %."""
    w, g = float(row["metrics"]["wasted_fraction"]), float(row["metrics"]["goodput"])
    return 100.0 * w / max(w + g, 1e-12)


def _explain_slack(pr: Profile, runs: Runs) -> str:
    sc = ss_scenarios(pr)
    missing = [" ".join(map(str, k[:-1])) + f" seed {k[-1]}" for k, s in sc.items() if s.id not in runs]
    parts = []
    if missing:
        parts.append(f"Not run: {', '.join(missing)}.")
    names = {"capsched": "CapacityScheduler", "slacksched": "SlackSched", "slacksched-nodelay": "NoDelay"}
    names.update({"slacksched-heartbeat": "SlackSched (Algorithm 3)", "oracle": "Oracle"})
    m = {p: runs[sc[(p, 0)].id]["metrics"] for p in names if (p, 0) in sc and sc[(p, 0)].id in runs}
    # §4.1's sizing check: "clusters are sized to ensure little to no task queuing" (the Oracle is never
    # killed, so its waits are queuing alone)
    ow = [
        _mean_wait(runs, sc[("oracle", r)])
        for r in seeds(pr)
        if ("oracle", r) in sc and sc[("oracle", r)].id in runs
    ]
    if ow:
        ratio = np.mean(ow) / mean_task_s()
        verdict = (
            "little queuing, as §4.1 sizes clusters" if ratio < 0.1 else "NOT little queuing (§4.1 fails)"
        )
        lo, hi = job_tasks()
        parts.append(
            f"Set-up check (jobs of {lo}–{hi} tasks, §4.2.1's ≈ 3 cluster-minutes; load 0.6): the Oracle's mean "
            f"wait is {np.mean(ow):,.0f} s, {100 * ratio:.1f} % of the mean task length ({mean_task_s():,.0f} s): "
            f"{verdict}."
        )
    cuts: dict[str, list[float]] = {"jobs": [], "burst": [], "tasks": []}
    for r in seeds(pr):
        for wl, key in (("jobs", ()), ("burst", ("burst",)), ("tasks", ("tasks",))):
            a, b = (sc.get((p, *key, r)) for p in ("capsched", "slacksched-nodelay"))
            if a is not None and b is not None and a.id in runs and b.id in runs:
                ta, tb = runs[a.id]["metrics"]["terminations"], runs[b.id]["metrics"]["terminations"]
                if ta:
                    cuts[wl].append(100.0 * (1.0 - tb / ta))
    if cuts["jobs"] and cuts["burst"]:
        parts.append(
            "Isolating run — NoDelay's termination cut against random matching, mean over seeds: "
            f"{np.mean(cuts['jobs']):.1f} % with §4.2.1-sized jobs, {np.mean(cuts['burst']):.1f} % with the "
            "former 100–300-task jobs (bursts ~8× §4.2.1's size fill every node with room, so a task mostly "
            "has one node to go to)"
            + (f", {np.mean(cuts['tasks']):.1f} % with independent tasks." if cuts["tasks"] else ".")
        )
    # §4.2: "CapacityScheduler, SlackSched, and Oracle waste 20–40 %, 3–20 %, and 0 % work": a statistic of
    # the HVM traces and the set-up (the random matching's waste), reported per trace
    for key, label in (((), "calibrated HVM trace"), (("former-trace",), "former stand-in")):
        ws = {
            p: [waste_share(runs[sc[(p, *key, r)].id]) for r in seeds(pr) if sc[(p, *key, r)].id in runs]
            for p in ("capsched", "slacksched", "oracle")
            if (p, *key, 0) in sc
        }
        if ws.get("capsched"):
            parts.append(
                f"Waste (§4.2: CapacityScheduler 20–40 %, SlackSched 3–20 %, Oracle 0 % of the work done), {label}, "
                "mean over seeds: "
                + ", ".join(f"{names[p]} {np.mean(v):.1f} %" for p, v in ws.items() if v)
                + "."
            )
    if "capsched" in m and len(m) > 1:
        parts.append(
            "Evidence (seed 0): "
            + "; ".join(
                f"{names[p]} {x['terminations']:,} terminations, wasted {x['wasted_fraction']:.4f}, "
                f"idle {x['idle_fraction']:.3f} of the core-seconds"
                for p, x in m.items()
            )
            + "."
        )
    return " ".join(parts)


#: when and why the default HVM trace changed (out_reproduction.reading_history)
_HISTORY_TRACE = (
    "Default HVM trace changed on 2026-11-27 from the log-normal stand-in (harvest_trace, stability spread 1; "
    "now the reading former-trace) to harvest_regime_trace, a model fitted to §2.1's published statistics "
    "(C2's inter-change shares 16 / 40 / 84 % within 1 min / 10 min / 1 h, C1–C6's mean and p95 ranges, "
    "Fig. 2's per-HVM stability, Fig. 1's change sizes, Fig. 3's calm periods; python -m "
    "studies.slacksched.calibrate). Why: the stand-in missed the numbers the paper gives (about 10 / 59 / 91 %, "
    "mean 24 min, its median HVM changing more than once an hour) and its spread raised the pooled change "
    "rate with the diversity. The fit used the trace statistics only; the scheduler rows were first run on "
    "the new trace after its defaults were fixed."
)

HEADLINES: list[Headline] = [
    Headline(
        "seed002-slacksched-mean-jct-reduction",
        "002 SlackSched",
        "§4.2 Fig. 10",
        26.0,
        "SlackSched reduces mean JCT by 25–27 % (mean reduction in JCT 20–27 %)",
        "%",
        MEAN_JCT_BAND,
        "repro-slacksched",
        _slack("mean"),
        _explain_slack,
        bounds=CUT_BOUNDS,
        reading_history=_HISTORY_TRACE,
    ),
    Headline(
        "seed002-slacksched-p90-jct-reduction",
        "002 SlackSched",
        "§4.2 Fig. 10",
        P90_JCT_BAND[1],
        "… and p90 JCT by 20–44 %",
        "%",
        P90_JCT_BAND,
        "repro-slacksched",
        _slack("p90"),
        _explain_slack,
        bounds=CUT_BOUNDS,
        reading_history=_HISTORY_TRACE,
    ),
]

_SLACK = (
    "Set-up from the text: a job is §4.2.1's ≈ 3 cluster-minutes (13–40 tasks; the spread is our "
    "choice) at load 0.6, where the Oracle barely queues (check below), and shrinks kill the oldest start first "
    "(§4.1). SlackSched's eq. 2 counts the claims of the jobs waiting ahead (queue-aware a), and its YARN "
    "variant (Algorithm 3) runs with a threshold the paper does not give (default 0.7, Fig. 13's confidence "
    "level; the sweep is in the readings). Isolating runs (python -m studies.slacksched.isolate: the quick "
    "set-up, 2 days, seeds 0 and 1; mean JCT cut against random matching) name the cause: (1) eq. 1's "
    "prediction on the HVM stand-in. With NoDelay's rule kept (place now, never wait) and eq. 1 replaced by "
    "the truth read from the future trace ('informed-nodelay'), the cut is +29.6 / +30.2 % (p90 +23.7 / "
    "+22.3 %, terminations −54 / −53 %), against +9.7 / +5.5 % with eq. 1 (terminations −18 / −13 %): the "
    "same rule gains about three times more with a perfect predictor, so most of the gap to the paper is what "
    "eq. 1 can learn from these traces, not the rule. (2) Waiting pays only with a good predictor: the Oracle "
    "(the truth, and it waits for a safe node) adds about 20 points to informed-nodelay (+48.4 / +52.1 %), "
    "while SlackSched, waiting on eq. 2's estimates, loses 5–7 points to NoDelay (+3.1 / −1.9 %). (3) The "
    "predictor's signal grows with the pool's diversity: with identical HVMs (stability_spread 0) NoDelay "
    "cuts +5.1 / +3.5 %, with the study's spread 1 +9.7 / +5.5 %. The paper's 25 % rests on eq. 1 "
    "predicting Azure's HVMs (§3.1, traces not public): the remaining cause is the stand-in HVM pool, whose "
    "predictability the paper's text does not pin down, not a model line (none tuned). Algorithm 3's threshold "
    "(seed 0/1/2, mean cut): 0.5 +7.3 / +9.5 / +7.7 %, 0.6 +3.4 / +5.8 / +1.5 %, 0.7 −21.7 / −125.1 / −48.6 %, "
    "0.8 −139 / −267 / −218 %, 0.9 −299 / −306 / −298 %: a higher threshold cuts more terminations (−4…−12 % "
    "at 0.5, −60…−63 % at 0.9) but sends more tasks to MatchMaker, whose one waiting task per job queues the rest, so JCT "
    "grows; no threshold reaches the band."
)
#: Causes of rows outside their band.
EXPLANATIONS: dict[str, str] = {h.id: _SLACK for h in HEADLINES}

#: What the SlackSched notebook's Fig. 10 shades (injected by the report asset): the paper's ranges.
FIGURES = {"slacksched": {"bands": {"mean": MEAN_JCT_BAND, "p90": P90_JCT_BAND}}}
