"""Catalogue of raw datasets: the embedded sample files and the upstream endpoints for remote mode.

Each :class:`~assets.dataset.Dataset` names its sample files (under ``data/samples/``) and how to list its
remote files from a parameter dict (asset config). URL templates are overridable through that dict, so a
mirror or a newer Electricity Maps release folder needs no code change. The workload and spot datasets are
declared here; every grid feed's dataset is declared by its own module (:mod:`assets.grid`) and joins
:data:`DATASETS` from the registry. This module is pure (no Dagster).
"""

from __future__ import annotations

from typing import Any

from assets.dataset import Dataset, RemoteFile, fill, integer, integers, names, path_part
from assets.grid import GRID_SOURCES

__all__ = [
    "DATASETS",
    "GOOGLE_2011_TASK_EVENTS_COLUMNS",
    "Dataset",
    "RemoteFile",
    "fill",
    "integer",
    "integers",
    "names",
    "path_part",
]

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


# --------------------------------------------------------------------------------------- remote listers
def _gaia_remote(p: dict[str, Any]) -> list[RemoteFile]:
    base = p.get(
        "base_url",
        "https://raw.githubusercontent.com/umassos/GAIA/fa4d11def9e1d0efef27b1e8941a8fae432d3325/src/cluster_traces",
    )
    traces = names(p, "traces", ["azure-100k", "pai-100k", "mustang-trace-2015-100k"])
    return [RemoteFile(f"{base}/{n}.csv", f"gaia/{n}.csv", "csv") for n in traces]


def _vmtable_remote(p: dict[str, Any]) -> list[RemoteFile]:
    url = p.get(
        "url",
        "https://azurepublicdatasettraces.blob.core.windows.net/azurepublicdatasetv2/trace_data/vmtable/vmtable.csv.gz",
    )
    return [RemoteFile(url, "azure_v2/vmtable.csv.gz", "gzip", has_header=False)]


def _borg2011_remote(p: dict[str, Any]) -> list[RemoteFile]:
    base = p.get("base_url", "https://storage.googleapis.com/clusterdata-2011-2/task_events")
    shards = integers(p, "shards", [0, 1, 2, 3, 4, 5], 0, 499)
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
    cell = path_part("cell", p.get("cell", "a"))
    tables = names(p, "tables", ["instance_events", "collection_events"])
    shards = integers(p, "shards", [0])
    return [
        RemoteFile(
            f"{fill(base, 'base_url', cell=cell)}/{t}-{s:012d}.json.gz",
            f"google2019/{cell}/{t}-{s:012d}.json.gz",
            "gzip",
        )
        for t in tables
        for s in shards
    ]


def _spot_remote(p: dict[str, Any]) -> list[RemoteFile]:
    """skypilot-org/spot-traces availability JSONs on raw.githubusercontent.com, pinned to a commit."""
    from sim.capacity.spot import COMMIT, REPOSITORY, TRACES

    base = p.get("base_url", f"https://raw.githubusercontent.com/{REPOSITORY}/{{commit}}")
    commit = path_part("commit", p.get("commit", COMMIT))
    traces = names(p, "traces", list(TRACES))
    unknown = [t for t in traces if t not in TRACES]
    if unknown:
        raise ValueError(
            f"params_json: traces: unknown spot trace {unknown[0]!r}; known: {', '.join(TRACES)}"
        )
    return [
        RemoteFile(
            f"{fill(base, 'base_url', commit=commit)}/{TRACES[t].path}", f"spot/{commit}/{t}.json", "json"
        )
        for t in traces
    ]


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
            max_bytes=8 << 30,
        ),
        Dataset(
            "borg2011_task_events",
            "Google clusterdata-2011-2 task_events shards (headerless, 13 columns)",
            tuple(f"google2011/task_events_part-{s:05d}-of-00500.parquet" for s in (0, 1, 2, 3, 10)),
            has_header=False,
            columns=GOOGLE_2011_TASK_EVENTS_COLUMNS,
            remote=_borg2011_remote,
            max_bytes=4 << 30,
        ),
        Dataset(
            "borg2019_events",
            "Google clusterdata-2019 instance/collection events (sample: 99-row Kaggle-style slice)",
            ("google2019/borg_traces_data_kaggle_slice.csv.gz",),
            remote=_borg2019_remote,
            max_bytes=16 << 30,
        ),
        Dataset(
            "spot_availability",
            "AWS spot availability, 16-node V100 pools, 300 s ticks (skypilot-org/spot-traces; no licence "
            "declared)",
            (
                "spot/us-east-2b_v100_16.parquet",
                "spot/us-west-2a_v100_16.parquet",
                "spot/us-west-2c_v100_16.parquet",
            ),
            remote=_spot_remote,
            max_bytes=64 << 20,
        ),
        # the grid feeds, each declared by its module (assets/grid/<source>.py)
        *(g.dataset for g in GRID_SOURCES.values()),
    ]
}
