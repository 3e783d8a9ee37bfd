"""Readable partition keys of a study's scenarios (``policy/workload/capacity/platform``), unique per study."""

from __future__ import annotations

from typing import Any

from studies.scenarios import SHORT_KIND, Scenario


def partition_keys(scenarios: list[Scenario]) -> dict[str, str]:
    """Readable, unique partition key per scenario id: ``policy settings/workload/capacity[/extras]``,
    e.g. ``ias A=0.6/zipf-1.5/rw f=1 step=0.15/40m 3d``. Extras are the platform (``40m``), horizon
    (``3d``), seed and warm-up when they differ from the defaults. A key that would still collide gets the
    id's first 6 characters. Keys hold no comma, bracket or ``...`` (the UI's partition-range syntax)."""
    raw = {sc.id: _key(sc) for sc in scenarios}
    seen: dict[str, int] = {}
    for k in raw.values():
        seen[k] = seen.get(k, 0) + 1
    return {i: (k if seen[k] == 1 else f"{k} #{i[:6]}") for i, k in raw.items()}


_SHORT_KEY = {"changes_per_hour": "f", "aggressiveness": "A", "dynamic_range": "dr"}


def _fmt(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _key(sc: Scenario) -> str:
    cap = sc.capacity
    parts = [SHORT_KIND.get(cap["kind"], cap["kind"])]
    for k, v in cap.items():
        if k in ("kind", "seed") or (k == "dynamic_range" and v == 0.6):
            continue
        parts.append(f"{_SHORT_KEY.get(k, k)}={_fmt(v)}")
    if cap.get("seed", 0):
        parts.append(f"cseed={cap['seed']}")
    pol = " ".join([sc.policy, *(f"{_SHORT_KEY.get(k, k)}={v}" for k, v in sorted(sc.settings.items()))])
    extras = []
    if sc.machines:
        extras.append(f"{sc.machines}m")
    if sc.cores != 24:
        extras.append(f"{sc.cores}c")
    if sc.horizon_days != 30.0:
        extras.append(f"{_fmt(sc.horizon_days)}d")
    if sc.load != 0.8:
        extras.append(f"load={_fmt(sc.load)}")
    if sc.warmup_days:
        extras.append(f"warmup={_fmt(sc.warmup_days)}d")
    if sc.seed:
        extras.append(f"seed={sc.seed}")
    key = "/".join([pol, sc.workload, " ".join(parts), *([" ".join(extras)] if extras else [])])
    return key.replace(",", ";").replace("[", "(").replace("]", ")").replace("...", "…")
