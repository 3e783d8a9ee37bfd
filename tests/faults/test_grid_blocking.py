"""Grid tables: a file one table refuses feeds no other table, negative or implausible generation and
out-of-range timestamps are blocking, and `varcap run` exits non-zero when a blocking check failed
."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

from assets.resources import DownloaderResource
from tests.faults.conftest import CORE, failure_text, materialize, register, snapshot
from tests.faults.test_core_tables import eia, emaps, grid_warehouse

REPO = Path(__file__).resolve().parents[2]
GRID = ("core_grid_carbon", "core_grid_fuel_mix")


def materialize_both(db: Path) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [CORE[t] for t in GRID],
        resources={
            "duckdb": DuckDBResource(database=str(db)),
            "downloader": DownloaderResource(cache_dir=str(db.parent / "raw")),
        },
        raise_on_error=False,
    )


@pytest.mark.parametrize(
    ("bad_row", "fuel_mix_rule"),
    [
        # 2 TWh of gas in one hour: the fuel mix refuses it; the carbon table used to take the hour
        # (387 -> 490 gCO2/kWh) from the very file the fuel mix had refused
        ("2022-01-02 00:00:00+00:00,100,0,10,0,2000000,400,100,5,400\n", "mwh_plausible"),
        # negative gas generation: passed both tables with exit 0
        ("2022-01-02 00:00:00+00:00,100,0,10,0,-5000,400,100,5,400\n", "generation_nonnegative"),
    ],
)
def test_a_refused_eia_file_feeds_neither_table(wh: Path, write, bad_row: str, fuel_mix_rule: str) -> None:
    grid_warehouse(wh, write, emaps(), eia())
    assert materialize_both(wh).success
    before = {t: snapshot(wh, t) for t in GRID}
    grid_warehouse(wh, write, emaps(), eia(bad_row))
    res = materialize_both(wh)
    assert not res.success
    fuel = materialize(wh, "core_grid_fuel_mix")
    assert fuel_mix_rule in failure_text(fuel) and "previous table kept" in failure_text(fuel)
    carbon = materialize(wh, "core_grid_carbon")
    msg = failure_text(carbon)
    assert "same_input_as_core_grid_fuel_mix failed" in msg and fuel_mix_rule in msg, msg
    assert "eia930/EIA930_MISO_2022_hourly.csv" in msg, msg
    assert {t: snapshot(wh, t) for t in GRID} == before


def _night(sun: str, ng: str = "500") -> str:
    """Two night hours with solar at ``sun`` MWh (EIA-930 reports station use as negative net generation)."""
    return "".join(f"2022-01-02 0{h}:00:00+00:00,100,{sun},10,0,{ng},400,100,5,400\n" for h in (0, 1))


@pytest.mark.parametrize("sun", ["-0.4", "-12", "-100"])
def test_slightly_negative_night_solar_is_kept_as_reported(wh: Path, write, sun: str) -> None:
    """Remote EIA-930 data reports solar slightly below zero at night; the blocking check used to refuse
    the whole file for it. Down to the tolerance the value is kept (it is net generation) and the
    intensity counts it as 0."""
    grid_warehouse(wh, write, emaps(), eia(_night(sun)))
    assert materialize_both(wh).success
    rows, rejects, _ = snapshot(wh, "core_grid_fuel_mix")
    night = sorted(r[3] for r in rows if r[2] == "SUN" and str(r[1]).startswith("2022-01-02"))
    assert night == [float(sun)] * 2 and rejects == []
    # the same hour with solar at 0: the same intensity
    carbon = {str(r[2]): r[3] for r in snapshot(wh, "core_grid_carbon")[0] if r[8] == "eia930"}
    grid_warehouse(wh, write, emaps(), eia(_night("0")))
    assert materialize_both(wh).success
    assert carbon == {str(r[2]): r[3] for r in snapshot(wh, "core_grid_carbon")[0] if r[8] == "eia930"}


@pytest.mark.parametrize(("sun", "ng"), [("-100.5", "500"), ("-3000", "500"), ("0", "-101")])
def test_negative_generation_beyond_the_tolerance_is_blocking(wh: Path, write, sun: str, ng: str) -> None:
    grid_warehouse(wh, write, emaps(), eia())
    assert materialize_both(wh).success
    before = {t: snapshot(wh, t) for t in GRID}
    grid_warehouse(wh, write, emaps(), eia(_night(sun, ng)))
    res = materialize(wh, "core_grid_fuel_mix")
    assert not res.success
    msg = failure_text(res)
    assert "generation_nonnegative (mwh < -100 AND fuel NOT IN ('WAT', 'OTH')): 2 rows" in msg, msg
    assert not materialize(wh, "core_grid_carbon").success
    assert {t: snapshot(wh, t) for t in GRID} == before


@pytest.mark.parametrize("stamp", ["2099-01-01 00:00:00", "1970-01-01 00:00:00"])
def test_out_of_range_timestamps_are_blocking(wh: Path, write, stamp: str) -> None:
    grid_warehouse(wh, write, emaps(), eia())
    assert materialize(wh, "core_grid_carbon").success
    before = snapshot(wh, "core_grid_carbon")
    grid_warehouse(wh, write, emaps(extra=f"{stamp},US-CAL-CISO,300,200,30,60,false\n"), eia())
    res = materialize(wh, "core_grid_carbon")
    assert not res.success
    msg = failure_text(res)
    assert "ts_in_range" in msg and "US-CAL-CISO_2024_hourly.csv" in msg, msg
    assert snapshot(wh, "core_grid_carbon") == before
    # the same stamp in the EIA file: both tables refuse it
    grid_warehouse(wh, write, emaps(), eia(f"{stamp}+00:00,100,0,10,0,500,400,100,5,400\n"))
    for t in GRID:
        assert "ts_in_range" in failure_text(materialize(wh, t))


def test_future_price_hour_is_blocking(wh: Path, write) -> None:
    name = "prices/ERCOT_HB_HUBAVG_DAM_SPP_2024_hourly.csv"
    text = "Datetime,Price (USD/MWh)\n2024-01-01 00:00:00,1\n2099-01-01 01:00:00,2\n2024-01-01 02:00:00,3\n"
    register(wh, "power_prices", [(write("p.csv", text), name, True)])
    res = materialize(wh, "core_power_price")
    assert not res.success and "ts_in_range" in failure_text(res)


def test_varcap_run_exits_nonzero_when_a_blocking_check_fails(tmp_path: Path, write) -> None:
    """`varcap run --groups core` over a negative-generation EIA file used to exit 0."""
    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    wh = home / "data" / "warehouse.duckdb"
    grid_warehouse(wh, write, emaps(), eia("2022-01-02 00:00:00+00:00,100,0,10,0,-5000,400,100,5,400\n"))
    env = {
        **os.environ,
        "VARCAP_HOME": str(home),
        "DAGSTER_HOME": str(home / ".dagster_home"),
        "PYTHONPATH": str(REPO),
    }
    env.pop("VARCAP_WAREHOUSE", None)
    cmd = [sys.executable, "-m", "pipelines.cli", "run", "--groups", "core"]
    p = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode != 0, p.stdout[-2000:]
    out = p.stdout + p.stderr
    assert "core_grid_fuel_mix: " in out and "generation_nonnegative" in out, out[-3000:]
    assert "same_input_as_core_grid_fuel_mix" in out, out[-3000:]
