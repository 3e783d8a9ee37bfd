"""``varcap simulate --timeout``: a run over its time is stopped with one line and writes nothing, also when
a compiled kernel (here: a C call) holds the interpreter; an estimate refuses what will not fit."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    return p, time.monotonic() - t0


def test_watchdog_stops_python_code_with_one_line() -> None:
    p, wall = _run(
        "from pipelines.cli.simulate import start_watchdog\n"
        "start_watchdog(0.5, 'simulate (2 jobs, ff)')\n"
        "while True: pass\n"
    )
    assert p.returncode == 1, p
    assert p.stderr.strip().splitlines() == [
        "varcap: error: simulate (2 jobs, ff) stopped after --timeout 0.5 s; nothing was written"
    ]
    assert wall < 20


def test_watchdog_process_ends_a_run_holding_the_interpreter() -> None:
    p, wall = _run(
        "import pipelines.cli.simulate as s\n"
        "s.TIMEOUT_GRACE_S = 1.0\n"
        "s.start_watchdog(0.5, 'simulate (2 jobs, ff)')\n"
        "sum(range(10**13))\n"  # one C call: the watchdog thread never gets the GIL
    )
    assert p.returncode == -9, p
    assert p.stderr.strip().splitlines() == [
        "varcap: error: simulate (2 jobs, ff) stopped after --timeout 0.5 s; nothing was written"
    ]
    assert wall < 20


def test_disarmed_watchdog_lets_the_process_finish() -> None:
    p, _ = _run(
        "import time\nfrom pipelines.cli.simulate import start_watchdog\n"
        "d = start_watchdog(0.5, 'x')\nd()\ntime.sleep(1.0)\nprint('done')\n"
    )
    assert p.returncode == 0 and p.stdout.strip() == "done" and p.stderr == "", p


def test_work_estimate_refuses_what_will_not_fit() -> None:
    from sim.estimate import check_fits, expected_work

    with pytest.raises(ValueError, match=r"^this run needs about 59.6 GiB \(1,000,000,000 machines; "):
        check_fits(expected_work(2, 10**9, 2), available=8 * 2**30)
    check_fits(expected_work(600_000, 200, 1e4), available=8 * 2**30)  # the Borg-scale run fits
