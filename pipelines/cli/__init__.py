"""``varcap`` command line: run the pipeline, open the UI, simulate, sweep, benchmark.

``varcap run`` materializes every asset in-process against the Dagster instance in ``$DAGSTER_HOME``
(default ``.dagster_home`` in the repo), so runs also appear in the UI.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from pipelines.cli.backtest import add_parser as add_backtest_parser
from pipelines.cli.common import (
    _ensure_sim_inputs,
    _has_tables,
    _materialize,
    _parse_sets,
    prepare_dagster_home,
)
from pipelines.cli.data import cmd_sql, cmd_ui, cmd_warm
from pipelines.cli.docs import cmd_docs
from pipelines.cli.run import (
    HARMONY_REPORT_TABLES,
    SLOW_POLICIES,
    cmd_figures,
    cmd_reports,
    cmd_reproduce,
    cmd_run,
    run_reports,
    simulate_quick,
)
from pipelines.cli.simulate import (
    DEFAULT_SIMULATE_TIMEOUT_S,
    capacity_file,
    check_policy_args,
    cmd_policies,
    cmd_simulate,
    load_capacity_arg,
    load_jobs_arg,
    single_threaded_blas,
)
from pipelines.cli.sweeps import (
    cmd_results,
    cmd_studies,
    cmd_sweep,
    local_sweep_job,
    local_sweep_run_config,
    run_harmony,
    run_sweep,
    study_results,
    sweep_run_config,
)
from sim.capacity.kinds import capacity_help

__all__ = [
    "HARMONY_REPORT_TABLES",
    "SLOW_POLICIES",
    "_ensure_sim_inputs",
    "_has_tables",
    "_materialize",
    "_parse_sets",
    "build_parser",
    "capacity_file",
    "check_policy_args",
    "cmd_docs",
    "cmd_figures",
    "cmd_policies",
    "cmd_reports",
    "cmd_reproduce",
    "cmd_results",
    "cmd_run",
    "cmd_simulate",
    "cmd_sql",
    "cmd_studies",
    "cmd_sweep",
    "cmd_ui",
    "cmd_warm",
    "load_capacity_arg",
    "load_jobs_arg",
    "local_sweep_job",
    "local_sweep_run_config",
    "main",
    "prepare_dagster_home",
    "run_harmony",
    "run_reports",
    "run_sweep",
    "simulate_quick",
    "study_results",
    "sweep_run_config",
]


def version_line() -> str:
    """``varcap <package version> (code version <hash>)``: the package's version (``pyproject.toml``) and
    the scenario cache key's code part (:func:`studies.code_version.code_version`, the hash of what decides a
    simulation's result)."""
    from studies.code_version import code_version

    return f"varcap {package_version()} (code version {code_version()})"


def package_version() -> str:
    """The version in the checkout's ``pyproject.toml``, else the installed package's."""
    import tomllib
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if pyproject.is_file():
        return str(tomllib.loads(pyproject.read_text())["project"]["version"])
    from importlib.metadata import version

    return version("varcap")


class _Version(argparse.Action):
    """``--version``: print :func:`version_line` and exit (computed only when asked)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: object) -> None:
        super().__init__(option_strings, dest=dest, nargs=0, default=argparse.SUPPRESS, **kw)  # type: ignore[arg-type]

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(version_line())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="varcap", description="variable-capacity scheduling workbench")
    ap.add_argument(
        "--version",
        action=_Version,
        help="print the package version and the code version of cached runs, then exit",
    )
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
        help="simulate every quick scenario"
        + (f" (by default {', '.join(SLOW_POLICIES)} are left to varcap reproduce)" if SLOW_POLICIES else ""),
    )
    r.add_argument(
        "--force",
        action="store_true",
        help="materialize the first half (raw → core → capacity → exported inputs) and rebuild the result, "
        "reproduction and backtest tables even when their code, samples, runs and tables are as the last run "
        "left them",
    )
    r.set_defaults(fn=cmd_run, heartbeat="run")  # a line at least every 30 s off a terminal
    rr = sub.add_parser("reports", help="re-render the chapter reports from the results in the warehouse")
    rr.set_defaults(fn=cmd_reports)
    add_backtest_parser(sub)
    fg = sub.add_parser("figures", help="copy the README's figures from the rendered reports to docs/figures")
    fg.add_argument(
        "--force",
        action="store_true",
        help="replace full-profile figures with the rendered ones whatever their profile",
    )
    fg.set_defaults(fn=cmd_figures)
    u = sub.add_parser("ui", help="Dagster UI (dagster dev) on 127.0.0.1:3000")
    u.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    u.add_argument("--port", type=int, default=3000, help="port (default 3000)")
    u.set_defaults(fn=cmd_ui)
    s = sub.add_parser("simulate", help="simulate one scheduler on one workload and capacity trace")
    s.add_argument(
        "--jobs",
        required=True,
        help="JOBS.csv|parquet, an SWF log (LOG.swf|.swf.gz) or warehouse:WORKLOAD (azure, borg2011, …)",
    )
    s.add_argument(
        "--capacity",
        required=True,
        help=capacity_help().replace("%", "%%"),  # from the capacity-kind registry
    )
    s.add_argument(
        "--machines",
        type=int,
        help="machines on the platform (indices 0…M−1; an SWF log's MaxNodes if left out)",
    )
    s.add_argument(
        "--cores", type=float, help="cores per machine (an SWF log's MaxProcs/MaxNodes if left out)"
    )
    s.add_argument("--horizon-s", type=float, required=True, help="simulated time in seconds (e.g. 2592000)")
    s.add_argument("--policy", default="ff", help="scheduler (default ff; list: `varcap policies`)")
    s.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="policy parameter (repeatable; `varcap policies`); any policy also takes checkpoint_interval_s, "
        "checkpoint_overhead_s, restart_overhead_s (seconds; checkpoint/restart)",
    )
    s.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    s.add_argument("--window-start-s", type=float, default=0.0, help="measurement window start (warm-up)")
    s.add_argument(
        "--window-end-s", type=float, default=None, help="measurement window end (default: horizon)"
    )
    s.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_SIMULATE_TIMEOUT_S,
        metavar="SECONDS",
        help=f"stop the run after SECONDS of wall time, writing nothing (default {DEFAULT_SIMULATE_TIMEOUT_S:g})",
    )
    s.add_argument("--jobs-out", help="write the per-job table (csv or parquet; docs/data-dictionary.md)")
    s.add_argument(
        "--attempts-out", help="write the per-attempt table (csv or parquet; docs/data-dictionary.md)"
    )
    s.add_argument(
        "--plot",
        metavar="RUN.png",
        help="draw the run: capacity, cores in use, jobs waiting, kills over time",
    )
    s.add_argument("--out", help="write the metric dict as JSON")
    s.set_defaults(fn=cmd_simulate, progress_bars=False)  # no bars: tqdm not imported (small runs)
    w = sub.add_parser("sweep", help="simulate every scenario of a study in parallel (Dagster run)")
    w.add_argument(
        "study", nargs="?", help="study name: thesis-ch4-synthetic, smoke, … (list: `varcap studies`)"
    )
    w.add_argument(
        "--file",
        metavar="STUDY.toml",
        help="run the study a TOML study file defines (its first profile; format: studies/files/swf-example.toml); "
        "a file outside studies/files/ is copied there (or to $VARCAP_STUDY_DIR) so the UI lists it",
    )
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
    w.add_argument(
        "--force",
        action="store_true",
        help="record every partition again even when the study's cached runs and its rows of "
        "out_sim_results are as the last sweep left them",
    )
    w.set_defaults(fn=cmd_sweep, heartbeat="sweep")  # a line at least every 30 s off a terminal
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
    rp.set_defaults(fn=cmd_reproduce, heartbeat="reproduce")  # a line at least every 30 s off a terminal
    wm = sub.add_parser("warm", help="compile the simulator once for this environment (numba cache)")
    wm.add_argument("--force", action="store_true", help="run the warm-up even if the cache is warm")
    wm.set_defaults(fn=cmd_warm, heartbeat="warm")  # a line at least every 30 s off a terminal
    q = sub.add_parser("sql", help="run a read-only SQL query against the warehouse")
    q.add_argument("query")
    q.add_argument("--rows", type=int, default=40, help="rows to print")
    q.add_argument("--csv", help="write the result to this CSV file instead")
    q.set_defaults(fn=cmd_sql)
    dc = sub.add_parser(
        "docs",
        help="write the generated pages (docs/data-dictionary.md, docs/cli.md) and the reproduction's numbers "
        "in README.md and docs/reproduction.md (from out_reproduction's full-profile rows)",
    )
    dc.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a page or the results record is out of date",
    )
    dc.set_defaults(fn=cmd_docs)
    return ap


def _terminable_children() -> None:
    """Keep SIGTERM able to end this process's children when it was started with SIGINT ignored (``cmd &``
    in a script, ``nohup``, CI). Dagster maps SIGTERM to SIGINT's disposition when a run on the main thread
    ends, so an ignored SIGINT became an ignored SIGTERM, inherited by every subprocess started afterwards:
    the ``tail -F`` that mirrors each later run's step logs then outlived ``terminate()`` and every in-process
    run waited 2 × 30 s for it (and leaked it). A Python handler is not inherited across ``exec``: SIGINT
    stays ignored here, SIGTERM interrupts like Ctrl-C would."""
    import signal

    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return

    def _handler(signo: int, frame: object) -> None:
        if signo == signal.SIGTERM:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, _handler)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _handler)


def _quiet_teardown() -> None:
    """Send what this process writes to stderr from now on to /dev/null: after Ctrl-C the interpreter's
    teardown makes extension modules (DuckDB's nanobind) report every object still alive, dozens of lines
    after the one ``varcap: interrupted``."""
    sys.stderr.flush()
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)
    except OSError:
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. An error ends as one line ``varcap: error: …`` on stderr with exit code 2 (bad
    input or usage) or 1 (anything else); ``--debug`` (anywhere) or ``VARCAP_DEBUG=1`` re-raises it."""
    single_threaded_blas()  # first: parsing and the commands import numpy
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("VARCAP_DEBUG") == "1"
    args = build_parser().parse_args([a for a in argv if a != "--debug"])
    args.debug = debug  # commands show Dagster's own log too
    from pipelines.cli import common
    from pipelines.cli.common import heartbeat, line_progress, restore_progress

    common.DEBUG = debug
    common.log_horizon_drops()  # a study whose workload outlasts its horizon: a log line, not a warning

    # off a terminal: a line at least every 30 s (first, so that progress lines count as output), and
    # progress bars print line by line (make run's log, a pipe)
    stop_beat = heartbeat(args.heartbeat) if getattr(args, "heartbeat", None) else (lambda: None)
    previous = line_progress() if getattr(args, "progress_bars", True) else None
    _terminable_children()
    try:
        return int(args.fn(args) or 0)
    except KeyboardInterrupt:
        print("varcap: interrupted", file=sys.stderr)
        _quiet_teardown()
        return 130
    except SystemExit as e:  # a command's own one-line refusal: the same prefix and exit code as bad input
        if isinstance(e.code, str):
            print(f"varcap: error: {e.code}", file=sys.stderr)
            return 2
        raise
    except Exception as e:
        if debug:
            raise
        from pipelines.guard import user_error

        code, msg = user_error(e)
        print(f"varcap: error: {msg}", file=sys.stderr)
        return code
    finally:
        stop_beat()
        restore_progress(previous)
