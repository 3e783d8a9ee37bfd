"""Catalogue of raw datasets: the embedded sample files and the upstream endpoints for remote mode.

Each :class:`Dataset` names its sample files (under ``data/samples/``) and how to list its remote files
from a parameter dict (asset config). URL templates are overridable through that dict, so a mirror or a
newer Electricity Maps release folder needs no code change. This module is pure (no Dagster).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from assets.download import Expect

GOOGLE_2011_TASK_EVENTS_COLUMNS = (
    "timestamp_us",
    "missing_info",
    "job_id",
    "task_index",
    "machine_id",
    "event_type",
    "user",
    "scheduling_class",
    "priority",
    "cpu_request",
    "memory_request",
    "disk_request",
    "different_machine",
)

AZURE_V2_VMTABLE_COLUMNS = (
    "vm_id",
    "subscription_id",
    "deployment_id",
    "timestamp_vm_created",
    "timestamp_vm_deleted",
    "max_cpu",
    "avg_cpu",
    "p95_max_cpu",
    "vm_category",
    "vm_virtual_core_count_bucket",
    "vm_memory_gb_bucket",
)

#: Electricity Maps zone id -> varcap grid name.
EMAPS_ZONE_TO_GRID = {
    "US-CAL-CISO": "CAISO",
    "US-TEX-ERCO": "ERCOT",
    "US-MIDW-MISO": "MISO",
    "US-CENT-SWPP": "SPP",
    "US-MIDA-PJM": "PJM",
    "US-NY-NYIS": "NYISO",
    "DE-LU": "DE-LU",
    "GB": "GB",
}

#: EIA-930 balancing-authority (respondent) code -> varcap grid name.
EIA_BA_TO_GRID = {
    "CISO": "CAISO",
    "ERCO": "ERCOT",
    "MISO": "MISO",
    "SWPP": "SPP",
    "PJM": "PJM",
    "NYIS": "NYISO",
}


@dataclass(frozen=True)
class RemoteFile:
    """One upstream file: where to get it, its name in the cache and what its body must look like."""

    url: str
    dest: str
    expect: Expect = "any"
    has_header: bool = True


@dataclass(frozen=True)
class Dataset:
    """A raw dataset: sample files (paths relative to ``data/samples``) and a remote file lister."""

    key: str
    description: str
    sample_files: tuple[str, ...]
    has_header: bool = True
    columns: tuple[str, ...] | None = None
    remote: Callable[[dict[str, Any]], list[RemoteFile]] | None = None
    needs_env: tuple[str, ...] = field(default_factory=tuple)


# --------------------------------------------------------------------------------------- remote listers
def _gaia_remote(p: dict[str, Any]) -> list[RemoteFile]:
    base = p.get(
        "base_url",
        "https://raw.githubusercontent.com/umassos/GAIA/fa4d11def9e1d0efef27b1e8941a8fae432d3325/src/cluster_traces",
    )
    names = p.get("traces", ["azure-100k", "pai-100k", "mustang-trace-2015-100k"])
    return [RemoteFile(f"{base}/{n}.csv", f"gaia/{n}.csv", "csv") for n in names]


def _vmtable_remote(p: dict[str, Any]) -> list[RemoteFile]:
    url = p.get(
        "url",
        "https://azurepublicdatasettraces.blob.core.windows.net/azurepublicdatasetv2/trace_data/vmtable/vmtable.csv.gz",
    )
    return [RemoteFile(url, "azure_v2/vmtable.csv.gz", "gzip", has_header=False)]


def _borg2011_remote(p: dict[str, Any]) -> list[RemoteFile]:
    base = p.get("base_url", "https://storage.googleapis.com/clusterdata-2011-2/task_events")
    shards = p.get("shards", [0, 1, 2, 3, 4, 5])
    return [
        RemoteFile(
            f"{base}/part-{s:05d}-of-00500.csv.gz",
            f"google2011/task_events_part-{s:05d}-of-00500.csv.gz",
            "gzip",
            has_header=False,
        )
        for s in shards
    ]


def _borg2019_remote(p: dict[str, Any]) -> list[RemoteFile]:
    base = p.get("base_url", "https://storage.googleapis.com/clusterdata_2019_{cell}")
    cell = p.get("cell", "a")
    tables = p.get("tables", ["instance_events", "collection_events"])
    shards = p.get("shards", [0])
    return [
        RemoteFile(
            f"{base.format(cell=cell)}/{t}-{s:012d}.json.gz",
            f"google2019/{cell}/{t}-{s:012d}.json.gz",
            "gzip",
        )
        for t in tables
        for s in shards
    ]


def _emaps_remote(p: dict[str, Any]) -> list[RemoteFile]:
    base = p.get("base_url", "https://data.electricitymaps.com/{release}")
    release = p.get("release", "2025-01-27")
    zones = p.get("zones", ["US-CAL-CISO", "US-TEX-ERCO", "US-MIDW-MISO", "US-CENT-SWPP"])
    years = p.get("years", [2024])
    return [
        RemoteFile(
            f"{base.format(release=release)}/{z}_{y}_hourly.csv",
            f"electricitymaps/{release}/{z}_{y}_hourly.csv",
            "csv",
        )
        for z in zones
        for y in years
    ]


EIA_API_URL = "https://api.eia.gov/v2/electricity/rto/fuel-type-data/data/"


def _eia_remote(p: dict[str, Any]) -> list[RemoteFile]:
    """EIA API v2 pages. The key comes from ``p['api_key']`` (the asset fills it from ``EIA_API_KEY``)."""
    key = p.get("api_key")
    if not key:
        raise ValueError(
            f"{EIA_API_URL}: remote EIA fuel mix needs an API key; set EIA_API_KEY "
            "(free at https://www.eia.gov/opendata/register.php)"
        )
    url = p.get("url", EIA_API_URL)
    bas = p.get("respondents", ["CISO", "ERCO", "MISO", "SWPP"])
    start, end = p.get("start", "2024-01-01T00"), p.get("end", "2024-12-31T23")
    page_rows = int(p.get("page_rows", 5000))
    pages = int(p.get("max_pages", 60))
    facets = "".join(f"&facets[respondent][]={b}" for b in bas)
    out = []
    for i in range(pages):
        q = (
            f"{url}?api_key={key}&frequency=hourly&data[0]=value{facets}&start={start}&end={end}"
            f"&sort[0][column]=period&sort[0][direction]=asc&offset={i * page_rows}&length={page_rows}"
        )
        tag = "_".join(bas)
        out.append(RemoteFile(q, f"eia930_api/{tag}_{start}_{end}/page_{i:05d}.json", "json"))
    return out


# ------------------------------------------------------------------------------------------- catalogue
DATASETS: dict[str, Dataset] = {
    d.key: d
    for d in [
        Dataset(
            "gaia_traces",
            "GAIA job traces (Azure-100k, Alibaba PAI-100k, LANL Mustang-100k): arrival_time h, length h, cpus",
            ("gaia/azure-100k.parquet", "gaia/pai-100k.parquet", "gaia/mustang-trace-2015-100k.csv.gz"),
            remote=_gaia_remote,
        ),
        Dataset(
            "azure_vmtable",
            "Azure Public Dataset V2 vmtable (sample: the 500 VMs alive for the whole month)",
            ("azure_v2/vmtable_sample_500_fullmonth_vms.parquet",),
            remote=_vmtable_remote,
        ),
        Dataset(
            "borg2011_task_events",
            "Google clusterdata-2011-2 task_events shards (headerless, 13 columns)",
            tuple(f"google2011/task_events_part-{s:05d}-of-00500.parquet" for s in (0, 1, 2, 3, 10)),
            has_header=False,
            columns=GOOGLE_2011_TASK_EVENTS_COLUMNS,
            remote=_borg2011_remote,
        ),
        Dataset(
            "borg2019_events",
            "Google clusterdata-2019 instance/collection events (sample: 99-row Kaggle-style slice)",
            ("google2019/borg_traces_data_kaggle_slice.csv.gz",),
            remote=_borg2019_remote,
        ),
        Dataset(
            "electricitymaps_hourly",
            "Electricity Maps hourly carbon intensity per zone-year",
            tuple(
                f"electricitymaps/{z}_{y}_hourly.parquet"
                for z, ys in [
                    ("US-CAL-CISO", (2021, 2022, 2023, 2024)),
                    ("US-TEX-ERCO", (2021, 2022, 2023, 2024)),
                    ("US-MIDA-PJM", (2024,)),
                    ("US-NY-NYIS", (2024,)),
                    ("DE-LU", (2024,)),
                    ("GB", (2024,)),
                ]
                for y in ys
            ),
            remote=_emaps_remote,
        ),
        Dataset(
            "eia930_fuelmix",
            "EIA-930 hourly net generation by fuel (sample: 2022 files with published avg_CI)",
            tuple(
                f"eia930/EIA930_{ba}_2022_hourly_fuelmix_avgCI.parquet"
                for ba in ("CISO", "ERCO", "MISO", "PJM", "NYIS")
            ),
            remote=_eia_remote,
            needs_env=("EIA_API_KEY",),
        ),
        Dataset(
            "watttime_moer",
            "WattTime CAISO_NORTH 5-minute signal, June-July 2023 (unit not stated upstream)",
            ("watttime/WattTime_CAISO_NORTH_5min_2023-06-08_to_2023-07-08.parquet",),
        ),
        Dataset(
            "power_prices",
            "Day-ahead hourly prices 2024: ERCOT HB_HUBAVG SPP, CAISO TH_NP15_GEN-APND LMP",
            (
                "prices/ERCOT_HB_HUBAVG_DAM_SPP_2024_hourly.parquet",
                "prices/CAISO_TH_NP15_GEN-APND_DAM_LMP_2024_hourly.parquet",
            ),
        ),
    ]
}
