"""Seed 004's isolating runs (issue #29): what makes CBS cost more than the §9 baseline here.

``python -m studies.harmony.isolate`` runs baseline, CBP and CBS on the ``borg2011-sample`` workload at
ω = 1.2 (the headline's set-up, constant price) under each reading of "energy efficiency" that orders the
machine types (:class:`sim.harmony.run.HarmonyConfig` ``efficiency``: ``capacity``, the default, or ``cpu``,
which puts the DL585 G7 first as §9's example says), and prints per scheme the energy cost, the energy
(kWh) and switching parts, power-ons, machines on and the p90 scheduling delay, with CBS's and CBP's
change against the baseline of the same reading, and the change without the switching cost. Reads the
warehouse read-only (``core_jobs``; the classes fitted as ``out_harmony_task_classes`` fits them); a dev tool, not part of a study.
"""

from __future__ import annotations

import argparse

from sim.harmony.classify import fit_classes
from sim.harmony.forecast import ForecastConfig
from sim.harmony.machines import SWITCH_USD
from sim.harmony.run import HarmonyConfig, predict_demand, simulate_harmony
from studies.harmony.runner import borg_frame, workload


def main() -> None:
    import duckdb

    from sim.paths import warehouse_path

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readings", default="capacity,cpu")
    a = ap.parse_args()
    with duckdb.connect(str(warehouse_path()), read_only=True) as con:
        df = con.sql(
            "SELECT submit_s, duration_s, cpu_request_norm AS cores, memory_norm, priority, left_truncated "
            "FROM core_jobs WHERE workload = 'borg2011' ORDER BY submit_s, job_id"
        ).pl()
    b = borg_frame(df)
    # the classes as out_harmony_task_classes fits them (its config defaults: seed 0, k_max 6, elbow 0.05)
    classes = fit_classes(b["cpu"].to_numpy(), b["mem"].to_numpy(), b["priority"].to_numpy(),
                          b["duration_s"].to_numpy(), k_max=6, elbow=0.05, seed=0)  # fmt: skip
    jobs, n_iv = workload(b, "borg2011-sample")
    dem = predict_demand(jobs, classes, n_iv, HarmonyConfig(), ForecastConfig(refit_every=24))
    print(f"{'reading':9s} {'scheme':8s} {'cost USD':>9s} {'kWh':>9s} {'switch USD':>10s} {'power-ons':>9s} "
          f"{'vs base %':>9s} {'w/o switch %':>12s} {'delay p90 s':>11s}")  # fmt: skip
    for reading in a.readings.split(","):
        res = {}
        for scheme in ("baseline", "cbp", "cbs"):
            res[scheme] = simulate_harmony(
                jobs, classes, dem, HarmonyConfig(scheme=scheme, efficiency=reading)
            ).metrics
        b = res["baseline"]
        for scheme, m in res.items():
            ch = 100.0 * (m["energy_cost_usd"] / b["energy_cost_usd"] - 1.0)
            ns = 100.0 * (
                (m["energy_cost_usd"] - m["switching_usd"]) / (b["energy_cost_usd"] - b["switching_usd"])
                - 1.0
            )
            print(f"{reading:9s} {scheme:8s} {m['energy_cost_usd']:>9.2f} {m['energy_kwh']:>9.1f} "
                  f"{m['switching_usd']:>10.2f} {round(m['switching_usd'] / SWITCH_USD):>9,d} {ch:>+9.1f} {ns:>+12.1f} "
                  f"{m['delay_p90_s_all']:>11.1f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
