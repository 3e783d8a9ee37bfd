"""``varcap reports`` through the real command and real Dagster config (the README's ``varcap reproduce &&
varcap reports`` path): on a small warehouse holding both profiles' reproduction rows, with the notebook
execution replaced by a stub that records its parameters (the notebooks themselves: tests/test_reports.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipelines.cli import main


def _fake_run_row(sc) -> dict:
    from sim import METRIC_NAMES

    return {
        "scenario_id": sc.id,
        "params": sc.params(),
        "machines": 10,
        "metrics": {k: 0.25 for k in METRIC_NAMES},
        "wall_s": 0.1,
        "code_version": "test",
        "inputs_version": "test",
        "jobs_path": "data/sim/runs/x/jobs.parquet",
        "finished_at": datetime.now(UTC).isoformat(),
    }


def _reproduction_rows(profile: str, value: float) -> pl.DataFrame:
    from assets.schema import OUT_REPRODUCTION

    defaults = {"VARCHAR": "x", "DOUBLE": value, "BIGINT": 3, "BOOLEAN": True}
    row = {c.name: defaults[c.sql_type] for c in OUT_REPRODUCTION.columns}
    row |= {"headline_id": "thesis-test", "profile": profile, "band_low": 0.0, "band_high": 100.0}
    return pl.DataFrame([row])


def _reproduced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """What `varcap reproduce` leaves (a small warehouse, a cached full-profile run, every full study
    partition materialized), with the notebook execution replaced by a stub recording each chapter's
    parameters and studies' rows: (home, warehouse, instance, seen params, rows per chapter)."""
    import assets.reports as rep
    from assets.schema import OUT_REPRODUCTION
    from assets.warehouse import replace_table
    from studies import reproduction as repro
    from studies import sweep

    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    wh = home / "data" / "warehouse.duckdb"
    monkeypatch.setenv("VARCAP_HOME", str(home))
    monkeypatch.setenv("VARCAP_WAREHOUSE", str(wh))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.delenv("VARCAP_SOURCE", raising=False)
    # what `varcap reproduce` leaves: the core tables, results of a full-profile study, both profiles' rows
    with duckdb.connect(str(wh)) as con:
        con.execute(
            "CREATE TABLE core_jobs AS SELECT 'azure' AS workload, 3600.0 AS duration_s, 2.0 AS cores, "
            "NULL::DOUBLE AS cpu_request_norm, 4.0 AS memory_gb"
        )
        both = pl.concat([_reproduction_rows("quick", 1.0), _reproduction_rows("full", 2.0)])
        replace_table(con, OUT_REPRODUCTION, both)
    sc = repro.profile_scenarios(repro.FULL)[0]
    run = _fake_run_row(sc)
    monkeypatch.setattr(sweep, "scan_runs", lambda ids=None, out=None: ([run], []))
    seen: dict[str, dict] = {}

    rows_of: dict[str, object] = {}

    def fake_execute(
        nb_path, out_dir, warehouse, params, timeout_s=600, study_results=None, provenance=None, kernel=None
    ):
        assert provenance is not None and provenance["chapter"] == nb_path.stem  # every page states its own
        seen[nb_path.stem] = params
        rows_of[nb_path.stem] = study_results
        fig = out_dir / "figures" / nb_path.stem / "fig01.png"
        fig.parent.mkdir(parents=True, exist_ok=True)
        fig.write_bytes(b"\x89PNG\r\n\x1a\n")
        (fig.parent / "manifest.json").write_text(json.dumps(["fig01"]))
        (fig.parent / "provenance.json").write_text(json.dumps(provenance))
        html = out_dir / f"{nb_path.stem}.html"
        html.write_text("<html></html>")
        return rep.Executed(html, [fig], [], 0.0)

    monkeypatch.setattr(rep, "execute_notebook", fake_execute)
    # what `varcap reproduce` leaves in the Dagster instance: every full study partition materialized
    from dataclasses import replace

    import dagster as dg

    from assets.sim import STUDY_PARTS, study_asset_name, study_partition_keys
    from pipelines.cli.common import prepare_dagster_home

    prepare_dagster_home()
    instance = dg.DagsterInstance.get()
    # the profile check asks whether every partition key of each full study is materialized: the first two
    # keys of each full study stand for all of them here (2100 runless events cost ~20 CPU s; the Dagster
    # definitions, built at import, keep every partition)
    for name in repro.profile_studies(repro.FULL):
        part = STUDY_PARTS[name]
        monkeypatch.setitem(STUDY_PARTS, name, replace(part, keys=dict(list(part.keys.items())[:2])))
    for name in repro.profile_studies(repro.FULL):
        for pk in study_partition_keys(name):
            instance.report_runless_asset_event(
                dg.AssetMaterialization(asset_key=study_asset_name(name), partition=pk)
            )
    return home, wh, instance, seen, rows_of


def test_varcap_reports_renders_after_reproduce(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dagster as dg

    import assets.reports as rep
    from studies import reproduction as repro

    home, wh, instance, seen, rows_of = _reproduced(tmp_path, monkeypatch)
    sc = repro.profile_scenarios(repro.FULL)[0]
    assert main(["reports"]) == 0
    # every chapter but Harmony's (its tables come from `varcap sweep harmony`) rendered; the chapters
    # of the reproduction studies at their `full` partition, the others (no profile) as they are
    assert set(seen) == {ch.name for ch in rep.CHAPTERS} - {"harmony"}
    assert {n: p["profile"] for n, p in seen.items()} == {
        ch.name: "full" if ch.profiled else "auto" for ch in rep.CHAPTERS if ch.name != "harmony"
    }
    # a chapter that reads studies gets its own studies' rows (their runs, in a parquet file)
    for name, rows in rows_of.items():
        studies = next(ch.studies for ch in rep.CHAPTERS if ch.name == name)
        assert (rows is not None and pl.read_parquet(rows).height >= 1) if studies else rows is None, name
    for ch in rep.CHAPTERS:
        if ch.profiled:
            key = dg.AssetKey(f"report_{ch.name}")
            assert instance.get_materialized_partitions(key) == {"full"}
    assert instance.get_materialized_partitions(dg.AssetKey("report_index")) == {"full"}
    index = (home / "data" / "reports" / "index.html").read_text()
    assert "thesis-test" in index
    # the full profile's row is shown (the index picks full when both have the same headlines computed)
    assert "<td>full</td>" in index and "<td>quick</td>" not in index
    with duckdb.connect(str(wh), read_only=True) as con:
        assert con.sql("select scenario_id from out_sim_results").fetchall() == [(sc.id,)]
        # out_reproduction is left as `varcap reproduce` wrote it
        assert sorted(r[0] for r in con.sql("select profile from out_reproduction").fetchall()) == [
            "full",
            "quick",
        ]


def test_varcap_reports_again_keeps_the_pages_whose_inputs_are_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dagster as dg

    from assets import snapshot

    home, wh, instance, seen, _ = _reproduced(tmp_path, monkeypatch)
    assert main(["reports"]) == 0
    rendered = set(seen)
    assert "ch5_intervals" in rendered and "ch4_variable_capacity" in rendered
    first = instance.get_latest_materialization_event(dg.AssetKey("report_ch5_intervals")).run_id
    seen.clear()
    # the same code, parameters, tables and studies' rows: every page is kept, none executed again, and
    # each is still materialized (naming the run that rendered it)
    assert main(["reports"]) == 0
    assert seen == {}
    meta = instance.get_latest_materialization_event(
        dg.AssetKey("report_ch5_intervals")
    ).asset_materialization.metadata
    assert meta["reused_from_run"].value == first and meta["figures"].value == 1
    # a page changed on disk is rendered again, alone
    (home / "data" / "reports" / "ch5_intervals.html").write_text("<html>edited</html>")
    assert main(["reports"]) == 0
    assert set(seen) == {"ch5_intervals"}
    seen.clear()
    # a row more in a table the notebooks can read: every chapter is rendered again
    with duckdb.connect(str(wh)) as con:
        con.execute("INSERT INTO core_jobs VALUES ('azure', 7200.0, 1.0, NULL, 2.0)")
        snapshot.publish(con)
    assert main(["reports"]) == 0
    assert set(seen) == rendered


def test_progress_prints_line_by_line_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off a terminal (make run's log, a pipe) a tqdm bar prints short lines, not one line of thousands
    of characters joined by carriage returns; on a terminal the live bar stays."""
    import io

    import tqdm as tqdm_pkg

    from pipelines.cli import common

    monkeypatch.setattr(tqdm_pkg, "tqdm", tqdm_pkg.std.tqdm)  # the plain bar; restored after the test
    monkeypatch.setattr(common, "LINE_PROGRESS_INTERVAL_S", 0.0)

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert common.line_progress(Tty()) is None
    log = io.StringIO()
    previous = common.line_progress(log)
    assert previous is tqdm_pkg.std.tqdm
    from tqdm import tqdm  # as the commands import it: at call time

    for _ in tqdm(range(200), desc="quick studies", unit="scenario", miniters=1):
        pass
    text = log.getvalue()
    lines = text.splitlines()
    assert "\r" not in text and len(lines) >= 50
    assert max(len(x) for x in lines) <= 120 and "200/200" in lines[-1]
    assert common.line_progress(log) is None  # not twice
    common.restore_progress(previous)
    assert tqdm_pkg.tqdm is tqdm_pkg.std.tqdm
