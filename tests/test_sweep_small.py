"""A sweep whose uncached work is a few tiny scenarios simulates them in its own process: starting pool
workers (a Python each, importing the simulator, loading the compiled kernel and statsmodels) cost more
than the work (a fresh clone's first smoke sweep, 11.3 CPU s on 2 workers, 8.9 in process)."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

import pytest
from rich.console import Console

from pipelines.cli import sweeps as cli_sweeps
from studies import sweep
from studies.catalogue import study
from studies.scenarios import Scenario


def test_small_work() -> None:
    smoke = study("smoke")
    assert cli_sweeps.small_work(smoke)
    big = Scenario("zipf-1.5", smoke[0].capacity, "ff", machines=600, horizon_days=60.0)
    assert not cli_sweeps.small_work([*smoke, big])
    sized = Scenario("zipf-1.5", smoke[0].capacity, "ff", machines=0, horizon_days=1.0)
    assert not cli_sweeps.small_work([sized])  # its platform is not known before the workload is built


def test_a_smoke_sweep_starts_no_workers(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))  # nothing cached: all four scenarios to simulate
    pools: list[int] = []
    runs: list[int] = []
    monkeypatch.setattr(sweep, "start_pool", lambda workers, scs=None: pools.append(workers))
    monkeypatch.setattr("sim.warmup.ensure_warm", lambda *a: False)
    monkeypatch.setattr(cli_sweeps, "_guarded_run", lambda console: contextlib.nullcontext((None, {})))

    def study_run(name, scs, workers, instance, tags, results):  # noqa: ANN001, ANN202
        runs.append(workers)
        return SimpleNamespace(success=True, all_events=[])

    monkeypatch.setattr(cli_sweeps, "_study_run", study_run)
    assert cli_sweeps.materialize_studies(["smoke"], 2, Console(), progress=False, results=False)
    assert pools == [1] and runs == [1]  # in process: no pool started, the plan step runs them itself
