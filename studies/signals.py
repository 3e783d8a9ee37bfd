"""Hourly signals a scenario reads (generic: no paper or chapter is named here).

* :data:`GRIDS` — the observed grid months the sweep inputs hold (``out_sim_inputs`` exports each as the
  series ``<grid>:<source>:<YYYY-MM>``), the one list every study, asset and chart of a grid month reads;
* :data:`SIGNAL_INPUTS` — per kind of signal, the exported input file and value column holding it;
* :func:`scenario_signal` — the hourly signal of a signal kind's capacity spec (a ``carbon_budget``);
* :func:`signal_spec` / :func:`scenario_carbon` — the carbon series a run is accounted against
  (``sim.simulate(..., carbon=…)``): its capacity's signal if its kind reads one, else the series its policy
  settings name (``grid`` and ``signal``, as a policy that reads a forecast of it takes them); None
  otherwise (energy is still accounted, carbon is NaN).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np
import polars as pl

from sim.capacity.kinds import get_kind
from sim.capacity.trace import CapacitySpec, month_bounds, to_hourly
from sim.energy import CarbonSignal

#: grid → ``<source>:<YYYY-MM>``: the month of each grid's carbon intensity the sweep inputs hold (CAISO and
#: ERCOT from Electricity Maps, April 2024; MISO from EIA-930, April 2022, the month the sample holds)
GRIDS: dict[str, str] = {
    "CAISO": "electricitymaps:2024-04",
    "ERCOT": "electricitymaps:2024-04",
    "MISO": "eia930:2022-04",
}


def grid_series(grids: dict[str, str] | None = None) -> list[str]:
    """``<grid>:<source>:<YYYY-MM>`` of every grid month of ``grids`` (default :data:`GRIDS`)."""
    return [f"{g}:{s}" for g, s in (GRIDS if grids is None else grids).items()]


#: the exported input (``data/sim/inputs``) holding each kind of hourly signal a scenario reads: file and
#: value column; a scenario's series is ``<grid>:<signal>`` of its capacity's parameters
SIGNAL_INPUTS = {"carbon": ("grid_carbon.parquet", "gco2_per_kwh")}


class _Run(Protocol):
    """What the carbon series of a run is read from: a scenario's parsed capacity spec and policy
    settings."""

    @property
    def capacity_spec(self) -> CapacitySpec: ...

    settings: dict[str, str]


def signal_input(spec: CapacitySpec) -> tuple[str, str]:
    """The exported input file and value column of a signal kind's spec. ValueError for a signal no
    exported input holds."""
    signal = get_kind(spec.kind).signal
    if signal not in SIGNAL_INPUTS:
        raise ValueError(
            f"capacity kind {spec.kind!r} is built from a {signal} signal; scenarios read "
            f"{', '.join(SIGNAL_INPUTS)} signals (exported by out_sim_inputs)"
        )
    return SIGNAL_INPUTS[signal]


def scenario_signal(spec: CapacitySpec, inputs: Path) -> np.ndarray:
    """The hourly signal of a signal kind's spec: its series ``<grid>:<signal>`` of the exported input,
    over the month ``signal`` ends with (``source:YYYY-MM``), hour by hour by the one gap rule of
    :func:`sim.capacity.trace.to_hourly`. FileNotFoundError for a missing input, ValueError for a missing series."""
    fname, column = signal_input(spec)
    f = inputs / fname
    if not f.is_file():
        raise FileNotFoundError(f"{f}: sweep input missing; materialize out_sim_inputs")
    series = f"{spec.get('grid')}:{spec.get('signal')}"
    sig = pl.read_parquet(f).filter(pl.col("series") == series)
    if sig.height == 0:
        raise ValueError(f"{f}: no {get_kind(spec.kind).signal} series {series}")
    start, end = month_bounds(str(spec.get("signal")).rpartition(":")[2])
    return to_hourly(sig["ts_utc"], sig[column], start, end)


def signal_spec(run: _Run) -> CapacitySpec | None:
    """The carbon series a scenario's run is accounted against (a carbon_budget spec naming it), or None."""
    spec = run.capacity_spec
    if get_kind(spec.kind).signal == "carbon":
        return spec
    if run.settings.get("grid") and run.settings.get("signal"):
        return CapacitySpec("carbon_budget", {"grid": run.settings["grid"], "signal": run.settings["signal"]})
    return None


def scenario_carbon(run: _Run, inputs: Path) -> CarbonSignal | None:
    """The hourly intensity of :func:`signal_spec` from the exported sweep inputs (None: no series).
    Raises like :func:`scenario_signal`."""
    spec = signal_spec(run)
    if spec is None:
        return None
    return CarbonSignal(scenario_signal(spec, inputs), 0, f"{spec.get('grid')}:{spec.get('signal')}")
