"""Seeded capacity-trace generators (seeds 000 §3.4, 003 §4.1, 001 §5.1)."""

from __future__ import annotations

import numpy as np

from sim.capacity import CapacityTrace


def random_walk(
    machines: int,
    horizon_s: float,
    changes_per_hour: float = 1.0,
    step: float = 0.15,
    dynamic_range: float = 0.6,
    mean: float = 0.7,
    seed: int = 0,
) -> CapacityTrace:
    """Random walk of machines alive, changing only at period boundaries (period = 1 h / frequency).

    Bounds are ``mean ± dynamic_range/2`` of ``machines`` (default [40%, 100%]); it starts at the mean;
    at each boundary it moves up, down or stays with equal probability by ``round(step × machines)``
    machines, reflecting at the bounds (a move that would cross a bound goes the other way).
    """
    if not changes_per_hour > 0:
        raise ValueError("changes_per_hour must be positive")
    period = 3600.0 / changes_per_hour
    lb = int(round((mean - dynamic_range / 2) * machines))
    ub = int(round(min(mean + dynamic_range / 2, 1.0) * machines))
    delta = max(1, int(round(step * machines)))
    n = int(np.ceil(horizon_s / period))
    rng = np.random.default_rng(seed)
    moves = rng.integers(-1, 2, size=n)  # -1, 0, +1 equally likely
    cur = int(round(mean * machines))
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        if i > 0:
            nxt = cur + moves[i] * delta
            if nxt > ub or nxt < lb:  # reflect
                nxt = cur - moves[i] * delta
                nxt = min(max(nxt, lb), ub)
            cur = nxt
        out[i] = cur
    times = np.arange(n, dtype=np.float64) * period
    return CapacityTrace(
        times,
        out,
        machines,
        horizon_s,
        period,
        "random_walk",
        {"changes_per_hour": changes_per_hour, "step": step, "dynamic_range": dynamic_range, "mean": mean},
        seed,
    )
