"""``varcap simulate`` end to end on small files; the JSON has exactly the documented metric names."""

from __future__ import annotations

import json

import polars as pl
import pytest

from pipelines.cli import main
from sim import METRIC_NAMES, simulate


def test_simulate_cli_matches_python_api(tmp_path) -> None:
    jobs = pl.DataFrame(
        {
            "job_id": ["a", "b", "c", "d"],
            "submit_s": [0.0, 10, 20, 30],
            "duration_s": [3600.0, 600, 7200, 60],
            "cores": [4.0, 2, 8, 1],
        }
    )
    jobs.write_csv(tmp_path / "jobs.csv")
    pl.DataFrame({"time_s": [0.0, 1800.0, 5400.0], "machines_alive": [2, 1, 2]}).write_parquet(
        tmp_path / "cap.parquet"
    )
    rc = main(
        [
            "simulate",
            "--jobs",
            str(tmp_path / "jobs.csv"),
            "--capacity",
            str(tmp_path / "cap.parquet"),
            "--machines",
            "2",
            "--cores",
            "8",
            "--horizon-s",
            "20000",
            "--policy",
            "ff",
            "--set",
            "termination=lww",
            "--out",
            str(tmp_path / "r.json"),
            "--jobs-out",
            str(tmp_path / "jobs_out.parquet"),
        ]
    )
    assert rc == 0
    got = json.loads((tmp_path / "r.json").read_text())
    assert tuple(got) == METRIC_NAMES
    api = simulate(jobs, tmp_path / "cap.parquet", 2, 8, 20000, settings={"termination": "lww"})
    assert got == pytest.approx(api.metrics, nan_ok=True)
    assert got["terminations"] >= 1
    out = pl.read_parquet(tmp_path / "jobs_out.parquet")
    assert out.columns == [
        "job_id",
        "submit_s",
        "first_start_s",
        "end_s",
        "attempts",
        "terminations",
        "status",
    ]


def test_simulate_cli_random_walk_spec(tmp_path, capsys) -> None:
    pl.DataFrame({"job_id": ["a"], "submit_s": [0.0], "duration_s": [100.0], "cores": [1.0]}).write_csv(
        tmp_path / "j.csv"
    )
    rc = main(
        [
            "simulate",
            "--jobs",
            str(tmp_path / "j.csv"),
            "--capacity",
            "random-walk:changes_per_hour=2,step=0.3,seed=4",
            "--machines",
            "10",
            "--cores",
            "4",
            "--horizon-s",
            "7200",
        ]
    )
    assert rc == 0 and "goodput" in capsys.readouterr().out


def test_simulate_off_a_terminal_prints_plain_rows_without_rich(tmp_path) -> None:
    """Piped, ``varcap simulate`` prints its title and one ``metric value`` row per metric (the values
    aligned right), and never imports rich (a tenth of a small run's process); the metrics are those of
    ``--out``."""
    import subprocess
    import sys

    pl.DataFrame(
        {"job_id": [0, 1], "submit_s": [0.0, 5.0], "duration_s": [100.0, 50.0], "cores": [1.0, 2.0]}
    ).write_csv(tmp_path / "j.csv")
    code = (
        "import sys; from pipelines.cli import main; "
        f"rc = main(['simulate', '--jobs', {str(tmp_path / 'j.csv')!r}, '--capacity', 'constant:fraction=1', "
        f"'--machines', '4', '--cores', '4', '--horizon-s', '3600', '--out', {str(tmp_path / 'm.json')!r}]); "
        "print('rich loaded:', 'rich' in sys.modules, rc)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines[0].startswith("ff — 2 jobs, 4×4 cores")
    assert lines[-1] == "rich loaded: False 0"
    rows = dict(line.split() for line in lines[1 : 1 + len(METRIC_NAMES)])
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert list(rows) == list(metrics) and rows["completed"] == "2" and rows["jobs"] == "2"
    widths = {len(line) for line in lines[1 : 1 + len(METRIC_NAMES)]}
    assert len(widths) == 1  # one column of names, one of right-aligned values


def test_simulate_cli_per_machine_capacity(tmp_path) -> None:
    pl.DataFrame(
        {"job_id": ["a", "b"], "submit_s": [0.0, 1.0], "duration_s": [10.0, 10.0], "cores": [2.0, 2.0]}
    ).write_csv(tmp_path / "j.csv")
    pl.DataFrame({"time_s": [0.0, 5.0], "machine": [0, 0], "cores_available": [4.0, 2.0]}).write_csv(
        tmp_path / "cap.csv"
    )
    rc = main(
        [
            "simulate",
            "--jobs",
            str(tmp_path / "j.csv"),
            "--capacity",
            str(tmp_path / "cap.csv"),
            "--machines",
            "1",
            "--cores",
            "4",
            "--horizon-s",
            "100",
            "--out",
            str(tmp_path / "r.json"),
        ]
    )
    got = json.loads((tmp_path / "r.json").read_text())
    # the machine shrinks to 2 cores at t=5: the newest job (b) is killed and reruns after a completes
    assert rc == 0 and got["terminations"] == 1 and got["completed"] == 2
    assert got["available_core_seconds"] == 4 * 5 + 2 * 95
    with pytest.raises(ValueError, match="needs a machines-alive capacity trace"):
        simulate(pl.read_csv(tmp_path / "j.csv"), tmp_path / "cap.csv", 1, 4, 100, policy="ias")


def test_sql_command_is_read_only(tmp_path, monkeypatch, capsys) -> None:
    import duckdb

    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create table t as select 1 as a union all select 2")
    monkeypatch.setenv("VARCAP_WAREHOUSE", str(db))
    assert main(["sql", "select sum(a) s from t"]) == 0 and "3" in capsys.readouterr().out
    assert main(["sql", "drop table t"]) == 2  # one line with the prefix, not a bare SystemExit
    assert capsys.readouterr().err.startswith("varcap: error: query failed")
    assert main(["sql", "select * from t", "--csv", str(tmp_path / "o.csv")]) == 0
    assert (tmp_path / "o.csv").read_text().splitlines() == ["a", "1", "2"]


def test_warm_reports_a_warm_cache(capsys) -> None:
    """After a simulation the kernel is in numba's cache: ``varcap warm`` has nothing to compile."""
    from sim.warmup import kernel_cached, warm

    warm()  # compiles only if this checkout's cache is cold
    assert kernel_cached() is True
    assert main(["warm"]) == 0
    assert "nothing to compile" in capsys.readouterr().out


def test_cold_numba_cache_is_detected(tmp_path) -> None:
    """With an empty ``NUMBA_CACHE_DIR`` the kernel is not cached (so the CLI warms, with a message)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    code = "from sim.warmup import kernel_cached; print(kernel_cached())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_bench_helpers(tmp_path) -> None:
    """pipelines.bench: the start-up instance is a valid jobs file; a failing process is named, not timed."""
    import sys

    from pipelines.bench import timed_process, write_jobs_csv
    from sim.api import read_jobs

    jobs = read_jobs(write_jobs_csv(tmp_path / "j.csv"))
    assert jobs.height == 10 and jobs["duration_s"].min() > 0
    wall, cpu = timed_process([sys.executable, "-c", "pass"], tmp_path, {})
    assert wall > 0 and cpu >= 0
    with pytest.raises(SystemExit, match="exit 3"):
        timed_process([sys.executable, "-c", "import sys; sys.exit(3)"], tmp_path, {})


def test_run_summary_shows_a_files_table_as_its_count() -> None:
    from pipelines.cli.run import _cell

    md = "| file | rows |\n|---|---|\n| workload_azure.parquet | 100052 |\n| grid_carbon.parquet | 2160 |"
    assert _cell(md) == "2 files"
    assert _cell(684393) == "684393"
