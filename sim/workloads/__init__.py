"""Workloads: the job sets a simulation runs.

* :mod:`sim.workloads.registry` — the workload registry (every ``--workload`` name and its settings);
* :mod:`sim.workloads.generators` — Zipf/Pareto synthetic jobs, bootstrap resampling of real traces,
  harvest-VM jobs and tasks, offered load.
"""
