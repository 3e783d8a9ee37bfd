"""Readable partition keys of a study's scenarios, unique per study and short enough for the UI.

A scenario's full key is ``policy settings/workload/capacity[/extras]`` (:func:`full_keys`, e.g.
``ias A=0.6/zipf-1.5/rw f=1 step=0.15/40m 3d``). A study's partition key keeps the policy, the workload and
the capacity kind, and of the other words only those that differ between the study's scenarios
(:func:`partition_keys`: smoke's ``ias/zipf-1.5/rw f=4``); what every scenario shares is said once
(:func:`shared`) in the study asset's description, and each partition's metadata holds its full key.
Dropping a word every scenario holds keeps keys unique (two scenarios that differ, differ in a word not
all of them hold); a key that would still collide gets the id's first 6 characters. Keys hold no comma,
bracket or ``...`` (the UI's partition-range syntax). The scenario cache is keyed by scenario id, not by
these keys: changing them re-records partitions (cache hits) but simulates nothing again.
"""

from __future__ import annotations

from typing import Any

from studies.scenarios import SHORT_KIND, Scenario

_SHORT_KEY = {"changes_per_hour": "f", "aggressiveness": "A", "dynamic_range": "dr"}


def _fmt(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _capacity_words(cap: dict[str, Any]) -> list[str]:
    """A capacity spec as words: its kind's short name, then ``key=value`` (a nested spec, a pool's ``of``,
    as ``of=rw(f=1 step=0.15)``)."""
    parts = [SHORT_KIND.get(cap["kind"], cap["kind"])]
    for k, v in cap.items():
        if k in ("kind", "seed") or (k == "dynamic_range" and v == 0.6):
            continue
        if isinstance(v, dict) and "kind" in v:
            inner = _capacity_words(v)
            v = f"{inner[0]}({' '.join(inner[1:])})" if len(inner) > 1 else inner[0]
        parts.append(f"{_SHORT_KEY.get(k, k)}={_fmt(v)}")
    if cap.get("seed", 0):
        parts.append(f"cseed={cap['seed']}")
    return parts


def _segments(sc: Scenario) -> list[list[str]]:
    """The key's segments as words: policy and settings, workload, capacity kind and parameters, extras."""
    parts = _capacity_words(sc.capacity)
    pol = [sc.policy, *(f"{_SHORT_KEY.get(k, k)}={v}" for k, v in sorted(sc.settings.items()))]
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
    return [pol, [sc.workload], parts, extras]


def _join(segs: list[list[str]]) -> str:
    key = "/".join(" ".join(s) for s in segs if s)
    return key.replace(",", ";").replace("[", "(").replace("]", ")").replace("...", "…")


def _unique(raw: dict[str, str]) -> dict[str, str]:
    seen: dict[str, int] = {}
    for k in raw.values():
        seen[k] = seen.get(k, 0) + 1
    return {i: (k if seen[k] == 1 else f"{k} #{i[:6]}") for i, k in raw.items()}


def full_keys(scenarios: list[Scenario]) -> dict[str, str]:
    """Each scenario's full key (every word), by scenario id; unique like :func:`partition_keys`."""
    return _unique({sc.id: _join(_segments(sc)) for sc in scenarios})


def _common(segs: list[list[list[str]]]) -> list[set[str]]:
    """Per segment, the words every scenario holds (the policy name, workload and kind are always kept)."""
    out = []
    for i in range(4):
        words = [set(s[i][1:] if i in (0, 2) else s[i]) for s in segs]
        out.append(set.intersection(*words) if words and i != 1 else set())
    return out


def partition_keys(scenarios: list[Scenario]) -> dict[str, str]:
    """Readable, unique partition key per scenario id: the full key (:func:`full_keys`) without the words
    every scenario of ``scenarios`` holds, keeping policy, workload and capacity kind; e.g. smoke's
    ``ias/zipf-1.5/rw f=4``."""
    segs = {sc.id: _segments(sc) for sc in scenarios}
    common = _common(list(segs.values()))
    raw = {
        i: _join([[w for j, w in enumerate(seg) if (j == 0 and n in (0, 2)) or w not in common[n]]
                  for n, seg in enumerate(s)])  # fmt: skip
        for i, s in segs.items()
    }
    return _unique(raw)


def shared(scenarios: list[Scenario]) -> str:
    """The words every scenario of ``scenarios`` holds and :func:`partition_keys` leaves out, in key order
    (empty when none)."""
    segs = [_segments(sc) for sc in scenarios]
    if not segs:
        return ""
    common = _common(segs)
    first = segs[0]
    words = [w for n, seg in enumerate(first) for w in seg if w in common[n]]
    return " ".join(words).replace(",", ";")
