"""Harmony benchmarks: ``python -m sim.bench.harmony [lp|week|all]`` (prints figures; not a test).

* ``lp`` — one control interval's DCP-RELAX (HiGHS) + ⌈z⌉ rounding + CBS first-fit container placement
  on Table 2's 10,000 machines, 30 classes (15 size clusters × short/long), demand of ~10,000
  containers; median and 95th percentile over 50 intervals (target ≤ 50 ms).
* ``week`` — a 7-day run (``borg2011-7d``: hour blocks of the Borg 2011 sample, read-only from the
  warehouse) of CBS at ω = 1.2 on 10,000 machines; forecasting and simulation timed apart (target ≤ 2 min).
"""

from __future__ import annotations

import sys
import time

import numpy as np


def bench_lp(n: int = 50, seed: int = 0) -> dict[str, float]:
    from sim.harmony.engine import place_containers
    from sim.harmony.lp import DCPRelax
    from sim.harmony.machines import COOLING, SWITCH_USD, TABLE2
    from sim.harmony.provision import lemma1_bound, machines_from_lp, round_up

    rng = np.random.default_rng(seed)
    K = 30
    csize = np.column_stack([rng.lognormal(-3.5, 0.8, K), rng.lognormal(-3.6, 0.8, K)]).clip(0.002, 0.5)
    cap = np.array([[t.cpu, t.mem] for t in TABLE2])
    counts = np.array([t.count for t in TABLE2], dtype=np.int64)
    lp = DCPRelax(
        cap,
        counts,
        np.array([t.idle_w for t in TABLE2]),
        np.array([t.slope_w for t in TABLE2]),
        csize,
        1.2,
        1,
        300.0,
        COOLING,
        SWITCH_USD,
        0.2,
    )
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    ends = np.cumsum(counts).astype(np.int64)
    mtype = np.repeat(np.arange(4), counts)
    mcap = cap[mtype]
    order = np.argsort(-csize.max(axis=1)).astype(np.int64)
    z_prev = np.zeros(4)
    times, lp_times = [], []
    for i in range(n + 1):
        demand = rng.poisson(rng.uniform(50, 650, K)).astype(float)
        t0 = time.perf_counter()
        sol = lp.solve(demand, 0.1225, z_prev)
        t1 = time.perf_counter()
        target = machines_from_lp(sol.z[0], counts)
        state = np.zeros(int(counts.sum()), np.int64)
        for m in range(4):
            state[starts[m] : starts[m] + target[m]] = 1
        occ = np.zeros((state.size, K), np.int64)
        slots = np.zeros_like(occ)
        tgt = round_up(sol.x[0])
        place_containers(
            np.minimum(lemma1_bound(sol.x[0]), tgt), tgt, csize, order, mcap, state, occ, slots, starts, ends
        )
        t2 = time.perf_counter()
        z_prev = sol.z[0]
        if i:  # the first interval also compiles the numba placement
            times.append(t2 - t0)
            lp_times.append(t1 - t0)
    ms = np.array(times) * 1000
    return {
        "machines": float(counts.sum()),
        "classes": float(K),
        "containers_mean": float(demand.sum()),
        "lp_ms_median": float(np.median(lp_times) * 1000),
        "total_ms_median": float(np.median(ms)),
        "total_ms_p95": float(np.percentile(ms, 95)),
    }


def bench_week(scheme: str = "cbs", days: float = 7.0) -> dict[str, float]:
    import duckdb

    from sim.harmony.classify import fit_classes
    from sim.harmony.forecast import ForecastConfig
    from sim.harmony.run import HarmonyConfig, predict_demand, simulate_harmony
    from sim.harmony.workload import borg_frame, workload  # dev tool: reads the warehouse read-only
    from sim.paths import warehouse_path

    with duckdb.connect(str(warehouse_path()), read_only=True) as con:
        core = con.sql(  # borg_frame's cpu is the normalized request
            "SELECT * REPLACE (cpu_request_norm AS cores) FROM core_jobs WHERE workload = 'borg2011'"
        ).pl()
    borg = borg_frame(core)
    t0 = time.perf_counter()
    tc = fit_classes(
        borg["cpu"].to_numpy(),
        borg["mem"].to_numpy(),
        borg["priority"].to_numpy(),
        borg["duration_s"].to_numpy(),
        seed=0,
    )
    t1 = time.perf_counter()
    jobs, n_iv = workload(borg, "borg2011-7d", days=days)
    cfg = HarmonyConfig(scheme=scheme)
    c1 = time.process_time()
    dem = predict_demand(jobs, tc, n_iv, cfg, ForecastConfig(refit_every=288))
    t2, c2 = time.perf_counter(), time.process_time()
    r = simulate_harmony(jobs, tc, dem, cfg)
    t3, c3 = time.perf_counter(), time.process_time()
    return {
        "tasks": float(jobs.height),
        "intervals": float(n_iv),
        "classify_s": t1 - t0,
        "forecast_s": t2 - t1,
        "forecast_cpu_s": c2 - c1,
        "simulate_s": t3 - t2,
        "simulate_cpu_s": c3 - c2,
        "lp_s": r.lp_seconds,
        "energy_kwh": r.metrics["energy_kwh"],
        "delay_p90_s": r.metrics["delay_p90_s_all"],
    }


def main(argv: list[str] | None = None) -> int:
    what = (argv if argv is not None else sys.argv[1:]) or ["all"]
    if what[0] in ("lp", "all"):
        r = bench_lp()
        print(
            f"one interval at {r['machines']:.0f} machines, {r['classes']:.0f} classes, "
            f"~{r['containers_mean']:.0f} containers: LP {r['lp_ms_median']:.1f} ms, LP + rounding + CBS "
            f"placement {r['total_ms_median']:.1f} ms median, {r['total_ms_p95']:.1f} ms p95 (target ≤ 50 ms)"
        )
    if what[0] in ("week", "all"):
        days = float(what[2]) if len(what) > 2 else 7.0
        r = bench_week(what[1] if len(what) > 1 else "cbs", days)
        print(
            f"{days:g}-day run: {r['tasks']:.0f} tasks, {r['intervals']:.0f} intervals: classify {r['classify_s']:.1f} s, "
            f"forecast {r['forecast_s']:.1f} s, simulate {r['simulate_s']:.1f} s (of which LP {r['lp_s']:.1f} s); "
            f"forecast + simulate {r['forecast_s'] + r['simulate_s']:.1f} s wall, "
            f"{r['forecast_cpu_s'] + r['simulate_cpu_s']:.1f} s CPU (target ≤ 120 s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
