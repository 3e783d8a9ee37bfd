"""Harmony (paper 004, Zhang, Zhani, Boutaba, Hellerstein, IEEE TCC 2014): heterogeneity-aware dynamic
capacity provisioning, end to end, without Dagster.

Modules (each quotes the section of the paper it implements):

* :mod:`sim.harmony.machines` — Table 2 machine types and the energy model (eq. 6) with SPECpower-style
  idle/peak power (assumptions documented there);
* :mod:`sim.harmony.classify` — §5.1 task classification (K-means per priority group, elbow rule, K = 2
  short/long split, run-time labelling);
* :mod:`sim.harmony.forecast` — §5.2 per-class arrival counts per control interval and one-step-ahead
  ARIMA forecasts fitted on trailing windows only;
* :mod:`sim.harmony.queueing` — §5.2 M/G/N waiting time (eq. 1–2), container counts for a target delay,
  §7.3.1 container size (Theorem 1), and a FCFS multi-server reference simulation;
* :mod:`sim.harmony.lp` — §7.1 DCP-RELAX as a linear program (scipy HiGHS) over a horizon W;
* :mod:`sim.harmony.provision` — §7.2 CBP rounding, §7.3.2 CBS first-fit container placement (Lemma 1),
  §9 heterogeneity-oblivious baseline;
* :mod:`sim.harmony.engine` — the numba task scheduler between control decisions;
* :mod:`sim.harmony.run` — the simulation over control intervals (baseline / CBP / CBS) and its results;
* :mod:`sim.bench.harmony` — ``python -m sim.bench.harmony``.
"""

from sim.harmony.machines import TABLE2, MachineType, energy_kwh
from sim.harmony.run import HarmonyConfig, HarmonyResult, simulate_harmony

__all__ = ["TABLE2", "HarmonyConfig", "HarmonyResult", "MachineType", "energy_kwh", "simulate_harmony"]
