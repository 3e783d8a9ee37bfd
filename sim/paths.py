"""Default locations used by simulator tools (no Dagster): mirrors ``pipelines.paths``."""

from __future__ import annotations

import os
from pathlib import Path


def warehouse_path() -> Path:
    env = os.environ.get("VARCAP_WAREHOUSE")
    root = Path(os.environ.get("VARCAP_HOME", Path(__file__).resolve().parents[1]))
    return Path(env).resolve() if env else root / "data" / "warehouse.duckdb"
