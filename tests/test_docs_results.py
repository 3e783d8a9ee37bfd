"""`varcap docs` writes the reproduction's numbers into README.md and docs/reproduction.md from
out_reproduction (through the committed record docs/results/reproduction-full.csv), and `varcap docs
--check` fails when the README's block, the record or the warehouse drift apart."""

from __future__ import annotations

import io
from pathlib import Path

import duckdb
import polars as pl
import pytest

from assets.schema import OUT_REPRODUCTION
from pipelines.cli import docs, main
from pipelines.cli.docs_results import marker, record_path

BLOCKS = {
    "README.md": ["reproduction results"],
    "docs/reproduction.md": ["bands and anchors", "results", "ias beyond the thesis"],
}


def _row(hid: str, **kw) -> dict:
    row = dict.fromkeys(OUT_REPRODUCTION.column_names, "")
    row |= {
        "headline_id": hid,
        "reading": "default",
        "paper": "004 Harmony",
        "section": "§9.2 Fig. 29",
        "anchor_value": 28.0,
        "unit": "%",
        "varcap_mean": 30.0,
        "ci_low": 25.0,
        "ci_high": 35.0,
        "replicates": 5,
        "band_low": 14.0,
        "band_high": 56.0,
        "within_band": True,
        "profile": "full",
        "code_commit": "abc1234",
        "computed_at_utc": "2026-11-27T10:00:00Z",
        "n_decisive": 5,
        "n_degenerate": 0,
        "n_not_run": 0,
        "verdict": "",  # empty: the verdict is read from within_band
    }
    return row | kw


def _warehouse(path: Path, rows: list[dict]) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute("DROP TABLE IF EXISTS out_reproduction")
        con.execute(OUT_REPRODUCTION.ddl())
        df = pl.DataFrame(rows, infer_schema_length=None).select(OUT_REPRODUCTION.column_names)  # noqa: F841
        con.execute("INSERT INTO out_reproduction SELECT * FROM df")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with the pages' markers (blocks empty) and a warehouse of full, quick and reading rows."""
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    for page, names in BLOCKS.items():
        (root / page).write_text(
            f"# {page}\n\n" + "".join(f"{marker(n)}\n{marker(n, end=True)}\n\ntext\n" for n in names)
        )
    monkeypatch.setattr(docs, "REPO", root)
    wh = tmp_path / "warehouse.duckdb"
    monkeypatch.setenv("VARCAP_WAREHOUSE", str(wh))
    _warehouse(
        wh,
        [
            _row("seed004-cbs-energy-reduction"),  # a former id: recorded under its current name
            _row("seed004-cbs-energy-reduction@kwh", reading="kwh", varcap_mean=99.0),
            _row(
                "thesis-4.1-zipf-table",
                replicates=1,
                varcap_mean=96.875,
                ci_low=96.875,
                ci_high=96.875,
                within_band=False,
                section="§4.3.1 Table 4.1",
                anchor_value=100.0,
                band_low=100.0,
                band_high=100.0,
                unit="% of cells within 25 %",
            ),  # fmt: skip
            _row("thesis-6.3-ias-cut-trend", profile="quick", varcap_mean=-0.5),
        ],
    )
    return root


def test_docs_writes_the_results_from_the_warehouse_and_check_bites(repo: Path, capsys) -> None:
    assert main(["docs", "--check"]) == 1  # no record yet, blocks empty
    out = capsys.readouterr().out
    assert "README.md" in out and "docs/results/reproduction-full.csv" in out
    assert main(["docs"]) == 0 and main(["docs", "--check"]) == 0
    rec = pl.read_csv(record_path(repo))
    # the full profile's default readings only, under current ids, in table order (thesis first)
    assert rec["headline_id"].to_list() == ["thesis-4.1-zipf-table", "harmony-9.2-cbs-energy-reduction"]
    readme = (repo / "README.md").read_text()
    assert "### Results (full profile, `varcap reproduce` at abc1234, 2026-11-27)" in readme
    assert (
        "| `harmony-9.2-cbs-energy-reduction` (§9.2 Fig. 29) | 28 % | 30 [25, 35] (n = 5) | [14, 56] | 5/5 | yes |"
        in readme
    )
    assert "| 96.9 (n = 1) | [100, 100] | 5/5 | **no** |" in readme  # one run: no interval
    assert "**1 of the 2 headlines are inside their band**" in readme
    assert "99" not in readme and "-0.5" not in readme and "seed004" not in readme  # no reading, no quick row
    rp = (repo / "docs" / "reproduction.md").read_text()
    assert (
        "`thesis-4.1-zipf-table` (§4.3.1 Table 4.1): 96.9 (n = 1)" in rp
        and "cbs-energy" not in rp.split("results begin")[1].split("results end")[0]
    )
    assert "48.33" in rp and "9839cf1" in rp  # the provenance list, from the headlines

    # the README's block drifts from the record: --check names the README, `varcap docs` restores it
    (repo / "README.md").write_text(readme.replace("30 [25, 35]", "31 [25, 35]"))
    assert main(["docs", "--check"]) == 1
    assert "README.md" in capsys.readouterr().out
    assert main(["docs"]) == 0 and (repo / "README.md").read_text() == readme

    # a new run in the warehouse: the record and the README are both stale until `varcap docs`
    _warehouse(Path(docs.os.environ["VARCAP_WAREHOUSE"]), [_row("harmony-9.2-cbs-energy-reduction", varcap_mean=-17.3, within_band=False, code_commit="def5678")])  # fmt: skip
    assert main(["docs", "--check"]) == 1
    out = capsys.readouterr().out
    assert "docs/results/reproduction-full.csv" in out and "README.md" in out
    assert main(["docs"]) == 0 and "def5678" in (repo / "README.md").read_text()


def test_without_results_the_block_says_how_to_produce_them(repo: Path, monkeypatch) -> None:
    monkeypatch.setenv("VARCAP_WAREHOUSE", str(repo / "none.duckdb"))
    assert main(["docs"]) == 0 and not record_path(repo).exists()
    readme = (repo / "README.md").read_text()
    assert "No full-profile results are recorded" in readme and "`varcap reproduce`" in readme
    assert "|" not in readme


def test_the_ias_instances_block_counts_decisive_instances_with_an_interval(repo: Path) -> None:
    """The per-instance rows of ``out_thesis_ias_instances`` (full profile) become a record and a block:
    shares over decisive instances only (Wilson interval), and a line per decisive instance."""
    from pipelines.cli.docs_results import IAS_COLUMNS, ias_record_path

    def row(inst: str, policy: str, cut: float, gp: float, decisive: bool = True) -> dict:
        r = dict.fromkeys(IAS_COLUMNS)
        return r | {
            "study": "thesis-ias-generalization", "instance": inst, "machines": 40, "jobs": 1000,
            "policy": policy, "ff_terminations": 100, "terminations": int(100 - cut), "termination_cut_pct": cut,
            "goodput_diff_pp": gp, "holds": cut > 0 and gp >= -2, "decisive": decisive, "profile": "full",
            "degenerate_reason": "" if decisive else "every job is big under H1",
        }  # fmt: skip

    rows = [
        row("g0", "ias", -50.0, 0.5), row("g0", "ias-general", 30.0, 0.1),
        row("g1", "ias", 20.0, -3.0), row("g1", "ias-general", 10.0, 0.2),
        row("g2", "ias", 100.0, -0.1, decisive=False), row("g2", "ias-general", 5.0, 0.0, decisive=False),
    ]  # fmt: skip
    with duckdb.connect(str(Path(__import__("os").environ["VARCAP_WAREHOUSE"]))) as con:
        df = pl.DataFrame(rows, infer_schema_length=None)  # noqa: F841
        con.execute("CREATE TABLE out_thesis_ias_instances AS SELECT * FROM df")
    assert main(["docs"]) == 0 and ias_record_path(repo).is_file()
    page = (repo / "docs" / "reproduction.md").read_text()
    assert "| thesis-ias-generalization | `ias` | 2 | 0 | 0 % [0, 66] | 1 |" in page
    assert "| thesis-ias-generalization | `ias-general` | 2 | 2 | 100 % [34, 100] | 1 |" in page
    assert "| g0 |" in page and "| g2 |" not in page  # the degenerate instance is counted, not listed
    assert main(["docs", "--check"]) == 0
    ias_record_path(repo).write_text(ias_record_path(repo).read_text().replace("-50.0", "-49.0"))
    assert main(["docs", "--check"]) == 1  # the record drifted from the warehouse


def test_the_repository_pages_are_rendered_from_the_committed_record() -> None:
    """The README's and docs/reproduction.md's blocks equal what `varcap docs` renders from
    docs/results/ (the warehouse left out: the suite must not depend on local runs)."""
    from pipelines.cli.docs_results import pages

    root = Path(__file__).resolve().parents[1]
    got = pages(root, with_warehouse=False)
    for page in BLOCKS:
        assert (root / page).read_text() == got[root / page], f"{page} is out of date: run `varcap docs`"


def test_a_table_written_before_the_provenance_columns_is_recorded() -> None:
    """An out_reproduction from before the rename and the commit columns: ids mapped, commit 'not recorded'."""
    from pipelines.cli.docs_results import readme_block, record_from_table, record_text

    old = pl.DataFrame([_row("seed003-lww-vs-random-goodput")]).drop("code_commit", "computed_at_utc", "flag")
    rec = record_from_table(old)
    assert rec["headline_id"].to_list() == ["zhang-chien-5.3-lww-vs-random-goodput"]
    back = pl.read_csv(
        io.StringIO(record_text(rec)), schema_overrides={"flag": pl.Utf8, "code_commit": pl.Utf8}
    )
    block = readme_block(back, "docs/results/reproduction-full.csv")
    assert "commit not recorded, date not recorded" in block and "| yes |" in block


def test_the_record_keeps_a_named_subset_of_the_reproduction_table() -> None:
    """The record's columns are ``out_reproduction``'s (``studies.reproduction.COLUMNS``, in its order) less
    the named ones left in the warehouse; every name left out or optional is a column of the table (a
    renamed column cannot stay listed), so a new column of the table is recorded unless named."""
    from pipelines.cli.docs_results import NOT_RECORDED, OPTIONAL_COLUMNS, RECORD_COLUMNS
    from studies.reproduction import COLUMNS

    assert set(NOT_RECORDED) <= set(COLUMNS) and set(OPTIONAL_COLUMNS) <= set(COLUMNS)
    assert list(RECORD_COLUMNS) == [c for c in COLUMNS if c in RECORD_COLUMNS]
    assert set(RECORD_COLUMNS) | NOT_RECORDED | set(OPTIONAL_COLUMNS) == set(COLUMNS)
    assert {"headline_id", "varcap_mean", "ci_low", "ci_high", "code_commit"} <= set(RECORD_COLUMNS)
    assert "explanation" not in RECORD_COLUMNS and "profile" not in RECORD_COLUMNS
