"""``python -m sim.bench …``: the simulator benchmarks (:mod:`sim.bench.scale`; ``small``:
:mod:`sim.bench.small`; ``reference``: :mod:`sim.bench.reference`; ``waiting``: :mod:`sim.bench.waiting`; ``machine``: the speed targets against the machine in one run, :mod:`sim.bench.machine`)."""

import sys

if len(sys.argv) > 1 and sys.argv[1] == "small":
    from sim.bench.small import main as small_main

    small_main(sys.argv[2:])
elif len(sys.argv) > 1 and sys.argv[1] == "reference":
    from sim.bench.reference import main as reference_main

    reference_main(sys.argv[2:])
elif len(sys.argv) > 1 and sys.argv[1] == "machine":
    from sim.bench.machine import main as machine_main

    machine_main(sys.argv[2:])
elif len(sys.argv) > 1 and sys.argv[1] == "waiting":
    from sim.bench.waiting import main as waiting_main

    waiting_main(sys.argv[2:])
else:
    from sim.bench.scale import main

    main()
