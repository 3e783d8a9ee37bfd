"""Discrete-event scheduling simulator under variable capacity (never imports Dagster or DuckDB).

The names below are loaded on first use (PEP 562), so ``from sim import paths`` or ``import
sim.capacity.trace`` does not pay for polars, numba and the engine: the ``varcap`` CLI starts in a fraction of
a second and imports the simulator only in the commands that simulate.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.api import SimResult, simulate
    from sim.capacity.generators import random_walk
    from sim.capacity.trace import CapacityTrace, read_capacity
    from sim.metrics import METRIC_NAMES
    from sim.problem import Platform

_LAZY = {
    "CapacityTrace": "sim.capacity.trace",
    "METRIC_NAMES": "sim.metrics",
    "Platform": "sim.problem",
    "SimResult": "sim.api",
    "random_walk": "sim.capacity.generators",
    "read_capacity": "sim.capacity.trace",
    "simulate": "sim.api",
}

__all__ = [
    "METRIC_NAMES",
    "CapacityTrace",
    "Platform",
    "SimResult",
    "random_walk",
    "read_capacity",
    "simulate",
]


def __getattr__(name: str) -> Any:
    """Import the module defining ``name`` on first access. Unknown names raise AttributeError."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sim' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
