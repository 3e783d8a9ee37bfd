"""Paper 004's isolating runs: what makes CBS starve and what makes it cost more than the §9 baseline here.

``python -m studies.harmony.isolate starvation`` runs CBS on the ``borg2011-sample`` workload at ω = 1.2
changing one thing at a time — the former relabel (a relabelled task's short container freed on its own
machine, ``relabel="free"``), the forecasts replaced by each interval's true arrivals (and long-running
counts), the container manager's ``backlog`` reading, ``keep_running`` (the LP keeps the containers of
running tasks where they are) — beside the baseline and CBP, and prints per run the p90 delay (all tasks
and the steady window), tasks never started, tasks of the steady window still waiting at the end, CPU and
memory utilization, machines on and the energy cost.

``python -m studies.harmony.isolate cause`` is the table behind CBS's excess delay: on ``borg2011-sample`` at
ω = 1.2 (or ``--workload borg2011-7d``, a few CPU minutes per run) the baseline, CBP and CBS, then CBS with one
model line or set-up choice switched at a time — the former relabel (``relabel="free"``), the true
long-running counts (as if started at submission) in place of their forecasts, the scheme's own long-running
count (``long_count="running"``), each interval's true arrivals in place of the forecasts, the ``backlog``
reading, Algorithm 1's re-packing (``repack``), ω = 2.2 (the top of §9.2's range) — and their combinations;
per run p50/p90 delay (all tasks, p90 of the steady window), tasks never started, steady-window tasks still
waiting at the end, CPU and memory utilization, machines on, energy cost and tasks migrated.

``python -m studies.harmony.isolate energy`` runs the three schemes under each reading of "energy
efficiency" that orders the baseline's machine types (:class:`sim.harmony.run.HarmonyConfig`
``efficiency``) and prints the energy cost, its switching part and CBS's/CBP's change against the baseline.

``python -m studies.harmony.isolate week --schemes baseline,cbs`` runs the schemes on the 7-day resampled
workload (a few CPU minutes).

``python -m studies.harmony.isolate headline --seeds 0,1,2`` repeats the headline (three schemes, ω = 1.2)
with the classes fitted under each K-means seed and prints each replicate and the mean ± 95 % t interval of
CBS's energy-cost reduction and of the steady-window p90 delays (n = 1 prints no interval).

Reads the warehouse read-only (``core_jobs``), or ``--core-jobs FILE.parquet`` (``core_jobs`` rows); the
classes are fitted as ``out_harmony_task_classes`` fits them. A dev tool, not part of a study.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

from sim.harmony.classify import TaskClasses, fit_classes
from sim.harmony.forecast import ForecastConfig
from sim.harmony.machines import SWITCH_USD
from sim.harmony.run import Demand, HarmonyConfig, predict_demand, simulate_harmony, with_oracle
from studies.harmony.runner import borg_frame, workload

_COLS = "submit_s, duration_s, cpu_request_norm AS cores, memory_norm, priority, left_truncated"


def load_borg(core_jobs: Path | None) -> pl.DataFrame:
    """The borg2011 rows of ``core_jobs`` (warehouse, read-only, or a parquet of its rows) as
    :func:`borg_frame` returns them."""
    if core_jobs is not None:
        df = pl.read_parquet(core_jobs).filter(pl.col("workload") == "borg2011").sort("submit_s", "job_id")
        df = df.select(
            "submit_s", "duration_s", pl.col("cpu_request_norm").alias("cores"), "memory_norm", "priority",
            "left_truncated",
        )  # fmt: skip
        return borg_frame(df)
    import duckdb

    from sim.paths import warehouse_path

    with duckdb.connect(str(warehouse_path()), read_only=True) as con:
        df = con.sql(
            f"SELECT {_COLS} FROM core_jobs WHERE workload = 'borg2011' ORDER BY submit_s, job_id"
        ).pl()
    return borg_frame(df)


def fit(b: pl.DataFrame, seed: int = 0) -> TaskClasses:
    """The classes as ``out_harmony_task_classes`` fits them (its defaults: k_max 6, elbow 0.05)."""
    cols = (b[c].to_numpy() for c in ("cpu", "mem", "priority", "duration_s"))
    return fit_classes(*cols, k_max=6, elbow=0.05, seed=seed)


def _row(label: str, m: dict[str, float]) -> str:
    return (
        f"{label:34s} {m['delay_p90_s_all']:>8,.0f} {m['delay_p90_s_steady']:>8,.0f} "
        f"{int(m['unscheduled']):>8,d} {int(m['unscheduled_steady']):>8,d} {m['cpu_util']:>5.3f} "
        f"{m['mem_util']:>5.3f} {m['machines_on_mean']:>7,.0f} {m['energy_cost_usd']:>8,.2f}"
    )


def starvation(b: pl.DataFrame) -> None:
    """One-at-a-time runs behind CBS's starving classes (see the module docstring)."""
    classes = fit(b)
    jobs, n_iv = workload(b, "borg2011-sample")
    cfg = HarmonyConfig()
    dem = predict_demand(jobs, classes, n_iv, cfg, ForecastConfig(refit_every=24))
    oracle = with_oracle(dem, classes, cfg)
    oracle_long = with_oracle(dem, classes, cfg, long=True)
    runs: list[tuple[str, str, Demand, dict[str, bool]]] = [
        ("baseline", "baseline", dem, {}),
        ("cbp", "cbp", dem, {}),
        ("cbs", "cbs", dem, {}),
        ("cbs, relabel free (former model)", "cbs", dem, {"relabel": "free"}),
        ("cbs, true arrivals", "cbs", oracle, {}),
        ("cbs, true arrivals + long counts", "cbs", oracle_long, {}),
        ("cbs, backlog", "cbs", dem, {"backlog": True}),
        ("cbs, keep_running", "cbs", dem, {"keep_running": True}),
        ("cbs, backlog + keep_running", "cbs", dem, {"backlog": True, "keep_running": True}),
        ("cbp, backlog", "cbp", dem, {"backlog": True}),
        ("cbs, true arrivals + backlog", "cbs", oracle, {"backlog": True}),
        ("cbs, true arr. + backlog + keep", "cbs", oracle, {"backlog": True, "keep_running": True}),
    ]
    print(f"borg2011-sample, ω = 1.2, {n_iv} intervals, steady window from {cfg.warmup_s:.0f} s")
    print(f"{'run':34s} {'p90 s':>8s} {'p90 st.':>8s} {'never':>8s} {'wait st.':>8s} {'cpu':>5s} {'mem':>5s} "
          f"{'on':>7s} {'cost USD':>8s}")  # fmt: skip
    for label, scheme, d, kw in runs:
        m = simulate_harmony(jobs, classes, d, HarmonyConfig(scheme=scheme, **kw)).metrics
        print(_row(label, m), flush=True)


def _long_truth(dem: Demand, classes: TaskClasses, cfg: HarmonyConfig) -> Demand:
    """``dem`` with the true long-running counts (as if started at submission) in place of their forecasts,
    the arrival forecasts kept."""
    from dataclasses import replace

    from sim.harmony.run import required_containers

    lt = dem.long_running.copy()
    return replace(dem, long_fc=lt, containers=required_containers(dem.arrivals_fc, lt, classes, cfg))


def cause(b: pl.DataFrame, name: str, only: list[str] | None = None) -> None:
    """One change at a time behind CBS's excess delay (see the module docstring); ``only``: labels to run."""
    classes = fit(b)
    jobs, n_iv = workload(b, name)
    cfg = HarmonyConfig()
    dem = predict_demand(jobs, classes, n_iv, cfg, ForecastConfig(refit_every=24 if n_iv < 288 else 288))
    tru = with_oracle(dem, classes, cfg)
    lt = _long_truth(dem, classes, cfg)
    runs: list[tuple[str, str, Demand, dict[str, object]]] = [
        ("baseline", "baseline", dem, {}),
        ("cbp", "cbp", dem, {}),
        ("cbs", "cbs", dem, {}),
        ("cbs relabel free", "cbs", dem, {"relabel": "free"}),
        ("cbs true long counts", "cbs", lt, {}),
        ("cbs long_count running", "cbs", dem, {"long_count": "running"}),
        ("cbs true arrivals", "cbs", tru, {}),
        ("cbs backlog", "cbs", dem, {"backlog": True}),
        ("cbs repack", "cbs", dem, {"repack": True}),
        ("cbs omega 2.2", "cbs", dem, {"omega": 2.2}),
        ("cbs true arrivals + repack", "cbs", tru, {"repack": True}),
        ("cbs backlog + repack", "cbs", dem, {"backlog": True, "repack": True}),
        ("cbs true arrivals + backlog", "cbs", tru, {"backlog": True}),
        ("cbs true arr. + backlog + repack", "cbs", tru, {"backlog": True, "repack": True}),
        ("cbp true arrivals", "cbp", tru, {}),
        ("cbp backlog", "cbp", dem, {"backlog": True}),
    ]
    print(
        f"{name}, {jobs.height:,d} tasks, {n_iv} intervals, ω = 1.2 unless named, steady window from "
        f"{cfg.warmup_s:.0f} s"
    )
    print(f"{'run':34s} {'p50 s':>6s} {'p90 s':>7s} {'p90 st.':>7s} {'never':>6s} {'wait st':>7s} {'cpu':>5s} "
          f"{'mem':>5s} {'on':>6s} {'cost USD':>8s} {'moved':>9s}")  # fmt: skip
    for label, scheme, d, kw in runs:
        if only and label not in only:
            continue
        r = simulate_harmony(jobs, classes, d, HarmonyConfig(scheme=scheme, **kw))  # type: ignore[arg-type]
        m = r.metrics
        print(f"{label:34s} {m['delay_p50_s_all']:>6,.0f} {m['delay_p90_s_all']:>7,.0f} "
              f"{m['delay_p90_s_steady']:>7,.0f} {int(m['unscheduled']):>6,d} {int(m['unscheduled_steady']):>7,d} "
              f"{m['cpu_util']:>5.3f} {m['mem_util']:>5.3f} {m['machines_on_mean']:>6,.0f} "
              f"{m['energy_cost_usd']:>8,.2f} {r.migrations:>9,d}", flush=True)  # fmt: skip


def energy(b: pl.DataFrame, readings: list[str]) -> None:
    """The three schemes under each reading of the baseline's type order (see the module docstring)."""
    classes = fit(b)
    jobs, n_iv = workload(b, "borg2011-sample")
    dem = predict_demand(jobs, classes, n_iv, HarmonyConfig(), ForecastConfig(refit_every=24))
    print(f"{'reading':9s} {'scheme':8s} {'cost USD':>9s} {'kWh':>9s} {'switch USD':>10s} {'power-ons':>9s} "
          f"{'vs base %':>9s} {'w/o switch %':>12s} {'delay p90 s':>11s}")  # fmt: skip
    for reading in readings:
        res = {}
        for scheme in ("baseline", "cbp", "cbs"):
            res[scheme] = simulate_harmony(
                jobs, classes, dem, HarmonyConfig(scheme=scheme, efficiency=reading)
            ).metrics
        base = res["baseline"]
        for scheme, m in res.items():
            ch = 100.0 * (m["energy_cost_usd"] / base["energy_cost_usd"] - 1.0)
            ns = 100.0 * (
                (m["energy_cost_usd"] - m["switching_usd"])
                / (base["energy_cost_usd"] - base["switching_usd"])
                - 1.0
            )
            print(f"{reading:9s} {scheme:8s} {m['energy_cost_usd']:>9.2f} {m['energy_kwh']:>9.1f} "
                  f"{m['switching_usd']:>10.2f} {round(m['switching_usd'] / SWITCH_USD):>9,d} {ch:>+9.1f} "
                  f"{ns:>+12.1f} {m['delay_p90_s_all']:>11.1f}", flush=True)  # fmt: skip


def week(b: pl.DataFrame, schemes: list[str]) -> None:
    """``schemes`` on the 7-day resampled workload at ω = 1.2, default readings (~1 CPU minute per scheme
    plus ~35 s of forecasts and ~30 s to fit the classes)."""
    classes = fit(b)
    jobs, n_iv = workload(b, "borg2011-7d")
    dem = predict_demand(jobs, classes, n_iv, HarmonyConfig(), ForecastConfig(refit_every=288))
    print(f"borg2011-7d, {jobs.height:,d} tasks, {n_iv} intervals, ω = 1.2")
    print(f"{'run':34s} {'p90 s':>8s} {'p90 st.':>8s} {'never':>8s} {'wait st.':>8s} {'cpu':>5s} {'mem':>5s} "
          f"{'on':>7s} {'cost USD':>8s}")  # fmt: skip
    for s in schemes:
        print(_row(s, simulate_harmony(jobs, classes, dem, HarmonyConfig(scheme=s)).metrics), flush=True)


def mean_ci(x: list[float]) -> tuple[float, float | None]:
    """Mean and the half-width of its 95 % t interval (None for a single value)."""
    from scipy import stats

    if len(x) < 2:
        return float(x[0]), None
    a = np.asarray(x, float)
    return float(a.mean()), float(stats.t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / math.sqrt(len(a)))


def headline(b: pl.DataFrame, seeds: list[int], efficiency: str) -> None:
    """The headline's three schemes per K-means seed, and mean ± 95 % CI (see the module docstring)."""
    jobs, n_iv = workload(b, "borg2011-sample")
    cfg0 = HarmonyConfig()
    cols: dict[str, list[float]] = {}
    get: dict[str, Callable[[dict[str, dict[str, float]]], float]] = {
        "CBS cost reduction %": lambda r: 100.0 * (1 - r["cbs"]["energy_cost_usd"] / r["baseline"]["energy_cost_usd"]),
        "CBP cost reduction %": lambda r: 100.0 * (1 - r["cbp"]["energy_cost_usd"] / r["baseline"]["energy_cost_usd"]),
        "baseline p90 steady s": lambda r: r["baseline"]["delay_p90_s_steady"],
        "CBP p90 steady s": lambda r: r["cbp"]["delay_p90_s_steady"],
        "CBS p90 steady s": lambda r: r["cbs"]["delay_p90_s_steady"],
        "CBS waiting at end (steady)": lambda r: r["cbs"]["unscheduled_steady"],
    }  # fmt: skip
    print(f"borg2011-sample, ω = 1.2, efficiency {efficiency!r}, steady window from {cfg0.warmup_s:.0f} s")
    for seed in seeds:
        classes = fit(b, seed)
        dem = predict_demand(jobs, classes, n_iv, cfg0, ForecastConfig(refit_every=24))
        res = {
            s: simulate_harmony(jobs, classes, dem, HarmonyConfig(scheme=s, efficiency=efficiency)).metrics
            for s in ("baseline", "cbp", "cbs")
        }
        vals = {k: f(res) for k, f in get.items()}
        for k, v in vals.items():
            cols.setdefault(k, []).append(v)
        print(f"seed {seed}: " + ", ".join(f"{k} {v:,.1f}" for k, v in vals.items()), flush=True)
    for k, v in cols.items():
        mu, hw = mean_ci(v)
        print(f"{k:28s} n = {len(v)}  " + (f"{mu:,.1f}" if hw is None else f"{mu:,.1f} ± {hw:,.1f} (95 % t)"))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("cause", "starvation", "energy", "headline", "week"))
    ap.add_argument("--core-jobs", type=Path, default=None, help="a parquet of core_jobs rows")
    ap.add_argument("--readings", default="capacity,cpu", help="energy: baseline type-order readings")
    ap.add_argument("--efficiency", default="paper", help="headline: the baseline's type-order reading")
    ap.add_argument("--seeds", default="0,1,2", help="headline: K-means seeds, one replicate each")
    ap.add_argument("--schemes", default="baseline,cbs", help="week: the schemes to run")
    ap.add_argument("--workload", default="borg2011-sample", help="cause: borg2011-sample or borg2011-7d")
    ap.add_argument("--only", default="", help="cause: comma-separated run labels (default: all)")
    a = ap.parse_args(argv)
    b = load_borg(a.core_jobs)
    if a.what == "cause":
        cause(b, a.workload, [x for x in a.only.split(",") if x] or None)
    elif a.what == "starvation":
        starvation(b)
    elif a.what == "energy":
        energy(b, a.readings.split(","))
    elif a.what == "week":
        week(b, a.schemes.split(","))
    else:
        headline(b, [int(s) for s in a.seeds.split(",")], a.efficiency)


if __name__ == "__main__":
    main()
