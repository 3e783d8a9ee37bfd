"""Simulator benchmarks: ``python -m sim.bench [engine]``.

* Borg-scale: 600,000 jobs on 200 machines × 24 cores for 7 days, random walk at 8 changes/h. Jobs
  resample (duration, cpu) pairs of the finished borg2011 task runs in the warehouse (CPU scaled to 24
  cores), Poisson arrivals, durations scaled to an offered load of 80 % of the mean capacity.
* Azure-scale: the embedded azure workload (100,488 jobs) on 1,000 machines × 24 cores for 30 days,
  random walk at 1 change/h, step 0.15.

Prints wall time, events/s and peak RSS. The warehouse must exist (``make run``); this dev tool reads it
read-only, the simulator itself never touches DuckDB.

``python -m sim.bench targets`` runs each scale target in a fresh process (so peak RSS is its own)
and prints one table: target, measured figure (wall and CPU seconds: the machine is shared), limit, met.

``python -m sim.bench ias-ratio`` prints FF's and IAS's CPU seconds in process and their ratio on's
instance (1,000 machines × 24 cores, 30 days, 868,000 Borg-resampled jobs; uniform and random-walk capacity).

``python -m sim.bench ias-scaling`` times IAS's heuristics (``ias-h1`` under both H1 threshold readings, full
``ias``) against FF in CPU seconds on the heavy-tailed case at growing platform sizes (``--machines``), so a
superlinear queue scan shows as CPU time per machine that grows with the size.

``python -m sim.bench checkpoint`` times First-Fit at Borg scale with checkpointing
(``checkpoint_interval_s`` 1800, overhead 30 s, restart 60 s; also an interval no job reaches, and per-job
columns) against First-Fit without, best of three each, CPU seconds and peak RSS, in one process (issue
the target: within 1.2×).

``python -m sim.bench engines`` measures where the interpreted engine stops paying: numba's one-off start in
a fresh process (import, CPU target, cache load) against the interpreted and compiled kernels' CPU time on
First-Fit instances of growing size (``sim.engine.PYTHON_MAX_JOBS`` is the crossover).

``python -m sim.bench small`` runs a 200-job ``varcap simulate`` against a small ``heapq`` First-Fit script,
each as a fresh process (:mod:`sim.bench.small`).

``python -m sim.bench reference --sizes …`` runs First-Fit's compiled kernel against a reference First-Fit in C
with the same semantics (compiled at run time) at offered load 0.5 by default, and ``varcap simulate`` as a
whole process (:mod:`sim.bench.reference`).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

from sim import random_walk, simulate
from sim.workloads.generators import bootstrap_jobs, offered_load, to_sim_jobs


def _core_jobs(workload: str) -> pl.DataFrame:
    import duckdb

    from sim.paths import warehouse_path
    from sim.tables import read_core_jobs

    path = warehouse_path()
    if not path.exists():
        raise SystemExit(f"{path} not found: run `make run` first")
    with duckdb.connect(str(path), read_only=True) as con:
        return read_core_jobs(con, workload)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def case(
    name: str, jobs: pl.DataFrame, machines: int, cores: int, horizon: float, freq: float, policy: str = "ff"
) -> dict:
    cap = random_walk(machines, horizon, changes_per_hour=freq, step=0.15, seed=0)
    simulate(jobs.head(2000), cap, machines, cores, horizon, policy=policy)  # compile / warm up
    t = time.perf_counter()
    r = simulate(jobs, cap, machines, cores, horizon, policy=policy)
    wall = time.perf_counter() - t
    m = r.metrics
    return {
        "case": name,
        "policy": policy,
        "jobs": m["jobs"],
        "events": r.events,
        "wall_s": wall,
        "events_per_s": r.events / wall,
        "goodput": m["goodput"],
        "terminations": m["terminations"],
        "peak_rss_mb": _rss_mb(),
    }


def borg_scale_jobs(
    n: int = 600_000, machines: int = 200, cores: int = 24, days: float = 7.0
) -> pl.DataFrame:
    borg = _core_jobs("borg2011").filter(~pl.col("censored"))
    tmpl, _ = to_sim_jobs(borg, cores)
    horizon = days * 86400
    return bootstrap_jobs(tmpl, n, horizon, target_cores=0.8 * 0.7 * machines * cores, seed=0)


def bench_intervals(n: int = 1_000_000, lookups: int = 1_000_000) -> None:
    """KM fit + conditional table on ``n`` intervals; ``lookups`` vectorized p_survive queries."""
    import numpy as np

    from sim.capacity.intervals import IntervalModel

    rng = np.random.default_rng(0)
    length = rng.geometric(0.2, n) * 900.0 * rng.uniform(0.5, 1.5, n).round(2)
    observed = rng.random(n) > 0.05
    t = time.perf_counter()
    model = IntervalModel.fit(length, observed)
    tab = model.conditional_table(np.arange(0, 48) * 3600.0, np.arange(1, 73) * 3600.0)
    model.mean_remaining(tab["uptime_s"].to_numpy())
    fit_s = time.perf_counter() - t
    u = rng.uniform(0, 86400, lookups)
    d = rng.uniform(0, 86400, lookups)
    t = time.perf_counter()
    p = model.p_survive(u, d)
    look_s = time.perf_counter() - t
    t = time.perf_counter()
    model.mean_remaining(u)
    mr_s = time.perf_counter() - t
    print(
        f"KM fit + conditional table ({tab.height} cells) on {n:,} intervals: {fit_s:.3f} s   (target ≤ 1 s)"
    )
    print(
        f"{lookups:,} p_survive lookups: {look_s:.3f} s ({lookups / look_s / 1e6:.1f} M/s)   (target ≤ 0.5 s)"
    )
    print(f"{lookups:,} mean_remaining lookups: {mr_s:.3f} s; mean p = {p.mean():.3f}")


def evidence(policies: list[str]) -> None:
    """Seed schedulers vs FF on a 1 change/h, step 0.15 random walk (30 days): the embedded azure workload on
    a platform sized so its offered load is 80 % of the mean capacity (as in the thesis), and the thesis'
    Zipf-1.5 workload on 1000 machines × 24 cores."""
    from sim.workloads.generators import zipf_workload

    horizon = 30 * 86400.0
    az, _ = to_sim_jobs(_core_jobs("azure"), 24)
    m_az = int(round(offered_load(az, horizon) / (0.8 * 0.7 * 24)))
    cases = [("azure", az, m_az), ("zipf-1.5", zipf_workload(1.5, 1000, 24, horizon, seed=0), 1000)]
    print(
        f"{'workload':9s} {'machines':>8s} {'policy':10s} {'terms':>8s} {'goodput':>8s} {'wasted':>7s} "
        f"{'not_sched':>9s} {'lat_p50_s':>9s} {'wall_s':>6s}"
    )
    for name, jobs, machines in cases:
        cap = random_walk(machines, horizon, changes_per_hour=1.0, step=0.15, seed=0)
        for p in policies:
            t = time.perf_counter()
            r = simulate(jobs, cap, machines, 24, horizon, policy=p)
            m = r.metrics
            print(
                f"{name:9s} {machines:>8d} {p:10s} {m['terminations']:>8,d} {m['goodput']:>8.4f} "
                f"{m['wasted_fraction']:>7.4f} {m['jobs_not_scheduled']:>9,d} {m['latency_p50_s']:>9.0f} "
                f"{time.perf_counter() - t:>6.2f}"
            )


def harvest(days: float = 7.0, pool: int = 64, nodes: int = 32, load: float = 0.6) -> None:
    """SlackSched vs FF, the CapacityScheduler (random matching) and the Oracle on a synthetic harvest-VM pool (1 h mean inter-change, heterogeneous
    stability), with and without the Acquirer (cluster of ``nodes`` HVMs out of ``pool``)."""
    import numpy as np

    from sim.capacity.generators import harvest_trace
    from sim.workloads.generators import harvest_tasks

    horizon = days * 86400.0
    tr = harvest_trace(pool, horizon, max_cores=48, seed=0, stability_spread=1.0)
    jobs = harvest_tasks(nodes * float(np.mean(tr.cores)), horizon, load, seed=0)
    n = jobs.height
    print(f"harvest pool {pool} HVMs, cluster {nodes}, {days:g} d, {n:,} jobs (≈{load:.0%} of mean cores)")
    print(
        f"{'policy':20s} {'acquirer':>8s} {'terms':>7s} {'wasted':>7s} {'mean_stretch':>12s} "
        f"{'p90_wait_s':>10s} {'completed':>9s} {'wall_s':>6s}"
    )
    for acq in (False, True):
        for p in ("ff", "capsched", "slacksched-nodelay", "slacksched", "slacksched-heartbeat", "oracle"):
            st = {"nodes": str(nodes), "acquirer": str(acq)}
            t = time.perf_counter()
            m = simulate(jobs, tr, pool, 48, horizon, policy=p, settings=st, seed=0).metrics
            print(
                f"{p:20s} {str(acq):>8s} {m['terminations']:>7,d} {m['wasted_fraction']:>7.4f} "
                f"{m['mean_stretch']:>12.3f} {m['latency_p90_s']:>10.0f} {m['completed']:>9,d} "
                f"{time.perf_counter() - t:>6.2f}"
            )


def riskaware(policies: list[str], n_jobs: int = 3000) -> None:
    """Paper 001 §5.4 setup: M_avg = 24, M_ra = 8, φ = 1200 s, 24 cores, three weeks; ``n_jobs`` jobs
    resampled from the finished borg2011 runs, durations scaled to 80 % of the mean capacity."""
    from sim.capacity.generators import risk_aware_walk

    horizon = 21 * 86400.0
    tmpl, _ = to_sim_jobs(_core_jobs("borg2011").filter(~pl.col("censored")), 24)
    jobs = bootstrap_jobs(tmpl, n_jobs, horizon, target_cores=0.8 * 24 * 24, seed=0)
    cap = risk_aware_walk(24, 8, 1200.0, horizon, seed=0)
    print(f"paper 001 setup: {n_jobs:,} borg2011 jobs, M_avg 24 ± 8, φ 1200 s, 21 d, 32 × 24 cores")
    print(f"{'policy':20s} {'terms':>7s} {'goodput':>8s} {'wasted':>7s} {'max_stretch':>11s} {'wall_s':>6s}")
    for p in policies:
        t = time.perf_counter()
        m = simulate(jobs, cap, 32, 24, horizon, policy=p).metrics
        print(
            f"{p:20s} {m['terminations']:>7,d} {m['goodput']:>8.4f} {m['wasted_fraction']:>7.4f} "
            f"{m['max_stretch']:>11.1f} {time.perf_counter() - t:>6.2f}"
        )


def heavy_tailed_case(machines: int = 1000, days: float = 30.0) -> tuple[pl.DataFrame, object, float]:
    """Pareto(1.5) durations (min 1 h, cap 72 h) at 80 % of the mean capacity of a 1 change/h random walk."""
    from sim.workloads.generators import pareto_workload

    horizon = days * 86400.0
    cap = random_walk(machines, horizon, changes_per_hour=1.0, step=0.15, seed=0)
    return pareto_workload(1.5, 3600.0, machines, 24, horizon, seed=0), cap, horizon


def ias_scaling(sizes: list[int], days: float = 30.0) -> None:
    """CPU seconds of ff, ias-h1 (``fit`` and ``p90`` thresholds) and ias on :func:`heavy_tailed_case` at
    each platform size, with CPU ms per machine (flat = linear in the instance size)."""
    runs = [("ff", {}), ("ias-h1", {"h1_threshold": "fit"}), ("ias-h1", {"h1_threshold": "p90"}), ("ias", {})]
    print(f"{'machines':>8s} {'jobs':>8s} {'policy':24s} {'cpu_s':>7s} {'ms/machine':>10s} {'goodput':>8s}")
    for machines in sizes:
        jobs, cap, horizon = heavy_tailed_case(machines, days)
        for p, st in runs:
            simulate(jobs.head(500), cap, machines, 24, horizon, policy=p, settings=st)  # compile / cache
            c = time.process_time()
            r = simulate(jobs, cap, machines, 24, horizon, policy=p, settings=st)
            cpu = time.process_time() - c
            label = p + "".join(f" {k}={v}" for k, v in st.items())
            print(
                f"{machines:>8d} {jobs.height:>8,d} {label:24s} {cpu:>7.2f} {1000 * cpu / machines:>10.2f} "
                f"{r.metrics['goodput']:>8.4f}",
                flush=True,
            )


def ias_ratio_case(
    n: int = 868_000, machines: int = 1000, days: float = 30.0, capacity: str = "uniform"
) -> tuple[pl.DataFrame, object, float]:
    """The IAS scale instance: ``n`` Borg-resampled jobs (the finished borg2011 runs' (duration, cores),
    Poisson arrivals, durations scaled to 80 % of the mean capacity) on ``machines`` × 24 cores for ``days``;
    capacity ``uniform`` (paper 003's uniform draw in [0.4, 1.0] of the machines each hour, seed 0: whole
    blocks of machines turn on together, the hard case) or ``walk`` (random walk, 1 change/h, step 0.15);
    (jobs, trace, horizon)."""
    from sim.capacity.generators import random_uniform

    horizon = days * 86400.0
    jobs = bootstrap_jobs(_borg_template(24), n, horizon, 0.8 * 0.7 * machines * 24, seed=0)
    if capacity == "uniform":
        cap = random_uniform(machines, horizon, 1.0, seed=0)
    else:
        cap = random_walk(machines, horizon, changes_per_hour=1.0, step=0.15, seed=0)
    return jobs, cap, horizon


def ias_ratio(n: int = 868_000, machines: int = 1000, days: float = 30.0, repeat: int = 1) -> dict:
    """FF and IAS CPU seconds in this process on :func:`ias_ratio_case` under both capacities (after a
    small warm-up run of each, so compilation or the cache load is not counted; best of ``repeat``) and
    their ratio (the target: ≤ 2)."""
    import os

    out: dict = {}
    for capacity in ("uniform", "walk"):
        jobs, cap, horizon = ias_ratio_case(n, machines, days, capacity)
        print(f"{jobs.height:,} jobs, {machines} machines x 24 cores, {days:g} d, {capacity} 1 change/h; "
              f"load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
        for p in ("ff", "ias"):
            simulate(jobs.head(2000), cap, machines, 24, horizon, policy=p)  # compile / load the cache
            best = float("inf")
            for _ in range(repeat):
                c = time.process_time()
                r = simulate(jobs, cap, machines, 24, horizon, policy=p)
                best = min(best, time.process_time() - c)
            out[(capacity, p)] = best
            print(f"  {p:4s} {best:7.2f} CPU s  goodput {r.metrics['goodput']:.4f}  events {r.events:,}  "
                  f"peak RSS {_rss_mb():.0f} MB", flush=True)  # fmt: skip
        ratio = out[(capacity, "ias")] / out[(capacity, "ff")]
        out[(capacity, "ratio")] = ratio
        print(f"  ias / ff = {ratio:.2f} (target ≤ 2)", flush=True)
    return out


def one(case_name: str, policy: str) -> dict:
    """One target measurement in this process: wall and CPU seconds of the simulation, peak RSS."""
    if case_name == "borg":
        jobs, machines, horizon = borg_scale_jobs(), 200, 7 * 86400.0
        cap = random_walk(machines, horizon, changes_per_hour=8.0, step=0.15, seed=0)
    else:
        jobs, cap, horizon = heavy_tailed_case()
        machines = 1000
    simulate(jobs.head(2000), cap, machines, 24, horizon, policy=policy)  # compile / load the cache
    w, c = time.perf_counter(), time.process_time()
    r = simulate(jobs, cap, machines, 24, horizon, policy=policy)
    return {
        "jobs": jobs.height,
        "wall_s": time.perf_counter() - w,
        "cpu_s": time.process_time() - c,
        "rss_mb": _rss_mb(),
        "goodput": r.metrics["goodput"],
        "events": r.events,
    }


def checkpoint_bench(repeat: int = 3) -> None:
    """FF with and without checkpointing on the Borg-scale case: best-of-``repeat`` CPU seconds, the
    ratio, and the process's peak RSS after each variant's runs (variants in order: ff, then with
    checkpoints, so a growth in peak is the checkpointing's); the load average at the start and end."""
    import os

    import numpy as np

    jobs, machines, horizon = borg_scale_jobs(), 200, 7 * 86400.0
    cap = random_walk(machines, horizon, changes_per_hour=8.0, step=0.15, seed=0)
    on = {"checkpoint_interval_s": "1800", "checkpoint_overhead_s": "30", "restart_overhead_s": "60"}
    # the same settings as per-job columns (sim.checkpoint.per_job), half the jobs at twice the interval
    tau = np.where(np.arange(jobs.height) % 2 == 0, 1800.0, 3600.0)
    per_job = jobs.with_columns(
        pl.Series("checkpoint_interval_s", tau),
        pl.lit(30.0).alias("checkpoint_overhead_s"),
        pl.lit(60.0).alias("restart_overhead_s"),
    )
    load0 = os.getloadavg()[0]
    simulate(jobs.head(2000), cap, machines, 24, horizon, settings=on)  # compile / load the cache
    # interval beyond every job: the checkpoint code runs, no checkpoint is taken (same schedule as ff)
    variants = (
        ("ff", jobs, None),
        ("ff+checkpoint", jobs, on),
        ("ff+idle-ck", jobs, {"checkpoint_interval_s": "1e12"}),
        ("ff+per-job-ck", per_job, None),
    )
    best: dict[str, tuple[float, dict, float]] = {}
    for name, js, st in variants:
        for _ in range(repeat):
            c = time.process_time()
            r = simulate(js, cap, machines, 24, horizon, settings=st)
            dt = time.process_time() - c
            if name not in best or dt < best[name][0]:
                best[name] = (dt, r.metrics, 0.0)
        best[name] = (*best[name][:2], _rss_mb())
    for name, (dt, m, rss) in best.items():
        print(
            f"{name:14s} cpu {dt:6.2f} s  peak RSS {rss:5.0f} MB  goodput {m['goodput']:.4f}  "
            f"wasted {m['wasted_fraction']:.4f}  terminations {m['terminations']:,}"
        )
    for name in ("ff+checkpoint", "ff+idle-ck", "ff+per-job-ck"):
        print(f"ratio {name} / ff {best[name][0] / best['ff'][0]:.3f} (target ≤ 1.2)")
    print(
        f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end ({os.cpu_count()} CPUs)"
    )


def _measure(case_name: str, policy: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "sim.bench", "one", "--case", case_name, "--policies", policy],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def targets(only: list[str] | None = None) -> None:
    """The scale targets, one fresh process per measurement."""
    rows = []
    want = set(only or ["ff", "target-asap", "packed-target-asap", "slacksched-nodelay", "ias"])
    ff = _measure("borg", "ff") if want & {"ff", "rss"} else None
    if ff:
        rows.append(
            ("ff, Borg 600k: wall s (CPU s)", ff, f"{ff['wall_s']:.1f} ({ff['cpu_s']:.1f})", "≈1.2", None)
        )
        rows.append(("ff, Borg 600k: peak RSS MB", ff, f"{ff['rss_mb']:.0f}", "≤ 500", ff["rss_mb"] <= 500))
    for p in ("target-asap", "packed-target-asap", "slacksched-nodelay"):
        if p in want:
            r = _measure("borg", p)
            fig = f"{r['wall_s']:.1f} ({r['cpu_s']:.1f})"
            rows.append((f"{p}, Borg 600k: wall s (CPU s)", r, fig, "≤ 60", r["cpu_s"] <= 60))
            rows.append(
                (f"{p}, Borg 600k: peak RSS MB", r, f"{r['rss_mb']:.0f}", "≤ 500", r["rss_mb"] <= 500)
            )
    if "ias" in want:
        f1, i1 = _measure("heavy", "ff"), _measure("heavy", "ias")
        ratio = i1["cpu_s"] / f1["cpu_s"]
        fig = f"{ratio:.2f} (ias {i1['cpu_s']:.1f} s / ff {f1['cpu_s']:.1f} s CPU)"
        rows.append(("IAS / FF, 1000 machines, Pareto 30 d", i1, fig, "≤ 2", ratio <= 2))
    print(f"{'target':46s} {'measured':36s} {'limit':>6s} {'met':>4s}")
    for name, _, fig, lim, ok in rows:
        print(f"{name:46s} {fig:36s} {lim:>6s} {'' if ok is None else ('yes' if ok else 'NO'):>4s}")


def _fresh_cpu(engine: str) -> float:
    """CPU seconds of a fresh process that imports the engine and runs a 1-job kernel on ``engine``."""
    code = (
        "import time; c = time.process_time(); import numpy as np; from sim.engine import run_kernel; "
        "run_kernel(np.zeros(1), np.ones(1), np.ones(1), None, np.zeros(1), np.ones(1, np.int64), 1, 1.0, "
        f"0.0, 10.0, engine={engine!r}); print(time.process_time() - c)"
    )
    return float(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    )


def engine_instance(n: int, machines: int = 8, seed: int = 0) -> tuple[pl.DataFrame, object, float]:
    """A First-Fit-engine instance of ``n`` jobs on ``machines`` × 8 cores: a random walk at 2 changes/h,
    Pareto(1.5) durations, 1/2/4 cores, offered load ≈ 80 % of the mean capacity; (jobs, trace, horizon)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    horizon = max(86400.0, 350.0 * n * 8 / machines)
    cap = random_walk(machines, horizon, changes_per_hour=2.0, step=0.25, seed=seed)
    sub = np.sort(rng.uniform(0, 0.8 * horizon, n)).round()
    dur = np.minimum((rng.pareto(1.5, n) + 1) * 1800, horizon).round()
    jobs = pl.DataFrame({"job_id": np.arange(n), "submit_s": sub, "duration_s": dur,
                         "cores": rng.choice([1.0, 2.0, 4.0], n)})  # fmt: skip
    return jobs, cap, horizon


ENGINE_POLICIES = ("ff", "ias", "oracle")  # every admission predicate of the compiled engine


def engines(sizes: tuple[int, ...] = (1000, 2000, 5000, 10000, 20000), repeat: int = 3) -> int:
    """Where the interpreted engine stops paying, in CPU seconds: numba's one-off start (a fresh process
    running one job compiled minus one running it interpreted: import, CPU target, cache load), then per
    policy of :data:`ENGINE_POLICIES` (one per admission predicate) each engine's best of ``repeat``
    ``sim.simulate`` runs on :func:`engine_instance` of ``sizes`` jobs. A policy's break-even is the size at
    which interpreted = start + compiled (linear between the sizes around it); the engine's cut-over
    (``sim.engine.PYTHON_MAX_JOBS``) is the smallest of them, since the size rule does not know the policy.
    Returns that smallest break-even."""
    import numpy as np

    from sim import simulate
    from sim.engine import PYTHON_MAX_JOBS, use_engine

    jobs, cap, horizon = engine_instance(50)
    with use_engine("compiled"):  # this process: compiled engine loaded for every predicate
        for p in ENGINE_POLICIES:
            simulate(jobs, cap, 8, 8.0, horizon, p)
    start = min(_fresh_cpu("compiled") for _ in range(repeat)) - min(
        _fresh_cpu("python") for _ in range(repeat)
    )
    print(f"numba start in a fresh process (import, CPU target, cache load): {start:.2f} s CPU")
    print(f"{'policy':7s} {'jobs':>6s} {'interpreted s':>14s} {'compiled s':>11s} {'start+compiled s':>16s}")
    evens = {}
    for p in ENGINE_POLICIES:
        pts = []
        for n in sizes:
            jobs, cap, horizon = engine_instance(n)
            row = []
            for kind in ("python", "compiled"):
                best = np.inf
                with use_engine(kind):
                    for _ in range(repeat if n <= 5000 else 1):
                        c = time.process_time()
                        simulate(jobs, cap, 8, 8.0, horizon, p)
                        best = min(best, time.process_time() - c)
                row.append(best)
            pts.append((n, row[0] - (start + row[1])))
            print(f"{p:7s} {n:>6d} {row[0]:>14.3f} {row[1]:>11.4f} {start + row[1]:>16.3f}", flush=True)
            if pts[-1][1] > 0:
                break
        evens[p] = sizes[-1]
        for (n0, d0), (n1, d1) in zip([(0, -start), *pts], pts, strict=False):
            if d0 <= 0 < d1:
                evens[p] = int(n0 + (n1 - n0) * (-d0) / (d1 - d0))
                break
    print("break-even (interpreted = numba start + compiled): "
          + ", ".join(f"{p} {n:,} jobs" for p, n in evens.items())
          + f"; cut-over = the smallest, {min(evens.values()):,} (PYTHON_MAX_JOBS = {PYTHON_MAX_JOBS:,})")  # fmt: skip
    return min(evens.values())


BORG_JOBS_SQL = (
    "SELECT duration_s, coalesce(cores, cpu_request_norm) AS cores FROM core_jobs "
    "WHERE workload = 'borg2011' AND NOT censored ORDER BY submit_s, job_id"
)
SCALE_START = "<!-- sim.bench scale: generated, do not edit -->"
SCALE_END = "<!-- /sim.bench scale -->"


def _borg_template(cores: int) -> pl.DataFrame:
    """The finished borg2011 runs' (duration, cores) scaled to ``cores`` per machine, read lazily: only the
    two columns, from the read-only snapshot when there is one (the warehouse itself otherwise)."""
    import duckdb

    from sim.paths import warehouse_path

    path = warehouse_path()
    snap = path.with_name("warehouse.snapshot.duckdb")
    src = snap if snap.exists() else path
    if not src.exists():
        raise SystemExit(f"{path} not found: run `make run` first")
    with duckdb.connect(str(src), read_only=True) as con:
        df = con.sql(BORG_JOBS_SQL).pl()
    df = df.with_columns((pl.col("cores") * cores).alias("cores"))
    return df.filter(pl.col("cores") <= cores)


def scale_inputs(
    n: int, out_dir: str, machines: int = 200, cores: int = 24, load: float = 0.8
) -> tuple[str, float]:
    """The Borg-scale jobs file for ``n`` jobs (parquet under ``out_dir``, built once): 600,000 jobs a week
    at the default offered load of 80 % of the mean capacity, so the horizon grows with ``n``; a lower
    ``load`` keeps ``n`` jobs and stretches the horizon by 0.8 / ``load``; (path, horizon)."""
    horizon = 7 * 86400.0 * n / 600_000 * (0.8 / load)
    tag = "" if load == 0.8 else f"-load{load:g}"
    path = Path(out_dir) / f"borg-{n}-{machines}x{cores}{tag}.parquet"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        jobs = bootstrap_jobs(_borg_template(cores), n, horizon, load * 0.7 * machines * cores, seed=0)
        jobs.write_parquet(path)
    return str(path), horizon


def run_simulate_process(argv: list[str]) -> dict:
    """Run ``varcap simulate`` with ``argv`` in a fresh process; its own CPU seconds (user + sys), wall
    seconds and peak RSS (:func:`sim.bench.process.measured_process`: the process's own, not the caller's).
    Raises RuntimeError with the end of its stderr if it fails."""
    from sim.bench.process import measured_process

    cmd = [sys.executable, "-m", "pipelines.cli", "simulate", *argv]
    r = measured_process(cmd, name=f"varcap simulate {' '.join(argv)}")
    return {"cpu_s": r["cpu_s"], "wall_s": r["wall_s"], "rss_mb": r["rss_mb"]}


def scale(
    sizes: list[int],
    policies: list[str],
    out_dir: str,
    markdown: str | None,
    offered_load: float | tuple[float, ...] = (0.6, 0.5),
) -> list[dict]:
    """Each policy on the Borg-scale case of each size of ``sizes`` jobs at each offered load of
    ``offered_load`` (one or several; 200 × 24 cores, random walk at 8 changes/h, step 0.15), run as a user runs it:
    ``varcap simulate`` on a parquet file in a fresh process, whose CPU seconds and peak RSS are measured
    (start-up, reading, warm-cache check and writing included), after one ``varcap warm`` (not measured) as
    ``make install`` runs it. Prints a markdown table (a row per load, size and policy, with its peak RSS);
    ``markdown``: also write it to that file, between the generated-table markers if the file has them
    (docs/simulator.md), else the whole file. ``offered_load``: offered loads of the mean capacity; the
    default 0.6 and 0.5 keep First-Fit's queue stable (at 0.8, once kills are counted, the backlog grows with
    the trace for every policy, First-Fit included: the ``mean wait s`` column shows it)."""
    import json
    import os

    offered_loads = (offered_load,) if isinstance(offered_load, (int, float)) else tuple(offered_load)
    rows = []
    # as after `make install`: every compiled path cached first (`varcap warm`), so no row pays for
    # compiling (a Target* row first after an edit compiled its hooks: ~12 CPU s, +140 MB)
    subprocess.run([sys.executable, "-m", "pipelines.cli", "warm"], check=True, stdout=subprocess.DEVNULL)
    load = os.getloadavg()[0]
    for offered in offered_loads:
        tag = "" if offered == 0.8 else f"-load{offered:g}"
        for n in sizes:
            path, horizon = scale_inputs(n, out_dir, load=offered)
            for p in policies:
                res = Path(out_dir) / f"result-{p}-{n}{tag}.json"
                argv = ["--jobs", path, "--capacity", "random-walk:changes_per_hour=8,step=0.15,seed=0",
                        "--machines", "200", "--cores", "24", "--horizon-s", f"{horizon:.0f}", "--policy", p,
                        "--out", str(res)]  # fmt: skip
                try:
                    m = run_simulate_process(argv)
                except RuntimeError as e:  # one row says so; the others are still measured
                    print(e, file=sys.stderr)
                    rows.append(
                        {"policy": p, "jobs": n, "load": offered, "failed": str(e).splitlines()[-1][-120:]}
                    )
                    continue
                metrics = json.loads(res.read_text())
                metrics = metrics.get("metrics", metrics)
                rows.append({"policy": p, "jobs": n, "load": offered, **m, "us_per_job": 1e6 * m["cpu_s"] / n,
                             "goodput": metrics.get("goodput"), "days": horizon / 86400.0,
                             "wait_s": metrics.get("latency_mean_s")})  # fmt: skip
                r = rows[-1]
                print(f"{p} {n:,} load {offered:g}: {r['cpu_s']:.1f} CPU s, {r['rss_mb']:.0f} MB",
                      file=sys.stderr, flush=True)  # fmt: skip
    lines = [
        f"`python -m sim.bench scale --sizes {' '.join(map(str, sizes))} --policies {' '.join(policies)}"
        f" --offered-load {' '.join(f'{x:g}' for x in offered_loads)}`"
        f" ({time.strftime('%Y-%m-%d', time.gmtime())}, load {load:.1f} at the start, 2 cores): one fresh"
        " `varcap simulate` process per row on a parquet jobs file after one `varcap warm`, its own CPU s"
        " (user + sys: start-up, reading, warm-cache check, simulating, writing) and peak RSS.",
        "",
        "| offered load | policy | jobs | days | CPU s | µs CPU / job | wall s | peak RSS MB | goodput | mean wait s |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if "failed" in r:
            lines.append(
                f"| {r['load']:g} | `{r['policy']}` | {r['jobs']:,} | | failed: {r['failed']} | | | | | |"
            )
            continue
        g = "" if r["goodput"] is None else f"{r['goodput']:.4f}"
        w = "" if r["wait_s"] is None else f"{r['wait_s']:,.0f}"
        lines.append(
            f"| {r['load']:g} | `{r['policy']}` | {r['jobs']:,} | {r['days']:.3g} | {r['cpu_s']:.1f} | "
            f"{r['us_per_job']:.1f} | {r['wall_s']:.1f} | {r['rss_mb']:.0f} | {g} | {w} |"
        )
    table = "\n".join(lines)
    print(table)
    if markdown:
        write_table(Path(markdown), table)
    return rows


def write_table(path: Path, table: str, start: str = SCALE_START, end: str = SCALE_END) -> None:
    """Put ``table`` between the generated-table markers ``start`` and ``end`` of ``path`` (replacing what was
    there), or make it the whole file if the file has no markers (or does not exist)."""
    text = path.read_text() if path.exists() else ""
    if start in text and end in text.split(start, 1)[1]:
        a, rest = text.split(start, 1)
        _, z = rest.split(end, 1)
        text = f"{a}{start}\n{table}\n{end}{z}"
    else:
        text = table + "\n"
    path.write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser(description="simulator benchmarks")
    ap.add_argument(
        "what",
        nargs="?",
        default="engine",
        choices=[
            "engine",
            "intervals",
            "evidence",
            "harvest",
            "riskaware",
            "targets",
            "one",
            "engines",
            "ias-scaling",
            "scale",
            "checkpoint",
            "ias-ratio",
        ],
    )
    ap.add_argument("--policies", nargs="*", default=["ff"])
    ap.add_argument("--skip-azure", action="store_true")
    ap.add_argument("--case", default="borg", choices=["borg", "heavy"])
    ap.add_argument("--only", nargs="*", help="targets: only these (ff, target-asap, …, ias)")
    ap.add_argument("--machines", nargs="*", type=int, default=[100, 200, 300], help="ias-scaling: sizes")
    ap.add_argument("--days", type=float, default=30.0, help="ias-scaling: horizon in days")
    ap.add_argument("--jobs", type=int, default=868_000, help="ias-ratio: jobs (1,000 machines, 30 d)")
    ap.add_argument("--repeat", type=int, default=1, help="ias-ratio: best of this many runs")
    ap.add_argument("--sizes", nargs="*", type=int, default=[100_000, 600_000], help="scale: jobs")
    ap.add_argument(
        "--offered-load",
        nargs="*",
        type=float,
        default=[0.6, 0.5],
        help="scale: offered loads of the mean capacity (0.6, 0.5: First-Fit's queue is stable; at 0.8 the "
        "backlog grows with the trace for every policy)",
    )
    ap.add_argument("--out-dir", default="data/bench", help="scale: where the jobs files and results go")
    ap.add_argument("--markdown", help="scale: write the table to this file (between its markers, if any)")
    a = ap.parse_args()
    if a.what == "scale":
        scale(a.sizes, a.policies, a.out_dir, a.markdown, tuple(a.offered_load))
        return
    if a.what == "targets":
        targets(a.only)
        return
    if a.what == "checkpoint":
        checkpoint_bench()
        return
    if a.what == "engines":
        engines()
        return
    if a.what == "ias-ratio":
        ias_ratio(a.jobs, a.machines[0] if a.machines != [100, 200, 300] else 1000, a.days, a.repeat)
        return
    if a.what == "ias-scaling":
        ias_scaling(a.machines, a.days)
        return
    if a.what == "one":
        print(json.dumps(one(a.case, a.policies[0])))
        return
    if a.what == "intervals":
        bench_intervals()
        return
    if a.what == "riskaware":
        riskaware(
            a.policies
            if a.policies != ["ff"]
            else ["ff", "ff-unaware", "target-stretch", "target-asap", "packed-target-asap"]
        )
        return
    if a.what == "harvest":
        harvest()
        return
    if a.what == "evidence":
        evidence(a.policies if a.policies != ["ff"] else ["ff", "ff-unaware", "ias", "ias-h4", "oracle"])
        return
    rows = []
    borg = borg_scale_jobs()
    for p in a.policies:
        rows.append(case("borg-scale 600k/200x24/7d/8ph", borg, 200, 24, 7 * 86400, 8.0, p))
    if not a.skip_azure:
        az, dropped = to_sim_jobs(_core_jobs("azure"), 24)
        print(
            f"azure: {az.height} jobs ({dropped} larger than a machine dropped), offered load "
            f"{offered_load(az, 30 * 86400):.0f} cores of {1000 * 24 * 0.7:.0f} mean capacity"
        )
        for p in a.policies:
            rows.append(case("azure 100k/1000x24/30d/1ph", az, 1000, 24, 30 * 86400, 1.0, p))
    print(
        f"{'case':32s} {'policy':8s} {'jobs':>8s} {'events':>9s} {'wall s':>7s} {'events/s':>10s} "
        f"{'goodput':>8s} {'terms':>7s} {'RSS MB':>7s}"
    )
    for r in rows:
        print(
            f"{r['case']:32s} {r['policy']:8s} {r['jobs']:>8,d} {r['events']:>9,d} {r['wall_s']:>7.2f} "
            f"{r['events_per_s']:>10,.0f} {r['goodput']:>8.4f} {r['terminations']:>7,d} {r['peak_rss_mb']:>7.0f}"
        )


if __name__ == "__main__":
    main()
