"""When an IAS-versus-First-Fit run tests IAS at all: the run is *decisive* when IAS faced the decision its
claims are about, *degenerate* otherwise, with the reason.

IAS can terminate a job only on a variable machine (H1, Algorithm 1: a job below the threshold runs on the
machines above ``stableMachineIndex``, the big ones on the always-on machines) and only if the job outlives
the time to the next capacity change: H2 (Algorithm 2) starts a job no longer than the change period only
if it ends before the next change. So a run where every job is "big", or where no job left to the variable
machines is longer than one change period, cuts 100 % of First-Fit's terminations by construction, and a
run where First-Fit terminates nothing has no kill to cut. A run is decisive when all three hold:

* First-Fit terminates something;
* some job is not "big" (H1 leaves it to the variable machines; every job when the policy has no H1);
* some such job is longer than the change period IAS reads (H2 cannot protect it: H4 must judge it).

The rule is the generalization rows' (:func:`studies.generalization.ias_decisive`), applied here to the
policy variant each scenario runs (its own H1 threshold, or none for a variant without H1).
"""

from __future__ import annotations

import functools

import numpy as np
import polars as pl

from studies.claims import MissingRuns, Runs, metric
from studies.scenarios import Scenario


def problem_decision(
    duration_s: np.ndarray,
    cores: np.ndarray,
    period_s: float,
    threshold_cs: float | None,
    variable_machines: int = 1,
) -> tuple[str, dict[str, float]]:
    """The reason IAS faces no decision on a workload (``""`` when it does) and the facts behind it, by the
    generalization rows' rule (:func:`studies.generalization.ias_decisive`, First-Fit's side left to
    :func:`ias_decision`). ``threshold_cs``: H1's big-job threshold in core-seconds (None: the policy has no
    H1, no job is big); ``variable_machines``: machines above H1's stable pool."""
    from studies.generalization import IASFacts, ias_decisive

    dur, c = np.asarray(duration_s, float), np.asarray(cores, float)
    small = np.ones(dur.size, bool) if threshold_cs is None else dur * c < threshold_cs
    longest = float(dur[small].max()) if small.any() else 0.0
    facts = {
        "jobs": float(dur.size),
        "variable_jobs": float(small.sum()),
        "longest_variable_h": longest / 3600.0,
        "period_h": period_s / 3600.0,
        "jobs_over_period": float((dur[small] > period_s).sum()),
    }
    ok, why = ias_decisive(
        IASFacts(int(small.sum()), int(variable_machines), int(facts["jobs_over_period"]), ff_terminations=1)
    )
    if ok:
        return "", facts
    if small.any() and longest <= period_s:
        why += f" (longest {longest / 3600:.2f} h ≤ change period {period_s / 3600:.2f} h): H2 protects every one"
    return why, facts


@functools.lru_cache(maxsize=256)
def _decision_by_params(params_json: str, machines: int) -> tuple[str, tuple[tuple[str, float], ...]]:
    import json

    return _scenario_decision(Scenario.from_params(json.loads(params_json)), machines)


def _scenario_decision(sc: Scenario, machines: int) -> tuple[str, tuple[tuple[str, float], ...]]:
    from sim.policies import get_policy, parse_params
    from sim.policies.ias import h1_split
    from sim.problem import Platform, Problem
    from studies.scenarios import build_capacity, build_jobs
    from studies.sweep import inputs_dir

    jobs = build_jobs(sc, inputs_dir(), machines).filter(pl.col("cores") <= sc.cores)
    cap = build_capacity(sc, inputs_dir(), machines)
    problem = Problem.build(jobs, Platform(machines, float(sc.cores)), cap, sc.horizon_s)
    pol = get_policy(sc.policy)
    p = parse_params(pol, dict(sc.settings))
    period = p.period_s if p.period_s > 0 else (cap.period_s or 3600.0)
    h1 = "h1" in getattr(pol, "heuristics", ())
    thresh: float | None = None
    variable = machines
    if h1:
        stable, t = h1_split(problem, p)
        if not (p.no_floor == "drop-h1" and stable == 0):
            thresh, variable = t, machines - stable
    why, facts = problem_decision(problem.duration_s, problem.cores, period, thresh, variable)
    return why, tuple(facts.items())


def ias_decision(runs: Runs, ff: Scenario, ias: Scenario) -> str:
    """Why the (First-Fit, IAS) pair ``ff``, ``ias`` does not test IAS (``""``: decisive). Raises
    :class:`MissingRuns` when a run is missing."""
    if metric(runs, ff, "terminations") == 0:
        return "First-Fit terminates nothing"
    metric(runs, ias, "terminations")  # the IAS run must exist too
    machines = ias.machines or int(runs.get(ias.id, {}).get("machines", 0))
    if not machines:
        raise MissingRuns(f"scenario {ias.id} ({ias.label()}) has no platform size recorded")
    return scenario_decision(ias, machines)[0]


def scenario_decision(sc: Scenario, machines: int) -> tuple[str, dict[str, float]]:
    """The workload side of :func:`ias_decision` for IAS scenario ``sc`` on ``machines`` machines: the
    reason (``""``: IAS has a job to judge) and the facts (jobs, jobs left to the variable machines, the
    longest of them and the change period in hours, how many outlive the period). Cached per scenario."""
    import json

    p = sc.params()
    # only H1's and H2's settings matter: variants differing in A or H4's reading share one computation
    p["settings"] = {k: v for k, v in p.get("settings", {}).items() if k in _DECISION_SETTINGS}
    key = json.dumps(p, sort_keys=True)
    why, facts = _decision_by_params(key, machines)
    return why, dict(facts)


#: the IAS settings the decision reads (H1's split and H2's period)
_DECISION_SETTINGS = ("lb", "long_job_thresh", "period_s", "h1_threshold", "no_floor")


def workload_table(profile: str) -> list[str]:
    """Lines: for each IAS scenario set of ``profile`` (ch. 6 by workload and H1 reading, the generic
    instances, the robustness grid), how many replicates IAS cannot be tested on by the workload alone
    (First-Fit's side needs the runs) and the first reason. Workloads whose inputs are not exported are
    named and skipped."""
    from collections import Counter

    from studies.claims import PROFILES, seeds
    from studies.scenarios import sized_jobs
    from studies.sweep import inputs_dir
    from studies.thesis.scenarios import (
        ch6_scenarios,
        generic_scenarios,
        robustness_cells,
        robustness_scenarios,
    )

    pr = PROFILES[profile]

    def why(s: Scenario) -> str:
        return scenario_decision(s, s.machines or sized_jobs(s, inputs_dir())[0])[0]

    out = []
    sets = (
        ("ch6", ch6_scenarios(pr), ("ias", "ias-p90", "ias-no-h1")),
        ("generic", generic_scenarios(pr), ("ias",)),
    )
    for name, sc, keys in sets:
        for wl in sorted({k[0] for k in sc}):
            for key in keys:
                if (wl, key, 0) not in sc:
                    continue
                try:
                    rs = [why(sc[(wl, key, r)]) for r in seeds(pr)]
                except FileNotFoundError as e:
                    out.append(f"{name} {wl} {key}: skipped ({e})")
                    break
                bad = [w for w in rs if w]
                out.append(
                    f"{name} {wl} {key}: degenerate {len(bad)}/{len(rs)} {bad[0] if bad else ''}".rstrip()
                )
    rs_ = robustness_scenarios(pr)
    c = Counter(bool(why(rs_[(*cell, "ias-a0.6", r)])) for cell in robustness_cells(pr) for r in seeds(pr))
    out.append(f"robustness grid: {c[False]} decisive, {c[True]} degenerate cell runs (A = 0.6)")
    return out


if __name__ == "__main__":
    import sys

    for line in workload_table(sys.argv[1] if len(sys.argv) > 1 else "quick"):
        print(line)
