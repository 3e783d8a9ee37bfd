"""``varcap`` command line: run the pipeline, open the UI, simulate, sweep, benchmark.

``varcap run`` materializes every asset in-process against the Dagster instance in ``$DAGSTER_HOME``
(default ``.dagster_home`` in the repo), so runs also appear in the UI.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from sim import paths


def prepare_dagster_home() -> str:
    """Create ``$DAGSTER_HOME`` (default ``.dagster_home``) holding a copy of the repo's dagster.yaml."""
    home = paths.dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    src = paths.home() / "dagster.yaml"
    if not src.exists():  # VARCAP_HOME elsewhere: the repository's instance settings still apply
        src = Path(__file__).resolve().parents[1] / "dagster.yaml"
    if src.exists():
        shutil.copyfile(src, home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return str(home)


def cmd_run(args: argparse.Namespace) -> int:
    prepare_dagster_home()
    import dagster as dg
    from rich.console import Console
    from rich.table import Table

    from pipelines.definitions import defs

    console = Console(stderr=False)
    from pipelines import guard

    instance = dg.DagsterInstance.get()
    if args.free_slots:
        for r in guard.free_slots(instance, args.free_slots):
            console.print(f"freed the {guard.POOL} pool slots of run {r}")
        return 0
    for r in guard.free_dead_slots(instance):
        console.print(f"freed the {guard.POOL} pool slots of run {r}, whose process had died", style="yellow")
    if args.source:
        os.environ["VARCAP_SOURCE"] = args.source
    selection = (
        dg.AssetSelection.groups(*args.groups)
        if args.groups
        # sweeps: `varcap sweep STUDY`; reproduction and reports follow the quick studies (run_reports)
        else dg.AssetSelection.all() - dg.AssetSelection.groups("sim", "reproduction", "reports", "harmony")
        | dg.AssetSelection.assets("out_sim_inputs")
    )
    job = defs.resolve_implicit_global_asset_job_def()
    keys = selection.resolve(defs.resolve_asset_graph())
    # Dagster's console log (tracebacks of failed steps) only with --debug; warnings and failures are
    # printed below, one line each
    level = "WARNING" if getattr(args, "debug", False) else "CRITICAL"
    run_config = {"loggers": {"console": {"config": {"log_level": level}}}}
    t0 = time.perf_counter()
    watcher = guard.SlotWatcher(instance, lambda m: console.print(m, style="yellow", markup=False))
    watcher.start()
    try:
        with console.status(f"materializing {len(keys)} assets …"):
            result = job.execute_in_process(
                instance=instance,
                asset_selection=list(keys),
                run_config=run_config,
                raise_on_error=False,
                tags=guard.run_tags(),
            )
    finally:
        watcher.stop()
    elapsed = time.perf_counter() - t0
    table = Table(title=f"varcap run — {len(keys)} assets in {elapsed:.1f} s")
    for c in ("asset", "rows", "rejects", "checks"):
        table.add_column(c)
    checks: dict[str, list[str]] = {}
    for ev in result.all_events:
        if ev.event_type_value == "ASSET_CHECK_EVALUATION":
            d = ev.event_specific_data
            checks.setdefault(d.asset_key.to_user_string(), []).append(
                (
                    "[green]✓[/]"
                    if d.passed
                    else ("[yellow]![/]" if str(d.severity).endswith("WARN") else "[red]✗[/]")
                )
                + d.check_name
            )
    for m in result.get_asset_materialization_events():
        mat = m.event_specific_data.materialization
        meta = mat.metadata
        rows = meta.get("dagster/row_count") or meta.get("files")
        rej = meta.get("rejects")
        key = mat.asset_key.to_user_string()
        table.add_row(
            key,
            str(rows.value if rows is not None else ""),
            str(rej.value if rej is not None else ""),
            " ".join(checks.get(key, [])),
        )
    console.print(table)
    for line in guard.warning_lines(instance, result.run_id):
        console.print(line, style="yellow", markup=False, highlight=False)
    if not result.success:
        for line in guard.failure_lines(result.all_events):
            console.print(line, style="red", markup=False, highlight=False)
        return 1
    if (
        not args.groups
        and run_reports(console, args.workers, simulate=not args.no_sim, everything=args.quick_all) != 0
    ):
        return 1
    console.print(f"warehouse: [bold]{paths.warehouse_path()}[/]")
    console.print('  query:   varcap sql "select workload, count(*) from core_jobs group by 1"')
    console.print("  UI:      make ui  (or `varcap ui`), then open http://127.0.0.1:3000")
    if not args.groups:
        from assets.reports import reports_dir

        console.print(
            f"reports: [bold]{reports_dir() / 'index.html'}[/]  (figures for the README: varcap figures)"
        )
    return 0


#: Policies `varcap run` leaves to `varcap reproduce --quick` (or `varcap run --quick-all`): SlackSched with
#: waiting (its eq. 2 pass over long queues takes ~30 s per quick run even compiled); the chapter shows the
#: others. (Target* and the per-machine Oracle are fast enough now: they run.)
SLOW_POLICIES = ("slacksched",)


def simulate_quick(workers: int, everything: bool = False) -> dict[str, float]:
    """Simulate the quick reproduction scenarios without a valid cached result (all of them, or all but
    :data:`SLOW_POLICIES`), ``workers`` processes at a time; wall seconds per simulated scenario."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from tqdm import tqdm

    from studies import reproduction as repro
    from studies import sweep

    if everything:
        return repro.run_profile(repro.QUICK, workers)
    scs = [s for s in repro.profile_scenarios(repro.QUICK) if s.policy not in SLOW_POLICIES]
    todo = [s for s in scs if not sweep.is_cached(s)]
    walls: dict[str, float] = {}
    with (
        tqdm(total=len(scs), initial=len(scs) - len(todo), desc="quick studies", unit="scenario") as bar,
        ProcessPoolExecutor(max(1, workers), mp_context=mp.get_context("spawn")) as ex,
    ):
        for f in as_completed([ex.submit(repro._run_one, s.params()) for s in todo]):
            i, w, _ = f.result()
            walls[i] = w
            bar.update(1)
    return walls


#: what Harmony's chapter (report_harmony) reads; `varcap sweep harmony` writes them
HARMONY_REPORT_TABLES = (
    "out_harmony_task_classes",
    "out_harmony_demand",
    "out_harmony_results",
    "out_harmony_intervals",
)


def run_reports(
    console, workers: int, simulate: bool = True, reproduction: bool = True, everything: bool = False
) -> int:
    """``varcap run``'s second half: simulate the quick reproduction studies (:func:`simulate_quick`;
    cached scenarios are skipped), then materialize ``out_sim_results``, ``out_reproduction`` (quick; unless not
    ``reproduction``) and the ``reports`` group, and print the index path."""
    import dagster as dg

    from assets.reports import reports_dir
    from pipelines.definitions import defs
    from studies import reproduction as repro

    t0 = time.perf_counter()
    if simulate:
        walls = simulate_quick(workers, everything)
        console.print(
            f"quick reproduction studies: {len(walls)} scenarios simulated in {time.perf_counter() - t0:.0f} s"
            + ("" if everything else f" ({', '.join(SLOW_POLICIES)}: `varcap reproduce --quick`)")
        )
    keys = ["out_sim_results", *(["out_reproduction"] if reproduction else [])] + [
        k.to_user_string() for k in dg.AssetSelection.groups("reports").resolve(defs.resolve_asset_graph())
    ]
    if not _has_tables(list(HARMONY_REPORT_TABLES)):  # Harmony's chapter needs `varcap sweep harmony`
        keys.remove("report_harmony")
        console.print("Harmony's chapter: `varcap sweep harmony` renders it (not part of `varcap run`)")
    t1 = time.perf_counter()
    with console.status("simulation results, reproduction table and reports …"):
        ok = _materialize(keys, console, {"out_reproduction": {"config": {"profile": repro.QUICK.name}}})
    if not ok:
        return 1
    index = reports_dir() / "index.html"
    console.print(f"reports rendered in {time.perf_counter() - t1:.0f} s: [bold]{index}[/]")
    return 0


def cmd_reports(args: argparse.Namespace) -> int:
    """Re-render the reports from the results there are (e.g. after ``varcap reproduce``)."""
    from rich.console import Console

    prepare_dagster_home()
    return run_reports(Console(), 1, simulate=False, reproduction=False)


def cmd_figures(args: argparse.Namespace) -> int:
    """Copy the README's figures from the rendered reports into docs/figures."""
    from assets.reports import copy_readme_figures

    try:
        out = copy_readme_figures(paths.home() / "docs" / "figures")
    except FileNotFoundError as e:
        raise SystemExit(str(e)) from None
    for p in out:
        print(p)
    return 0


def cmd_ui(args: argparse.Namespace) -> int:
    prepare_dagster_home()
    exe = (
        shutil.which("dagster", path=os.path.dirname(sys.executable)) or shutil.which("dagster") or "dagster"
    )
    home = Path(os.environ["DAGSTER_HOME"])
    # the code location is named `varcap` (as [tool.dagster] says); run from DAGSTER_HOME so Dagster does not
    # warn about the repository's dagster.yaml (the template copied there) being unused
    workspace = home / "workspace.yaml"
    repo = Path(__file__).resolve().parents[1]
    workspace.write_text(
        "load_from:\n  - python_module:\n      module_name: pipelines.definitions\n"
        f"      location_name: varcap\n      working_directory: {repo}\n"
    )
    cmd = [exe, "dev", "-w", str(workspace), "-h", args.host, "-p", str(args.port)]
    print(f"DAGSTER_HOME={home}\n{' '.join(cmd)}\nopen http://{args.host}:{args.port}")
    # `dagster dev` is superseded by `dg dev`, which needs a dg project layout that varcap does not use
    env = {**os.environ, "PYTHONWARNINGS": "ignore:Function `dev_command` is superseded"}
    return subprocess.call(cmd, cwd=home, env=env)


def _parse_sets(items: Sequence[str] | None) -> dict[str, str]:
    out = {}
    for it in items or []:
        if "=" not in it:
            raise SystemExit(f"--set expects key=value, got {it!r}")
        k, v = it.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def load_jobs_arg(spec: str, cores: float):
    """``PATH`` (CSV/parquet) or ``warehouse:WORKLOAD`` (core_jobs, read-only; oversize jobs dropped)."""
    from sim.api import read_jobs

    if spec.startswith("warehouse:"):
        import duckdb

        from sim.tables import read_core_jobs
        from sim.workloads import to_sim_jobs

        workload = spec.split(":", 1)[1]
        path = paths.warehouse_path()
        if not path.exists():
            raise SystemExit(f"{path} not found: run `make run` (or `varcap run`) first")
        with duckdb.connect(str(path), read_only=True) as con:
            df = read_core_jobs(con, workload)
        if df.height == 0:
            raise SystemExit(f"no jobs for workload {workload!r} in core_jobs")
        jobs, dropped = to_sim_jobs(df, cores)
        if dropped:
            print(f"note: {dropped} {workload} jobs need more than {cores:g} cores and were left out")
        return jobs
    return read_jobs(spec)


def capacity_file(spec: str) -> str | None:
    """The trace file ``--capacity`` names, or None for a generated kind (see :func:`load_capacity_arg`)."""
    from sim.capacity import CapacitySpec

    return CapacitySpec.file_path(spec)


def load_capacity_arg(spec: str, machines: int, horizon_s: float):
    """``PATH`` (time_s, machines_alive | time_s, machine, cores_available) or a generated kind of
    :class:`sim.capacity.CapacitySpec`, e.g. ``random-walk:changes_per_hour=1,step=0.15,seed=0``."""
    from sim.capacity import CapacitySpec

    try:
        parsed = CapacitySpec.parse(spec)
        if parsed.needs_signal:
            raise ValueError(f"kind {parsed.kind!r} is built from a grid signal by the capacity assets")
        return parsed.build(machines, horizon_s)
    except ValueError as e:
        raise SystemExit(f"--capacity: {e}") from e


def cmd_simulate(args: argparse.Namespace) -> int:
    import json
    import warnings

    from rich.console import Console
    from rich.table import Table

    from pipelines.guard import write_outputs
    from sim import simulate
    from sim.engine import choose_engine
    from sim.validate import check_inputs
    from sim.warmup import ensure_warm

    console = Console()
    check_policy_args(args.policy, args.set)
    jobs = load_jobs_arg(args.jobs, args.cores)
    with warnings.catch_warnings():  # the contract, checked before anything runs (simulate re-checks)
        warnings.simplefilter("ignore")
        check_inputs(
            jobs,
            capacity_file(args.capacity),
            args.machines,
            args.cores,
            args.horizon_s,
            None if args.jobs.startswith("warehouse:") else args.jobs,
        )
    cap = load_capacity_arg(args.capacity, args.machines, args.horizon_s)
    if choose_engine(jobs.height, args.seed, args.machines) == "compiled":  # small ones run interpreted
        ensure_warm(console.print)
    t0 = time.perf_counter()
    with console.status(f"simulating {jobs.height:,} jobs with {args.policy} …"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # jobs after the horizon: reported below
        r = simulate(
            jobs,
            cap,
            args.machines,
            args.cores,
            args.horizon_s,
            args.policy,
            _parse_sets(args.set),
            args.seed,
            window_start_s=args.window_start_s,
            window_end_s=args.window_end_s,
        )
    wall = time.perf_counter() - t0
    table = Table(
        title=f"{args.policy} — {jobs.height:,} jobs, {args.machines}×{args.cores:g} cores, {wall:.2f} s"
    )
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k, v in r.metrics.items():
        table.add_row(k, f"{v:,.4f}" if isinstance(v, float) else f"{v:,}")
    console.print(table)
    if r.jobs_after_horizon:
        console.print(f"note: {r.jobs_after_horizon} jobs submitted at or after the horizon were left out")
    outputs = []
    if args.out:
        outputs.append((args.out, lambda p: p.write_text(json.dumps(r.metrics, indent=2))))
    if args.jobs_out:
        outputs.append(
            (
                args.jobs_out,
                lambda p: (
                    r.jobs.write_parquet(p) if args.jobs_out.endswith(".parquet") else r.jobs.write_csv(p)
                ),
            )
        )
    write_outputs(outputs)  # all or nothing: a failure leaves existing files untouched
    if args.out:
        console.print(f"metrics → {args.out}")
    if args.jobs_out:
        console.print(f"per-job table → {args.jobs_out}")
    return 0


def cmd_warm(args: argparse.Namespace) -> int:
    """Compile and cache the simulator's numba kernel for this environment (``make install`` runs it)."""
    from sim.warmup import ensure_warm, warm

    if ensure_warm():
        return 0
    if args.force:
        print(f"simulator cache was warm; warm-up re-run in {warm():.1f} s")
    else:
        print("simulator cache is warm: nothing to compile")
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    """Run one read-only SQL query against the warehouse and print the result."""
    import duckdb

    path = paths.warehouse_path()
    if not path.exists():
        raise SystemExit(f"{path} not found: run `make run` first")
    from pipelines.guard import connect_readonly

    with connect_readonly(path) as con:
        try:
            rel = con.sql(args.query)
        except duckdb.Error as e:
            raise SystemExit(f"query failed: {e}") from e
        if rel is None:
            return 0
        df = rel.pl()
    if args.csv:
        df.write_csv(args.csv)
        print(f"{df.height} rows → {args.csv}")
    else:
        import polars as pl

        with pl.Config(tbl_rows=args.rows, tbl_cols=-1, fmt_str_lengths=60):
            print(df)
    return 0


@contextlib.contextmanager
def _guarded_run(console) -> Iterator[tuple[object, dict[str, str]]]:
    """Around one in-process Dagster run: frees the pool slots of dead runs first, watches for a step
    waiting on a slot meanwhile; yields (instance, tags for the run)."""
    import dagster as dg

    from pipelines import guard

    instance = dg.DagsterInstance.get()
    for r in guard.free_dead_slots(instance):
        console.print(f"freed the {guard.POOL} pool slots of run {r}, whose process had died", style="yellow")
    watcher = guard.SlotWatcher(instance, lambda m: console.print(m, style="yellow", markup=False))
    watcher.start()
    try:
        yield instance, guard.run_tags()
    finally:
        watcher.stop()


def _print_failures(events, console) -> None:
    from pipelines import guard

    for line in guard.failure_lines(events):
        console.print(line, style="red", markup=False, highlight=False)


def _materialize(keys: list, console, ops_config: dict | None = None) -> bool:
    """Materialize ``keys`` (with their checks) in-process, ``ops_config`` as the run's op config; print
    failures. True on success."""
    import dagster as dg

    from pipelines.definitions import ALL_ASSETS, ALL_CHECKS, resources

    with _guarded_run(console) as (instance, tags):
        result = dg.materialize(
            [*ALL_ASSETS, *ALL_CHECKS],
            selection=[dg.AssetKey(k) for k in keys],
            instance=instance,
            resources=resources(),  # built now: honours the current VARCAP_HOME / VARCAP_WAREHOUSE
            tags=tags,
            run_config={
                "loggers": {"console": {"config": {"log_level": "WARNING"}}},
                **({"ops": ops_config} if ops_config else {}),
            },
            raise_on_error=False,
        )
    _print_failures(result.all_events, console)
    return result.success


def _ensure_sim_inputs(console) -> bool:
    """Materialize raw → core if the warehouse has no core tables, then ``out_sim_inputs``."""
    import dagster as dg

    if not _has_tables(["core_jobs", "core_grid_carbon"]):
        console.print("warehouse has no core tables: materializing raw → core first (embedded samples)")
        from pipelines.definitions import defs

        keys = dg.AssetSelection.groups("raw", "core").resolve(defs.resolve_asset_graph())
        if not _materialize([k.to_user_string() for k in keys], console):
            return False
    return _materialize(["out_sim_inputs"], console)


def cmd_reproduce(args: argparse.Namespace) -> int:
    """Simulate the reproduction studies (cached scenarios are skipped), materialize ``out_reproduction``
    and print it."""
    import duckdb
    from rich.console import Console
    from rich.table import Table

    from studies import reproduction as repro

    prepare_dagster_home()
    console = Console(width=max(Console().width, 160))
    pr = repro.QUICK if args.quick else repro.FULL
    t0 = time.time()
    if not _ensure_sim_inputs(console):
        return 1
    walls = repro.run_profile(pr, args.workers)
    sim_s = sum(walls.values())
    # seed 004's row reads the Harmony study (its own asset group); quick runs only its three headline runs
    if not run_harmony("harmony-headline" if args.quick else "harmony", show=False):
        return 1
    if not _materialize(
        ["out_reproduction"], console, {"out_reproduction": {"config": {"profile": pr.name}}}
    ):
        return 1
    with duckdb.connect(str(paths.warehouse_path()), read_only=True) as con:
        df = con.sql(
            "SELECT * FROM out_reproduction WHERE profile = ? AND headline_id NOT LIKE '%@%'",
            params=[pr.name],
        ).pl()
    t = Table(title=f"out_reproduction ({pr.name}): {int(df['within_band'].sum())}/{df.height} within band")
    for c in ("headline", "paper", "varcap ± 95 % CI", "band", "within"):
        t.add_column(c, overflow="fold")
    for r in df.iter_rows(named=True):
        t.add_row(
            r["headline_id"],
            f"{r['anchor_value']:g} {r['unit']}",
            "not run"
            if r["varcap_mean"] is None
            else f"{r['varcap_mean']:.3g} [{r['ci_low']:.3g}, {r['ci_high']:.3g}]",
            f"[{r['band_low']:.3g}, {r['band_high']:.3g}]",
            "[green]yes[/]" if r["within_band"] else "[red]no[/]",
        )
    console.print(t)
    console.print(
        f"{len(walls)} scenarios simulated ({sim_s:.0f} s of simulation) in {time.time() - t0:.0f} s wall; "
        f'all readings and explanations: varcap sql "select * from out_reproduction"'
    )
    return 0


def _has_tables(names: list[str]) -> bool:
    import duckdb

    p = paths.warehouse_path()
    if not p.exists():
        return False
    with duckdb.connect(str(p), read_only=True) as con:
        have = {r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()}
    return set(names) <= have


def sweep_run_config(
    executor: str, max_workers: int, dask_address: str | None, study_name: str | None = None
) -> dict:
    """Run config of a sweep job: ``max_workers`` processes forked from a warm server that has loaded the
    definitions once, or a dask cluster (existing or local); with ``study_name``, its scenarios to
    simulate are dealt into ``max_workers`` steps."""
    if executor == "multiprocess":
        warm = {"forkserver": {"preload_modules": ["pipelines.definitions"]}}
        cfg: dict = {"execution": {"config": {"max_concurrent": max_workers, "start_method": warm}}}
    else:
        cluster = (
            {"existing": {"address": dask_address}}
            if dask_address
            else {"local": {"n_workers": max_workers, "threads_per_worker": 1}}
        )
        cfg = {"execution": {"config": {"cluster": cluster}}}
    if study_name:
        from assets.sim import study_asset_name

        plan = f"plan_{study_name.replace('-', '_')}"
        cfg["ops"] = {study_asset_name(study_name): {"ops": {plan: {"config": {"chunks": max_workers}}}}}
    return cfg


def local_sweep_job(study_name: str):
    """The study's sweep job as ``varcap sweep`` runs it by default: in this process (run it with
    :func:`local_sweep_run_config`)."""
    from pipelines.definitions import SWEEP_JOBS, defs

    return defs.resolve_job_def(SWEEP_JOBS[study_name].name)


def local_sweep_run_config(study_name: str, workers: int) -> dict:
    """Run config for :func:`local_sweep_job`: the plan step simulates on ``workers`` warm processes; the
    results go to the current ``VARCAP_HOME``'s warehouse."""
    from assets.resources import warehouse_run_config
    from assets.sim import study_asset_name

    plan = f"plan_{study_name.replace('-', '_')}"
    return {
        "ops": {study_asset_name(study_name): {"ops": {plan: {"config": {"local_workers": workers}}}}},
        "resources": warehouse_run_config(),
        "loggers": {"console": {"config": {"log_level": "WARNING"}}},
    }


def run_sweep(
    study_name: str,
    max_workers: int,
    executor: str = "multiprocess",
    dask_address: str | None = None,
    progress: bool = True,
) -> bool:
    """Materialize the study's sweep asset over all its partitions and then ``out_sim_results``, in one
    Dagster run (scenarios run in parallel on the executor). Returns success."""
    from rich.console import Console

    from studies import sweep
    from studies.catalogue import study

    console = Console()
    scs = study(study_name)
    todo = [s for s in scs if not sweep.is_cached(s)]
    if executor == "multiprocess" and todo:
        sweep.start_pool(max_workers, todo)  # they import the simulator (and its needs) while Dagster loads
    try:
        return _run_sweep(study_name, scs, max_workers, executor, dask_address, progress, console)
    finally:
        sweep.stop_pool()


def _run_sweep(
    study_name: str,
    scs: list,
    max_workers: int,
    executor: str,
    dask_address: str | None,
    progress: bool,
    console,
) -> bool:
    import threading

    import dagster as dg
    from tqdm import tqdm

    from assets.sim import study_asset_name
    from studies import sweep

    if any(sweep.needs_inputs(s) for s in scs) and not _ensure_sim_inputs(console):
        return False
    done_before = sum(sweep.is_cached(s) for s in scs)
    if done_before < len(scs):  # compile once here, not in every worker process side by side
        from sim.warmup import ensure_warm

        ensure_warm(console.print)
    keys = sweep.partition_keys(scs)
    tags = {
        "dagster/asset_partition_range_start": keys[scs[0].id],
        "dagster/asset_partition_range_end": keys[scs[-1].id],
        "varcap/study": study_name,
    }
    run_config = {
        **sweep_run_config(executor, max_workers, dask_address, study_name),
        "loggers": {"console": {"config": {"log_level": "WARNING"}}},
    }
    box: dict = {}
    t0 = time.time()

    def _go() -> None:
        with _guarded_run(console) as (instance, guard_tags):
            if executor == "multiprocess":
                # one in-process Dagster run: its plan step simulates on max_workers warm processes, then
                # out_sim_results is rebuilt in the same run
                res = local_sweep_job(study_name).execute_in_process(
                    run_config=local_sweep_run_config(study_name, max_workers),
                    instance=instance,
                    tags={**guard_tags, **tags},
                    raise_on_error=False,
                )
                box["success"], box["events"] = res.success, res.all_events
                return
            # other executors start processes that rebuild the job: a reconstructable target
            job = dg.build_reconstructable_job(
                "pipelines.definitions", "sweep_job", reconstructable_args=(study_name, executor)
            )
            with dg.execute_job(
                job, instance=instance, run_config=run_config, tags={**guard_tags, **tags}
            ) as res:
                box["success"], box["events"] = res.success, res.all_events

    th = threading.Thread(target=_go)
    th.start()
    ids = [s.id for s in scs]
    with tqdm(
        total=len(scs), initial=done_before, desc=study_name, unit="scenario", disable=not progress
    ) as bar:
        seen = done_before
        while th.is_alive():
            th.join(1.0)
            fresh = sum(
                1
                for i in ids
                if (f := sweep.runs_dir() / i / "run.json").is_file() and f.stat().st_mtime >= t0
            )
            now = min(len(ids), done_before + fresh)
            bar.update(now - seen)
            seen = now
        bar.update(len(ids) - seen)
    sweep.stop_pool(wait=False)
    if not box.get("success"):
        _print_failures(box.get("events", []), console)
        return False
    if executor == "multiprocess":
        console.print(
            f"{study_asset_name(study_name)}: {len(ids)} scenarios and out_sim_results in "
            f"{time.time() - t0:.1f} s"
        )
        return True
    console.print(f"{study_asset_name(study_name)}: {len(ids)} scenarios in {time.time() - t0:.1f} s")
    return _materialize(["out_sim_results"], console)  # the dask job leaves it out (sweep_job)


def study_results(study_name: str):
    """The study's rows of ``out_sim_results`` (read-only), in catalogue order, labelled with their partition
    keys (as the UI shows them)."""
    import polars as pl

    from studies import sweep
    from studies.catalogue import study

    scs = study(study_name)
    keys = sweep.partition_keys(scs)
    order = pl.DataFrame(
        {"scenario_id": [s.id for s in scs], "label": [keys[s.id] for s in scs]}
    ).with_row_index("i")
    from pipelines.guard import connect_readonly

    with connect_readonly(paths.warehouse_path()) as con:
        df = con.sql("SELECT * FROM out_sim_results").pl()
    return order.join(df, on="scenario_id", how="inner").sort("i").drop("i")


def _print_summary(df, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title)
    cols = [
        "scenario_id",
        "label",
        "machines",
        "terminations",
        "goodput",
        "wasted_fraction",
        "latency_p50_s",
        "wall_s",
    ]
    for c in cols:
        t.add_column(c, overflow="fold")
    for r in df.select(cols).iter_rows():
        t.add_row(
            *(
                f"{v:.4f}"
                if isinstance(v, float) and abs(v) < 10
                else (f"{v:,.1f}" if isinstance(v, float) else str(v))
                for v in r
            )
        )
    Console(width=max(Console().width, 150)).print(t)


def cmd_sweep(args: argparse.Namespace) -> int:
    prepare_dagster_home()
    from studies.harmony import HARMONY_STUDIES

    if args.study in HARMONY_STUDIES:  # seed 004: its own asset group (studies/harmony.py)
        return 0 if run_harmony(args.study) else 1
    if not run_sweep(args.study, args.max_workers, args.executor, args.dask_address):
        return 1
    df = study_results(args.study)
    _print_summary(df, f"{args.study}: {df.height} scenarios")
    return 0


def run_harmony(study: str, show: bool = True) -> bool:
    """Materialize the ``harmony`` asset group for ``study`` (raw → core first on an empty warehouse);
    ``show``: print the study's results table."""
    from rich.console import Console

    console = Console()
    if not _has_tables(["core_jobs", "core_power_price"]):
        import dagster as dg

        from pipelines.definitions import defs

        keys = dg.AssetSelection.groups("raw", "core").resolve(defs.resolve_asset_graph())
        if not _materialize([k.to_user_string() for k in keys], console):
            return False
    keys = ["out_harmony_task_classes", "out_harmony_demand", "out_harmony_results", "out_harmony_intervals"]
    wl = "borg2011-7d" if study == "harmony-7d" else "borg2011-sample"
    ok = _materialize(
        keys,
        console,
        {
            "out_harmony_demand": {"config": {"workload": wl}},
            "out_harmony_results": {"config": {"study": study}},
        },
    )
    if ok and study not in ("harmony-smoke", "harmony-headline"):  # the chapter and the index
        ok = _materialize(["report_harmony", "report_index"], console)
        if ok:
            from assets.reports import reports_dir

            console.print(f"Harmony's chapter: [bold]{reports_dir() / 'harmony.html'}[/]")
    if ok and show:
        import duckdb

        with duckdb.connect(str(paths.warehouse_path()), read_only=True) as con:
            df = con.sql(
                "SELECT scheme, omega, round(energy_kwh, 1) kwh, round(energy_cost_usd, 2) usd, "
                "round(delay_p50_s_all, 1) p50_s, round(delay_p90_s_all, 1) p90_s, round(delay_p99_s_all, 1) "
                "p99_s, unscheduled FROM out_harmony_results WHERE study = ? ORDER BY scheme, omega",
                params=[study],
            ).pl()
        console.print(df)
    return ok


def cmd_results(args: argparse.Namespace) -> int:
    if not paths.warehouse_path().exists():
        print(f"{paths.warehouse_path()} not found: run `make run` and `varcap sweep {args.study}` first")
        return 1
    df = study_results(args.study)
    if df.height == 0:
        print(f"no results for {args.study}: run `varcap sweep {args.study}`")
        return 1
    if args.out:
        df.write_parquet(args.out) if args.out.endswith(".parquet") else df.write_csv(args.out)
        print(f"{df.height} rows → {args.out}")
        return 0
    _print_summary(df, f"{args.study}: {df.height} scenarios")
    return 0


def cmd_studies(args: argparse.Namespace) -> int:
    """List the catalogued studies, or one study's scenarios with their partition keys and cache state."""
    from rich.console import Console
    from rich.table import Table

    from studies import sweep
    from studies.catalogue import STUDIES, study

    console = Console(width=max(Console().width, 150))
    if args.study:
        scs = study(args.study)
        keys = sweep.partition_keys(scs)
        t = Table(title=f"{args.study}: {len(scs)} scenarios (partitions of {args.study} in the UI)")
        for c in ("partition key", "scenario id", "cached"):
            t.add_column(c, overflow="fold")
        for sc in scs:
            t.add_row(keys[sc.id], sc.id, "yes" if sweep.is_cached(sc) else "")
        console.print(t)
        return 0
    t = Table(title="studies (varcap sweep STUDY; varcap studies STUDY lists its scenarios)")
    for c in ("study", "scenarios", "workloads", "policies"):
        t.add_column(c, overflow="fold")
    for name in STUDIES:
        scs = study(name)
        t.add_row(
            name,
            str(len(scs)),
            ", ".join(dict.fromkeys(s.workload for s in scs)),
            ", ".join(dict.fromkeys(s.policy for s in scs)),
        )
    console.print(t)
    return 0


def cmd_policies(args: argparse.Namespace) -> int:
    """List the registered policies with their parameters (``--set key=value``) and defaults."""
    import dataclasses

    from rich.console import Console
    from rich.table import Table

    from sim.policies import available, get_policy

    t = Table(title="policies (varcap simulate --policy NAME --set key=value)")
    for c in ("policy", "parameters (default)"):
        t.add_column(c, overflow="fold")
    for name in available():
        pol = get_policy(name)
        fields = dataclasses.fields(pol.Params)
        t.add_row(name, ", ".join(f"{f.name}={_default(f)}" for f in fields) or "-")
    Console(width=max(Console().width, 120)).print(t)
    return 0


def _default(f) -> str:
    import dataclasses

    if f.default is not dataclasses.MISSING:
        return "auto" if f.default is None else str(f.default)
    if f.default_factory is not dataclasses.MISSING:
        return str(f.default_factory())
    return "required"


def check_policy_args(policy: str, sets: Sequence[str] | None) -> None:
    """``--policy``/``--set`` name a known policy and its parameters: ValueError naming them otherwise
    (checked before any data is loaded)."""
    from sim.policies import get_policy, parse_params

    try:
        parse_params(get_policy(policy), _parse_sets(sets))
    except (KeyError, TypeError, ValueError) as e:
        msg = e.args[0] if e.args else str(e)
        raise ValueError(f"--policy {policy}: {msg} (see `varcap policies`)") from e


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="varcap", description="variable-capacity scheduling workbench")
    ap.add_argument("--debug", action="store_true", help="show Python tracebacks (also VARCAP_DEBUG=1)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="materialize every asset (embedded samples by default)")
    r.add_argument("--source", choices=["sample", "remote"], help="raw data source (default: sample)")
    r.add_argument("--groups", nargs="*", help="only these asset groups (raw, core, …)")
    r.add_argument(
        "--free-slots",
        nargs="+",
        metavar="RUN_ID",
        help="free the duckdb_write pool slots held by these (dead) runs, then exit",
    )
    r.add_argument("--workers", type=int, default=2, help="processes for the quick studies (default 2)")
    r.add_argument(
        "--no-sim",
        action="store_true",
        help="render the reports from the results there are; simulate nothing",
    )
    r.add_argument(
        "--quick-all",
        action="store_true",
        help=f"simulate every quick scenario (by default {', '.join(SLOW_POLICIES)} are left to varcap reproduce)",
    )
    r.set_defaults(fn=cmd_run)
    rr = sub.add_parser("reports", help="re-render the chapter reports from the results in the warehouse")
    rr.set_defaults(fn=cmd_reports)
    fg = sub.add_parser("figures", help="copy the README's figures from the rendered reports to docs/figures")
    fg.set_defaults(fn=cmd_figures)
    u = sub.add_parser("ui", help="Dagster UI (dagster dev) on 127.0.0.1:3000")
    u.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    u.add_argument("--port", type=int, default=3000, help="port (default 3000)")
    u.set_defaults(fn=cmd_ui)
    s = sub.add_parser("simulate", help="simulate one scheduler on one workload and capacity trace")
    s.add_argument(
        "--jobs", required=True, help="JOBS.csv|parquet or warehouse:WORKLOAD (azure, borg2011, …)"
    )
    s.add_argument(
        "--capacity",
        required=True,
        help="CAP.csv|parquet or KIND[:key=value,…]: random-walk:changes_per_hour=1,step=0.15,seed=0, "
        "random-uniform, constant:fraction=0.7, risk-aware-walk:m_avg=24,m_ra=8,period_s=1200, harvest:pool=64",
    )
    s.add_argument("--machines", type=int, required=True, help="machines on the platform (indices 0…M−1)")
    s.add_argument("--cores", type=float, required=True, help="cores per machine")
    s.add_argument("--horizon-s", type=float, required=True, help="simulated time in seconds (e.g. 2592000)")
    s.add_argument("--policy", default="ff", help="scheduler (default ff; list: `varcap policies`)")
    s.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="policy parameter (repeatable; `varcap policies`)"
    )
    s.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    s.add_argument("--window-start-s", type=float, default=0.0, help="measurement window start (warm-up)")
    s.add_argument(
        "--window-end-s", type=float, default=None, help="measurement window end (default: horizon)"
    )
    s.add_argument("--jobs-out", help="write the per-job table (csv or parquet)")
    s.add_argument("--out", help="write the metric dict as JSON")
    s.set_defaults(fn=cmd_simulate)
    w = sub.add_parser("sweep", help="simulate every scenario of a study in parallel (Dagster run)")
    w.add_argument("study", help="study name: thesis-ch4-synthetic, smoke, … (list: `varcap studies`)")
    w.add_argument(
        "--max-workers", type=int, default=os.cpu_count() or 1, help="simulation processes (default: cores)"
    )
    w.add_argument(
        "--executor",
        choices=["multiprocess", "dask"],
        default="multiprocess",
        help="multiprocess: warm local processes (default); dask: one step per chunk on a dask cluster",
    )
    w.add_argument("--dask-address", help="scheduler of an existing dask.distributed cluster")
    w.set_defaults(fn=cmd_sweep)
    rs = sub.add_parser("results", help="print or export a study's rows of out_sim_results")
    rs.add_argument("study", help="study name (list: `varcap studies`)")
    st = sub.add_parser("studies", help="list the studies, or one study's scenarios and partition keys")
    st.add_argument("study", nargs="?", help="list this study's scenarios")
    st.set_defaults(fn=cmd_studies)
    po = sub.add_parser("policies", help="list the scheduling policies with their parameters and defaults")
    po.set_defaults(fn=cmd_policies)
    rs.add_argument("--out", help="write CSV or parquet instead of printing")
    rs.set_defaults(fn=cmd_results)
    rp = sub.add_parser("reproduce", help="run the seed-reproduction studies and print out_reproduction")
    rp.add_argument("--quick", action="store_true", help="small platforms, short horizons, 3 replicates")
    rp.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="simulation processes")
    rp.set_defaults(fn=cmd_reproduce)
    wm = sub.add_parser("warm", help="compile the simulator once for this environment (numba cache)")
    wm.add_argument("--force", action="store_true", help="run the warm-up even if the cache is warm")
    wm.set_defaults(fn=cmd_warm)
    q = sub.add_parser("sql", help="run a read-only SQL query against the warehouse")
    q.add_argument("query")
    q.add_argument("--rows", type=int, default=40, help="rows to print")
    q.add_argument("--csv", help="write the result to this CSV file instead")
    q.set_defaults(fn=cmd_sql)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. An error ends as one line ``varcap: error: …`` on stderr with exit code 2 (bad
    input or usage) or 1 (anything else); ``--debug`` (anywhere) or ``VARCAP_DEBUG=1`` re-raises it."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("VARCAP_DEBUG") == "1"
    args = build_parser().parse_args([a for a in argv if a != "--debug"])
    args.debug = debug  # commands show Dagster's own log too
    try:
        return int(args.fn(args) or 0)
    except KeyboardInterrupt:
        print("varcap: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if debug:
            raise
        from pipelines.guard import user_error

        code, msg = user_error(e)
        print(f"varcap: error: {msg}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
