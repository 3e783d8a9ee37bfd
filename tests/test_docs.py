"""One data dictionary: assets/schema.py drives the README tables, the assets' Columns metadata and the DuckDB
comments; the README's Jupyter example gives UTC days on a machine in any time zone."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb

from assets import snapshot
from assets.schema import ALL_TABLES, CORE_GRID_CARBON

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_documents_every_table_and_column() -> None:
    for schema in ALL_TABLES.values():
        assert f"### `{schema.name}`" in README, schema.name
        for col in schema.columns:
            assert f"| `{col.name}` | {col.sql_type} | {col.unit} |" in README, (schema.name, col.name)
        assert schema.markdown() in README, f"{schema.name}: README table differs from assets/schema.py"


def test_every_table_asset_carries_its_column_schema() -> None:
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    tables = [k for k in graph.get_all_asset_keys() if k.to_user_string() in ALL_TABLES]
    assert dg.AssetKey("core_jobs") in tables and dg.AssetKey("out_sim_results") in tables
    for key in tables:
        schema = ALL_TABLES[key.to_user_string()]
        meta = graph.get(key).metadata
        cols = meta["dagster/column_schema"].columns
        assert [c.name for c in cols] == schema.column_names, key
        assert [c.description for c in cols] == list(schema.column_docs().values())
        assert [c.constraints.nullable for c in cols] == [c.nullable for c in schema.columns]
        assert meta["dagster/table_name"] == f"warehouse.main.{schema.name}"


def test_publish_writes_table_and_column_comments(tmp_path: Path) -> None:
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        con.execute(CORE_GRID_CARBON.ddl())
        con.execute("create table scratch (x int)")  # not in the dictionary: left alone
        snapshot.publish(con)
        got = dict(
            con.execute(
                "select column_name, comment from duckdb_columns() where table_name = 'core_grid_carbon'"
            ).fetchall()
        )
        table = con.execute("select comment from duckdb_tables() where table_name = 'core_grid_carbon'")
        assert table.fetchone()[0] == CORE_GRID_CARBON.doc
        assert got == CORE_GRID_CARBON.column_docs()
        assert got["gco2_per_kwh"] == "lifecycle carbon intensity [gCO2eq/kWh]"
        assert snapshot.comment(con) == 0  # already in line: nothing issued


def _readme_jupyter_block() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    return next(b for b in blocks if "from analysis.warehouse import connect" in b)


def test_readme_jupyter_example_is_time_zone_proof(tmp_path: Path) -> None:
    """Hourly CAISO rows whose UTC and Los Angeles days differ: the example groups by UTC day."""
    db = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(CORE_GRID_CARBON.ddl())
        con.execute(
            """insert into core_grid_carbon
               select 'CAISO', 'US-CAL-CISO', TIMESTAMPTZ '2024-04-01 00:00:00+00' + to_hours(h::BIGINT),
                      case when h < 24 then 100.0 else 300.0 end, null, null, null, null,
                      'electricitymaps', 'lca', false, 'f.csv'
               from range(48) t(h)"""
        )
        snapshot.publish(con)
    code = _readme_jupyter_block().rstrip().rsplit("\n", 3)
    code = "\n".join(code[:-3]) + "\nprint(" + "\n".join(code[-3:]).strip() + ".rows())"
    env = {**os.environ, "TZ": "America/Los_Angeles", "VARCAP_WAREHOUSE": str(db)}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout
    # two UTC days of exactly 100 and 300 (a Los Angeles grouping would mix them over three days)
    assert out.count("CAISO") == 2 and "100.0" in out and "300.0" in out, out
