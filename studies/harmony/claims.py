"""Paper 004's claim (Harmony): CBS's energy-cost reduction against the heterogeneity-oblivious baseline (§9.2),
read from the ``harmony`` study's cached runs (:mod:`studies.harmony.runner`)."""

from __future__ import annotations

from pathlib import Path

from studies.claims import CUT_BOUNDS, NULL_HISTORY, Headline, MissingRuns, Profile, Runs, factor2

#: §9.2, Fig. 29: "a 28 percent reduction in energy cost compared to the baseline algorithm".
CBS_REDUCTION_PCT = 28.0


def energy_reduction_readings(out: Path | None = None) -> dict[str, list[float]]:
    """The Harmony headline's readings from the cached ``harmony`` study (ω = 1.2, sample workload): percent
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


def _harmony_energy(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    """One run per scheme, so no interval; the profile does not apply (the study has one size)."""
    try:
        return energy_reduction_readings()
    except LookupError as e:
        raise MissingRuns(str(e)) from None


#: when and why the default reading changed (out_reproduction.reading_history)
READING_HISTORY = (
    "Default changed 2026-11-27 from the baseline's types ordered by peak watts per unit "
    "of mean (cpu, memory) capacity (R515 first; now the reading cost-capacity-order) to the paper's order: "
    "the HP DL585 G7 first, as §9's example ('always turning on HP-DL585-G7 machines first'), the Dell R210 "
    "next, as §9.2's account of the baseline implies ('As soon as the most energy efficient (i.e., HP DL585 "
    "G7) machines are all turned on, it began to make wrong decisions regarding the type of machines to be "
    "turned on. As a result, many tasks cannot be scheduled in the newly provisioned machines': of Table 2 "
    "only the R210, 4 cores and 4 GB, is too small for many tasks), the rest by peak watts per CPU unit. "
    "The values under both orders had been seen before the switch (they were reported before the switch), so "
    "this default is not a reading fixed before the runs; the earlier default and the all-per-CPU order "
    "stay rows. Changed together (model, not reading): CBS frees a relabelled task's short container at "
    "once, and eq. 6's memory slope is 1.25 W/GB (estimate) instead of 0. Model change 2026-11-27 (not a "
    "reading): a relabelled task's short container is swapped with a free long container of its class "
    "elsewhere instead of freed on the machine the task fills (relabel='free' stays a reading); CBS's cost "
    "on the headline 691.42 -> 694.16 USD (reduction 14.2 -> 13.8 %), p90 delay 3,524 -> 2,920 s."
)

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
        null=0.0,  # a reduction: its interval must exclude no effect
        reading_history=READING_HISTORY + " " + NULL_HISTORY,
    )
]

#: Causes of rows outside their band.
EXPLANATIONS: dict[str, str] = {
    "harmony-9.2-cbs-energy-reduction": (
        "Isolating runs (python -m studies.harmony.isolate energy --readings paper,cpu,capacity; ω = 1.2, "
        "constant price, borg2011-sample; CBS frees a relabelled task's short container at once; eq. 6 with "
        "a memory slope of 1.25 W/GB, estimate). The sign of the row is the baseline's type order, a reading: "
        "with the paper's order (DL585 G7 first, §9; R210 next, §9.2's account) the baseline costs 805.38 "
        "USD (16,119 power-ons, p90 delay 170 s) and CBS 691.42 USD, a 14.2 % reduction (CBP 12.2 %); "
        "with all types by watts per CPU unit (DL585 G7 first, R210 last) the baseline costs 602.30 USD and "
        "CBS 14.8 % more; by watts per mean (cpu, memory) capacity (R515 first, the earlier default) 586.49 "
        "USD and CBS 17.9 % more. The R210 second is what flips the sign: it turns on thousands of 4-core, "
        "4 GB machines many tasks do not fit (§9.2: 'many tasks cannot be scheduled in the newly provisioned "
        "machines'). The earlier note here ('the type order is not what flips the sign') was tested only on "
        "orders with the R210 last (these figures are from before the relabel swap; with it CBS costs "
        "694.16 USD, 13.8 % below the paper-order baseline). CBS's own delays do not follow §9.2 (with the "
        "swap p90 2,920 s against CBP's 63 s and the baseline's 170 s; 901 of 173,844 tasks never start, "
        "2,052 before it). The cause, one change at a time (python -m studies.harmony.isolate cause; "
        "docs/harmony.md): the container manager sizes a class's short containers from the one-step "
        "forecast of its arrivals only (§4, §5.2; §9: T = 1), so a batch beyond the forecast (gratis "
        "class 10: 9,487 arrivals in an interval forecast at 491) leaves a backlog that containers sized "
        "for the new arrivals drain only at their margin, and not at all when none are forecast: with each "
        "interval's true arrivals p90 747 s, with the backlog reading 495 s, with both 333 s. Behind the "
        "rest is a model line the paper describes and the default model lacks: Algorithm 1 re-packs the "
        "containers by first fit with migration (lines 10-11); without it 28 % of the LP's containers find "
        "no room at a decision (0.9 % when packed afresh). With re-packing (reading repack, off by default: "
        "the LP must then host the running containers, so CBS and CBP no longer provision the same "
        "machines, against §9.2) and true arrivals CBS's p90 is 20 s, below the baseline's 170 s; with "
        "re-packing and the forecasts 4,371 s (16,312 never start): the forecasts of the trace's batch "
        "arrivals, a set-up choice, keep CBS from §9.2, not a model line. Not causes: the relabel (the "
        "former 'free' reading 3,524 s), the long-running counts (true counts 2,261 s, the scheme's own "
        "4,680 s), the start-up ramp (steady-window p90 3,535 s; the 7-day workload is worse). On the "
        "7-day workload CBS p90 10,752 s and 17,404 of 5,436,673 tasks never start (baseline 63 s, 362), "
        "with the backlog reading 578 s and 221. Over three K-means seeds of the classes the reduction is "
        "14.8 ± 2.8 % (95 % t; isolate headline). Watts: "
        "R515 and DL385 G7 from SPECpower_ssj2008 runs of their processor configurations, R210 and DL585 "
        "G7 estimates (sim/harmony/machines.py); with them §9's 0.2-CPU container example (DL385 G7 "
        "cheapest) does not hold."
    ),
}

#: What the Harmony notebook prints next to varcap's value (injected by the report asset).
FIGURES = {"harmony": {"cbs_reduction_pct": CBS_REDUCTION_PCT}}
