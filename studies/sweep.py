"""Running one scenario and collecting results (the logic behind the sweep assets and ``varcap sweep``).

Files (under ``data/sim``, gitignored):

* ``inputs/`` — workloads and grid signals exported from the warehouse by ``out_sim_inputs``, with
  ``versions.json`` (sha256 per file). Scenario processes read only these, never DuckDB.
* ``runs/<scenario_id>/run.json`` — parameters, metrics with their sha256 (``metrics_sha256``), code and
  input versions, wall time, and the sha256 and size of ``runs/<scenario_id>/jobs.parquet`` (the per-job
  table). Every cache file is written atomically (temp file, fsync, rename).

A scenario whose ``run.json`` is readable, has the current code version and the current versions of the
inputs it reads, passes the checks of :func:`row_problems` (every field, metrics matching their sha256,
the blocking checks of ``out_sim_results``), and whose per-job file still has the recorded size and
sha256, is a cache hit: it is not simulated again. Anything else (unreadable, truncated or edited files, a
row that fails a check) is simulated again. When results are collected (:func:`scan_runs`), a run
directory that cannot be used is reported by path and skipped. A truncated ``versions.json`` is one named
error (:class:`SweepInputsError`) saying how to rebuild it. :func:`run_many` gives each scenario
:func:`scenario_timeout_s` seconds, and its worker processes exit when the process that started them dies.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from multiprocessing.context import SpawnContext, SpawnProcess
from pathlib import Path
from typing import Any

import polars as pl

from sim.api import simulate
from sim.capacity.trace import DAY
from sim.energy import CARBON_METRIC_NAMES
from sim.metrics import METRIC_NAMES
from sim.paths import data_dir, home
from studies.code_version import code_version, result_sources, source_version  # noqa: F401
from studies.keys import partition_keys  # noqa: F401
from studies.scenarios import (
    Scenario,
    build_capacity,
    capacity_needs,
    simulated_platform,
    sized_jobs,
    workload_key,
    workload_needs,
)
from studies.signals import scenario_carbon, signal_spec

_ROW_KEYS = ("scenario_id", "params", "machines", "metrics", "wall_s", "code_version", "inputs_version")
log = logging.getLogger(__name__)


class SweepInputsError(RuntimeError):
    """The exported sweep inputs (``data/sim/inputs``) cannot be used; the message says how to rebuild."""


def sim_dir() -> Path:
    return data_dir() / "sim"


def inputs_dir() -> Path:
    return sim_dir() / "inputs"


def runs_dir() -> Path:
    return sim_dir() / "runs"


def input_versions(inputs: Path) -> dict[str, str]:
    """File name → sha256 of the exported inputs (empty if none were exported). Raises
    :class:`SweepInputsError` naming the file if ``versions.json`` is unreadable (e.g. truncated)."""
    f = inputs / "versions.json"
    if not f.is_file():
        return {}
    try:
        v = json.loads(f.read_text())
        if not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values()):
            raise ValueError("not a JSON object of file name → sha256")
    except (OSError, ValueError) as e:
        raise SweepInputsError(
            f"{f} is unreadable ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'empty'}); "
            "rebuild it with `varcap run --groups sim` (materializes out_sim_inputs)"
        ) from None
    return v


def input_files(sc: Scenario) -> list[str]:
    """The exported input files ``sc`` reads (empty if it is generated from its parameters alone)."""
    needed = [n for n in (workload_needs(sc.workload_spec),) if n]
    carbon = signal_spec(sc)  # a series named by the policy settings (defer) is read too
    return list(
        dict.fromkeys(needed + capacity_needs(sc.capacity_spec) + (capacity_needs(carbon) if carbon else []))
    )


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


def file_sha256(path: Path) -> str:
    """sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def metrics_sha256(metrics: dict[str, Any]) -> str:
    """sha256 of a metric dict in canonical JSON (sorted keys; NaN written as JSON's ``NaN``)."""
    return hashlib.sha256(json.dumps(metrics, sort_keys=True).encode()).hexdigest()


def row_problems(row: Any) -> list[str]:
    """What makes a ``run.json`` row unusable (empty if none): a missing field or metric, metrics that do
    not match ``metrics_sha256`` (edited by hand or corrupted), or a failure of the blocking checks of
    ``out_sim_results`` (non-null parameters, fractions summing to 1)."""
    if not isinstance(row, dict):
        return ["run.json is not a JSON object"]
    missing = [k for k in (*_ROW_KEYS, "metrics_sha256", "finished_at", "jobs_path") if k not in row]
    if missing:
        return [f"fields {missing} missing"]
    m = row["metrics"]
    if not isinstance(m, dict) or [k for k in METRIC_NAMES if k not in m]:
        return [f"metrics {[k for k in METRIC_NAMES if not isinstance(m, dict) or k not in m]} missing"]
    out = []
    if metrics_sha256(m) != row["metrics_sha256"]:
        out.append("metrics do not match their recorded sha256 (edited or corrupted)")
    nulls = [k for k in ("scenario_id", "params", "machines", "wall_s", "code_version", "inputs_version")
             if row[k] is None]  # fmt: skip
    if nulls:
        out.append(f"fields {nulls} are null")
    fr = [m[k] for k in ("goodput", "wasted_fraction", "in_flight_fraction", "idle_fraction")]
    if all(isinstance(x, (int, float)) for x in fr) and not abs(sum(fr) - 1) <= 1e-6:
        out.append(f"goodput + wasted + in-flight + idle fractions = {sum(fr):.9g}, not 1")
    return out


def _cached_row(d: Path, cv: str, iv: str) -> dict[str, Any] | None:
    """The ``run.json`` row in ``d`` if it was computed with code version ``cv`` and inputs ``iv``, passes
    :func:`row_problems`, and its per-job file has the recorded size and sha256; None otherwise (missing,
    unreadable, stale, changed, failing a check: simulated again)."""
    try:
        row = json.loads((d / "run.json").read_text())
        jobs = d / "jobs.parquet"
        ok = (
            isinstance(row, dict)
            and row.get("code_version") == cv
            and row.get("inputs_version") == iv
            and not row_problems(row)
            and row.get("jobs_bytes") == jobs.stat().st_size
            and row.get("jobs_sha256") == file_sha256(jobs)
        )
    except (OSError, ValueError):
        return None
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
    try:
        write(tmp)
        with tmp.open("rb") as f:  # on disk before the rename: a crash leaves the old file or the new one
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json_atomic(obj: Any, path: Path, **dumps: Any) -> None:
    """Write ``obj`` as JSON to ``path`` atomically (temp file, fsync, rename)."""
    text = json.dumps(obj, **dumps)
    _replace_atomically(path, lambda p: p.write_text(text))


def write_parquet_atomic(df: pl.DataFrame, path: Path) -> str:
    """Write ``df`` (zstd) atomically; return the file's sha256."""
    _replace_atomically(path, lambda p: df.write_parquet(p, compression="zstd"))
    return file_sha256(path)


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
    machines, jobs = sized_jobs(sc, inputs)
    cap = build_capacity(sc, inputs, machines)
    jobs = jobs.filter(pl.col("cores") <= sc.cores)
    window = {"window_start_s": sc.window_start_s} if sc.warmup_days else {}
    # a pool capacity (paper 003's resource level) is one machine holding the whole platform's cores
    n_sim, c_sim = simulated_platform(sc, machines)
    carbon = scenario_carbon(sc, inputs)  # energy and carbon of every run, NaN carbon without one
    r = simulate(jobs, cap, n_sim, c_sim, sc.horizon_s, sc.policy, dict(sc.settings), seed=sc.seed,
                 carbon=carbon, energy=True, **window)  # fmt: skip
    # carbon metrics without a value (no signal, no slack) are stored as null, not NaN (NaN ≠ NaN)
    r = dataclasses.replace(
        r, metrics={k: None if k in CARBON_METRIC_NAMES and v != v else v for k, v in r.metrics.items()}
    )
    wall = time.perf_counter() - t0
    d.mkdir(parents=True, exist_ok=True)
    sha = write_parquet_atomic(r.jobs, d / "jobs.parquet")
    if r.kills is not None:  # when each termination happened (per-month kill rates, steady state)
        write_parquet_atomic(r.kills, d / "kills.parquet")
    row = {
        "scenario_id": sc.id,
        "params": sc.params(),
        "machines": machines,
        "metrics": r.metrics,
        "metrics_sha256": metrics_sha256(r.metrics),
        "wall_s": wall,
        "code_version": cv,
        "inputs_version": iv,
        "jobs_path": str((d / "jobs.parquet").relative_to(home())) if d.is_relative_to(home()) else str(d),
        "jobs_sha256": sha,
        "jobs_bytes": (d / "jobs.parquet").stat().st_size,
        **({"kills_path": _rel(d / "kills.parquet")} if r.kills is not None else {}),
        "finished_at": datetime.now(UTC).isoformat(),
    }
    write_json_atomic(row, d / "run.json", sort_keys=True)
    return {**row, "cache_hit": False}


def _rel(p: Path) -> str:
    """``p`` relative to the project home when inside it (as ``jobs_path`` is stored)."""
    return str(p.relative_to(home())) if p.is_relative_to(home()) else str(p)


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
                "horizon_s": float(p["horizon_days"]) * DAY,
                "seed": int(p["seed"]),
                **{k: r["metrics"][k] for k in METRIC_NAMES},
                **{k: r["metrics"].get(k) for k in CARBON_METRIC_NAMES},  # None in runs recorded before carbon accounting
                "wall_s": float(r["wall_s"]),
                "code_version": r["code_version"],
                "inputs_version": r["inputs_version"],
                "jobs_path": r["jobs_path"],
                "finished_at": datetime.fromisoformat(r["finished_at"]),
            }
        )
    return pl.DataFrame(recs, infer_schema_length=None)


def scan_runs(
    ids: list[str] | None = None, out: Path | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Every readable ``run.json`` under the runs directory (only ``ids`` if given), in id order, and one
    message per run directory that could not be used (unreadable or incomplete ``run.json``, per-job file
    missing or not of the recorded size, a row failing :func:`row_problems`), naming its path. Such a
    directory is skipped, not fatal (and the scenario is simulated again by the next sweep)."""
    out = out or runs_dir()
    if not out.is_dir():
        return [], []
    wanted = set(ids) if ids is not None else None
    rows, problems = [], []
    for f in sorted(out.glob("*/run.json")):
        if wanted is not None and f.parent.name not in wanted:
            continue
        try:
            row = json.loads(f.read_text())
            bad = row_problems(row)
            if bad:
                raise ValueError("; ".join(bad))
            jobs = f.parent / "jobs.parquet"
            if "jobs_bytes" in row and jobs.stat().st_size != row["jobs_bytes"]:
                raise ValueError(
                    f"{jobs.name} has {jobs.stat().st_size} bytes, run.json says {row['jobs_bytes']}"
                )
        except (OSError, ValueError) as e:
            problems.append(f"{f}: skipped ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
            continue
        rows.append(row)
    return rows, problems


def load_runs(ids: list[str] | None = None, out: Path | None = None) -> list[dict[str, Any]]:
    """The usable ``run.json`` rows of :func:`scan_runs`; each skipped directory is logged as a warning."""
    rows, problems = scan_runs(ids, out)
    for p in problems:
        log.warning(p)
    return rows


#: relative cost of a scenario's workload (long tails, many jobs) for :func:`expected_cost`
_HEAVY_WORKLOADS = {
    "zipf-1.8": 8,
    "zipf-1.7": 4,
    "zipf-1.6": 2,
    "harvest-jobs": 6,
    "synthetic-uniform": 5,
    "synthetic-uniform-literal": 5,
}


def expected_cost(sc: Scenario) -> float:
    """A rough relative cost of simulating ``sc`` (workload weight × machines × days), to submit the
    expensive scenarios first so a process pool stays busy to the end."""
    return _HEAVY_WORKLOADS.get(sc.workload, 1) * (sc.machines or 250) * sc.horizon_days


DEFAULT_TIMEOUT_S = 6 * 3600.0  # the longest catalogued scenario (Borg, 30 days) takes minutes


def scenario_timeout_s() -> float:
    """Seconds one scenario may take in :func:`run_many`: ``$VARCAP_SCENARIO_TIMEOUT_S`` (default 6 h).
    Raises ValueError naming the variable if it is not a positive number."""
    raw = os.environ.get("VARCAP_SCENARIO_TIMEOUT_S", "")
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        v = float(raw)
    except ValueError:
        v = -1.0
    if not v > 0 or v != v:
        raise ValueError(f"VARCAP_SCENARIO_TIMEOUT_S must be a positive number of seconds (got {raw!r})")
    return v


class ScenarioTimeout(RuntimeError):
    """A scenario ran longer than its timeout (its worker process was ended)."""


def _timeout_message(sc_id: str, timeout_s: float) -> str:
    return (
        f"did not finish within {timeout_s:g} s (VARCAP_SCENARIO_TIMEOUT_S); its worker was ended, "
        "the other scenarios went on"
    )


def _expire(marks: str, sc_id: str) -> None:
    """Watchdog of a worker: leave a mark naming the scenario that overran, then end this process (the
    compiled kernel cannot be interrupted from Python)."""
    Path(marks, sc_id).touch()
    os._exit(70)


def _run_params(
    params: dict[str, Any], timeout_s: float | None = None, marks: str | None = None
) -> dict[str, Any]:
    sc = Scenario.from_params(params)
    timer = None
    if timeout_s is not None and marks is not None:
        timer = threading.Timer(timeout_s, _expire, (marks, sc.id))
        timer.daemon = True
        timer.start()
    try:
        return run_scenario(sc)
    finally:
        if timer is not None:
            timer.cancel()


def _watch_parent(parent: int, interval_s: float = 0.5) -> None:
    """End this process as soon as ``parent`` is no longer its parent (it died, whatever the signal,
    SIGKILL included: the orphan is re-parented). A polling thread, not ``PR_SET_PDEATHSIG``: that fires
    when the *thread* that started the worker ends, which in a pool need not be the process's end.
    Ctrl-C is ignored here: the parent ends its workers (:func:`_kill_pool`), so a worker never runs its
    own interpreter teardown on it (whose extension modules' leak reports were dozens of lines of noise)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def poll() -> None:
        while os.getppid() == parent:
            time.sleep(interval_s)
        os._exit(71)

    if os.getppid() != parent:
        os._exit(71)
    threading.Thread(target=poll, name="varcap-parent-watch", daemon=True).start()


#: What a simulation worker's environment sets unless this process's names a value: polars on one thread
#: (its thread pool is sized when polars is imported, so it must be in the environment the worker starts
#: with). The pool's processes are the parallelism; a worker's polars threads only wait on each other: two
#: quick studies run side by side as two processes (ias-robustness-quick and spot-real-quick, 144 scenarios
#: each, 2 cores, two rounds, 2026-12-04): 11.98 and 11.63 → 11.21 and 10.43 CPU s, 6.92 and 6.81 → 6.63
#: and 6.13; all 627 quick scenarios of a `varcap run` gave the same metrics and per-job digests as with
#: polars' default threads.
WORKER_ENV = {"POLARS_MAX_THREADS": "1"}
_ENV_LOCK = threading.Lock()


class _WorkerProcess(SpawnProcess):
    """A spawned process started with :data:`WORKER_ENV` in its environment (set in this process's
    environment only while it starts, under a lock)."""

    def start(self) -> None:
        with _ENV_LOCK:
            added = {k: v for k, v in WORKER_ENV.items() if k not in os.environ}
            os.environ.update(added)
            try:
                super().start()
            finally:
                for k in added:
                    os.environ.pop(k, None)


class _WorkerContext(SpawnContext):
    """multiprocessing's spawn context whose processes are :class:`_WorkerProcess`."""

    Process = _WorkerProcess


def _new_pool(workers: int) -> Any:
    """``workers`` spawned processes that die with this one (:func:`_watch_parent`), each started with
    :data:`WORKER_ENV`."""
    from concurrent.futures import ProcessPoolExecutor

    # spawn, not fork: the caller may hold threads (Dagster, rich) whose locks a fork would copy
    return ProcessPoolExecutor(
        workers, mp_context=_WorkerContext(), initializer=_watch_parent, initargs=(os.getpid(),)
    )


_POOL: dict[int, Any] = {}  # workers -> a started ProcessPoolExecutor (start_pool)


def _ready(policies: tuple[str, ...]) -> bool:
    import sim.api  # noqa: F401 - the simulator stack, loaded while the caller is still starting up
    from sim.policies import warm_imports

    warm_imports(policies)  # e.g. statsmodels for IAS: loaded now, not inside the first scenario's wall_s
    return True


def start_pool(workers: int, scenarios: list[Scenario] | None = None) -> None:
    """Start ``workers`` simulation processes now (spawned, importing the simulator and what the
    ``scenarios``' policies import on first use, in the background), for :func:`run_many` to use later: a
    caller that starts them first overlaps their start-up with its own. No-op for ``workers`` <= 1.
    :func:`stop_pool` ends them; they also exit when this process dies (any signal, SIGKILL included)."""
    if workers > 1 and workers not in _POOL:
        ex = _new_pool(workers)
        policies = tuple(dict.fromkeys(sc.policy for sc in scenarios or []))
        for _ in range(workers):
            ex.submit(_ready, policies)
        _POOL[workers] = ex


def stop_pool(wait: bool = True) -> None:
    """Shut down the processes of :func:`start_pool` (``wait`` False: return at once; they exit in the
    background, joined at the latest when this process exits)."""
    while _POOL:
        _POOL.popitem()[1].shutdown(wait=wait, cancel_futures=True)


def _kill_pool(ex: Any) -> None:
    """End ``ex``'s worker processes now and shut it down without waiting. On Ctrl-C or SIGTERM a
    running scenario (minutes at full size) must not hold the exit: ``shutdown`` alone, and the
    interpreter's exit hook that joins every pool, wait for the running scenarios to finish."""
    for p in list((getattr(ex, "_processes", None) or {}).values()):
        if p.is_alive():
            p.kill()
    ex.shutdown(wait=False, cancel_futures=True)


def run_many(
    scenarios: list[Scenario],
    workers: int,
    on_done: Callable[[Scenario, dict[str, Any] | None, str | None], None] | None = None,
    timeout_s: float | None = None,
) -> list[str]:
    """Run ``scenarios`` (cache hits return at once) on ``workers`` warm processes (spawned once, each runs
    many scenarios; in this process if ``workers`` <= 1). ``on_done(scenario, row, error)`` is called as
    each finishes. A failing scenario does not stop the others; returns one message per failure.

    Each scenario gets ``timeout_s`` seconds (default :func:`scenario_timeout_s`): on a worker, a watchdog
    ends the worker process at the deadline, the scenario fails with a message saying so, and the
    scenarios that shared the pool are run again on new processes; in this process (``workers`` <= 1) a
    timer signal interrupts Python code (a hang inside the compiled kernel is caught on workers only)."""
    import signal
    import tempfile
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    timeout = scenario_timeout_s() if timeout_s is None else float(timeout_s)
    errors: list[str] = []

    def done(sc: Scenario, row: dict[str, Any] | None, err: BaseException | None) -> None:
        msg = None if err is None else f"{sc.id} {sc.label()}: {type(err).__name__}: {err}"
        if msg:
            errors.append(msg)
        if on_done:
            on_done(sc, row, msg)

    if workers <= 1 or len(scenarios) <= 1:
        main = threading.current_thread() is threading.main_thread()
        for sc in scenarios:

            def _over(signum: int, frame: object, sc: Scenario = sc) -> None:
                raise ScenarioTimeout(_timeout_message(sc.id, timeout))

            old = signal.signal(signal.SIGALRM, _over) if main else None
            if main:
                signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                done(sc, run_scenario(sc), None)
            except Exception as e:
                done(sc, None, e)
            finally:
                if main:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    signal.signal(signal.SIGALRM, old)
        return errors
    started = _POOL.get(workers)
    # the expensive first; on equal cost one workload's scenarios side by side (a process builds its jobs
    # once: studies.scenarios.build_jobs), in catalogue order
    pending = sorted(scenarios, key=lambda sc: (-expected_cost(sc), workload_key(sc)))
    crashes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="varcap-timeouts-") as marks:
        while pending:
            ex = started or _new_pool(min(workers, len(pending)))
            retry: list[Scenario] = []
            broken: list[tuple[Scenario, BaseException]] = []
            interrupted = False
            try:
                futs = {ex.submit(_run_params, sc.params(), timeout, marks): sc for sc in pending}
                for f in as_completed(futs):
                    sc, err = futs[f], f.exception()
                    if isinstance(err, BrokenProcessPool):  # a worker died: which scenario, decided below
                        broken.append((sc, err))
                        continue
                    done(sc, None if err else f.result(), err)
                timed_out = {sc.id for sc, _ in broken if Path(marks, sc.id).exists()}
                for sc, err in broken:
                    if sc.id in timed_out:
                        done(sc, None, ScenarioTimeout(_timeout_message(sc.id, timeout)))
                    elif not timed_out and crashes.get(sc.id, 0) >= 1:  # died twice with no timeout
                        done(sc, None, err)
                    else:  # a neighbour's worker ended: run it again on new processes
                        crashes[sc.id] = crashes.get(sc.id, 0) + (0 if timed_out else 1)
                        retry.append(sc)
            except BaseException as e:  # Ctrl-C, SIGTERM (as KeyboardInterrupt): end the workers now
                if not isinstance(e, Exception):
                    interrupted = True
                    _kill_pool(ex)
                    if _POOL.get(workers) is ex:
                        del _POOL[workers]
                raise
            finally:
                if (started is None or retry) and not interrupted:
                    ex.shutdown(wait=not broken, cancel_futures=True)
                if retry and started is not None:
                    _POOL.pop(workers, None)
                    started = None
            pending = retry
    return errors
