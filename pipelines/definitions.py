"""The one Dagster ``Definitions`` of varcap (``dagster dev -m pipelines.definitions``)."""

from __future__ import annotations

import dagster as dg

from assets.capacity import capacity_assets, capacity_checks
from assets.core import core_assets, core_checks
from assets.raw import raw_assets
from pipelines.resources import default_resources

ALL_ASSETS = [*raw_assets, *core_assets, *capacity_assets]
ALL_CHECKS = [*core_checks, *capacity_checks]

ingest_job = dg.define_asset_job(
    "ingest",
    selection=dg.AssetSelection.groups("raw", "core"),
    description="raw -> core: register or download inputs, normalize them into DuckDB",
)

capacity_job = dg.define_asset_job(
    "capacity",
    selection=dg.AssetSelection.groups("capacity", "intervals"),
    description="capacity traces, characterization, machine intervals and survival tables",
)

defs = dg.Definitions(
    assets=ALL_ASSETS,
    asset_checks=ALL_CHECKS,
    jobs=[ingest_job, capacity_job],
    resources=default_resources(),
)
