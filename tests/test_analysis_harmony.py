"""analysis.harmony on tiny hand-made frames: numbers checked by hand, charts render offline."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from analysis import harmony as h
from analysis.style import to_png


def _classes() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "class_id": [0, 1, 2, 3],
            "size_cluster": [0, 0, 1, 1],
            "priority_group": ["production", "production", "gratis", "gratis"],
            "length": ["short", "long", "short", "long"],
            "centroid_cpu": [0.1, 0.1, 0.02, 0.02],
            "centroid_mem": [0.05, 0.05, 0.01, 0.01],
            "mean_cpu": [0.1, 0.12, 0.02, 0.03],
            "mean_mem": [0.05, 0.06, 0.01, 0.01],
            "max_cpu": [0.3, 0.2, 0.05, 0.03],
            "max_mem": [0.2, 0.1, 0.04, 0.02],
            "container_cpu": [0.2, 0.2, 0.04, 0.03],  # class 1: = max cpu, class 3: = max both
            "container_mem": [0.1, 0.08, 0.03, 0.02],
            "tasks": [100, 5, 1000, 40],
        }
    )


def _demand() -> pl.DataFrame:
    # two intervals, two size clusters of production + one of gratis
    return pl.DataFrame(
        {
            "workload": ["w"] * 6,
            "interval": [0, 0, 0, 1, 1, 1],
            "t_s": [0.0, 0.0, 0.0, 300.0, 300.0, 300.0],
            "size_cluster": [0, 1, 2, 0, 1, 2],
            "priority_group": ["production", "production", "gratis"] * 2,
            "arrivals": [4.0, 6.0, 0.0, 8.0, 2.0, 0.0],
            "arrivals_forecast": [5.0, 5.0, 1.0, 6.0, 1.0, 0.0],
        }
    )


def _results() -> pl.DataFrame:
    rows = [
        ("b", "baseline", 1.2, 100.0, 200.0, 30.0),
        ("p", "cbp", 1.2, 80.0, 160.0, 10.0),
        ("s", "cbs", 1.2, 70.0, 150.0, 5.0),
        ("s6", "cbs", 0.6, 50.0, 120.0, 900.0),
    ]
    return pl.DataFrame(
        {
            "scenario_id": [r[0] for r in rows],
            "study": ["harmony"] * 4,
            "workload": ["w"] * 4,
            "scheme": [r[1] for r in rows],
            "omega": [r[2] for r in rows],
            "energy_kwh": [r[3] for r in rows],
            "energy_cost_usd": [r[4] for r in rows],
            "delay_mean_s_all": [r[5] for r in rows],
            "delay_p50_s_all": [r[5] / 2 for r in rows],
            "delay_p90_s_all": [r[5] * 2 for r in rows],
            "unscheduled": [0.0] * 4,
            "machines_on_mean": [10.0, 8.0, 7.0, 5.0],
            "cpu_util": [0.3, 0.5, 0.6, 0.8],
            "mem_util": [0.2, 0.4, 0.5, 0.7],
        }
    )


def _intervals() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "scenario_id": ["b", "b", "s", "s", "s6"],
            "interval": [0, 1, 0, 1, 0],
            "t_s": [0.0, 300.0, 0.0, 300.0, 0.0],
            **{f"machines_on_{m}": [1.0, 2.0, 0.5, 0.5, 9.0] for m in range(4)},
        }
    )


def test_class_summary_counts_and_containers_below_max() -> None:
    s = h.class_summary(_classes())
    assert s["priority_group"].to_list() == ["production", "gratis"]  # paper order
    prod, gratis = s.row(0, named=True), s.row(1, named=True)
    assert (prod["size_clusters"], prod["classes"], prod["tasks"]) == (1, 2, 105)
    assert (gratis["smallest_class_tasks"], gratis["largest_class_tasks"]) == (40, 1000)
    assert prod["container_below_max"] == 1 and gratis["container_below_max"] == 1


def test_forecast_errors_by_group_and_overall() -> None:
    e = {r["priority_group"]: r for r in h.forecast_errors(_demand()).iter_rows(named=True)}
    # production: actual 10, 10; forecast 10, 7 -> |err| 0, 3
    assert e["production"]["mae_tasks"] == pytest.approx(1.5) and e["production"]["wape"] == pytest.approx(
        3 / 20
    )
    # gratis: no arrivals at all -> no percentage error
    assert e["gratis"]["arrivals"] == 0 and e["gratis"]["wape"] is None
    # all: actual 10, 10; forecast 11, 7 -> |err| 1, 3
    assert e["all"]["wape"] == pytest.approx(4 / 20) and e["all"]["intervals"] == 2
    assert list(e) == ["production", "gratis", "all"]


def test_scheme_table_and_cost_reduction() -> None:
    t = h.scheme_table(_results())
    assert t["scheme"].to_list() == ["baseline", "cbp", "cbs"]  # ω = 0.6 left out
    assert t["cost_change_pct"].to_list() == pytest.approx([0.0, -20.0, -25.0])
    assert h.cost_reduction_pct(_results()) == pytest.approx(25.0)
    assert h.cost_reduction_pct(_results(), "cbp") == pytest.approx(20.0)
    with pytest.raises(ValueError, match="baseline"):
        h.scheme_table(_results(), omega=0.6)
    tf = h.tradeoff_frame(_results()).filter(pl.col("scheme") == "cbs")
    assert tf["omega"].to_list() == [0.6, 1.2]
    # the baseline's other type-order readings (the full study's) are left out of the chapter's figures
    other = _results().head(1).with_columns(
        pl.lit("x").alias("scenario_id"), pl.col("energy_cost_usd") * 2
    )
    both = pl.concat([_results(), other]).with_columns(
        pl.Series("efficiency", ["paper"] * 4 + ["cpu"])
    )
    assert h.scheme_table(both)["cost_change_pct"].to_list() == pytest.approx([0.0, -20.0, -25.0])
    assert h.tradeoff_frame(both).filter(pl.col("scheme") == "baseline").height == 1
    with pytest.raises(ValueError, match="found 2"):
        h.scheme_table(both.with_columns(pl.lit("paper").alias("efficiency")))


def test_charts_render_offline() -> None:
    for chart in (
        h.classes_chart(_classes()),
        h.forecast_chart(_demand()),
        h.cost_chart(_results()),
        h.machines_chart(_intervals(), _results()),
        h.tradeoff_chart(_results()),
    ):
        png = to_png(chart, scale=1.0)
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000


def test_load_filters_by_study_and_names_missing_tables() -> None:
    con = duckdb.connect()
    assert h.pick_study(con) == "harmony"
    with pytest.raises(LookupError, match="varcap sweep harmony"):
        h.load(con)
    frames = {
        "out_harmony_task_classes": _classes(),
        "out_harmony_demand": pl.concat(
            [_demand(), _demand().with_columns(pl.lit("other").alias("workload"))]
        ),
        "out_harmony_results": pl.concat(
            [
                _results(),
                _results().with_columns(
                    pl.lit("harmony-7d").alias("study"),
                    (pl.lit("x") + pl.col("scenario_id")).alias("scenario_id"),
                ),
            ]
        ),
        "out_harmony_intervals": _intervals(),
    }
    for name, df in frames.items():
        con.register(f"_{name}", df.to_arrow())
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM _{name}")
    got = h.load(con, "harmony")
    assert got["results"].height == 4 and set(got["demand"]["workload"]) == {"w"}
    assert got["intervals"].height == 5 and got["classes"].height == 4
    with pytest.raises(LookupError, match="no rows of study 'nope'"):
        h.load(con, "nope")
    assert h.pick_study(con, "harmony-7d") == "harmony-7d" and h.pick_study(con, "harmony-smoke") == "harmony"


def warehouse_tables() -> list[tuple[object, pl.DataFrame]]:
    """The tiny frames as complete ``harmony_*`` tables (columns the charts do not read filled with zeros or
    a placeholder), for a fixture warehouse that renders Harmony's chapter without running Harmony."""
    from assets.schema import HARMONY_DEMAND, HARMONY_INTERVALS, HARMONY_RESULTS, HARMONY_TASK_CLASSES

    fill = {"DOUBLE": pl.lit(0.0), "BIGINT": pl.lit(0, pl.Int64), "VARCHAR": pl.lit("x")}
    out = []
    for schema, df in (
        (HARMONY_TASK_CLASSES, _classes()),
        (HARMONY_DEMAND, _demand()),
        (
            HARMONY_RESULTS,
            _results().with_columns(pl.lit(1.0).alias("machine_fraction"), pl.lit("paper").alias("efficiency")),
        ),
        (HARMONY_INTERVALS, _intervals()),
    ):
        extra = [fill[c.sql_type].alias(c.name) for c in schema.columns if c.name not in df.columns]
        out.append((schema, df.with_columns(extra).select(schema.column_names)))
    return out


def test_warehouse_tables_pass_the_schema_checks(tmp_path) -> None:
    from assets.warehouse import write_tables

    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        write_tables(con, warehouse_tables())
        assert h.scheme_table(h.load(con)["results"]).height == 3
