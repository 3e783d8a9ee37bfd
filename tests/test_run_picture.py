"""One run as tables and a picture: the attempt table, the run over time (every policy, from the attempt
log), and ``varcap simulate --plot`` / ``--attempts-out``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sim import CapacityTrace, random_walk, simulate
from sim.metrics import ATTEMPT_TABLE_COLUMNS, TIMESERIES_COLUMNS, run_over_time

ROOT = Path(__file__).resolve().parents[1]


def _jobs(n: int = 600, horizon: float = 86400.0, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(n)],
            "submit_s": np.sort(rng.uniform(0, horizon * 0.8, n)),
            "duration_s": rng.exponential(3600, n) + 60,
            "cores": rng.choice([1.0, 2.0, 4.0], n),
        }
    )


def test_a_hand_made_run_over_time() -> None:
    """Two machines of 4 cores; machine 1 leaves at 50 s and kills job b; job c waits for a."""
    jobs = pl.DataFrame(
        {
            "job_id": ["a", "b", "c"],
            "submit_s": [0.0, 0.0, 10.0],
            "duration_s": [30.0, 100.0, 20.0],
            "cores": [4.0, 2.0, 4.0],
        }
    )
    cap = CapacityTrace(np.array([0.0, 50.0]), np.array([2, 1]), 2, 100.0)
    r = simulate(jobs, cap, 2, 4, 100.0, record_timeseries=True)
    att = r.attempts.sort("start_s", "job_id")
    assert att.columns == [c for c, _, _ in ATTEMPT_TABLE_COLUMNS]
    assert "killed" in att["outcome"].to_list()
    ts = r.timeseries
    assert ts.columns == [c for c, _, _ in TIMESERIES_COLUMNS] and ts.height == 500
    at = {float(t): row for t, row in zip(ts["time_s"], ts.iter_rows(named=True), strict=True)}
    assert at[0.0]["capacity_cores"] == 8 and at[60.0]["capacity_cores"] == 4
    assert at[0.0]["used_cores"] == 6 and at[0.0]["running_jobs"] == 2  # a on one machine, b on the other
    assert at[20.0]["queued_jobs"] == 1  # c waits: a holds machine 0, b machine 1 has 2 free of 4
    assert int(ts["kills"].sum()) == r.metrics["terminations"] == 1


@pytest.mark.parametrize("policy", ["ff", "ias", "target-asap", "slacksched-nodelay", "capsched"])
def test_every_policy_has_a_run_over_time_that_keeps_the_books(policy) -> None:
    h = 86400.0
    jobs, cap = _jobs(), random_walk(10, h, changes_per_hour=2, step=0.3, seed=3)
    r = simulate(jobs, cap, 10, 8, h, policy, record_timeseries=True)
    ts = r.timeseries
    assert (ts["used_cores"] <= ts["capacity_cores"] + 1e-9).all()  # never more in use than alive
    assert (ts["queued_jobs"] >= 0).all() and (ts["running_jobs"] >= 0).all()
    assert int(ts["kills"].sum()) == r.metrics["terminations"]
    assert r.attempts.height == int(r.jobs["attempts"].sum())
    assert (r.attempts["outcome"] == "killed").sum() == r.metrics["terminations"]


def test_without_record_timeseries_nothing_is_built() -> None:
    r = simulate(_jobs(50, 3600.0), random_walk(4, 3600.0, seed=1), 4, 8, 3600.0)
    assert r.timeseries is None and r.attempts is None


def test_run_over_time_refuses_a_bad_step_count() -> None:
    r = simulate(_jobs(20, 3600.0), random_walk(4, 3600.0, seed=1), 4, 8, 3600.0, record_timeseries=True)
    with pytest.raises(ValueError, match="steps must be ≥ 1"):
        run_over_time(None, np.zeros(1), np.zeros(1), 3600.0, steps=0)  # type: ignore[arg-type]
    assert r.timeseries.height == 500


def test_varcap_simulate_plot_and_attempts_out(tmp_path) -> None:
    jobs = tmp_path / "j.csv"
    _jobs(300).write_csv(jobs)
    png, att = tmp_path / "run.png", tmp_path / "a.parquet"
    args = [
        "simulate",
        "--jobs",
        str(jobs),
        "--capacity",
        "random_walk:changes_per_hour=2,step=0.3",
        "--machines",
        "8",
        "--cores",
        "8",
        "--horizon-s",
        "86400",
        "--plot",
        str(png),
        "--attempts-out",
        str(att),
    ]
    r = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "VARCAP_HOME": str(tmp_path)},
        timeout=180,
    )
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    assert pl.read_parquet(att).columns == [c for c, _, _ in ATTEMPT_TABLE_COLUMNS]
    bad = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args[:-4], "--plot", "run.svg"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "VARCAP_HOME": str(tmp_path)},
    )
    assert bad.returncode == 2 and bad.stderr.strip().endswith("(name it …png)")
