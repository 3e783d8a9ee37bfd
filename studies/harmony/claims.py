"""Paper 004's claim (Harmony): CBS's energy-cost reduction against the heterogeneity-oblivious baseline (§9.2),
read from the ``harmony`` study's cached runs (:mod:`studies.harmony.runner`)."""

from __future__ import annotations

from pathlib import Path

from studies.claims import CUT_BOUNDS, Headline, MissingRuns, Profile, Runs, factor2

#: §9.2, Fig. 29: "a 28 percent reduction in energy cost compared to the baseline algorithm".
CBS_REDUCTION_PCT = 28.0


def energy_reduction_readings(out: Path | None = None) -> dict[str, list[float]]:
    """The Harmony headline's readings from the cached ``harmony`` study (ω = 1.2, sample workload): percent
    reduction against the baseline of CBS's energy cost (default: §9.2's energy cost), of CBS's server
    energy, and of CBP's energy cost. LookupError if a run is missing."""
    from studies.harmony.runner import energy_change_pct, load_results

    rows = load_results("harmony", out)
    need = {("baseline", 1.2), ("cbs", 1.2), ("cbp", 1.2)}
    have = {
        (r["params"]["scheme"], r["params"]["omega"])
        for r in rows
        if r["params"]["workload"] == "borg2011-sample"
    }
    if not need <= have:
        raise LookupError(f"harmony study runs missing: {sorted(need - have)}; run `varcap sweep harmony`")
    return {
        "cost": [-energy_change_pct(rows, "cbs", "energy_cost_usd")],
        "kwh": [-energy_change_pct(rows, "cbs", "energy_kwh")],
        "cbp-cost": [-energy_change_pct(rows, "cbp", "energy_cost_usd")],
    }


def _harmony_energy(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    """One run per scheme, so no interval; the profile does not apply (the study has one size)."""
    try:
        return energy_reduction_readings()
    except LookupError as e:
        raise MissingRuns(str(e)) from None


HEADLINES: list[Headline] = [
    Headline(
        "harmony-9.2-cbs-energy-reduction",
        "004 Harmony",
        "§9.2 Fig. 29",
        CBS_REDUCTION_PCT,
        "CBS incurs the lowest energy costs, corresponding to a 28 percent reduction in energy cost compared "
        "to the baseline algorithm",
        "% reduction",
        factor2(CBS_REDUCTION_PCT),
        None,
        _harmony_energy,
        bounds=CUT_BOUNDS,
    )
]

#: Causes of rows outside their band.
EXPLANATIONS: dict[str, str] = {
    "harmony-9.2-cbs-energy-reduction": (
        "Model as the paper describes it (short-class containers from the time each task holds a short container, no "
        "per-scheme backlog: CBP and CBS provision the same machines, §9.2). Power: R515 and DL385 G7 from "
        "SPECpower_ssj2008 runs of their processor configurations, R210 and DL585 G7 estimates (no published "
        "figure found; sim/harmony/machines.py). Isolating runs (python -m studies.harmony.isolate, ω = 1.2, "
        "constant price): CBS +17.3 % cost against the baseline, +9.6 % without the switching cost (14,009 "
        "power-ons against the baseline's 5,113 add 7.7 points: the LP re-provisions every interval), CBP "
        "+22.1 % (+14.2 %). Under the other reading of the baseline's 'decreasing order of energy efficiency' "
        "(peak W per CPU unit, which puts the DL585 G7 first as §9's example does; the default is per mean "
        "(cpu, memory) capacity, R515 first) the baseline costs 560.42 USD instead of 544.57 and CBS is "
        "+13.9 % (+6.0 % without switching): the type order is not what flips the sign. What remains is "
        "energy: at §9.2's ω = 1.2 (the paper's setting, not tuned) Harmony keeps more capacity on than the "
        "baseline's 80 % rule (2,579 vs 2,354 kWh: Theorem 1 containers above the mean request and the M/G/N "
        "delay targets), while the baseline here already meets the delays (p90 77 s; CBS 4,333 s, tasks "
        "waiting for containers of their class). The paper gives neither its power figures (Fig. 9 plots "
        "only) nor the baseline's delays, so how much its baseline over-provisions is left open by the text."
    ),
}

#: What the Harmony notebook prints next to varcap's value (injected by the report asset).
FIGURES = {"harmony": {"cbs_reduction_pct": CBS_REDUCTION_PCT}}
