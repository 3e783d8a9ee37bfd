"""Paper 001's sweep study ``riskaware`` (§5.4): M_avg ∈ {20 … 28}, φ ∈ {400 … 32400 s}, M_ra ∈ {4 … 16}
one at a time, × {ff, ff-unaware, target-stretch, target-asap, packed-target-asap} (65)."""

from __future__ import annotations

from collections.abc import Callable

from studies.scenarios import Scenario

#: the sweep's policies
RISKAWARE = ("ff", "ff-unaware", "target-stretch", "target-asap", "packed-target-asap")


def riskaware_sweep() -> list[Scenario]:
    """``riskaware``."""
    grid = [(m, 1200.0, 8) for m in (20, 22, 24, 26, 28)]
    grid += [(24, phi, 8) for phi in (400.0, 1200.0, 3600.0, 10800.0, 32400.0)]
    grid += [(24, 1200.0, r) for r in (4, 6, 8, 12, 16)]
    out = []
    for m_avg, phi, m_ra in dict.fromkeys(grid):
        cap = {"kind": "risk_aware_walk", "m_avg": m_avg, "m_ra": m_ra, "period_s": phi, "seed": 0}
        for p in RISKAWARE:
            out.append(Scenario("borg2011-riskaware", cap, p, machines=m_avg + m_ra, horizon_days=21.0))
    return out


SWEEP_STUDIES: dict[str, Callable[[], list[Scenario]]] = {"riskaware": riskaware_sweep}
