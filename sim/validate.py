"""The simulator's input contract, in one place (``sim.simulate`` and ``varcap simulate`` both use it).

* platform: ``machines`` an integer ≥ 1, ``cores`` per machine finite and > 0, ``horizon_s`` finite > 0;
* jobs: columns ``job_id, submit_s, duration_s, cores``; ``job_id`` non-null and unique; ``submit_s``
  finite ≥ 0; ``duration_s`` finite > 0; ``cores`` finite, > 0 and ≤ a machine's cores (fractions are
  allowed: Borg's requests are fractions of a machine); ``memory_gb``, if present, finite ≥ 0 and, on a
  platform with memory, at most a machine's memory (a job no machine can hold would never run); the
  optional per-job checkpoint columns (``checkpoint_interval_s``, ``checkpoint_overhead_s``,
  ``restart_overhead_s``: :func:`sim.checkpoint.per_job`) empty or finite ≥ 0; booleans
  are not numbers (``cores = true`` is refused, never read as 1);
* capacity: ``time_s`` finite ≥ 0; ``machines_alive`` an integer in ``[0, machines]`` — a trace with more
  machines alive than the platform has is an error, never clipped; per-machine traces: ``machine`` an
  integer in ``[0, machines)``, ``cores_available`` finite ≥ 0, one row per (time, machine); times
  unique in a ``machines_alive`` table;
* the engine's seed: an integer in ``[0, 2**32)`` (numba's generator is 32-bit);
* jobs submitted at or after the horizon cannot be simulated: they are dropped with a warning and
  counted apart (``SimResult.jobs_after_horizon``), not reported as misses.

Every violation raises :class:`InputError` with one line naming the file (or frame), the line (CSV,
header = line 1) or row, the field and the value, e.g.
``jobs.csv line 17: duration_s must be > 0 (got -5)``.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

JOB_COLUMNS = ("job_id", "submit_s", "duration_s", "cores")


class InputError(ValueError):
    """Simulator input that breaks the contract; the message is one line naming source, line and field."""


def _where(source: str | None, i: int) -> str:
    """Row ``i`` (0-based) of a frame read from ``source``: ``file line N`` for CSV, else ``row N``."""
    if source is None:
        return f"jobs row {i + 1}"
    if source.endswith(".parquet"):
        return f"{source} row {i + 1}"
    return f"{source} line {i + 2}"


def _fmt(v: Any) -> str:
    return repr(v) if isinstance(v, str) else f"{v}"


SEED_MAX = 2**32 - 1


def check_seed(seed: Any) -> None:
    """``seed`` an integer in ``[0, 2**32)``, the range of the engine's (numba's) generator. Raises
    InputError."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"seed must be an integer (got {_fmt(seed)})")
    if not 0 <= int(seed) <= SEED_MAX:
        raise InputError(f"seed must lie in [0, {SEED_MAX}] (the engine's generator is 32-bit; got {seed})")


def check_platform(machines: Any, cores: Any, horizon_s: Any, memory_gb: Any = None) -> None:
    """``machines`` integer ≥ 1, ``cores`` finite > 0, ``horizon_s`` finite > 0, ``memory_gb`` None or
    finite > 0; booleans and strings (``"4"``) are refused. Raises InputError naming the argument."""
    integral = isinstance(machines, (int, np.integer)) or (
        isinstance(machines, (float, np.floating)) and float(machines).is_integer()
    )
    if isinstance(machines, bool) or not integral:
        raise InputError(f"machines must be an integer (got {_fmt(machines)})")
    if machines < 1:
        raise InputError(f"machines must be ≥ 1 (got {machines})")
    for name, v in (("cores", cores), ("horizon_s", horizon_s), ("memory_gb", memory_gb)):
        if v is None and name == "memory_gb":
            continue
        if isinstance(v, (bool, np.bool_)):
            raise InputError(f"{name} must be a number, not a boolean (got {v})")
        if isinstance(v, (str, bytes)):
            raise InputError(f"{name} must be a number, not a string (got {v!r})")
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise InputError(f"{name} must be a number (got {_fmt(v)})") from None
        if not math.isfinite(f) or f <= 0:
            raise InputError(f"{name} must be finite and > 0 (got {_fmt(v)})")


def _numeric(df: pl.DataFrame, col: str, where: Any) -> np.ndarray:
    """``col`` as float64; a value that is not a number raises naming its row."""
    s = df[col]
    if s.dtype == pl.Boolean:
        i = int(s.is_not_null().arg_max()) if s.is_not_null().any() else 0
        raise InputError(f"{where(i)}: {col} must be a number, not a boolean (got {s[i]})")
    if s.dtype == pl.Utf8:
        low = s.str.strip_chars().str.to_lowercase()
        boolish = low.is_in(["true", "false"])
        if boolish.any():
            i = int(boolish.arg_max())
            raise InputError(f"{where(i)}: {col} must be a number, not a boolean (got {s[i]!r})")
        parsed = s.str.strip_chars().cast(pl.Float64, strict=False)
        bad = parsed.is_null() & s.is_not_null()
        if bad.any():
            i = int(bad.arg_max())
            raise InputError(f"{where(i)}: {col} must be a number (got {s[i]!r})")
        s = parsed
    try:
        return s.cast(pl.Float64).to_numpy()
    except Exception:
        raise InputError(f"{where(0)}: column {col} is not numeric ({s.dtype})") from None


def _first(mask: np.ndarray) -> int | None:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if len(idx) else None


def _distinct(ids: pl.Series) -> bool:
    """Whether no value of ``ids`` (no nulls) repeats. Distinct 64-bit hashes prove it, and counting them is
    ~4× cheaper than counting distinct strings (0.25 against 1.1 CPU s for 6M ids); only when two hashes are
    equal (a repeated id, or rarely a collision) are the values themselves counted."""
    n = ids.len()
    return ids.hash().n_unique() == n or ids.n_unique() == n


def check_jobs(
    jobs: pl.DataFrame,
    cores: float,
    horizon_s: float,
    source: str | None = None,
    memory_gb: float | None = None,
) -> tuple[pl.DataFrame, int]:
    """Check ``jobs`` against the contract; return ``(jobs submitted before the horizon, jobs dropped)``.

    ``source`` (the file the frame was read from) makes messages name its lines; ``memory_gb`` (a machine's
    memory, None: not simulated) bounds each job's ``memory_gb``. Raises InputError.
    """
    src = source or "jobs"
    missing = [c for c in JOB_COLUMNS if c not in jobs.columns]
    if missing:
        raise InputError(f"{src}: missing columns {missing} (found {jobs.columns[:8]})")

    def where(i: int) -> str:
        return _where(source, i)

    ids = jobs["job_id"]
    if ids.null_count():
        raise InputError(f"{where(int(ids.is_null().arg_max()))}: job_id must not be empty")
    # one count of distinct ids; the duplicate mask (a second pass over the ids) only when one repeats
    dup = None if _distinct(ids) else ids.is_duplicated()
    if dup is not None and dup.any():
        first = int(dup.arg_max())
        same = np.flatnonzero((ids == ids[first]).to_numpy())
        raise InputError(
            f"{where(int(same[1]))}: job_id {ids[first]!r} is not unique (also on {where(int(same[0]))})"
        )
    arr = {c: _numeric(jobs, c, where) for c in ("submit_s", "duration_s", "cores")}
    for col, a in arr.items():
        i = _first(~np.isfinite(a))
        if i is not None:
            raise InputError(f"{where(i)}: {col} must be a finite number (got {_fmt(jobs[col][i])})")
    rules = (
        ("submit_s", arr["submit_s"] < 0, "must be ≥ 0"),
        ("duration_s", arr["duration_s"] <= 0, "must be > 0"),
        ("cores", arr["cores"] <= 0, "must be > 0"),
        ("cores", arr["cores"] > cores, f"must not be more than {cores:g} cores (one machine)"),
    )
    for col, bad, what in rules:
        i = _first(bad)
        if i is not None:
            raise InputError(f"{where(i)}: {col} {what} (got {jobs[col][i]})")
    if "memory_gb" in jobs.columns:
        m = _numeric(jobs, "memory_gb", where)
        i = _first(~np.isnan(m) & (~np.isfinite(m) | (m < 0)))
        if i is not None:
            raise InputError(f"{where(i)}: memory_gb must be finite and ≥ 0 (got {jobs['memory_gb'][i]})")
        if memory_gb is not None:
            i = _first(m > float(memory_gb))
            if i is not None:
                raise InputError(
                    f"{where(i)}: memory_gb must not be more than {float(memory_gb):g} GB (one machine; "
                    f"the job could never run) (got {jobs['memory_gb'][i]})"
                )
    from sim.checkpoint import KEYS as CHECKPOINT_COLUMNS  # optional per-job settings

    for col in (c for c in CHECKPOINT_COLUMNS if c in jobs.columns):
        v = _numeric(jobs, col, where)
        i = _first(~np.isnan(v) & (~np.isfinite(v) | (v < 0)))
        if i is not None:
            raise InputError(
                f"{where(i)}: {col} must be a number of seconds ≥ 0 or empty (got {jobs[col][i]})"
            )
    late = arr["submit_s"] >= horizon_s
    n_late = int(late.sum())
    if n_late:
        warnings.warn(
            f"{src}: {n_late} jobs submitted at or after the horizon ({horizon_s:g} s) were dropped "
            f"(first: {where(int(np.flatnonzero(late)[0]))})",
            stacklevel=3,
        )
        jobs = jobs.filter(pl.Series(~late))
    return jobs, n_late


def _read_frame(path: Path) -> pl.DataFrame:
    try:
        return pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_csv(path, infer_schema=False)
    except Exception as e:
        raise InputError(f"{path}: cannot read ({type(e).__name__}: {str(e).splitlines()[0]})") from None


def check_capacity_frame(df: pl.DataFrame, machines: int, source: str) -> None:
    """A capacity table (``time_s, machines_alive`` or ``time_s, machine, cores_available``)."""

    def where(i: int) -> str:
        return _where(source, i)

    if "time_s" not in df.columns:
        raise InputError(f"{source}: missing column 'time_s' (found {df.columns[:8]})")
    t = _numeric(df, "time_s", where)
    i = _first(~np.isfinite(t) | (t < 0))
    if i is not None:
        raise InputError(f"{where(i)}: time_s must be finite and ≥ 0 (got {df['time_s'][i]})")
    if "cores_available" in df.columns:
        m = _numeric(df, "machine", where) if "machine" in df.columns else None
        if m is None:
            raise InputError(f"{source}: per-machine capacity needs a 'machine' column")
        i = _first(~np.isfinite(m) | (m != np.floor(m)) | (m < 0) | (m >= machines))
        if i is not None:
            raise InputError(
                f"{where(i)}: machine must be an integer in [0, {machines - 1}] (got {df['machine'][i]})"
            )
        c = _numeric(df, "cores_available", where)
        i = _first(~np.isfinite(c) | (c < 0))
        if i is not None:
            raise InputError(
                f"{where(i)}: cores_available must be finite and ≥ 0 (got {df['cores_available'][i]})"
            )
        _no_duplicates(pl.DataFrame({"t": t, "m": m}), ["t", "m"], "(time_s, machine)", where)
        return
    if "machines_alive" not in df.columns:
        raise InputError(f"{source}: missing column 'machines_alive' (found {df.columns[:8]})")
    n = _numeric(df, "machines_alive", where)
    i = _first(~np.isfinite(n) | (n != np.floor(n)) | (n < 0) | (n > machines))
    if i is not None:
        raise InputError(
            f"{where(i)}: machines_alive must be an integer in [0, {machines}] (got {df['machines_alive'][i]})"
        )
    _no_duplicates(pl.DataFrame({"t": t}), ["t"], "time_s", where)


def _no_duplicates(keys: pl.DataFrame, cols: list[str], what: str, where: Any) -> None:
    """Each row's ``cols`` are unique: two rows for one key would silently keep the last. Raises InputError
    naming both rows."""
    dup = keys.is_duplicated().to_numpy()
    if dup.any():
        first = int(np.flatnonzero(dup)[0])
        same = np.flatnonzero(dup & np.all([(keys[c] == keys[c][first]).to_numpy() for c in cols], axis=0))
        vals = ", ".join(f"{keys[c][first]:g}" for c in cols)
        raise InputError(
            f"{where(int(same[1]))}: {what} ({vals}) appears twice (also on "
            f"{' '.join(where(int(same[0])).split()[-2:])}); "
            "one row per key"
        )


def check_capacity(capacity: Any, machines: int) -> None:
    """A capacity file path or trace object. A trace never has more machines alive than ``machines``."""
    if isinstance(capacity, (str, Path)):
        check_capacity_frame(_read_frame(Path(capacity)), machines, str(capacity))
        return
    alive = getattr(capacity, "machines_alive", None)
    if alive is not None:
        a = np.asarray(alive)
        if a.dtype == np.bool_:
            raise InputError("capacity trace: machines_alive must be integers, not booleans")
        i = _first((a < 0) | (a > machines))
        if i is not None:
            raise InputError(
                f"capacity trace point {i + 1} (t = {capacity.time_s[i]:g} s): machines_alive must lie in "
                f"[0, {machines}] (got {a[i]}); the trace is for {capacity.machines} machines"
            )
    elif getattr(capacity, "machines", machines) > machines:
        raise InputError(
            f"per-machine capacity has {capacity.machines} machines; the platform has {machines}"
        )
    elif hasattr(capacity, "machine") and hasattr(capacity, "time_s"):
        keys = pl.DataFrame({"t": np.asarray(capacity.time_s, np.float64), "m": np.asarray(capacity.machine)})

        def point(i: int) -> str:
            return f"per-machine capacity event {i + 1}"

        _no_duplicates(keys, ["t", "m"], "(time_s, machine)", point)


def check_inputs(
    jobs: pl.DataFrame,
    capacity: Any,
    machines: Any,
    cores: Any,
    horizon_s: Any,
    jobs_source: str | None = None,
    memory_gb: Any = None,
    seed: Any = 0,
) -> tuple[pl.DataFrame, int]:
    """The whole contract: platform, seed, capacity (path or trace; None to skip) and jobs. Returns the jobs
    submitted before the horizon and how many were dropped. Raises :class:`InputError`."""
    check_platform(machines, cores, horizon_s, memory_gb)
    check_seed(seed)
    if capacity is not None:
        check_capacity(capacity, int(machines))
    return check_jobs(
        jobs, float(cores), float(horizon_s), jobs_source, None if memory_gb is None else float(memory_gb)
    )
