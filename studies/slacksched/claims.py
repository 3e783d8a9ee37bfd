"""Seed 002's claims: SlackSched's reduction of mean and P90 job completion time (§4.2, Fig. 10)."""

from __future__ import annotations

import numpy as np
import polars as pl

from studies.claims import Headline, MissingRuns, Profile, Runs, cut, per_job, seeds
from studies.scenarios import Scenario
from studies.slacksched.scenarios import ss_scenarios

#: §4.2, Fig. 10: "SlackSched reduces mean JCT by 25–27 %" ("mean reduction in JCT 20–27 %") "and p90
#: JCT by 20–44 %": the ranges the paper states are the bands; the anchors are inside them.
MEAN_JCT_BAND = (20.0, 27.0)
P90_JCT_BAND = (20.0, 44.0)


def _jct(runs: Runs, sc: Scenario) -> pl.DataFrame:
    from sim.workloads import group_completion_times

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
        pols = tuple(p for p in ("slacksched", "slacksched-nodelay", "oracle") if (p, 0) in sc)
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
            base, other = sc.get(("capsched", "load-0.3", r)), sc.get(("slacksched-nodelay", "load-0.3", r))
            if base is not None and other is not None and base.id in runs and other.id in runs:
                b, s = _jct_pair(runs, base, other)
                if b.size:  # tiny profiles may complete no job under both: nothing to compare
                    res.setdefault("slacksched-nodelay:load-0.3", []).append(cut(float(f(b)), float(f(s))))
        return res

    return compute


def _explain_slack(pr: Profile, runs: Runs) -> str:
    sc = ss_scenarios(pr)
    missing = [" ".join(map(str, k[:-1])) + f" seed {k[-1]}" for k, s in sc.items() if s.id not in runs]
    parts = []
    if missing:
        parts.append(f"Not run: {', '.join(missing)}.")
    names = {"capsched": "CapacityScheduler", "slacksched": "SlackSched", "slacksched-nodelay": "NoDelay"}
    names["oracle"] = "Oracle"
    m = {p: runs[sc[(p, 0)].id]["metrics"] for p in names if (p, 0) in sc and sc[(p, 0)].id in runs}
    cuts: dict[str, list[float]] = {"jobs": [], "tasks": []}
    for r in seeds(pr):
        for wl, key in (("jobs", ()), ("tasks", ("tasks",))):
            a, b = (sc.get((p, *key, r)) for p in ("capsched", "slacksched-nodelay"))
            if a is not None and b is not None and a.id in runs and b.id in runs:
                ta, tb = runs[a.id]["metrics"]["terminations"], runs[b.id]["metrics"]["terminations"]
                if ta:
                    cuts[wl].append(100.0 * (1.0 - tb / ta))
    if cuts["jobs"] and cuts["tasks"]:
        parts.append(
            "Isolating run — NoDelay's termination cut against random matching, mean over seeds: "
            f"{np.mean(cuts['jobs']):.1f} % with jobs of 100–300 tasks arriving together (harvest-jobs), "
            f"{np.mean(cuts['tasks']):.1f} % with independent tasks on the same pool and load (harvest-tasks)."
        )
    half = {p: sc.get((p, "load-0.3", 0)) for p in ("capsched", "slacksched-nodelay")}
    if all(x is not None and x.id in runs for x in half.values()):
        t = {p: runs[x.id]["metrics"]["terminations"] for p, x in half.items()}
        parts.append(
            f"At load 0.3 (seed 0): CapacityScheduler {t['capsched']:,} terminations, NoDelay "
            f"{t['slacksched-nodelay']:,}."
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
    ),
]

_SLACK = (
    "Not reproduced: waiting SlackSched is slower than the CapacityScheduler's random matching, NoDelay about "
    "as fast. There is room to gain: the Oracle (never killed, it reads the future capacity) cuts mean JCT by "
    "about 43 % (readings), so kills are costly in this setup. What fails is the choice of node, and the "
    "isolating run below names the cause: our workload reading. Each job submits its 100–300 tasks at once "
    "(our assumption; seed 002 gives no arrival pattern or load), and such a burst fills every node that has "
    "room, stable or not, so ranking the nodes by eq. 1 changes which task lands where but not how full the "
    "unstable nodes get; a full node loses its newest task at any shrink. With independent tasks (seed 002 "
    "§2.2's runtimes) on the same pool at the same load, NoDelay cuts terminations against random matching "
    "as the paper's ranking should; with the bursts it does not, at load 0.6 or 0.3 (evidence below). "
    "Waiting SlackSched avoids about a third of the kills but its waits cost more than the kills they avoid "
    "(a job ends with its last task). The HVM pool is a stand-in (harvest_trace; Azure's HVM traces are not "
    "public), but the same pool gives the ranking its effect once arrivals are not bursts."
)
#: Causes of rows outside their band.
EXPLANATIONS: dict[str, str] = {h.id: _SLACK for h in HEADLINES}

#: What the SlackSched notebook's Fig. 10 shades (injected by the report asset): the paper's ranges.
FIGURES = {"slacksched": {"bands": {"mean": MEAN_JCT_BAND, "p90": P90_JCT_BAND}}}
