"""Chapter-scoped lineage: each report asset's upstream (the Definitions' asset graph) holds exactly the
study assets its chapter reads, pinned per report in ``tests/report_upstream.json``.

After a deliberate change of what a chapter reads, rewrite the snapshot with
``python -m tests.test_report_lineage`` and review its diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SNAPSHOT = Path(__file__).with_name("report_upstream.json")


def report_upstreams() -> dict[str, list[str]]:
    """Per ``report_<chapter>`` asset, every asset upstream of it (at any depth), sorted."""
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()

    def upstream(key):  # noqa: ANN001, ANN202
        seen, todo = set(), [key]
        while todo:
            for parent in graph.get(todo.pop()).parent_keys:
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return seen

    return {
        k.to_user_string(): sorted(p.to_user_string() for p in upstream(k))
        for k in sorted(graph.get_all_asset_keys())
        if k.to_user_string().startswith("report_") and k.to_user_string() != "report_index"
    }


@pytest.fixture(scope="module")
def upstreams() -> dict[str, list[str]]:
    return report_upstreams()


def test_every_report_upstream_matches_the_snapshot(upstreams: dict[str, list[str]]) -> None:
    pinned = json.loads(SNAPSHOT.read_text())
    assert set(upstreams) == set(pinned)
    for name, keys in upstreams.items():
        added, dropped = sorted(set(keys) - set(pinned[name])), sorted(set(pinned[name]) - set(keys))
        assert not added and not dropped, f"{name}: upstream gained {added}, lost {dropped}"


#: the studies a chapter reads through a table computed from their runs (table → study bases)
TABLE_STUDIES = {"out_thesis_ias_instances": ("thesis-ias-observed", "thesis-ias-generalization")}


def test_each_report_reads_exactly_its_chapters_studies(upstreams: dict[str, list[str]]) -> None:
    """The study assets upstream of a chapter's report are its own studies and those of the study tables
    it reads (:data:`TABLE_STUDIES`), in both profiles (the reproduction chapter reads every paper's,
    through out_reproduction); chapter 6 reads no carbon or spot study."""
    from assets.sim import study_asset_name
    from studies import reproduction as repro
    from studies.papers import CHAPTERS
    from studies.thesis import ias_table

    assert TABLE_STUDIES["out_thesis_ias_instances"] == ias_table.STUDIES
    for ch in CHAPTERS:
        studies = {k for k in upstreams[f"report_{ch.name}"] if k.startswith("out_sim__")}
        if ch.name == "reproduction":
            expected = {study_asset_name(repro.study_name(b, p)) for b in repro.STUDY_BUILDERS for p in repro.PROFILES.values()}
        else:
            bases = [*ch.studies, *(b for t in ch.tables for b in TABLE_STUDIES.get(t, ()))]
            expected = {study_asset_name(repro.study_name(b, p)) for b in bases for p in repro.PROFILES.values()}
        assert studies == expected, ch.name
    ch6 = upstreams["report_ch6_ias"]
    assert not [k for k in ch6 if k.startswith(("out_sim__carbon", "out_sim__spot"))]
    assert "out_study_results" not in ch6 and "out_sim_results" not in ch6


def upstreams_of(asset: str) -> list[str]:
    """Every asset upstream of ``asset`` (at any depth) in the Definitions' asset graph."""
    import dagster as dg

    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    return sorted(k.to_user_string() for k in graph.upstream_key_iterator(dg.AssetKey(asset)))


#: words in the names of the grid-signal and spot assets (raw feeds, core tables, exports)
GRID_AND_SPOT = ("carbon", "spot", "grid", "electricitymaps", "watttime", "eia930", "power_price", "moer")


def test_chapter_6_reads_carbon_data_only_through_its_observed_grid_study(upstreams: dict[str, list[str]]) -> None:
    """IAS's chapter simulates template workloads under generated capacity, and its observed-grid section
    reads ``out_thesis_ias_instances``: the only carbon or grid assets upstream of its report are those
    upstream of the observed-grid study (the grid signals' export and the carbon feeds it is built from),
    and no spot asset is (its other studies depend on the workload export only, not on the capacity assets
    built from grid and spot data)."""
    ch6 = upstreams["report_ch6_ias"]
    observed = set(upstreams_of("out_sim__thesis_ias_observed"))
    grid = [k for k in ch6 if any(w in k for w in GRID_AND_SPOT)]
    assert grid and set(grid) <= observed, sorted(set(grid) - observed)
    assert not [k for k in ch6 if "spot" in k]
    for study in ("out_sim__repro_thesis_ch6", "out_sim__repro_generic"):
        assert not [k for k in upstreams_of(study) if any(w in k for w in GRID_AND_SPOT)], study
    assert "out_sim_inputs" in ch6 and "core_jobs" in ch6  # the workloads it does read
    carbon = upstreams["report_beyond_carbon"]
    assert "out_sim_grid_signals" in carbon and "core_grid_carbon" in carbon  # the test can tell


if __name__ == "__main__":
    SNAPSHOT.write_text(json.dumps(report_upstreams(), indent=1) + "\n")
    print(f"wrote {SNAPSHOT}")


def test_a_chapters_rows_stand_in_for_out_study_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a report's notebook (``$VARCAP_STUDY_RESULTS`` set by its asset), ``out_study_results`` is the
    chapter's own rows; elsewhere, the warehouse table."""
    import duckdb
    import polars as pl

    from analysis.warehouse import connect

    wh = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(wh)) as con:
        con.execute("CREATE TABLE out_study_results AS SELECT 'all' AS scenario_id UNION ALL SELECT 'other'")
    rows = tmp_path / "it's.parquet"  # a quote in the path is escaped
    pl.DataFrame({"scenario_id": ["mine"]}).write_parquet(rows)
    monkeypatch.delenv("VARCAP_STUDY_RESULTS", raising=False)
    with connect(wh) as con:
        assert sorted(r[0] for r in con.sql("SELECT scenario_id FROM out_study_results").fetchall()) == ["all", "other"]
    monkeypatch.setenv("VARCAP_STUDY_RESULTS", str(rows))
    with connect(wh) as con:
        assert con.sql("SELECT scenario_id FROM out_study_results").fetchall() == [("mine",)]
