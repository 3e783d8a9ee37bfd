"""``varcap simulate`` and ``varcap policies``: one scheduler on one workload and capacity trace, and the
policy registry with its parameters."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import Any

from pipelines.cli.common import _parse_sets
from sim import paths


def load_jobs_arg(spec: str, cores: float):
    """``PATH`` (CSV/parquet) or ``warehouse:WORKLOAD`` (core_jobs, read-only; oversize jobs dropped)."""
    from sim.api import read_jobs

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
            raise SystemExit(f"no jobs for workload {workload!r} in core_jobs")
        jobs, dropped = to_sim_jobs(df, cores)
        if dropped:
            print(f"note: {dropped} {workload} jobs need more than {cores:g} cores and were left out")
        return jobs
    return read_jobs(spec)


#: ``varcap simulate --timeout`` by default: generous (the largest documented run, 6M jobs, takes ~35 CPU s)
DEFAULT_SIMULATE_TIMEOUT_S = 6 * 3600.0
#: after the watchdog thread's deadline, a watchdog process ends a run whose compiled kernel holds the GIL
TIMEOUT_GRACE_S = 10.0


def start_watchdog(timeout_s: float, what: str) -> Callable[[], None]:
    """Stop this process after ``timeout_s`` seconds with one line ``varcap: error: … stopped after …``: a
    thread exits with code 1 (outputs are written only after a run, so none is half-written); should a
    compiled kernel hold the interpreter, a watchdog child process prints the line and kills this process
    ``TIMEOUT_GRACE_S`` later. Returns the function that disarms both."""
    import os
    import signal
    import sys
    import threading

    msg = f"varcap: error: {what} stopped after --timeout {timeout_s:g} s; nothing was written\n".encode()
    done = threading.Event()

    def watch() -> None:
        if not done.wait(timeout_s):
            os.write(2, msg)
            os._exit(1)

    threading.Thread(target=watch, daemon=True, name="varcap-timeout").start()
    parent = os.getpid()
    child = os.fork() if hasattr(os, "fork") else 0
    if child == 0 and hasattr(os, "fork"):  # the watchdog process: sleeps, then ends a wedged parent
        try:
            time.sleep(timeout_s + TIMEOUT_GRACE_S)
            if os.getppid() == parent:
                os.write(2, msg)
                os.kill(parent, signal.SIGKILL)
        finally:
            os._exit(0)

    def disarm() -> None:
        done.set()
        if child:
            try:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        sys.stderr.flush()

    return disarm


def capacity_file(spec: str) -> str | None:
    """The trace file ``--capacity`` names, or None for a generated kind (see :func:`load_capacity_arg`)."""
    from sim.capacity.trace import CapacitySpec

    return CapacitySpec.file_path(spec)


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
    if not (args.timeout > 0 and args.timeout < float("inf")):
        raise ValueError(f"--timeout {args.timeout:g}: must be a finite number of seconds > 0")
    check_policy_args(args.policy, args.set, args.horizon_s)
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
            None if args.jobs.startswith("warehouse:") else args.jobs,
            seed=args.seed,
        )
    for flag, out in (("--out", args.out), ("--jobs-out", args.jobs_out)):
        if out:
            check_output_path(out, flag)
    cap = load_capacity_arg(args.capacity, args.machines, args.horizon_s)
    if choose_engine(jobs.height, args.seed, args.machines) == "compiled":  # small ones run interpreted
        ensure_warm(console.print)
    t0 = time.perf_counter()
    n_jobs, handed = jobs.height, [jobs]
    del jobs  # handed over: simulate drops the frame once its arrays are built (peak RSS, issue #30)
    disarm = start_watchdog(args.timeout, f"simulate ({n_jobs:,} jobs, {args.policy})")
    try:
        with console.status(f"simulating {n_jobs:,} jobs with {args.policy} …"), warnings.catch_warnings():
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
            )
    finally:
        disarm()  # before writing: a run that finished is never stopped half-way through its outputs
    wall = time.perf_counter() - t0
    table = Table(
        title=f"{args.policy} — {n_jobs:,} jobs, {args.machines}×{args.cores:g} cores, {wall:.2f} s"
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
    write_outputs(outputs)  # all or nothing: a failure leaves existing files untouched
    if args.out:
        console.print(f"metrics → {args.out}")
    if args.jobs_out:
        console.print(f"per-job table → {args.jobs_out}")
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
