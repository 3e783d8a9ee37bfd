"""IAS's cost against First-Fit: ``python -m sim.bench.ias [--machines N] [--days D] [--process]``.

The instance is the issue's scale case, shrunk or grown by ``--machines``: ``machines`` × 24 cores for
``days`` days, a random walk at 1 change/h, step 0.15 (seed 0), and heavy-tailed jobs — Pareto(1.5)
durations of at least 1 h, capped at 72 h, 1/2/4/8 cores, Poisson arrivals at 80 % of the mean capacity
(:func:`sim.bench.scale.heavy_tailed_case`: about 1,340 jobs per machine a month, 1.34 M at 1,000 machines).

Prints, per policy, the CPU seconds (user + sys of this process, :func:`time.process_time`) of one
``sim.simulate`` run after a small warm-up run of every policy (compilation and the cache load are not counted; best of
``--repeat``), goodput, terminations, and the ratio to First-Fit; ``ias`` under ``h4_reading=literal``
is also divided by ``ias``'s default (``text``) reading (the target: ≤ 3×; ``--no-literal`` leaves it out). ``--process`` also runs each
policy as a user runs it, one fresh ``varcap simulate`` process on a parquet jobs file (start-up, reading
and writing included: :func:`sim.bench.scale.run_simulate_process`), and prints that process's CPU s.
Targets: ``ias`` and ``ias-general`` ≤ 2× First-Fit's CPU, both ways.

``--azure [FILE]`` also times ``ias`` under both H4 readings on the thesis ch. 6 Azure study scenario
(``studies.thesis.scenarios.ch6_scenarios``: the exported azure workload as it is, on the platform that
offers it 80 % of the mean capacity — 244 machines × 24 cores for the embedded sample — a 1 change/h,
step 0.15 random walk of dynamic range 60 % (seed 0), 30 days, A = 0.6) and prints literal ÷ text (the
target: ≤ 3×). FILE defaults to ``data/sim/inputs/workload_azure.parquet`` (written by the pipeline's
``out_sim_inputs``).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import polars as pl

from sim import random_walk, simulate
from sim.bench.scale import heavy_tailed_case, run_simulate_process
from sim.engine import use_engine
from sim.paths import data_dir
from sim.workloads.generators import offered_load

#: (label, policy, settings) of the benchmark's runs, First-Fit first (the ratios' denominator)
RUNS: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("ff", "ff", {}),
    ("ias", "ias", {}),
    ("ias-general", "ias-general", {}),
    ("ias h4_reading=literal", "ias", {"h4_reading": "literal"}),
)
LITERAL = RUNS[-1][0]


def bench(
    machines: int = 1000, days: float = 30.0, repeat: int = 2, process: bool = False, literal: bool = True
) -> dict[str, dict]:
    """CPU seconds of each run of :data:`RUNS` on the scale case (see the module); returns
    {label: {cpu_s, goodput, terminations, events[, process_cpu_s]}} and prints the table."""
    jobs, cap, horizon = heavy_tailed_case(machines, days)
    print(
        f"{jobs.height:,} jobs (Pareto 1.5, min 1 h), {machines:,} machines x 24 cores, {days:g} d, random walk "
        f"1 change/h step 0.15; load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)",
        flush=True,
    )
    out: dict[str, dict] = {}
    runs = RUNS if literal else tuple(r for r in RUNS if r[0] != LITERAL)
    # compile / load the cache of every policy's compiled kernel before any is timed (the warm-up's 2,000
    # jobs would otherwise run interpreted for First-Fit, and its timed run would load its kernel)
    with use_engine("compiled"):
        for _, policy, st in runs:
            simulate(jobs.head(2000), cap, machines, 24, horizon, policy=policy, settings=st)
    for label, policy, st in runs:
        best = float("inf")
        for _ in range(repeat):
            c = time.process_time()
            r = simulate(jobs, cap, machines, 24, horizon, policy=policy, settings=st)
            best = min(best, time.process_time() - c)
        m = r.metrics
        out[label] = {"cpu_s": best, "goodput": m["goodput"], "terminations": m["terminations"],
                      "events": r.events}  # fmt: skip
        print(f"  {label:24s} {best:8.2f} CPU s", flush=True)
    if process:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "jobs.parquet"
            jobs.write_parquet(path)
            spec = "random-walk:changes_per_hour=1,step=0.15,seed=0"
            for label, policy, st in runs:
                argv = ["--jobs", str(path), "--capacity", spec, "--machines", str(machines), "--cores", "24",
                        "--horizon-s", f"{horizon:.0f}", "--policy", policy, "--out", str(Path(tmp) / "r.json")]  # fmt: skip
                for k, v in st.items():
                    argv += ["--set", f"{k}={v}"]
                out[label]["process_cpu_s"] = run_simulate_process(argv)["cpu_s"]
    ff = out["ff"]
    head = f"{'policy':24s} {'CPU s':>8s} {'÷ ff':>6s}"
    if process:
        head += f" {'process CPU s':>13s} {'÷ ff':>6s}"
    print(head + f" {'goodput':>8s} {'terminations':>12s} {'events':>10s}")
    for label, r in out.items():
        line = f"{label:24s} {r['cpu_s']:8.2f} {r['cpu_s'] / ff['cpu_s']:6.2f}"
        if process:
            line += f" {r['process_cpu_s']:13.2f} {r['process_cpu_s'] / ff['process_cpu_s']:6.2f}"
        print(line + f" {r['goodput']:8.4f} {r['terminations']:12,d} {r['events']:10,d}")
    lit, txt = out.get(LITERAL), out["ias"]
    if lit is not None:
        print(f"ias literal ÷ ias text: {lit['cpu_s'] / txt['cpu_s']:.2f} (target ≤ 3)"
          + (f", whole process {lit['process_cpu_s'] / txt['process_cpu_s']:.2f}" if process else ""))  # fmt: skip
    for label in ("ias", "ias-general"):
        print(f"{label} ÷ ff: {out[label]['cpu_s'] / ff['cpu_s']:.2f} in process"
              + (f", {out[label]['process_cpu_s'] / ff['process_cpu_s']:.2f} whole process" if process else "")
              + " (target ≤ 2)")  # fmt: skip
    return out


#: the ch. 6 study's platform sizing: the workload offers this load of the mean capacity (70 %)
AZURE_LOAD, AZURE_MEAN = 0.8, 0.7


def bench_azure(path: Path, repeat: int = 2) -> dict[str, dict]:
    """CPU seconds of ``ias`` (A = 0.6) under ``h4_reading`` text and literal on the thesis ch. 6 Azure study
    scenario (see the module) built from the jobs file ``path``; returns {reading: {cpu_s, goodput,
    terminations, events}} and prints them with literal ÷ text. FileNotFoundError naming the file if it is
    missing."""
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: azure workload not found (materialize out_sim_inputs, or give --azure FILE)"
        )
    jobs = pl.read_parquet(path)
    horizon = 30 * 86400.0
    machines = max(1, int(round(offered_load(jobs, horizon) / (AZURE_LOAD * AZURE_MEAN * 24))))
    cap = random_walk(machines, horizon, changes_per_hour=1.0, step=0.15, dynamic_range=0.6, seed=0)
    print(
        f"azure study scenario: {jobs.height:,} jobs, {machines} machines x 24 cores, 30 d, walk 1/h step 0.15"
    )
    out: dict[str, dict] = {}
    runs = {"text": {"aggressiveness": "0.6"}, "literal": {"aggressiveness": "0.6", "h4_reading": "literal"}}
    for st in runs.values():
        simulate(jobs.head(2000), cap, machines, 24, horizon, policy="ias", settings=st)
    for reading, st in runs.items():
        best = float("inf")
        for _ in range(repeat):
            c = time.process_time()
            r = simulate(jobs, cap, machines, 24, horizon, policy="ias", settings=st)
            best = min(best, time.process_time() - c)
        m = r.metrics
        out[reading] = {"cpu_s": best, "goodput": m["goodput"], "terminations": m["terminations"],
                        "events": r.events}  # fmt: skip
        print(f"  ias h4_reading={reading:8s} {best:8.2f} CPU s  goodput {m['goodput']:.4f}  "
              f"terminations {m['terminations']:,d}  events {r.events:,d}", flush=True)  # fmt: skip
    print(f"azure: ias literal ÷ ias text: {out['literal']['cpu_s'] / out['text']['cpu_s']:.2f} (target ≤ 3)")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description="IAS and ias-general CPU time against First-Fit")
    ap.add_argument("--machines", type=int, default=1000, help="machines of 24 cores (1000: the full case)")
    ap.add_argument("--days", type=float, default=30.0, help="horizon in days")
    ap.add_argument("--repeat", type=int, default=2, help="best of this many in-process runs")
    ap.add_argument("--process", action="store_true", help="also one fresh varcap simulate process each")
    ap.add_argument("--no-literal", action="store_true", help="leave out ias h4_reading=literal")
    ap.add_argument(
        "--azure", nargs="?", const=str(data_dir() / "sim" / "inputs" / "workload_azure.parquet"), default=None,
        metavar="FILE", help="also the ch. 6 Azure study scenario, ias text vs literal (FILE: its jobs parquet)",
    )  # fmt: skip
    ap.add_argument("--only-azure", action="store_true", help="with --azure: skip the scale case")
    a = ap.parse_args()
    if a.machines < 1 or a.days <= 0 or a.repeat < 1:
        raise SystemExit("--machines and --repeat must be ≥ 1 and --days > 0")
    if a.only_azure and a.azure is None:
        ap.exit(2, "--only-azure needs --azure\n")
    if a.azure is not None and not Path(a.azure).is_file():
        ap.exit(2, f"--azure {a.azure}: file not found (materialize out_sim_inputs, or give --azure FILE)\n")
    if not a.only_azure:
        bench(a.machines, a.days, a.repeat, a.process, not a.no_literal)
    if a.azure is not None:
        bench_azure(Path(a.azure), a.repeat)


if __name__ == "__main__":
    main()
