"""Paper 001's isolating runs (studies.riskaware.isolate): the readings parse, the per-pack waits."""

from __future__ import annotations

import polars as pl

from sim.policies import get_policy, parse_params
from studies.riskaware.isolate import READINGS, change, pack_waits


def test_every_reading_is_a_valid_setting_of_its_policy() -> None:
    for policy, settings in READINGS.values():
        parse_params(get_policy(policy), settings)  # raises on an unknown or invalid setting


def test_pack_waits_groups_first_attempts_by_pack_of_five() -> None:
    jobs = pl.DataFrame(
        {
            "job_id": ["a", "b", "c", "d"],
            "submit_s": [0.0, 100.0, 100.0, 200.0],
            "first_start_s": [3600.0, 3700.0, 7300.0, 200.0],
        }
    )
    # b's first attempt ran on machine 6 (then restarted on 1); d was submitted before the window
    attempts = pl.DataFrame({"job_id": ["a", "b", "c", "b", "d"], "machine": [4, 6, 9, 1, 0]})
    assert pack_waits(jobs.filter(pl.col("job_id") != "d"), attempts, 0.0) == {0: (1, 1.0), 5: (2, 1.5)}
    assert pack_waits(jobs, attempts, 150.0) == {0: (1, 0.0)}


def test_change_is_relative_to_the_first() -> None:
    assert change(50.0, 60.0) == 20.0
