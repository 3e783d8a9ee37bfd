"""Chapters executed in one shared kernel (:mod:`assets.chapter_kernel`) see a clean namespace and their own
``VARCAP_*`` variables each, in the same kernel process; a failed cell leaves the kernel usable and a dead
kernel is replaced by the next chapter's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import DeadKernelError

from assets.chapter_kernel import ChapterKernel
from assets.reports import CellFailed, execute_notebook

PROBE = (
    "import json, os\n"
    "print('PROBE ' + json.dumps({'pid': os.getpid(), 'leaked': 'left_behind' in globals(),"
    " 'rows': os.environ.get('VARCAP_STUDY_RESULTS'), 'wh': os.environ.get('VARCAP_WAREHOUSE')}))\n"
    "left_behind = 1"
)


def _notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("profile = 'quick'", metadata={"tags": ["parameters"]}),
        *(nbformat.v4.new_code_cell(s) for s in sources),
    ]
    nbformat.write(nb, path)
    return path


def _probe(html_path: Path) -> dict:
    m = re.search(r"PROBE (\{.*?\})", html_path.read_text(encoding="utf-8").replace("&quot;", '"'))
    assert m, f"no probe output in {html_path}"
    return json.loads(m.group(1))


@pytest.fixture
def kernel():
    k = ChapterKernel()
    yield k
    k.shutdown()
    assert not k.started


def test_chapters_share_one_kernel_with_clean_namespaces(tmp_path: Path, kernel: ChapterKernel) -> None:
    a = _notebook(tmp_path / "a.ipynb", PROBE)
    b = _notebook(tmp_path / "b.ipynb", PROBE)
    rows = tmp_path / "rows.parquet"
    ea = execute_notebook(a, tmp_path / "out", tmp_path / "wh1.duckdb", {}, 120, rows, kernel=kernel)
    eb = execute_notebook(b, tmp_path / "out", tmp_path / "wh2.duckdb", {}, 120, None, kernel=kernel)
    pa, pb = _probe(ea.html_path), _probe(eb.html_path)
    assert pa["pid"] == pb["pid"]  # one kernel process
    assert not pa["leaked"] and not pb["leaked"]  # b does not see a's variable
    assert pa["rows"] == str(rows) and pb["rows"] is None  # each chapter's own study rows, or none
    assert pa["wh"].endswith("wh1.duckdb") and pb["wh"].endswith("wh2.duckdb")
    assert "kernel-reset" not in eb.html_path.read_text(encoding="utf-8")  # the reset cell is not shown
    assert "run_line_magic" not in eb.html_path.read_text(encoding="utf-8")


def test_a_failed_cell_leaves_the_kernel_usable(tmp_path: Path, kernel: ChapterKernel) -> None:
    bad = _notebook(tmp_path / "bad.ipynb", PROBE, "raise LookupError('no rows')")
    with pytest.raises(CellFailed, match="bad.ipynb: a cell failed: LookupError: no rows"):
        execute_notebook(bad, tmp_path / "out", tmp_path / "wh.duckdb", {}, 120, kernel=kernel)
    assert kernel.started
    ok = _notebook(tmp_path / "ok.ipynb", PROBE)
    p = _probe(
        execute_notebook(ok, tmp_path / "out", tmp_path / "wh.duckdb", {}, 120, kernel=kernel).html_path
    )
    assert not p["leaked"]


def test_a_dead_kernel_is_replaced(tmp_path: Path, kernel: ChapterKernel) -> None:
    first = _notebook(tmp_path / "first.ipynb", PROBE)
    pid = _probe(
        execute_notebook(first, tmp_path / "o", tmp_path / "w.duckdb", {}, 120, kernel=kernel).html_path
    )
    dies = _notebook(tmp_path / "dies.ipynb", "import os\nos._exit(1)")
    with pytest.raises(DeadKernelError):
        execute_notebook(dies, tmp_path / "o", tmp_path / "w.duckdb", {}, 120, kernel=kernel)
    assert not kernel.started  # shut down
    again = _notebook(tmp_path / "again.ipynb", PROBE)
    p = _probe(
        execute_notebook(again, tmp_path / "o", tmp_path / "w.duckdb", {}, 120, kernel=kernel).html_path
    )
    assert p["pid"] != pid["pid"] and not p["leaked"]
