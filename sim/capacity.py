"""Capacity traces: a step function of machines alive over ``[0, horizon_s)``.

One format everywhere: points ``(time_s, machines_alive)`` sorted by time, the first at 0, plus metadata
(machines, horizon, period, generator, params, seed). Generators live in :mod:`sim.generators`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl


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
        n = np.asarray(self.machines_alive, dtype=np.int64)
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
