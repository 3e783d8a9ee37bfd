from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.httpserver import FixtureServer

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "data" / "samples"


@pytest.fixture
def http_server() -> Iterator[FixtureServer]:
    with FixtureServer() as s:
        yield s


@pytest.fixture
def warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh DuckDB file for this test, also exported as $VARCAP_WAREHOUSE."""
    p = tmp_path / "warehouse.duckdb"
    monkeypatch.setenv("VARCAP_WAREHOUSE", str(p))
    monkeypatch.setenv("VARCAP_RAW_CACHE", str(tmp_path / "raw"))
    monkeypatch.delenv("VARCAP_SOURCE", raising=False)
    return p
