"""As-of forecasts: no method but the oracle reads an hour that had not ended at its issue;
the deferral rule; the core_grid_forecast asset on the samples."""

from __future__ import annotations

import dagster as dg
import duckdb
import numpy as np
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource

from sim.forecast import METHODS, best_starts, forecast_matrix, horizon_errors
from sim.paths import samples_dir


def _caiso() -> np.ndarray:
    df = pl.read_parquet(samples_dir() / "electricitymaps/US-CAL-CISO_2024_hourly.parquet")
    return df["Carbon Intensity gCO₂eq/kWh (LCA)"].cast(pl.Float64).to_numpy()[: 24 * 40]


HONEST = [m for m in METHODS if m != "oracle"]


@pytest.mark.parametrize("method", HONEST)
def test_every_forecast_is_computable_from_hours_ended_by_its_issue(method: str) -> None:
    y = _caiso()
    issues = [24 * 30 + 7, 24 * 36 + 13] if method == "sarimax" else [24 * 30, 24 * 30 + 7, 24 * 36 + 13]
    kw = {"refit_every_h": 24, "window_h": 7 * 24}  # daily refits: the refit at the issue's day start
    for i in issues:
        want = forecast_matrix(y, [i], method, **kw)
        assert np.all(np.isfinite(want))
        for leak in (i, i + 5, i + 23):  # the hour starting at the issue, and later ones
            z = y.copy()
            z[leak] *= 3.0
            got = forecast_matrix(z, [i], method, **kw)
            assert np.array_equal(got, want), (method, i, leak)
        z = y.copy()
        z[i:] = 0.0  # the whole future
        assert np.array_equal(forecast_matrix(z, [i], method, **kw), want)


def test_the_perturbation_is_visible_to_a_method_that_reads_it() -> None:
    """The as-of test bites: the oracle (and the last known hour, for persistence) do see it."""
    y = _caiso()
    i = 24 * 30
    z = y.copy()
    z[i + 5] *= 3.0
    assert not np.array_equal(forecast_matrix(z, [i], "oracle"), forecast_matrix(y, [i], "oracle"))
    z = y.copy()
    z[i - 24] *= 3.0  # yesterday's hour, known at the issue
    assert not np.array_equal(forecast_matrix(z, [i], "persist24"), forecast_matrix(y, [i], "persist24"))


def test_forecast_values_and_errors() -> None:
    y = np.arange(24 * 10, dtype=float)
    f = forecast_matrix(y, [24 * 8], "persist24")
    assert f[0, 0] == y[24 * 7] and f[0, 23] == y[24 * 8 - 1]
    p = forecast_matrix(y, [24 * 8], "profile7d")
    assert p[0, 0] == pytest.approx(np.mean([y[24 * 8 - 24 * d] for d in range(1, 8)]))
    e = horizon_errors(forecast_matrix(y, [24 * 8], "oracle"), y, [24 * 8])
    assert np.all(e["mae"] == 0) and e["n"].sum() == 24
    e = horizon_errors(f, y, [24 * 8])
    assert np.allclose(e["mae"], 24.0)
    with pytest.raises(ValueError, match="unknown forecast method"):
        forecast_matrix(y, [0], "crystal-ball")


def test_best_starts_picks_the_lowest_forecast_within_the_slack() -> None:
    y = np.array([5.0, 4.0, 1.0, 3.0, 0.5] + [9.0] * 40)
    f = forecast_matrix(y, np.arange(len(y)), "oracle")
    s = np.array([0.0, 0.0, 1800.0, 0.0])
    d = np.array([3600.0, 3600.0, 3600.0, 7200.0])
    # slack 3 for a 1-h job: starts in [0, 2 h] -> hour 2 (value 1); slack 1: no choice
    assert best_starts(s[:1], d[:1], 3.0, f).tolist() == [7200.0]
    assert best_starts(s[:1], d[:1], 1.0, f).tolist() == [0.0]
    # a job submitted mid-hour may start at its submit or a later hour boundary, never before the submit
    # (starts in [0.5 h, 1.5 h]: the submit (mean 4.5) or hour 1 (4.0))
    assert best_starts(s[2:3], d[2:3], 2.0, f).tolist() == [3600.0]
    # 2-h job, slack 2: latest start 2 h; means 4.5, 2.5, 2.0 -> hour 2
    assert best_starts(s[3:], d[3:], 2.0, f).tolist() == [7200.0]
    ends = best_starts(s, d, 1.5, f) + d
    assert np.all(ends <= s + 1.5 * d + 1e-9)
    with pytest.raises(ValueError, match="slack"):
        best_starts(s, d, 0.5, f)


def test_core_grid_forecast_materializes(tmp_path) -> None:
    from assets.core import core_assets
    from assets.forecast import forecast_assets, forecast_checks
    from assets.raw import raw_assets
    from assets.resources import DownloaderResource

    db = tmp_path / "w.duckdb"
    cfg = {"series": ["GB:electricitymaps:2024-04"], "history_days": 14, "sarimax_refit_every_h": 24 * 30}
    res = dg.materialize(
        [*raw_assets, *core_assets, *forecast_assets, *forecast_checks],
        resources={
            "duckdb": DuckDBResource(database=str(db)),
            "downloader": DownloaderResource(cache_dir=str(tmp_path / "raw")),
        },
        run_config={"ops": {"core_grid_forecast": {"config": cfg}}},
    )
    assert res.success
    evals = [e.event_specific_data for e in res.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    mine = [e for e in evals if e.asset_key.to_user_string() == "core_grid_forecast"]
    assert mine and all(e.passed for e in mine)
    con = duckdb.connect(str(db), read_only=True)
    got = dict(con.execute("select method, count(*) from core_grid_forecast group by 1").fetchall())
    assert set(got) == {*METHODS, "issued"}
    assert got["persist24"] == sum(min(24, 720 - k) for k in range(720))  # April: 720 issues
    assert got["issued"] == 115932
    # the forecast of the hour starting at the issue is yesterday's value of that hour, from the warehouse
    a, b = con.execute(
        "select f.value, c.gco2_per_kwh from core_grid_forecast f join core_grid_carbon c "
        "on c.grid = 'GB' and c.ts_utc = f.target_ts - interval 1 day where f.method = 'persist24' "
        "and f.issued_at = timestamptz '2024-04-10 12:00:00+00' and f.horizon_h = 1"
    ).fetchall()[0]
    assert a == b
    meta = res.asset_materializations_for_node("core_grid_forecast")[0].metadata
    assert "sarimax" in meta["errors_pct"].value and "issued_errors" in meta


def test_sarimax_forecasts_are_kept_on_disk_and_reread(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second process's identical forecast is read from the cache, not fitted again; a damaged file is
    fitted again and replaced; another series is another key."""
    import sim.forecast as fc

    monkeypatch.setenv("VARCAP_CACHE", str(tmp_path))
    y, issues, kw = _caiso(), [24 * 30 + 7, 24 * 36 + 13], {"refit_every_h": 24, "window_h": 7 * 24}
    first = forecast_matrix(y, issues, "sarimax", **kw)
    files = list((tmp_path / "forecast").glob("sarimax-*.npy"))
    assert len(files) == 1
    fc._SARIMAX_CACHE.clear()  # as a new process would start

    def no_fit(*a, **k):
        raise AssertionError("fitted again")

    monkeypatch.setattr(fc, "_sarimax", no_fit)
    assert np.array_equal(forecast_matrix(y, issues, "sarimax", **kw), first, equal_nan=True)
    monkeypatch.undo()
    monkeypatch.setenv("VARCAP_CACHE", str(tmp_path))
    fc._SARIMAX_CACHE.clear()
    files[0].write_bytes(b"not a numpy file")
    assert np.array_equal(forecast_matrix(y, issues, "sarimax", **kw), first, equal_nan=True)
    assert np.array_equal(np.load(files[0]), first, equal_nan=True)  # replaced by the refit
    z = y.copy()
    z[0] += 1.0
    assert fc.sarimax_key(z, np.asarray(issues), 24, 7 * 24, 24) != fc.sarimax_key(
        y, np.asarray(issues), 24, 7 * 24, 24
    )
