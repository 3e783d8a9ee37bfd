"""Paper 003's sweep study ``zhang-chien``: dynamic range × structure (random walk, random uniform) ×
frequency × termination policy (lifo, random, lww, lfd) on azure (48)."""

from __future__ import annotations

from collections.abc import Callable

from studies.scenarios import Scenario


def zhang_chien_sweep() -> list[Scenario]:
    """``zhang-chien``."""
    out = []
    for dr in (0.2, 0.6):
        for kind in ("random_walk", "random_uniform"):
            for f in (1.0, 4.0, 12.0):
                cap = {"kind": kind, "changes_per_hour": f, "dynamic_range": dr, "seed": 0}
                if kind == "random_walk":
                    cap["step"] = 0.15
                for term in ("lifo", "random", "lww", "lfd"):
                    out.append(Scenario("azure", cap, "ff", {"termination": term}))
    return out


SWEEP_STUDIES: dict[str, Callable[[], list[Scenario]]] = {"zhang-chien": zhang_chien_sweep}
