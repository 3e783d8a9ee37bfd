"""Dagster resources: the DuckDB warehouse (key ``duckdb``) and the download client (key ``downloader``)."""

from __future__ import annotations

import dagster as dg
from dagster_duckdb import DuckDBResource

from assets.download import Downloader
from sim import paths


class DownloaderResource(dg.ConfigurableResource):
    """Configures :class:`assets.download.Downloader` (streaming, retries, Range resume, sha256)."""

    cache_dir: str = ""
    retries: int = 5
    backoff_s: float = 0.5
    timeout_s: float = 120.0
    connect_timeout_s: float = 5.0
    deadline_s: float = 600.0  # no retry starts after this many seconds on one file

    def client(self) -> Downloader:
        return Downloader(
            self.cache_dir or paths.raw_cache_dir(),
            retries=self.retries,
            backoff_s=self.backoff_s,
            timeout_s=self.timeout_s,
            connect_timeout_s=self.connect_timeout_s,
            deadline_s=self.deadline_s,
        )


def warehouse_resource() -> DuckDBResource:
    """DuckDB resource for ``$VARCAP_WAREHOUSE`` (default ``data/warehouse.duckdb``)."""
    path = paths.warehouse_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return DuckDBResource(database=str(path))


def warehouse_run_config() -> dict[str, object]:
    """Run config pointing the ``duckdb`` resource at the current ``$VARCAP_WAREHOUSE`` (for a job of a
    ``Definitions`` whose resources were built earlier, e.g. at import, under another ``VARCAP_HOME``)."""
    return {"duckdb": {"config": {"database": warehouse_resource().database}}}


def default_resources() -> dict[str, object]:
    return {"duckdb": warehouse_resource(), "downloader": DownloaderResource()}
