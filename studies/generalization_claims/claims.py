"""Generalization rows: each paper's central claim tested on instances no study was built around.

The instances are :func:`studies.generalization.instances` (one master seed, ``Profile.gen_master_seed``;
``Profile.gen_instances`` of them, ``Profile.gen_days`` long). Each claim runs its policy and its baseline on
every instance; a run pair is *decisive* when the policy faced the decision the claim is about, and the row
is the share of the decisive instances where the claim holds (one value per decisive instance, 100 when it
holds and 0 when not, so the row's mean is the share and its interval a bootstrap interval of it):

* ``thesis-6.2-ias-generalization`` — paper 000 §6.2: "IAS consistently outperforms the baseline in reducing
  job terminations, regardless of the scheduler's aggressiveness". Holds: fewer terminations than First-Fit
  (a cut > 0) and goodput ≥ First-Fit's − 2 pp (§3.3, eq. 3.1's tolerance). Decisive:
  :func:`studies.thesis.decisive.ias_decision`. Band: every decisive instance (the claim says
  "consistently").
* ``riskaware-6-targetasap-generalization`` — paper 001 §6: "TARGETASAP and PACKEDTARGETASAP heuristics are
  always better than the two competitors"; §7: "better than … FIRSTFITAWARE … in all cases". Holds:
  TargetASAP's goodput (§4's GOODPUT(T), ``goodput_partial``) ≥ FirstFitAware's. Decisive: FirstFitAware
  interrupts some job (§6: the difference "is due to the fact that FIRSTFITAWARE … do[es] not specifically
  preserve the longest jobs, which leads to more interrupted work"). Band: every decisive instance.
* ``slacksched-4.2-generalization`` — paper 002 §4.2: SlackSched "reduces mean JCT" against the
  CapacityScheduler (random matching). Holds: mean JCT of the jobs completed under both is lower under
  SlackSched. Decisive: random matching preempts some task (§4.2: "If tasks are too short, there is not
  much room for improvement as there are few preemptions"). Band: more than half of the decisive instances
  (the paper reports its reductions on the clusters it ran, not "always").
  The instance's platform size, load and seeds apply; its random walk does not: SlackSched runs on harvest
  VMs whose cores change per VM (the ``harvest`` capacity kind, log-normal inter-change times of mean 1 h,
  stability spread 1.0 as in ``repro-slacksched``), so the family's change rate and step have no
  counterpart there, and jobs are §4.2.1's ≈ 3 cluster-minutes (:func:`studies.slacksched.scenarios.job_tasks`).

These rows can fail: a claim that does not hold on an instance counts against it, and the per-instance table
(:func:`instance_table`, ``out_reproduction_instances``) says which instances and why.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from studies.claims import SHARE_BOUNDS, Headline, MissingRuns, Profile, Runs, cut, metric
from studies.generalization import Instance, instances
from studies.scenarios import Scenario

#: claim → (policy under test, its settings, baseline)
CLAIMS: dict[str, tuple[str, dict[str, str], str]] = {
    "ias": ("ias", {"aggressiveness": "0.6"}, "ff"),
    "targetasap": ("target-asap", {}, "ff"),
    "slacksched": ("slacksched", {}, "capsched"),
}
ROW_IDS = {
    "ias": "thesis-6.2-ias-generalization",
    "targetasap": "riskaware-6-targetasap-generalization",
    "slacksched": "slacksched-4.2-generalization",
}
HARVEST_MAX_CORES = 48
HARVEST_SPREAD = 1.0  # as repro-slacksched


def gen_instances(pr: Profile) -> list[Instance]:
    """The profile's generated instances (:func:`studies.generalization.instances`)."""
    return instances(pr.gen_master_seed, pr.gen_instances, pr.gen_days)


def _harvest(inst: Instance, policy: str) -> Scenario:
    from studies.slacksched.scenarios import job_tasks

    lo, hi = job_tasks(inst.machines)
    cap = {
        "kind": "harvest",
        "pool": inst.machines,
        "max_cores": HARVEST_MAX_CORES,
        "stability_spread": HARVEST_SPREAD,
        "seed": inst.capacity_seed,
    }
    return Scenario(
        f"harvest-jobs-{lo}-{hi}",
        cap,
        policy,
        machines=inst.machines,
        cores=HARVEST_MAX_CORES,
        horizon_days=inst.horizon_days,
        seed=inst.workload_seed,
        load=inst.load,
    )


def gen_scenarios(pr: Profile) -> dict[tuple, Scenario]:
    """``(claim, arm, instance index) → Scenario``, arm ``policy`` or ``baseline`` (:data:`CLAIMS`)."""
    out: dict[tuple, Scenario] = {}
    for inst in gen_instances(pr):
        for claim, (pol, st, base) in CLAIMS.items():
            if claim == "slacksched":
                out[(claim, "baseline", inst.index)] = _harvest(inst, base)
                out[(claim, "policy", inst.index)] = _harvest(inst, pol)
            else:
                out[(claim, "baseline", inst.index)] = inst.scenario(base)
                out[(claim, "policy", inst.index)] = inst.scenario(pol, st)
    return out


def _mean_jct(runs: Runs, base: Scenario, other: Scenario) -> tuple[float, float]:
    from studies.slacksched.claims import _jct_pair

    b, s = _jct_pair(runs, base, other)
    if not b.size:
        return float("nan"), float("nan")
    return float(np.mean(b)), float(np.mean(s))


def _instance(claim: str, runs: Runs, base: Scenario, pol: Scenario) -> dict[str, object]:
    """One instance of ``claim``: decisive or why not, the arms' values and whether the claim holds.
    Raises :class:`MissingRuns`."""
    from studies.thesis.decisive import ias_decision

    tb, tp = metric(runs, base, "terminations"), metric(runs, pol, "terminations")
    row: dict[str, object] = {"baseline_terminations": tb, "policy_terminations": tp}
    row["termination_cut_pct"] = cut(tb, tp) if tb else None
    gname = "goodput_partial" if claim == "targetasap" else "goodput"
    gb, gp = metric(runs, base, gname), metric(runs, pol, gname)
    row["goodput_pp"] = 100.0 * (gp - gb)
    row["baseline_mean_jct_s"] = row["policy_mean_jct_s"] = None
    if claim == "ias":
        why = ias_decision(runs, base, pol)
        holds = tp < tb and row["goodput_pp"] >= -2.0
    elif claim == "targetasap":
        why = "FirstFitAware interrupts no job" if tb == 0 else ""
        holds = gp >= gb
    else:
        why = "random matching (CapacityScheduler) preempts no task" if tb == 0 else ""
        jb, js = _mean_jct(runs, base, pol)
        row["baseline_mean_jct_s"], row["policy_mean_jct_s"] = jb, js
        if not np.isfinite(jb):
            why = why or "no job completed under both"
        holds = bool(js < jb)
    row["decisive"] = not why
    row["degenerate_reason"] = why
    row["holds"] = bool(holds) if not why else None
    return row


def _instance_or_not_run(claim: str, runs: Runs, base: Scenario, pol: Scenario) -> dict[str, object]:
    """:func:`_instance`, or, when an arm has no result because it ran past the scenario budget
    (:mod:`studies.budget`), a row saying so: no values, not decisive, ``holds`` null, the reason
    ``not run: …`` (the reproduction counts it in ``n_not_run``). Raises :class:`MissingRuns` for an arm
    that simply has not run."""
    from studies import budget

    try:
        return _instance(claim, runs, base, pol)
    except MissingRuns:
        absent = [s for s in (base, pol) if s.id not in runs]
        over = [budget.over_budget(s) for s in absent]
        if not absent or any(b is None for b in over):
            raise
        row: dict[str, object] = {c: None for c in INSTANCE_VALUES}
        row.update(decisive=False, degenerate_reason=budget.not_run_reason(max(over)), holds=None)
        return row


def instance_table(pr: Profile, runs: Runs) -> pl.DataFrame:
    """Per claim and generated instance: the instance's drawn values, both arms' terminations, the
    termination cut (%), goodput difference (pp), mean JCTs (SlackSched), whether the pair is decisive (and
    why not) and whether the claim holds there (null when degenerate). An instance with an arm over the
    scenario budget has a row saying ``not run: …`` without values; instances whose runs are missing for
    another reason are left out."""
    sc = gen_scenarios(pr)
    rows = []
    for inst in gen_instances(pr):
        for claim in CLAIMS:
            try:
                r = _instance_or_not_run(
                    claim, runs, sc[(claim, "baseline", inst.index)], sc[(claim, "policy", inst.index)]
                )
            except (MissingRuns, FileNotFoundError):
                continue
            rows.append({"claim": ROW_IDS[claim], **inst.row(), **r, "profile": pr.name})
    return pl.DataFrame(rows, schema=INSTANCE_SCHEMA)


#: the per-instance values :func:`_instance` computes (null for an instance not run)
INSTANCE_VALUES = (
    "baseline_terminations",
    "policy_terminations",
    "termination_cut_pct",
    "goodput_pp",
    "baseline_mean_jct_s",
    "policy_mean_jct_s",
)

INSTANCE_SCHEMA = {
    "claim": pl.String,
    "instance": pl.String,
    "machines": pl.Int64,
    "changes_per_hour": pl.Float64,
    "step": pl.Float64,
    "alpha": pl.Float64,
    "min_duration_s": pl.Float64,
    "mix": pl.String,
    "load": pl.Float64,
    "horizon_days": pl.Float64,
    "baseline_terminations": pl.Float64,
    "policy_terminations": pl.Float64,
    "termination_cut_pct": pl.Float64,
    "goodput_pp": pl.Float64,
    "baseline_mean_jct_s": pl.Float64,
    "policy_mean_jct_s": pl.Float64,
    "decisive": pl.Boolean,
    "degenerate_reason": pl.String,
    "holds": pl.Boolean,
    "profile": pl.String,
}


def _rows(claim: str, pr: Profile, runs: Runs) -> list[dict[str, object]]:
    sc = gen_scenarios(pr)
    return [
        _instance_or_not_run(claim, runs, sc[(claim, "baseline", i.index)], sc[(claim, "policy", i.index)])
        for i in gen_instances(pr)
    ]


def _share(claim: str) -> Callable[[Profile, Runs], dict[str, list[float]]]:
    """Per instance 100 if the claim holds, 0 if not (degenerate instances: nan, left out by the row)."""

    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        return {
            "default": [
                float("nan") if r["holds"] is None else 100.0 * bool(r["holds"])
                for r in _rows(claim, pr, runs)
            ]
        }

    return compute


def _reasons(claim: str) -> Callable[[Profile, Runs], list[str]]:
    def check(pr: Profile, runs: Runs) -> list[str]:
        return [str(r["degenerate_reason"]) for r in _rows(claim, pr, runs)]

    return check


def _failing(claim: str) -> Callable[[Profile, Runs], str]:
    def evidence(pr: Profile, runs: Runs) -> str:
        t = instance_table(pr, runs).filter((pl.col("claim") == ROW_IDS[claim]) & (pl.col("holds") == False))  # noqa: E712
        if t.height == 0:
            return ""
        items = [
            f"{r['instance']} ({r['machines']} machines, {r['changes_per_hour']:g}/h, step {r['step']:g}, "
            f"{r['alpha']:g}-{r['min_duration_s']:g}-{r['mix']}, load {r['load']:g}): terminations "
            f"{r['baseline_terminations']:,.0f} → {r['policy_terminations']:,.0f}, goodput {r['goodput_pp']:+.2f} pp"
            + (
                f", mean JCT {r['baseline_mean_jct_s']:,.0f} → {r['policy_mean_jct_s']:,.0f} s"
                if r["baseline_mean_jct_s"] is not None
                else ""
            )
            for r in t.iter_rows(named=True)
        ]
        return f"The claim fails on {t.height} decisive instance(s): " + "; ".join(items) + "."

    return evidence


HEADLINES: list[Headline] = [
    Headline(
        ROW_IDS["ias"],
        "000 thesis",
        "§6.2 (generated instances)",
        100.0,
        "IAS consistently outperforms the baseline in reducing job terminations, regardless of the "
        "scheduler's aggressiveness (share of decisive generated instances with fewer terminations than FF "
        "and goodput ≥ FF − 2 pp)",
        "% of instances",
        (99.99, 100.0),
        "repro-generalization",
        _share("ias"),
        _failing("ias"),
        bounds=SHARE_BOUNDS,
        degenerate=_reasons("ias"),
    ),
    Headline(
        ROW_IDS["targetasap"],
        "001 risk-aware",
        "§6, §7 (generated instances)",
        100.0,
        "TARGETASAP and PACKEDTARGETASAP heuristics are always better than the two competitors (share of "
        "decisive generated instances where TargetASAP's goodput ≥ FirstFitAware's)",
        "% of instances",
        (99.99, 100.0),
        "repro-generalization",
        _share("targetasap"),
        _failing("targetasap"),
        bounds=SHARE_BOUNDS,
        degenerate=_reasons("targetasap"),
    ),
    Headline(
        ROW_IDS["slacksched"],
        "002 SlackSched",
        "§4.2 (generated instances)",
        100.0,
        "SlackSched reduces mean JCT against the CapacityScheduler (share of decisive generated instances "
        "with a lower mean JCT than random matching)",
        "% of instances",
        (50.01, 100.0),  # more than half
        "repro-generalization",
        _share("slacksched"),
        _failing("slacksched"),
        bounds=SHARE_BOUNDS,
        degenerate=_reasons("slacksched"),
    ),
]

STUDY_BUILDERS = {"repro-generalization": gen_scenarios}
EXPLANATIONS: dict[str, str] = {
    h.id: "Outside its band on the generated instances: the failing instances are listed below."
    for h in HEADLINES
}
