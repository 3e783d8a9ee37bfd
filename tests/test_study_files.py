"""Studies as TOML files: the shipped example, one-line errors naming file, line and field with the valid
choices, discovery that never breaks the catalogue, ``varcap sweep --file`` and ``varcap studies``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from studies import files
from studies.files import StudyFileError, load

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "studies" / "files" / "swf-example.toml"

TINY = """name = "tiny"
profile = ["full", "quick"]
[base]
machines = 4
horizon_days = 1.0
[grid]
policies = ["ff", { name = "ias", aggressiveness = 0.3 }]
workloads = ["zipf-1.5"]
capacity = ["random_walk:changes_per_hour=1,step=0.15", { kind = "constant", fraction = 1 }]
seeds = [0, 1]
[quick]
seeds = [0]
"""


def test_the_shipped_example_expands_to_its_grid() -> None:
    sf = load(EXAMPLE)
    full, quick = sf.studies["swf-example"], sf.studies["swf-example-quick"]
    assert len(full) == 2 * 1 * 2 * 3 * 2 + 1 and len(quick) == 2 * 2 * 2 + 1
    assert {s.policy for s in full} == {"ff", "ias"} and {s.seed for s in quick} == {0}
    assert {s.horizon_days for s in full} == {7.0} and {s.horizon_days for s in quick} == {2.0}
    assert {s.workload for s in full} == {"swf-resampled", "swf"}
    assert all((s.machines, s.cores) == (4, 8) for s in full)


def test_a_grid_and_its_settings(tmp_path: Path) -> None:
    f = tmp_path / "tiny.toml"
    f.write_text(TINY)
    sf = load(f)
    scs = sf.studies["tiny"]
    assert len(scs) == 2 * 2 * 2 and len(sf.studies["tiny-quick"]) == 4
    ias = [s for s in scs if s.policy == "ias"]
    assert {s.settings["aggressiveness"] for s in ias} == {"0.3"}
    # `fraction = 1` (a TOML integer) is the same scenario as 1.0: float parameters are floats
    const = next(s for s in scs if s.capacity["kind"] == "constant")
    assert const.capacity == {"kind": "constant", "fraction": 1.0}


BAD = [
    ("name = 'x'\n[grid\n", r"bad\.toml: line 2: not valid TOML"),
    ("name = 'x'\ncolour = 1\n", r"line 2: colour: unknown field; fields: name, description, profile"),
    ("name = 'My Study'\n", r"line 1: name: 'My Study' must be lower-case"),
    (
        "name = 'x'\n[grid]\nworkloads = ['zipf-1.5']\ncapacity = ['constant']\npolicies = ['ff',\n 'nope']\n",
        r"line 6: grid\.policies\[1\]: unknown policy 'nope'; policies: .*\bff\b",
    ),
    (
        "name = 'x'\n[grid]\nworkloads = ['azur']\ncapacity = ['constant']\n",
        r"line 3: grid\.workloads\[0\]: .*azur.*azure",
    ),
    (
        "name = 'x'\n[grid]\nworkloads = ['azure']\ncapacity = ['randomwalk:step=0.1']\n",
        r"line 4: grid\.capacity\[0\]: .*randomwalk.*random_walk",
    ),
    (
        "name = 'x'\n[grid]\nworkloads = ['azure']\ncapacity = ['random_walk:step=1.5']\n",
        r"line 4: grid\.capacity\[0\]: .*step",
    ),
    (
        "name = 'x'\n[base]\nhorizon = 3\n",
        r"line 3: base\.horizon: unknown field; fields: settings, machines, cores, horizon_days",
    ),
    (
        "name = 'x'\n[grid]\nworkloads = ['swf-resampled']\ncapacity = ['constant']\n",
        r"grid: workload 'swf-resampled' needs the platform size: set machines in \[base\]",
    ),
    ("name = 'x'\nprofile = 'fast'\n", r"line 2: profile: 'fast': profiles: full, quick"),
    ("name = 'x'\n", r"defines no scenario"),
    (
        "name = 'x'\n[[scenarios]]\nworkload = 'azure'\ncapacity = 'constant'\npolicy = { name = 'ias', A = 1 }\n",
        r"scenarios\[0\]: policy 'ias' has no parameter 'A'; parameters: ",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_a_bad_file_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(StudyFileError, match=message) as e:
        load(f)
    assert "\n" not in str(e.value) and str(e.value).startswith(str(f))


def test_discovery_reports_bad_files_and_clashes_without_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VARCAP_STUDY_DIR", str(tmp_path))
    (tmp_path / "a.toml").write_text(TINY)
    (tmp_path / "b.toml").write_text("name = [\n")
    (tmp_path / "c.toml").write_text(TINY.replace('"tiny"', '"smoke"'))
    found = files.discover(frozenset({"smoke"}))
    assert set(found.files) >= {"tiny", "tiny-quick", "swf-example", "swf-example-quick"}
    assert "smoke" not in found.files
    assert any(p.startswith(str(tmp_path / "b.toml")) and "not valid TOML" in p for p in found.problems)
    assert any("'smoke' is already a built-in study" in p for p in found.problems)


def _varcap(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        timeout=timeout,
    )


def test_sweep_file_runs_lists_and_refuses_in_one_line(tmp_path: Path) -> None:
    """A file outside the study folders: copied to the user folder, swept through Dagster (the UI's
    study asset), listed by `varcap studies`; a bad file is one `varcap: error:` line, exit 2."""
    home = tmp_path / "home"
    env = {
        "VARCAP_HOME": str(home),
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "VARCAP_STUDY_DIR": str(home / "studies"),
    }
    mine = tmp_path / "mine.toml"
    mine.write_text(TINY.replace("seeds = [0, 1]", "seeds = [0]"))
    r = _varcap("sweep", "--file", str(mine), "--max-workers", "1", env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (home / "studies" / "mine.toml").read_text() == mine.read_text()
    assert "tiny: 4 scenarios" in r.stdout and "also defines tiny-quick" in r.stdout
    listing = _varcap("studies", env=env)
    assert "tiny-quick" in listing.stdout and "Harmony runner" in listing.stdout
    keys = _varcap("studies", "tiny", env=env)
    assert keys.stdout.count("yes") == 4  # every scenario has its cached result
    bad = tmp_path / "bad.toml"
    bad.write_text("name = 'x'\n[grid]\nworkloads = ['azure']\ncapacity = ['constant']\npolicies = ['nope']\n")
    r = _varcap("sweep", "--file", str(bad), env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"varcap: error: {bad}: line 5: grid.policies[0]: unknown policy 'nope'")


def test_sweep_file_arg_copies_registers_and_studies_lists_harmony(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In process (no simulation): --file copies the file to the user folder and puts its studies in the
    catalogue, refuses another study's file name; `varcap studies` lists the file's studies and Harmony's."""
    from pipelines.cli import main
    from pipelines.cli.sweeps import study_file_arg
    from studies import catalogue

    user = tmp_path / "user"
    monkeypatch.setenv("VARCAP_STUDY_DIR", str(user))
    monkeypatch.setattr(catalogue, "STUDIES", dict(catalogue.STUDIES))
    monkeypatch.setattr(catalogue, "STUDY_FILES", dict(catalogue.STUDY_FILES))
    mine = tmp_path / "mine.toml"
    mine.write_text(TINY.replace('"tiny"', '"tiny-in-process"'))
    assert study_file_arg(str(mine)) == "tiny-in-process"
    assert (user / "mine.toml").read_text() == mine.read_text()
    assert len(catalogue.study("tiny-in-process-quick")) == 4
    other = tmp_path / "elsewhere" / "mine.toml"
    other.parent.mkdir()
    other.write_text(TINY.replace('"tiny"', '"another"'))
    with pytest.raises(SystemExit, match=r"already holds another study file \(tiny-in-process\)"):
        study_file_arg(str(other))
    capsys.readouterr()
    assert main(["studies"]) == 0
    out = capsys.readouterr().out
    assert "tiny-in-process" in out and "harmony-7d" in out and "Harmony runner" in out
    assert main(["studies", "harmony-smoke"]) == 0
    assert "cbs ω=1.2 borg2011-sample 0.1 of the cluster" in capsys.readouterr().out
    assert main(["sweep"]) == 2 and "give a study name or --file" in capsys.readouterr().err
