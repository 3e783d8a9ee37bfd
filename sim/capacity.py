"""Capacity traces: a step function of machines alive over ``[0, horizon_s)``.

One format everywhere: points ``(time_s, machines_alive)`` sorted by time, the first at 0, plus metadata
(machines, horizon, period, generator, params, seed). Generators live in :mod:`sim.generators`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

HOUR = 3600.0
DAY = 86400.0
#: Mean fraction of machines alive in every variable-capacity model (thesis §3.4: "on average 70 % of
#: the machines"); also the fixed-capacity reference and the target of budget traces.
MEAN_CAPACITY = 0.7


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
    df = df.sort("time_s")
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


def read_machine_capacity(path: str | Path, machines: int | None, horizon_s: float) -> MachineCapacityTrace:
    """Read ``time_s, machine, cores_available`` (CSV or parquet). Raises ValueError naming the file."""
    p = Path(path)
    df = pl.read_parquet(p) if p.suffix == ".parquet" else pl.read_csv(p)
    missing = {"time_s", "machine", "cores_available"} - set(df.columns)
    if missing:
        raise ValueError(f"{p}: missing columns {sorted(missing)}")
    m = int(machines if machines is not None else df["machine"].max() + 1)
    try:
        return MachineCapacityTrace(
            df["time_s"].to_numpy(), df["machine"].to_numpy(), df["cores_available"].to_numpy(), m, horizon_s
        )
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from e


# --------------------------------------------------------------------------------- capacity specifications
_REQUIRED = object()
#: Every kind of capacity a spec can name: its parameters with their types and defaults (``_REQUIRED``:
#: none). Generated kinds build from these alone; ``*_budget`` and ``stranded`` also take an hourly
#: signal; ``file`` reads a trace.
SPEC_KINDS: dict[str, dict[str, tuple[type, Any]]] = {
    "constant": {"fraction": (float, MEAN_CAPACITY)},  # the fixed-capacity reference (thesis Fig. 2.1a)
    "random_walk": {
        "changes_per_hour": (float, 1.0),
        "step": (float, 0.15),
        "dynamic_range": (float, 0.6),
        "mean": (float, MEAN_CAPACITY),
        "seed": (int, 0),
    },
    "random_uniform": {
        "changes_per_hour": (float, 1.0),
        "dynamic_range": (float, 0.6),
        "mean": (float, MEAN_CAPACITY),
        "seed": (int, 0),
    },
    "risk_aware_walk": {
        "m_avg": (int, _REQUIRED),
        "m_ra": (int, _REQUIRED),
        "period_s": (float, _REQUIRED),
        "seed": (int, 0),
    },
    "harvest": {
        "pool": (int, _REQUIRED),
        "max_cores": (int, 48),
        "stability_spread": (float, 0.0),
        "seed": (int, 0),
    },
    "carbon_budget": {
        "grid": (str, ""),
        "signal": (str, ""),
        "mean": (float, MEAN_CAPACITY),
        "floor": (float, 0.0),
    },
    "cost_budget": {"mean": (float, MEAN_CAPACITY), "floor": (float, 0.0)},
    "stranded": {"threshold": (float, _REQUIRED), "base_fraction": (float, 0.0)},
    "file": {"path": (str, _REQUIRED)},
}
SIGNAL_KINDS = ("carbon_budget", "cost_budget", "stranded")


@dataclass(frozen=True)
class CapacitySpec:
    """What capacity a simulation runs under: a ``kind`` of :data:`SPEC_KINDS` and its parameters.

    The one parser for capacity specifications: the CLI's ``--capacity`` text (:meth:`parse`), the study
    catalogue's dicts (:meth:`from_dict`) and the capacity assets all build traces through :meth:`build`.
    Parameters left out take the kind's defaults when built; given values are kept as given (so a
    catalogue dict builds exactly the trace it always has)."""

    kind: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        kind = self.kind.replace("-", "_")
        if kind not in SPEC_KINDS:
            raise ValueError(f"unknown capacity kind {self.kind!r}; kinds: {', '.join(SPEC_KINDS)}")
        known = SPEC_KINDS[kind]
        unknown = sorted(set(self.params) - set(known))
        if unknown:
            raise ValueError(
                f"capacity kind {kind!r} has no parameter {unknown[0]!r}; parameters: {', '.join(known)}"
            )
        missing = [k for k, (_, d) in known.items() if d is _REQUIRED and k not in self.params]
        if missing:
            raise ValueError(f"capacity kind {kind!r} needs {', '.join(missing)}")
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
        type; ValueError names the offending part."""
        path = cls.file_path(text)
        if path is not None:
            return cls("file", {"path": path})
        head, _, rest = text.partition(":")
        kind = head.strip().replace("-", "_")
        known = SPEC_KINDS[kind]
        params: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = part.partition("=")
            key = key.strip()
            if not eq:
                raise ValueError(f"capacity spec {text!r}: expected key=value, got {part!r}")
            if key not in known:
                raise ValueError(
                    f"capacity spec {text!r}: kind {kind!r} has no parameter {key!r}; parameters: {', '.join(known)}"
                )
            typ = known[key][0]
            try:
                params[key] = (
                    typ(float(value)) if typ is int and float(value).is_integer() else typ(value.strip())
                )
            except ValueError as e:
                raise ValueError(f"capacity spec {text!r}: {key}={value!r} is not a {typ.__name__}") from e
        return cls(kind, params)

    @staticmethod
    def file_path(text: str) -> str | None:
        """The trace file a ``--capacity`` text names, or None if it names a generated kind."""
        kind = text.partition(":")[0].strip().replace("-", "_")
        return None if kind in SPEC_KINDS and kind != "file" else text

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.params}

    def get(self, key: str) -> Any:
        """The parameter ``key``, or its default."""
        return self.params[key] if key in self.params else SPEC_KINDS[self.kind][key][1]

    @property
    def needs_signal(self) -> bool:
        return self.kind in SIGNAL_KINDS

    def build(
        self, machines: int, horizon_s: float, signal: np.ndarray | None = None, label: str | None = None
    ) -> CapacityTrace | MachineCapacityTrace:
        """The trace over ``[0, horizon_s)`` on ``machines`` machines (``harvest`` has ``pool`` machines and
        ``risk_aware_walk`` ``m_avg + m_ra``, whatever ``machines`` says). Signal
        kinds take ``signal`` (hourly values, repeated to cover the horizon, which is cut to whole hours)
        and ``label`` (default: the ``grid`` parameter). Raises ValueError for a missing signal."""
        from sim import generators as g  # generators build on this module

        k, p = self.kind, self.get
        if k == "constant":
            return CapacityTrace.constant(machines, horizon_s, int(round(p("fraction") * machines)))
        if k == "random_walk":
            return g.random_walk(
                machines,
                horizon_s,
                p("changes_per_hour"),
                p("step"),
                p("dynamic_range"),
                p("mean"),
                p("seed"),
            )
        if k == "random_uniform":
            return g.random_uniform(
                machines, horizon_s, p("changes_per_hour"), p("dynamic_range"), p("mean"), p("seed")
            )
        if k == "risk_aware_walk":
            return g.risk_aware_walk(p("m_avg"), p("m_ra"), p("period_s"), horizon_s, seed=p("seed"))
        if k == "harvest":
            return g.harvest_trace(
                p("pool"),
                horizon_s,
                max_cores=p("max_cores"),
                stability_spread=p("stability_spread"),
                seed=p("seed"),
            )
        if k == "file":
            return read_capacity(p("path"), machines, horizon_s)
        if signal is None:
            raise ValueError(f"capacity kind {k!r} needs an hourly signal")
        vals = np.asarray(signal)
        reps = int(np.ceil(horizon_s / (len(vals) * HOUR)))
        vals = np.tile(vals, reps)[: int(horizon_s // HOUR)]
        label = p("grid") if label is None and k == "carbon_budget" else (label or "")
        if k == "stranded":
            return g.stranded_trace(vals, machines, p("threshold"), p("base_fraction"), label=label)
        return g.budget_trace(vals, machines, k.removesuffix("_budget"), p("mean"), p("floor"), label=label)
