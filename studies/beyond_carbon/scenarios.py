"""The beyond_carbon chapter's studies: carbon-aware deferral with as-of forecasts (the carbon signal every
run is accounted against is generic: :mod:`studies.signals`).

* ``carbon-defer`` (:func:`carbon_defer`) — grids × job length × slack × forecast method, ``defer`` on a
  fixed platform that every job fits (capacity constant at 100 %, so the saving is the deferral's alone),
  against ``ff`` on the same jobs. The sweep inputs hold each grid's month only, so the first
  ``WARMUP_DAYS`` are the forecasts' history and the metrics start after them.
* ``carbon-defer-quick`` (:func:`carbon_defer_quick`) — the chapter's quick profile, simulated by ``varcap
  run``: {CAISO, ERCOT, MISO} × 4 h jobs × slack 6 × the four methods × seeds {0, 1, 2} (36 runs, the
  full study's largest savings; three seeds give each grid × method a 95 % interval).
* ``carbon-ias-forecast`` (:func:`carbon_ias_forecast`) — the rolling-origin backtest of ``ias-forecast``
  (:mod:`sim.policies.ias_forecast`: every decision reads the forecast issued at the start of its hour,
  refitted on trailing data only) against ``ias`` (its survival model fitted on the whole trace, the
  thesis' reading, and on trailing data) and ``ff`` on the thesis' observed-grid platform (azure, constant
  carbon budget, 30 days; the first ``WARMUP_DAYS`` are history and left out of the metrics):
  {CAISO, ERCOT, MISO} × {ff, ias, ias trailing, ias-forecast × {oracle, persist24, profile7d, sarimax},
  ias-forecast persist24 trusting every forecast (confidence 0), ias-forecast persist24 falling back on the
  trailing survival model (nothing of the future at all)} × seeds {0, 1}; its quick profile
  (``carbon-ias-forecast-quick``) runs seed 0 of ff, ias and ias-forecast {oracle, persist24}.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from studies.claims import Profile
from studies.scenarios import Scenario
from studies.signals import GRIDS

METHODS = ("oracle", "persist24", "profile7d", "sarimax")
SLACKS = ("2.0", "6.0")
HOURS = ("1", "4")
SEEDS = (0, 1)
QUICK_SEEDS = (0, 1, 2)
WARMUP_DAYS = 7.0
HORIZON_DAYS = 14.0


def _scenario(grid: str, hours: str, policy: str, settings: dict[str, Any], seed: int) -> Scenario:
    return Scenario(
        f"fixed-{hours}",
        {"kind": "constant", "fraction": 1.0},
        policy,
        {"grid": grid, "signal": GRIDS[grid], **settings} if policy == "defer" else settings,
        machines=4,
        cores=24,
        horizon_days=HORIZON_DAYS,
        seed=seed,
        load=0.5,
        warmup_days=WARMUP_DAYS,
    )


def carbon_defer_quick() -> list[Scenario]:
    """``carbon-defer-quick``: the quick profile of ``carbon-defer`` (see the module docstring)."""
    return [
        _scenario(g, "4", "defer", {"method": m, "slack": "6.0"}, seed)
        for g in GRIDS
        for m in METHODS
        for seed in QUICK_SEEDS
    ]


def carbon_defer() -> list[Scenario]:
    """``carbon-defer``: {CAISO, ERCOT, MISO} × {1 h, 4 h} jobs × slack {2, 6} × {oracle, persist24,
    profile7d, sarimax} × seeds {0, 1} (96 defer runs); the ``ff`` baseline is the same jobs undeferred,
    whose carbon_saving_pct is 0 by definition (it is accounted in every defer run itself)."""
    return [
        _scenario(g, h, "defer", {"method": m, "slack": s}, seed)
        for g in GRIDS
        for h in HOURS
        for s in SLACKS
        for m in METHODS
        for seed in SEEDS
    ]


def _grid_run(grid: str, policy: str, settings: dict[str, str], seed: int, days: float) -> Scenario:
    return Scenario(
        "azure",
        {"kind": "carbon_budget", "grid": grid, "signal": GRIDS[grid]},
        policy,
        settings,
        horizon_days=days,
        seed=seed,
        warmup_days=WARMUP_DAYS,
    )


#: the backtest's arms: (policy, settings)
IAS_FORECAST_ARMS: tuple[tuple[str, dict[str, str]], ...] = (
    ("ff", {}),
    ("ias", {}),
    ("ias", {"history": "trailing"}),
    *(("ias-forecast", {"method": m}) for m in METHODS),
    ("ias-forecast", {"method": "persist24", "confidence": "0"}),
    ("ias-forecast", {"method": "persist24", "history": "trailing"}),
)
QUICK_IAS_FORECAST_ARMS = (
    ("ff", {}),
    ("ias", {}),
    ("ias-forecast", {"method": "oracle"}),
    ("ias-forecast", {"method": "persist24"}),
)


def carbon_ias_forecast() -> list[Scenario]:
    """``carbon-ias-forecast``: the backtest (module docstring), 3 grids × 9 arms × 2 seeds = 54 runs."""
    return [_grid_run(g, p, st, seed, 30.0) for g in GRIDS for p, st in IAS_FORECAST_ARMS for seed in SEEDS]


def carbon_ias_forecast_quick() -> list[Scenario]:
    """``carbon-ias-forecast-quick``: 3 grids × 4 arms, seed 0 (12 runs)."""
    return [_grid_run(g, p, st, 0, 30.0) for g in GRIDS for p, st in QUICK_IAS_FORECAST_ARMS]


def _profiled(
    full: Callable[[], list[Scenario]], quick: Callable[[], list[Scenario]]
) -> Callable[[Profile], dict[tuple, Scenario]]:
    """A chapter study's builder: the ``full`` or ``quick`` scenario list of profile ``pr``, keyed by
    (scenario id, seed) (``out_study_scenarios`` reads the key's last item as the replicate)."""

    def build(pr: Profile) -> dict[tuple, Scenario]:
        return {(s.id, s.seed): s for s in (full() if pr.name == "full" else quick())}

    return build


#: the beyond_carbon chapter's studies per profile, listed in :mod:`studies.papers`
STUDY_BUILDERS: dict[str, Callable[[Profile], dict[tuple, Scenario]]] = {
    "carbon-defer": _profiled(carbon_defer, carbon_defer_quick),
    "carbon-ias-forecast": _profiled(carbon_ias_forecast, carbon_ias_forecast_quick),
}
