"""A chapter whose notebook fails reaches the user as one line: a missing warehouse table is named with
the command that makes it, the cell's traceback stays in the run's metadata (and Dagster's console log
only with ``--debug``)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import nbformat
import pytest

from assets.reports import CellFailed, cell_failure_line, execute_notebook


def _notebook(path: Path, source: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("profile = 'quick'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(source),
    ]
    nbformat.write(nb, path)
    return path


def test_missing_table_is_one_line_naming_it(tmp_path: Path) -> None:
    wh = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(wh)) as con:
        con.execute("create table core_jobs as select 1 as x")
    nb = _notebook(
        tmp_path / "chx.ipynb",
        "import os, duckdb\n"
        "con = duckdb.connect(os.environ['VARCAP_WAREHOUSE'], read_only=True)\n"
        "con.sql('select * from out_capacity_traces').fetchall()",
    )
    with pytest.raises(CellFailed) as e:
        execute_notebook(nb, tmp_path / "out", wh, {"profile": "quick"}, timeout_s=120)
    line = str(e.value)
    assert "\n" not in line
    assert line.startswith(
        "chx.ipynb: the warehouse has no table out_capacity_traces: run `varcap run` first"
    )
    assert "CatalogException" in e.value.detail  # the cell's traceback is kept for the UI


def test_other_cell_errors_name_the_exception() -> None:
    assert (
        cell_failure_line(Path("notebooks/ch9.ipynb"), "LookupError", "no rows of study 'x'\nmore lines")
        == "ch9.ipynb: a cell failed: LookupError: no rows of study 'x'"
    )
    assert cell_failure_line(Path("a.ipynb"), "KeyError", "") == "a.ipynb: a cell failed: KeyError: "


def test_dagster_console_log_only_with_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.cli import common

    monkeypatch.delenv("VARCAP_DEBUG", raising=False)
    monkeypatch.setattr(common, "DEBUG", False)
    assert common.dagster_loggers()["console"]["config"]["log_level"] == "CRITICAL"
    monkeypatch.setattr(common, "DEBUG", True)
    assert common.dagster_loggers()["console"]["config"]["log_level"] == "WARNING"
    monkeypatch.setattr(common, "DEBUG", False)
    monkeypatch.setenv("VARCAP_DEBUG", "1")
    assert common.dagster_loggers()["console"]["config"]["log_level"] == "WARNING"
