"""The grid source registry (``assets/grid/``): one module per feed gives its raw dataset, its rows in the
grid tables, the tables' dependencies, its samples' origins and its checks, with nothing else to edit."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from assets import grid
from assets.grid.base import GridSource
from assets.normalize.base import BadFileError, RawFile, empty_rejects
from assets.schema import CORE_GRID_CARBON
from assets.sources import DATASETS, Dataset
from sim import paths


def _sample_files(key: str) -> list[RawFile]:
    ds = DATASETS[key]
    return [RawFile(paths.samples_dir() / f, f, ds.has_header, ds.columns) for f in ds.sample_files]


def test_every_grid_source_is_a_raw_dataset_and_every_grid_table_has_a_source() -> None:
    assert set(grid.GRID_SOURCES) == {"eia930_fuelmix", "electricitymaps_hourly", "power_prices", "sgip_moer",
                                      "watttime_moer"}  # fmt: skip
    for key, src in grid.GRID_SOURCES.items():
        assert DATASETS[key] is src.dataset
    for table in grid.GRID_TABLES:
        assert grid.sources_of(table), table
    assert [s.key for s in grid.sources_of("core_grid_carbon")] == ["eia930_fuelmix", "electricitymaps_hourly"]


def test_grid_assets_depend_on_their_sources_raw_assets_only() -> None:
    from assets.core import core_assets, core_checks

    by_key = {a.key.to_user_string(): a for a in core_assets}
    for table in grid.GRID_TABLES:
        deps = {k.to_user_string() for k in by_key[table].dependency_keys}
        assert deps == {f"raw_{s.key}" for s in grid.sources_of(table)}, table
    names = {k.name for c in core_checks for k in c.check_keys}
    assert {c.name for s in grid.GRID_SOURCES.values() for c in s.checks} <= names
    assert "eia_matches_published" in names


def test_sample_origins_name_the_declared_samples() -> None:
    """What ``pipelines/make_samples.py`` writes for a source is what its dataset registers."""
    for src in grid.GRID_SOURCES.values():
        if not src.sample_origins:
            continue
        stems = {f.rsplit(".", 1)[0].removesuffix(".csv") for f in src.dataset.sample_files}
        assert set(src.sample_origins.values()) == stems, src.key
        for f in src.dataset.sample_files:
            assert (paths.samples_dir() / f).is_file(), f


def test_carbon_from_the_samples_holds_both_sources_and_checks_the_fuel_mix_of_the_same_files() -> None:
    files = {s.key: _sample_files(s.key)[:2] for s in grid.sources_of("core_grid_carbon")}
    b = grid.build_table("core_grid_carbon", files, {"factor_set": "dcrl"})
    assert b.rows.columns == CORE_GRID_CARBON.column_names
    assert set(b.rows["source"].unique()) == {"eia930", "electricitymaps"}
    assert set(b.rows.filter(pl.col("source") == "eia930")["factor_set"].unique()) == {"dcrl"}
    mix, datasets = b.siblings["core_grid_fuel_mix"]
    assert datasets == ("eia930_fuelmix",) and mix.height > 0
    assert b.datasets == ("eia930_fuelmix", "electricitymaps_hourly")
    with pytest.raises(BadFileError, match="unknown factor_set 'nope'; choose from"):
        grid.build_table("core_grid_carbon", files, {"factor_set": "nope"})


def test_a_new_feed_is_one_registry_entry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A toy hourly-carbon source (what one more module would declare) joins ``core_grid_carbon``: its rows
    and rejects, labelled for the table, next to the others'."""

    def normalize(files, options):
        rows = pl.DataFrame(
            {
                "grid": ["TOY"],
                "zone": ["TOY"],
                "ts_utc": pl.Series([0], dtype=pl.Datetime("us", "UTC")),
                "gco2_per_kwh": [100.0],
                "gco2_per_kwh_direct": [None],
                "reference_gco2_per_kwh": [None],
                "renewable_pct": [None],
                "low_carbon_pct": [None],
                "source": ["toy"],
                "factor_set": ["toy"],
                "estimated": [False],
                "source_file": [files[0].name],
            }
        )
        rej = empty_rejects().vstack(
            pl.DataFrame(
                {"table_name": ["x"], "source_file": [files[0].name], "line": [3], "reason": ["r"], "raw_row": ["?"]}
            )
        )
        return {"core_grid_carbon": (rows, rej)}

    toy = GridSource(Dataset("toy_carbon", "toy", ()), ("core_grid_carbon",), normalize)
    emaps = grid.GRID_SOURCES["electricitymaps_hourly"]
    monkeypatch.setattr(grid, "GRID_SOURCES", {"electricitymaps_hourly": emaps, "toy_carbon": toy})
    files = {"electricitymaps_hourly": _sample_files("electricitymaps_hourly")[:1]}
    files["toy_carbon"] = [RawFile(tmp_path / "t.csv", "toy/t.csv")]
    b = grid.build_table("core_grid_carbon", files)
    assert b.rows.filter(pl.col("source") == "toy")["gco2_per_kwh"].to_list() == [100.0]
    assert b.rejects.filter(pl.col("source_file") == "toy/t.csv")["table_name"].to_list() == ["core_grid_carbon"]
    assert b.datasets == ("electricitymaps_hourly", "toy_carbon")
    assert set(b.rows["source"].unique()) == {"electricitymaps", "toy"}
    with pytest.raises(KeyError, match="toy_carbon"):
        grid.build_table("core_grid_carbon", {k: v for k, v in files.items() if k != "toy_carbon"})


def test_eia_check_passes_on_the_samples(tmp_path: Path) -> None:
    """The EIA-930 module's own check, run as the asset check ``eia_matches_published`` on tables built
    from the samples: dc-rl's factors reproduce the published ``avg_CI``."""
    import duckdb

    from assets.grid.eia930 import SOURCE

    b = grid.build_table("core_grid_fuel_mix", {"eia930_fuelmix": _sample_files("eia930_fuelmix")})
    carbon, _ = b.siblings["core_grid_carbon"]
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    mix = b.rows  # noqa: F841 - read by the SQL below
    con.execute("CREATE TABLE core_grid_fuel_mix AS SELECT * FROM mix")
    con.execute("CREATE TABLE core_grid_carbon AS SELECT * FROM carbon")
    (check,) = SOURCE.checks
    passed, text, meta = check.run(con)
    assert passed, text
    assert meta["hours_compared"] > 1000
    con.execute("UPDATE core_grid_fuel_mix SET mwh = mwh * 3 WHERE fuel = 'COL'")  # a wrong mix is caught
    passed, text, _ = check.run(con)
    assert not passed, text
