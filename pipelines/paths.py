"""Filesystem locations, overridable by environment variables.

``VARCAP_HOME`` (default: the repository root) anchors everything; ``VARCAP_WAREHOUSE`` overrides the
DuckDB file (default ``data/warehouse.duckdb``); ``VARCAP_RAW_CACHE`` the immutable download cache
(default ``data/raw``).
"""

from __future__ import annotations

import os
from pathlib import Path

from sim.paths import home, warehouse_path

__all__ = ["home", "warehouse_path", "data_dir", "samples_dir", "raw_cache_dir", "dagster_home"]


def data_dir() -> Path:
    return home() / "data"


def samples_dir() -> Path:
    return data_dir() / "samples"


def raw_cache_dir() -> Path:
    env = os.environ.get("VARCAP_RAW_CACHE")
    return Path(env).resolve() if env else data_dir() / "raw"


def dagster_home() -> Path:
    env = os.environ.get("DAGSTER_HOME")
    return Path(env).resolve() if env else home() / ".dagster_home"
