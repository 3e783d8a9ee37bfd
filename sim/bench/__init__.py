"""Benchmarks (developer tools, not the product): they print figures and are never timed tests.

* ``python -m sim.bench …`` — :mod:`sim.bench.scale` (the simulator at Borg scale, engines, IAS ratio);
* ``python -m sim.bench.harmony …`` — :mod:`sim.bench.harmony` (Harmony's LP and week).
"""
