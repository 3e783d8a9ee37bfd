"""Paper 001's claims (risk-aware Target*): TargetASAP and PackedTargetASAP against FirstFitAware (§6, §7)."""

from __future__ import annotations

import numpy as np

from studies.claims import (
    GAIN_BOUNDS,
    Headline,
    Profile,
    Runs,
    baseline_terminates,
    cut,
    factor2,
    metric,
    seeds,
)
from studies.riskaware.scenarios import ra_scenarios
from studies.scenarios import Scenario

#: §6: "the differences in goodput between the heuristics differ from a workflow type to another, from
#: around 2% for SyntheticUniform and Synthetic3types and up to almost 10% for BORG" — the study runs
#: SyntheticUniform, so its rows are anchored at 2 % (band: the factor-two rule)
SYNTHETIC_UNIFORM_GAIN = 2.0
#: §7: "up to 10 % increase in goodput" — the paper's Borg figure; no Borg run is in this study
#: (``ra_scenarios`` says why), so no row carries it
BORG_GAIN_UP_TO = 10.0


def _target_gain(policy: str):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ra_scenarios(pr)
        res: dict[str, list[float]] = {"goodput_partial": [], "goodput": []}
        if ("synthetic-uniform-literal", "ff", 8, 0) in sc:
            res["literal-tavg"] = []
        for r in seeds(pr):
            for name in ("goodput_partial", "goodput"):
                gains = [
                    -cut(
                        metric(runs, sc[("synthetic-uniform", "ff", mra, r)], name),
                        metric(runs, sc[("synthetic-uniform", policy, mra, r)], name),
                    )
                    for mra in pr.ra_mra
                ]
                res[name].append(float(np.mean(gains)))
            if (k0 := ("synthetic-uniform-literal", "ff", 8, r)) in sc:
                k = k0
                res["literal-tavg"].append(
                    -cut(
                        metric(runs, sc[k], "goodput_partial"),
                        metric(runs, sc[(k[0], policy, 8, r)], "goodput_partial"),
                    )
                )
        return res

    return compute


def _explain_target(pr: Profile, runs: Runs) -> str:
    sc = ra_scenarios(pr)
    parts = []
    for wl in ("synthetic-uniform", "synthetic-uniform-literal"):
        if (wl, "ff", 8, 0) not in sc:
            continue
        vals = []
        for p in ("ff", "target-asap", "packed-target-asap"):
            m = runs[sc[(wl, p, 8, 0)].id]["metrics"]
            vals.append(f"{p} goodput_partial {m['goodput_partial']:.4f}, {m['terminations']:,} terminations")
        parts.append(f"{wl} (M_ra = 8, seed 0): " + "; ".join(vals))
    return "Evidence — " + " | ".join(parts) + "." if parts else ""


def _ffa_baseline(pr: Profile) -> list[Scenario]:
    """FirstFitAware's run of each replicate (default set-up, the first M_ra of the profile)."""
    sc = ra_scenarios(pr)
    return [sc[("synthetic-uniform", "ff", pr.ra_mra[0], r)] for r in seeds(pr)]


#: §6: "The difference in results is due to the fact that FIRSTFITAWARE and FIRSTFITUNAWARE do not
#: specifically preserve the longest jobs, which leads to more interrupted work": a replicate tests
#: Target* only if FirstFitAware interrupts some job
_ffa_interrupts = baseline_terminates(_ffa_baseline, "FirstFitAware")


#: the anchor and band of both rows were re-derived after results (out_reproduction.reading_history)
_ANCHOR_HISTORY = (
    "Anchor 10 % → 2 % and band [0, 10] → [1, 4] in b8e3f0a (2026-11-24), after the full run at 0528af8 "
    "had shown the packed row at −1.19 %, and with the PackedTargetASAP fix of the same day. Reason stated: "
    "the study runs SyntheticUniform, and §6 gives the gain per workload ('around 2% for SyntheticUniform "
    "and Synthetic3types and up to almost 10% for BORG'); §7's 'up to 10 %' is the Borg figure, and no Borg "
    "run is in the study. Band by the factor-two rule on 2 %. Null 0 added in f72a04a (2026-11-24): in "
    "band only if the interval excludes no gain."
)

HEADLINES: list[Headline] = [
    Headline(
        "riskaware-6-targetasap-goodput-gain",
        "001 risk-aware",
        "§6 (Fig. 1, SyntheticUniform), §7",
        SYNTHETIC_UNIFORM_GAIN,
        "TargetASAP … better than FirstFitAware … in all cases … differences in goodput … around 2% for SyntheticUniform",
        "%",
        factor2(SYNTHETIC_UNIFORM_GAIN),
        "repro-riskaware",
        _target_gain("target-asap"),
        _explain_target,
        bounds=GAIN_BOUNDS,
        degenerate=_ffa_interrupts,
        null=0.0,  # "better … in all cases": no gain does not reproduce it
        reading_history=_ANCHOR_HISTORY,
    ),
    Headline(
        "riskaware-6-packed-goodput-gain",
        "001 risk-aware",
        "§6 (Fig. 1, SyntheticUniform), §7",
        SYNTHETIC_UNIFORM_GAIN,
        "PackedTargetASAP (slightly better) … differences in goodput … around 2% for SyntheticUniform",
        "%",
        factor2(SYNTHETIC_UNIFORM_GAIN),
        "repro-riskaware",
        _target_gain("packed-target-asap"),
        _explain_target,
        bounds=GAIN_BOUNDS,
        degenerate=_ffa_interrupts,
        null=0.0,
        reading_history=_ANCHOR_HISTORY,
    ),
]


def _stretch_change(policy: str, name: str):
    """Per replicate: 100 × (``name`` of ``policy`` − FirstFitAware's) / FirstFitAware's, mean over the
    profile's M_ra (positive: a loss, the stretch grew)."""

    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ra_scenarios(pr)
        out: list[float] = []
        for r in seeds(pr):
            ch = [
                -cut(
                    metric(runs, sc[("synthetic-uniform", "ff", mra, r)], name),
                    metric(runs, sc[("synthetic-uniform", policy, mra, r)], name),
                )
                for mra in pr.ra_mra
            ]
            out.append(float(np.mean(ch)))
        return {"default": out}

    return compute


def _explain_stretch(kind: str):
    """Evidence for a stretch row: each policy's ``kind`` stretch and completed jobs (default set-up,
    seed 0)."""

    def explain(pr: Profile, runs: Runs) -> str:
        sc = ra_scenarios(pr)
        vals = []
        for p in ("ff", "target-asap", "packed-target-asap"):
            m = runs[sc[("synthetic-uniform", p, pr.ra_mra[0], 0)].id]["metrics"]
            done = f", {int(m['completed']):,} completed" if "completed" in m else ""
            vals.append(f"{p} {kind}_stretch {m[f'{kind}_stretch']:.2f}{done}")
        return f"Evidence — synthetic-uniform (M_ra = {pr.ra_mra[0]}, seed 0): " + "; ".join(vals) + "."

    return explain


#: Abstract, §1 and §7: "this increase of the goodput is achieved without any loss in complementary
#: metrics such as maximum or average stretch" / "with no loss in complementary metrics, such as the
#: maximum and average stretch": the change of each stretch against FirstFitAware is not an increase (band
#: ≤ 0 %, the plain reading of "no loss"). (§6.4's "factor of 2 to 3" in maximum stretch is Borg's, Fig. 4;
#: no Borg run is in this study.)
_NO_LOSS = "without any loss in complementary metrics such as maximum or average stretch"
STRETCH: list[Headline] = [
    Headline(
        f"riskaware-7-{tag}-{kind}-stretch",
        "001 risk-aware",
        "Abstract, §1, §7 (SyntheticUniform)",
        0.0,
        f"{label}: {_NO_LOSS} ({kind} stretch against FirstFitAware)",
        "stretch change, % (+ = loss)",
        (-100.0, 0.0),
        "repro-riskaware",
        _stretch_change(policy, f"{kind}_stretch"),
        _explain_stretch(kind),
        bounds=GAIN_BOUNDS,
        degenerate=_ffa_interrupts,
    )
    for tag, policy, label in (
        ("targetasap", "target-asap", "TargetASAP"),
        ("packed", "packed-target-asap", "PackedTargetASAP"),
    )
    for kind in ("mean", "max")
]
HEADLINES += STRETCH

#: Causes of rows outside their band.
EXPLANATIONS: dict[str, str] = {
    "riskaware-6-packed-goodput-gain": (
        "Isolated (default set-up, seed 0): PackedTargetASAP planned every job that could start "
        "nowhere now on the first machine of its pack whenever the S⁺ test passed (S⁺ is soon large: 1-s "
        "jobs that wait), leaving 29.7 cores idle on average while jobs waited (TargetASAP 10.1) and "
        "-0.8 % goodput against FirstFitAware; with the S⁺ test off it gained +2.9 %. The scheduler now "
        "treats the pack as the target (§4.5: the target rounded to a multiple of 5, the pack's machines "
        "filled one after the other), planning such a job at the pack's earliest start: +3.1 %, 5.5 idle "
        "cores. A row still outside its band after that fix is set-up, not this cause."
    ),
    "riskaware-7-packed-mean-stretch": (
        "Isolated (default set-up, full profile, seeds 0-4; python -m studies.riskaware.isolate): inherent "
        "to §4.5 as printed, made binding by §4.4's S⁺ test. §4.5 rounds the target to the nearest multiple "
        "of 5 and fills the pack's 5 machines from there, so pack k·5 (machines k·5 … k·5+4) serves the "
        "targets k·5−2 … k·5+2: the safest pack gets targets 0-2 only, and each pack sits up to two machines "
        "above the targets it serves (the top one at times at or above M_use). S⁺, the running maximum stretch, is "
        "2,800-5,900 when the window starts (under 0.12 % of completed jobs ever exceed it), so the test "
        "always passes and a job no near machine starts now waits in its pack's queue. The packs' waits "
        "climb with their index: jobs first started on machines 0-4 waited 22 h, 15-19 79 h, 25-29 107 h "
        "(FirstFitAware 19, 45, 54 h). Mean stretch (response / length) weighs the shortest jobs: the "
        "shortest tenth (under 0.89 h) carries 58 % of its sum; they target the high packs and waited 84 h "
        "(FirstFitAware 28 h, TargetASAP 48 h), the longest quarter 28 h (25 h). Mean stretch +21.0 % "
        "(seed 0: +16 %), goodput +2.71 %. One rule switched at a time: rounding down (pack_floor, the pack "
        "holding the target) −30.8 % mean and −70.9 % max stretch, goodput +3.02 %, every pack's wait "
        "47-55 h; the S⁺ test off (stretch_test=false) −29.2 %, −72.3 %, +2.84 %; no packs (pack=1, "
        "TargetASAP job for job) −16.2 %, −95.0 %, +2.37 %. Not the completed-jobs-only count: on the jobs "
        "every policy completed, mean stretch is FirstFitAware 50.7, PackedTargetASAP 53.7, rounding down "
        "25.7. The model follows §4.5's text (its example, machines 0, 1, 2 → 0, holds either way); the "
        "default is unchanged."
    ),
}
