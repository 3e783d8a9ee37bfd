"""Every user error is one line ``varcap: error: …`` (exit 2 for bad input), outputs are untouched by a
failing command, and the warehouse being written is said so."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines.cli import main

JOBS = "job_id,submit_s,duration_s,cores\na,0,10,1\nb,5,20,2\n"
CAP = "time_s,machines_alive\n0,2\n50,1\n"


def _simulate(tmp_path: Path, jobs: str, cap: str = CAP, *extra: str) -> list[str]:
    (tmp_path / "jobs.csv").write_text(jobs)
    (tmp_path / "cap.csv").write_text(cap)
    return [
        "simulate",
        "--jobs",
        str(tmp_path / "jobs.csv"),
        "--capacity",
        str(tmp_path / "cap.csv"),
        "--machines",
        "2",
        "--cores",
        "4",
        "--horizon-s",
        "100",
        *extra,
    ]


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("varcap: error: "), err
    return err[0].removeprefix("varcap: error: ")


@pytest.mark.parametrize(
    ("jobs", "cap", "extra", "expect"),
    [
        (JOBS + "c,7,-5,1\n", CAP, (), "jobs.csv line 4: duration_s must be > 0 (got -5)"),
        (JOBS + "c,7,nan,1\n", CAP, (), "jobs.csv line 4: duration_s must be a finite number (got 'nan')"),
        (JOBS + "c,7,abc,1\n", CAP, (), "jobs.csv line 4: duration_s must be a number (got 'abc')"),
        (JOBS + "a,7,5,1\n", CAP, (), "jobs.csv line 4: job_id 'a' is not unique (also on "),
        (JOBS + ",7,5,1\n", CAP, (), "jobs.csv line 4: job_id must not be empty"),
        (JOBS + "c,7,5,8\n", CAP, (), "jobs.csv line 4: cores must not be more than 4 cores"),
        (JOBS + "c,7,5,0\n", CAP, (), "jobs.csv line 4: cores must be > 0 (got 0)"),
        (
            JOBS,
            "time_s,machines_alive\n0,2.5\n",
            (),
            "cap.csv line 2: machines_alive must be an integer in [0, 2] (got 2.5)",
        ),
        (
            JOBS,
            "time_s,machines_alive\n0,2\n10,1000\n",
            (),
            "cap.csv line 3: machines_alive must be an integer in [0, 2] (got 1000)",
        ),
        (JOBS, CAP, ("--horizon-s", "0"), "horizon_s must be finite and > 0 (got 0.0)"),
        (JOBS, CAP, ("--policy", "nope"), "unknown policy 'nope'"),
        (JOBS, CAP, ("--set", "x=1"), "no parameter 'x'"),
    ],
)
def test_simulate_input_errors_are_one_line(tmp_path, capsys, jobs, cap, extra, expect) -> None:
    out = tmp_path / "metrics.json"
    out.write_text('{"previous": true}')
    rc = main(
        _simulate(tmp_path, jobs, cap, "--out", str(out), "--jobs-out", str(tmp_path / "j.csv"), *extra)
    )
    assert rc == 2
    assert expect in _one_line_error(capsys)
    assert out.read_text() == '{"previous": true}'  # untouched
    assert not (tmp_path / "j.csv").exists()


def test_debug_shows_the_traceback(tmp_path) -> None:
    from sim.validate import InputError

    with pytest.raises(InputError, match="duration_s must be > 0"):
        main(["--debug", *_simulate(tmp_path, JOBS + "c,7,-5,1\n")])


def test_jobs_after_the_horizon_are_dropped_and_counted(tmp_path, capsys) -> None:
    rc = main(_simulate(tmp_path, JOBS + "late,150,5,1\n", CAP, "--out", str(tmp_path / "m.json")))
    assert rc == 0
    assert "1 jobs submitted at or after the horizon were left out" in capsys.readouterr().out
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["jobs"] == 2 and m["slo_miss_rate"] == 0.0


def test_missing_jobs_file(tmp_path, capsys) -> None:
    args = _simulate(tmp_path, JOBS)
    args[2] = str(tmp_path / "nope.csv")
    assert main(args) == 2
    assert "nope.csv" in _one_line_error(capsys)


def test_results_before_any_sweep(tmp_path, monkeypatch, capsys) -> None:
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    monkeypatch.setenv("VARCAP_WAREHOUSE", str(db))
    assert main(["results", "smoke"]) == 1
    msg = _one_line_error(capsys)
    assert "out_sim_results" in msg and "varcap sweep STUDY" in msg


def test_corrupt_warehouse(tmp_path, monkeypatch, capsys) -> None:
    db = tmp_path / "w.duckdb"
    db.write_bytes(b"not a database " * 500)
    monkeypatch.setenv("VARCAP_WAREHOUSE", str(db))
    assert main(["sql", "select 1"]) == 1
    assert "cannot read the warehouse" in _one_line_error(capsys)
    assert db.read_bytes() == b"not a database " * 500


def _writer(db: Path, hold_s: float) -> subprocess.Popen:
    code = (
        "import duckdb, sys, time\n"
        f"c = duckdb.connect({str(db)!r})\n"
        "print('locked', flush=True)\n"
        f"time.sleep({hold_s})\n"
        "c.close()\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "locked"
    return p


def test_sql_waits_for_a_short_write(tmp_path, monkeypatch, capsys) -> None:
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create table t as select 42 as a")
    monkeypatch.setenv("VARCAP_WAREHOUSE", str(db))
    p = _writer(db, 1.0)
    try:
        assert main(["sql", "select a from t"]) == 0
        assert "42" in capsys.readouterr().out
    finally:
        p.wait()


def test_sql_says_the_warehouse_is_being_written(tmp_path, monkeypatch, capsys) -> None:
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create table t as select 42 as a")
    monkeypatch.setenv("VARCAP_WAREHOUSE", str(db))
    p = _writer(db, 30)
    try:
        t0 = time.monotonic()
        assert main(["sql", "select a from t"]) == 1
        assert time.monotonic() - t0 < 20  # waited briefly, did not hang
        msg = _one_line_error(capsys)
        assert "is being written by another process" in msg and f"pid {p.pid}" in msg
    finally:
        p.kill()
        p.wait()


def test_ingest_failure_summary_names_the_check(tmp_path) -> None:
    """The CLI summary line of a failed core step is the check's own message, not 'step failed'."""
    from pipelines.guard import failure_lines
    from tests.faults.conftest import materialize, register

    wh = tmp_path / "w.duckdb"
    f = tmp_path / "p.csv"
    f.write_text("Datetime,Price (USD/MWh)\n2024-01-01 00:00:00,1\n2024-01-01 00:00:00,2\n")
    register(wh, "power_prices", [(f, "prices/ERCOT_HB_HUBAVG_DAM_SPP_2024_hourly.csv", True)])
    res = materialize(wh, "core_power_price")
    (line,) = failure_lines(res.all_events)
    assert line.startswith("core_power_price: blocking check unique_key failed")
    assert "prices/ERCOT_HB_HUBAVG_DAM_SPP_2024_hourly.csv" in line


def test_cli_shows_asset_warnings_and_failures_one_line_each() -> None:
    """`varcap run` hides Dagster's console log (tracebacks) unless --debug; asset warnings and the
    failing step's own message come back as one line each."""
    from pipelines.guard import failure_lines, warning_lines

    @dg.asset
    def noisy(context) -> None:  # unannotated: Dagster cannot resolve a string annotation here
        context.log.warning("noisy: no remote endpoint is known; using the embedded sample")
        raise ValueError("noisy: data/x.csv line 3: bad value")

    with dg.instance_for_test() as inst:
        res = dg.materialize([noisy], instance=inst, raise_on_error=False)
        assert warning_lines(inst, res.run_id) == [
            "warning: noisy: no remote endpoint is known; using the embedded sample"
        ]
        assert failure_lines(res.all_events) == ["noisy: data/x.csv line 3: bad value"]
