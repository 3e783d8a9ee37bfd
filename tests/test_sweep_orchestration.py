"""Sweep orchestration without waste: scenario ids computed once and unchanged, jobs built once per run, warm
workers."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from studies import scenarios
from studies.catalogue import study
from studies.scenarios import Scenario, platform_size, sized_jobs

# ids computed by the catalogue before the id was cached (the sweep cache and partition keys rely on them)
SMOKE_IDS = ["5edffef50576", "f2ef6d8c7d24", "868089182649", "d1d2647746cd"]


def test_cached_id_is_the_hash_of_the_parameters() -> None:
    assert [s.id for s in study("smoke")] == SMOKE_IDS
    for sc in study("thesis-ch4-synthetic") + study("zhang-chien"):
        blob = json.dumps(sc.params(), sort_keys=True, separators=(",", ":"))
        assert sc.id == hashlib.sha256(blob.encode()).hexdigest()[:12]
    sc = study("smoke")[0]
    assert sc.id is sc.id  # computed once
    assert Scenario.from_params(sc.params()) == sc and Scenario.from_params(sc.params()).id == sc.id


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """A tiny exported azure workload: 200 jobs over 2 days."""
    n = 200
    jobs = pl.DataFrame(
        {
            "job_id": list(range(n)),
            "submit_s": [i * 800.0 for i in range(n)],
            "duration_s": [3600.0 + 97.0 * (i % 50) for i in range(n)],
            "cores": [1 + i % 8 for i in range(n)],
        }
    )
    jobs.write_parquet(tmp_path / "workload_azure.parquet")
    return tmp_path


@pytest.mark.parametrize(
    "sc",
    [
        Scenario("azure", {"kind": "constant"}, horizon_days=2.0),  # sized from its jobs, jobs reused
        Scenario("azure", {"kind": "constant"}, machines=7, horizon_days=2.0),
        Scenario("zipf-1.5", {"kind": "constant"}, horizon_days=1.0),  # jobs depend on the size: rebuilt
        Scenario("synthetic-uniform", {"kind": "constant"}, horizon_days=1.0),
    ],
    ids=lambda s: f"{s.workload}-{s.machines}m",
)
def test_sized_jobs_equals_sizing_then_building(sc: Scenario, inputs: Path, monkeypatch) -> None:
    machines = platform_size(sc, inputs)
    expected = scenarios.build_jobs(sc, inputs, machines)
    calls = []
    real = scenarios.build_jobs
    monkeypatch.setattr(scenarios, "build_jobs", lambda s, i, m: calls.append(m) or real(s, i, m))
    got_machines, got = sized_jobs(sc, inputs)
    assert got_machines == machines and got.equals(expected)
    sized_from_jobs = not sc.machines
    rebuilt = sized_from_jobs and sc.workload not in scenarios.SIZE_FREE_WORKLOADS
    assert len(calls) == 1 + rebuilt  # the jobs of a size-free workload are built once


def test_size_free_workloads_ignore_the_platform_size(inputs: Path) -> None:
    for wl in scenarios.SIZE_FREE_WORKLOADS:
        cap = (
            {"kind": "risk_aware_walk", "m_avg": 24, "m_ra": 8, "period_s": 3600.0}
            if "riskaware" in wl
            else {"kind": "constant"}
        )
        sc = Scenario(wl, cap, horizon_days=1.0)
        if scenarios.workload_needs(wl) and not (inputs / scenarios.workload_needs(wl)).is_file():
            borg = pl.read_parquet(inputs / "workload_azure.parquet")
            borg.write_parquet(inputs / scenarios.workload_needs(wl))
        assert scenarios.build_jobs(sc, inputs, 1).equals(scenarios.build_jobs(sc, inputs, 57))


def test_warm_workers_import_what_their_policies_need_first() -> None:
    """A worker started ahead of its scenarios imports the policies' first-use modules (IAS fits survival
    models: statsmodels), so that import is not timed as part of the first scenario; FF needs none."""
    code = (
        "import sys; from sim.policies import warm_imports; warm_imports({names}); "
        "print('statsmodels.duration.survfunc' in sys.modules)"
    )
    for names, want in ((["ff", "ff"], "False"), (["ff", "ias-h1+h3"], "True")):
        out = subprocess.run(
            [sys.executable, "-c", code.format(names=names)], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == want, (names, out.stderr)
