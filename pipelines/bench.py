"""Benchmarks that print figures (no timed tests): ingest, CLI start-up, sweep overhead.

Usage::

    python -m pipelines.bench [ingest]       # normalize every sample, then raw -> core (target < 60 s)
    python -m pipelines.bench startup        # varcap --help (<= 0.3 s), varcap simulate on 10 jobs (<= 0.8 s)
    python -m pipelines.bench sweep          # warm `varcap sweep smoke`: sum of wall_s / wall (>= 60 %)
    python -m pipelines.bench overhead       # after `varcap run`: the runner's cost per cached scenario (<= 0.2 s)

``startup`` and ``sweep`` take ``--against REV``: the same measurement on the sources of git revision
``REV`` (exported with ``git archive`` to a temporary directory, run with this environment), printed
beside the working tree's — the before/after figures (``--only-against``: REV alone). Start-up rows give
the best and the median wall time of ``--runs`` whole processes after one untimed run (which also compiles
a cold numba cache), and their median CPU time (user + sys); targets are judged on the best wall time,
the run a busy machine disturbed least (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sim import paths

if TYPE_CHECKING:
    from assets.normalize import RawFile

ROOT = Path(__file__).resolve().parents[1]
HELP_TARGET_S = 0.3
SIMULATE_TARGET_S = 0.8
SWEEP_SHARE_TARGET = 0.60


def _files(key: str) -> list[RawFile]:
    from assets.normalize import RawFile
    from assets.sources import DATASETS

    ds = DATASETS[key]
    return [RawFile(paths.samples_dir() / f, f, ds.has_header, ds.columns) for f in ds.sample_files]


def bench_normalize() -> list[tuple[str, int, float]]:
    from assets.core import JobsConfig, build_jobs
    from assets.grid import GRID_TABLES, build_table, sources_of

    rows = []
    t = time.perf_counter()
    jobs, _ = build_jobs(
        _files("gaia_traces"), _files("azure_vmtable"), _files("borg2011_task_events"), JobsConfig()
    )
    rows.append(("core_jobs", jobs.height, time.perf_counter() - t))
    for table in GRID_TABLES:  # every grid table from the samples of the sources that feed it
        t = time.perf_counter()
        b = build_table(table, {s.key: _files(s.key) for s in sources_of(table)})
        rows.append((table, b.rows.height, time.perf_counter() - t))
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


def bench_ingest() -> None:
    rows = bench_normalize()
    total = sum(r[2] for r in rows)
    print(f"{'table':32s} {'rows':>10s} {'seconds':>8s}")
    for name, n, s in rows:
        print(f"{name:32s} {n:>10,d} {s:>8.2f}")
    print(f"{'normalize all samples':32s} {sum(r[1] for r in rows):>10,d} {total:>8.2f}   (target < 60 s)")
    print(f"{'materialize raw+core+checks':32s} {'':>10s} {bench_materialize():>8.2f}")


# ------------------------------------------------------------------------------------------ processes
@contextmanager
def source_tree(rev: str | None) -> Iterator[Path]:
    """The working tree (``rev`` None) or the sources of git revision ``rev`` in a temporary directory."""
    if rev is None:
        yield ROOT
        return
    with tempfile.TemporaryDirectory(prefix=f"varcap-{rev[:12]}-") as d:
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=False)
        if archive.returncode:
            raise SystemExit(f"git archive {rev}: {archive.stderr.decode().strip()}")
        subprocess.run(["tar", "-x", "-C", d], input=archive.stdout, check=True)
        yield Path(d)


def _env(tree: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VARCAP_WAREHOUSE", "DAGSTER_HOME")}
    return {**env, "PYTHONPATH": str(tree), "VARCAP_HOME": str(tree), **extra}


def timed_process(cmd: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Run ``cmd`` to completion; return (wall seconds, CPU seconds user + sys). Raises on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        tail = r.stderr.decode(errors="replace").strip().splitlines()[-5:]
        raise SystemExit(f"{' '.join(cmd)} failed in {cwd} (exit {r.returncode}):\n" + "\n".join(tail))
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def write_jobs_csv(path: Path, n: int = 10) -> Path:
    """``n`` small jobs over the first hour (the start-up instance: the simulation itself is negligible)."""
    lines = ["job_id,submit_s,duration_s,cores"]
    lines += [f"{i},{i * 60},{300 + 30 * i},{1 + i % 4}" for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "pipelines.cli", *args]


# --------------------------------------------------------------------------------------------- startup
def bench_startup(tree: Path, runs: int) -> dict[str, tuple[float, float, float]]:
    """(best wall, median wall, median CPU) seconds of whole processes: ``varcap --help``, ``varcap
    simulate`` on 10 jobs, ``import pipelines.definitions``. One untimed run of each first (warms numba's
    and the OS's caches)."""
    with tempfile.TemporaryDirectory() as d:
        jobs = write_jobs_csv(Path(d) / "jobs10.csv")
        cap = "random-walk:changes_per_hour=1,step=0.15,seed=0"
        sim_args = ("--jobs", str(jobs), "--capacity", cap, "--machines", "4", "--cores", "8")
        cases = {
            "varcap --help": _cli("--help"),
            "varcap simulate (10 jobs, ff)": _cli("simulate", *sim_args, "--horizon-s", "7200"),
            "import pipelines.definitions": [sys.executable, "-c", "import pipelines.definitions"],
        }
        env = _env(tree, DAGSTER_HOME=str(Path(d) / "dagster"))
        out = {}
        for name, cmd in cases.items():
            timed_process(cmd, tree, env)
            samples = [timed_process(cmd, tree, env) for _ in range(runs)]
            walls, cpus = [s[0] for s in samples], [s[1] for s in samples]
            out[name] = (min(walls), statistics.median(walls), statistics.median(cpus))
        return out


# ----------------------------------------------------------------------------------------------- sweep
def bench_sweep(tree: Path, study: str, workers: int) -> dict[str, float]:
    """One ``varcap sweep STUDY`` in a fresh ``VARCAP_HOME`` (no cached scenarios) with numba's cache
    warm and, if the study reads warehouse inputs, those exported first (untimed): its wall time, the sum
    of the scenarios' ``wall_s`` and their share of the wall time."""
    with tempfile.TemporaryDirectory(prefix="varcap-sweep-") as home:
        env = _env(tree, VARCAP_HOME=home, DAGSTER_HOME=str(Path(home) / ".dagster_home"))
        (Path(home) / "data").mkdir()
        (Path(home) / "data" / "samples").symlink_to(tree / "data" / "samples")  # the committed samples
        jobs = write_jobs_csv(Path(home) / "jobs10.csv")
        warm = ("--jobs", str(jobs), "--capacity", "random-walk:seed=0", "--machines", "4", "--cores", "8")
        timed_process(_cli("simulate", *warm, "--horizon-s", "7200"), tree, env)
        timed_process(_cli("warm"), tree, env)  # numba's cache for this tree (another REV's is cold)
        if _needs_inputs(tree, study, env):  # raw -> core -> out_sim_inputs first, untimed: not the sweep's
            timed_process([sys.executable, "-c", _INPUTS], tree, env)
        wall, cpu = timed_process(_cli("sweep", study, "--max-workers", str(workers)), tree, env)
        rows = [json.loads(f.read_text()) for f in Path(home).glob("data/sim/runs/*/run.json")]
        sim_s = sum(float(r["wall_s"]) for r in rows)
        # what any sweep process pays before it can simulate: Dagster, the definitions, the instance
        _, fixed_cpu = timed_process([sys.executable, "-c", _FIXED], tree, env)
        return {
            "scenarios": len(rows),
            "wall_s": wall,
            "cpu_s": cpu,
            "sim_s": sim_s,
            "share": sim_s / wall,
            "fixed_cpu_s": fixed_cpu,
        }


_FIXED = (
    "import dagster as dg; import pipelines.definitions; from pipelines.cli import prepare_dagster_home; "
    "prepare_dagster_home(); dg.DagsterInstance.get().get_runs(limit=1)"
)


_INPUTS = (
    "from rich.console import Console; from pipelines.cli import prepare_dagster_home, _ensure_sim_inputs; "
    "prepare_dagster_home(); raise SystemExit(0 if _ensure_sim_inputs(Console()) else 1)"
)


def _needs_inputs(tree: Path, study: str, env: dict[str, str]) -> bool:
    """Whether ``study`` (in the sources of ``tree``) reads exported warehouse inputs."""
    code = (
        "import sys; from studies import sweep\n"
        "try:\n    from studies.catalogue import study\nexcept ImportError:  # a revision before the catalogue\n"
        "    from studies.scenarios import study\n"
        f"sys.exit(int(any(sweep.needs_inputs(s) for s in study({study!r}))))"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, check=False)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{study}: {r.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
    return r.returncode == 1


def bench_overhead(study_names: list[str], workers: int) -> dict[str, float]:
    """Per-scenario orchestration overhead of the one runner (``materialize_studies``) on studies whose
    scenarios are all cached (run ``varcap run`` first): its wall time against reading the same cached
    results in a plain loop, per scenario. Records every partition again in ``$DAGSTER_HOME``."""
    from rich.console import Console

    from pipelines.cli.common import prepare_dagster_home
    from pipelines.cli.sweeps import materialize_studies
    from studies import sweep
    from studies.catalogue import study

    prepare_dagster_home()
    scs = list({s.id: s for n in study_names for s in study(n)}.values())
    missing = [s.id for s in scs if not sweep.is_cached(s)]
    if missing:
        raise SystemExit(f"{len(missing)} of {len(scs)} scenarios not cached: run `varcap run` first")
    t0 = time.perf_counter()
    for s in scs:
        sweep.cached_result(s)
    plain = time.perf_counter() - t0
    t0 = time.perf_counter()
    ok = materialize_studies(
        study_names, workers, Console(quiet=True), progress=False, results=False, export_inputs=False
    )
    runner = time.perf_counter() - t0
    if not ok:
        raise SystemExit("materialize_studies failed")
    return {
        "scenarios": len(scs),
        "plain_s": plain,
        "runner_s": runner,
        "overhead_per_scenario_s": (runner - plain) / len(scs),
    }


def _print_overhead(workers: int) -> None:
    from studies import reproduction as repro

    load = os.getloadavg()[0]
    r = bench_overhead(repro.profile_studies(repro.QUICK), workers)
    print(
        f"the quick reproduction studies, every scenario cached ({r['scenarios']:.0f} partitions; load "
        f"average {load:.1f} → {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print(f"plain loop over the cached results:     {r['plain_s']:.1f} s")
    print(f"materialize_studies (Dagster runs):     {r['runner_s']:.1f} s")
    per = r["overhead_per_scenario_s"]
    print(
        f"orchestration overhead per scenario:    {per:.3f} s (target ≤ {OVERHEAD_TARGET_S} s: "
        f"{'met' if per <= OVERHEAD_TARGET_S else 'NOT met'})"
    )


#: what the Dagster runner may cost per scenario over a plain process pool
OVERHEAD_TARGET_S = 0.2


# ------------------------------------------------------------------------------------------------ main
def _measure(rev: str | None, fn, *args):
    with source_tree(rev) as tree:
        return fn(tree, *args)


def _print_startup(runs: int, against: str | None, tree: bool = True) -> None:
    cols = ([against] if against else []) + (["working tree"] if tree else [])
    res = [_measure(against, bench_startup, runs)] if against else []
    res += [_measure(None, bench_startup, runs)] if tree else []
    targets = {"varcap --help": HELP_TARGET_S, "varcap simulate (10 jobs, ff)": SIMULATE_TARGET_S}
    head = "".join(f"{c[:22]:>24s}" for c in cols)
    load = os.getloadavg()[0]
    print(f"{runs} whole processes each; seconds: best wall / median wall / median CPU (user+sys)")
    print(f"load average {load:.1f} on {os.cpu_count()} cores (best wall is the least disturbed run)")
    print(f"{'':32s}{head}{'target (best wall)':>22s}")
    for name in res[-1]:
        cells = "".join(f"{f'{r[name][0]:.2f} / {r[name][1]:.2f} / {r[name][2]:.2f}':>24s}" for r in res)
        t = targets.get(name)
        met = "" if t is None else f"≤ {t:.1f} {'met' if res[-1][name][0] <= t else 'NOT met'}"
        print(f"{name:32s}{cells}{met:>22s}")


def _print_sweep(study: str, workers: int, against: str | None, tree: bool = True) -> None:
    cols = ([against] if against else []) + (["working tree"] if tree else [])
    res = [_measure(against, bench_sweep, study, workers)] if against else []
    res += [_measure(None, bench_sweep, study, workers)] if tree else []
    print(f"warm `varcap sweep {study} --max-workers {workers}` in a fresh home (every scenario simulates)")
    print(f"{'':26s}" + "".join(f"{c[:22]:>24s}" for c in cols))
    for key, label, fmt in [
        ("scenarios", "scenarios", "{:.0f}"),
        ("wall_s", "wall, s", "{:.1f}"),
        ("cpu_s", "CPU (user+sys), s", "{:.1f}"),
        ("sim_s", "sum of wall_s, s", "{:.1f}"),
        ("share", "simulating share of wall", "{:.0%}"),
        ("fixed_cpu_s", "Dagster start-up CPU, s", "{:.1f}"),
    ]:
        print(f"{label:26s}" + "".join(f"{fmt.format(r[key]):>24s}" for r in res))
    share = res[-1]["share"]
    print(f"target: ≥ {SWEEP_SHARE_TARGET:.0%} — {'met' if share >= SWEEP_SHARE_TARGET else 'NOT met'}")
    print(
        "Dagster start-up: a process that imports the definitions and opens the instance, and nothing "
        f"else (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m pipelines.bench", description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="?", choices=["ingest", "startup", "sweep", "overhead"], default="ingest")
    ap.add_argument("--against", metavar="REV", help="also measure git revision REV (before/after)")
    ap.add_argument("--only-against", action="store_true", help="measure REV only, not the working tree")
    ap.add_argument("--runs", type=int, default=5, help="startup: timed processes per command")
    ap.add_argument("--study", default="smoke", help="sweep: study to run (keep it small)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="sweep: --max-workers")
    args = ap.parse_args(argv)
    if args.only_against and not args.against:
        ap.error("--only-against needs --against REV")
    if args.what == "ingest":
        bench_ingest()
    elif args.what == "overhead":
        _print_overhead(args.workers)
    elif args.what == "startup":
        _print_startup(args.runs, args.against, not args.only_against)
    else:
        _print_sweep(args.study, args.workers, args.against, not args.only_against)


if __name__ == "__main__":
    main()
