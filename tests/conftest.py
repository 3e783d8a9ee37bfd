from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.httpserver import FixtureServer

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "data" / "samples"


@pytest.fixture(autouse=True, scope="session")
def _own_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Derived-result caches (``$VARCAP_CACHE``: SARIMAX forecasts…) of this test session only: the tests
    neither read a developer's cache nor write into the checkout."""
    import os

    before = os.environ.get("VARCAP_CACHE")
    os.environ["VARCAP_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if before is None:
        os.environ.pop("VARCAP_CACHE", None)
    else:
        os.environ["VARCAP_CACHE"] = before


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
