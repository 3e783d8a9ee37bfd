"""A small run as a whole process: ``python -m sim.bench small``.

``varcap simulate`` on a 200-job First-Fit instance (200 machines × 8 cores by default, a random walk at 2
changes/h over one day) in a fresh process, against a small pure-Python First-Fit over ``heapq`` (the
script :data:`HEAPQ_FF`, written to a temporary directory and run on the same jobs and capacity steps) in a
fresh process: each one's CPU seconds (user + sys) and peak RSS (:func:`sim.bench.process.measured_process`),
best of ``repeat``. Both
print how many jobs completed and how many instants they simulated, so the two schedules can be compared
(they follow the same pinned semantics; see :mod:`sim.engine`). The target: varcap ≤ 0.4 CPU s whatever
the machine count (``--machines 200,20000`` runs each count in turn).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from sim.bench.process import measured_process

# A First-Fit with varcap's pinned semantics, the plain way: a heap of ends, a FIFO list, a linear scan of
# the machines. Reads jobs (job_id, submit_s, duration_s, cores; sorted by submit) and capacity steps
# (time_s, machines_alive); argv: jobs.csv cap.csv machines cores horizon_s. Prints completed and instants.
HEAPQ_FF = r"""
import csv, heapq, sys

def main():
    jobs_f, cap_f, M, C, H = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    with open(jobs_f) as f:
        rows = list(csv.DictReader(f))
    sub = [float(r["submit_s"]) for r in rows]
    dur = [float(r["duration_s"]) for r in rows]
    cor = [float(r["cores"]) for r in rows]
    with open(cap_f) as f:
        cap = [(float(r["time_s"]), int(r["machines_alive"])) for r in csv.DictReader(f)]
    n = len(sub)
    free = [0.0] * M
    on = [[] for _ in range(M)]
    start = [-1.0] * n
    att = [0] * n
    done = 0
    heap, queue = [], []
    alive = si = ci = instants = 0
    while True:
        t = heap[0][0] if heap else float("inf")
        if ci < len(cap) and cap[ci][0] < t:
            t = cap[ci][0]
        if si < n and sub[si] < t:
            t = sub[si]
        if t >= H:
            break
        instants += 1
        while heap and heap[0][0] == t:
            _, j, a = heapq.heappop(heap)
            if a != att[j]:
                continue
            att[j] = -1
            done += 1
            m = next(m for m in range(M) if j in on[m])
            on[m].remove(j)
            free[m] = C if not on[m] else free[m] + cor[j]
        if ci < len(cap) and cap[ci][0] == t:
            k = max(0, min(M, cap[ci][1]))
            ci += 1
            if k > alive:
                for m in range(alive, k):
                    free[m] = C
            else:
                killed = []
                for m in range(k, alive):
                    killed += on[m]
                    on[m] = []
                    free[m] = 0.0
                for j in sorted(killed, key=lambda j: (start[j], j)):
                    att[j] += 1
                    queue.append(j)
            alive = k
        while si < n and sub[si] == t:
            queue.append(si)
            si += 1
        rest = []
        for j in queue:
            m = next((m for m in range(alive) if free[m] >= cor[j]), -1)
            if m < 0:
                rest.append(j)
                continue
            free[m] -= cor[j]
            on[m].append(j)
            start[j] = t
            heapq.heappush(heap, (t + dur[j], j, att[j]))
        queue = rest
    print(done, instants)

main()
"""


def small(jobs: int = 200, machines: int = 200, repeat: int = 3) -> dict:
    """``varcap simulate`` and :data:`HEAPQ_FF` on the same ``jobs``-job instance on ``machines`` × 8
    cores, each as a fresh process, best of ``repeat`` (CPU s, peak RSS MB); prints a table and returns it."""
    from sim import random_walk
    from sim.bench.scale import engine_instance

    horizon = 86400.0
    cap_spec = "random-walk:changes_per_hour=2,step=0.25,seed=0"
    cap = random_walk(machines, horizon, changes_per_hour=2.0, step=0.25, seed=0)
    rows: dict = {}
    with tempfile.TemporaryDirectory() as d:
        jdf, _, _ = engine_instance(jobs, machines)
        jpath, cpath, script = Path(d, "jobs.csv"), Path(d, "cap.csv"), Path(d, "heapq_ff.py")
        jdf.write_csv(jpath)
        cpath.write_text(
            "time_s,machines_alive\n"
            + "".join(f"{float(t)!r},{int(k)}\n" for t, k in zip(cap.time_s, cap.machines_alive, strict=True))
        )
        script.write_text(HEAPQ_FF)
        out = Path(d, "metrics.json")
        cmds = {
            "varcap simulate": [sys.executable, "-m", "pipelines.cli", "simulate", "--jobs", str(jpath),
                                "--capacity", cap_spec, "--machines", str(machines), "--cores", "8",
                                "--horizon-s", f"{horizon:.0f}", "--policy", "ff", "--out", str(out)],
            "heapq script": [sys.executable, str(script), str(jpath), str(cpath), str(machines), "8",
                             f"{horizon:.0f}"],
        }  # fmt: skip
        for name, cmd in cmds.items():
            best = None
            for _ in range(repeat):
                r = measured_process(cmd)
                best = r if best is None or r["cpu_s"] < best["cpu_s"] else best
            assert best is not None
            if name == "varcap simulate":
                m = json.loads(out.read_text())
                best["completed"] = m["completed"]
            else:
                best["completed"] = int(best["out"].split()[0])
            rows[name] = best
    print(f"{jobs} jobs on {machines} machines × 8 cores, 1 day, random walk 2 changes/h; "
          f"best of {repeat} fresh processes; load {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")  # fmt: skip
    print(f"{'process':16s} {'CPU s':>6s} {'peak RSS MB':>11s} {'completed':>9s}")
    for name, r in rows.items():
        print(f"{name:16s} {r['cpu_s']:>6.2f} {r['rss_mb']:>11.0f} {r['completed']:>9,d}")
    v = rows["varcap simulate"]["cpu_s"]
    print(f"varcap / heapq CPU: {v / rows['heapq script']['cpu_s']:.1f}×; varcap ≤ 0.4 CPU s: "
          f"{'yes' if v <= 0.4 else 'NO'}")  # fmt: skip
    return rows


def main(argv: list[str]) -> None:
    """``python -m sim.bench small [--jobs N] [--machines M[,M…]] [--repeat R]``."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m sim.bench small", description=small.__doc__)
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--machines", default="200", help="machine counts, comma-separated (default 200)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    try:
        counts = [int(m) for m in a.machines.split(",")]
    except ValueError:
        ap.error(f"--machines {a.machines}: give whole numbers separated by commas")
    for m in counts:
        small(a.jobs, m, a.repeat)
