"""Benchmark of a study launched from the Dagster UI against the same study through ``varcap sweep``:
wall seconds from launch to ``out_sim_results`` rebuilt, every scenario simulating (prints figures; no
timed test).

Usage::

    python -m pipelines.bench_ui                # bench-defer with one seed (40 scenarios); target UI ≤ 1.5× CLI
    python -m pipelines.bench_ui --seeds 2 --runs 3

In a fresh ``VARCAP_HOME`` prepared as :mod:`pipelines.bench_sweep` does (warehouse copy, the
``bench-defer`` study file, warm numba, exported inputs; untimed), each round times, with the study's runs
removed before each launch so that every scenario simulates:

* ``varcap sweep bench-defer`` as a whole process (the yardstick);
* ``study__bench_defer`` launched on ``varcap ui``'s ``dagster dev`` through its GraphQL API (the request
  the launchpad's "Launch run" sends), until the run ends;
* a backfill of every partition of ``out_sim__bench_defer`` (the asset page's "Materialize all"), until
  the automation sensor has rebuilt ``out_sim_results`` after it (the backfill daemon and the sensor each
  tick every 30 s); ``--no-backfill`` leaves it out.

The UI's server is started once (untimed) and its launches share the machine with it, as a user's would.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pipelines.bench import _cli, source_tree, timed_process
from pipelines.bench_sweep import STUDY, _home

JOB = "study__" + STUDY.replace("-", "_")
ASSET = "out_sim__" + STUDY.replace("-", "_")
TARGET_RATIO = 1.5

_LAST_MATERIALIZATION = """
query ($path: [String!]!) {
  assetNodeOrError(assetKey: {path: $path}) {
    ... on AssetNode { assetMaterializations(limit: 1) { timestamp } }
  }
}"""

_BACKFILL = """
mutation ($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
  }
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _clear_runs(home: Path) -> None:
    """Every cached run of the home (so the next launch simulates the whole study again)."""
    shutil.rmtree(home / "data" / "sim" / "runs", ignore_errors=True)


def _gql(client, query: str, variables: dict) -> dict:
    return client._execute(query, variables)  # the client's own request path (dagster_graphql)


def _wait_server(client, proc: subprocess.Popen, timeout_s: float = 600.0) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        if proc.poll() is not None:
            raise SystemExit(f"varcap ui exited with {proc.returncode} before it served")
        try:
            out = _gql(
                client,
                "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }",
                {},
            )
            entries = out["workspaceOrError"]["locationEntries"]
            if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                return
        except Exception:  # noqa: BLE001 — not listening yet
            pass
        time.sleep(1.0)
    raise SystemExit(f"varcap ui did not load its code location in {timeout_s:.0f} s")


def _last_results_ts(client) -> float:
    node = _gql(client, _LAST_MATERIALIZATION, {"path": ["out_sim_results"]})["assetNodeOrError"]
    mats = node.get("assetMaterializations") or []
    return float(mats[0]["timestamp"]) / 1000.0 if mats else 0.0


def launch_run(client, poll_s: float = 0.5) -> float:
    """Launch :data:`JOB` as the launchpad does and wait for it to end: wall seconds (SystemExit if the
    run does not succeed)."""
    from dagster import DagsterRunStatus

    t0 = time.perf_counter()
    run_id = client.submit_job_execution(
        JOB, repository_location_name="varcap", repository_name="__repository__"
    )
    while (status := client.get_run_status(run_id)) not in (
        DagsterRunStatus.SUCCESS,
        DagsterRunStatus.FAILURE,
        DagsterRunStatus.CANCELED,
    ):
        time.sleep(poll_s)
    if status != DagsterRunStatus.SUCCESS:
        raise SystemExit(f"{JOB} run {run_id}: {status.value}")
    return time.perf_counter() - t0


def launch_backfill(client, keys: list[str], poll_s: float = 1.0, timeout_s: float = 1800.0) -> float:
    """Backfill every partition of :data:`ASSET` and wait until ``out_sim_results`` is materialized after
    the launch (by the automation sensor): wall seconds."""
    t0, since = time.perf_counter(), time.time()
    out = _gql(
        client,
        _BACKFILL,
        {"params": {"partitionNames": keys, "assetSelection": [{"path": [ASSET]}]}},
    )["launchPartitionBackfill"]
    if out["__typename"] != "LaunchBackfillSuccess":
        raise SystemExit(f"backfill of {ASSET}: {out.get('message', out['__typename'])}")
    while _last_results_ts(client) <= since:
        if time.perf_counter() - t0 > timeout_s:
            raise SystemExit(f"out_sim_results not rebuilt {timeout_s:.0f} s after the backfill")
        time.sleep(poll_s)
    return time.perf_counter() - t0


def bench(tree: Path, seeds: int, runs: int, backfill: bool) -> dict[str, list[float]]:
    """Wall seconds per round: ``cli``, ``ui_run`` and (``backfill``) ``ui_backfill``."""
    from dagster_graphql import DagsterGraphQLClient

    out: dict[str, list[float]] = {"cli": [], "ui_run": [], **({"ui_backfill": []} if backfill else {})}
    with tempfile.TemporaryDirectory(prefix="varcap-bench-ui-", ignore_cleanup_errors=True) as d:
        home = Path(d)
        env = _home(tree, home, seeds)
        env = {**env, "PYTHONWARNINGS": "ignore"}
        port = _free_port()
        ui = subprocess.Popen(
            [*_cli("ui", "--port", str(port))],
            cwd=tree,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            client = DagsterGraphQLClient("127.0.0.1", port_number=port, timeout=60)
            _wait_server(client, ui)
            keys = _study_keys(tree, env)
            for _ in range(runs):
                _clear_runs(home)
                out["cli"].append(timed_process(_cli("sweep", STUDY, "--max-workers", "2"), tree, env)[0])
                _clear_runs(home)
                out["ui_run"].append(launch_run(client))
                if backfill:
                    _clear_runs(home)
                    out["ui_backfill"].append(launch_backfill(client, keys))
                print("round:", {k: round(v[-1], 1) for k, v in out.items()}, flush=True)
        finally:
            os.killpg(ui.pid, 15)
            try:
                ui.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(ui.pid, 9)
    return out


def _study_keys(tree: Path, env: dict[str, str]) -> list[str]:
    """The study's partition keys, as the home's catalogue gives them (a child process: the home's study
    file is read there)."""
    code = f"from studies import catalogue; print('\\n'.join(catalogue.partition_keys({STUDY!r}).values()))"
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, check=True
    )
    return r.stdout.splitlines()


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m pipelines.bench_ui", description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1, help="seeds of the study (40 scenarios each)")
    ap.add_argument("--runs", type=int, default=1, help="rounds (median)")
    ap.add_argument("--no-backfill", action="store_true", help="leave the backfill path out")
    a = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    with source_tree(None) as tree:
        r = bench(tree, a.seeds, a.runs, not a.no_backfill)
    med = {k: statistics.median(v) for k, v in r.items()}
    print(f"{STUDY}: {40 * a.seeds} scenarios, every one simulating; wall s, median of {a.runs}; "
          f"load {load0:.1f} → {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
    print(f"{'varcap sweep (CLI)':34s} {med['cli']:7.1f}")
    ratio = med["ui_run"] / med["cli"]
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    print(
        f"{'UI: launch ' + JOB:34s} {med['ui_run']:7.1f}  {ratio:.2f}× CLI (target ≤ {TARGET_RATIO}: {verdict})"
    )
    if "ui_backfill" in med:
        print(
            f"{'UI: backfill ' + ASSET:34s} {med['ui_backfill']:7.1f}  {med['ui_backfill'] / med['cli']:.2f}× CLI"
        )


if __name__ == "__main__":
    main()
