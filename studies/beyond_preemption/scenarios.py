"""The beyond_preemption chapter's study: real preemption — public spot availability traces against
matched random walks, checkpoint/restart, and IAS on pools with no stable floor.

``spot-real`` exists once per reproduction profile, like the reproduction studies (catalogue names
``spot-real`` for ``full``, ``spot-real-quick``; :data:`STUDY_BUILDERS`, listed in
:mod:`studies.papers`, so ``varcap run`` materializes the quick one and
``varcap reproduce`` the full one, and the ``beyond_preemption`` chapter reads them from
``out_study_results``). ``full`` (252 distinct scenarios, ~16 CPU s of simulation, measured 2026-11-24):

* platform: 16 machines × 8 cores — the traces' 16 requested ``p3.2xlarge`` (8 vCPU) spot instances, so a
  trace maps one node to one machine; 14 days (the shortest trace, us-east-2b's 11.3 days, repeats);
* workload: ``pareto-1.5-600`` (Pareto(1.5) durations of at least 10 min, capped at 72 h; synthetic, so
  the study runs offline) offering 80 % of each trace's mean capacity (the thesis' sizing, §3.4, with the
  trace's own mean in place of 70 %: ``load = 0.8 × mean / 0.7``), seeds 0–2;
* capacity: each trace (``spot:<zone>``), and the random walk matched to it in two readings
  (:func:`sim.capacity.spot.matched_walk`): ``rate`` (mean and change rate; the thesis walk's step 0.15 and range
  0.6) and ``shape`` (also the mean step and the widest symmetric range), walk seed = scenario seed;
* policies: ``ff``, ``ias`` (default reading), ``ias`` with ``h1_threshold=p90`` (where H1's pool is empty
  and big jobs never run) and with ``no_floor=drop-h1`` on top, ``ias-h4``, ``oracle``;
* checkpointing on (τ = 1800 s, δ = 30 s, R = 60 s) for ``ff`` and ``ias``;
* a checkpoint-interval sweep on the real traces: ``ff`` with τ ∈ {300, 900, 1800, 3600, 7200} s (δ = 30 s,
  R = 60 s), set against ``ias`` without checkpoints (the same runs as above).

``quick`` keeps what the chapter shows with CIs at half the runs: 7 days (no trace repeats), seeds 0–2,
the ``rate`` walk only, every policy but ``oracle``, and τ ∈ {300, 1800, 7200} s.

A scenario's key (``out_study_scenarios.key_json``) is ``[zone, capacity, policy variant, τ, seed]``:
capacity ``real``, ``walk-rate`` or ``walk-shape``; the variant the policy and its non-checkpoint settings
(``ias h1_threshold=p90``); τ 0 when checkpointing is off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sim.capacity.kinds import MEAN_CAPACITY
from sim.capacity.spot import TRACES, WALK_READINGS, matched_walk, trace_stats, trace_version
from sim.checkpoint import KEYS as CHECKPOINT_KEYS
from studies.claims import FULL, Profile
from studies.scenarios import Scenario

WORKLOAD = "pareto-1.5-600"
MACHINES, CORES = 16, 8
ZONES = tuple(n.split("_")[0] for n in TRACES)
CK_OVERHEAD_S, CK_RESTART_S, CK_INTERVAL_S = 30.0, 60.0, 1800.0
POLICIES: tuple[tuple[str, dict[str, str]], ...] = (
    ("ff", {}),
    ("ias", {}),
    ("ias", {"h1_threshold": "p90"}),
    ("ias", {"h1_threshold": "p90", "no_floor": "drop-h1"}),
    ("ias-h4", {}),
    ("oracle", {}),
)


@dataclass(frozen=True)
class Size:
    """What one profile of ``spot-real`` runs (see the module doc)."""

    days: float
    seeds: tuple[int, ...]
    walks: tuple[str, ...]
    policies: tuple[tuple[str, dict[str, str]], ...]
    intervals_s: tuple[float, ...]


SIZES: dict[str, Size] = {
    "full": Size(14.0, (0, 1, 2), WALK_READINGS, POLICIES, (300.0, 900.0, 1800.0, 3600.0, 7200.0)),
    "quick": Size(7.0, (0, 1, 2), ("rate",), POLICIES[:5], (300.0, 1800.0, 7200.0)),
}  # fmt: skip
DAYS = SIZES["full"].days
SEEDS = SIZES["full"].seeds
INTERVALS_S = SIZES["full"].intervals_s


def checkpointing(interval_s: float = CK_INTERVAL_S) -> dict[str, str]:
    """The checkpoint settings of the study at interval ``interval_s``."""
    return {
        "checkpoint_interval_s": f"{interval_s:g}",
        "checkpoint_overhead_s": f"{CK_OVERHEAD_S:g}",
        "restart_overhead_s": f"{CK_RESTART_S:g}",
    }


def load_for(zone: str) -> float:
    """The scenario ``load`` that offers 80 % of the trace's mean capacity (rounded to 3 places)."""
    return round(0.8 * trace_stats(zone)["mean"] / MEAN_CAPACITY, 3)


def capacities(zone: str, seed: int, walks: tuple[str, ...] = WALK_READINGS) -> dict[str, dict[str, Any]]:
    """``{"real": spot spec, "walk-rate": …, "walk-shape": …}`` for ``zone`` (walk seed = ``seed``)."""
    # the trace's data version pinned: the scenario (and its cached run) belongs to these values
    out: dict[str, dict[str, Any]] = {"real": {"kind": "spot", "trace": zone, "data": trace_version(zone)}}
    for r in walks:
        out[f"walk-{r}"] = matched_walk(zone, seed, r)
    return out


def variant(policy: str, settings: dict[str, str]) -> str:
    """The policy and its settings other than checkpointing, as the key names it (``ias no_floor=drop-h1``)."""
    return policy + "".join(f" {k}={v}" for k, v in sorted(settings.items()) if k not in CHECKPOINT_KEYS)


def spot_scenarios(pr: Profile) -> dict[tuple, Scenario]:
    """The ``spot-real`` scenarios of profile ``pr`` by key ``(zone, capacity, variant, τ, seed)``."""
    size = SIZES[pr.name]
    out: dict[tuple, Scenario] = {}

    def add(zone: str, cap: str, spec: dict[str, Any], pol: str, st: dict[str, str], seed: int) -> None:
        tau = float(st.get("checkpoint_interval_s", 0.0))
        sc = Scenario(WORKLOAD, spec, pol, st, MACHINES, CORES, size.days, seed, load_for(zone))
        out.setdefault((zone, cap, variant(pol, st), tau, seed), sc)

    for zone in ZONES:
        for seed in size.seeds:
            caps = capacities(zone, seed, size.walks)
            for cap, spec in caps.items():
                for pol, st in size.policies:
                    add(zone, cap, spec, pol, st, seed)
                add(zone, cap, spec, "ff", checkpointing(), seed)
                add(zone, cap, spec, "ias", checkpointing(), seed)
            for tau in size.intervals_s:
                add(zone, "real", caps["real"], "ff", checkpointing(tau), seed)
    return out


def spot_real() -> list[Scenario]:
    """The full profile's ``spot-real`` scenarios (see the module doc)."""
    return list(spot_scenarios(FULL).values())


#: the study per profile (catalogue ``spot-real`` and ``spot-real-quick``, as :func:`studies.reproduction.study_name`)
STUDY_BUILDERS = {"spot-real": spot_scenarios}
