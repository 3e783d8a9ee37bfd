"""Cached scenario runs are verified like raw files; sweeps end what they start (items 2-4).

Each test failed on adfffce: a hand-edited ``terminations`` in ``run.json`` was a cache hit and flowed
into ``out_sim_results``; a row failing a blocking check of ``out_sim_results`` stayed a cache hit forever;
a truncated ``versions.json`` stopped the sweep with an unnamed ``JSONDecodeError``; a scenario had no
timeout; warm worker processes outlived a killed sweep.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from studies import sweep
from studies.catalogue import study
from studies.scenarios import Scenario

REPO = Path(__file__).resolve().parents[2]


def _edit(path: Path, **metrics: object) -> None:
    row = json.loads(path.read_text())
    row["metrics"].update(metrics)
    path.write_text(json.dumps(row))


def test_a_tampered_metric_is_detected_and_the_run_recomputed(tmp_path: Path) -> None:
    sc = study("smoke")[0]
    runs, inputs = tmp_path / "runs", tmp_path / "in"
    first = sweep.run_scenario(sc, inputs, runs)
    assert first["metrics_sha256"] == sweep.metrics_sha256(first["metrics"])
    f = runs / sc.id / "run.json"
    _edit(f, terminations=first["metrics"]["terminations"] + 7)
    rows, problems = sweep.scan_runs(out=runs)  # never collected into out_sim_results …
    assert (
        rows == [] and "metrics do not match their recorded sha256" in problems[0] and str(f) in problems[0]
    )
    again = sweep.run_scenario(sc, inputs, runs)  # … and simulated again
    assert not again["cache_hit"] and again["metrics"] == first["metrics"]
    assert sweep.run_scenario(sc, inputs, runs)["cache_hit"]


def test_a_row_failing_a_blocking_check_is_recomputed_not_kept(tmp_path: Path) -> None:
    """Fractions that do not sum to 1 fail ``out_sim_results``' blocking check; with a matching checksum
    (as a buggy writer would leave it) the row is still not a cache hit."""
    sc = study("smoke")[0]
    runs, inputs = tmp_path / "runs", tmp_path / "in"
    first = sweep.run_scenario(sc, inputs, runs)
    f = runs / sc.id / "run.json"
    row = json.loads(f.read_text())
    row["metrics"]["goodput"] += 0.5
    row["metrics_sha256"] = sweep.metrics_sha256(row["metrics"])
    f.write_text(json.dumps(row))
    assert any("not 1" in p for p in sweep.row_problems(row))
    assert sweep.scan_runs(out=runs)[0] == []
    again = sweep.run_scenario(sc, inputs, runs)
    assert not again["cache_hit"] and again["metrics"] == first["metrics"]


def test_a_truncated_versions_json_is_one_named_error(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "versions.json").write_text('{"jobs_azure.parquet": "ab')
    with pytest.raises(sweep.SweepInputsError) as e:
        sweep.scenario_inputs_version(study("thesis-ch4-synthetic")[0], inputs)
    msg = str(e.value)
    assert "\n" not in msg and str(inputs / "versions.json") in msg and "out_sim_inputs" in msg


def test_cache_writes_leave_no_temp_file_and_are_whole(tmp_path: Path, monkeypatch) -> None:
    """A write that fails midway leaves the previous file and no temporary sibling."""
    p = tmp_path / "run.json"
    sweep.write_json_atomic({"a": 1}, p)

    def boom(path: Path) -> None:
        path.write_text('{"a": 2')
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        sweep._replace_atomically(p, boom)
    assert json.loads(p.read_text()) == {"a": 1} and [x.name for x in tmp_path.iterdir()] == ["run.json"]


def test_a_scenario_over_its_timeout_fails_with_a_message_and_the_sweep_goes_on(
    tmp_path, monkeypatch
) -> None:
    """Two workers; one scenario far longer than the timeout (Python-loop SlackSched on 600 machines over
    60 days: minutes), two smoke ones (seconds). The long one fails naming the timeout; the others finish."""
    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    smoke = study("smoke")
    long = Scenario("zipf-1.5", smoke[0].capacity, "slacksched", machines=600, horizon_days=60.0)
    scs = [smoke[0], long, smoke[2]]
    t0 = time.monotonic()
    seen: dict[str, str | None] = {}
    errors = sweep.run_many(scs, 2, lambda sc, row, err: seen.__setitem__(sc.id, err), timeout_s=25)
    assert time.monotonic() - t0 < 240
    assert len(errors) == 1 and long.id in errors[0] and "did not finish within 25 s" in errors[0], errors
    assert seen[smoke[0].id] is None and seen[smoke[2].id] is None


def test_in_process_timeout_interrupts_python_code(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    sc = study("smoke")[0]
    monkeypatch.setattr(sweep, "run_scenario", lambda sc: time.sleep(30))
    errors = sweep.run_many([sc], 1, timeout_s=1)
    assert len(errors) == 1 and "ScenarioTimeout" in errors[0] and "within 1 s" in errors[0]


_PARENT = """
import sys, time
from studies import sweep
from studies.catalogue import study
from studies.scenarios import Scenario
sweep.start_pool(2, study("smoke"))
ex = sweep._POOL[2]
futs = [ex.submit(sweep._ready, ()) for _ in range(4)]
[f.result() for f in futs]
print(" ".join(str(p) for p in ex._processes), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[1].startswith("Z"))


@contextlib.contextmanager
def _sweep_parent(script: str, home: Path) -> Iterator[tuple[subprocess.Popen, list[int]]]:
    """Run ``script`` (it prints its two pool workers' pids on one line) in a new process; yield it and
    the pids once both workers are alive; SIGKILL whatever of them is still there afterwards."""
    workers: list[int] = []
    parent = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "VARCAP_HOME": str(home)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = parent.stdout.readline() if parent.stdout else ""
        workers = [int(x) for x in line.split()]
        assert len(workers) == 2 and all(_alive(w) for w in workers), line
        yield parent, workers
    finally:
        for w in [parent.pid, *workers]:  # only what this test started, if still there
            if _alive(w):
                os.kill(w, signal.SIGKILL)


def test_workers_die_with_their_parent_on_kill_9(tmp_path: Path) -> None:
    with _sweep_parent(_PARENT, tmp_path) as (parent, workers):
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.2)
        assert not any(_alive(w) for w in workers), "worker processes outlived their killed parent"


_INTERRUPTED = """
import signal, sys
from studies import sweep
from studies.catalogue import study
from studies.scenarios import Scenario

def _stop(signo, frame):
    raise KeyboardInterrupt  # what `varcap` does with SIGTERM (pipelines.cli._terminable_children)

signal.signal(signal.SIGTERM, _stop)
cap = study("smoke")[0].capacity
long = [Scenario("zipf-1.5", cap, "slacksched", machines=600, horizon_days=60.0, seed=s) for s in (0, 1)]
sweep.start_pool(2, long)
ex = sweep._POOL[2]
[f.result() for f in [ex.submit(sweep._ready, ()) for _ in range(4)]]
print(" ".join(str(p) for p in ex._processes), flush=True)
try:
    sweep.run_many(long, 2)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def test_an_interrupted_sweep_ends_its_running_scenarios_at_once(tmp_path: Path) -> None:
    """Ctrl-C / SIGTERM during two scenarios of minutes each: the sweep's process exits within seconds and
    its workers with it. Before, it printed "interrupted" and then waited for both scenarios to finish (the
    interpreter's exit hook joins every process pool): a full ``varcap reproduce`` hung for minutes."""
    with _sweep_parent(_INTERRUPTED, tmp_path) as (parent, workers):
        time.sleep(3)  # both scenarios are running
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=30) == 130
        assert parent.stdout is not None and parent.stdout.read().strip() == "interrupted"
        assert not any(_alive(w) for w in workers), "workers outlived the interrupted sweep"
