"""Paper 002's sweep study ``slacksched``: harvest-VM pool × {ff, slacksched-nodelay, slacksched, oracle} ×
Acquirer off/on (8)."""

from __future__ import annotations

from collections.abc import Callable

from studies.scenarios import Scenario


def slacksched_sweep() -> list[Scenario]:
    """``slacksched``."""
    cap = {"kind": "harvest", "pool": 64, "max_cores": 48, "stability_spread": 1.0, "seed": 0}
    return [
        Scenario("harvest-tasks", cap, p, {"nodes": "32", "acquirer": str(acq).lower()}, 64, 48, 7.0)
        for acq in (False, True)
        for p in ("ff", "slacksched-nodelay", "slacksched", "oracle")
    ]


SWEEP_STUDIES: dict[str, Callable[[], list[Scenario]]] = {"slacksched": slacksched_sweep}
