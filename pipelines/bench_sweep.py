"""Benchmark of ``varcap sweep`` on a study of many small scenarios: its fixed cost and its per-scenario
orchestration, in CPU seconds of whole processes (prints figures; no timed test).

Usage::

    python -m pipelines.bench_sweep                 # 2,000 deferral scenarios × ~10k jobs (target ≤ 15 CPU min)
    python -m pipelines.bench_sweep --seeds 5       # the same study with 200 scenarios (a quick look)
    python -m pipelines.bench_sweep --fixed-only    # a cached `varcap sweep smoke` only (target ≤ 2 CPU s)
    python -m pipelines.bench_sweep --executors --seeds 1   # dask against multiprocess (target ≤ 1.5×)

The study (``bench-defer``, a study file written into a fresh ``VARCAP_HOME``): ``defer`` on the embedded
grid signals {CAISO, ERCOT} × forecast methods {oracle, persist24, profile7d, sarimax} × slacks {1, 2, 4,
6, 12} h × ``--seeds`` seeds, one-core jobs of 1.5 h offering half of a fixed 4 × 24-core platform over 14
days (≈ 10,750 jobs a scenario; the first 7 days are the forecasts' history). The fresh home gets a copy
of the current warehouse (``$VARCAP_WAREHOUSE`` or ``<home>/data/warehouse.duckdb``; without one, raw →
core from the committed samples), untimed, as are exporting the inputs and loading numba's cache.

Timed, each a whole ``varcap sweep`` process (CPU = user + sys of it and the workers it waited for):

* ``varcap sweep bench-defer`` with every scenario to simulate — the target: ≤ 15 CPU minutes on 2 cores;
* the same again with ``--force``, every scenario cached and recorded again — its CPU less the fixed cost
  of a forced smoke sweep, per scenario: the orchestration per scenario (target ≤ 0.05 CPU s);
* ``varcap sweep smoke``, cached, ``--runs`` times (median) — the fixed cost (target ≤ 2 CPU s): a sweep
  whose cached runs and results are as its last sweep left them does nothing more than say so;
* the same with ``--force`` (every partition recorded again in a Dagster run), ``--runs`` times (median).

With ``--executors``, instead: ``varcap sweep bench-defer`` simulating every scenario with
``--executor multiprocess`` and with ``--executor dask`` (a local cluster), alternately ``--runs`` times,
each in a fresh home: the dask run's CPU over the multiprocess run's (target ≤ 1.5×).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from pipelines.bench import _cli, _env, source_tree, timed_process
from sim import paths

STUDY = "bench-defer"
GRIDS = ("CAISO", "ERCOT")
METHODS = ("oracle", "persist24", "profile7d", "sarimax")
SLACKS = (1.0, 2.0, 4.0, 6.0, 12.0)
#: targets of the sweep runner (CPU seconds)
FIXED_TARGET_S = 2.0
PER_SCENARIO_TARGET_S = 0.05
STUDY_TARGET_S = 15 * 60.0
#: the dask executor's CPU over the multiprocess executor's, same study
DASK_RATIO_TARGET = 1.5


def study_toml(seeds: int) -> str:
    """The benchmark study as a study file: ``len(GRIDS) × len(METHODS) × len(SLACKS) × seeds`` scenarios."""
    from studies.signals import GRIDS as SIGNALS

    pols = ",\n  ".join(
        f'{{ name = "defer", grid = "{g}", signal = "{SIGNALS[g]}", method = "{m}", slack = "{s:g}" }}'
        for g in GRIDS
        for m in METHODS
        for s in SLACKS
    )
    return (
        f'name = "{STUDY}"\n'
        'description = "Benchmark of the sweep runner: carbon-aware deferral, many small scenarios."\n\n'
        "[base]\nmachines = 4\ncores = 24\nhorizon_days = 14.0\nwarmup_days = 7.0\nload = 0.5\n\n"
        f'[grid]\npolicies = [\n  {pols},\n]\nworkloads = ["fixed-1.5"]\n'
        'capacity = [{ kind = "constant", fraction = 1.0 }]\n'
        f"seeds = {list(range(seeds))}\n"
    )


_INPUTS = (
    "from rich.console import Console; from pipelines.cli import prepare_dagster_home, _ensure_sim_inputs; "
    "prepare_dagster_home(); raise SystemExit(0 if _ensure_sim_inputs(Console()) else 1)"
)


def _home(tree: Path, home: Path, seeds: int | None) -> dict[str, str]:
    """Prepare the fresh ``home`` (samples, a warehouse copy, the study file, warm numba, exported inputs);
    its environment."""
    env = _env(tree, VARCAP_HOME=str(home), DAGSTER_HOME=str(home / ".dagster_home"))
    env.pop("VARCAP_STUDY_DIR", None)
    (home / "data").mkdir()
    (home / "data" / "samples").symlink_to(tree / "data" / "samples")
    if paths.warehouse_path().is_file():
        shutil.copyfile(paths.warehouse_path(), home / "data" / "warehouse.duckdb")
    if seeds:
        (home / "studies" / "files").mkdir(parents=True)
        (home / "studies" / "files" / f"{STUDY}.toml").write_text(study_toml(seeds))
    timed_process(_cli("warm"), tree, env)
    timed_process([sys.executable, "-c", _INPUTS], tree, env)
    return env


def bench(tree: Path, seeds: int, workers: int, runs: int) -> dict[str, float]:
    """The figures of the module docstring for the sources in ``tree`` (``seeds`` 0: the fixed cost only)."""
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="varcap-bench-sweep-") as d:
        env = _home(tree, Path(d), seeds)
        smoke = _cli("sweep", "smoke", "--max-workers", str(workers))
        timed_process(smoke, tree, env)  # simulates smoke (untimed): every later smoke sweep is cached
        out["fixed_cpu_s"] = statistics.median(timed_process(smoke, tree, env)[1] for _ in range(runs))
        forced = [*smoke, "--force"]
        out["fixed_force_cpu_s"] = statistics.median(timed_process(forced, tree, env)[1] for _ in range(runs))
        if seeds:
            cmd = _cli("sweep", STUDY, "--max-workers", str(workers))
            out["wall_s"], out["study_cpu_s"] = timed_process(cmd, tree, env)
            out["cached_cpu_s"] = timed_process([*cmd, "--force"], tree, env)[1]
            out["scenarios"] = float(len(list(Path(d, "data", "sim", "runs").glob("*/run.json"))) - 4)
            out["per_scenario_s"] = (out["cached_cpu_s"] - out["fixed_force_cpu_s"]) / out["scenarios"]
    return out


def bench_executors(tree: Path, seeds: int, workers: int, runs: int) -> dict[str, list[float]]:
    """CPU seconds of ``varcap sweep bench-defer`` simulating every scenario, per executor, ``runs`` times
    alternately (multiprocess first), each in a fresh home."""
    out: dict[str, list[float]] = {"multiprocess": [], "dask": []}
    for _ in range(runs):
        for executor in out:
            with tempfile.TemporaryDirectory(prefix="varcap-bench-executor-") as d:
                env = _home(tree, Path(d), seeds)
                cmd = _cli("sweep", STUDY, "--max-workers", str(workers), "--executor", executor)
                out[executor].append(timed_process(cmd, tree, env)[1])
    return out


def print_executors(r: dict[str, list[float]], seeds: int) -> None:
    """The table of :func:`bench_executors`."""
    mp, dk = statistics.median(r["multiprocess"]), statistics.median(r["dask"])
    print(f"{STUDY}: {seeds * len(GRIDS) * len(METHODS) * len(SLACKS)} scenarios, every one simulated")
    for name, xs in r.items():
        print(
            f"{'--executor ' + name + ', CPU s':44s} {statistics.median(xs):10.1f}   ({', '.join(f'{x:.1f}' for x in xs)})"
        )
    print(
        f"{'dask / multiprocess (medians)':44s} {dk / mp:10.2f}   target ≤ {DASK_RATIO_TARGET:g}: "
        f"{'met' if dk / mp <= DASK_RATIO_TARGET else 'NOT met'}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m pipelines.bench_sweep", description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=50, help="seeds of the study (40 scenarios each)")
    ap.add_argument("--workers", type=int, default=2, help="varcap sweep --max-workers")
    ap.add_argument("--runs", type=int, default=5, help="cached smoke sweeps timed (median)")
    ap.add_argument("--fixed-only", action="store_true", help="the fixed cost only")
    ap.add_argument(
        "--executors", action="store_true", help="dask against multiprocess on the study (--runs pairs)"
    )
    ap.add_argument("--against", metavar="REV", help="measure git revision REV instead of the working tree")
    ap.add_argument("--json", metavar="FILE", help="also write the figures to FILE (JSON)")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    if args.executors:
        with source_tree(args.against) as tree:
            rx = bench_executors(tree, args.seeds, args.workers, args.runs)
        print(f"varcap sweep, CPU seconds (user + sys) of whole processes; {args.against or 'working tree'}")
        print(f"load average {load:.1f} → {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print_executors(rx, args.seeds)
        return
    with source_tree(args.against) as tree:
        r = bench(tree, 0 if args.fixed_only else args.seeds, args.workers, args.runs)
    if args.json:
        Path(args.json).write_text(json.dumps({**r, "load_start": load, "load_end": os.getloadavg()[0]}))
    src = args.against or "working tree"
    print(f"varcap sweep, CPU seconds (user + sys) of whole processes; {src}; --max-workers {args.workers}")
    print(f"load average {load:.1f} → {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    fixed = r["fixed_cpu_s"]
    print(
        f"{'fixed cost (cached smoke, median of ' + str(args.runs) + ')':44s} {fixed:10.2f}   "
        f"target ≤ {FIXED_TARGET_S:g}: {'met' if fixed <= FIXED_TARGET_S else 'NOT met'}"
    )
    print(f"{'fixed cost, --force (median of ' + str(args.runs) + ')':44s} {r['fixed_force_cpu_s']:10.2f}")
    if "study_cpu_s" in r:
        n, cpu, per = r["scenarios"], r["study_cpu_s"], r["per_scenario_s"]
        print(f"{STUDY + ': scenarios':44s} {n:10.0f}")
        print(
            f"{STUDY + ' simulated, CPU s':44s} {cpu:10.1f}   target ≤ {STUDY_TARGET_S:g}"
            f"{'' if n >= 2000 else ' (for 2,000)'}: {'met' if cpu <= STUDY_TARGET_S * n / 2000 else 'NOT met'}"
        )
        print(f"{STUDY + ' simulated, wall s':44s} {r['wall_s']:10.1f}")
        print(f"{STUDY + ' cached, --force, CPU s':44s} {r['cached_cpu_s']:10.1f}")
        print(
            f"{'orchestration per cached scenario, CPU s':44s} {per:10.4f}   target ≤ {PER_SCENARIO_TARGET_S:g}: "
            f"{'met' if per <= PER_SCENARIO_TARGET_S else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
