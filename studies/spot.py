"""Issue #28: real preemption — public spot availability traces against matched random walks,
checkpoint/restart, and IAS on pools with no stable floor.

``spot-real`` (quick profile: every scenario small enough for a laptop in a minute or two):

* platform: 16 machines × 8 cores — the traces' 16 requested ``p3.2xlarge`` (8 vCPU) spot instances, so a
  trace maps one node to one machine; 14 days (the shortest trace, us-east-2b's 11.3 days, repeats);
* workload: ``pareto-1.5-600`` (Pareto(1.5) durations of at least 10 min, capped at 72 h; synthetic, so
  the study runs offline) offering 80 % of each trace's mean capacity (the thesis' sizing, §3.4, with the
  trace's own mean in place of 70 %: ``load = 0.8 × mean / 0.7``), seeds 0–2;
* capacity: each trace (``spot:<zone>``), and the random walk matched to it in two readings
  (:func:`sim.spot.matched_walk`): ``rate`` (mean and change rate; the thesis walk's step 0.15 and range
  0.6) and ``shape`` (also the mean step and the widest symmetric range), walk seed = scenario seed;
* policies: ``ff``, ``ias`` (default reading), ``ias`` with ``h1_threshold=p90`` (where H1's pool is empty
  and big jobs never run) and with ``no_floor=drop-h1`` on top, ``ias-h4``, ``oracle``;
* checkpointing on (τ = 1800 s, δ = 30 s, R = 60 s) for ``ff`` and ``ias``;
* a checkpoint-interval sweep on the real traces: ``ff`` with τ ∈ {300, 900, 1800, 3600, 7200} s (δ = 30 s,
  R = 60 s), set against ``ias`` without checkpoints (the same runs as above).
"""

from __future__ import annotations

from typing import Any

from sim.capacity_registry import MEAN_CAPACITY
from sim.spot import TRACES, WALK_READINGS, matched_walk, trace_stats
from studies.scenarios import Scenario

WORKLOAD = "pareto-1.5-600"
MACHINES, CORES, DAYS = 16, 8, 14.0
SEEDS = (0, 1, 2)
ZONES = tuple(n.split("_")[0] for n in TRACES)
CK_OVERHEAD_S, CK_RESTART_S, CK_INTERVAL_S = 30.0, 60.0, 1800.0
INTERVALS_S = (300.0, 900.0, 1800.0, 3600.0, 7200.0)
POLICIES: tuple[tuple[str, dict[str, str]], ...] = (
    ("ff", {}),
    ("ias", {}),
    ("ias", {"h1_threshold": "p90"}),
    ("ias", {"h1_threshold": "p90", "no_floor": "drop-h1"}),
    ("ias-h4", {}),
    ("oracle", {}),
)


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


def capacities(zone: str, seed: int) -> dict[str, dict[str, Any]]:
    """``{"real": spot spec, "walk-rate": …, "walk-shape": …}`` for ``zone`` (walk seed = ``seed``)."""
    out: dict[str, dict[str, Any]] = {"real": {"kind": "spot", "trace": zone}}
    for r in WALK_READINGS:
        out[f"walk-{r}"] = matched_walk(zone, seed, r)
    return out


def _sc(zone: str, cap: dict[str, Any], policy: str, settings: dict[str, str], seed: int) -> Scenario:
    return Scenario(
        WORKLOAD, cap, policy, settings, MACHINES, CORES, DAYS, seed, load_for(zone)
    )  # fmt: skip


def spot_real() -> list[Scenario]:
    """The ``spot-real`` scenarios (see the module doc)."""
    out = []
    for zone in ZONES:
        for seed in SEEDS:
            for cap in capacities(zone, seed).values():
                for pol, st in POLICIES:
                    out.append(_sc(zone, cap, pol, st, seed))
                out.append(_sc(zone, cap, "ff", checkpointing(), seed))
                out.append(_sc(zone, cap, "ias", checkpointing(), seed))
            real = capacities(zone, seed)["real"]
            for tau in INTERVALS_S:
                out.append(_sc(zone, real, "ff", checkpointing(tau), seed))
    return out


STUDIES = {"spot-real": spot_real}
