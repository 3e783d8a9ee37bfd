"""materialize() of the capacity and intervals groups on a small configuration over the samples."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from assets.capacity import capacity_assets, capacity_checks, load_traces
from assets.core import core_assets
from assets.raw import raw_assets
from assets.resources import DownloaderResource

OLD_NAMES = (
    "capacity_traces",
    "capacity_points",
    "capacity_characterization",
    "machine_intervals",
    "machine_inter_change_times",
    "interval_survival",
    "interval_conditional",
)
SMALL = {
    "machines": 50,
    "days": 3.0,
    "frequencies": [1.0, 8.0],
    "steps": [0.15, 0.6],
}


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory):
    d = tmp_path_factory.mktemp("cap")
    db = d / "w.duckdb"
    res = dg.materialize(
        [*raw_assets, *core_assets, *capacity_assets, *capacity_checks],
        resources={
            "duckdb": DuckDBResource(database=str(db)),
            "downloader": DownloaderResource(cache_dir=str(d / "raw")),
        },
        run_config={"ops": {"out_capacity_traces": {"config": SMALL}}},
    )
    return res, db


def test_capacity_groups_materialize_with_green_checks(result) -> None:
    res, db = result
    assert res.success
    evals = [e.event_specific_data for e in res.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    keys = {k for a in capacity_assets for k in a.keys}
    assert {k.to_user_string() for k in keys} == {f"out_{t}" for t in OLD_NAMES}
    cap_checks = [e for e in evals if e.asset_key in keys]
    assert len(cap_checks) == 16 and all(e.passed for e in cap_checks), [
        (e.check_name, e.passed) for e in cap_checks
    ]
    con = duckdb.connect(str(db), read_only=True)
    ids = [r[0] for r in con.execute("select trace_id from out_capacity_traces order by 1").fetchall()]
    assert (
        len(ids) == 4 + 2 + 3 * 2 + 2 * 2
    )  # walks, uniform + risk-aware, carbon (+stranded), prices (+stranded)
    assert "carbon-CAISO-electricitymaps-2024-04-m50" in ids and "carbon-MISO-eia930-2022-04-m50" in ids
    mean = con.execute(
        "select mean_frac from out_capacity_characterization where trace_id like 'carbon-ERCOT%'"
    ).fetchall()[0][0]
    assert mean == pytest.approx(0.7, abs=0.01)
    # CV of carbon-driven capacity: MISO (coal/gas, steady) < ERCOT < CAISO (solar), as in the thesis
    cv = dict(
        con.execute(
            "select split_part(trace_id, '-', 2), cv from capacity_characterization where trace_id like 'carbon-%'"
        ).fetchall()
    )
    assert cv["MISO"] < cv["ERCOT"] < cv["CAISO"]
    n_iv = con.execute("select count(*) from out_machine_intervals").fetchall()[0][0]
    assert n_iv > 100
    assert con.execute("select count(*) from out_interval_survival where band = -1").fetchall()[0][0] > 0
    traces = load_traces(con)
    assert set(traces) == set(ids) and traces[ids[0]].machines in (50, 32)


def test_former_table_names_are_views_with_the_same_rows(result) -> None:
    """Every capacity/interval table has the out_ prefix; its old name is a view over it (same rows)."""
    _, db = result
    con = duckdb.connect(str(db), read_only=True)
    kinds = dict(con.execute("select table_name, table_type from information_schema.tables").fetchall())
    for old in OLD_NAMES:
        assert kinds[f"out_{old}"] == "BASE TABLE" and kinds[old] == "VIEW", old
        n_new = con.execute(f"select count(*) from out_{old}").fetchone()[0]
        assert n_new > 0 and con.execute(f"select count(*) from {old}").fetchone()[0] == n_new, old


def test_capacity_notebook_executes(result, monkeypatch) -> None:
    """The chapter notebook runs top to bottom against the warehouse (thin: analysis does the work)."""
    import nbformat
    from nbclient import NotebookClient

    from tests.conftest import REPO

    _, db = result
    monkeypatch.setenv("VARCAP_WAREHOUSE", str(db))
    nb = nbformat.read(REPO / "notebooks" / "01_capacity_and_intervals.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    # the two altair charts, drawn in the kernel as SVG (analysis.style's renderer): no script from a CDN
    charts = [o for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert len(charts) == 2
    assert not [o for o in outputs if "vega@" in str(o.get("data", {}).get("text/html", ""))]


def test_charts_render(result, tmp_path) -> None:
    from analysis.charts import capacity_steps, save_png, survival_curves
    from analysis.warehouse import carbon_capacity, connect, survival

    _, db = result
    con = connect(db)
    pts, sizes = carbon_capacity(con)
    assert save_png(capacity_steps(pts, sizes), tmp_path / "c.png").stat().st_size > 10_000
    assert save_png(survival_curves(survival(con, "rw-%")), tmp_path / "s.png").stat().st_size > 10_000
