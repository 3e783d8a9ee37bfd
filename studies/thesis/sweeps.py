"""The thesis' (paper 000) sweep studies (one run per point, no replicates; the README's sweep section):

* ``thesis-ch4-synthetic`` — 6 change frequencies × 4 step sizes × {azure, borg2011} × ff (48);
* ``thesis-ch6-ias`` — {zipf-1.1 … zipf-1.8, azure} × {ff, ias (A = 0.6)} at 1 change/h, step 0.15 (18);
* ``thesis-ch6-aggressiveness`` — the same workloads × ias with A ∈ {0.1 … 0.9} (81; A = 0.6 shared);
* ``thesis-grids`` — {CAISO, ERCOT, MISO} constant-carbon-budget traces × azure × {ff, ias} (6).
"""

from __future__ import annotations

from collections.abc import Callable

from studies.scenarios import Scenario, walk
from studies.signals import GRIDS
from studies.thesis.scenarios import ZIPFS

#: §3.4's change frequencies (per hour) and step sizes
CH4_FREQS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
CH4_STEPS = (0.15, 0.3, 0.45, 0.6)


def ch4_sweep() -> list[Scenario]:
    """``thesis-ch4-synthetic``."""
    out = []
    for wl, days in (("azure", 30.0), ("borg2011", 7.0)):
        for f in CH4_FREQS:
            for s in CH4_STEPS:
                out.append(Scenario(wl, walk(f, s), horizon_days=days))
    return out


def ch6_sweep(policies: list[tuple[str, dict[str, str]]]) -> list[Scenario]:
    """The Zipf and Azure workloads at 1 change/h, step 0.15, under each of ``policies``."""
    out = []
    for wl in (*ZIPFS, "azure"):
        machines = 1000 if wl.startswith("zipf") else 0
        for p, st in policies:
            out.append(Scenario(wl, walk(1.0, 0.15), p, st, machines=machines))
    return out


def grids_sweep() -> list[Scenario]:
    """``thesis-grids``."""
    return [
        Scenario("azure", {"kind": "carbon_budget", "grid": g, "signal": s}, p)
        for g, s in GRIDS.items()
        for p in ("ff", "ias")
    ]


SWEEP_STUDIES: dict[str, Callable[[], list[Scenario]]] = {
    "thesis-ch4-synthetic": ch4_sweep,
    "thesis-ch6-ias": lambda: ch6_sweep([("ff", {}), ("ias", {"aggressiveness": "0.6"})]),
    "thesis-ch6-aggressiveness": lambda: ch6_sweep(
        [("ias", {"aggressiveness": f"{a / 10:.1f}"}) for a in range(1, 10)]
    ),
    "thesis-grids": grids_sweep,
}
