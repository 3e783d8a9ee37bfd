"""Running one scenario and collecting results (the logic behind the sweep assets and ``varcap sweep``).

Files (under ``data/sim``, gitignored):

* ``inputs/`` — workloads and grid signals exported from the warehouse by ``out_sim_inputs``, with
  ``versions.json`` (sha256 per file). Scenario processes read only these, never DuckDB.
* ``runs/<scenario_id>/run.json`` — parameters, metrics, code and input versions, wall time;
  ``runs/<scenario_id>/jobs.parquet`` — the per-job table. Both written atomically (temp + rename).

A scenario whose ``run.json`` has the current code version and the current versions of the inputs it
reads is a cache hit: it is not simulated again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from sim.api import simulate
from sim.metrics import METRIC_NAMES
from sim.paths import data_dir, home
from studies.scenarios import Scenario, build_capacity, build_jobs, platform_size, workload_needs

_CODE_ROOTS = ("sim", "studies/scenarios.py", "studies/sweep.py")


def sim_dir() -> Path:
    return data_dir() / "sim"


def inputs_dir() -> Path:
    return sim_dir() / "inputs"


def runs_dir() -> Path:
    return sim_dir() / "runs"


@functools.cache
def code_version() -> str:
    """Hash of the simulator package and the scenario catalogue sources (changes when either does)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for r in _CODE_ROOTS:
        p = root / r
        files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
        for f in files:
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:12]


def input_versions(inputs: Path) -> dict[str, str]:
    f = inputs / "versions.json"
    return json.loads(f.read_text()) if f.is_file() else {}


def input_files(sc: Scenario) -> list[str]:
    """The exported input files ``sc`` reads (empty if it is generated from its parameters alone)."""
    needed = [n for n in (workload_needs(sc.workload),) if n]
    if sc.capacity["kind"] == "carbon_budget":
        needed.append("grid_carbon.parquet")
    return needed


def needs_inputs(sc: Scenario) -> bool:
    """Whether ``sc`` reads exported warehouse inputs."""
    return bool(input_files(sc))


def scenario_inputs_version(sc: Scenario, inputs: Path) -> str:
    """Version of the input files ``sc`` reads (``none`` if it reads none). FileNotFoundError if missing."""
    needed = input_files(sc)
    if not needed:
        return "none"
    v = input_versions(inputs)
    missing = [n for n in needed if n not in v]
    if missing:
        raise FileNotFoundError(f"{inputs}: sweep inputs {missing} missing; materialize out_sim_inputs")
    return hashlib.sha256("".join(v[n] for n in needed).encode()).hexdigest()[:12]


def _cached_row(d: Path, cv: str, iv: str) -> dict[str, Any] | None:
    """The ``run.json`` row in ``d`` if it was computed with code version ``cv`` and inputs ``iv``."""
    try:
        row = json.loads((d / "run.json").read_text())
    except (OSError, ValueError):
        return None
    ok = (d / "jobs.parquet").is_file() and row.get("code_version") == cv and row.get("inputs_version") == iv
    return row if ok else None


def cached_result(sc: Scenario, inputs: Path | None = None, out: Path | None = None) -> dict[str, Any] | None:
    """The valid cached ``run.json`` row of ``sc`` (current code and input versions), or None."""
    try:
        iv = scenario_inputs_version(sc, inputs or inputs_dir())
    except OSError:
        return None
    return _cached_row((out or runs_dir()) / sc.id, code_version(), iv)


def is_cached(sc: Scenario, inputs: Path | None = None, out: Path | None = None) -> bool:
    """A valid cached result exists for ``sc`` (current code version and input versions)."""
    return cached_result(sc, inputs, out) is not None


def _replace_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """``write`` a temporary sibling of ``path``, then rename it over ``path``."""
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    write(tmp)
    os.replace(tmp, path)


def write_parquet_atomic(df: pl.DataFrame, path: Path) -> str:
    """Write ``df`` (zstd) atomically; return the file's sha256."""
    _replace_atomically(path, lambda p: df.write_parquet(p, compression="zstd"))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_scenario(sc: Scenario, inputs: Path | None = None, out: Path | None = None) -> dict[str, Any]:
    """Simulate ``sc`` unless a valid cached result exists; return its result row (``cache_hit`` says which)."""
    inputs = inputs or inputs_dir()
    out = out or runs_dir()
    cv, iv = code_version(), scenario_inputs_version(sc, inputs)
    d = out / sc.id
    hit = _cached_row(d, cv, iv)
    if hit is not None:
        return {**hit, "cache_hit": True}
    t0 = time.perf_counter()
    machines = platform_size(sc, inputs)
    jobs = build_jobs(sc, inputs, machines)
    cap = build_capacity(sc, inputs, machines)
    jobs = jobs.filter(pl.col("cores") <= sc.cores)
    window = {"window_start_s": sc.window_start_s} if sc.warmup_days else {}
    r = simulate(
        jobs, cap, machines, sc.cores, sc.horizon_s, sc.policy, dict(sc.settings), seed=sc.seed, **window
    )
    wall = time.perf_counter() - t0
    d.mkdir(parents=True, exist_ok=True)
    write_parquet_atomic(r.jobs, d / "jobs.parquet")
    row = {
        "scenario_id": sc.id,
        "params": sc.params(),
        "machines": machines,
        "metrics": r.metrics,
        "wall_s": wall,
        "code_version": cv,
        "inputs_version": iv,
        "jobs_path": str((d / "jobs.parquet").relative_to(home())) if d.is_relative_to(home()) else str(d),
        "finished_at": datetime.now(UTC).isoformat(),
    }
    _replace_atomically(d / "run.json", lambda p: p.write_text(json.dumps(row, sort_keys=True)))
    return {**row, "cache_hit": False}


def results_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """``out_sim_results`` rows from ``run.json`` contents."""
    recs = []
    for r in rows:
        p = r["params"]
        recs.append(
            {
                "scenario_id": r["scenario_id"],
                "workload": p["workload"],
                "capacity_kind": p["capacity"]["kind"],
                "capacity_json": json.dumps(p["capacity"], sort_keys=True),
                "policy": p["policy"],
                "settings_json": json.dumps(p["settings"], sort_keys=True),
                "machines": int(r["machines"]),
                "cores": float(p["cores"]),
                "horizon_s": float(p["horizon_days"]) * 86400.0,
                "seed": int(p["seed"]),
                **{k: r["metrics"][k] for k in METRIC_NAMES},
                "wall_s": float(r["wall_s"]),
                "code_version": r["code_version"],
                "inputs_version": r["inputs_version"],
                "jobs_path": r["jobs_path"],
                "finished_at": datetime.fromisoformat(r["finished_at"]),
            }
        )
    return pl.DataFrame(recs, infer_schema_length=None)


def load_runs(ids: list[str] | None = None, out: Path | None = None) -> list[dict[str, Any]]:
    """Every ``run.json`` under the runs directory (only ``ids`` if given), in id order."""
    out = out or runs_dir()
    if not out.is_dir():
        return []
    wanted = set(ids) if ids is not None else None
    rows = []
    for f in sorted(out.glob("*/run.json")):
        if wanted is None or f.parent.name in wanted:
            rows.append(json.loads(f.read_text()))
    return rows
