"""Paper 001's claims (risk-aware Target*): TargetASAP and PackedTargetASAP against FirstFitAware (§6, §7)."""

from __future__ import annotations

import numpy as np

from studies.claims import GAIN_BOUNDS, Headline, Profile, Runs, cut, factor2, metric, seeds
from studies.riskaware.scenarios import ra_scenarios

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
        if ("seed001-uniform-literal", "ff", 8, 0) in sc:
            res["literal-tavg"] = []
        for r in seeds(pr):
            for name in ("goodput_partial", "goodput"):
                gains = [
                    -cut(
                        metric(runs, sc[("seed001-uniform", "ff", mra, r)], name),
                        metric(runs, sc[("seed001-uniform", policy, mra, r)], name),
                    )
                    for mra in pr.ra_mra
                ]
                res[name].append(float(np.mean(gains)))
            if (k0 := ("seed001-uniform-literal", "ff", 8, r)) in sc:
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
    for wl in ("seed001-uniform", "seed001-uniform-literal"):
        if (wl, "ff", 8, 0) not in sc:
            continue
        vals = []
        for p in ("ff", "target-asap", "packed-target-asap"):
            m = runs[sc[(wl, p, 8, 0)].id]["metrics"]
            vals.append(f"{p} goodput_partial {m['goodput_partial']:.4f}, {m['terminations']:,} terminations")
        parts.append(f"{wl} (M_ra = 8, seed 0): " + "; ".join(vals))
    return "Evidence — " + " | ".join(parts) + "." if parts else ""


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
        null=0.0,
        reading_history=_ANCHOR_HISTORY,
    ),
]

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
}
