"""Chapter provenance: the block on the page, the record beside the figures, and `varcap figures` never
replacing a full-profile README figure with a quick one unless told."""

from __future__ import annotations

import json

import duckdb
import pytest

from assets import provenance as prov


def _record(profile: str = "quick") -> dict:
    with duckdb.connect() as con:
        con.execute("CREATE TABLE raw_files (dataset VARCHAR, name VARCHAR, source VARCHAR, sha256 VARCHAR)")
        con.execute("INSERT INTO raw_files VALUES ('gaia', 'azure-100k.parquet', 'sample', ?)", ["ab" * 32])
        return prov.chapter_provenance("ch6_ias", profile, "run-1", {"repro-thesis-ch6": ["b", "a"]}, con)


def test_the_record_states_code_profile_run_studies_and_data() -> None:
    r = _record()
    assert r["profile"] == "quick" and r["run_id"] == "run-1" and r["commit"]
    assert r["studies"] == {
        "repro-thesis-ch6": {"scenarios": 2, "ids_sha256": r["studies"]["repro-thesis-ch6"]["ids_sha256"]}
    }
    assert r["data"] == [
        {"dataset": "gaia", "name": "azure-100k.parquet", "source": "sample", "sha256": "ab" * 32}
    ]
    with duckdb.connect() as con:  # no raw_files: no data versions, no error
        assert prov.data_versions(con) == []


def test_the_block_goes_right_after_body() -> None:
    page = prov.add_to_page('<html><head></head><body class="x"><p>hi</p></body></html>', _record())
    head, _, rest = page.partition('<body class="x">')
    assert rest.startswith('<details class="varcap-provenance"') and "azure-100k.parquet abababababab" in rest
    assert "<th>profile</th><td>quick</td>" in rest and "varcap-provenance" not in head


@pytest.fixture
def rendered(tmp_path, monkeypatch):
    """A reports folder with every README figure rendered at ``quick``."""
    from assets.reports import readme_figures

    monkeypatch.setenv("VARCAP_HOME", str(tmp_path / "home"))
    reports = tmp_path / "home" / "data" / "reports" / "figures"
    for ch, fig in readme_figures().values():
        (reports / ch).mkdir(parents=True, exist_ok=True)
        (reports / ch / f"{fig}.png").write_bytes(b"\x89PNG quick " + ch.encode())
        prov.write(reports / ch, {**_record("quick"), "chapter": ch})
    return tmp_path


def test_figures_keep_full_profile_ones_unless_forced(rendered) -> None:
    from assets.reports import copy_readme_figures, readme_figures

    dest = rendered / "docs" / "figures"
    dest.mkdir(parents=True)
    (dest / "reproduction.png").write_bytes(b"full figure")
    (dest / "provenance.json").write_text(json.dumps({"reproduction": {"profile": "full", "commit": "abc"}}))
    out, kept = copy_readme_figures(dest)
    assert (dest / "reproduction.png").read_bytes() == b"full figure"
    assert len(kept) == 1 and "full profile, commit abc" in kept[0] and "--force" in kept[0]
    assert sorted(p.stem for p in out) == sorted(set(readme_figures()) - {"reproduction"})
    record = json.loads((dest / "provenance.json").read_text())
    assert record["reproduction"]["profile"] == "full" and record["carbon_capacity"]["profile"] == "quick"
    out, kept = copy_readme_figures(dest, force=True)
    assert kept == [] and (dest / "reproduction.png").read_bytes().startswith(b"\x89PNG quick")
    assert json.loads((dest / "provenance.json").read_text())["reproduction"]["profile"] == "quick"


def test_the_committed_readme_figures_record_their_profile() -> None:
    from pathlib import Path

    from assets.reports import readme_figures

    record = json.loads(
        (Path(__file__).resolve().parents[1] / "docs" / "figures" / "provenance.json").read_text()
    )
    assert set(readme_figures()) <= set(record)
    assert record["reproduction"]["profile"] == "full"
