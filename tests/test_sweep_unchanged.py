"""``varcap sweep`` on a study whose cached runs and rows of ``out_sim_results`` are as its last sweep left
them does nothing (no Dagster run); a changed run, row or ``--force`` sweeps again."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / ".dagster_home"))
    monkeypatch.delenv("VARCAP_WAREHOUSE", raising=False)
    (tmp_path / "data").mkdir()
    return tmp_path


def test_an_unchanged_sweep_does_nothing_a_changed_one_runs(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipelines.cli import sweeps

    calls: list[list[str]] = []
    state = {"warehouse": "w", "runs": "r", "rows": "4:1"}
    monkeypatch.setattr(sweeps, "materialize_studies", lambda names, *a, **k: calls.append(names) or True)
    monkeypatch.setattr(sweeps, "sweep_state", lambda name: dict(state))
    assert sweeps.run_sweep("smoke", 1) and len(calls) == 1  # no state recorded yet: sweeps
    assert sweeps.run_sweep("smoke", 1) and len(calls) == 1  # as the last sweep left it: nothing to do
    assert sweeps.run_sweep("smoke", 1, force=True) and len(calls) == 2
    state["rows"] = "4:2"  # a row of out_sim_results changed since
    assert sweeps.run_sweep("smoke", 1) and len(calls) == 3
    assert sweeps.run_sweep("smoke", 1) and len(calls) == 3
    # a failed sweep records nothing: the next one runs again
    monkeypatch.setattr(sweeps, "materialize_studies", lambda names, *a, **k: calls.append(names) and False)
    state["runs"] = "r2"
    assert not sweeps.run_sweep("smoke", 1) and len(calls) == 4
    assert not sweeps.run_sweep("smoke", 1) and len(calls) == 5


def test_the_state_follows_the_runs_and_the_rows(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from pipelines.cli.sweeps import sweep_state
    from studies import sweep
    from studies.catalogue import study

    ids = [s.id for s in study("smoke")]
    monkeypatch.setattr(sweep, "is_cached", lambda sc: True)
    for i in ids:
        (sweep.runs_dir() / i).mkdir(parents=True)
        (sweep.runs_dir() / i / "run.json").write_text(json.dumps({"scenario_id": i, "wall_s": 1.0}))
    assert sweep_state("smoke") is None  # no warehouse
    wh = home / "data" / "warehouse.duckdb"
    with duckdb.connect(str(wh)) as con:
        con.execute("CREATE TABLE out_sim_results (scenario_id VARCHAR, goodput DOUBLE)")
        con.executemany("INSERT INTO out_sim_results VALUES (?, 0.5)", [[i] for i in ids[:-1]])
    assert sweep_state("smoke") is None  # a scenario without its row
    with duckdb.connect(str(wh)) as con:
        con.execute("INSERT INTO out_sim_results VALUES (?, 0.5), ('other', 0.1)", [ids[-1]])
    first = sweep_state("smoke")
    assert first is not None and sweep_state("smoke") == first
    with duckdb.connect(str(wh)) as con:  # another study's row: not this study's state
        con.execute("UPDATE out_sim_results SET goodput = 0.2 WHERE scenario_id = 'other'")
    assert sweep_state("smoke") == first
    with duckdb.connect(str(wh)) as con:
        con.execute("UPDATE out_sim_results SET goodput = 0.6 WHERE scenario_id = ?", [ids[0]])
    second = sweep_state("smoke")
    assert second is not None and second != first
    (sweep.runs_dir() / ids[1] / "run.json").write_text(json.dumps({"scenario_id": ids[1], "wall_s": 2.0}))
    assert sweep_state("smoke") not in (None, first, second)
    monkeypatch.setattr(sweep, "is_cached", lambda sc: sc.id != ids[2])
    assert sweep_state("smoke") is None  # a scenario to simulate


def test_harmony_is_materialized_again_only_when_its_state_changed(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipelines.cli import sweeps

    calls: list[list[str]] = []
    state: dict = {"inputs": "a", "tables": {"out_harmony_results": "21:5"}}
    monkeypatch.setattr(sweeps, "_has_tables", lambda names: True)
    monkeypatch.setattr(sweeps, "_materialize", lambda keys, *a, **k: calls.append(list(keys)) or True)
    monkeypatch.setattr(sweeps, "harmony_state", lambda study, workload: dict(state))
    assert sweeps.run_harmony("harmony", show=False, chapter=False) and calls == [list(sweeps.HARMONY_ASSETS)]
    assert sweeps.run_harmony("harmony", show=False, chapter=False) and len(calls) == 1  # unchanged
    assert (
        sweeps.run_harmony("harmony-headline", show=False, chapter=False) and len(calls) == 2
    )  # another study
    state["inputs"] = "b"  # the code or a core table changed
    assert sweeps.run_harmony("harmony", show=False, chapter=False) and len(calls) == 3
    assert sweeps.run_harmony("harmony", show=False, chapter=False) and len(calls) == 3


def test_varcap_run_records_only_the_studies_whose_runs_changed(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contextlib
    from types import SimpleNamespace

    from rich.console import Console

    from pipelines.cli import sweeps
    from studies import sweep

    ran: list[str] = []
    state = {"smoke": {"runs": "a"}, "thesis-grids": {"runs": "b"}}

    def study_run(name, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
        ran.append(name)
        return SimpleNamespace(success=True, all_events=[])

    monkeypatch.setattr(sweeps, "_study_run", study_run)
    monkeypatch.setattr(sweeps, "_guarded_run", lambda console: contextlib.nullcontext((None, {})))
    monkeypatch.setattr(sweeps, "runs_state", lambda name: dict(state[name]))
    monkeypatch.setattr(sweep, "is_cached", lambda sc: True)
    go = lambda: sweeps.materialize_studies(  # noqa: E731
        ["smoke", "thesis-grids"], 1, Console(), progress=False, results=False, export_inputs=False
    )
    assert go() and ran == ["smoke", "thesis-grids"]
    assert go() and ran == ["smoke", "thesis-grids"]  # both recorded as they are: no run
    state["thesis-grids"] = {"runs": "c"}  # a run of smoke-ias simulated again
    assert go() and ran == ["smoke", "thesis-grids", "thesis-grids"]
    # with the results table (varcap sweep, varcap reproduce) every study is recorded
    monkeypatch.setattr(sweeps, "_materialize", lambda *a, **k: True)
    assert sweeps.materialize_studies(
        ["smoke", "thesis-grids"], 1, Console(), progress=False, export_inputs=False
    )
    assert ran[3:] == ["smoke", "thesis-grids"]


def test_harmony_state_needs_its_tables_and_a_materialization_of_each_asset(home: Path) -> None:
    import dagster as dg

    from pipelines.cli.common import prepare_dagster_home
    from pipelines.cli.sweeps import HARMONY_ASSETS, HARMONY_INPUT_TABLES, harmony_state

    prepare_dagster_home()
    wh = home / "data" / "warehouse.duckdb"
    with duckdb.connect(str(wh)) as con:
        for t in (*HARMONY_INPUT_TABLES, *HARMONY_ASSETS):
            con.execute(f"CREATE TABLE {t} AS SELECT 1 AS i")
    assert harmony_state("harmony", "borg2011-sample") is None  # nothing materialized in the instance
    instance = dg.DagsterInstance.get()
    for n in HARMONY_ASSETS:
        instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=n))
    first = harmony_state("harmony", "borg2011-sample")
    assert first is not None and harmony_state("harmony", "borg2011-sample") == first
    assert harmony_state("harmony-7d", "borg2011-7d") != first
    with duckdb.connect(str(wh)) as con:
        con.execute("INSERT INTO core_jobs VALUES (2)")
    assert harmony_state("harmony", "borg2011-sample") not in (None, first)


def test_the_progress_follower_counts_results_written_during_the_run_once(home: Path) -> None:
    """The follower counts a result written after the run began, a stale one rewritten too, and never
    a result cached before it, however many polls see it."""
    import os
    import threading
    import time
    from types import SimpleNamespace

    from pipelines.cli.sweeps import _follow
    from studies import sweep

    scs = [SimpleNamespace(id=f"s{i}") for i in range(4)]
    rd = sweep.runs_dir()

    def write(i: int) -> None:
        (rd / f"s{i}").mkdir(parents=True, exist_ok=True)
        (rd / f"s{i}" / "run.json").write_text("{}")

    write(0)  # cached before the run
    write(1)  # stale: simulated again during the run
    t0 = time.time() + 1
    for i in (0, 1):
        os.utime(rd / f"s{i}" / "run.json", (t0 - 60, t0 - 60))

    def run() -> None:
        time.sleep(1.2)
        write(1)
        write(2)
        time.sleep(1.5)  # polls that see s1 and s2 again
        write(3)

    th = threading.Thread(target=run)
    th.start()
    assert _follow(th, scs, 1, t0, "test", progress=False) == 3
