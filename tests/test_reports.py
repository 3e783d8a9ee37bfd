"""Report assets end to end on a small fixture warehouse: every chapter notebook executes headless into
HTML with its figures, the index links every chapter with thumbnails and the reproduction table, and a
headless Chromium (Debian's ``chromium``; skipped where it is not installed) sees the figures drawn.

The fixture builds raw → core → capacity/intervals on small capacity settings, simulates a tiny
reproduction profile (one replicate, short horizons: 47 scenarios; SlackSched with waiting, the slowest
loop, left out) and materializes the reports group: the tests using it are marked ``slow`` (eight
notebook kernels plus the simulations; a few minutes on a busy 2-core machine), built once for all."""

from __future__ import annotations

import base64
import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import nbformat
import polars as pl
import pytest

from tests.conftest import REPO, SAMPLES

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_notebooks_are_stored_without_outputs() -> None:
    """Outputs are stripped in git: the reports hold the executed versions."""
    assert len(NOTEBOOKS) >= 8
    for p in NOTEBOOKS:
        nb = nbformat.read(p, as_version=4)
        for c in nb.cells:
            if c.cell_type == "code":
                assert c.outputs == [] and c.execution_count is None, f"{p.name}: strip outputs (nbstripout)"


def test_every_chapter_has_a_notebook_and_a_parameters_cell() -> None:
    from assets.reports import CHAPTERS

    for ch in CHAPTERS:
        nb = nbformat.read(REPO / "notebooks" / f"{ch.name}.ipynb", as_version=4)
        tags = [t for c in nb.cells for t in c.metadata.get("tags", [])]
        assert "parameters" in tags, ch.name
        src = "\n".join(c.source for c in nb.cells)
        assert "connect()" in src and "show(" in src, ch.name  # reads the warehouse, draws figures


def test_study_membership_and_workload_stats() -> None:
    from assets.reports import study_membership, workload_stats_frame
    from studies import reproduction as repro
    from studies.thesis.scenarios import ch4_scenarios

    m = study_membership([repro.QUICK])
    ch4 = m.filter(pl.col("base_study") == "repro-thesis-ch4")
    assert set(ch4["study"]) == {"repro-thesis-ch4-quick"}
    assert ch4.height == len({s.id for s in ch4_scenarios(repro.QUICK).values()})
    assert json.loads(ch4["key_json"][0])[-1] == ch4["replicate"][0]
    jobs = pl.DataFrame(
        {
            "workload": ["azure"] * 4,
            "duration_s": [3600.0, 7200.0, 10800.0, 14400.0],
            "cores": [1.0, 2.0, 2.0, 8.0],
            "memory_gb": [4.0, None, 8.0, 8.0],
        }
    )
    zipf = {"zipf-1.5": pl.DataFrame({"duration_s": [300.0, 600.0], "cores": [1.0, 2.0]})}
    st = workload_stats_frame(jobs, zipf)
    az = st.filter(pl.col("workload") == "azure").row(0, named=True)
    assert az["jobs"] == 4 and az["duration_mean_h"] == 2.5 and az["memory_mean_gb"] == pytest.approx(20 / 3)
    assert az["paper_duration_mean_h"] == 60.0
    z = st.filter(pl.col("workload") == "zipf-1.5").row(0, named=True)
    assert z["paper_duration_mean_h"] == 11.73 and z["memory_mean_gb"] is None


# ------------------------------------------------------------------------------------------ end to end
SMALL_CAPACITY = {"machines": 50, "days": 3.0, "frequencies": [1.0, 8.0], "steps": [0.15, 0.6]}


def _tiny_profile():
    from studies.reproduction import Profile

    # named quick: the reports and out_reproduction have one partition per profile (quick, full)
    return Profile(
        "quick", 1, (1.0, 8.0), (0.6,), 1.0, 20, 2.0, 1.0, 50, 1.0, 0.1, 1.0, 0.25, (8,), (1.5,), (300.0,)
    )


def _simulate(scenarios: list) -> None:
    """Run ``scenarios`` on two spawned processes (as ``varcap reproduce`` does)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from studies import reproduction as repro

    with ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as ex:
        list(ex.map(repro._run_one, [s.params() for s in scenarios]))


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dg.ExecuteInProcessResult]]:
    from studies import reproduction as repro
    from studies.catalogue import STUDIES

    home = tmp_path_factory.mktemp("home")
    (home / "data").mkdir()
    (home / "data" / "samples").symlink_to(SAMPLES)
    tiny = _tiny_profile()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VARCAP_HOME", str(home))
        mp.setenv("VARCAP_WAREHOUSE", str(home / "data" / "warehouse.duckdb"))
        mp.delenv("VARCAP_SOURCE", raising=False)
        mp.delenv("VARCAP_RAW_CACHE", raising=False)
        mp.setitem(repro.PROFILES, "quick", tiny)
        for base, build in repro.STUDY_BUILDERS.items():
            mp.setitem(STUDIES, repro.study_name(base, tiny), lambda b=build: list(b(tiny).values()))
        from pipelines.definitions import ALL_ASSETS, ALL_CHECKS, defs, resources

        def run(
            keys: list[str], config: dict | None = None, partition_key: str | None = None
        ) -> dg.ExecuteInProcessResult:
            return dg.materialize(
                [*ALL_ASSETS, *ALL_CHECKS],
                selection=[dg.AssetKey(k) for k in keys],
                resources=resources(),
                run_config={"ops": config or {}},
                partition_key=partition_key,
            )

        graph = defs.resolve_asset_graph()
        base = dg.AssetSelection.groups("raw", "core", "capacity", "intervals").resolve(graph)
        first = [k.to_user_string() for k in base] + [
            "out_sim_inputs",
            "out_sim_grid_signals",
            "out_study_scenarios",
            "out_workload_stats",
        ]
        run(first, {"out_capacity_traces": {"config": SMALL_CAPACITY}})
        # the backtest chapter reads out_backtest (its quick partition: the embedded SGIP sample, ~10 CPU s)
        run(["out_backtest", "out_backtest_errors"], partition_key="quick")
        # Harmony's chapter reads the harmony_* tables (`varcap sweep harmony`, minutes): tiny ones here
        import duckdb

        from assets.warehouse import write_tables
        from tests.test_analysis_harmony import warehouse_tables

        with duckdb.connect(str(home / "data" / "warehouse.duckdb")) as con:
            write_tables(con, warehouse_tables())
        # SlackSched with waiting is the slowest loop by far: its chapter draws the other schedulers
        _simulate([s for s in repro.profile_scenarios(tiny) if s.policy != "slacksched"])
        reports = [k.to_user_string() for k in dg.AssetSelection.groups("reports").resolve(graph)]
        res = run(
            ["out_study_results", "out_reproduction", *[k for k in reports if k.startswith("report_")]],
            partition_key="quick",
        )
        yield home, res


@pytest.mark.slow
def test_every_chapter_report_renders_with_figures(reports) -> None:
    from assets.reports import CHAPTERS

    home, res = reports
    assert res.success
    out = home / "data" / "reports"
    meta = {
        m.asset_key.to_user_string(): m.metadata
        for m in (e.event_specific_data.materialization for e in res.get_asset_materialization_events())
    }
    for ch in CHAPTERS:
        html = (out / f"{ch.name}.html").read_text()
        md = meta[f"report_{ch.name}"]
        assert md["path"].value == str(out / f"{ch.name}.html")
        n = md["figures"].value
        assert n >= 1 and len(re.findall(r'<img[^>]+src="data:image/png;base64,', html)) >= n, ch.name
        assert "Error loading script" not in html and "cdn.jsdelivr.net/npm/vega" not in html
        assert (
            "Traceback" not in html
            and 'class="jp-OutputArea-output" data-mime-type="application/vnd.jupyter.stderr"' not in html
        )
        names = json.loads((out / "figures" / ch.name / "manifest.json").read_text())
        assert len(names) == n and all(
            (out / "figures" / ch.name / f"{x}.png").stat().st_size > 5_000 for x in names
        )
    # the (tiny) profile of the partition is what the chapters show
    assert "profile quick" in (out / "ch4_variable_capacity.html").read_text()


@pytest.mark.slow
@pytest.mark.slow
def test_every_chapter_page_shows_its_provenance(reports) -> None:
    from assets.reports import CHAPTERS

    home, _ = reports
    for ch in CHAPTERS:
        page = (home / "data" / "reports" / f"{ch.name}.html").read_text()
        assert 'class="varcap-provenance"' in page and "<th>commit</th>" in page, ch.name
        prov = json.loads((home / "data" / "reports" / "figures" / ch.name / "provenance.json").read_text())
        assert prov["chapter"] == ch.name and prov["profile"] in ("quick", "full", "auto") and prov["commit"]


def test_index_links_every_chapter_with_thumbnails_and_reproduction_table(reports) -> None:
    from assets.reports import CHAPTERS

    home, res = reports
    idx = (home / "data" / "reports" / "index.html").read_text()
    for ch in CHAPTERS:
        assert f'href="{ch.name}.html"' in idx and f'src="thumbs/{ch.name}.png"' in idx
    assert "thesis-6.2-ias-cut-zipf-1.5" in idx and "<table>" in idx


@pytest.mark.slow
def test_readme_figures_are_copied_from_reports(reports, tmp_path, monkeypatch) -> None:
    from assets.reports import copy_readme_figures, readme_figures

    home, _ = reports
    monkeypatch.setenv("VARCAP_HOME", str(home))
    out, kept = copy_readme_figures(tmp_path / "figs")
    assert sorted(p.stem for p in out) == sorted(readme_figures()) and kept == []
    monkeypatch.setenv("VARCAP_HOME", str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="varcap run"):
        copy_readme_figures(tmp_path / "figs2")


# ------------------------------------------------------------------------------------- headless browser
def chromium() -> str | None:
    return next(
        (p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))), None
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """Headless Chromium driven over the DevTools protocol (websocket-client): navigate, evaluate."""

    def __init__(self, exe: str, profile: Path) -> None:
        import websocket

        port = _free_port()
        self.proc = subprocess.Popen(
            [
                exe,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--window-size=1280,1600",
                f"--remote-debugging-port={port}",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import urllib.request

        deadline = time.time() + 30
        while True:
            try:
                targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=2))
                ws = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
                break
            except Exception:
                if time.time() > deadline:
                    self.close()
                    raise
                time.sleep(0.2)
        self.ws = websocket.create_connection(ws, timeout=60, suppress_origin=True)
        self.n = 0

    def call(self, method: str, **params) -> dict:
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.n:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def open(self, url: str) -> None:
        self.call("Page.enable")
        self.call("Page.navigate", url=url)
        deadline = time.time() + 30
        while self.eval("document.readyState") != "complete" or not self.eval(
            "Array.from(document.images).every(i => i.complete)"
        ):
            if time.time() > deadline:
                raise TimeoutError(url)
            time.sleep(0.2)

    def eval(self, js: str):
        r = self.call("Runtime.evaluate", expression=js, returnByValue=True, awaitPromise=True)
        return r["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()
        self.proc.terminate()
        self.proc.wait(10)


#: For each image: natural size and how many of 400 sampled pixels are not background (white/transparent).
DRAWN_JS = """
Array.from(document.images).map(img => {
  const c = document.createElement('canvas');
  c.width = img.naturalWidth; c.height = img.naturalHeight;
  if (!c.width || !c.height) return {w: 0, h: 0, ink: 0, src: img.src.slice(0, 60)};
  const g = c.getContext('2d'); g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data;
  let ink = 0;
  for (let k = 0; k < 400; k++) {
    const i = 4 * Math.floor((k / 400) * (d.length / 4));
    if (d[i + 3] > 0 && (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240)) ink++;
  }
  let anyInk = 0;
  for (let i = 0; i < d.length; i += 4 * 97) if (d[i + 3] > 0 && d[i] < 200) { anyInk = 1; break; }
  return {w: img.naturalWidth, h: img.naturalHeight, ink: ink + anyInk, src: img.src.slice(0, 60)};
})
"""


@pytest.fixture
def served(reports) -> Iterator[str]:
    home, _ = reports
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(home / "data" / "reports")
    )
    handler.log_message = lambda *a: None  # type: ignore[method-assign]
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


@pytest.mark.slow
@pytest.mark.skipif(chromium() is None, reason="needs Debian's chromium (apt-get install chromium)")
def test_browser_sees_figures_drawn(served, tmp_path) -> None:
    from assets.reports import CHAPTERS

    b = Browser(chromium(), tmp_path / "profile")
    try:
        b.open(f"{served}/index.html")
        thumbs = b.eval(DRAWN_JS)
        assert len(thumbs) == len(CHAPTERS)
        assert all(t["w"] > 100 and t["h"] > 50 and t["ink"] > 0 for t in thumbs), thumbs
        links = b.eval("Array.from(document.querySelectorAll('a.card')).map(a => a.getAttribute('href'))")
        assert links == [f"{ch.name}.html" for ch in CHAPTERS]
        assert b.eval("document.querySelectorAll('table tbody tr').length") > 0
        b.open(f"{served}/ch4_variable_capacity.html")
        figs = b.eval(DRAWN_JS)
        assert len(figs) >= 5
        assert all(f["w"] > 300 and f["ink"] > 0 for f in figs), figs
        # nothing on the page waits for the network: no script or stylesheet from another host
        remote = b.eval(
            "Array.from(document.querySelectorAll('script[src], link[href], img')).map(e => e.src || e.href)"
            ".filter(u => u && !u.startsWith('data:') && !u.startsWith(location.origin))"
        )
        assert not [u for u in remote if "vega" in u], remote
        if os.environ.get("VARCAP_SCREENSHOT"):
            b.open(f"{served}/index.html")
            b.screenshot(Path(os.environ["VARCAP_SCREENSHOT"]))
    finally:
        b.close()


def test_readme_documents_the_report_tables() -> None:
    from assets.reports import OUT_STUDY_SCENARIOS, OUT_WORKLOAD_STATS

    readme = (REPO / "docs" / "data-dictionary.md").read_text()  # the README's data dictionary moved there
    for schema in (OUT_STUDY_SCENARIOS, OUT_WORKLOAD_STATS):
        assert f"### `{schema.name}`" in readme
        for col in schema.columns:
            assert f"| `{col.name}` | {col.sql_type} | {col.unit} |" in readme, (schema.name, col.name)


def test_every_notebook_cell_is_valid_python() -> None:
    """A syntax error in a chapter would only show when its report runs: catch it here, fast."""
    import ast

    for p in NOTEBOOKS:
        for c in nbformat.read(p, as_version=4).cells:
            if c.cell_type == "code":
                ast.parse(c.source, filename=p.name)
