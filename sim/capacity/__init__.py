"""Capacity: what a platform can run over time, and its intervals.

* :mod:`sim.capacity.trace` — ``CapacityTrace``/``MachineCapacityTrace``, the one capacity-spec parser
  (``CapacitySpec``), the one hourly rule for signals (``to_hourly``), constants (``DAY``, ``HOUR``);
* :mod:`sim.capacity.kinds` — the capacity-kind registry (every ``--capacity`` kind and its settings);
* :mod:`sim.capacity.generators` — random walk, random uniform, risk-aware walk, harvest-VM, carbon
  budget and stranded-power traces;
* :mod:`sim.capacity.spot` — observed spot-availability traces;
* :mod:`sim.capacity.intervals` — machine intervals, inter-change times and the survival ``IntervalModel``.
"""
