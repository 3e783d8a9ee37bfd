"""Waiting SlackSched at scale: ``python -m sim.bench waiting``.

Runs waiting ``slacksched`` in this process on the scale benchmark's instance (:func:`sim.bench.scale.scale_inputs`:
Borg-resampled jobs on 200 machines × 24 cores, a random walk at 8 changes/h with step 0.15, offered load
0.6 by default) for each size, after a small warm-up run (compiling or loading the cache, not measured).
Prints per size the CPU seconds of the run itself (``time.process_time`` around :func:`sim.api.simulate`:
problem build, the compiled loop, metrics), µs CPU per job, the mean wait, the time-averaged queue (queued
jobs, killed ones waiting to restart included) over the whole run and per tenth of the horizon, and the
queue-instants: the sum over the run's event instants of the queue length then (the pass decides every
queued job again at each instant, up to the last one needing at most the most free cores of a node), and the
CPU ns per queue-instant. The queue is read off the attempt log:
+1 at a submit, −1 at an attempt's start, +1 at a kill."""

from __future__ import annotations

import argparse
import os
import time
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from sim.capacity.trace import CapacityTrace, MachineCapacityTrace

#: the scale benchmark's capacity (``sim.bench.scale.scale``'s ``--capacity``)
CAPACITY = "random-walk:changes_per_hour=8,step=0.15,seed=0"
MACHINES, CORES = 200, 24


def queue_profile(
    submit: np.ndarray,
    att_start: np.ndarray,
    att_end: np.ndarray,
    killed: np.ndarray,
    cap_t: np.ndarray,
    horizon: float,
    tenths: int = 10,
) -> tuple[float, np.ndarray, float]:
    """The queue length over ``[0, horizon)`` from the submits, the attempts' starts and the kill times
    (``att_end`` where ``killed``): its time average, its average over each of ``tenths`` equal parts of the
    horizon, and the queue-instants: over the distinct instants of submits, starts, ends and capacity steps
    (``cap_t``) before ``horizon``, the sum of the jobs queued at the instant's pass (queued before it, plus
    those submitted or killed at it)."""
    sub = submit[submit < horizon]
    kills = att_end[killed & (att_end < horizon)]
    starts = att_start[att_start < horizon]
    t = np.concatenate((sub, kills, starts))
    dq = np.concatenate((np.ones(sub.size + kills.size), -np.ones(starts.size)))
    order = np.argsort(t, kind="stable")
    t, dq = t[order], dq[order]
    q = np.concatenate(([0.0], np.cumsum(dq)))  # q[i]: the queue after the first i changes
    adds = np.concatenate(([0.0], np.cumsum(dq > 0)))  # arrivals and kills among the first i changes
    times = np.unique(t)
    qt = q[np.searchsorted(t, times, side="right")]  # the queue after every change at each time
    edges = np.concatenate((times, [horizon]))
    mean = float(np.sum(qt * np.diff(edges)) / horizon) if times.size else 0.0
    parts = np.zeros(tenths)
    for k in range(tenths):
        a, b = horizon * k / tenths, horizon * (k + 1) / tenths
        lo, hi = np.clip(edges[:-1], a, b), np.clip(edges[1:], a, b)
        parts[k] = float(np.sum(qt * (hi - lo)) / (b - a))
    inst = np.unique(np.concatenate((times, att_end[att_end < horizon], cap_t[cap_t < horizon])))
    i0 = np.searchsorted(t, inst, side="left")
    i1 = np.searchsorted(t, inst, side="right")
    return mean, parts, float(np.sum(q[i0] + adds[i1] - adds[i0]))


def run_one(n: int, out_dir: str, load: float, policy: str = "slacksched") -> dict:
    """``policy`` on the scale instance of ``n`` jobs at offered ``load``: CPU s, µs/job, mean wait and the
    queue figures of :func:`queue_profile`."""
    from sim.api import simulate
    from sim.bench.scale import scale_inputs
    from sim.metrics import ATT_KILLED

    path, horizon = scale_inputs(n, out_dir, load=load)
    jobs = pl.read_parquet(path)
    t0 = time.process_time()
    res = simulate(jobs, _capacity(horizon), MACHINES, CORES, horizon, policy=policy)
    cpu = time.process_time() - t0
    out = res.tables.output
    submit = jobs["submit_s"].to_numpy()
    mean_q, parts, qi = queue_profile(
        submit,
        np.asarray(out.att_start_s),
        np.asarray(out.att_end_s),
        np.asarray(out.att_outcome) == ATT_KILLED,
        np.asarray(out.cap_time_s),
        horizon,
    )
    return {
        "jobs": n,
        "cpu_s": cpu,
        "us_per_job": 1e6 * cpu / n,
        "wait_s": res.metrics.get("latency_mean_s"),
        "mean_queue": mean_q,
        "tenths": parts,
        "queue_instants": qi,
        "days": horizon / 86400.0,
    }


def _capacity(horizon: float) -> CapacityTrace | MachineCapacityTrace:
    """The scale benchmark's capacity over ``horizon`` seconds."""
    from sim.capacity.trace import CapacitySpec

    return CapacitySpec.parse(CAPACITY).build(MACHINES, horizon, cores=CORES)


def warm(out_dir: str, load: float, policy: str) -> None:
    """One small run of ``policy`` (compiles the loop or loads its cache), not measured."""
    from sim.api import simulate
    from sim.bench.scale import scale_inputs

    path, horizon = scale_inputs(2000, out_dir, load=load)
    simulate(pl.read_parquet(path), _capacity(horizon), MACHINES, CORES, horizon, policy=policy)


def main(argv: list[str] | None = None) -> None:
    """Parse ``argv`` (sizes, load, policy, output folder) and print one line per size, then a summary."""
    ap = argparse.ArgumentParser(prog="python -m sim.bench waiting", description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 200_000, 400_000, 600_000])
    ap.add_argument("--load", type=float, default=0.6, help="offered load of the mean capacity")
    ap.add_argument("--policy", default="slacksched")
    ap.add_argument("--out-dir", default="data/bench", help="where the jobs files go (built once)")
    a = ap.parse_args(argv)
    warm(a.out_dir, a.load, a.policy)
    print(
        f"{a.policy} on the scale instance ({MACHINES} × {CORES} cores, {CAPACITY}), offered load {a.load:g}; "
        f"load average {os.getloadavg()[0]:.1f} at the start"
    )
    print(f"{'jobs':>9s} {'days':>6s} {'CPU s':>8s} {'µs/job':>8s} {'wait s':>9s} {'queue':>8s} "
          f"{'q-inst/job':>10s} {'ns/q-inst':>9s}  queue per tenth of the horizon")  # fmt: skip
    rows = []
    for n in a.sizes:
        r = run_one(n, a.out_dir, a.load, a.policy)
        rows.append(r)
        w = "" if r["wait_s"] is None else f"{r['wait_s']:,.1f}"
        print(
            f"{n:>9,} {r['days']:>6.2f} {r['cpu_s']:>8.1f} {r['us_per_job']:>8.1f} {w:>9s} {r['mean_queue']:>8.1f} "
            f"{r['queue_instants'] / n:>10.1f} {1e9 * r['cpu_s'] / r['queue_instants']:>9.0f}  "
            + " ".join(f"{x:.0f}" for x in r["tenths"]),
            flush=True,
        )
    if len(rows) > 1:
        lo, hi = rows[0]["us_per_job"], rows[-1]["us_per_job"]
        print(f"µs/job {rows[-1]['jobs']:,} / {rows[0]['jobs']:,}: {hi / lo:.2f}× "
              f"(flat within ±30 %: {'yes' if 0.7 <= hi / lo <= 1.3 else 'no'}); "
              f"load average {os.getloadavg()[0]:.1f} at the end")  # fmt: skip


if __name__ == "__main__":
    main()
