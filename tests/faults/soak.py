"""A seeded, randomized soak of the whole workbench (Done-when).

    python -m tests.faults.soak --minutes 10 --seed 1

Until the time is up it picks, at random (every choice from ``--seed``), one of:

* ``sim`` — a random instance (Zipf skew, machines, seed) × a random policy × a random change period
  (the periods that used to hang included) through ``varcap simulate``; sometimes a first process is
  killed with SIGKILL at a random moment. The survivor must finish within the guard, leave no partial
  ``--out``, and two runs must write byte-identical metrics (same config → same digest).
* ``run`` — ``varcap run --groups raw core`` killed with SIGKILL at a random moment, then run again: the
  next run must finish (no wedge: no stale lock, no pool slot or run left behind) and every core table
  must be byte-identical to the first clean build.
* ``sweep`` — ``varcap sweep smoke`` with some cached scenarios deleted, killed at a random moment, then
  run again: it must finish, its workers must die with it, and every scenario's metrics and jobs digests
  must equal the first clean sweep's (byte-identical or rebuilt).
* ``download`` — a hostile server on 127.0.0.1 (truncation, wrong lengths, slow drip, gzip bomb, redirects,
  endless body, HTML, 5xx) against the real :class:`assets.download.Downloader`: each fetch ends within its
  guard with either the server's true bytes or a :class:`~assets.download.DownloadError`; nothing else is
  cached and nothing lands outside the cache.

At the end: one clean ``varcap run`` must work (when runs were exercised), no process of the soak is left,
and nothing outside the soak's home changed in the checkout (``__pycache__`` — Python's and numba's
compile caches — excepted). Counts are printed one ``key=value`` line each; exit 1 on any failure.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
VARCAP = [sys.executable, "-m", "pipelines.cli"]
GUARD_S = 300.0  # a process that takes longer is a hang
PERIODS = (0.7, 1.1, 7.0, 13.0)  # changes per hour that used to spin IAS forever


class Soak:
    """State of one soak: its home, its counters and its failures."""

    def __init__(self, home: Path, seed: int, say: Callable[[str], None] = print) -> None:
        self.home, self.rng, self.say = home, random.Random(seed), say
        self.counts: Counter[str] = Counter()
        self.failures: list[str] = []
        self.ref_tables: dict[str, str] | None = None
        self.ref_sweep: dict[str, tuple[str, str]] | None = None
        (home / "data").mkdir(parents=True, exist_ok=True)
        (home / "tmp").mkdir(exist_ok=True)
        if not (home / "data" / "samples").exists():
            (home / "data" / "samples").symlink_to(REPO / "data" / "samples")
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("VARCAP_WAREHOUSE", "VARCAP_RAW_CACHE", "VARCAP_DEBUG", "DAGSTER_HOME")
        }
        self.env.update(
            VARCAP_HOME=str(home),
            DAGSTER_HOME=str(home / ".dagster_home"),
            TMPDIR=str(home / "tmp"),
            VARCAP_SOURCE="sample",
            VARCAP_SCENARIO_TIMEOUT_S="240",
            PYTHONPATH=str(REPO),
            COLUMNS="200",
        )

    # ------------------------------------------------------------------------------------ helpers
    def fail(self, what: str) -> None:
        self.counts["failures"] += 1
        self.failures.append(what)
        self.say(f"FAIL {what}")

    def _start(self, args: list[str], log: Path) -> subprocess.Popen:
        with open(log, "w") as out:
            return subprocess.Popen(
                [*VARCAP, *args],
                cwd=self.home,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def _finish(self, p: subprocess.Popen, what: str, log: Path) -> int | None:
        """Wait for ``p`` within the guard; a hang is a failure (the process group is killed)."""
        try:
            return p.wait(timeout=GUARD_S)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            self.fail(f"{what}: no end within {GUARD_S:g} s (hang); log {log}")
            return None

    def run_cli(self, args: list[str], what: str, kill_after: float | None = None) -> tuple[int | None, str]:
        """Run ``varcap ARGS``; with ``kill_after``, SIGKILL the process (not its group: its workers must
        notice on their own) after that many seconds. Returns (exit code or None, output)."""
        slug = "".join(c if c.isalnum() else "_" for c in what)[:60]
        log = self.home / "tmp" / f"{self.counts['processes']:04d}-{slug}.log"
        self.counts["processes"] += 1
        p = self._start(args, log)
        if kill_after is not None:
            try:
                p.wait(timeout=kill_after)
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                p.wait()
                self.counts["kills"] += 1
                self.counts[f"kills_{what.split()[0]}"] += 1  # kills_sim, kills_run, kills_sweep
                return None, log.read_text(errors="replace")
        rc = self._finish(p, what, log)
        return rc, log.read_text(errors="replace")

    def others_alive(self, wait_s: float = 15.0) -> list[int]:
        """Processes (other than this one) running with this soak's VARCAP_HOME, after up to ``wait_s``."""
        import psutil

        deadline = time.monotonic() + wait_s
        while True:
            left = []
            for pr in psutil.process_iter(["pid"]):
                if pr.pid == os.getpid():
                    continue
                try:
                    if pr.environ().get("VARCAP_HOME") == str(self.home):
                        left.append(pr.pid)
                except (psutil.Error, OSError):
                    continue
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.5)

    def wedge_check(self, what: str) -> None:
        """No stale lock on the warehouse, no pool slot held and no unfinished run left behind."""
        import dagster as dg
        import duckdb

        wh = self.home / "data" / "warehouse.duckdb"
        if wh.exists():
            try:
                duckdb.connect(str(wh)).close()
            except duckdb.Error as e:
                self.fail(f"{what}: the warehouse stays locked ({e})")
        dh = self.home / ".dagster_home"
        if not (dh / "dagster.yaml").exists():
            return
        with dg.DagsterInstance.from_config(str(dh)) as inst:
            slots = inst.event_log_storage.get_concurrency_info("duckdb_write").claimed_slots
            if slots:
                self.fail(f"{what}: pool slots still claimed by {[s.run_id for s in slots]}")
            busy = inst.get_runs(
                filters=dg.RunsFilter(
                    statuses=[
                        dg.DagsterRunStatus.STARTED,
                        dg.DagsterRunStatus.STARTING,
                        dg.DagsterRunStatus.QUEUED,
                    ]
                )
            )
            if busy:
                self.fail(f"{what}: runs left {[r.status.value for r in busy]} after the next run finished")

    # ------------------------------------------------------------------------------------- digests
    def table_digests(self) -> dict[str, str]:
        """sha256 of every core table's rows (sorted on every column) and of its rejects."""
        import duckdb

        con = duckdb.connect(str(self.home / "data" / "warehouse.duckdb"), read_only=True)
        try:
            out = {}
            names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
            for t in sorted(n for n in names if n.startswith("core_") and n != "core_builds"):
                cols = [r[0] for r in con.execute(f"DESCRIBE {t}").fetchall() if r[0] != "registered_at"]
                order = ", ".join(f'"{c}"' for c in cols)
                rows = con.execute(f"SELECT {order} FROM {t} ORDER BY {order}").fetchall()
                out[t] = hashlib.sha256(repr(rows).encode()).hexdigest()
            return out
        finally:
            con.close()

    def sweep_digests(self) -> dict[str, tuple[str, str]]:
        """Per scenario of the sweep cache: (metrics_sha256, jobs_sha256)."""
        out = {}
        for f in sorted((self.home / "data" / "sim" / "runs").glob("*/run.json")):
            r = json.loads(f.read_text())
            out[r["scenario_id"]] = (r["metrics_sha256"], r["jobs_sha256"])
        return out

    # -------------------------------------------------------------------------------------- phases
    def phase_sim(self) -> None:
        from sim.policies import available, get_policy
        from sim.workloads.generators import zipf_workload

        rng = self.rng
        # ``defer`` and ``ias-forecast`` read a grid signal, which `varcap simulate` has no option to pass (a
        # one-line refusal; defer's is tested in test_cli_strict); the soak draws the policies a CLI user can run:
        # not one another test registered in this process (the CLI subprocess would not know it)
        policy = rng.choice(
            [
                p
                for p in available()
                if p not in ("defer", "ias-forecast") and type(get_policy(p)).__module__.startswith("sim.policies.")
            ]
        )
        cph = rng.choice(PERIODS) if rng.random() < 0.4 else round(rng.uniform(0.25, 40.0), 3)
        machines, seed = rng.randint(3, 10), rng.randint(0, 10_000)
        skew = rng.choice((1.1, 1.5, 2.0))
        horizon = 3 * 3600.0
        d = self.home / "tmp" / f"sim{self.counts['sims']}"
        d.mkdir()
        zipf_workload(
            skew, machines, 4.0, horizon, seed=seed, cores_choices=(1, 2, 4), cores_probs=(0.5, 0.3, 0.2)
        ).write_csv(d / "jobs.csv")
        cap = f"random-walk:changes_per_hour={cph},step=0.15,seed={seed}"
        base = [
            "simulate",
            "--jobs",
            str(d / "jobs.csv"),
            "--capacity",
            cap,
            "--machines",
            str(machines),
            "--cores",
            "4",
            "--horizon-s",
            str(horizon),
            "--policy",
            policy,
            "--seed",
            str(seed),
        ]
        what = f"sim {policy} {cph}/h m={machines} seed={seed}"
        self.counts["sims"] += 1
        if rng.random() < 0.5:
            rc, _ = self.run_cli(
                [*base, "--out", str(d / "a.json")], what + " (killed)", kill_after=rng.uniform(0.5, 6)
            )
            self.counts["recoveries"] += rc is None
        digests = []
        for name in ("a.json", "b.json"):
            rc, out = self.run_cli([*base, "--out", str(d / name)], what)
            if rc is None:
                return
            if rc != 0:
                self.fail(f"{what}: exit {rc}: {out.strip().splitlines()[-1:]}")
                return
            digests.append(hashlib.sha256((d / name).read_bytes()).hexdigest())
        left = sorted(p.name for p in d.iterdir() if p.name not in ("jobs.csv", "a.json", "b.json"))
        if left:
            self.fail(f"{what}: partial outputs left: {left}")
        if digests[0] != digests[1]:
            self.fail(f"{what}: same config, different metrics ({digests})")
        self.say(f"sim ok: {what}")

    def phase_run(self) -> None:
        if self.ref_tables is None:
            self._clean_run("first run")
            return
        delay = self.rng.uniform(1.0, 40.0)
        rc, _ = self.run_cli(["run", "--groups", "raw", "core"], "run (killed)", kill_after=delay)
        if rc is not None:
            self.say(f"run finished before its kill at {delay:.1f} s (exit {rc})")
        self._clean_run(f"run after a kill at {delay:.1f} s" if rc is None else "run")

    def _clean_run(self, what: str) -> None:
        self.counts["runs"] += 1
        rc, out = self.run_cli(["run", "--groups", "raw", "core"], what)
        if rc is None:
            return
        if rc != 0:
            self.fail(f"{what}: exit {rc}: {out.strip().splitlines()[-3:]}")
            return
        if "freed" in out or "marked" in out:
            self.counts["recoveries"] += 1
        self.wedge_check(what)
        digests = self.table_digests()
        if self.ref_tables is None:
            self.ref_tables = digests
        elif digests != self.ref_tables:
            diff = sorted(t for t in {*digests, *self.ref_tables} if digests.get(t) != self.ref_tables.get(t))
            self.fail(f"{what}: tables differ from the first build: {diff}")
        self.say(f"run ok: {what} ({len(digests)} tables identical)")

    def phase_sweep(self) -> None:
        runs = self.home / "data" / "sim" / "runs"
        if self.ref_sweep is None:
            self._clean_sweep("first sweep")
            return
        for d in sorted(runs.iterdir()):
            if self.rng.random() < 0.5:
                shutil.rmtree(d)  # so the killed sweep is simulating, not reading its cache
        delay = self.rng.uniform(2.0, 25.0)
        rc, _ = self.run_cli(["sweep", "smoke", "--max-workers", "2"], "sweep (killed)", kill_after=delay)
        if rc is None:
            left = self.others_alive()
            if left:
                self.fail(f"sweep killed at {delay:.1f} s: processes {left} outlived it")
                for pid in left:
                    os.kill(pid, signal.SIGKILL)
        self._clean_sweep(f"sweep after a kill at {delay:.1f} s" if rc is None else "sweep")

    def _clean_sweep(self, what: str) -> None:
        self.counts["sweeps"] += 1
        rc, out = self.run_cli(["sweep", "smoke", "--max-workers", "2"], what)
        if rc is None:
            return
        if rc != 0:
            self.fail(f"{what}: exit {rc}: {out.strip().splitlines()[-3:]}")
            return
        self.wedge_check(what)
        digests = self.sweep_digests()
        if self.ref_sweep is None:
            self.ref_sweep = digests
        elif digests != self.ref_sweep:
            self.fail(f"{what}: scenario digests differ from the first sweep")
        self.say(f"sweep ok: {what} ({len(digests)} scenarios identical)")

    def phase_download(self, server: Any) -> None:
        from assets.download import Downloader, DownloadError
        from tests.httpserver import Route

        rng = self.rng
        body = b"Datetime,Price (USD/MWh)\n" + b"".join(
            f"2024-01-01 {i % 24:02d}:00:00,{rng.randint(-50, 500)}.5\n".encode()
            for i in range(rng.randint(50, 3000))
        )
        attacks: dict[str, Callable[[], Route]] = {
            "plain": lambda: Route(body, "text/csv"),
            "5xx then ok": lambda: Route(
                body, "text/csv", fail_first=[rng.choice((500, 502, 503))] * rng.randint(1, 2)
            ),
            "5xx forever": lambda: Route(body, "text/csv", fail_first=[500] * 20, echo_query=True),
            "truncated": lambda: Route(
                body, "text/csv", etag='"v1"', cut_after=rng.randint(1, len(body) - 1)
            ),
            "truncated, no length": lambda: Route(
                body, "text/csv", no_length=True, cut_after=rng.randint(1, len(body) - 1)
            ),
            "short length": lambda: Route(body, "text/csv", length_delta=-rng.randint(1, 40)),
            "long length": lambda: Route(body, "text/csv", length_delta=rng.randint(1, 400)),
            "slow drip": lambda: Route(body, "text/csv", drip_s=0.05),
            "endless": lambda: Route(body, "text/csv", endless=True),
            "gzip bomb": lambda: Route(gzip.compress(b"0" * (80 << 20)), "application/gzip"),
            "html": lambda: Route(b" " * 600 + b"<html><body>login</body></html>", "text/html"),
            "redirect": lambda: Route(body, "text/csv", redirect=server.base + "/target.csv"),
            "redirect loop": lambda: Route(body, "text/csv", redirect=server.base + "/loop.csv"),
            "redirect elsewhere": lambda: Route(body, "text/csv", redirect="http://127.0.0.1:9/x.csv"),
            "redirect to a file": lambda: Route(body, "text/csv", redirect="file:///etc/passwd"),
        }
        name = rng.choice(sorted(attacks))
        route = attacks[name]()
        n = self.counts["downloads"]
        self.counts["downloads"] += 1
        if name == "redirect":
            server.add("/target.csv", Route(body, "text/csv"))
        path = "/loop.csv" if name == "redirect loop" else f"/d{n}.csv"
        url = server.add(path, route) + "?api_key=SOAKSECRET"
        cache = self.home / "data" / "raw"
        dl = Downloader(cache, retries=2, backoff_s=0.01, deadline_s=4.0, progress=False)
        dest = f"soak/d{n}.{'csv.gz' if name == 'gzip bomb' else 'csv'}"
        out: dict[str, Any] = {}

        def _go() -> None:
            try:
                out["res"] = dl.fetch(url, dest, expect="csv", max_bytes=2 << 20)
            except DownloadError as e:
                out["refused"] = str(e)
            except BaseException as e:  # noqa: BLE001  # anything else is a defect
                out["error"] = e

        t = threading.Thread(target=_go, daemon=True)
        t0 = time.monotonic()
        t.start()
        t.join(60)
        what = f"download {name}"
        if t.is_alive():
            self.fail(f"{what}: still running after 60 s")
            return
        if "error" in out:
            e = out["error"]
            self.fail(f"{what}: {type(e).__name__} (not a DownloadError): {e}")
        elif "refused" in out:
            self.counts["downloads_refused"] += 1
            if "SOAKSECRET" in out["refused"]:
                self.fail(f"{what}: the secret is in the error: {out['refused'][:200]}")
            if "\n" in out["refused"].strip():
                self.fail(f"{what}: a multi-line error")
            if not out["refused"].partition("api_key=***")[2].strip(": "):
                self.fail(f"{what}: the error says no reason: {out['refused'][:200]}")
        else:
            got = out["res"].path.read_bytes()
            self.counts["downloads_ok"] += 1
            if got != body:
                self.fail(f"{what}: cached {len(got)} bytes that are not the server's {len(body)}")
        for p in cache.rglob("*"):
            if p.is_symlink() or not p.resolve().is_relative_to(cache.resolve()):
                self.fail(f"{what}: {p} leads outside the cache")
        verdict = "refused" if "refused" in out else "error" if "error" in out else "ok"
        self.say(f"download {name}: {verdict} in {time.monotonic() - t0:.1f} s")


# ------------------------------------------------------------------------------------- escape check
def tree_state(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime_ns) of every file under ``root``, leaving out .git, .venv, ``__pycache__`` and ``skip``."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        dirnames[:] = [
            n
            for n in dirnames
            if n not in (".git", ".venv", "__pycache__", ".hypothesis", ".pytest_cache", ".ruff_cache")
            and d / n != skip
        ]
        for n in filenames:
            p = d / n
            try:
                st = p.lstat()
            except OSError:
                continue
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


def soak(
    seconds: float, seed: int, home: Path, phases: tuple[str, ...], say: Callable[[str], None] = print
) -> Soak:
    """Run the soak for about ``seconds`` (a phase started before the end runs to its end)."""
    from tests.httpserver import FixtureServer

    before = tree_state(REPO, home)
    s = Soak(home, seed, say)
    weights = {"sim": 4, "download": 6, "run": 2, "sweep": 1}
    picks = [p for p in phases if p in weights]
    t_end = time.monotonic() + seconds
    with FixtureServer() as server:
        while time.monotonic() < t_end:
            phase = s.rng.choices(picks, weights=[weights[p] for p in picks])[0]
            if phase == "download":
                s.phase_download(server)
            else:
                getattr(s, f"phase_{phase}")()
    if "run" in picks:
        s._clean_run("closing run")
    left = s.others_alive(wait_s=10)
    if left:
        s.fail(f"processes left running: {left}")
    after = tree_state(REPO, home)
    changed = sorted(k for k in {*before, *after} if before.get(k) != after.get(k))
    if changed:
        s.fail(f"files outside the home changed: {changed[:10]}")
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.faults.soak", description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="how long to keep starting phases")
    ap.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    ap.add_argument("--home", type=Path, help="the soak's VARCAP_HOME (default: a new temporary directory)")
    ap.add_argument("--phases", default="sim,download,run,sweep", help="comma-separated subset")
    ap.add_argument("--keep", action="store_true", help="keep the home afterwards")
    a = ap.parse_args(argv)
    home = a.home or Path(tempfile.mkdtemp(prefix="varcap-soak-"))
    load = os.getloadavg()
    print(
        f"soak: seed={a.seed} minutes={a.minutes:g} home={home} load={load[0]:.2f},{load[1]:.2f},{load[2]:.2f}",
        flush=True,
    )
    t0 = time.monotonic()
    s = soak(
        a.minutes * 60, a.seed, home.resolve(), tuple(a.phases.split(",")), lambda m: print(m, flush=True)
    )
    for k in (
        "sims",
        "runs",
        "sweeps",
        "kills",
        "kills_sim",
        "kills_run",
        "kills_sweep",
        "recoveries",
        "downloads",
        "downloads_ok",
        "downloads_refused",
        "processes",
        "failures",
    ):
        print(f"{k}={s.counts[k]}")
    print(f"wall_s={time.monotonic() - t0:.0f}")
    print(f"load_end={os.getloadavg()[0]:.2f}")
    if not a.keep and not a.home:
        shutil.rmtree(home, ignore_errors=True)
    return 1 if s.failures else 0


if __name__ == "__main__":
    sys.exit(main())
