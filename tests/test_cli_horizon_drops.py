"""A study whose workload outlasts its horizon: the simulator's "jobs submitted at or after the horizon
were dropped" warning is a log line in the varcap commands, not a warning printed in their output."""

from __future__ import annotations

import logging
import subprocess
import sys
import warnings

import polars as pl
import pytest

LATE = pl.DataFrame(
    [("a", 0.0, 10.0, 1.0), ("b", 5.0, 20.0, 0.25), ("late", 150.0, 1.0, 1.0), ("later", 400.0, 1.0, 1.0)],
    schema=["job_id", "submit_s", "duration_s", "cores"],
    orient="row",
)


@pytest.fixture
def restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """The warning machinery and interpreter options as they were, after the test."""
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)
    monkeypatch.setattr(sys, "warnoptions", list(sys.warnoptions))


def test_the_dropped_jobs_are_logged_not_printed(
    restored: None, recwarn: pytest.WarningsRecorder, caplog: pytest.LogCaptureFixture
) -> None:
    from pipelines.cli.common import log_horizon_drops
    from sim import simulate
    from sim.capacity.trace import CapacityTrace

    log_horizon_drops()
    log_horizon_drops()  # idempotent: one hook
    with warnings.catch_warnings(), caplog.at_level(logging.INFO, logger="sim.validate"):
        warnings.simplefilter("always")
        r = simulate(LATE, CapacityTrace.constant(2, 100), 2, 4, 100)
        warnings.warn("another warning", UserWarning, stacklevel=1)
    assert r.jobs_after_horizon == 2
    assert [rec.getMessage() for rec in caplog.records if rec.name == "sim.validate"] == [
        "jobs: 2 jobs submitted at or after the horizon (100 s) were dropped (first: jobs row 3)"
    ]
    # shown warnings (recorded here instead of printed): the other one only
    assert [str(w.message) for w in recwarn] == ["another warning"]


def test_spawned_simulation_workers_do_not_print_it(restored: None) -> None:
    from pipelines.cli.common import HORIZON_DROP_OPTION, log_horizon_drops

    log_horizon_drops()
    # multiprocessing's spawn (the sweep's pool) starts workers with the interpreter's warning options
    flags = subprocess._args_from_interpreter_flags()  # type: ignore[attr-defined]
    assert f"-W{HORIZON_DROP_OPTION}" in flags
    code = (
        "import polars as pl; from sim import simulate; from sim.capacity.trace import CapacityTrace; "
        "j = pl.DataFrame([('a', 0.0, 10.0, 1.0), ('l', 150.0, 1.0, 1.0)], "
        "schema=['job_id', 'submit_s', 'duration_s', 'cores'], orient='row'); "
        "print(simulate(j, CapacityTrace.constant(2, 100), 2, 4, 100).jobs_after_horizon)"
    )
    out = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1" and "horizon" not in out.stderr
