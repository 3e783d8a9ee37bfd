"""varcap's First-Fit against a tight compiled loop: ``python -m sim.bench reference``.

On the Borg-scale case (Borg-resampled jobs, 200 × 24 cores, random walk at 8 changes/h, step 0.15; the
offered load given) of each size: the CPU seconds of varcap's compiled kernel (``sim.engine.run_kernel``,
in this process after a warm-up run) per job, against :file:`ff_reference.c` — a First-Fit in C with the
same pinned semantics, compiled at run time with ``cc -O2`` into a temporary directory (not part of the
product) — per job in its loop; both print their events, completions and terminations, so the two schedules
are compared in the same run. Then ``varcap simulate`` as a whole process on the same parquet file: CPU
seconds (user + sys) and peak RSS (:func:`sim.bench.process.measured_process`). Targets: kernel ≤ 0.8 µs a job; a whole 6M-job
process ≤ 8 CPU s and ≤ 1 GB.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).with_name("ff_reference.c")


def compile_reference(d: Path) -> Path | None:
    """:file:`ff_reference.c` compiled into ``d`` (``cc -O2``), or None (said on stdout) without a compiler."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        print("no C compiler (cc, gcc, clang) on PATH: the reference First-Fit is not run")
        return None
    exe = d / "ff_reference"
    subprocess.run([cc, "-O2", "-o", str(exe), str(SOURCE), "-lm"], check=True)
    return exe


def write_inputs(
    d: Path, submit: np.ndarray, duration: np.ndarray, cores: np.ndarray, cap
) -> tuple[Path, Path]:
    """The reference's binary inputs (see :file:`ff_reference.c`)."""
    jobs, capf = d / "jobs.bin", d / "cap.bin"
    with jobs.open("wb") as f:
        np.array([submit.size], np.int64).tofile(f)
        for a in (submit, duration, cores):
            np.ascontiguousarray(a, np.float64).tofile(f)
    with capf.open("wb") as f:
        np.array([cap.time_s.size], np.int64).tofile(f)
        np.ascontiguousarray(cap.time_s, np.float64).tofile(f)
        np.ascontiguousarray(cap.machines_alive, np.int64).tofile(f)
    return jobs, capf


def kernel_cpu(
    submit, duration, cores, cap, machines: int, machine_cores: float, horizon: float
) -> tuple[float, dict]:
    """CPU seconds of one compiled First-Fit kernel run (after a warm-up run) and its counts."""
    from sim.engine import run_kernel

    def run():
        return run_kernel(submit, duration, cores, None, cap.time_s, cap.machines_alive, machines,
                          machine_cores, 0.0, horizon, engine="compiled")  # fmt: skip

    run_kernel(submit[:2000], duration[:2000], cores[:2000], None, cap.time_s, cap.machines_alive, machines,
               machine_cores, 0.0, horizon, engine="compiled")  # fmt: skip
    c = time.process_time()
    k = run()
    dt = time.process_time() - c
    return dt, {
        "events": k.events,
        "completed": int(np.sum(k.end_s >= 0)),
        "terminations": k.terminations,
        "sum_end": float(np.sum(k.end_s[k.end_s >= 0])),
    }


def reference(
    sizes: list[int], offered_load: float = 0.5, out_dir: str = "data/bench", whole: bool = True
) -> list[dict]:
    """Each size: varcap's kernel µs/job, the C reference's µs/job (and their ratio), their counts, and
    (``whole``) ``varcap simulate`` as a fresh process: CPU s and peak RSS. Prints a table; returns its rows."""
    import polars as pl

    from sim import random_walk
    from sim.bench.process import measured_process
    from sim.bench.scale import scale_inputs

    machines, mcores = 200, 24
    rows = []
    print(f"Borg-scale First-Fit, {machines} × {mcores} cores, random walk 8 changes/h step 0.15, offered load "
          f"{offered_load:g}; load {os.getloadavg()[0]:.1f} at the start ({os.cpu_count()} CPUs)", flush=True)  # fmt: skip
    with tempfile.TemporaryDirectory() as td:
        d = Path(td)
        exe = compile_reference(d)
        for n in sizes:
            path, horizon = scale_inputs(n, out_dir, machines, mcores, load=offered_load)
            jobs = pl.read_parquet(path).sort("submit_s", maintain_order=True)
            submit = jobs["submit_s"].cast(pl.Float64).to_numpy()
            duration = jobs["duration_s"].cast(pl.Float64).to_numpy()
            cores = jobs["cores"].cast(pl.Float64).to_numpy()
            del jobs
            cap = random_walk(machines, horizon, changes_per_hour=8.0, step=0.15, seed=0)
            row: dict = {"jobs": n, "days": horizon / 86400.0}
            row["varcap_s"], row["varcap"] = kernel_cpu(
                submit, duration, cores, cap, machines, mcores, horizon
            )
            if exe is not None:
                jf, cf = write_inputs(d, submit, duration, cores, cap)
                out = subprocess.run([str(exe), str(jf), str(cf), str(machines), str(mcores), repr(horizon)],
                                     capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
                row["ref_s"] = float(out[0])
                row["ref"] = {"events": int(out[2]), "completed": int(out[3]), "terminations": int(out[4]),
                              "sum_end": float(out[5])}  # fmt: skip
                jf.unlink()
            if whole:
                res = d / "metrics.json"
                cmd = [sys.executable, "-m", "pipelines.cli", "simulate", "--jobs", path, "--capacity",
                       "random-walk:changes_per_hour=8,step=0.15,seed=0", "--machines", str(machines), "--cores",
                       str(mcores), "--horizon-s", f"{horizon:.0f}", "--policy", "ff", "--out", str(res)]  # fmt: skip
                row["whole"] = measured_process(cmd)
            rows.append(row)
            _print_row(row)
    print(f"load {os.getloadavg()[0]:.1f} at the end")
    return rows


def _print_row(r: dict) -> None:
    n = r["jobs"]
    v = r["varcap"]
    line = (f"{n:>10,d} jobs ({r['days']:.3g} d): varcap kernel {1e6 * r['varcap_s'] / n:.3f} µs/job "
            f"({r['varcap_s']:.2f} CPU s; {v['events']:,} events, {v['completed']:,} completed, "
            f"{v['terminations']:,} terminations)")  # fmt: skip
    print(line)
    if "ref_s" in r:
        f = r["ref"]
        same = all(f[k] == v[k] for k in ("events", "completed", "terminations"))
        rel = abs(f["sum_end"] - v["sum_end"]) / max(abs(v["sum_end"]), 1.0)
        print(f"{'':>10s}       C reference  {1e6 * r['ref_s'] / n:.3f} µs/job ({r['ref_s']:.2f} CPU s; "
              f"{f['events']:,} events, {f['completed']:,} completed, {f['terminations']:,} terminations): "
              f"varcap / reference {r['varcap_s'] / max(r['ref_s'], 1e-9):.2f}×; same counts: "
              f"{'yes' if same else 'NO'}, sum of ends rel. diff {rel:.1e}")  # fmt: skip
    if "whole" in r:
        w = r["whole"]
        print(f"{'':>10s}       varcap simulate, whole process: {w['cpu_s']:.2f} CPU s, peak RSS "
              f"{w['rss_mb']:.0f} MB")  # fmt: skip
    sys.stdout.flush()


def main(argv: list[str]) -> None:
    """``python -m sim.bench reference [--sizes N …] [--offered-load L] [--out-dir D] [--no-whole]``."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m sim.bench reference", description=reference.__doc__)
    ap.add_argument("--sizes", nargs="*", type=int, default=[600_000], help="jobs")
    ap.add_argument("--offered-load", type=float, default=0.5, help="offered load of the mean capacity")
    ap.add_argument("--out-dir", default="data/bench", help="where the jobs files go")
    ap.add_argument("--no-whole", action="store_true", help="skip the whole-process varcap simulate run")
    a = ap.parse_args(argv)
    reference(a.sizes, a.offered_load, a.out_dir, not a.no_whole)
