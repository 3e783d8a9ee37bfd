"""A user's mistakes end as one line ``varcap: error: …`` (exit 2) naming the valid choices, and partial
results say that they are partial."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[1]


def varcap(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": "/usr/bin:/bin",
        "VARCAP_HOME": str(tmp_path),
        "DAGSTER_HOME": str(tmp_path / "dh"),
    }
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )


def one_line(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("varcap: error: "), r.stderr
    return lines[0]


SIM = ["simulate", "--jobs", str(ROOT / "data/samples/swf/example.swf"), "--horizon-s", "3600"]


@pytest.mark.parametrize(
    ("capacity", "expect"),
    [
        (
            "random_wlak:step=0.1",
            "no capacity kind 'random_wlak' and no such trace file (did you mean 'random_walk'?",
        ),
        ("randomwalk", "did you mean 'random_walk'?"),
        ("traces/missing.csv", "no such trace file (kinds: carbon_budget,"),
    ],
)
def test_a_misspelled_capacity_kind_names_the_kinds(tmp_path, capacity, expect) -> None:
    line = one_line(varcap(tmp_path, *SIM, "--capacity", capacity))
    assert expect in line and "FileNotFoundError" not in line


def test_results_and_reports_without_a_warehouse_are_one_line(tmp_path) -> None:
    assert "not found: run `make run` and `varcap sweep smoke` first" in one_line(
        varcap(tmp_path, "results", "smoke")
    )
    line = one_line(varcap(tmp_path, "reports"))
    assert line.endswith("run `varcap run` first")


def test_partial_results_say_how_many_scenarios_are_missing() -> None:
    from pipelines.cli.sweeps import missing_note
    from studies import sweep
    from studies.catalogue import study

    scs = study("smoke")
    keys = sweep.partition_keys(scs)
    some = pl.DataFrame({"scenario_id": [scs[0].id]})
    note = missing_note("smoke", some)
    assert note is not None and note.startswith(f"1 of {len(scs)} scenarios of smoke have results")
    assert keys[scs[1].id] in note and note.endswith("run `varcap sweep smoke`")
    assert missing_note("smoke", pl.DataFrame({"scenario_id": [s.id for s in scs]})) is None
