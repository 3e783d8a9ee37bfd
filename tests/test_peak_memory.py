"""The Borg-scale run's peak-memory paths give the answers of the plain ones: metrics worked out a block of
attempts and jobs at a time equal the one-block metrics, and a consumed attempt log gives the same columns
while its copied rows go back to the system."""

from __future__ import annotations

import math
import sys

import numpy as np
import polars as pl
import pytest

import sim.metrics as metrics
import sim.problem as problem
from sim import random_walk, simulate
from sim.engine.log import LOG_COLUMNS
from sim.metrics import compute_metrics
from sim.problem import attempt_fields


def _run(window: tuple[float, float | None], settings: dict[str, str] | None = None):
    rng = np.random.default_rng(5)
    n, horizon = 1500, 40 * 3600.0
    jobs = pl.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(n)],
            "submit_s": np.sort(rng.uniform(0, 36 * 3600.0, n)),
            "duration_s": rng.choice([60.0, 600.0, 3600.0, 7200.0], n),
            "cores": rng.choice([1.0, 2.0, 4.0], n),
        }
    )
    cap = random_walk(20, horizon, changes_per_hour=4.0, step=0.3, seed=2)
    r = simulate(
        jobs, cap, 20, 4.0, horizon, "ff", settings, window_start_s=window[0], window_end_s=window[1]
    )
    return r, jobs


@pytest.mark.parametrize(
    ("window", "settings"),
    [((0.0, None), None), ((5 * 3600.0, 30 * 3600.0), None), ((0.0, None), {"checkpoint_interval_s": "900"})],
    ids=["whole run", "window", "checkpointing"],
)
def test_metrics_in_blocks_equal_the_one_block_metrics(
    monkeypatch: pytest.MonkeyPatch, window: tuple[float, float | None], settings: dict[str, str] | None
) -> None:
    r, jobs = _run(window, settings)
    out = r.tables.output
    assert r.metrics["terminations"] > 50 and out.att_job.size > 1000  # 10+ blocks of attempts, with kills
    cols = [jobs[c].to_numpy() for c in ("submit_s", "duration_s", "cores")]
    args = (out, *cols, 40 * 3600.0, 0.1, *window)
    whole = compute_metrics(*args)
    assert whole == r.metrics
    monkeypatch.setattr(metrics, "METRIC_BLOCK", 97)  # 16 blocks of jobs, more of attempts
    blocks = compute_metrics(*args)
    assert blocks.keys() == whole.keys()
    for k, v in whole.items():
        if isinstance(v, int):
            assert blocks[k] == v, k
        else:
            assert math.isclose(blocks[k], v, rel_tol=1e-12, abs_tol=1e-12) or (
                math.isnan(v) and math.isnan(blocks[k])
            ), k


def test_a_consumed_log_gives_the_same_columns_and_its_memory_back(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    n = 40_000
    log = np.empty((n, LOG_COLUMNS))
    log[:, 0] = rng.integers(0, 1000, n)
    log[:, 1] = rng.uniform(0, 1e5, n)
    log[:, 2] = log[:, 1] + rng.uniform(1, 1e4, n)
    log[:, 3] = rng.integers(0, 3, n)
    log[:, 4] = rng.integers(0, 200, n)
    log[:, 5] = rng.uniform(0, 10, n)
    row = np.arange(1000)
    orig = log.copy()
    plain = attempt_fields(orig, row, useful=True)
    monkeypatch.setattr(problem, "RELEASE_MIN_BYTES", 0)
    monkeypatch.setattr(problem, "RELEASE_BLOCK_ROWS", 1000)
    consumed = attempt_fields(log, row, useful=True, consume=True)
    assert plain.keys() == consumed.keys()
    for k, v in plain.items():
        assert v.dtype == consumed[k].dtype and np.array_equal(v, consumed[k]), k
    if sys.platform.startswith("linux"):  # the copied rows' whole pages were given back: they read as zeros
        assert not log[1000 : n - 1000].any()
    shuffled = rng.permutation(1000)
    assert np.array_equal(attempt_fields(orig, shuffled)["att_job"], shuffled[plain["att_job"]])
