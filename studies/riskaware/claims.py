"""Seed 001's claims: TargetASAP and PackedTargetASAP against FirstFitAware (§6, §7)."""

from __future__ import annotations

import numpy as np

from studies.claims import Headline, Profile, Runs, cut, metric, seeds
from studies.riskaware.scenarios import ra_scenarios

GOODPUT_GAIN_UP_TO = 10.0  # §7: "up to 10 % increase in goodput" (band: a gain, up to that)


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


HEADLINES: list[Headline] = [
    Headline(
        "seed001-targetasap-goodput-gain",
        "001 risk-aware",
        "§6 (Figs. 1–4), §7",
        GOODPUT_GAIN_UP_TO,
        "TargetASAP … better than FirstFitAware … in all cases … up to 10 % increase in goodput",
        "%",
        (0.0, GOODPUT_GAIN_UP_TO),
        "repro-riskaware",
        _target_gain("target-asap"),
        _explain_target,
    ),
    Headline(
        "seed001-packed-goodput-gain",
        "001 risk-aware",
        "§6 (Figs. 1–4), §7",
        GOODPUT_GAIN_UP_TO,
        "PackedTargetASAP (slightly better) … up to 10 % increase in goodput",
        "%",
        (0.0, GOODPUT_GAIN_UP_TO),
        "repro-riskaware",
        _target_gain("packed-target-asap"),
        _explain_target,
    ),
]

#: Causes of rows outside their band.
EXPLANATIONS: dict[str, str] = {
    "seed001-packed-goodput-gain": (
        "Direction depends on the load, cause not isolated. On the default workload (26 machines' worth of "
        "work, about the mean capacity of 24 ± 8 machines) PackedTargetASAP terminates fewer jobs than "
        "TargetASAP but completes less work than FirstFitAware; on the literal T_avg reading (3.5 × the work, "
        "an overloaded platform) it gains over FirstFitAware like TargetASAP (readings). Seed 001 describes the "
        "packs in one paragraph (§4.5: the target rounded to a multiple of 5, a pack's machines filled one "
        "after the other using D⁺); varcap's reading of that fill order is the first suspect, and no run in "
        "this study isolates it."
    ),
}
