"""The engine order of a problem's jobs (``Problem.order``): the stable sort by submit time, and no sort
at all when the jobs already come in that order (the usual file: 0.4 CPU s of a 6M-job run)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sim.capacity.trace import CapacityTrace
from sim.problem import Platform, Problem


def _problem(submit: list[float]) -> Problem:
    n = len(submit)
    jobs = pl.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(n)],
            "submit_s": submit,
            "duration_s": [5.0] * n,
            "cores": [1.0] * n,
        }
    )
    return Problem.build(jobs, Platform(2, 4.0, None), CapacityTrace.constant(2, 100.0), 100.0)


def test_jobs_in_submit_order_are_not_sorted_again(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sort(*a: object, **k: object) -> np.ndarray:
        raise AssertionError("sorted jobs sorted again")

    monkeypatch.setattr(np, "argsort", no_sort)
    p = _problem([0.0, 0.0, 3.0, 3.0, 7.5])
    assert p.order.dtype == np.int64
    assert p.order.tolist() == [0, 1, 2, 3, 4]
    assert p.sort_order is None and p.submit_ordered  # the identity is not held (8 bytes a job)


def test_jobs_out_of_order_are_sorted_stably() -> None:
    submit = [3.0, 0.0, 3.0, 1.0, 0.0]
    p = _problem(submit)
    assert p.order.tolist() == np.argsort(np.array(submit), kind="stable").tolist() == [1, 4, 3, 0, 2]
    assert p.sort_order is p.order and not p.submit_ordered
