"""The simulator input contract (sim.validate), shared by ``sim.simulate`` and ``varcap simulate``
: nonsense is refused with the row and field, never silently fixed."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import simulate
from sim.capacity.generators import random_walk
from sim.capacity.trace import CapacityTrace
from sim.validate import InputError, check_inputs


def jobs(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["job_id", "submit_s", "duration_s", "cores"], orient="row")


GOOD = [("a", 0.0, 10.0, 1.0), ("b", 5.0, 20.0, 0.25)]


@pytest.mark.parametrize("horizon", [0.0, -5.0, math.nan, math.inf])
def test_horizon_must_be_positive(horizon: float) -> None:
    with pytest.raises(InputError, match="horizon_s must be finite and > 0"):
        simulate(jobs(GOOD), CapacityTrace.constant(2, 100), 2, 4, horizon)


def test_duplicate_and_null_job_ids() -> None:
    with pytest.raises(InputError, match=r"jobs row 3: job_id 'a' is not unique \(also on jobs row 1\)"):
        simulate(jobs([*GOOD, ("a", 6.0, 1.0, 1.0)]), CapacityTrace.constant(2, 100), 2, 4, 100)
    with pytest.raises(InputError, match="jobs row 3: job_id must not be empty"):
        simulate(jobs([*GOOD, (None, 6.0, 1.0, 1.0)]), CapacityTrace.constant(2, 100), 2, 4, 100)


def test_distinct_ids_are_proved_by_their_hashes_without_counting_the_strings(monkeypatch) -> None:
    """Distinct ids: their 64-bit hashes are counted, never the strings themselves (~4× the CPU at 6M
    ids); a repeated hash — a duplicate, or a collision of two different ids — falls back to the values."""
    from sim import validate

    counted: list[pl.DataType] = []
    real = pl.Series.n_unique

    def spy(self: pl.Series) -> int:
        counted.append(self.dtype)
        return real(self)

    monkeypatch.setattr(pl.Series, "n_unique", spy)
    ids = pl.Series("job_id", [f"job-{i}" for i in range(1000)])
    assert validate._distinct(ids)
    assert pl.String not in counted
    assert not validate._distinct(pl.Series("job_id", ["a", "b", "a"]))
    # two different ids whose hashes collide (forced): still distinct
    monkeypatch.setattr(pl.Series, "hash", lambda self, *a, **k: pl.Series([7] * self.len(), dtype=pl.UInt64))
    counted.clear()
    assert validate._distinct(pl.Series("job_id", ["a", "b"]))
    assert pl.String in counted


def test_fractional_machine_counts_are_refused(tmp_path) -> None:
    (tmp_path / "cap.csv").write_text("time_s,machines_alive\n0,2\n30,2.5\n")
    with pytest.raises(
        InputError, match=r"cap.csv line 3: machines_alive must be an integer in \[0, 4\] \(got 2.5\)"
    ):
        simulate(jobs(GOOD), tmp_path / "cap.csv", 4, 4, 100)
    with pytest.raises(InputError, match="machines must be an integer"):
        simulate(jobs(GOOD), CapacityTrace.constant(2, 100), 2.5, 4, 100)  # type: ignore[arg-type]


def test_trace_with_more_machines_is_an_error_not_clipped() -> None:
    big = random_walk(1000, 3600.0, changes_per_hour=4, step=0.1, seed=0)
    with pytest.raises(
        InputError, match=r"machines_alive must lie in \[0, 4\] \(got \d+\); the trace is for 1000"
    ):
        simulate(jobs(GOOD), big, 4, 4, 3600.0)
    # a trace for more machines whose values fit is fine
    fits = CapacityTrace(np.array([0.0, 50.0]), np.array([4, 2]), 1000, 100.0)
    assert simulate(jobs(GOOD), fits, 4, 4, 100).metrics["completed"] == 2


def test_jobs_after_the_horizon_are_dropped_with_a_warning_and_counted_apart() -> None:
    late = jobs([*GOOD, ("late", 150.0, 1.0, 1.0), ("later", 400.0, 1.0, 1.0)])
    with pytest.warns(UserWarning, match="2 jobs submitted at or after the horizon"):
        r = simulate(late, CapacityTrace.constant(2, 100), 2, 4, 100)
    assert r.jobs_after_horizon == 2
    assert r.metrics["jobs"] == 2 and r.metrics["slo_miss_rate"] == 0.0  # not counted as misses


def test_fractional_cores_stay_allowed() -> None:
    r = simulate(
        jobs([("a", 0.0, 10.0, 0.037), ("b", 0.0, 10.0, 0.5)]), CapacityTrace.constant(1, 100), 1, 1.0, 100
    )
    assert r.metrics["completed"] == 2


COLS = ("submit_s", "duration_s", "cores")


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 30),
    data=st.data(),
)
def test_one_bad_cell_is_named_by_row_and_field(n: int, data: st.DataObject) -> None:
    """Property: any valid frame passes; one bad value anywhere is reported at exactly its row and field."""
    rows = [
        (f"j{i}", data.draw(st.floats(0, 99)), data.draw(st.floats(0.5, 1e4)), data.draw(st.floats(0.01, 4)))
        for i in range(n)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept, dropped = check_inputs(jobs(rows), None, 2, 4.0, 100.0)
    assert kept.height == n and dropped == 0
    i = data.draw(st.integers(0, n - 1))
    col = data.draw(st.sampled_from(COLS))
    bad = data.draw(
        st.sampled_from(
            {
                "submit_s": [-1.0, math.nan, math.inf],
                "duration_s": [0.0, -3.0, math.nan, -math.inf],
                "cores": [0.0, 4.5, math.nan],
            }[col]
        )
    )
    rows[i] = tuple(bad if c == col else v for c, v in zip(("job_id", *COLS), rows[i], strict=True))
    with pytest.raises(InputError, match=rf"^jobs row {i + 1}: {col} "):
        check_inputs(jobs(rows), None, 2, 4.0, 100.0)
