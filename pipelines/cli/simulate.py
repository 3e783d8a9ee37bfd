"""``varcap simulate`` and ``varcap policies``: one scheduler on one workload and capacity trace, and the
policy registry with its parameters."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pipelines.cli.common import _parse_sets
from sim import paths


def swf_platform(args: argparse.Namespace) -> None:
    """Fill ``--machines``/``--cores`` left out from an SWF log's header (``MaxNodes``, ``MaxProcs``);
    SystemExit (one line) when one is missing and the jobs are not an SWF log whose header gives it."""
    if args.machines is not None and args.cores is not None:
        return
    from sim.workloads.swf import is_swf, read_swf

    platform = None
    if is_swf(args.jobs):
        try:
            platform = read_swf(args.jobs).header.platform()
        except ValueError as e:
            raise SystemExit(str(e)) from None
    missing = " and ".join(
        f for f, v in (("--machines", args.machines), ("--cores", args.cores)) if v is None
    )
    if platform is None:
        where = (
            f"{args.jobs}'s SWF header has no MaxProcs"
            if is_swf(args.jobs)
            else "the jobs are not an SWF log"
        )
        raise SystemExit(f"{missing} required ({where} to take the platform from)")
    machines, cores = platform
    args.machines = machines if args.machines is None else args.machines
    args.cores = cores if args.cores is None else args.cores
    print(f"note: platform from {args.jobs}'s SWF header: {args.machines} machines × {args.cores:g} cores")


def load_swf_arg(path: str, cores: float):
    """The jobs of an SWF log (:mod:`sim.workloads.swf`): its summary printed (dropped and rejected lines),
    jobs wider than one machine left out with a note; SystemExit (one line) when no job remains."""
    from sim.workloads.swf import read_swf

    try:
        log = read_swf(path)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    print(f"note: {log.summary()}")
    jobs = log.jobs
    wide = int((jobs["cores"] > cores).sum())
    if wide:
        jobs = jobs.filter(jobs["cores"] <= cores)
        print(f"note: {wide} jobs need more than {cores:g} cores (one machine) and were left out")
    if jobs.height == 0:
        raise SystemExit(f"{path}: no job of the SWF log fits one machine of {cores:g} cores")
    return jobs


def load_jobs_arg(spec: str, cores: float):
    """``PATH`` (CSV/parquet, or an SWF log ``.swf``/``.swf.gz``) or ``warehouse:WORKLOAD`` (core_jobs,
    read-only; oversize jobs dropped)."""
    from sim.api import read_jobs
    from sim.workloads.swf import is_swf

    if is_swf(spec):
        return load_swf_arg(spec, cores)

    if spec.startswith("warehouse:"):
        import duckdb

        from sim.tables import read_core_jobs
        from sim.workloads.generators import to_sim_jobs

        workload = spec.split(":", 1)[1]
        path = paths.warehouse_path()
        if not path.exists():
            raise SystemExit(f"{path} not found: run `make run` (or `varcap run`) first")
        with duckdb.connect(str(path), read_only=True) as con:
            df = read_core_jobs(con, workload)
        if df.height == 0:
            with duckdb.connect(str(path), read_only=True) as con:
                have = [
                    r[0] for r in con.sql("SELECT DISTINCT workload FROM core_jobs ORDER BY 1").fetchall()
                ]
            raise SystemExit(
                f"--jobs {spec}: no jobs for workload {workload!r} in core_jobs (workloads there: "
                f"{', '.join(have) or 'none'})"
            )
        jobs, dropped = to_sim_jobs(df, cores)
        if dropped:
            print(f"note: {dropped} {workload} jobs need more than {cores:g} cores and were left out")
        return jobs
    return read_jobs(spec)


#: ``varcap simulate --timeout`` by default: generous (the largest documented run, 6M jobs, takes ~35 CPU s)
DEFAULT_SIMULATE_TIMEOUT_S = 6 * 3600.0
#: after the watchdog thread's deadline, a watchdog process ends a run whose compiled kernel holds the GIL
TIMEOUT_GRACE_S = 10.0


#: the watchdog process (``/bin/sh``; argv: seconds, the run's pid, the line): sleeps, then — if its parent
#: is still the run (not a process that took the pid over) — prints the line and kills the run
_WATCHDOG_SH = (
    'sleep "$1" || exit 0\n'
    '[ "$(cut -d" " -f4 /proc/$$/stat 2>/dev/null)" = "$2" ] || exit 0\n'
    'printf "%s" "$3" >&2\n'
    'kill -9 "$2"\n'
)


def start_watchdog(timeout_s: float, what: str) -> Callable[[], None]:
    """Stop this process after ``timeout_s`` seconds with one line ``varcap: error: … stopped after …``: a
    thread exits with code 1 (outputs are written only after a run, so none is half-written); should a
    compiled kernel hold the interpreter, a watchdog process prints the line and kills this process
    ``TIMEOUT_GRACE_S`` later. Returns the function that disarms both.

    The watchdog process is a small shell script started with ``vfork`` (its own process group, so its
    ``sleep`` ends with it): forking this process instead copied its page tables and made every page
    it wrote afterwards a copy-on-write fault (~0.05 CPU s of a small run's ~0.4, 2026-11-28)."""
    import contextlib
    import os
    import signal
    import subprocess
    import sys
    import threading

    text = f"varcap: error: {what} stopped after --timeout {timeout_s:g} s; nothing was written\n"
    msg = text.encode()
    done = threading.Event()

    def watch() -> None:
        if not done.wait(timeout_s):
            os.write(2, msg)
            os._exit(1)

    threading.Thread(target=watch, daemon=True, name="varcap-timeout").start()
    child: subprocess.Popen[bytes] | None = None
    if os.path.isdir("/proc") and os.path.exists("/bin/sh"):
        child = subprocess.Popen(
            ["/bin/sh", "-c", _WATCHDOG_SH, "varcap-watchdog", f"{timeout_s + TIMEOUT_GRACE_S:.3f}",
             str(os.getpid()), text],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, close_fds=True, process_group=0,
        )  # fmt: skip

    def disarm() -> None:
        done.set()
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)  # the shell and its sleep
            child.wait()
        sys.stderr.flush()

    return disarm


def capacity_file(spec: str) -> str | None:
    """The trace file ``--capacity`` names, or None for a generated kind (see :func:`load_capacity_arg`)."""
    from sim.capacity.trace import CapacitySpec

    return CapacitySpec.file_path(spec)


def check_capacity_arg(spec: str) -> None:
    """Refuse a ``--capacity`` that is neither a registered kind nor an existing trace file with one line
    naming the kinds (and the closest one): a misspelled kind is not "a file that cannot be read"."""
    from pathlib import Path

    path = capacity_file(spec)
    if path is None or Path(path).exists():
        return
    import difflib  # only to name the closest kind (its import compiles regexes: not on every run)

    from sim.capacity.kinds import KINDS

    kind = spec.partition(":")[0].strip()
    kinds = sorted(k for k in KINDS.names() if k != "file")
    close = difflib.get_close_matches(kind.replace("-", "_"), kinds, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise SystemExit(
        f"--capacity {spec}: no capacity kind {kind!r} and no such trace file ({hint}kinds: {', '.join(kinds)})"
    )


def load_capacity_arg(spec: str, machines: int, horizon_s: float):
    """``PATH`` (time_s, machines_alive | time_s, machine, cores_available) or a generated kind of
    :class:`sim.capacity.trace.CapacitySpec`, e.g. ``random-walk:changes_per_hour=1,step=0.15,seed=0``."""
    from sim.capacity.trace import CapacitySpec

    try:
        parsed = CapacitySpec.parse(spec)
        if parsed.needs_signal:
            raise ValueError(f"kind {parsed.kind!r} is built from a grid signal by the capacity assets")
        return parsed.build(machines, horizon_s)
    except ValueError as e:
        raise SystemExit(f"--capacity: {e}") from e


def check_output_path(path: str, flag: str) -> None:
    """Refuse an output whose directory is missing or not writable, before any simulating. ValueError."""
    import os
    from pathlib import Path

    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{flag} {path}: is a directory; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{flag} {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise ValueError(f"{flag} {path}: directory {parent} is not writable")


def json_metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    """The metrics with every non-finite float (NaN, ±inf: e.g. a stretch with no finished job) as None,
    so ``--out`` is valid JSON (``null``), never a bare ``NaN``."""
    import math

    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in metrics.items()}


#: OpenBLAS worker threads numpy starts on import unless ``OPENBLAS_NUM_THREADS`` says otherwise. A
#: simulation calls no BLAS, and the idle workers cost ~0.05 CPU s of a small run's ~0.4 (numpy's import:
#: 0.15 → 0.09 CPU s with one thread, 2 cores, 2026-11-28). Harmony's ARIMA forecasts and K-means call BLAS
#: on small matrices, where worker threads only spin: its quick study's 11 runs and their forecast took
#: 73.9 CPU s with numpy's default threads and 62.3 with one, the same metrics to the last bit (2026-12-03)
SIMULATE_BLAS_THREADS = "1"


def single_threaded_blas() -> None:
    """Before numpy is first imported in this process: OpenBLAS with one thread unless the environment
    names a number (``OPENBLAS_NUM_THREADS``), for this process and the processes it starts (every
    ``varcap`` command: :func:`pipelines.cli.main`); a no-op once numpy is loaded."""
    import os
    import sys

    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", SIMULATE_BLAS_THREADS)


class _RichOut:
    """``varcap simulate``'s output on a terminal: rich's console and a boxed table of the metrics."""

    def __init__(self) -> None:
        from rich.console import Console

        self._c = Console(emoji=False)  # no :name: codes in its output; their table costs ~5 ms to import
        self.is_terminal = self._c.is_terminal
        self.status = self._c.status

    def print(self, text: str = "") -> None:
        self._c.print(text)

    def print_metrics(self, title: str, rows: list[tuple[str, str]]) -> None:
        from rich.table import Table

        table = Table(title=title)
        table.add_column("metric")
        table.add_column("value", justify="right")
        for k, v in rows:
            table.add_row(k, v)
        self._c.print(table)


class _PlainOut:
    """``varcap simulate``'s output off a terminal (a pipe, a file, a CI log): the same lines as plain
    text, the metrics one ``name value`` row each under the title, the values aligned right. Without
    rich, whose import and table took about 25 ms, a tenth of a 200-job run's whole process."""

    is_terminal = False

    def print(self, text: str = "") -> None:
        print(text)

    def print_metrics(self, title: str, rows: list[tuple[str, str]]) -> None:
        kw = max((len(k) for k, _ in rows), default=0)
        vw = max((len(v) for _, v in rows), default=0)
        print("\n".join([title, *(f"{k:<{kw}}  {v:>{vw}}" for k, v in rows)]))


def _console() -> _RichOut | _PlainOut:
    """Rich output on a terminal, plain lines off one."""
    import sys

    return _RichOut() if sys.stdout.isatty() else _PlainOut()


def cmd_simulate(args: argparse.Namespace) -> int:
    single_threaded_blas()  # first: everything below may import numpy
    import json
    import warnings
    from contextlib import nullcontext

    from pipelines.guard import write_outputs
    from sim import simulate
    from sim.api import engine_for
    from sim.validate import check_inputs
    from sim.workloads.swf import is_swf

    console = _console()
    if not (args.timeout > 0 and args.timeout < float("inf")):
        raise ValueError(f"--timeout {args.timeout:g}: must be a finite number of seconds > 0")
    check_policy_args(args.policy, args.set, args.horizon_s)
    check_capacity_arg(args.capacity)
    swf_platform(args)
    jobs = load_jobs_arg(args.jobs, args.cores)
    check_work(jobs.height, args.capacity, args.machines, args.cores, args.horizon_s)
    with warnings.catch_warnings():  # the contract, checked before anything runs (simulate re-checks)
        warnings.simplefilter("ignore")
        check_inputs(
            jobs,
            capacity_file(args.capacity),
            args.machines,
            args.cores,
            args.horizon_s,
            None if args.jobs.startswith("warehouse:") or is_swf(args.jobs) else args.jobs,
            seed=args.seed,
        )
    for flag, out in (
        ("--out", args.out),
        ("--jobs-out", args.jobs_out),
        ("--attempts-out", args.attempts_out),
        ("--plot", args.plot),
    ):
        if out:
            check_output_path(out, flag)
    if args.plot and not args.plot.lower().endswith(".png"):
        raise SystemExit(f"--plot {args.plot}: the picture is written as PNG (name it …png)")
    cap = load_capacity_arg(args.capacity, args.machines, args.horizon_s)
    # small ones run interpreted (the work: jobs, machines, capacity changes, the policy's admission rule)
    if engine_for(args.policy, jobs.height, cap, args.machines, args.seed) == "compiled":
        from sim.warmup import ensure_warm

        ensure_warm(console.print)
    t0 = time.perf_counter()
    n_jobs, handed = jobs.height, [jobs]
    del jobs  # handed over: simulate drops the frame once its arrays are built (peak RSS)
    disarm = start_watchdog(args.timeout, f"simulate ({n_jobs:,} jobs, {args.policy})")
    try:
        # the spinner only on a terminal: off one it shows nothing, and making it costs ~5 ms (rich's emoji table)
        status = (
            console.status(f"simulating {n_jobs:,} jobs with {args.policy} …")
            if console.is_terminal
            else nullcontext()
        )
        with status, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # jobs after the horizon: reported below
            r = simulate(
                handed.pop(),
                cap,
                args.machines,
                args.cores,
                args.horizon_s,
                args.policy,
                _parse_sets(args.set),
                args.seed,
                window_start_s=args.window_start_s,
                window_end_s=args.window_end_s,
                record_timeseries=bool(args.plot or args.attempts_out),
            )
    finally:
        disarm()  # before writing: a run that finished is never stopped half-way through its outputs
    wall = time.perf_counter() - t0
    console.print_metrics(
        f"{args.policy} — {n_jobs:,} jobs, {args.machines}×{args.cores:g} cores, {wall:.2f} s",
        [(k, f"{v:,.4f}" if isinstance(v, float) else f"{v:,}") for k, v in r.metrics.items()],
    )
    if r.jobs_after_horizon:
        console.print(f"note: {r.jobs_after_horizon} jobs submitted at or after the horizon were left out")
    outputs = []
    if args.out:
        metrics = json_metrics(r.metrics)
        outputs.append((args.out, lambda p: p.write_text(json.dumps(metrics, indent=2, allow_nan=False))))
    if args.jobs_out:
        outputs.append(
            (
                args.jobs_out,
                lambda p: (
                    r.jobs.write_parquet(p) if args.jobs_out.endswith(".parquet") else r.jobs.write_csv(p)
                ),
            )
        )
    if args.attempts_out:
        att = r.attempts
        outputs.append(
            (
                args.attempts_out,
                lambda p: (
                    att.write_parquet(p) if args.attempts_out.endswith(".parquet") else att.write_csv(p)
                ),
            )
        )
    if args.plot:
        from analysis.run import run_picture
        from analysis.style import to_png

        png = to_png(
            run_picture(
                r.timeseries,
                f"{args.policy} on {Path(args.jobs).name} under {args.capacity}",
            )
        )
        outputs.append((args.plot, lambda p: p.write_bytes(png)))
    write_outputs(outputs)  # all or nothing: a failure leaves existing files untouched
    for label, out in (
        ("metrics", args.out),
        ("per-job table", args.jobs_out),
        ("per-attempt table", args.attempts_out),
        ("picture of the run", args.plot),
    ):
        if out:
            console.print(f"{label} → {out}")
    return 0


def cmd_policies(args: argparse.Namespace) -> int:
    """List the registered policies with what they do, what they read, their parameters (``--set
    key=value``) and defaults (a sentinel default shown with what it stands for)."""
    import dataclasses

    from rich.console import Console
    from rich.table import Table

    from sim.policies import entries

    t = Table(title="policies (varcap simulate --policy NAME --set key=value)")
    for c in ("policy", "what it does (reads)", "parameters (default)"):
        t.add_column(c, overflow="fold")
    for name, e in entries():
        assert e.policy is not None
        fields = dataclasses.fields(e.policy.Params)
        reads = f" (reads: {', '.join(e.inputs)})" if e.inputs else ""
        warm = " [compiled by varcap warm]" if e.warm else ""
        params = ", ".join(f"{f.name}={_default(f, e.auto_defaults)}" for f in fields) or "-"
        t.add_row(name, f"{e.description}{reads}{warm}", params)
    Console(width=max(Console().width, 160)).print(t)
    return 0


def _default(f, auto: dict[str, str] | None = None) -> str:
    import dataclasses

    if auto and f.name in auto:
        return f"auto ({auto[f.name]})"
    if f.default is not dataclasses.MISSING:
        return "auto" if f.default is None else str(f.default)
    if f.default_factory is not dataclasses.MISSING:
        return str(f.default_factory())
    return "required"


def check_work(jobs: int, capacity: str, machines: int, cores: float, horizon_s: float) -> None:
    """Refuse, in one line, a run whose capacity trace or memory will not fit (:mod:`sim.estimate`) —
    before the trace is built or the platform allocated."""
    from sim.capacity.kinds import expected_points
    from sim.capacity.trace import CapacitySpec, check_points
    from sim.estimate import check_fits, expected_work
    from sim.validate import check_platform

    check_platform(machines, cores, horizon_s)
    points = 0.0
    if capacity_file(capacity) is None:
        try:
            spec = CapacitySpec.parse(capacity)
            check_points(spec, machines, horizon_s)
        except ValueError as e:
            raise SystemExit(f"--capacity: {e}") from e
        points = expected_points(spec, machines, horizon_s)
    check_fits(expected_work(jobs, machines, points))


def check_policy_args(policy: str, sets: Sequence[str] | None, horizon_s: float | None = None) -> None:
    """``--policy``/``--set`` name a known policy and its parameters, within their bounds (and, given the
    horizon, no time step too fine for it): ValueError naming them otherwise (checked before any data is
    loaded)."""
    from sim.bounds import bounds_of, changed, check_steps
    from sim.policies import get_policy, parse_params

    try:
        params = parse_params(get_policy(policy), _parse_sets(sets))
        if horizon_s is not None and horizon_s > 0:
            check_steps(changed(params), bounds_of(type(params)), float(horizon_s), policy)
    except (KeyError, TypeError, ValueError) as e:
        msg = str(e.args[0] if e.args else e).removeprefix(f"{policy}: ")
        raise ValueError(f"--policy {policy}: {msg} (see `varcap policies`)") from e
