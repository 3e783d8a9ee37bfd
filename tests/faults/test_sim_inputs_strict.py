"""Simulator inputs: no silent coercion, clear errors before anything big is allocated.

Each case was accepted or crashed obscurely on adfffce: a boolean ``cores`` simulated as 1; duplicate
per-machine capacity rows (last wins); ``CapacityTrace`` truncating 2.5 machines to 2; a job needing more
memory than any machine accepted and never run; a numba ``TypingError`` for a seed beyond 32 bits; a
``MemoryError`` for 10⁶ changes per hour.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sim import simulate
from sim.capacity.trace import CapacitySpec, CapacityTrace, MachineCapacityTrace
from sim.validate import InputError


def jobs(rows: list[tuple], memory: bool = False) -> pl.DataFrame:
    cols = ["job_id", "submit_s", "duration_s", "cores", *(["memory_gb"] if memory else [])]
    return pl.DataFrame(rows, schema=cols, orient="row")


GOOD = [("a", 0.0, 10.0, 1.0), ("b", 5.0, 20.0, 2.0)]
CAP = CapacityTrace.constant(2, 100)


def test_boolean_platform_cores_are_refused() -> None:
    with pytest.raises(InputError, match="^cores must be a number, not a boolean"):
        simulate(jobs(GOOD[:1]), CAP, 2, True, 100)  # type: ignore[arg-type]


def test_a_boolean_cores_column_is_refused_with_its_row() -> None:
    df = pl.DataFrame(
        {"job_id": ["a", "b"], "submit_s": [0.0, 1.0], "duration_s": [5.0, 5.0], "cores": [1.0, 1.0]}
    )
    df = df.with_columns(pl.Series("cores", [False, True]))
    with pytest.raises(InputError, match=r"^jobs row 1: cores must be a number, not a boolean"):
        simulate(df, CAP, 2, 4.0, 100)


def test_boolean_text_in_a_jobs_file_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "jobs.csv").write_text("job_id,submit_s,duration_s,cores\na,0,10,1\nb,1,10,true\n")
    with pytest.raises(InputError, match=r"jobs.csv line 3: cores must be a number, not a boolean"):
        simulate(tmp_path / "jobs.csv", CAP, 2, 4.0, 100)


def test_duplicate_per_machine_capacity_rows_are_refused(tmp_path: Path) -> None:
    (tmp_path / "cap.csv").write_text("time_s,machine,cores_available\n0,0,4\n0,1,4\n50,1,2\n50,1,0\n")
    with pytest.raises(
        InputError,
        match=r"cap.csv line 5: \(time_s, machine\) \(50, 1\) appears twice \(also on line 4\)",
    ):
        simulate(jobs(GOOD), tmp_path / "cap.csv", 2, 4.0, 100)
    trace = MachineCapacityTrace(
        np.array([0.0, 0.0, 50.0, 50.0]), np.array([0, 1, 1, 1]), np.array([4.0, 4, 2, 0]), 2, 100
    )
    with pytest.raises(
        InputError, match=r"per-machine capacity event \d: \(time_s, machine\) \(50, 1\) appears twice"
    ):
        simulate(jobs(GOOD), trace, 2, 4.0, 100)


def test_duplicate_times_in_a_machines_alive_file_name_their_lines(tmp_path: Path) -> None:
    (tmp_path / "cap.csv").write_text("time_s,machines_alive\n0,2\n30,1\n30,2\n")
    with pytest.raises(InputError, match=r"cap.csv line 4: time_s \(30\) appears twice \(also on line 3\)"):
        simulate(jobs(GOOD), tmp_path / "cap.csv", 2, 4.0, 100)


def test_capacity_trace_refuses_fractional_machines() -> None:
    with pytest.raises(ValueError, match=r"whole machines: point 2 \(t = 30 s\) has 2.5"):
        CapacityTrace(np.array([0.0, 30.0]), np.array([2.0, 2.5]), 4, 100.0)
    assert CapacityTrace(np.array([0.0, 30.0]), np.array([2.0, 3.0]), 4, 100.0).machines_alive.tolist() == [
        2,
        3,
    ]


def test_a_job_needing_more_memory_than_a_machine_is_refused() -> None:
    rows = [("a", 0.0, 10.0, 1.0, 8.0), ("big", 1.0, 10.0, 1.0, 64.0)]
    with pytest.raises(
        InputError, match=r"^jobs row 2: memory_gb must not be more than 32 GB .*\(got 64.0\)"
    ):
        simulate(jobs(rows, memory=True), CAP, 2, 4.0, 100, memory_gb=32.0)
    r = simulate(jobs(rows[:1], memory=True), CAP, 2, 4.0, 100, memory_gb=32.0)
    assert r.metrics["completed"] == 1


@pytest.mark.parametrize("seed", [2**32, 2**63, -1])
def test_a_seed_outside_32_bits_is_a_clear_error(seed: int) -> None:
    with pytest.raises(InputError, match=r"^seed must lie in \[0, 4294967295\]"):
        simulate(jobs(GOOD), CAP, 2, 4.0, 100, seed=seed)


def test_the_largest_seed_still_runs() -> None:
    assert simulate(jobs(GOOD), CAP, 2, 4.0, 100, seed=2**32 - 1).metrics["completed"] == 2


def test_a_million_changes_per_hour_is_refused_up_front() -> None:
    t0 = time.perf_counter()
    with pytest.raises(
        ValueError,
        match=r"^capacity kind 'random_walk' \(changes_per_hour=1000000.0\) over a 2.592e\+06 s horizon has "
        r"~720,000,001 capacity points \(~16.1 GiB\); at most 20,000,000 are supported: shorten the horizon "
        r"or lower changes_per_hour$",
    ):
        CapacitySpec.parse("random-walk:changes_per_hour=1000000").build(100, 30 * 86400.0)
    assert time.perf_counter() - t0 < 5  # refused before allocating, not after a MemoryError
