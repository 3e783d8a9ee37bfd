"""Capacity traces: a step function of machines alive over ``[0, horizon_s)``.

One format everywhere: points ``(time_s, machines_alive)`` sorted by time, the first at 0, plus metadata
(machines, horizon, period, generator, params, seed). Generators live in :mod:`sim.capacity.generators`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sim.bounds import check_all
from sim.capacity.kinds import KINDS, REQUIRED, BuildArgs, expected_points, get_kind
from sim.capacity.kinds import MEAN_CAPACITY as MEAN_CAPACITY  # defined once, there

HOUR = 3600.0
DAY = 86400.0


@dataclass(frozen=True)
class CapacityTrace:
    """Machines alive as a step function. ``time_s[0] == 0``; values hold until the next point."""

    time_s: np.ndarray
    machines_alive: np.ndarray
    machines: int
    horizon_s: float
    period_s: float | None = None
    generator: str = "file"
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None

    def __post_init__(self) -> None:
        t = np.asarray(self.time_s, dtype=np.float64)
        raw = np.asarray(self.machines_alive)
        if raw.dtype == np.bool_ or not (
            np.issubdtype(raw.dtype, np.integer) or np.issubdtype(raw.dtype, np.floating)
        ):
            raise ValueError(f"machines_alive must be integers (got dtype {raw.dtype})")
        if np.issubdtype(raw.dtype, np.floating):
            bad = np.flatnonzero(~np.isfinite(raw) | (raw != np.floor(raw)))
            if len(bad):  # a cast would truncate 2.5 to 2 silently
                i = int(bad[0])
                raise ValueError(
                    f"machines_alive must be whole machines: point {i + 1} (t = {t.flat[i]:g} s) has {raw.flat[i]}"
                )
        n = raw.astype(np.int64)
        if t.ndim != 1 or t.shape != n.shape or len(t) == 0:
            raise ValueError("capacity trace needs equal-length, non-empty time_s and machines_alive")
        if t[0] != 0:
            raise ValueError(f"capacity trace must start at time 0, starts at {t[0]}")
        if np.any(np.diff(t) <= 0):
            raise ValueError("capacity trace times must be strictly increasing")
        if np.any(n < 0) or np.any(n > self.machines):
            raise ValueError(f"machines_alive must lie in [0, {self.machines}]")
        object.__setattr__(self, "time_s", t)
        object.__setattr__(self, "machines_alive", n)

    @classmethod
    def constant(cls, machines: int, horizon_s: float, alive: int | None = None) -> CapacityTrace:
        return cls(
            np.array([0.0]),
            np.array([machines if alive is None else alive]),
            machines,
            horizon_s,
            None,
            "constant",
        )

    def at(self, t: np.ndarray | float) -> np.ndarray:
        """Machines alive at time(s) ``t``."""
        idx = np.searchsorted(self.time_s, np.asarray(t, dtype=np.float64), side="right") - 1
        return self.machines_alive[np.clip(idx, 0, None)]

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame({"time_s": self.time_s, "machines_alive": self.machines_alive})

    def changes(self) -> CapacityTrace:
        """The same step function with repeated values removed."""
        keep = np.ones(len(self.time_s), dtype=bool)
        keep[1:] = self.machines_alive[1:] != self.machines_alive[:-1]
        return CapacityTrace(
            self.time_s[keep],
            self.machines_alive[keep],
            self.machines,
            self.horizon_s,
            self.period_s,
            self.generator,
            self.params,
            self.seed,
        )

    def available_core_seconds(self, cores_per_machine: float) -> float:
        t = np.append(self.time_s[self.time_s < self.horizon_s], self.horizon_s)
        n = self.machines_alive[self.time_s < self.horizon_s]
        return float(np.sum(np.diff(t) * n) * cores_per_machine)


def read_capacity(
    path: str | Path, machines: int | None = None, horizon_s: float | None = None
) -> CapacityTrace | MachineCapacityTrace:
    """Read ``time_s, machines_alive`` (or, per machine, ``time_s, machine, cores_available``) from CSV or
    parquet. Raises ValueError naming the file if malformed."""
    p = Path(path)
    try:
        df = pl.read_parquet(p) if p.suffix == ".parquet" else pl.read_csv(p)
    except Exception as e:
        raise ValueError(f"{p}: cannot read capacity trace ({e})") from e
    if "cores_available" in df.columns:
        h = float(horizon_s if horizon_s is not None else df["time_s"].max() + 1)
        return read_machine_capacity(p, machines, h)
    missing = {"time_s", "machines_alive"} - set(df.columns)
    if missing:
        raise ValueError(f"{p}: missing columns {sorted(missing)}")
    df = _as_numbers(df, ["time_s", "machines_alive"], p).sort("time_s")
    m = int(machines if machines is not None else df["machines_alive"].max())
    h = float(horizon_s if horizon_s is not None else df["time_s"].max() + 1)
    try:
        return CapacityTrace(df["time_s"].to_numpy(), df["machines_alive"].to_numpy(), m, h)
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from e


@dataclass(frozen=True)
class MachineCapacityTrace:
    """Per-machine capacity (harvest-VM style): from ``time_s`` on, ``machine`` has ``cores`` cores (0 = off).

    Machines start with 0 cores until their first event. Events are sorted by time, then machine."""

    time_s: np.ndarray
    machine: np.ndarray
    cores: np.ndarray
    machines: int
    horizon_s: float
    generator: str = "file"
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None

    def __post_init__(self) -> None:
        t = np.asarray(self.time_s, dtype=np.float64)
        m = np.asarray(self.machine, dtype=np.int64)
        c = np.asarray(self.cores, dtype=np.float64)
        if not (t.shape == m.shape == c.shape) or t.ndim != 1:
            raise ValueError("per-machine capacity needs equal-length time_s, machine, cores")
        if np.any(t < 0) or np.any(c < 0) or np.any((m < 0) | (m >= self.machines)):
            raise ValueError(
                f"per-machine capacity: times and cores must be ≥ 0, machines in [0, {self.machines})"
            )
        order = np.lexsort((m, t))
        object.__setattr__(self, "time_s", t[order])
        object.__setattr__(self, "machine", m[order])
        object.__setattr__(self, "cores", c[order])

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame({"time_s": self.time_s, "machine": self.machine, "cores_available": self.cores})

    def max_cores(self) -> float:
        return float(self.cores.max()) if self.cores.size else 0.0


def _as_numbers(df: pl.DataFrame, cols: list[str], p: Path) -> pl.DataFrame:
    """Text columns of a CSV (``" 0 "``: padding makes polars read text) as numbers, whole ones as integers;
    ValueError ``<file> line N: <col> must be a number (got '…')`` for one that is not."""
    for c in cols:
        if df[c].dtype != pl.Utf8:
            continue
        num = df[c].str.strip_chars().cast(pl.Float64, strict=False)
        bad = (num.is_null() & df[c].is_not_null()).to_numpy()
        if bad.any():
            i = int(bad.argmax())
            where = f"line {i + 2}" if p.suffix != ".parquet" else f"row {i + 1}"
            raise ValueError(f"{p} {where}: {c} must be a number (got {df[c][i]!r})")
        whole = num.drop_nulls()
        num = num.cast(pl.Int64) if c != "time_s" and bool((whole == whole.floor()).all()) else num
        df = df.with_columns(num.alias(c))
    return df


def read_machine_capacity(path: str | Path, machines: int | None, horizon_s: float) -> MachineCapacityTrace:
    """Read ``time_s, machine, cores_available`` (CSV or parquet). Raises ValueError naming the file."""
    p = Path(path)
    df = pl.read_parquet(p) if p.suffix == ".parquet" else pl.read_csv(p)
    missing = {"time_s", "machine", "cores_available"} - set(df.columns)
    if missing:
        raise ValueError(f"{p}: missing columns {sorted(missing)}")
    df = _as_numbers(df, ["time_s", "machine", "cores_available"], p)
    m = int(machines if machines is not None else df["machine"].max() + 1)
    try:
        return MachineCapacityTrace(
            df["time_s"].to_numpy(), df["machine"].to_numpy(), df["cores_available"].to_numpy(), m, horizon_s
        )
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from e


# --------------------------------------------------------------------------------- capacity specifications
class _KindParams(Mapping[str, dict[str, tuple[type, Any]]]):
    """Read-only view of the capacity-kind registry: kind → {parameter: (type, default)}."""

    def __getitem__(self, kind: str) -> dict[str, tuple[type, Any]]:
        try:
            return {k: (p.type, p.default) for k, p in get_kind(kind).params.items()}
        except ValueError as e:
            raise KeyError(kind) from e

    def __iter__(self) -> Iterator[str]:
        return iter(KINDS.names())

    def __len__(self) -> int:
        return len(KINDS.names())


#: Every kind of capacity a spec can name (:mod:`sim.capacity.kinds`): its parameters with their types
#: and defaults (``REQUIRED``: none).
SPEC_KINDS: Mapping[str, dict[str, tuple[type, Any]]] = _KindParams()


@dataclass(frozen=True)
class CapacitySpec:
    """What capacity a simulation runs under: a registered ``kind`` (:mod:`sim.capacity.kinds`) and
    its parameters.

    The one parser for capacity specifications: the CLI's ``--capacity`` text (:meth:`parse`), the study
    catalogue's dicts (:meth:`from_dict`) and the capacity assets all build traces through :meth:`build`.
    Parameters left out take the kind's defaults when built; given values are kept as given (so a
    catalogue dict builds exactly the trace it always has)."""

    kind: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        kind = self.kind.replace("-", "_")
        known = get_kind(kind).params  # ValueError listing the kinds
        unknown = sorted(set(self.params) - set(known))
        if unknown:
            raise ValueError(
                f"capacity kind {kind!r} has no parameter {unknown[0]!r}; parameters: {', '.join(known)}"
            )
        missing = [k for k, p in known.items() if p.default is REQUIRED and k not in self.params]
        if missing:
            raise ValueError(f"capacity kind {kind!r} needs {', '.join(missing)}")
        bounds = {k: p.bound for k, p in known.items() if p.bound is not None}
        check_all(self.params, bounds, f"capacity kind {kind!r}")  # ValueError naming the setting
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "params", dict(self.params))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CapacitySpec:
        """From a catalogue dict ``{"kind": ..., **params}``. ValueError on an unknown kind or parameter."""
        if "kind" not in d:
            raise ValueError(f"capacity spec {dict(d)!r} has no 'kind'")
        return cls(d["kind"], {k: v for k, v in d.items() if k != "kind"})

    @classmethod
    def parse(cls, text: str) -> CapacitySpec:
        """From ``KIND[:key=value,...]`` (``-`` or ``_`` in names, e.g. ``random-walk:changes_per_hour=4,
        step=0.3,seed=1``) or a path to a trace file (CSV/parquet). Values are converted to the parameter's
        type; ValueError names the offending part (or a kind that is not written on a command line)."""
        path = cls.file_path(text)
        if path is not None:
            return cls("file", {"path": path})
        head, _, rest = text.partition(":")
        kind = head.strip().replace("-", "_")
        entry = get_kind(kind)
        if not entry.cli:
            raise ValueError(
                f"capacity spec {text!r}: kind {kind!r} is given as a catalogue dict, not as text"
            )
        known = entry.params
        params: dict[str, Any] = {}
        for i, part in enumerate(filter(None, (p.strip() for p in rest.split(",")))):
            key, eq, value = part.partition("=")
            key = key.strip()
            if not eq and i == 0 and entry.positional:  # KIND:value names the kind's positional parameter
                key, eq, value = entry.positional, "=", part
            if not eq:
                raise ValueError(f"capacity spec {text!r}: expected key=value, got {part!r}")
            if key not in known:
                raise ValueError(
                    f"capacity spec {text!r}: kind {kind!r} has no parameter {key!r}; parameters: {', '.join(known)}"
                )
            typ = known[key].type
            try:
                params[key] = (
                    typ(float(value)) if typ is int and float(value).is_integer() else typ(value.strip())
                )
            except ValueError as e:
                raise ValueError(f"capacity spec {text!r}: {key}={value!r} is not a {typ.__name__}") from e
        return cls(kind, params)

    @staticmethod
    def file_path(text: str) -> str | None:
        """The trace file a ``--capacity`` text names, or None if it names a registered kind."""
        kind = text.partition(":")[0].strip().replace("-", "_")
        return None if kind in KINDS and kind != "file" else text

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.params}

    def get(self, key: str) -> Any:
        """The parameter ``key``, or its default."""
        return self.params[key] if key in self.params else get_kind(self.kind).params[key].default

    @property
    def needs_signal(self) -> bool:
        """Whether the kind is built from an hourly signal (``carbon_budget``, ``cost_budget``, ``stranded``)."""
        return get_kind(self.kind).signal is not None

    @property
    def one_machine(self) -> bool:
        """Whether the trace is simulated as one machine holding every core (``pool``)."""
        return get_kind(self.kind).one_machine

    def build(
        self,
        machines: int,
        horizon_s: float,
        signal: np.ndarray | None = None,
        label: str | None = None,
        *,
        cores: float = 1.0,
        signal_of: Callable[[CapacitySpec], np.ndarray | None] | None = None,
    ) -> CapacityTrace | MachineCapacityTrace:
        """The trace over ``[0, horizon_s)`` on ``machines`` machines of ``cores`` cores (``harvest`` has
        ``pool`` machines and ``risk_aware_walk`` ``m_avg + m_ra``, whatever ``machines`` says). Signal
        kinds take ``signal`` (hourly values, repeated to cover the horizon, which is cut to whole hours;
        else ``signal_of(self)``) and ``label`` (default: the ``grid`` parameter). Raises ValueError for a
        missing signal, or — before allocating anything — for a trace of more points than
        :data:`sim.capacity.generators.MAX_TRACE_POINTS`."""
        entry = get_kind(self.kind)
        check_points(self, machines, horizon_s)
        if entry.signal is not None:
            if signal is None and signal_of is not None:
                signal = signal_of(self)
            if signal is None:
                raise ValueError(f"capacity kind {self.kind!r} needs an hourly signal")
            vals = np.asarray(signal)
            reps = int(np.ceil(horizon_s / (len(vals) * HOUR)))
            signal = np.tile(vals, reps)[: int(horizon_s // HOUR)]
        return entry.build(self, BuildArgs(machines, horizon_s, cores, signal, label, signal_of))


def _given(spec: CapacitySpec) -> str:
    return f" ({', '.join(f'{k}={v}' for k, v in spec.params.items())})" if spec.params else ""


def check_points(spec: CapacitySpec, machines: int, horizon_s: float) -> None:
    """ValueError (one line: the kind, the points, their memory, the limit) if ``spec``'s trace would have
    more than :data:`~sim.capacity.generators.MAX_TRACE_POINTS` points over ``horizon_s``."""
    from sim.capacity.generators import MAX_TRACE_POINTS

    n = expected_points(spec, machines, horizon_s)
    if n > MAX_TRACE_POINTS:
        raise ValueError(
            f"capacity kind {spec.kind!r}{_given(spec)} over a {horizon_s:g} s horizon has ~{n:,.0f} capacity points "
            f"(~{n * 24 / 2**30:,.1f} GiB); at most {MAX_TRACE_POINTS:,} are supported: shorten the horizon"
            + (" or lower changes_per_hour" if "changes_per_hour" in get_kind(spec.kind).params else "")
        )


# ------------------------------------------------------------------------------------ hourly signals
def month_bounds(month: str) -> tuple[datetime, datetime]:
    """``[first hour, first hour of the next month)`` of ``YYYY-MM`` in UTC. ValueError if malformed."""
    try:
        y, m = (int(x) for x in month.split("-"))
        start = datetime(y, m, 1, tzinfo=UTC)
    except ValueError as e:
        raise ValueError(f"month {month!r}: expected YYYY-MM") from e
    return start, datetime(y + (m == 12), m % 12 + 1, 1, tzinfo=UTC)


def to_hourly(ts: pl.Series, values: pl.Series, start: datetime, end: datetime) -> np.ndarray:
    """One value per hour of ``[start, end)`` from a time series (``ts`` timezone-aware or UTC).

    The gap rule, the one every hourly capacity signal follows: a value counts for the hour it falls in
    (timestamps floored to the hour; several in one hour: their mean; nulls and NaN are no value); an hour
    without a value takes the last earlier hour's value, and hours before the first value take the first
    value. Raises ValueError if no value falls in ``[start, end)``."""
    hours = pl.datetime_range(start, end, "1h", closed="left", time_zone="UTC", eager=True).alias("ts")
    t = ts.dt.replace_time_zone("UTC") if getattr(ts.dtype, "time_zone", None) is None else ts
    df = (
        pl.DataFrame({"ts": t, "v": values.cast(pl.Float64)})
        .with_columns(pl.col("ts").dt.convert_time_zone("UTC").dt.cast_time_unit("us").dt.truncate("1h"))
        .filter(pl.col("v").is_not_null() & pl.col("v").is_not_nan())
        .filter((pl.col("ts") >= hours.min()) & (pl.col("ts") <= hours.max()))
        .group_by("ts")
        .agg(pl.col("v").mean())
    )
    if df.height == 0:
        raise ValueError(f"no values in [{start:%Y-%m-%d %H:%M}, {end:%Y-%m-%d %H:%M}) UTC")
    full = pl.DataFrame({"ts": hours}).join(df, on="ts", how="left").sort("ts")
    return full["v"].fill_null(strategy="forward").fill_null(strategy="backward").to_numpy()
