"""``varcap sweep``, ``varcap results`` and ``varcap studies``: a study's scenarios as one Dagster run, its
rows of ``out_sim_results``, the study catalogue (and Harmony's own asset group)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from contextlib import contextmanager

from pipelines.cli.common import (
    _ensure_sim_inputs,
    _guarded_run,
    _has_tables,
    _materialize,
    _print_failures,
    dagster_loggers,
    doing,
    materialized_profile,
    prepare_dagster_home,
)
from sim import paths

#: the phase :func:`sim.warmup.ensure_warm` is, as the heartbeat lines name it
WARM_PHASE = "loading the simulator's numba cache, compiling it if cold"

#: Harmony's assets `varcap run` materializes (run_harmony below)
HARMONY_ASSETS = (
    "out_harmony_task_classes",
    "out_harmony_demand",
    "out_harmony_results",
    "out_harmony_intervals",
)


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
        from assets.sim import plan_config

        cfg["ops"] = plan_config(study_name, {"chunks": max_workers})
    return cfg


def sweep_definitions(study_name: str, max_chunks: int | None = None):
    """The definitions one study's sweep needs, and nothing else: the study's asset, ``out_sim_results``
    (downstream of every study asset, by key) with its checks, the resources, and the study's sweep job
    (``sweep__<study>``, as :data:`pipelines.definitions.SWEEP_JOBS` names it). Building them builds this
    study's scenarios only, not the whole catalogue's (what importing :mod:`pipelines.definitions`
    does). ``max_chunks``: the study asset's step slots (default :data:`assets.sim.MAX_CHUNKS`). KeyError
    for a study the catalogue does not hold."""
    import dagster as dg

    from assets.schema import ALL_TABLES
    from assets.sim import (
        MAX_CHUNKS,
        results_asset,
        run_resources,
        sim_checks,
        study_asset_def,
        study_asset_name,
    )

    def columns(spec: dg.AssetSpec) -> dg.AssetSpec:  # the data dictionary, as pipelines.definitions does
        table = ALL_TABLES.get(spec.key.to_user_string())
        return spec.merge_attributes(metadata=table.dagster_metadata()) if table else spec

    job = dg.define_asset_job(
        f"sweep__{study_name.replace('-', '_')}",
        selection=[study_asset_name(study_name), "out_sim_results"],
        executor_def=dg.multiprocess_executor,
    )
    return dg.Definitions(
        assets=dg.map_asset_specs(
            columns, [study_asset_def(study_name, max_chunks or MAX_CHUNKS), results_asset()]
        ),
        asset_checks=sim_checks,
        jobs=[job],
        resources=run_resources(),
    )


#: step slots of the study asset in a sweep run in this process: its plan step simulates on its own warm
#: workers and leaves every slot unused, and Dagster records each unused slot as a skipped step (an event
#: and a log line); one slot instead of 32 took a cached quick study's run from 0.75-0.88 to 0.54-0.62
#: CPU s (two pairs on repro-generic-quick, 2026-12-04)
LOCAL_CHUNKS = 1


def local_sweep_job(study_name: str):
    """The study's sweep job as ``varcap sweep`` runs it by default: in this process (run it with
    :func:`local_sweep_run_config`), from :func:`sweep_definitions` with :data:`LOCAL_CHUNKS` slots."""
    return sweep_definitions(study_name, LOCAL_CHUNKS).resolve_job_def(
        f"sweep__{study_name.replace('-', '_')}"
    )


#: uncached work (machine-days, every scenario with its machines given) that ``varcap sweep`` simulates in
#: its own process rather than on pool workers: each worker is a fresh Python importing the simulator and
#: loading the compiled kernel (and statsmodels for IAS), ~1.2 CPU s, while the smoke study's four
#: 40-machine, 3-day scenarios (480 machine-days) simulate in ~0.2 s each (a fresh clone's first
#: smoke sweep took 11.3 CPU s on 2 workers, 8.9 in process, the cached one 5.3-5.6)
IN_PROCESS_MACHINE_DAYS = 1_000.0


def small_work(scenarios: list) -> bool:
    """True if ``scenarios`` cost less to simulate in this process than pool workers cost to start: each
    names its machines (a platform sized from its workload is not known before the workload is built) and
    together they span at most :data:`IN_PROCESS_MACHINE_DAYS` machine-days."""
    return all(sc.machines > 0 for sc in scenarios) and (
        sum(sc.machines * sc.horizon_days for sc in scenarios) <= IN_PROCESS_MACHINE_DAYS
    )


def local_sweep_run_config(study_name: str, workers: int) -> dict:
    """Run config for :func:`local_sweep_job`: the plan step simulates on ``workers`` warm processes; the
    results go to the current ``VARCAP_HOME``'s warehouse."""
    from assets.resources import warehouse_run_config
    from assets.sim import plan_config

    return {
        # the results table rebuilds this study's rows (its other rows are kept as they are)
        "ops": {
            **plan_config(study_name, {"local_workers": workers}),
            "out_sim_results": {"config": {"studies": [study_name]}},
        },
        "resources": warehouse_run_config(),
        "loggers": dagster_loggers(),
    }


def run_sweep(
    study_name: str,
    max_workers: int,
    executor: str = "multiprocess",
    dask_address: str | None = None,
    progress: bool = True,
    force: bool = False,
) -> bool:
    """Materialize the study's sweep asset over all its partitions and then ``out_sim_results`` (scenarios
    run in parallel on the executor; ``multiprocess``: :func:`materialize_studies`). Returns success.
    Nothing is done (unless ``force``) when every scenario's cached run and the study's rows of
    ``out_sim_results`` are as the last sweep of the study left them (:func:`sweep_state`)."""
    from rich.console import Console

    from assets.content_keys import read_stamp, write_stamp

    console = Console()
    stamp = sweep_stamp_path(study_name)
    if not force and (before := read_stamp(stamp)) is not None and sweep_state(study_name) == before:
        console.print(
            f"{study_name}: every scenario cached and recorded, its rows of out_sim_results as the last "
            "sweep left them: nothing to do (`varcap sweep --force` records them again)",
            soft_wrap=True,
        )
        return True
    if executor == "multiprocess":
        ok = materialize_studies([study_name], max_workers, console, progress=progress)
    else:
        ok = _run_dask_sweep(study_name, max_workers, dask_address, progress, console)
    if ok and (after := sweep_state(study_name)) is not None:
        write_stamp(stamp, after)
    return ok


def recorded_stamp_path(study_name: str):
    """Where the state of ``study_name``'s cached runs its last recording left is kept (:func:`runs_state`;
    in the Dagster instance's home, beside the partitions it recorded)."""
    return paths.dagster_home() / "varcap" / "recorded" / f"{study_name}.json"


def runs_state(study_name: str) -> dict | None:
    """The state of study ``study_name``'s cached runs (each ``run.json``, hashed); None when a scenario has
    no valid cached result (:func:`studies.sweep.is_cached`)."""
    from assets.content_keys import digest, files_fingerprint
    from studies import sweep
    from studies.catalogue import study

    scs = study(study_name)
    if not all(sweep.is_cached(s) for s in scs):
        return None
    runs = sweep.runs_dir()
    return {"runs": digest(files_fingerprint([runs / s.id / "run.json" for s in scs], runs))}


def sweep_stamp_path(study_name: str):
    """Where the state the last sweep of ``study_name`` left is kept (in the Dagster instance's home,
    beside the partitions it recorded)."""
    return paths.dagster_home() / "varcap" / "sweeps" / f"{study_name}.json"


def sweep_state(study_name: str) -> dict | None:
    """The state of study ``study_name``'s results: its scenarios' cached runs (each ``run.json``, hashed)
    and its rows of ``out_sim_results`` in the warehouse (count and an order-insensitive hash). None when
    a scenario has no valid cached result (:func:`studies.sweep.is_cached`) or there is no such table."""
    import duckdb

    from assets.content_keys import digest, files_fingerprint
    from studies import sweep
    from studies.catalogue import study

    scs = study(study_name)
    if not all(sweep.is_cached(s) for s in scs):
        return None
    runs = sweep.runs_dir()
    wh = paths.warehouse_path()
    if not wh.is_file():
        return None
    ids = [s.id for s in scs]
    with duckdb.connect(str(wh), read_only=True) as con:
        try:
            n, h = con.execute(
                "SELECT count(*), sum(hash(t)::HUGEINT)::VARCHAR FROM out_sim_results t "
                "WHERE scenario_id IN (SELECT unnest(?::VARCHAR[]))",
                [ids],
            ).fetchone()
        except duckdb.CatalogException:
            return None
    if n != len(set(ids)):
        return None
    return {
        "warehouse": str(wh),
        "runs": digest(files_fingerprint([runs / i / "run.json" for i in ids], runs)),
        "rows": f"{n}:{h}",
    }


def materialize_studies(
    study_names: list[str],
    workers: int,
    console,
    progress: bool = True,
    results: bool = True,
    desc: str | None = None,
    export_inputs: bool = True,
) -> bool:
    """The one runner of ``varcap sweep``, ``varcap run`` and ``varcap reproduce``: materialize every
    partition of each study's asset ``out_sim__<study>``, one in-process Dagster run per study (a run
    targets one partition range of one partitions definition), then (``results``) ``out_sim_results``.

    Each run's plan step simulates the scenarios without a valid cached result on ``workers`` warm
    processes, started once here for all studies (:func:`studies.sweep.start_pool`); its summary step
    records every partition with its settings and metrics, a cached scenario as ``cache_hit`` without
    simulating it again. A scenario shared by two studies is simulated once. ``export_inputs``: first
    materialize ``out_sim_inputs`` if a scenario reads it (off when the caller just did). Returns success."""
    import threading

    from studies import sweep
    from studies.budget import over_budget
    from studies.catalogue import study

    by_study = {name: study(name) for name in study_names}
    recorded: list[str] = []
    if not results:  # a study whose cached runs its last run recorded as they are: not recorded again
        from assets.content_keys import read_stamp

        recorded = [n for n in by_study if (st := read_stamp(recorded_stamp_path(n))) and st == runs_state(n)]
        by_study = {n: scs for n, scs in by_study.items() if n not in recorded}
        if recorded:
            console.print(
                f"{len(recorded)} of {len(study_names)} studies: every scenario cached and recorded as it is; "
                "not recorded again",
                soft_wrap=True,
            )
    unique = {s.id: s for scs in by_study.values() for s in scs}
    scs = list(unique.values())
    if export_inputs and any(sweep.needs_inputs(s) for s in scs) and not _ensure_sim_inputs(console):
        return False
    budget_s = sweep.scenario_timeout_s()
    # a scenario that ran past this budget before (same code and inputs) is not tried again
    todo = [s for s in scs if not sweep.is_cached(s) and over_budget(s, budget_s) is None]
    if todo:  # compile once here, not in every worker process side by side
        from sim.warmup import ensure_warm

        with doing(WARM_PHASE):
            ensure_warm(console.print)
        if small_work(todo):  # a few tiny scenarios: simulated here, no worker start-up
            workers = 1
        sweep.start_pool(workers, todo)  # they import the simulator (and its needs) while Dagster loads
    box: dict = {"success": True, "events": []}
    t0 = time.time()

    def _go() -> None:
        with _guarded_run(console) as (instance, guard_tags):
            for name, study_scs in by_study.items():
                res = _study_run(
                    name, study_scs, workers, instance, guard_tags, results and len(by_study) == 1
                )
                box["events"] += res.all_events
                if not res.success:
                    box["success"] = False
                    return
                if not results and (state := runs_state(name)) is not None:
                    from assets.content_keys import write_stamp

                    write_stamp(recorded_stamp_path(name), state)

    try:
        th = threading.Thread(target=_go)
        th.start()
        _follow(th, scs, len(scs) - len(todo), t0, desc or ", ".join(study_names), progress)
    finally:
        sweep.stop_pool(wait=False)
    if not box["success"]:
        _print_failures(box["events"], console)
        return False
    from assets.sim import study_asset_name

    names = ", ".join(study_asset_name(n) for n in by_study)
    if results and len(by_study) > 1 and not _materialize(["out_sim_results"], console):
        return False
    if by_study:
        console.print(
            f"{names}: {len(scs)} scenarios ({len(todo)} simulated){' and out_sim_results' if results else ''} "
            f"in {time.time() - t0:.1f} s"
        )
    return True


def _study_run(name: str, scs: list, workers: int, instance, tags: dict, results: bool):
    """One in-process Dagster run over every partition of study ``name`` (with ``results``: its sweep job,
    which rebuilds ``out_sim_results`` in the same run)."""
    import dagster as dg

    from assets.sim import study_asset_name
    from studies import catalogue

    keys = catalogue.partition_keys(name)
    run_tags = {
        **tags,
        "dagster/asset_partition_range_start": keys[scs[0].id],
        "dagster/asset_partition_range_end": keys[scs[-1].id],
        "varcap/study": name,
    }
    run_config = local_sweep_run_config(name, workers)
    if results:
        return local_sweep_job(name).execute_in_process(
            run_config=run_config, instance=instance, tags=run_tags, raise_on_error=False
        )
    run_config.pop("resources")  # the study asset alone holds no DuckDB resource
    run_config["ops"].pop("out_sim_results")
    return (
        sweep_definitions(name, LOCAL_CHUNKS)
        .resolve_implicit_global_asset_job_def()
        .execute_in_process(
            run_config=run_config,
            instance=instance,
            tags=run_tags,
            asset_selection=[dg.AssetKey(study_asset_name(name))],
            raise_on_error=False,
        )
    )


def _follow(th, scs: list, done_before: int, t0: float, desc: str, progress: bool) -> int:
    """A progress bar over ``scs`` (results written since ``t0``) until thread ``th`` ends; returns how many
    of them were written since ``t0`` (seen at the last poll before ``th`` ended). Each second it
    looks only at the results not yet seen, by their path strings. A path built and resolved for every
    scenario at every poll cost 62 µs per scenario and poll, so the parent's cost grew with the study's
    size times its length: 49 ms a poll, about 8 CPU s over `varcap run`'s 792 quick scenarios (2.2 ms a
    poll with nothing seen yet, less as results arrive; measured 2026-12-02)."""
    import os

    from tqdm import tqdm

    from studies import sweep

    rd = str(sweep.runs_dir())
    pending = [os.path.join(rd, s.id, "run.json") for s in scs]
    with (
        doing(f"simulating {desc} ({len(pending)} scenarios)"),
        tqdm(total=len(pending), initial=done_before, desc=desc, unit="scenario", disable=not progress) as bar,
    ):
        total, fresh, seen = len(pending), 0, done_before
        while th.is_alive():
            th.join(1.0)
            left = []
            for f in pending:
                try:
                    written = os.stat(f).st_mtime >= t0
                except OSError:
                    written = False
                if written:
                    fresh += 1
                else:
                    left.append(f)
            pending = left
            now = min(total, done_before + fresh)
            bar.update(now - seen)
            seen = now
        bar.update(total - seen)
    return fresh


def _run_dask_sweep(
    study_name: str, max_workers: int, dask_address: str | None, progress: bool, console
) -> bool:
    """``varcap sweep --executor dask``: the study's reconstructable sweep job on a dask cluster, then
    ``out_sim_results`` in this process."""
    import threading

    import dagster as dg

    from assets.sim import study_asset_name
    from studies import sweep
    from studies.catalogue import study

    scs = study(study_name)
    if any(sweep.needs_inputs(s) for s in scs) and not _ensure_sim_inputs(console):
        return False
    done_before = sum(sweep.is_cached(s) for s in scs)
    if done_before < len(scs):  # compile once here, not in every worker process side by side
        from sim.warmup import ensure_warm

        with doing(WARM_PHASE):
            ensure_warm(console.print)
    from studies import catalogue

    keys = catalogue.partition_keys(study_name)
    tags = {
        "dagster/asset_partition_range_start": keys[scs[0].id],
        "dagster/asset_partition_range_end": keys[scs[-1].id],
        "varcap/study": study_name,
    }
    box: dict = {}
    t0 = time.time()
    with _dask_cluster(max_workers, dask_address) as address:
        run_config = {
            **sweep_run_config("dask", max_workers, address, study_name),
            "loggers": dagster_loggers(),
        }

        def _go() -> None:
            with _guarded_run(console) as (instance, guard_tags):
                # the executor starts processes that rebuild the job: a reconstructable target, built
                # from the study's definitions alone (pipelines.dask_sweep)
                job = dg.build_reconstructable_job(
                    "pipelines.dask_sweep", "dask_sweep_job", reconstructable_args=(study_name, max_workers)
                )
                with dg.execute_job(
                    job, instance=instance, run_config=run_config, tags={**guard_tags, **tags}
                ) as res:
                    box["success"], box["events"] = res.success, res.all_events

        th = threading.Thread(target=_go)
        th.start()
        _follow(th, scs, done_before, t0, study_name, progress)
    if not box.get("success"):
        _print_failures(box.get("events", []), console)
        return False
    console.print(f"{study_asset_name(study_name)}: {len(scs)} scenarios in {time.time() - t0:.1f} s")
    # the dask job leaves out_sim_results out (dask_sweep_job): its rows of this study are rebuilt here, as
    # the multiprocess sweep does, from the results asset and its checks alone (not every definition)
    from assets.sim import results_asset, sim_checks

    return _materialize(
        ["out_sim_results"],
        console,
        ops_config={"out_sim_results": {"config": {"studies": [study_name]}}},
        defs=[results_asset(), *sim_checks],
    )


@contextmanager
def _dask_cluster(workers: int, address: str | None) -> Iterator[str]:
    """The scheduler address of ``address``'s cluster, or of a local cluster of ``workers`` one-thread
    worker processes started here (each importing :mod:`pipelines.dask_worker` first, so it sizes step
    results quietly) and closed here when the sweep ends. dagster-dask left its own local cluster to the
    interpreter's exit, and a worker that has loaded Dagster and the simulator takes seconds to tear its
    interpreter down: past ``distributed``'s 4 s it was killed, with a warning line for each worker.
    Here the workers get :data:`DASK_WORKER_CLOSE_S`."""
    if address:
        yield address
        return
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        preload=["pipelines.dask_worker"],
    ) as cluster:
        yield cluster.scheduler_address
        cluster.sync(_close_workers, list(cluster.workers.values()), DASK_WORKER_CLOSE_S)


#: seconds a local dask worker process has to end after the sweep before it is killed
DASK_WORKER_CLOSE_S = 60.0


async def _close_workers(nannies: list, timeout_s: float) -> None:
    import asyncio

    await asyncio.gather(*(n.close(timeout=timeout_s) for n in nannies))


def study_results(study_name: str):
    """The study's rows of ``out_sim_results`` (read-only), in catalogue order, labelled with their partition
    keys (as the UI shows them)."""
    import polars as pl

    from studies.catalogue import study

    scs = study(study_name)
    from studies import catalogue

    keys = catalogue.partition_keys(study_name)
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


def study_file_arg(path: str) -> str:
    """Load the study file at ``path`` (SystemExit, one line, if it is invalid), keep it where the catalogue
    and the UI find it (a file outside :func:`studies.files.folders` is copied to the user folder, never
    over another study's file), put its studies into the catalogue; returns the study of its first
    profile."""
    import shutil
    from pathlib import Path

    from studies import files

    try:
        sf = files.load(path)
        home_dirs = [d.resolve() for d in files.folders()]
        if sf.path.resolve().parent not in home_dirs:
            dest = files.user_dir() / sf.path.name
            if dest.is_file() and dest.read_bytes() != sf.path.read_bytes():
                try:
                    other = files.load(dest).name
                except files.StudyFileError:
                    other = None
                if other != sf.name:
                    raise SystemExit(
                        f"{dest} already holds another study file ({other or 'not loadable'}); rename {path}"
                    )
            dest.parent.mkdir(parents=True, exist_ok=True)
            if not dest.is_file() or dest.read_bytes() != sf.path.read_bytes():
                shutil.copyfile(sf.path, dest)
                print(f"note: {path} copied to {dest}: `varcap studies` and the UI list {sf.name} from there")
            sf = files.load(dest)
        from studies.catalogue import add_study_file

        add_study_file(sf)
    except (files.StudyFileError, ValueError) as e:
        raise SystemExit(str(e)) from None
    first = next(iter(sf.studies))
    rest = [n for n in sf.studies if n != first]
    if rest:
        print(f"note: {Path(path).name} also defines {', '.join(rest)} (varcap sweep NAME)")
    return first


def cmd_sweep(args: argparse.Namespace) -> int:
    if (args.study is None) == (args.file is None):
        raise SystemExit("varcap sweep: give a study name or --file STUDY.toml (one of them)")
    if args.file:
        args.study = study_file_arg(args.file)
    prepare_dagster_home()
    from studies.harmony import HARMONY_STUDIES

    if args.study in HARMONY_STUDIES:  # paper 004: its own asset group (studies/harmony/runner.py)
        return 0 if run_harmony(args.study) else 1
    if not run_sweep(
        args.study, args.max_workers, args.executor, args.dask_address, force=getattr(args, "force", False)
    ):
        return 1
    df = study_results(args.study)
    note = missing_note(args.study, df)
    if note:
        print(f"note: {note}")
    _print_summary(df, f"{args.study}: {df.height} scenarios" + (" (partial: see the note)" if note else ""))
    return 0


def run_harmony(study: str, show: bool = True, chapter: bool = True) -> bool:
    """Materialize the ``harmony`` asset group for ``study`` (raw → core first on an empty warehouse);
    ``chapter``: then Harmony's chapter and the index (not for the headline/smoke studies); ``show``:
    print the study's results table."""
    from rich.console import Console

    console = Console()
    if not _has_tables(["core_jobs", "core_power_price"]):
        import dagster as dg

        from pipelines.definitions import defs

        keys = dg.AssetSelection.groups("raw", "core").resolve(defs.resolve_asset_graph())
        if not _materialize([k.to_user_string() for k in keys], console):
            return False
    from assets.content_keys import read_stamp, write_stamp

    keys = list(HARMONY_ASSETS)
    wl = "borg2011-7d" if study == "harmony-7d" else "borg2011-sample"
    stamp = paths.dagster_home() / "varcap" / "harmony" / f"{study}.json"
    before = read_stamp(stamp)
    if before is not None and harmony_state(study, wl) == before:
        console.print(
            f"Harmony ({study}): code, core tables and its tables as its last materialization left them: "
            "not materialized again",
            soft_wrap=True,
        )
        ok = True
    else:
        ok = _materialize(
            keys,
            console,
            {
                "out_harmony_demand": {"config": {"workload": wl}},
                "out_harmony_results": {"config": {"study": study}},
            },
        )
        if ok and (after := harmony_state(study, wl)) is not None:
            write_stamp(stamp, after)
    if ok and chapter and study not in ("harmony-smoke", "harmony-headline"):  # the chapter and the index
        ok = _materialize(["report_harmony"], console) and _materialize(
            ["report_index"], console, partition_key=materialized_profile()
        )
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


#: the tables Harmony's assets read (their upstream assets outside the group)
HARMONY_INPUT_TABLES = ("core_jobs", "core_power_price")


def harmony_state(study: str, workload: str) -> dict | None:
    """The state Harmony's assets (:data:`HARMONY_ASSETS`) are in for ``study`` on ``workload``: a content
    key of what they read (the code and Python environment, :mod:`assets.content_keys`; the study, the
    workload; the rows of :data:`HARMONY_INPUT_TABLES`) and the rows of their own tables. None when the
    warehouse lacks one of them or an asset has no materialization in the Dagster instance."""
    import dagster as dg
    import duckdb

    from assets import content_keys as ck

    wh = paths.warehouse_path()
    if not wh.is_file():
        return None
    asset_keys = [dg.AssetKey(n) for n in HARMONY_ASSETS]
    recorded = dg.DagsterInstance.get().get_latest_materialization_events(asset_keys)
    if any(recorded.get(k) is None for k in asset_keys):
        return None
    with duckdb.connect(str(wh), read_only=True) as con:
        read = ck.tables_fingerprint(con, list(HARMONY_INPUT_TABLES))
        wrote = ck.tables_fingerprint(con, list(HARMONY_ASSETS))
    if len(read) < len(HARMONY_INPUT_TABLES) or len(wrote) < len(HARMONY_ASSETS):
        return None
    return {
        "inputs": ck.digest(
            ck.code_fingerprint(), ck.environment_fingerprint(), study, workload, str(wh), read
        ),
        "tables": wrote,
    }


def missing_note(study_name: str, df) -> str | None:
    """None when ``df`` (the study's result rows) has every scenario of the study; else one line "N of M
    scenarios: missing K (first: …); run `varcap sweep STUDY`"."""
    from studies import sweep
    from studies.catalogue import study

    scs = study(study_name)
    have = set(df["scenario_id"].to_list()) if df.height else set()
    missing = [s for s in scs if s.id not in have]
    if not missing:
        return None
    keys = sweep.partition_keys(scs)
    first = ", ".join(keys[s.id] for s in missing[:3]) + (" …" if len(missing) > 3 else "")
    return (
        f"{len(scs) - len(missing)} of {len(scs)} scenarios of {study_name} have results; missing "
        f"{len(missing)} (first: {first}): run `varcap sweep {study_name}`"
    )


def cmd_results(args: argparse.Namespace) -> int:
    """Print (or write with ``--out``) a study's result rows, saying how many of its scenarios have none.
    SystemExit (one line) without a warehouse or with no row at all."""
    if not paths.warehouse_path().exists():
        raise SystemExit(
            f"{paths.warehouse_path()} not found: run `make run` and `varcap sweep {args.study}` first"
        )
    df = study_results(args.study)
    if df.height == 0:
        raise SystemExit(f"no results for {args.study}: run `varcap sweep {args.study}`")
    note = missing_note(args.study, df)
    if note:
        print(f"note: {note}")
    if args.out:
        df.write_parquet(args.out) if args.out.endswith(".parquet") else df.write_csv(args.out)
        print(f"{df.height} rows → {args.out}")
        return 0
    _print_summary(df, f"{args.study}: {df.height} scenarios" + (" (partial: see the note)" if note else ""))
    return 0


def harmony_rows() -> list[tuple[str, str, str, str, str]]:
    """``varcap studies`` rows of Harmony's studies (paper 004, its own runner): study, scenarios,
    workloads, schemes, source."""
    from studies.harmony import HARMONY_STUDIES, harmony_scenarios

    rows = []
    for name in HARMONY_STUDIES:
        scs = harmony_scenarios(name)
        rows.append(
            (
                name,
                str(len(scs)),
                ", ".join(dict.fromkeys(s.workload for s in scs)),
                ", ".join(dict.fromkeys(s.scheme for s in scs)),
                "Harmony runner (paper 004)",
            )
        )
    return rows


def harmony_key(sc) -> str:
    """A Harmony scenario as the one line ``varcap studies harmony…`` shows: scheme, ω and what differs
    from the defaults (workload, cluster fraction, seed, baseline type order)."""
    parts = [sc.scheme, f"ω={sc.omega:g}", sc.workload]
    if sc.machine_fraction != 1.0:
        parts.append(f"{sc.machine_fraction:g} of the cluster")
    if sc.seed:
        parts.append(f"seed={sc.seed}")
    if sc.efficiency != "paper":
        parts.append(f"order={sc.efficiency}")
    return " ".join(parts)


def cmd_studies(args: argparse.Namespace) -> int:
    """List the catalogued studies (built-in, from study files, Harmony's), or one study's scenarios with
    their partition keys and cache state; a study file that does not load is one note line."""
    from rich.console import Console
    from rich.table import Table

    from studies import catalogue, sweep
    from studies.catalogue import FILE_PROBLEMS, STUDIES, STUDY_FILES, study
    from studies.harmony import HARMONY_STUDIES

    console = Console(width=max(Console().width, 150))
    for p in FILE_PROBLEMS:
        print(f"note: study file left out: {p}")
    if args.study in HARMONY_STUDIES:
        from studies.harmony import harmony_scenarios
        from studies.harmony.runner import harmony_dir

        hs = harmony_scenarios(args.study)
        t = Table(title=f"{args.study}: {len(hs)} Harmony scenarios (varcap sweep {args.study})")
        for c in ("scenario", "scenario id", "has a result"):
            t.add_column(c, overflow="fold")
        for sc in hs:
            t.add_row(harmony_key(sc), sc.id, "yes" if (harmony_dir() / sc.id / "run.json").is_file() else "")
        console.print(t)
        return 0
    if args.study:
        try:
            scs = study(args.study)
        except KeyError:
            known = [*STUDIES, *HARMONY_STUDIES]
            raise SystemExit(f"unknown study {args.study!r}; studies: {', '.join(known)}") from None
        keys = catalogue.partition_keys(args.study)
        asset = catalogue.asset_name(args.study)
        t = Table(title=f"{args.study}: {len(scs)} scenarios (partitions of {asset} in the UI)")
        for c in ("partition key", "scenario id", "cached"):
            t.add_column(c, overflow="fold")
        for sc in scs:
            t.add_row(keys[sc.id], sc.id, "yes" if sweep.is_cached(sc) else "")
        console.print(t)
        return 0
    t = Table(title="studies (varcap sweep STUDY; varcap studies STUDY lists its scenarios)")
    for c in ("study", "scenarios", "workloads", "policies", "source"):
        t.add_column(c, overflow="fold")
    for name in STUDIES:
        scs = study(name)
        t.add_row(
            name,
            str(len(scs)),
            ", ".join(dict.fromkeys(s.workload for s in scs)),
            ", ".join(dict.fromkeys(s.policy for s in scs)),
            f"file {STUDY_FILES[name].path}" if name in STUDY_FILES else "built-in",
        )
    for row in harmony_rows():
        t.add_row(*row)
    console.print(t)
    return 0
