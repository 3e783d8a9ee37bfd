"""One gap rule turns a time series into hourly values: ``sim.capacity.trace.to_hourly``, used by the scenario
path (a grid month in ``data/sim/inputs``) and the capacity assets (``core_grid_carbon``) alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from assets.capacity import _hourly, _series_sql
from assets.schema import CORE_GRID_CARBON
from sim.capacity.trace import HOUR, CapacitySpec, month_bounds, to_hourly
from studies.scenarios import Scenario, build_capacity
from studies.signals import scenario_signal

START = datetime(2022, 6, 1, tzinfo=UTC)


def _ts(hours: list[float]) -> pl.Series:
    return pl.Series("ts", [START + timedelta(hours=h) for h in hours], pl.Datetime("us", "UTC"))


def test_gap_rule_floor_mean_forward_then_backward() -> None:
    end = START + timedelta(hours=8)
    # hour 0 and 1 missing (backward fill), 2: two values (mean), 3 and 4 missing (forward fill), 5: a
    # value at :30 (floored), 6: null (no value: forward fill), 7: present; one value outside the window
    ts = _ts([2.0, 2.5, 5.5, 6.0, 7.0, 9.0])
    v = pl.Series("v", [10.0, 20.0, 40.0, None, 70.0, 99.0])
    got = to_hourly(ts, v, START, end)
    np.testing.assert_array_equal(got, [15.0, 15.0, 15.0, 15.0, 15.0, 40.0, 40.0, 70.0])
    # order of the rows does not matter; a naive timestamp is UTC; another zone is converted
    np.testing.assert_array_equal(to_hourly(ts.reverse(), v.reverse(), START, end), got)
    np.testing.assert_array_equal(to_hourly(ts.dt.replace_time_zone(None), v, START, end), got)
    np.testing.assert_array_equal(to_hourly(ts.dt.convert_time_zone("America/Chicago"), v, START, end), got)
    with pytest.raises(ValueError, match="no values"):
        to_hourly(ts, v, START + timedelta(hours=10), START + timedelta(hours=12))


def test_month_bounds() -> None:
    assert month_bounds("2022-06") == (START, datetime(2022, 7, 1, tzinfo=UTC))
    assert month_bounds("2024-12")[1] == datetime(2025, 1, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match="expected YYYY-MM"):
        month_bounds("June")


@pytest.fixture
def gappy(tmp_path: Path) -> tuple[duckdb.DuckDBPyConnection, Path, np.ndarray]:
    """A MISO month in core_grid_carbon with a missing day, a missing first hour and lone gaps, and the
    scenario input exported from it as ``out_sim_inputs`` does (the rows in order, numbered by ``hour``)."""
    rng = np.random.default_rng(3)
    hours = [h for h in range(720) if h != 0 and not 200 <= h < 224 and h % 97 != 5]
    ci = rng.uniform(200, 700, len(hours))
    con = duckdb.connect()
    con.execute(CORE_GRID_CARBON.ddl())
    con.executemany(
        "insert into core_grid_carbon (grid, zone, ts_utc, gco2_per_kwh, source, factor_set, estimated, "
        "source_file) values ('MISO', 'MISO', ?, ?, 'eia930', 'lca', false, 'f.csv')",
        [(START + timedelta(hours=h), float(c)) for h, c in zip(hours, ci, strict=True)],
    )
    rows = con.sql(
        "SELECT ts_utc, gco2_per_kwh FROM core_grid_carbon WHERE grid = 'MISO' AND source = 'eia930' "
        "AND strftime(ts_utc AT TIME ZONE 'UTC', '%Y-%m') = '2022-06' ORDER BY ts_utc"
    ).pl()
    rows.with_columns(
        pl.lit("MISO:eia930:2022-06").alias("series"), pl.int_range(pl.len()).alias("hour")
    ).select("series", "hour", "ts_utc", "gco2_per_kwh").write_parquet(tmp_path / "grid_carbon.parquet")
    expected = np.empty(720)
    known = dict(zip(hours, ci, strict=True))
    last = known[hours[0]]
    for h in range(720):
        last = known.get(h, last)
        expected[h] = last
    return con, tmp_path, expected


def test_scenario_path_and_capacity_assets_give_the_same_hours(gappy) -> None:
    con, inputs, expected = gappy
    start, end = month_bounds("2022-06")
    sql = _series_sql("core_grid_carbon", "gco2_per_kwh", ["grid", "source"])
    assets_side = _hourly(con, sql, ["MISO", "eia930", start, end], start, end, "core_grid_carbon MISO")
    spec = CapacitySpec("carbon_budget", {"grid": "MISO", "signal": "eia930:2022-06"})
    scenario_side = scenario_signal(spec, inputs)
    assert len(assets_side) == len(scenario_side) == 720
    np.testing.assert_array_equal(assets_side, expected)
    np.testing.assert_array_equal(scenario_side, expected)
    # the rows in order (the rule the scenario path had) would shift every hour after the first gap
    rows = pl.read_parquet(inputs / "grid_carbon.parquet").sort("hour")["gco2_per_kwh"].to_numpy()
    assert len(rows) < 720 and not np.array_equal(np.resize(rows, 720), expected)
    # and so the traces agree: a scenario's carbon budget is the capacity asset's trace of that month
    sc = Scenario("azure", spec.to_dict(), horizon_days=30.0)
    from_scenario = build_capacity(sc, inputs, 100)
    from_assets = CapacitySpec("carbon_budget", {"mean": 0.7, "floor": 0.0}).build(
        100, len(assets_side) * HOUR, assets_side, "MISO"
    )
    np.testing.assert_array_equal(from_scenario.machines_alive, from_assets.machines_alive)
    np.testing.assert_array_equal(from_scenario.time_s, from_assets.time_s)
