"""A chapter notebook executed the usual way (``jupyter nbconvert --to html --execute``) draws its charts
with no network: no script is loaded from a CDN (altair's default renderer loads vega@6 from one: "Error
loading script" offline), and each chart is in the page as an SVG. The report page of the same notebook
hides code, prompts and parameter cells."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from tests.conftest import REPO

EXTERNAL_SCRIPT = re.compile(r"<script[^>]+src=[\"']https?://", re.I)


def _warehouse(path: Path) -> None:
    """A warehouse holding only what notebooks/reproduction.ipynb reads: two headlines of out_reproduction."""
    from assets.schema import OUT_REPRODUCTION
    from assets.warehouse import replace_table

    defaults = {"VARCHAR": "", "DOUBLE": 0.0, "BIGINT": 3, "BOOLEAN": True}
    base = {c.name: defaults[c.sql_type] for c in OUT_REPRODUCTION.columns}
    rows = [
        base
        | {"headline_id": h, "reading": "default", "paper": "000 thesis", "section": "§6.3", "unit": "%"}
        | {"anchor_value": a, "varcap_mean": m, "ci_low": m - 5, "ci_high": min(m + 5, 100.0)}
        | {"band_low": a / 2, "band_high": min(2 * a, 100.0), "within_band": a / 2 <= m, "profile": "quick"}
        for h, a, m in (("thesis-a", 40.0, 30.0), ("thesis-b", 20.0, 5.0))
    ]
    with duckdb.connect(str(path)) as con:
        replace_table(con, OUT_REPRODUCTION, pl.DataFrame(rows))


@pytest.mark.slow  # starts a Jupyter kernel and executes a notebook
def test_nbconvert_execute_draws_charts_offline(tmp_path: Path) -> None:
    wh = tmp_path / "warehouse.duckdb"
    _warehouse(wh)
    env = {
        **os.environ,
        "VARCAP_WAREHOUSE": str(wh),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("VARCAP_STATIC_CHARTS", None)
    env.pop("VARCAP_ALTAIR_RENDERER", None)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute"]
    cmd += ["--output-dir", str(out), str(REPO / "notebooks" / "reproduction.ipynb")]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    page = (out / "reproduction.html").read_text()
    # the chart is drawn in the kernel: an SVG in the output, no vega-embed loader, no CDN
    assert 'data-mime-type="image/svg+xml"' in page and "data:image/svg+xml;base64" in page
    assert "vega@" not in page and "cdn.jsdelivr.net/npm/vega" not in page
    # nbconvert's own lab template links require.js and MathJax; nothing of the notebook's does
    outputs = page[page.index('class="jp-Cell') :]
    assert not EXTERNAL_SCRIPT.search(outputs), EXTERNAL_SCRIPT.search(outputs)


def test_report_page_hides_code_and_parameter_cells(tmp_path: Path) -> None:
    from assets.reports import execute_notebook

    wh = tmp_path / "warehouse.duckdb"
    _warehouse(wh)
    ex = execute_notebook(REPO / "notebooks" / "reproduction.ipynb", tmp_path, wh, {"profile": "auto"}, 300)
    page = ex.html_path.read_text()
    assert ex.figures and "data:image/png;base64" in page
    assert "injected by the report asset" not in page and "profile = " not in page  # parameter cells
    assert "from analysis import" not in page and "hl-ipython3" not in page  # code cells
    assert "Reproduction" in page  # the prose stays
    assert not EXTERNAL_SCRIPT.search(page)


@pytest.mark.parametrize("name", ["svg"])
def test_style_sets_an_offline_renderer(name: str) -> None:
    import altair as alt

    import analysis.style  # noqa: F401

    assert alt.renderers.active == name
    bundle = (
        alt.Chart(pl.DataFrame({"x": [1, 2]}).to_pandas()).mark_point().encode(x="x:Q")._repr_mimebundle_()
    )
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "image/svg+xml" in data and "text/html" not in data
