"""``varcap run``, ``varcap reports``, ``varcap figures`` and ``varcap reproduce``: the whole pipeline, the
quick reproduction studies, the reports and the reproduction table."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from pipelines.cli.common import (
    _has_tables,
    _materialize,
    dagster_loggers,
    materialized_profile,
    prepare_dagster_home,
    reuse_event_log_engines,
    status,
    watched_run,
)
from pipelines.cli.sweeps import run_harmony
from sim import paths


def _cell(value: object) -> str:
    """A summary cell: a markdown table of files (``out_sim_inputs``) shows as its number of files."""
    if isinstance(value, str) and value.lstrip().startswith("|"):
        return f"{sum(1 for ln in value.splitlines() if ln.startswith('|')) - 2} files"
    return str(value)


def cmd_run(args: argparse.Namespace) -> int:
    prepare_dagster_home()
    import dagster as dg
    from rich.console import Console
    from rich.table import Table

    from pipelines.definitions import defs

    console = Console(stderr=False)
    from pipelines import guard

    instance = dg.DagsterInstance.get()
    reuse_event_log_engines(instance)  # the first half's events: one connection per file
    if args.free_slots:
        for r in guard.free_slots(instance, args.free_slots):
            console.print(f"freed the {guard.POOL} pool slots of run {r}", soft_wrap=True)
        return 0
    for line in guard.dead_run_notices(instance):
        console.print(line, style="yellow", soft_wrap=True)
    if args.source:
        os.environ["VARCAP_SOURCE"] = args.source
    selection = dg.AssetSelection.groups(*args.groups) if args.groups else first_half()
    job = defs.resolve_implicit_global_asset_job_def()
    keys = selection.resolve(defs.resolve_asset_graph())
    names = sorted(k.to_user_string() for k in keys)
    # the first half as the last run left it (same code, samples and tables): not materialized again
    before = None if args.groups or getattr(args, "force", False) else read_first_half_stamp()
    if before is not None and first_half_stamp(names, instance) == before:
        console.print(
            f"varcap run — {len(keys)} assets unchanged (code, samples and their tables as the last run "
            "left them): not materialized again (`varcap run --force` does)",
            soft_wrap=True,
        )
        return _second_half(args, console)
    # Dagster's console log (tracebacks of failed steps) only with --debug; warnings and failures are
    # printed below, one line each
    run_config = {"loggers": dagster_loggers()}
    t0 = time.perf_counter()
    with status(console, f"materializing {len(keys)} assets …"), watched_run(instance, console):
        result = job.execute_in_process(
            instance=instance,
            asset_selection=list(keys),
            run_config=run_config,
            raise_on_error=False,
            tags=guard.run_tags(),
        )
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
            _cell(rows.value if rows is not None else ""),
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
    if not args.groups:
        done = first_half_stamp(names, instance)
        if done is not None:
            write_first_half_stamp(done)
    return _second_half(args, console)


def _second_half(args: argparse.Namespace, console) -> int:
    """``varcap run`` after its first half: the studies and reports (unless ``--groups``), then where
    things are."""
    if (
        not args.groups
        and run_reports(
            console,
            args.workers,
            simulate=not args.no_sim,
            everything=args.quick_all,
            with_profiled_first_half=True,
            force=getattr(args, "force", False),
        )
        != 0
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


def first_half_stamp_path() -> Path:
    """Where ``varcap run`` keeps the state its first half left (in the Dagster instance's home, beside the
    materializations it records)."""
    return paths.dagster_home() / "varcap" / "first_half.json"


def _stamp_base() -> tuple[Path, list[str]] | None:
    """What every stamp of ``varcap run`` starts from: the warehouse, and the fingerprints of the code, the
    Python environment and the embedded samples (:mod:`assets.content_keys`). None when nothing can be
    skipped: a source other than the embedded samples (downloads may change), or no warehouse."""
    from assets import content_keys as ck

    if os.environ.get("VARCAP_SOURCE", "sample") != "sample":
        return None
    wh = paths.warehouse_path()
    if not wh.is_file():
        return None
    samples = [p for p in paths.samples_dir().rglob("*") if p.is_file()]
    return wh, [
        ck.code_fingerprint(),
        ck.environment_fingerprint(),
        ck.files_fingerprint(samples, paths.samples_dir()),
    ]


def first_half_stamp(names: list[str], instance) -> dict | None:
    """The state the first half's assets ``names`` are in now: a content key of what they read (the code and
    Python environment, :mod:`assets.content_keys`; the embedded samples; the source; the warehouse's
    path) and of what they wrote (their tables' rows, the exported simulator inputs). None when they
    cannot be skipped: a source other than the embedded samples (downloads may change), no warehouse, or an
    asset of ``names`` with no materialization in ``instance`` (the lineage of the reports needs one)."""
    import dagster as dg

    from assets import content_keys as ck
    from studies import sweep

    base = _stamp_base()
    if base is None:
        return None
    wh, fingerprints = base
    asset_keys = [dg.AssetKey(n) for n in names]
    recorded = instance.get_latest_materialization_events(asset_keys)
    if any(recorded.get(k) is None for k in asset_keys):
        return None
    files = [p for d in {sweep.inputs_dir(), paths.spot_dir()} if d.is_dir() for p in d.rglob("*")]
    import duckdb

    with duckdb.connect(str(wh), read_only=True) as con:
        tables = ck.tables_fingerprint(con, sorted({*names, "raw_files"}))
    return {
        "inputs": ck.digest(*fingerprints, str(wh), names),
        "tables": tables,
        "files": {str(p): ck.files_fingerprint([p], p.parent) for p in sorted(files) if p.is_file()},
    }


def read_first_half_stamp() -> dict | None:
    """The state the last complete first half left (:func:`first_half_stamp`), None if none."""
    from assets.content_keys import read_stamp

    return read_stamp(first_half_stamp_path())


def write_first_half_stamp(stamp: dict) -> None:
    """Record ``stamp`` as the state the first half left."""
    from assets.content_keys import write_stamp

    write_stamp(first_half_stamp_path(), stamp)


def _unpartitioned_half():
    import dagster as dg

    from assets.sim import SIM_INPUT_ASSETS

    return dg.AssetSelection.all() - dg.AssetSelection.groups(
        "sim", "reproduction", "reports", "harmony"
    ) | dg.AssetSelection.assets(*SIM_INPUT_ASSETS)


def first_half():
    """What ``varcap run`` materializes before the studies: every asset but the sweeps (`varcap sweep
    STUDY`), the reproduction, reports and Harmony groups (:func:`run_reports`), and the profile-partitioned
    assets of the other groups (:func:`profiled_first_half`, materialized with the reports at their
    profile); the exported inputs (``out_sim_inputs``, ``out_sim_grid_signals``) are in it."""
    import dagster as dg

    return _unpartitioned_half() - dg.AssetSelection.assets(*profiled_first_half())


def profiled_first_half() -> list[str]:
    """The profile-partitioned assets outside the sim, reproduction, reports and Harmony groups (the SGIP
    backtest's tables): one run cannot hold them beside unpartitioned assets, so :func:`run_reports`
    materializes them at its profile."""
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    return sorted(
        k.to_user_string()
        for k in _unpartitioned_half().resolve(graph)
        if graph.get(k).partitions_def is not None
    )


#: Policies `varcap run` leaves to `varcap reproduce --quick` (or `varcap run --quick-all`): none since the
#: SlackSched chapter must render in `make run` (its 42 quick scenarios take ~100 s on 2 cores, measured
#: 2026-11-24); the mechanism stays for a policy too slow for the ≤ 10 min budget.
SLOW_POLICIES: tuple[str, ...] = ()


def quick_studies(everything: bool = False) -> list[str]:
    """The quick reproduction studies ``varcap run`` materializes: all of them, or (not ``everything``)
    those without a scenario of :data:`SLOW_POLICIES`."""
    from studies import reproduction as repro
    from studies.catalogue import study

    names = repro.profile_studies(repro.QUICK)  # the chapters' studies too
    if everything:
        return names
    return [n for n in names if not any(s.policy in SLOW_POLICIES for s in study(n))]


def simulate_quick(console, workers: int, everything: bool = False, progress: bool = True) -> bool:
    """Materialize the partitions of the quick reproduction studies (:func:`quick_studies`) through
    Dagster, ``workers`` processes at a time (cached scenarios are recorded, not simulated again); the
    results table is left to the caller; ``out_sim_inputs`` too (``varcap run`` has just materialized it).
    Returns success."""
    from pipelines.cli.sweeps import materialize_studies

    return materialize_studies(
        quick_studies(everything),
        workers,
        console,
        progress=progress,
        results=False,
        desc="quick studies",
        export_inputs=False,
    )


#: the Harmony study `varcap run` runs for Harmony's chapter: the §9.2 experiment on the embedded sample
#: (its headline runs at ω = 1.2 and every fourth ω of the sweep: 11 runs; `varcap sweep harmony` runs the
#: whole sweep, 21)
RUN_HARMONY_STUDY = "harmony-quick"


def report_keys() -> list[str]:
    """The ``reports`` group: the tables the chapters read besides the results, every ``report_*``."""
    import dagster as dg

    from pipelines.definitions import defs

    keys = dg.AssetSelection.groups("reports").resolve(defs.resolve_asset_graph())
    return [k.to_user_string() for k in keys]


def run_reports(
    console,
    workers: int,
    simulate: bool = True,
    reproduction: bool = True,
    everything: bool = False,
    profile: str = "quick",
    with_profiled_first_half: bool = False,
    force: bool = False,
) -> int:
    """``varcap run``'s second half: materialize the quick reproduction studies (:func:`simulate_quick`;
    cached scenarios are recorded, not simulated) and Harmony's study, then ``out_sim_results``, and at
    partition ``profile``: ``out_study_results``, ``out_reproduction`` (unless not ``reproduction``),
    ``out_thesis_ias_instances`` and the reports, with ``with_profiled_first_half`` (``varcap run``) the
    profile-partitioned assets its first half leaves out too (:func:`profiled_first_half`: the SGIP
    backtest, whose full profile needs the downloaded wheel); print the index path. After ``varcap run``
    every asset upstream of the rendered reports' partitions is materialized (``tests/test_lineage.py``)."""
    from assets.reports import reports_dir

    t0 = time.perf_counter()
    if simulate:
        if not simulate_quick(console, workers, everything):
            return 1
        left = [n for n in repro_quick_studies() if n not in quick_studies(everything)]
        console.print(
            f"quick reproduction studies materialized in {time.perf_counter() - t0:.0f} s"
            + (f" ({', '.join(left)}: `varcap reproduce --quick`)" if left else "")
        )
        t0 = time.perf_counter()
        # Harmony's chapter and paper 004's row (its headline runs are the ω = 1.2 runs of this study)
        if not run_harmony(RUN_HARMONY_STUDY, show=False, chapter=False):
            return 1
        console.print(f"Harmony ({RUN_HARMONY_STUDY}) done in {time.perf_counter() - t0:.0f} s")
    keys = [
        *(profiled_first_half() if with_profiled_first_half else []),
        "out_sim_results",
        "out_study_results",
        *(["out_reproduction"] if reproduction else []),
        "out_thesis_ias_instances",  # chapter 6's table of its thesis-ias-* studies' runs
        *report_keys(),
    ]
    if not _has_tables(list(HARMONY_REPORT_TABLES)):  # Harmony's chapter needs `varcap sweep harmony`
        keys.remove("report_harmony")
        console.print("Harmony's chapter: `varcap sweep harmony` renders it")
    from assets.content_keys import read_stamp, write_stamp

    # the tables before the chapters, as the last run left them (same code, runs and warehouse): kept
    tables = [k for k in keys if not k.startswith("report_")]
    before = None if force else read_stamp(tables_stamp_path(profile))
    if before is not None and tables_stamp(tables, profile) == before:
        keys = [k for k in keys if k not in tables]
        console.print(
            f"{len(tables)} result and reproduction tables unchanged (code, runs and warehouse as the last run "
            "left them): not rebuilt (`varcap run --force` does)",
            soft_wrap=True,
        )
    t1 = time.perf_counter()
    with status(console, f"results, reproduction table and reports ({profile} profile) …"):
        ok = _materialize(keys, console, partition_key=profile)
    if not ok:
        return 1
    if tables and tables[0] in keys and (now := tables_stamp(tables, profile)) is not None:
        write_stamp(tables_stamp_path(profile), now)
    index = reports_dir() / "index.html"
    console.print(
        f"reports ({profile} profile) rendered in {time.perf_counter() - t1:.0f} s: [bold]{index}[/]"
    )
    return 0


def tables_stamp_path(profile: str) -> Path:
    """Where ``varcap run`` keeps the state its result and reproduction tables of ``profile`` were left in."""
    return paths.dagster_home() / "varcap" / f"tables_{profile}.json"


def tables_stamp(names: list[str], profile: str, instance=None) -> dict | None:
    """The state the second half's tables ``names`` (results, reproduction, the SGIP backtest, the
    reports' own tables) are in at ``profile``: a content key of the code and Python environment, the
    embedded samples, the cached runs' ``run.json`` files and every warehouse table (what they read and
    what they wrote). None when they cannot be kept: a source other than the embedded samples, no
    warehouse, or an asset of ``names`` without a materialization in ``instance`` (the current Dagster
    instance when None; at ``profile`` for a partitioned asset)."""
    import dagster as dg

    from assets import content_keys as ck
    from studies import sweep

    base = _stamp_base()
    if base is None:
        return None
    wh, fingerprints = base
    from pipelines.definitions import defs

    instance = instance or dg.DagsterInstance.get()
    graph = defs.resolve_asset_graph()
    for n in names:
        key = dg.AssetKey(n)
        if graph.get(key).partitions_def is not None:
            if profile not in instance.get_materialized_partitions(key):
                return None
        elif instance.get_latest_materialization_event(key) is None:
            return None
    runs = sorted(sweep.runs_dir().glob("*/run.json")) if sweep.runs_dir().is_dir() else []
    return {
        "inputs": ck.digest(
            *fingerprints,
            ck.files_fingerprint(runs, sweep.runs_dir()) if runs else "",
            str(wh),
            sorted(names),
            profile,
        ),
        "tables": ck.database_fingerprint(wh),
    }


#: what Harmony's chapter (report_harmony) reads; `varcap sweep harmony` writes them
HARMONY_REPORT_TABLES = (
    "out_harmony_task_classes",
    "out_harmony_demand",
    "out_harmony_results",
    "out_harmony_intervals",
)


def repro_quick_studies() -> list[str]:
    from studies import reproduction as repro

    return repro.profile_studies(repro.QUICK)


def cmd_reports(args: argparse.Namespace) -> int:
    """Re-render the reports from the results there are (e.g. after ``varcap reproduce``): at the
    ``full`` partition when every full study partition is materialized, else at ``quick`` —
    ``out_study_results`` and every chapter of that profile, and the index; ``out_reproduction`` stays as
    ``varcap reproduce`` left it."""
    from rich.console import Console

    from pipelines.cli.common import _has_tables

    if not _has_tables(["core_jobs"]):  # nothing materialized yet: say so now, not after every chapter fails
        raise SystemExit(
            f"nothing to render yet: the warehouse ({paths.warehouse_path()}) has no core tables — run `varcap run` first"
        )
    prepare_dagster_home()
    return run_reports(Console(), 1, simulate=False, reproduction=False, profile=materialized_profile())


def cmd_figures(args: argparse.Namespace) -> int:
    """Copy the README's figures from the rendered reports into docs/figures."""
    from assets.reports import copy_readme_figures

    try:
        out, kept = copy_readme_figures(paths.home() / "docs" / "figures", force=args.force)
    except FileNotFoundError as e:
        raise SystemExit(str(e)) from None
    for p in out:
        print(p)
    for line in kept:
        print(f"note: {line}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    """Materialize the profile's reproduction studies (every partition of each ``out_sim__repro_*`` asset;
    cached scenarios are recorded, not simulated again) and ``out_sim_results``, then ``out_reproduction``;
    print it."""
    import duckdb
    from rich.console import Console
    from rich.table import Table

    from pipelines.cli.sweeps import materialize_studies
    from studies import reproduction as repro
    from studies import sweep

    prepare_dagster_home()
    console = Console(width=max(Console().width, 160))
    pr = repro.QUICK if args.quick else repro.FULL
    t0 = time.time()
    todo = [s for s in repro.profile_scenarios(pr) if not sweep.is_cached(s)]
    if not materialize_studies(
        repro.profile_studies(pr), args.workers, console, desc=f"reproduce ({pr.name})"
    ):
        return 1
    sim_s = sum(r["wall_s"] for s in todo if (r := sweep.cached_result(s)) is not None)
    # paper 004's row reads the Harmony study (its own asset group); quick runs only its three headline runs
    if not run_harmony("harmony-headline" if args.quick else "harmony", show=False):
        return 1
    tables = ["out_reproduction", "out_reproduction_instances", "out_thesis_ias_instances"]
    if not _materialize(tables, console, partition_key=pr.name):
        return 1
    with duckdb.connect(str(paths.warehouse_path()), read_only=True) as con:
        df = con.sql(
            "SELECT * FROM out_reproduction WHERE profile = ? AND headline_id NOT LIKE '%@%'",
            params=[pr.name],
        ).pl()
    verdicts = [repro.verdict_text(r) for r in df.iter_rows(named=True)]
    t = Table(
        title=f"out_reproduction ({pr.name}): {verdicts.count('in band')}/{df.height} in band, "
        f"{verdicts.count('not tested')} not tested (every run degenerate)"
    )
    for c in ("headline", "paper", "varcap ± 95 % CI (n)", "band", "verdict", "decisive"):
        t.add_column(c, overflow="fold")
    for r in df.iter_rows(named=True):
        v = repro.verdict_text(r)
        colour = {"in band": "green", "not tested": "yellow", "not run": "yellow"}.get(v, "red")
        t.add_row(
            r["headline_id"],
            f"{r['anchor_value']:g} {r['unit']}",
            repro.value_text(r),
            f"[{r['band_low']:.3g}, {r['band_high']:.3g}]",
            f"[{colour}]{v}[/]",
            f"{r.get('n_decisive', '')}/{(r.get('n_decisive') or 0) + (r.get('n_degenerate') or 0) + (r.get('n_not_run') or 0)}"
            + (f", {r['n_not_run']} not run" if r.get("n_not_run") else ""),
        )
    console.print(t)
    if args.quick:
        console.print(
            "quick profile: a smoke test (small platforms, short horizons, 3 replicates): its verdicts say the "
            "pipeline runs, not whether varcap reproduces the papers; `varcap reproduce` runs the full profile"
        )
    console.print(
        f"{len(todo)} scenarios simulated ({sim_s:.0f} s of simulation) in {time.time() - t0:.0f} s wall; "
        f'all readings and explanations: varcap sql "select * from out_reproduction"'
    )
    return 0
