"""Checkpoint/restart, one model for both engines (thesis §4.4.2, eqs. 4.2–4.3).

Settings any policy accepts (``--set KEY=VALUE``, a scenario's ``settings``), all seconds, default 0 (off);
a jobs frame may carry them as optional columns of the same names, a job's value (where not null)
overriding the run's (:func:`per_job`):

* ``checkpoint_interval_s`` τ: a checkpoint after every τ seconds of the job's own work (at work
  τ, 2τ, … strictly below its duration: none at the end);
* ``checkpoint_overhead_s`` δ: wall time a checkpoint takes (the job holds its cores, does no work);
* ``restart_overhead_s`` R: recovery time at the start of every attempt after a termination.

A job of duration E that has committed ``k`` checkpoints (work ``k·τ`` saved) runs an attempt of
``R + (E − kτ) + (n − k)·δ`` seconds, with ``n = ⌈E/τ⌉ − 1`` checkpoints in all (:func:`attempt_length`):
uninterrupted, ``E + nδ``, i.e. eq. 4.2's ``E·(1 + C)`` with ``C = δ/τ`` less at most one δ. Killed at
``k_t`` after the attempt started at ``s``, the checkpoints it completed (each ends a segment of τ work plus
δ writing, after R) are kept: the job resumes from the last one, at wall time t' (:func:`killed_progress`).
The run's wasted work counts every core-second that is not the job's own work: the lost tail
``c·(k_t − t')``, each recovery ``c·R`` and each checkpoint's ``c·δ`` — so per termination eq. 4.3's
``c·(k_t − t' + R)`` plus the checkpoint tax of eq. 4.2. Goodput counts a completed job's work ``c·E``
(work saved by a killed attempt counts when its job completes; before, as in-flight). With every setting 0
the engines run their checkpoint-free code paths (bit-identical results). ``<rule>-fail`` terminations
(the job fails for good) keep nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

KEYS = ("checkpoint_interval_s", "checkpoint_overhead_s", "restart_overhead_s")


@dataclass(frozen=True)
class Checkpoint:
    """τ, δ, R in seconds (see the module doc). ValueError if any is negative or not finite, or δ > 0
    without τ."""

    interval_s: float = 0.0
    overhead_s: float = 0.0
    restart_s: float = 0.0

    def __post_init__(self) -> None:
        for k, v in zip(KEYS, (self.interval_s, self.overhead_s, self.restart_s), strict=True):
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"{k} must be a finite number ≥ 0, got {v}")
        if self.overhead_s > 0 and self.interval_s <= 0:
            raise ValueError("checkpoint_overhead_s needs checkpoint_interval_s > 0")

    @property
    def on(self) -> bool:
        """Whether anything differs from a run without checkpoints."""
        return self.interval_s > 0 or self.restart_s > 0

    def as_array(self) -> list[float]:
        return [self.interval_s, self.overhead_s, self.restart_s]


def split_settings(settings: Mapping[str, object] | None) -> tuple[Checkpoint | None, dict[str, object]]:
    """``(Checkpoint or None if off, the other settings)``. ValueError naming a setting that is not a
    number."""
    rest = dict(settings or {})
    vals = []
    for k in KEYS:
        v = rest.pop(k, 0.0)
        try:
            vals.append(float(v))  # type: ignore[arg-type]
        except (TypeError, ValueError) as e:
            raise ValueError(f"{k} must be a number of seconds, got {v!r}") from e
    ck = Checkpoint(*vals)
    return (ck if ck.on else None), rest


def per_job(columns: Mapping[str, np.ndarray], n: int, run: Checkpoint | None) -> np.ndarray | None:
    """Each job's (τ, δ, R), one row per job in input order: a job's value of an optional jobs column
    named like the setting (:data:`KEYS`) where it has one (not null/NaN), else the run's (``run``; 0 if
    None). None when no job checkpoints or restarts (τ and R all 0: the checkpoint-free paths). ValueError
    naming the first bad row (1-based, as :mod:`sim.validate` counts) and column: negative or infinite, or δ > 0 without τ."""
    base = run.as_array() if run is not None else [0.0, 0.0, 0.0]
    out = np.empty((n, 3), np.float64)
    for i, k in enumerate(KEYS):
        col = columns.get(k)
        if col is None:
            out[:, i] = base[i]
            continue
        v = np.asarray(col, np.float64)
        bad = np.flatnonzero(~np.isnan(v) & ~(np.isfinite(v) & (v >= 0)))
        if bad.size:
            raise ValueError(f"jobs row {int(bad[0]) + 1}: {k} must be a finite number ≥ 0, got {v[bad[0]]}")
        out[:, i] = np.where(np.isnan(v), base[i], v)
    bad = np.flatnonzero((out[:, 1] > 0) & (out[:, 0] <= 0))
    if bad.size:
        raise ValueError(f"jobs row {int(bad[0]) + 1}: checkpoint_overhead_s needs checkpoint_interval_s > 0")
    if not (np.any(out[:, 0] > 0) or np.any(out[:, 2] > 0)):
        return None
    return out


def n_checkpoints(duration_s: float, interval_s: float) -> int:
    """Checkpoints of an uninterrupted run: work levels τ, 2τ, … strictly below the duration."""
    if interval_s <= 0:
        return 0
    return max(int(math.ceil(duration_s / interval_s)) - 1, 0)


def attempt_length(duration_s: float, done: int, restarted: bool, ck: Checkpoint) -> float:
    """Wall length of an attempt of a job that has ``done`` checkpoints committed."""
    n = n_checkpoints(duration_s, ck.interval_s)
    r = ck.restart_s if restarted else 0.0
    return r + (duration_s - done * ck.interval_s) + (n - done) * ck.overhead_s


def killed_progress(
    elapsed_s: float, duration_s: float, done: int, restarted: bool, ck: Checkpoint
) -> tuple[int, float]:
    """An attempt killed ``elapsed_s`` after it started: (checkpoints it completed, seconds from its start
    to the last of them — 0 if none)."""
    r = ck.restart_s if restarted else 0.0
    if ck.interval_s <= 0 or elapsed_s <= r:
        return 0, 0.0
    seg = ck.interval_s + ck.overhead_s
    k = min(int(math.floor((elapsed_s - r) / seg)), n_checkpoints(duration_s, ck.interval_s) - done)
    k = max(k, 0)
    return k, (r + k * seg) if k else 0.0
