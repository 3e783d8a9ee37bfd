"""The CLI half of: `varcap sql` is sandboxed, `varcap simulate` checks its outputs and seed before
simulating and writes valid JSON, and a command's own refusal carries the `varcap: error:` prefix."""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import pytest

from pipelines.cli import main
from pipelines.cli.simulate import json_metrics
from tests.faults.test_cli_errors import CAP, JOBS, _one_line_error
from tests.faults.test_cli_errors import _simulate as _simulate_with


def _simulate(tmp_path: Path, *extra: str) -> list[str]:
    return _simulate_with(tmp_path, JOBS, CAP, *extra)


@pytest.fixture
def small_warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    db = tmp_path / "w.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("create table t as select 42 as a")
    monkeypatch.setenv("VARCAP_WAREHOUSE", str(db))
    return db


def test_sql_reads_the_warehouse(small_warehouse: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sql", "select a from t"]) == 0
    assert "42" in capsys.readouterr().out


@pytest.mark.parametrize(
    "query",
    [
        "select * from read_csv('{secret}')",
        "copy t to '{out}'",
        "attach '{other}' as o",
        "set enable_external_access = true",
    ],
)
def test_sql_cannot_touch_files_outside_the_warehouse(
    small_warehouse: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str
) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("k\nhunter2\n")
    out = tmp_path / "leak.csv"
    q = query.format(secret=secret, out=out, other=tmp_path / "other.duckdb")
    assert main(["sql", q]) == 2
    assert _one_line_error(capsys).startswith("query failed:")
    assert not out.exists() and not (tmp_path / "other.duckdb").exists()


def test_out_in_a_missing_directory_fails_before_simulating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sim

    def boom(*a, **k):  # noqa: ANN002, ANN003
        raise AssertionError("simulated although --out cannot be written")

    monkeypatch.setattr(sim, "simulate", boom)
    argv = _simulate(tmp_path, "--out", str(tmp_path / "nope" / "m.json"))
    assert main(argv) == 2
    assert "--out" in (msg := _one_line_error(capsys)) and "does not exist" in msg


def test_jobs_out_that_is_a_directory_fails_before_simulating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_simulate(tmp_path, "--jobs-out", str(tmp_path))) == 2
    assert "is a directory" in _one_line_error(capsys)


def test_a_huge_seed_is_refused_up_front(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_simulate(tmp_path, "--seed", str(2**70))) == 2
    assert "seed" in _one_line_error(capsys)


def test_bad_capacity_spec_has_the_prefix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "jobs.csv").write_text(JOBS)
    argv = ["simulate", "--jobs", str(tmp_path / "jobs.csv"), "--capacity", "no-such-kind:x=1"]
    argv += ["--machines", "2", "--cores", "4", "--horizon-s", "100"]
    assert main(argv) == 2
    assert "no-such-kind" in _one_line_error(capsys)


def test_out_is_valid_json_with_null_for_non_finite(tmp_path: Path) -> None:
    assert json_metrics({"a": 1, "b": math.nan, "c": math.inf, "d": 0.5}) == {
        "a": 1,
        "b": None,
        "c": None,
        "d": 0.5,
    }
    out = tmp_path / "m.json"
    assert main(_simulate(tmp_path, "--out", str(out))) == 0
    text = out.read_text()
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))


def test_a_policy_that_needs_a_grid_signal_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``defer`` reads a carbon signal that `varcap simulate` cannot pass: a one-line refusal, not a trace."""
    assert main(_simulate(tmp_path, "--policy", "defer")) == 2
    assert "needs the run's carbon signal" in _one_line_error(capsys)
