"""Simulator benchmarks: ``python -m sim.bench [engine]``.

* Borg-scale: 600,000 jobs on 200 machines × 24 cores for 7 days, random walk at 8 changes/h. Jobs
  resample (duration, cpu) pairs of the finished borg2011 task runs in the warehouse (CPU scaled to 24
  cores), Poisson arrivals, durations scaled to an offered load of 80 % of the mean capacity.
* Azure-scale: the embedded azure workload (100,488 jobs) on 1,000 machines × 24 cores for 30 days,
  random walk at 1 change/h, step 0.15.

Prints wall time, events/s and peak RSS. The warehouse must exist (``make run``); this dev tool reads it
read-only, the simulator itself never touches DuckDB.

``python -m sim.bench targets`` runs each target of issue #11 in a fresh process (so peak RSS is its own)
and prints one table: target, measured figure (wall and CPU seconds: the machine is shared), limit, met.

``python -m sim.bench ias-scaling`` times IAS's heuristics (``ias-h1`` under both H1 threshold readings, full
``ias``) against FF in CPU seconds on the heavy-tailed case at growing platform sizes (``--machines``), so a
superlinear queue scan shows as CPU time per machine that grows with the size.

``python -m sim.bench checkpoint`` times First-Fit at Borg scale with checkpointing
(``checkpoint_interval_s`` 1800, overhead 30 s, restart 60 s) against First-Fit without, best of three each,
CPU seconds, in one process (issue #28's target: within 1.2×).

``python -m sim.bench engines`` measures where the interpreted engine stops paying: numba's one-off start in
a fresh process (import, CPU target, cache load) against the interpreted and compiled kernels' CPU time on
First-Fit instances of growing size (``sim.engine.PYTHON_MAX_JOBS`` is the crossover).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import polars as pl

from sim import random_walk, simulate
from sim.workloads import bootstrap_jobs, offered_load, to_sim_jobs


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

    from sim.intervals import IntervalModel

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
    from sim.workloads import zipf_workload

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

    from sim.generators import harvest_trace
    from sim.workloads import harvest_tasks

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
    """Seed 001 §5.4 setup: M_avg = 24, M_ra = 8, φ = 1200 s, 24 cores, three weeks; ``n_jobs`` jobs
    resampled from the finished borg2011 runs, durations scaled to 80 % of the mean capacity."""
    from sim.generators import risk_aware_walk

    horizon = 21 * 86400.0
    tmpl, _ = to_sim_jobs(_core_jobs("borg2011").filter(~pl.col("censored")), 24)
    jobs = bootstrap_jobs(tmpl, n_jobs, horizon, target_cores=0.8 * 24 * 24, seed=0)
    cap = risk_aware_walk(24, 8, 1200.0, horizon, seed=0)
    print(f"seed 001 setup: {n_jobs:,} borg2011 jobs, M_avg 24 ± 8, φ 1200 s, 21 d, 32 × 24 cores")
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
    from sim.workloads import pareto_workload

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
    """FF with and without checkpointing on the Borg-scale case: best-of-``repeat`` CPU seconds, ratio."""
    jobs, machines, horizon = borg_scale_jobs(), 200, 7 * 86400.0
    cap = random_walk(machines, horizon, changes_per_hour=8.0, step=0.15, seed=0)
    on = {"checkpoint_interval_s": "1800", "checkpoint_overhead_s": "30", "restart_overhead_s": "60"}
    simulate(jobs.head(2000), cap, machines, 24, horizon, settings=on)  # compile / load the cache
    best: dict[str, tuple[float, dict]] = {}
    for _ in range(repeat):
        # interval beyond every job: the checkpoint code runs, no checkpoint is taken (same schedule as ff)
        idle = {"checkpoint_interval_s": "1e12"}
        for name, st in (("ff", None), ("ff+checkpoint", on), ("ff+idle-ck", idle)):
            c = time.process_time()
            r = simulate(jobs, cap, machines, 24, horizon, settings=st)
            dt = time.process_time() - c
            if name not in best or dt < best[name][0]:
                best[name] = (dt, r.metrics)
    for name, (dt, m) in best.items():
        print(
            f"{name:14s} cpu {dt:6.2f} s  goodput {m['goodput']:.4f}  wasted {m['wasted_fraction']:.4f}  "
            f"terminations {m['terminations']:,}"
        )
    for name in ("ff+checkpoint", "ff+idle-ck"):
        print(f"ratio {name} / ff {best[name][0] / best['ff'][0]:.3f} (target ≤ 1.2)")


def _measure(case_name: str, policy: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "sim.bench", "one", "--case", case_name, "--policies", policy],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def targets(only: list[str] | None = None) -> None:
    """Issue #11's targets, one fresh process per measurement."""
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


def engines(sizes: tuple[int, ...] = (10, 50, 100, 200, 400, 1000)) -> None:
    """CPU seconds: numba's start in a fresh process, then each engine on FF instances of ``sizes`` jobs
    (8 machines × 8 cores, a random walk at 2 changes/h, Pareto(1.5) durations, offered load ≈ 80 %)."""
    import numpy as np

    from sim.engine import PYTHON_MAX_JOBS, run_kernel

    code = (
        "import time; c = time.process_time(); import numpy as np; from sim.engine import run_kernel; "
        "run_kernel(np.zeros(1), np.ones(1), np.ones(1), None, np.zeros(1), np.ones(1, np.int64), 1, 1.0, "
        "0.0, 10.0, engine='compiled'); print(time.process_time() - c)"
    )
    run_kernel(np.zeros(1), np.ones(1), np.ones(1), None, np.zeros(1), np.ones(1, np.int64), 1, 1.0, 0.0, 10.0,
               engine="compiled")  # fmt: skip
    start = float(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    )
    print(f"numba start in a fresh process (import, CPU target, cache load): {start:.2f} s CPU")
    print(f"{'jobs':>6s} {'interpreted s':>14s} {'compiled s':>11s}  (PYTHON_MAX_JOBS = {PYTHON_MAX_JOBS})")
    rng = np.random.default_rng(0)
    for n in sizes:
        horizon = max(86400.0, 350.0 * n)  # offered load ≈ 80 % of the walk's mean capacity
        cap = random_walk(8, horizon, changes_per_hour=2.0, step=0.25, seed=0)
        sub = np.sort(rng.uniform(0, 0.8 * horizon, n)).round()
        dur = np.minimum((rng.pareto(1.5, n) + 1) * 1800, horizon).round()
        cores = rng.choice([1.0, 2.0, 4.0], n)
        args = (sub, dur, cores, None, cap.time_s, cap.machines_alive, 8, 8.0, 0.0, horizon)
        row = []
        for kind in ("python", "compiled"):
            c = time.process_time()
            run_kernel(*args, engine=kind)
            row.append(time.process_time() - c)
        print(f"{n:>6d} {row[0]:>14.3f} {row[1]:>11.4f}")


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
            "checkpoint",
        ],
    )
    ap.add_argument("--policies", nargs="*", default=["ff"])
    ap.add_argument("--skip-azure", action="store_true")
    ap.add_argument("--case", default="borg", choices=["borg", "heavy"])
    ap.add_argument("--only", nargs="*", help="targets: only these (ff, target-asap, …, ias)")
    ap.add_argument("--machines", nargs="*", type=int, default=[100, 200, 300], help="ias-scaling: sizes")
    ap.add_argument("--days", type=float, default=30.0, help="ias-scaling: horizon in days")
    a = ap.parse_args()
    if a.what == "targets":
        targets(a.only)
        return
    if a.what == "checkpoint":
        checkpoint_bench()
        return
    if a.what == "engines":
        engines()
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
