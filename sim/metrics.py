"""Run metrics from engine outputs (kept apart from the engine).

All fractions are of ``available_core_seconds`` (∫ alive machines × cores dt over [0, horizon)).
``goodput + wasted_fraction + in_flight_fraction + idle_fraction = 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from sim.engine import COMPLETED, RUNNING, STATUS_NAMES

METRIC_NAMES = (
    "jobs",
    "completed",
    "terminations",
    "failure_rate",
    "jobs_not_scheduled",
    "goodput",
    "wasted_fraction",
    "in_flight_fraction",
    "idle_fraction",
    "latency_mean_s",
    "latency_p50_s",
    "latency_p90_s",
    "latency_p95_s",
    "latency_p99_s",
    "mean_stretch",
    "max_stretch",
    "avg_aborted_time_s",
    "slo_miss_rate",
    "available_core_seconds",
)


@dataclass(frozen=True)
class EngineOutput:
    """What the engine returns, in input row order."""

    first_start_s: np.ndarray
    end_s: np.ndarray
    attempts: np.ndarray
    terminations: np.ndarray
    status: np.ndarray
    completed_cs: float
    wasted_cs: float
    inflight_cs: float
    available_cs: float
    used_cs: float
    n_terminations: int
    aborted_time_s: float
    violations: int
    events: int


def compute_metrics(
    out: EngineOutput, submit_s: np.ndarray, duration_s: np.ndarray, slo_threshold: float = 0.10
) -> dict[str, float]:
    """The metric dict of one run (names in :data:`METRIC_NAMES`)."""
    n = len(submit_s)
    started = out.first_start_s >= 0
    done = out.status == COMPLETED
    lat = out.first_start_s[started] - submit_s[started]
    avail = out.available_cs
    frac = (lambda x: x / avail) if avail > 0 else (lambda x: 0.0)
    goodput, wasted, inflight = frac(out.completed_cs), frac(out.wasted_cs), frac(out.inflight_cs)
    stretch = (out.end_s[done] - submit_s[done]) / duration_s[done]
    # seed 003: a job misses its SLO unless it finishes within (1 + X) × its duration of arriving
    slo_miss = ~done | ((out.end_s - submit_s - duration_s) >= slo_threshold * duration_s)

    def pct(q: float) -> float:
        return float(np.percentile(lat, q)) if lat.size else float("nan")

    return {
        "jobs": int(n),
        "completed": int(done.sum()),
        "terminations": int(out.n_terminations),
        "failure_rate": out.n_terminations / n if n else 0.0,
        "jobs_not_scheduled": int((~started).sum()),
        "goodput": float(goodput),
        "wasted_fraction": float(wasted),
        "in_flight_fraction": float(inflight),
        "idle_fraction": float(1.0 - goodput - wasted - inflight),
        "latency_mean_s": float(lat.mean()) if lat.size else float("nan"),
        "latency_p50_s": pct(50),
        "latency_p90_s": pct(90),
        "latency_p95_s": pct(95),
        "latency_p99_s": pct(99),
        "mean_stretch": float(stretch.mean()) if stretch.size else float("nan"),
        "max_stretch": float(stretch.max()) if stretch.size else float("nan"),
        "avg_aborted_time_s": out.aborted_time_s / out.n_terminations if out.n_terminations else 0.0,
        "slo_miss_rate": float(slo_miss.mean()) if n else 0.0,
        "available_core_seconds": float(avail),
    }


def job_table(out: EngineOutput, job_id: np.ndarray, submit_s: np.ndarray) -> pl.DataFrame:
    """Per-job outcomes: first_start_s, end_s, attempts, terminations, status."""
    status = np.where(
        out.status == COMPLETED,
        STATUS_NAMES[COMPLETED],
        np.where(
            out.status == RUNNING,
            STATUS_NAMES[RUNNING],
            np.where(out.first_start_s >= 0, "requeued", "never_started"),
        ),
    )
    return pl.DataFrame(
        {
            "job_id": job_id,
            "submit_s": submit_s,
            "first_start_s": np.where(out.first_start_s >= 0, out.first_start_s, np.nan),
            "end_s": np.where(out.end_s >= 0, out.end_s, np.nan),
            "attempts": out.attempts,
            "terminations": out.terminations,
            "status": status,
        }
    )
