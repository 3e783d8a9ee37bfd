"""Ingest benchmark: time to normalize every embedded sample, and a full raw -> core materialization.

Usage: ``python -m pipelines.bench`` (prints a table; the target is < 60 s on a 2-core machine).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from assets import normalize as nz
from assets.core import JobsConfig, build_carbon, build_jobs, build_prices
from assets.sources import DATASETS
from sim import paths


def _files(key: str) -> list[nz.RawFile]:
    ds = DATASETS[key]
    return [nz.RawFile(paths.samples_dir() / f, f, ds.has_header, ds.columns) for f in ds.sample_files]


def bench_normalize() -> list[tuple[str, int, float]]:
    rows = []
    t = time.perf_counter()
    jobs, _ = build_jobs(
        _files("gaia_traces"), _files("azure_vmtable"), _files("borg2011_task_events"), JobsConfig()
    )
    rows.append(("core_jobs", jobs.height, time.perf_counter() - t))
    t = time.perf_counter()
    carbon, _ = build_carbon(_files("electricitymaps_hourly"), _files("eia930_fuelmix"), "ipcc_ar5")
    rows.append(("core_grid_carbon (+fuel mix)", carbon.height, time.perf_counter() - t))
    t = time.perf_counter()
    prices, _ = build_prices(_files("power_prices"))
    rows.append(("core_power_price", prices.height, time.perf_counter() - t))
    t = time.perf_counter()
    m, _ = nz.normalize_watttime(_files("watttime_moer")[0])
    rows.append(("core_grid_marginal", m.height, time.perf_counter() - t))
    return rows


def bench_materialize() -> float:
    import dagster as dg
    from dagster_duckdb import DuckDBResource

    from assets.core import core_assets, core_checks
    from assets.raw import raw_assets
    from assets.resources import DownloaderResource

    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        res = dg.materialize(
            [*raw_assets, *core_assets, *core_checks],
            resources={
                "duckdb": DuckDBResource(database=str(Path(d) / "w.duckdb")),
                "downloader": DownloaderResource(cache_dir=str(Path(d) / "raw")),
            },
            run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
        )
        assert res.success
        return time.perf_counter() - t


def main() -> None:
    rows = bench_normalize()
    total = sum(r[2] for r in rows)
    print(f"{'table':32s} {'rows':>10s} {'seconds':>8s}")
    for name, n, s in rows:
        print(f"{name:32s} {n:>10,d} {s:>8.2f}")
    print(f"{'normalize all samples':32s} {sum(r[1] for r in rows):>10,d} {total:>8.2f}   (target < 60 s)")
    print(f"{'materialize raw+core+checks':32s} {'':>10s} {bench_materialize():>8.2f}")


if __name__ == "__main__":
    main()
