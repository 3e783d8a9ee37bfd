"""Seed 004's claim: CBS's energy-cost reduction against the heterogeneity-oblivious baseline (§9.2),
read from the ``harmony`` study's cached runs (:mod:`studies.harmony.runner`)."""

from __future__ import annotations

from pathlib import Path

from studies.claims import CUT_BOUNDS, Headline, MissingRuns, Profile, Runs, factor2

#: §9.2, Fig. 29: "a 28 percent reduction in energy cost compared to the baseline algorithm".
CBS_REDUCTION_PCT = 28.0


def energy_reduction_readings(out: Path | None = None) -> dict[str, list[float]]:
    """Seed 004 headline readings from the cached ``harmony`` study (ω = 1.2, sample workload): percent
    reduction against the baseline of CBS's energy cost (default: §9.2's energy cost, the baseline's types
    in the paper's order — DL585 G7, then R210, :func:`sim.harmony.machines.type_order`), the same against
    the baseline under the other type orders (``cost-cpu-order``, ``cost-capacity-order``), of CBS's server
    energy, and of CBP's energy cost. LookupError if a run is missing."""
    from studies.harmony.runner import OTHER_ORDERS, energy_change_pct, load_results

    rows = load_results("harmony", out)
    need = {("baseline", "paper"), ("cbs", "paper"), ("cbp", "paper")}
    need |= {("baseline", o) for o in OTHER_ORDERS}
    have = {
        (r["params"]["scheme"], r["params"].get("efficiency", "paper"))
        for r in rows
        if r["params"]["workload"] == "borg2011-sample" and r["params"]["omega"] == 1.2
    }
    if not need <= have:
        raise LookupError(f"harmony study runs missing: {sorted(need - have)}; run `varcap sweep harmony`")
    out_ = {"cost": [-energy_change_pct(rows, "cbs", "energy_cost_usd")]}
    for o in OTHER_ORDERS:
        out_[f"cost-{o}-order"] = [-energy_change_pct(rows, "cbs", "energy_cost_usd", order=o)]
    out_["kwh"] = [-energy_change_pct(rows, "cbs", "energy_kwh")]
    out_["cbp-cost"] = [-energy_change_pct(rows, "cbp", "energy_cost_usd")]
    return out_


def _seed004_energy(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    """One run per scheme, so no interval; the profile does not apply (the study has one size)."""
    try:
        return energy_reduction_readings()
    except LookupError as e:
        raise MissingRuns(str(e)) from None


#: when and why the default reading changed (out_reproduction.reading_history)
READING_HISTORY = (
    "Default changed on branch harmony (2026-11-27) from the baseline's types ordered by peak watts per unit "
    "of mean (cpu, memory) capacity (R515 first; now the reading cost-capacity-order) to the paper's order: "
    "the HP DL585 G7 first, as §9's example ('always turning on HP-DL585-G7 machines first'), the Dell R210 "
    "next, as §9.2's account of the baseline implies ('As soon as the most energy efficient (i.e., HP DL585 "
    "G7) machines are all turned on, it began to make wrong decisions regarding the type of machines to be "
    "turned on. As a result, many tasks cannot be scheduled in the newly provisioned machines': of Table 2 "
    "only the R210, 4 cores and 4 GB, is too small for many tasks), the rest by peak watts per CPU unit. "
    "The values under both orders had been seen before the switch (the request for it reported them), so "
    "this default is not a reading fixed before the runs; the earlier default and the all-per-CPU order "
    "stay rows. Changed together (model, not reading): CBS frees a relabelled task's short container at "
    "once, and eq. 6's memory slope is 1.25 W/GB (estimate) instead of 0."
)

HEADLINES: list[Headline] = [
    Headline(
        "seed004-cbs-energy-reduction",
        "004 Harmony",
        "§9.2 Fig. 29",
        CBS_REDUCTION_PCT,
        "CBS incurs the lowest energy costs, corresponding to a 28 percent reduction in energy cost compared "
        "to the baseline algorithm",
        "% reduction",
        factor2(CBS_REDUCTION_PCT),
        None,
        _seed004_energy,
        bounds=CUT_BOUNDS,
        reading_history=READING_HISTORY,
    )
]

#: Causes of rows outside their band.
EXPLANATIONS: dict[str, str] = {
    "seed004-cbs-energy-reduction": (
        "Model per issue #29 (short-class containers from the time each task holds a short container, no "
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
