"""Public spot-instance availability traces as capacity.

The traces are skypilot-org/spot-traces' AWS 16-node V100 availability traces (NSDI'24 "Can't Be Late"):
the number of 16 requested ``p3.2xlarge`` spot instances available at each 300 s tick. Three are embedded
in ``data/samples/spot/`` (provenance and licence note there: the repository declares no licence); the
raw assets can fetch the same files from :func:`raw_url` into the raw cache. :func:`load_trace` reads what
the pipeline built — ``core_spot_availability`` exports each trace to :func:`sim.paths.spot_dir`
(``data/sim/inputs/spot/<name>.parquet``, or ``$VARCAP_SPOT_DIR``) — and falls back to the embedded sample
with a note (logged once per trace and process) when nothing was exported (:func:`trace_source`).
:func:`trace_version` (a hash of the values) lets a scenario pin the data it ran on (the ``data`` parameter
of the ``spot`` kind), so a cached run is never reused for other data.

A trace becomes a machines-alive :class:`~sim.capacity.trace.CapacityTrace` on any platform by scaling its
16-node counts to the platform's machines (:func:`spot_steps`); a trace shorter than the horizon
repeats. :func:`matched_walk` gives the thesis random walk (``sim.capacity.generators.random_walk``) with the
trace's mean, change rate and mean step, the synthetic reading the study compares it with.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from sim.paths import samples_dir, spot_dir

log = logging.getLogger(__name__)

REPOSITORY = "skypilot-org/spot-traces"
COMMIT = "221da1ab9bdfe7966da296265d7694d52dc0c5a6"
LICENCE = "none declared by the repository"


@dataclass(frozen=True)
class SpotTrace:
    """One upstream trace: its varcap name, upstream path, nodes requested, tick and upstream sha256."""

    name: str
    path: str
    nodes: int
    gap_s: float
    sha256: str

    @property
    def sample(self) -> str:
        """The embedded sample file, relative to ``data/samples``."""
        return f"spot/{self.name}.parquet"


_DIR = "availability/16-node/aws-08-27-2023"
TRACES: dict[str, SpotTrace] = {
    t.name: t
    for t in (
        SpotTrace(
            "us-east-2b_v100_16",
            f"{_DIR}/us-east-2b_v100_1.json",
            16,
            300.0,
            "fa1f117fd25696aa36250d73f4a47954a281c04243cadbe47074b9ae4a70659f",
        ),
        SpotTrace(
            "us-west-2a_v100_16",
            f"{_DIR}/us-west-2a_v100_1.json",
            16,
            300.0,
            "0aae822d720585aa435b6a04248d2bd21ec1cdaab112e6cbfb23b12f5f664078",
        ),
        SpotTrace(
            "us-west-2c_v100_16",
            f"{_DIR}/us-west-2c_v100_1.json",
            16,
            300.0,
            "0a540de491d1e1764c1e913ecef04e0475717acb328cf1a8d601948cac138c83",
        ),
    )
}
#: short names: the zone alone (``us-west-2a``) names its 16-node V100 trace
ALIASES = {n.split("_")[0]: n for n in TRACES}


def resolve(name: str) -> SpotTrace:
    """The trace called ``name`` (full name or zone). ValueError listing the traces otherwise."""
    t = TRACES.get(ALIASES.get(name, name))
    if t is None:
        raise ValueError(f"unknown spot trace {name!r}; known: {', '.join([*ALIASES, *TRACES])}")
    return t


def raw_url(trace: SpotTrace, commit: str = COMMIT) -> str:
    """The upstream JSON on raw.githubusercontent.com, pinned to ``commit``."""
    return f"https://raw.githubusercontent.com/{REPOSITORY}/{commit}/{trace.path}"


def parse_json(data: dict[str, Any], where: str) -> tuple[np.ndarray, float]:
    """``(available per tick, gap seconds)`` from an upstream JSON document. ValueError naming ``where``
    and the field if it is not ``{"metadata": {"gap_seconds": > 0}, "data": [ints]}`` (values outside the
    pool are the reader's to reject row by row)."""
    try:
        gap = float(data["metadata"]["gap_seconds"])
        vals = np.asarray(data["data"])
    except (KeyError, TypeError) as e:
        raise ValueError(f"{where}: expected metadata.gap_seconds and data ({e!r} missing)") from e
    if not gap > 0:
        raise ValueError(f"{where}: metadata.gap_seconds must be > 0, got {gap}")
    if vals.ndim != 1 or vals.size == 0 or not np.issubdtype(vals.dtype, np.integer):
        raise ValueError(f"{where}: data must be a non-empty list of integers")
    return vals.astype(np.int64), gap


def trace_source(name: str) -> tuple[Path, bool]:
    """The file trace ``name`` is read from and whether it is the pipeline's export
    (``<spot_dir>/<name>.parquet``) rather than the embedded sample (under ``$VARCAP_HOME``, else the
    repository's). ValueError if neither exists."""
    t = resolve(name)
    exported = spot_dir() / f"{t.name}.parquet"
    if exported.is_file():
        return exported, True
    path = samples_dir() / t.sample
    if not path.exists():  # a $VARCAP_HOME without samples: the ones committed beside this package
        path = Path(__file__).resolve().parents[2] / "data" / "samples" / t.sample
    if not path.exists():
        raise ValueError(f"spot trace {t.name!r}: neither {exported} nor {path} exists")
    return path, False


_NOTED: set[str] = set()


def load_trace(name: str) -> np.ndarray:
    """Instances available per tick of trace ``name`` (:func:`trace_source`: the pipeline's export, else
    the embedded sample, noted once per trace and process). ValueError for a value outside the pool.

    Read by a one-thread DuckDB connection closed after the read, not by polars: the study catalogue calls
    this when Dagster's definitions load, and a polars thread pool started there deadlocks the processes
    Dagster's forkserver forks from it (pyarrow's reader would import pandas into every definitions load)."""
    t = resolve(name)
    path, exported = trace_source(name)
    if not exported and t.name not in _NOTED:
        _NOTED.add(t.name)
        log.info(
            "spot trace %s: reading the embedded sample %s (nothing exported to %s; materialize "
            "core_spot_availability to read the pipeline's data)",
            t.name,
            path,
            spot_dir(),
        )
    st = path.stat()
    vals = _read_available(str(path), st.st_mtime_ns, st.st_size).copy()
    if vals.size == 0 or vals.min() < 0 or vals.max() > t.nodes:
        raise ValueError(f"{path}: available must lie in [0, {t.nodes}] on every tick")
    return vals


def trace_version(name: str) -> str:
    """12 hex digits of the sha256 of trace ``name``'s values as read (the same for a sample and an export
    holding the same numbers)."""
    return hashlib.sha256(load_trace(name).astype("<i8").tobytes()).hexdigest()[:12]


@lru_cache(maxsize=32)
def _read_available(path: str, mtime_ns: int, size: int) -> np.ndarray:
    """The file's ``available`` column in tick order, read once per file version (the spot-real catalogue
    asks for each trace ~300 times when the definitions load)."""
    import duckdb

    with duckdb.connect(config={"threads": 1}) as con:
        cols = con.execute("select available from read_parquet(?) order by tick", [path]).fetchnumpy()
    return np.asarray(cols["available"]).astype(np.int64)


def scale(available: np.ndarray, nodes: int, machines: int) -> np.ndarray:
    """Machines alive on a platform of ``machines`` for ``available`` of ``nodes`` (rounded to nearest)."""
    return np.rint(np.asarray(available, float) * machines / nodes).astype(np.int64)


def spot_steps(
    name: str, machines: int, horizon_s: float, offset_ticks: int = 0
) -> tuple[np.ndarray, np.ndarray, SpotTrace]:
    """Trace ``name`` from tick ``offset_ticks`` on, scaled to ``machines``, repeated to cover
    ``horizon_s``: (time_s, machines alive) one point per tick, and the trace (the capacity kind ``spot``
    makes them a :class:`~sim.capacity.trace.CapacityTrace` with ``period_s`` = the tick)."""
    t = resolve(name)
    vals = load_trace(name)
    if not 0 <= offset_ticks < vals.size:
        raise ValueError(f"spot trace {t.name!r}: offset_ticks must lie in [0, {vals.size})")
    vals = np.roll(vals, -offset_ticks)
    n = int(np.ceil(horizon_s / t.gap_s))
    return np.arange(n) * t.gap_s, scale(np.resize(vals, n), t.nodes, machines), t


def trace_stats(name: str) -> dict[str, float]:
    """Mean fraction available, changes per hour, mean |step| (fraction) and share of ticks at zero."""
    t = resolve(name)
    v = load_trace(name).astype(float) / t.nodes
    d = np.diff(v)
    ch = d[d != 0]
    return {
        "mean": float(v.mean()),
        "changes_per_hour": float(ch.size / (v.size * t.gap_s / 3600.0)),
        "step": float(np.abs(ch).mean()) if ch.size else 0.0,
        "zero_share": float((v == 0).mean()),
        "min": float(v.min()),
        "max": float(v.max()),
    }


WALK_READINGS = ("rate", "shape")


def matched_walk(name: str, seed: int = 0, reading: str = "rate") -> dict[str, Any]:
    """The random-walk capacity dict matched to trace ``name``. ``rate``: its mean and change rate, the
    thesis walk's step (0.15) and range (0.6) otherwise (the spot-trace comparison); ``shape``: also its mean
    |step| and the widest range symmetric about the mean that fits [0, 1] (the walk is symmetric).
    ValueError for another reading."""
    if reading not in WALK_READINGS:
        raise ValueError(f"matched walk reading must be one of {WALK_READINGS}, got {reading!r}")
    s = trace_stats(name)
    out: dict[str, Any] = {
        "kind": "random_walk",
        "changes_per_hour": round(s["changes_per_hour"], 4),
        "mean": round(s["mean"], 4),
        "seed": seed,
    }
    if reading == "shape":
        out["step"] = round(s["step"], 4)
        out["dynamic_range"] = round(2.0 * min(s["mean"], 1.0 - s["mean"]), 4)
    return out
