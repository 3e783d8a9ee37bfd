"""An SWF log through the pipeline: raw_swf_log (immutable copy, sha256 in raw_files; a URL through the
download client), core_swf_jobs validated before the swap with its rejects (file, line, field), and the
``swf`` warehouse workloads simulated from the exported table. No network: URLs come from a local server."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource

from assets.download import Downloader, sha256_file
from assets.resources import DownloaderResource
from assets.swf import export_swf, register_log, swf_assets, swf_checks
from tests.httpserver import FixtureServer, Route

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "samples" / "swf" / "example.swf"

BAD = """; MaxNodes: 2
; MaxProcs: 8
1 0 0 100 2 -1 -1 2 200 -1 1 1 1 1 1 1 -1 -1
2 10 0 -1 2 -1 -1 2 200 -1 1 1 1 1 1 1 -1 -1
3 20 0 50 x -1 -1 2 200 -1 1 1 1 1 1 1 -1 -1
4 30 0 50 2 -1 -1 2
5 40 0 60 16 -1 -1 16 200 -1 1 1 1 1 1 1 -1 -1
"""


def _materialize(db: Path, cache: Path, path: str = "", **core: object) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [*swf_assets, *swf_checks],
        resources={
            "duckdb": DuckDBResource(database=str(db)),
            "downloader": DownloaderResource(cache_dir=str(cache)),
        },
        run_config={
            "ops": {
                "raw_swf_log": {"config": {"path": path}},
                "core_swf_jobs": {"config": dict(core)},
            }
        },
        raise_on_error=False,
    )


def _checks(res: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {
        e.event_specific_data.check_name: e.event_specific_data.passed
        for e in res.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
    }


def test_the_sample_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VARCAP_SWF", raising=False)
    db = tmp_path / "w.duckdb"
    res = _materialize(db, tmp_path / "raw")
    assert res.success
    assert all(_checks(res).values()), _checks(res)
    with duckdb.connect(str(db), read_only=True) as con:
        files = con.execute("SELECT source, name, sha256 FROM raw_files WHERE dataset='swf_log'").fetchall()
        assert files == [("sample", "swf/example.swf", sha256_file(SAMPLE))]
        jobs = con.sql("SELECT * FROM core_swf_jobs ORDER BY line").pl()
        assert jobs["job_id"].to_list() == ["1", "2", "3", "5", "6", "8", "9", "10", "11", "12"]
        assert jobs["line"].to_list()[:2] == [22, 23]  # the header's 21 comment lines come first
        j3 = jobs.row(2, named=True)
        assert j3["memory_gb"] is None and j3["requested_s"] == 14400.0 and j3["status"] == 1
        assert con.execute("SELECT count(*) FROM core_swf_rejects").fetchall()[0][0] == 0
        built = con.execute("SELECT dataset, name FROM core_builds WHERE table_name='core_swf_jobs'").fetchall()
        assert built == [("swf_log", "swf/example.swf")]


def test_keep_cancelled_is_the_assets_option(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    assert _materialize(db, tmp_path / "raw", str(SAMPLE), keep_cancelled=True).success
    with duckdb.connect(str(db), read_only=True) as con:
        ids = [r[0] for r in con.execute("SELECT job_id FROM core_swf_jobs WHERE status = 5").fetchall()]
    assert ids == ["7"]  # job 4 was cancelled before it ran (run time 0): dropped all the same


def test_a_users_file_is_stored_immutably_and_its_bad_lines_are_rejects(tmp_path: Path) -> None:
    src = tmp_path / "mine.swf"
    src.write_text(BAD)
    db, cache = tmp_path / "w.duckdb", tmp_path / "raw"
    res = _materialize(db, cache, str(src))
    assert res.success
    assert _checks(res)["within_header_platform"] is False  # job 5 asks for 16 > MaxProcs 8 (a warning)
    digest = sha256_file(src)
    with duckdb.connect(str(db), read_only=True) as con:
        source, path, sha = con.execute(
            "SELECT source, path, sha256 FROM raw_files WHERE dataset='swf_log'"
        ).fetchall()[0]
        rej = con.sql("SELECT line, field, value, reason FROM core_swf_rejects ORDER BY line").pl()
        core_rej = con.execute(
            "SELECT line, reason FROM core_rejects WHERE table_name='core_swf_jobs' ORDER BY line"
        ).fetchall()
        n = con.execute("SELECT count(*) FROM core_swf_jobs").fetchall()[0][0]
    assert (source, sha) == ("local", digest)
    stored = Path(path)
    assert stored == cache / "swf" / digest[:16] / "mine.swf" and stored.read_text() == BAD
    assert not stored.stat().st_mode & stat.S_IWUSR  # read-only
    assert rej["line"].to_list() == [4, 5, 6]
    assert rej["field"].to_list() == ["run_time", "allocated_processors", "line"]
    assert rej["value"].to_list()[1] == "x" and "not a number" in rej["reason"][1]
    assert [r[0] for r in core_rej] == [4, 5, 6] and core_rej[0][1].startswith("run_time: ")
    assert n == 2
    # the user edits the file: a new immutable copy beside the old one, which stays as it was
    src.write_text(BAD.replace("1 0 0 100", "1 0 0 101"))
    assert _materialize(db, cache, str(src)).success
    assert stored.read_text() == BAD and len(list((cache / "swf").iterdir())) == 2


def test_a_failing_check_keeps_the_previous_table(tmp_path: Path) -> None:
    db, cache = tmp_path / "w.duckdb", tmp_path / "raw"
    assert _materialize(db, cache, str(SAMPLE)).success
    dup = tmp_path / "dup.swf"
    dup.write_text(BAD.splitlines()[2] + "\n" + BAD.splitlines()[2] + "\n")  # job 1 twice: key check
    res = _materialize(db, cache, str(dup))
    assert not res.success
    failure = next(e for e in res.all_events if e.event_type_value == "STEP_FAILURE")
    assert "unique_key failed" in failure.event_specific_data.error.message
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM core_swf_jobs").fetchall()[0][0] == 10
        assert con.execute("SELECT DISTINCT source_file FROM core_swf_jobs").fetchall() == [("swf/example.swf",)]


def test_bad_paths_are_one_line(tmp_path: Path) -> None:
    dl = Downloader(tmp_path / "raw", progress=False)
    with pytest.raises(ValueError, match=r"nope\.swf: no such file"):
        register_log(str(tmp_path / "nope.swf"), dl)
    (tmp_path / "jobs.csv").write_text("a,b\n")
    with pytest.raises(ValueError, match=r"jobs\.csv: not an SWF log by its name"):
        register_log(str(tmp_path / "jobs.csv"), dl)
    res = _materialize(tmp_path / "w.duckdb", tmp_path / "raw", str(tmp_path / "nope.swf"))
    assert not res.success


def test_a_url_goes_through_the_download_client(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.add("/logs/site.swf", Route(SAMPLE.read_bytes(), "text/plain"))
    dl = Downloader(tmp_path / "raw", progress=False, sleep=lambda s: None, backoff_s=0.01)
    row = register_log(http_server.base + "/logs/site.swf", dl)
    assert row["source"] == "remote" and row["url"].endswith("/logs/site.swf")
    assert row["sha256"] == sha256_file(SAMPLE) and Path(row["path"]).is_relative_to(tmp_path / "raw")


def _inputs(tmp_path: Path) -> Path:
    db, inputs = tmp_path / "w.duckdb", tmp_path / "inputs"
    inputs.mkdir()
    assert _materialize(db, tmp_path / "raw", str(SAMPLE)).success
    with duckdb.connect(str(db)) as con:
        sha, rows = export_swf(con, inputs)
    assert rows == 10
    (inputs / "versions.json").write_text(json.dumps({"workload_swf.parquet": sha}))
    return inputs


def test_the_warehouse_workload_simulates(tmp_path: Path) -> None:
    from studies import sweep
    from studies.scenarios import Scenario, build_jobs, walk

    inputs = _inputs(tmp_path)
    sc = Scenario("swf", walk(1.0, 0.15), "ff", machines=4, cores=8, horizon_days=1.0)
    jobs = build_jobs(sc, inputs, 4)
    assert jobs.height == 9 and jobs["cores"].max() <= 8  # job 5 (16 processors) spans two machines
    row = sweep.run_scenario(sc, inputs, tmp_path / "runs")
    assert row["metrics"]["jobs"] == 9 and row["inputs_version"] != "none"
    assert sweep.input_files(sc) == ["workload_swf.parquet"]
    again = Scenario("swf-resampled", walk(1.0, 0.15), "ff", machines=4, cores=8, horizon_days=2.0, seed=3)
    a, b = build_jobs(again, inputs, 4), build_jobs(again, inputs, 4)
    assert a.equals(b) and a.height > 9  # a seed's draw, the load of 4 machines over 2 days
    pairs = set(zip(a["duration_s"].to_list(), a["cores"].to_list(), strict=True))
    log = pl.read_parquet(inputs / "workload_swf.parquet")
    assert pairs <= set(zip(log["duration_s"].to_list(), log["cores"].to_list(), strict=True))
    other = build_jobs(Scenario("swf-resampled", walk(1.0, 0.15), machines=4, cores=8, seed=4), inputs, 4)
    assert not other.equals(a)


def test_out_sim_inputs_exports_it(tmp_path: Path) -> None:
    """An older warehouse without core_swf_jobs exports nothing for it (the other inputs still export)."""
    with duckdb.connect(str(tmp_path / "old.duckdb")) as con:
        assert export_swf(con, tmp_path) is None
    inputs = _inputs(tmp_path)
    assert pl.read_parquet(inputs / "workload_swf.parquet").columns == [
        "job_id",
        "submit_s",
        "duration_s",
        "cores",
    ]
