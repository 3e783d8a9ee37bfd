"""``python -m sim.bench …``: the simulator benchmarks (:mod:`sim.bench.scale`)."""

from sim.bench.scale import main

main()
