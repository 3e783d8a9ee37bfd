"""Discrete-event scheduling simulator under variable capacity (never imports Dagster or DuckDB)."""

from sim.api import SimResult, simulate
from sim.capacity import CapacityTrace, read_capacity
from sim.generators import random_walk
from sim.metrics import METRIC_NAMES
from sim.problem import Platform

__all__ = [
    "CapacityTrace",
    "METRIC_NAMES",
    "Platform",
    "SimResult",
    "random_walk",
    "read_capacity",
    "simulate",
]
