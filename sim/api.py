"""``simulate()``: the Python face of ``varcap simulate`` (same inputs, same metric dict)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np
import polars as pl

from sim.bounds import bounds_of, changed, check_steps
from sim.capacity.trace import CapacityTrace, MachineCapacityTrace, read_capacity
from sim.checkpoint import split_settings
from sim.energy import CarbonSignal, carbon_accounting
from sim.estimate import check_fits, expected_work
from sim.metrics import (
    ATT_KILLED,
    METRIC_NAMES,
    EngineOutput,
    attempt_table,
    compute_metrics,
    job_table,
    run_over_time,
)
from sim.policies import Policy, get_policy, parse_params
from sim.problem import Compiled, Platform, Problem, RunArtifacts, run_first_fit
from sim.validate import check_inputs, check_platform


@dataclass(frozen=True)
class RunTables:
    """What a run's per-job table and kill log are made from; :class:`SimResult` makes them on first use,
    so a caller that reads neither (``varcap simulate`` without ``--jobs-out``) never converts the run's
    arrays to polars (the first conversion in a process imports ``numpy.ma``, ~0.03 CPU s of a small run)."""

    output: EngineOutput
    job_id: pl.Series | np.ndarray
    submit_s: np.ndarray
    #: extra per-job columns (the energy accounting's), appended after :func:`sim.metrics.job_table`'s
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    def jobs(self) -> pl.DataFrame:
        """The per-job table: :func:`sim.metrics.job_table` and the extra columns."""
        out = job_table(self.output, self.job_id, self.submit_s)
        return out.with_columns(**{k: pl.Series(v) for k, v in self.extra.items()}) if self.extra else out

    def kills(self) -> pl.DataFrame:
        """Every killed attempt (:func:`kill_log`)."""
        return kill_log(self.output, self.job_id)


@dataclass(frozen=True)
class SimResult:
    """One run's metrics and tables; ``jobs`` (per-job outcomes) and ``kills`` are made from ``tables`` on
    first read."""

    metrics: dict[str, float]
    tables: RunTables = field(repr=False, compare=False)
    timeseries: pl.DataFrame | None
    policy: str
    params: dict[str, object]
    seed: int
    invariant_violations: int
    events: int
    jobs_after_horizon: int = 0  # submitted at/after the horizon: dropped with a warning (sim.validate)
    #: with ``record_timeseries``: the attempt log as a table (``sim.metrics.ATTEMPT_TABLE_COLUMNS``)
    attempts: pl.DataFrame | None = None

    @cached_property
    def jobs(self) -> pl.DataFrame:
        """Per-job outcomes (``job_id, submit_s, first_start_s, end_s, attempts, terminations, status``,
        then the energy columns of a run with energy accounting)."""
        return self.tables.jobs()

    @cached_property
    def kills(self) -> pl.DataFrame | None:
        """Every killed attempt: ``job_id, start_s, kill_s, machine`` (when each termination happened)."""
        return self.tables.kills()


def run_policy(pol: Policy, problem: Problem, params: object, seed: int) -> RunArtifacts:
    """The one dispatcher: a policy declares compiled admission rules (:class:`~sim.problem.Compiled`: the
    First-Fit engine runs them) or Python hooks (:mod:`sim.engine.loop` runs them); no policy runs a loop itself."""
    check_steps(changed(params), bounds_of(type(params)), problem.horizon_s, pol.name)  # type: ignore[arg-type]
    decl = pol.declare(problem, params, seed)
    if isinstance(decl, Compiled):
        return run_first_fit(problem, decl.termination, seed, decl.admission)
    return RunArtifacts(decl.loop.run(decl), None)


def engine_for(
    policy: str, n_jobs: int, capacity: CapacityTrace | MachineCapacityTrace, machines: int, seed: int = 0
) -> str:
    """The engine (``compiled`` or ``python``) :func:`sim.engine.run_kernel` picks for a run of ``policy``
    on ``n_jobs`` jobs under ``capacity`` in this process (:func:`sim.engine.choose_engine`, with the
    policy's ``timed_admission`` fact; a policy without it counts as timed). KeyError for an unknown
    policy."""
    from sim.engine import choose_engine

    timed = bool(getattr(get_policy(policy), "timed_admission", True))
    n = len(capacity.time_s)
    if isinstance(capacity, MachineCapacityTrace):
        return choose_engine(n_jobs, seed, machines, timed=timed, machine_events=n)
    return choose_engine(n_jobs, seed, machines, cap_points=n, timed=timed)


def read_jobs(path: str | Path) -> pl.DataFrame:
    """Jobs from CSV or parquet (``job_id, submit_s, duration_s, cores[, memory_gb]``)."""
    p = Path(path)
    try:
        return pl.read_parquet(p) if p.suffix == ".parquet" else pl.read_csv(p)
    except Exception as e:
        raise ValueError(f"{p}: cannot read jobs ({e})") from e


def simulate(
    jobs: pl.DataFrame | str | Path,
    capacity: CapacityTrace | MachineCapacityTrace | str | Path,
    machines: int,
    cores: float,
    horizon_s: float,
    policy: str = "ff",
    settings: dict[str, str] | None = None,
    seed: int = 0,
    memory_gb: float | None = None,
    slo_threshold: float = 0.10,
    record_timeseries: bool = False,
    check_invariants: bool = False,
    window_start_s: float = 0.0,
    window_end_s: float | None = None,
    carbon: CarbonSignal | None = None,
    energy: bool = False,
) -> SimResult:
    """Simulate ``policy`` on ``jobs`` under ``capacity``; metrics over the measurement window
    ``[window_start_s, window_end_s]`` (None: the horizon; see :mod:`sim.metrics`). Raises ValueError/KeyError
    on bad input (incl. a window outside ``[0, horizon_s]``); the input contract is :mod:`sim.validate`.

    ``energy`` (or a ``carbon`` signal, hourly gCO2eq/kWh from time 0) adds the energy and carbon metrics
    of :mod:`sim.energy` after the run's metrics and ``energy_kwh, gco2, wasted_gco2`` to the per-job table;
    the ``defer`` policy forecasts from ``carbon``. ``record_timeseries`` adds, for every policy, the run over
    time (``SimResult.timeseries``: :func:`sim.metrics.run_over_time`) and the attempt log as a table
    (``SimResult.attempts``). A run that will not fit in the free memory (:mod:`sim.estimate`) or a policy
    time step too fine for the horizon (:mod:`sim.bounds`) is refused with a ValueError before anything is
    allocated."""
    jobs_df = read_jobs(jobs) if isinstance(jobs, (str, Path)) else jobs
    check_platform(machines, cores, horizon_s, memory_gb)  # before sizing the run with them
    points = 0.0 if isinstance(capacity, (str, Path)) else float(len(capacity.time_s))
    check_fits(expected_work(jobs_df.height, int(machines), points))  # before allocating
    jobs_df, after_horizon = check_inputs(
        jobs_df,
        capacity,
        machines,
        cores,
        horizon_s,
        str(jobs) if isinstance(jobs, (str, Path)) else None,
        memory_gb,
        seed,
    )
    wend = horizon_s if window_end_s is None else window_end_s
    if not (0.0 <= window_start_s < wend <= horizon_s):
        raise ValueError(
            f"window [{window_start_s:g}, {wend:g}] must satisfy 0 ≤ start < end ≤ horizon ({horizon_s:g})"
        )
    cap = read_capacity(capacity, machines, horizon_s) if isinstance(capacity, (str, Path)) else capacity
    if isinstance(cap, MachineCapacityTrace):
        if cap.machines != machines or cap.max_cores() > cores:
            raise ValueError(
                f"per-machine capacity has {cap.machines} machines and up to {cap.max_cores():g} cores; "
                f"the platform has {machines} × {cores:g}"
            )
    elif cap.machines != machines:
        cap = CapacityTrace(
            cap.time_s,
            cap.machines_alive.clip(0, machines),
            machines,
            horizon_s,
            cap.period_s,
            cap.generator,
            cap.params,
            cap.seed,
        )
    platform = Platform(machines, cores, memory_gb)
    checkpoint, settings = split_settings(settings)  # any policy: checkpoint/restart settings
    problem = Problem.build(jobs_df, platform, cap, horizon_s, False, check_invariants, checkpoint)
    # the problem holds what the run needs: a caller that handed its frame over (``varcap simulate``) frees
    # its columns for the run (the Borg-scale peak RSS)
    del jobs, jobs_df
    if carbon is not None:
        problem = replace(problem, carbon=carbon)
    pol = get_policy(policy)
    params = parse_params(pol, settings)  # type: ignore[arg-type]
    art = run_policy(pol, problem, params, seed)
    metrics = compute_metrics(
        art.output,
        problem.submit_s,
        problem.duration_s,
        problem.cores,
        problem.horizon_s,
        slo_threshold,
        window_start_s,
        window_end_s,
    )
    assert tuple(metrics) == METRIC_NAMES
    job_cols: dict[str, np.ndarray] = {}
    if energy or carbon is not None:
        extra, per_job = carbon_accounting(
            art.output,
            problem.submit_s,
            problem.duration_s,
            problem.cores,
            cores,
            carbon,
            slack=getattr(params, "slack", None),
            window=(window_start_s, wend),
        )
        metrics = {**metrics, **extra}
        job_cols = dict(per_job)
    attempts = timeseries = None
    if record_timeseries:  # every policy: from the attempt log and the capacity steps
        attempts = attempt_table(art.output, problem.job_id, problem.cores)
        timeseries = run_over_time(art.output, problem.submit_s, problem.cores, problem.horizon_s)
    return SimResult(
        metrics,
        RunTables(art.output, problem.job_id, problem.submit_s, job_cols),
        timeseries,
        policy,
        asdict(params),
        seed,
        art.output.violations,
        art.output.events,
        after_horizon,
        attempts=attempts,
    )


def kill_log(out: EngineOutput, job_id: pl.Series | np.ndarray) -> pl.DataFrame:
    """Every killed attempt of ``out``: ``job_id, start_s, kill_s, machine``, in kill-time order."""
    k = np.flatnonzero(np.asarray(out.att_outcome) == ATT_KILLED)
    rows = np.asarray(out.att_job, np.int64)[k]
    # a polars column is gathered as is: converting it to numpy made an object array of every job's id
    # (~0.08 CPU s a 600k-job run with no kill at all)
    ids = job_id.gather(rows) if isinstance(job_id, pl.Series) else np.asarray(job_id)[rows]
    df = pl.DataFrame(
        {
            "job_id": ids,
            "start_s": np.asarray(out.att_start_s, np.float64)[k],
            "kill_s": np.asarray(out.att_end_s, np.float64)[k],
            "machine": np.asarray(out.att_machine, np.int32)[k],
        }
    )
    return df.sort("kill_s")
