"""Paper 002's claims (SlackSched): SlackSched's reduction of mean and P90 job completion time (§4.2, Fig. 10)."""

from __future__ import annotations

import numpy as np
import polars as pl

from studies.claims import (
    CUT_BOUNDS,
    NULL_HISTORY,
    Headline,
    MissingRuns,
    Profile,
    Runs,
    baseline_terminates,
    cut,
    per_job,
    seeds,
)
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
    """The paper's §4.1 defines three aggregates: (a) "mean reduction in JCT (1 − GeometricMean(nJCT))", (b)
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


def _capsched_baseline(pr: Profile) -> list[Scenario]:
    sc = ss_scenarios(pr)
    return [sc[("capsched", r)] for r in seeds(pr)]


#: §4.2: "If tasks are too short, there is not much room for improvement as there are few preemptions";
#: SlackSched "tries to minimize preemptions and improve completion times by intelligently matching tasks
#: to HVMs" (§3.1): a replicate tests it only if random matching (CapacityScheduler) preempts some task
_capsched_preempts = baseline_terminates(_capsched_baseline, "random matching (CapacityScheduler)")


#: when and why the default HVM trace changed (out_reproduction.reading_history)
_HISTORY_TRACE = (
    "Default HVM trace changed on 2026-11-27 from the log-normal stand-in (harvest_trace, stability spread 1; "
    "now the reading former-trace) to harvest_regime_trace, a model fitted to §2.1's published statistics "
    "(C2's inter-change shares 16 / 40 / 84 % within 1 min / 10 min / 1 h, C1–C6's mean and p95 ranges, "
    "Fig. 2's per-HVM stability, Fig. 1's change sizes, Fig. 3's calm periods; python -m "
    "studies.slacksched.calibrate). Why: the stand-in missed the numbers the paper gives (about 10 / 59 / 91 %, "
    "mean 24 min, its median HVM changing more than once an hour) and its spread raised the pooled change "
    "rate with the diversity. The fit used the trace statistics only; the scheduler rows were first run on "
    "the new trace after its defaults were fixed. The same day the reading slacksched-heartbeat (Algorithm 3) "
    "changed from a pass at every event serving only the first job with a fitting task (now the reading "
    "slacksched-heartbeat:event-first) to YARN's way: a heartbeat per node every second (§3.3, Appendix A; "
    "yarn-default's 1,000 ms) offering the node to the next job when one takes nothing (the CapacityScheduler), "
    "the threshold still 0.7 and swept."
)

HEADLINES: list[Headline] = [
    Headline(
        "slacksched-4.2-mean-jct-reduction",
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
        null=0.0,  # a reduction
        degenerate=_capsched_preempts,
        reading_history=f"{_HISTORY_TRACE} {NULL_HISTORY}",
    ),
    Headline(
        "slacksched-4.2-p90-jct-reduction",
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
        null=0.0,
        degenerate=_capsched_preempts,
        reading_history=f"{_HISTORY_TRACE} {NULL_HISTORY}",
    ),
]

_SLACK = (
    "Set-up from the text: a job is §4.2.1's ≈ 3 cluster-minutes (13–40 tasks; the spread is our "
    "choice) at load 0.6, where the Oracle barely queues (check below), and shrinks kill the oldest start first "
    "(§4.1). SlackSched's eq. 2 counts the claims of the jobs waiting ahead (queue-aware a). HVM pool: "
    "harvest_regime_trace, fitted to §2.1's statistics (python -m studies.slacksched.calibrate; 64 HVMs, 30 days, "
    "seeds 0–2: 14.5 / 42.9 / 81.9 % of inter-change times within 1 min / 10 min / 1 h against C2's 16 / 40 / "
    "84 %, mean 48 min and p95 3.4 h inside C1–C6's 26–224 min and 1.2–11.2 h, the median HVM 0.97 changes an "
    "hour, the 10 % most active HVMs' busiest hour 18 changes, mean change 7.8 cores); the former stand-in "
    "(reading former-trace) gave 10.0 / 58.8 / 91.2 %, mean 24 min, its median HVM 1.4 changes an hour. "
    "Quick set-up (python -m studies.slacksched.isolate --table calibrated,former-trace; 2 days, seeds 0/1/2; "
    "mean JCT cut against random matching), calibrated trace: SlackSched +9.1 / +4.6 / +7.6 %, NoDelay +12.1 / "
    "+7.9 / +8.8 %, Oracle +31.1 / +36.7 / +40.6 %; former trace: SlackSched +3.1 / −1.9 / +2.1 %, NoDelay "
    "+9.7 / +5.5 / +9.6 %, Oracle +48.4 / +52.1 / +46.0 %. On the calibrated trace the Oracle's headroom is "
    "31–41 % and SlackSched gets a fifth of it; waiting still does not beat NoDelay (§4.2: 0–6 points better). "
    "Paper-size set-up (the full profile's 7 days, 64 HVMs, seeds 0/1/2; same command with --days 7 --seeds "
    "0,1,2; 246 CPU s), mean JCT cut against random matching, calibrated trace: SlackSched +5.5 / +5.3 / "
    "+6.0 %, NoDelay +7.6 / +7.0 / +8.0 %, Algorithm 3 +4.0 / +3.5 / +5.1 %, Oracle +33.3 / +32.4 / +35.7 %; "
    "former trace: SlackSched −0.6 / +2.4 / +7.6 %, NoDelay +5.1 / +7.3 / +10.7 %, Algorithm 3 −1.7 / −20.0 / "
    "+6.8 %, Oracle +56.4 / +55.2 / +43.5 %; random matching's waste 8.2 / 7.6 / 9.0 % (calibrated) and 18.9 / "
    "17.7 / 12.2 % (former). "
    "§4.2's waste (work lost / work done), a statistic of the trace and set-up: random matching 7.5 / 9.1 / "
    "10.9 % on the calibrated trace, 14.4 / 16.9 / 13.1 % on the former, both below the paper's 20–40 %: "
    "varcap's tasks (5–75 min) on a trace whose median HVM changes about once an hour are killed less often "
    "than the paper's (§2.3: 'around a third of all tasks fail'); the calibration used the trace statistics "
    "only, so this stays a measured gap, not a tuned one. Eq. 1's prediction remains the cause of most of "
    "the distance to the Oracle (an earlier isolating run on the former trace: NoDelay's rule with the truth "
    "for eq. 1 cut +29.6 / +30.2 % against +9.7 / +5.5 % with eq. 1). Algorithm 3 as YARN runs it (default: "
    "a heartbeat per node every second, a node offered to the next job when one takes nothing, threshold 0.7): "
    "isolating runs on the former trace, mean cut seeds 0/1/2 — pass at events, first job only (the former "
    "default) −21.7 / −125.1 / −48.6 %; 1-s heartbeats, first job only −20.1 / −124.1 / −56.6 %; pass at "
    "events, moving on +2.3 / −16.2 / −20.1 %; both (the default) +3.8 / −21.6 / −14.3 %. The loss was the "
    "heartbeat ending with the first job that had a fitting task (its task declined, MatchMaker made it wait, "
    "and every job behind it waited too), not when heartbeats happen. What is left is the threshold: at 0.5 "
    "the default cuts +6.3 / +7.7 / +7.4 % (former) and +3.1 / −1.7 / +2.7 % (calibrated), at 0.9 −83.0 / "
    "−115.8 / −74.0 % and −25.1 / −94.4 / −143.6 % (more tasks go to MatchMaker and wait). On the calibrated "
    "trace Algorithm 3 is +7.0 / −0.2 / −1.1 % (pass at events, first job only: +8.3 / +0.1 / −9.0 %). The "
    "pseudocode read literally (scope queue: the shortest task across all jobs) loses −44.1 / −414.3 / "
    "−163.0 % on the former trace and +7.2 / −9.5 / −26.0 % on the calibrated one with 1-s heartbeats (−44.6 "
    "/ −425.1 / −171.1 % at events): it reorders jobs (§3.1 keeps the orchestrator's job order), and "
    "heartbeats do not change it."
)
#: Causes of rows outside their band.
EXPLANATIONS: dict[str, str] = {h.id: _SLACK for h in HEADLINES}

#: What the SlackSched notebook's Fig. 10 shades (injected by the report asset): the paper's ranges.
FIGURES = {"slacksched": {"bands": {"mean": MEAN_JCT_BAND, "p90": P90_JCT_BAND}}}
