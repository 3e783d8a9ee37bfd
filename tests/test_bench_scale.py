"""``python -m sim.bench scale`` measures ``varcap simulate`` as a user runs it and writes its own table
: the child's own CPU and peak RSS, and the generated table between the doc's markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.bench.scale import SCALE_END, SCALE_START, run_simulate_process, write_table
from tests.test_sim_engine import frame

REPO = Path(__file__).resolve().parents[1]


def test_table_goes_between_the_markers_only(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(f"before\n{SCALE_START}\nold table\n{SCALE_END}\nafter {SCALE_END}\n")
    write_table(doc, "| new |")
    assert doc.read_text() == f"before\n{SCALE_START}\n| new |\n{SCALE_END}\nafter {SCALE_END}\n"
    write_table(doc, "| newer |")  # again: idempotent shape
    assert doc.read_text().count("| newer |") == 1 and "| new |" not in doc.read_text()
    plain = tmp_path / "table.md"
    write_table(plain, "| t |")  # no markers: the whole file
    assert plain.read_text() == "| t |\n"


def test_simulate_process_is_measured_as_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dh"))
    jobs = tmp_path / "jobs.parquet"
    frame([(i * 60, 300, 1 + i % 3) for i in range(20)]).write_parquet(jobs)
    argv = ["--jobs", str(jobs), "--capacity", "random-walk:changes_per_hour=1,step=0.15,seed=0",
            "--machines", "4", "--cores", "8", "--horizon-s", "7200", "--out", str(tmp_path / "r.json")]  # fmt: skip
    import numpy as np

    # a caller of 800 MB (a test process that has loaded much): the child's peak RSS is its own, not the
    # caller's high-water mark, which Linux carries into a forked child's ru_maxrss at exec
    ballast = np.ones(100_000_000)
    m = run_simulate_process(argv)
    assert ballast[-1] == 1.0
    del ballast
    assert (tmp_path / "r.json").exists()
    assert 0 < m["cpu_s"] < 60 and 20 < m["rss_mb"] < 500 and m["wall_s"] > 0
    with pytest.raises(RuntimeError, match="varcap simulate .* failed"):
        run_simulate_process([*argv[:-2], "--policy", "no-such-policy"])


@pytest.mark.parametrize("load", [0.8, 0.5])
def test_scale_inputs_offer_the_asked_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, load: float
) -> None:
    """n jobs at any offered load: the horizon stretches by 0.8 / load and the jobs' core-seconds are
    load × 70 % of the platform over it (the default file name is the one the generated table used)."""
    import polars as pl

    import sim.bench.scale as bench

    tmpl = pl.DataFrame({"duration_s": [60.0, 600.0, 3600.0], "cores": [1.0, 4.0, 24.0]})
    monkeypatch.setattr(bench, "_borg_template", lambda cores: tmpl)
    path, horizon = bench.scale_inputs(6_000, str(tmp_path), load=load)
    assert horizon == pytest.approx(7 * 86400.0 / 100 * 0.8 / load)
    assert Path(path).name == (
        "borg-6000-200x24.parquet" if load == 0.8 else "borg-6000-200x24-load0.5.parquet"
    )
    jobs = pl.read_parquet(path)
    offered = float((jobs["duration_s"] * jobs["cores"]).sum()) / horizon
    assert jobs.height == 6_000 and offered == pytest.approx(load * 0.7 * 200 * 24, rel=1e-6)


def test_scale_passes_the_offered_load_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """The load asked for reaches the jobs file and the table's command line (a local named ``load``, the
    machine's load average, once shadowed it: the first --offered-load 0.5 run simulated load 1.18)."""
    import json
    import subprocess

    import sim.bench.scale as bench

    asked: list[float] = []

    def inputs(n: int, out_dir: str, load: float = 0.8) -> tuple[str, float]:
        asked.append(load)
        return str(tmp_path / "jobs.parquet"), 86400.0

    def simulate(argv: list[str]) -> dict:
        Path(argv[argv.index("--out") + 1]).write_text(json.dumps({"goodput": 0.5, "latency_mean_s": 3.0}))
        return {"cpu_s": 1.0, "wall_s": 1.0, "rss_mb": 100.0}

    monkeypatch.setattr(bench, "scale_inputs", inputs)
    monkeypatch.setattr(bench, "run_simulate_process", simulate)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: None)  # the `varcap warm` before the rows
    rows = bench.scale([10], ["ff"], str(tmp_path), None, offered_load=0.5)
    assert asked == [0.5] and rows[0]["wait_s"] == 3.0 and rows[0]["days"] == 1.0
    assert "--offered-load 0.5`" in capsys.readouterr().out
