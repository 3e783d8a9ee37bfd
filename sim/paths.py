"""Where the project lives and where its warehouse is — the one definition every layer uses.

``VARCAP_HOME`` (default: the repository root) anchors everything; ``VARCAP_WAREHOUSE`` overrides the
DuckDB file (default ``<home>/data/warehouse.duckdb``); ``VARCAP_RAW_CACHE`` the immutable download cache
(default ``data/raw``); ``VARCAP_SPOT_DIR`` the exported spot traces (default ``data/sim/inputs/spot``); ``VARCAP_CACHE`` derived
results kept between processes (default ``data/cache``); ``DAGSTER_HOME`` the Dagster instance (default ``.dagster_home``). The bottom of
the import graph: every package may use it, it imports nothing of the project.
"""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """Repository root (or ``$VARCAP_HOME``)."""
    env = os.environ.get("VARCAP_HOME")
    return Path(env).resolve() if env else Path(__file__).resolve().parents[1]


def warehouse_path() -> Path:
    """``$VARCAP_WAREHOUSE`` or ``<home>/data/warehouse.duckdb``."""
    env = os.environ.get("VARCAP_WAREHOUSE")
    return Path(env).resolve() if env else home() / "data" / "warehouse.duckdb"


def data_dir() -> Path:
    """``<home>/data``."""
    return home() / "data"


def samples_dir() -> Path:
    """Committed real samples, ``<home>/data/samples``."""
    return data_dir() / "samples"


def raw_cache_dir() -> Path:
    """``$VARCAP_RAW_CACHE`` or ``<home>/data/raw``."""
    env = os.environ.get("VARCAP_RAW_CACHE")
    return Path(env).resolve() if env else data_dir() / "raw"


def cache_dir() -> Path:
    """``$VARCAP_CACHE`` or ``<home>/data/cache``: derived results that are costly to recompute and keyed
    by their inputs and code (safe to delete)."""
    env = os.environ.get("VARCAP_CACHE")
    return Path(env).resolve() if env else data_dir() / "cache"


def dagster_home() -> Path:
    """``$DAGSTER_HOME`` or ``<home>/.dagster_home``."""
    env = os.environ.get("DAGSTER_HOME")
    return Path(env).resolve() if env else home() / ".dagster_home"


def spot_dir() -> Path:
    """``$VARCAP_SPOT_DIR`` or ``<home>/data/sim/inputs/spot``: the spot availability traces the pipeline
    exported from ``core_spot_availability`` (``<trace>.parquet``: ``tick, available``), which the ``spot``
    capacity kind reads before the embedded sample (:func:`sim.capacity.spot.trace_source`)."""
    env = os.environ.get("VARCAP_SPOT_DIR")
    return Path(env).resolve() if env else data_dir() / "sim" / "inputs" / "spot"
