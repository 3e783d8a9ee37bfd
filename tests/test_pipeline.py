"""Dagster materialize() over raw -> core on the embedded samples, and bad input per core table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from assets.core import core_assets, core_checks
from assets.raw import raw_assets
from assets.resources import DownloaderResource
from assets.spot import spot_assets
from pipelines.definitions import defs

CORE_ASSET = {a.key.to_user_string(): a for a in core_assets}


def resources(db: Path, cache: Path) -> dict[str, object]:
    return {
        "duckdb": DuckDBResource(database=str(db)),
        "downloader": DownloaderResource(cache_dir=str(cache)),
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("wh")
    db = d / "warehouse.duckdb"
    res = dg.materialize(
        [*raw_assets, *core_assets, *spot_assets, *core_checks], resources=resources(db, d / "raw")
    )
    assert res.success
    evals = [e.event_specific_data for e in res.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    failed = [(e.asset_key.to_user_string(), e.check_name) for e in evals if not e.passed]
    # only the (warning) gap check on carbon may fail: EIA hours with no fuel value are missing hours
    assert failed == [("core_grid_carbon", "hourly_gaps")], failed
    assert len(evals) >= 15
    return db


def test_definitions_load() -> None:
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert {"raw_gaia_traces", "core_jobs", "core_grid_carbon", "core_power_price"} <= keys
    assert defs.resolve_job_def("ingest") is not None


def test_core_tables_on_samples(built: Path) -> None:
    con = duckdb.connect(str(built), read_only=True)
    per = dict(con.execute("select workload, count(*) from core_jobs group by 1").fetchall())
    assert set(per) == {"azure", "borg2011", "pai", "mustang"}
    assert per["azure"] == 99_988 + 500 and per["pai"] == 99_998 and per["mustang"] == 100_000
    assert per["borg2011"] > 300_000
    span = con.execute("select max(submit_s) from core_jobs where workload='azure'").fetchone()[0]
    assert span < 30 * 86400
    april = dict(
        con.execute(
            "select grid, count(*) from core_grid_carbon where source='electricitymaps' "
            "and ts_utc >= '2024-04-01' and ts_utc < '2024-05-01' group by 1"
        ).fetchall()
    )
    assert april["CAISO"] == 720 and april["ERCOT"] == 720
    miso = con.execute(
        "select count(*) from core_grid_carbon where grid='MISO' and year(ts_utc)=2022"
    ).fetchone()[0]
    assert miso > 8700
    assert con.execute("select count(distinct fuel) from core_grid_fuel_mix").fetchone()[0] == 8
    assert con.execute("select count(*) from core_power_price").fetchone()[0] == 8784 + 8808
    files = con.execute("select count(*), count(distinct sha256) from raw_files").fetchone()
    assert files[0] == files[1] == 39  # 30 + the 3 spot samples + the 6 SGIP sample files
    # every core table records the raw files it was built from; no staging table survives a build
    built = dict(con.execute("select table_name, count(*) from core_builds group by 1").fetchall())
    assert built == {
        "core_jobs": 3 + 1 + 5,
        "core_grid_carbon": 12 + 5,
        "core_grid_fuel_mix": 5,
        "core_power_price": 2,
        "core_grid_marginal": 1,
        "core_spot_availability": 3,
    }
    tables = [r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()]
    assert not [t for t in tables if t.endswith("__staging")]


def _table_digest(db: Path, table: str) -> tuple[int, object]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(f"select count(*), sum(hash(columns(*))) from {table}").fetchone()
    finally:
        con.close()


BAD_FILES = {
    "core_jobs": ("gaia_traces", "gaia/azure-100k.csv", "<!DOCTYPE html><html>sign in</html>\n"),
    "core_grid_carbon": (
        "electricitymaps_hourly",
        "electricitymaps/US-CAL-CISO_2024_hourly.csv",
        "a,b\n1,2\n",
    ),
    "core_grid_fuel_mix": (
        "eia930_fuelmix",
        "eia930/EIA930_CISO_2022_hourly_fuelmix_avgCI.csv",
        "timestamp\nx\n",
    ),
    "core_power_price": (
        "power_prices",
        "prices/ERCOT_HB_HUBAVG_DAM_SPP_2024_hourly.csv",
        "Datetime,Price (USD/MWh)\nx,y\n",
    ),
    "core_grid_marginal": ("watttime_moer", "watttime/w.csv", "only_one_column\n1\n"),
}


@pytest.mark.parametrize("table", sorted(BAD_FILES))
def test_wholly_bad_file_keeps_previous_table(built: Path, tmp_path: Path, table: str) -> None:
    db = tmp_path / "wh.duckdb"
    shutil.copyfile(built, db)
    before = _table_digest(db, table)
    dataset, name, body = BAD_FILES[table]
    bad = tmp_path / Path(name).name
    bad.write_text(body)
    con = duckdb.connect(str(db))
    con.execute(
        "update raw_files set path = ?, name = ? where dataset = ? and name = (select min(name) from raw_files where dataset = ?)",
        [str(bad), name, dataset, dataset],
    )
    con.close()
    res = dg.materialize([CORE_ASSET[table]], resources=resources(db, tmp_path / "raw"), raise_on_error=False)
    assert not res.success
    failure = next(e for e in res.all_events if e.event_type_value == "STEP_FAILURE")
    assert name in str(failure.event_specific_data.error)  # the error names the file
    assert _table_digest(db, table) == before  # previous good table untouched


def test_partly_bad_file_loses_nothing(built: Path, tmp_path: Path) -> None:
    db = tmp_path / "wh.duckdb"
    shutil.copyfile(built, db)
    src = tmp_path / "pai-100k.csv"
    src.write_text("arrival_time,length,cpus\n0.5,1.0,2\nbroken,1.0,2\n1.0,2.0,4\n")
    con = duckdb.connect(str(db))
    con.execute(
        "update raw_files set path = ?, name = 'gaia/pai-100k.csv' where name = 'gaia/pai-100k.parquet'",
        [str(src)],
    )
    con.close()
    res = dg.materialize([CORE_ASSET["core_jobs"]], resources=resources(db, tmp_path / "raw"))
    assert res.success
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("select count(*) from core_jobs where workload='pai'").fetchone()[0] == 2
    rej = con.execute(
        "select source_file, line, reason, raw_row from core_rejects where source_file like '%pai%'"
    ).fetchall()
    assert rej == [("gaia/pai-100k.csv", 3, "unparseable arrival_time: 'broken'", "broken,1.0,2")]
    # other workloads are intact
    assert con.execute("select count(*) from core_jobs where workload='mustang'").fetchone()[0] == 100_000


def test_remote_mode_downloads_through_client(tmp_path: Path, http_server, monkeypatch) -> None:
    """raw_gaia_traces in remote mode fetches from a (local) URL into the immutable cache."""
    from tests.httpserver import Route

    body = b"arrival_time,length,cpus\n0.0,1.0,2\n2.0,0.5,4\n"
    http_server.add("/gaia/azure-100k.csv", Route(body, "text/csv"))
    db = tmp_path / "wh.duckdb"
    raw = next(a for a in raw_assets if a.key.to_user_string() == "raw_gaia_traces")
    cfg = {
        "ops": {
            "raw_gaia_traces": {
                "config": {
                    "source": "remote",
                    "params_json": json.dumps(
                        {"base_url": f"{http_server.base}/gaia", "traces": ["azure-100k"]}
                    ),
                }
            }
        }
    }
    res = dg.materialize([raw], resources=resources(db, tmp_path / "raw"), run_config=cfg)
    assert res.success
    cached = tmp_path / "raw" / "gaia" / "azure-100k.csv"
    assert cached.read_bytes() == body
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("select source, url like 'http://127.0.0.1%' from raw_files").fetchall() == [
        ("remote", True)
    ]


def test_remote_eia_without_key_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("EIA_API_KEY", raising=False)
    raw = next(a for a in raw_assets if a.key.to_user_string() == "raw_eia930_fuelmix")
    cfg = {"ops": {"raw_eia930_fuelmix": {"config": {"source": "remote"}}}}
    res = dg.materialize(
        [raw],
        resources=resources(tmp_path / "w.duckdb", tmp_path / "raw"),
        run_config=cfg,
        raise_on_error=False,
    )
    assert not res.success
    failure = next(e for e in res.all_events if e.event_type_value == "STEP_FAILURE")
    assert "EIA_API_KEY" in str(failure.event_specific_data.error)
