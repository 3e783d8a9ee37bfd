"""Where the project lives and where its warehouse is — the one definition every layer uses.

``VARCAP_HOME`` (default: the repository root) anchors everything; ``VARCAP_WAREHOUSE`` overrides the
DuckDB file (default ``<home>/data/warehouse.duckdb``). No Dagster here, so ``sim`` and ``analysis`` can
use it too.
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
