"""A damaged numba cache cannot abort a run: every cache file carries a checksum checked before numba loads it.

numba loads a cache file's machine code unchecked; with bytes flipped in the engine's ``.nbc`` files a
compiled ``varcap simulate`` or ``varcap warm`` died with SIGABRT (an LLVM assertion) before the repair in
:func:`sim.warmup.ensure_warm` could run. :func:`sim.engine._jit.cached_njit` writes a sha256 beside each
file numba saves and checks the files before numba loads them: a file that does not match is deleted and
compiled again, with one line on stderr. Each test works under its own ``$NUMBA_CACHE_DIR`` in child
processes (the worktree's cache is left alone).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sim.engine import _jit

REPO = Path(__file__).resolve().parents[2]

MODULE = """
import numpy as np
from sim.engine._jit import cached_njit


@cached_njit
def inner(a):
    s = 0.0
    for x in a:
        s += x * x
    return s


@cached_njit(nogil=True)
def outer(n):
    return inner(np.arange(n, dtype=np.float64)) + 0.5
"""


def _run(code: str, env: dict[str, str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def _flip_every_cache_file(root: Path, suffixes: tuple[str, ...] = (".nbi", ".nbc")) -> list[Path]:
    """Flip bytes across every numba cache file (of ``suffixes``) under ``root`` (checksums left as they were)."""
    files = [f for f in root.rglob("*") if f.suffix in suffixes]
    for f in files:
        b = bytearray(f.read_bytes())
        for i in range(len(b) // 8, len(b), max(1, len(b) // 16)):
            b[i] ^= 0xA5
        f.write_bytes(bytes(b))
    return files


@pytest.mark.parametrize("suffixes", [(".nbi", ".nbc"), (".nbc",)], ids=["index+data", "data"])
def test_flipped_bytes_in_every_cache_file_recompile_with_one_line(
    tmp_path: Path, suffixes: tuple[str, ...]
) -> None:
    (tmp_path / "cachedmod.py").write_text(MODULE)
    env = {
        **os.environ,
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}",
        "NUMBA_CACHE_DIR": str(tmp_path / "nb"),
    }
    code = "import cachedmod\nprint(cachedmod.outer(1000))"
    want = str(sum(float(x) * x for x in range(1000)) + 0.5)
    first = _run(code, env, tmp_path)
    assert first.returncode == 0 and first.stdout.split() == [want], first.stderr[-2000:]
    assert "checksum" not in first.stderr
    files = _flip_every_cache_file(tmp_path / "nb", suffixes)
    assert len(files) >= 2 * len(suffixes)  # an index and a data file of each function
    assert all(f.with_name(f.name + ".sha256").exists() for f in files)  # each has its checksum
    second = _run(code, env, tmp_path)
    assert second.returncode == 0, second.stderr[-2000:]  # not SIGABRT (-6) nor an exception
    assert second.stdout.split() == [want]
    told = [ln for ln in second.stderr.splitlines() if "checksum" in ln]
    assert len(told) == 1 and "deleted, compiling again" in told[0]
    third = _run(code, env, tmp_path)  # recompiled and checksummed afresh: loads silently
    assert third.returncode == 0 and third.stdout.split() == [want] and "checksum" not in third.stderr


def test_a_file_without_its_checksum_is_not_loaded(tmp_path: Path) -> None:
    """A cache file numba wrote outside :func:`cached_njit` (no checksum beside it) is compiled afresh."""
    (tmp_path / "cachedmod.py").write_text(MODULE)
    env = {
        **os.environ,
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}",
        "NUMBA_CACHE_DIR": str(tmp_path / "nb"),
    }
    code = "import cachedmod\nprint(cachedmod.outer(10))"
    assert _run(code, env, tmp_path).returncode == 0
    sums = list((tmp_path / "nb").rglob("*.sha256"))
    assert sums
    for f in sums:
        f.unlink()
    out = _run(code, env, tmp_path)
    assert out.returncode == 0 and out.stdout.split() == ["285.5"], out.stderr[-2000:]
    assert sum("checksum" in ln for ln in out.stderr.splitlines()) == 1
    assert list((tmp_path / "nb").rglob("*.sha256"))  # written again with the fresh files


@pytest.mark.slow  # compiles the engine afresh: ~60-250 CPU s
def test_simulate_survives_flipped_bytes_in_the_engine_cache(tmp_path: Path) -> None:
    """The engine's own cache (a copy of this checkout's, bytes flipped in every file) gives the
    interpreted engine's result, bit for bit, not a crash."""
    src = _jit.ENGINE_DIR / "__pycache__"
    files = [f for f in src.iterdir() if _jit._is_cache_file(f, _jit.MODULES)]
    if not any(f.name.startswith("kernel._kernel-") and f.suffix == ".nbc" for f in files):
        pytest.skip("the engine is not compiled in this checkout (run `varcap warm` first)")
    env = {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_CACHE_DIR": str(tmp_path / "nb")}
    dst = _run("from sim.engine import _jit\nprint(_jit.cache_dirs()[-1])", env, REPO).stdout.strip()
    Path(dst).mkdir(parents=True)
    for f in [*files, src / "varcap_engine.sha256"]:
        shutil.copy2(f, Path(dst) / f.name)
    _flip_every_cache_file(tmp_path / "nb")
    code = """
import numpy as np, polars as pl
from sim.api import simulate
from sim.capacity.generators import random_walk
from sim.engine import use_engine
jobs = pl.DataFrame({"job_id": [0, 1, 2, 3], "submit_s": [0.0, 60.0, 600.0, 1800.0], "duration_s": [900.0, 300.0, 4000.0, 120.0],
                     "cores": [1.0, 2.0, 4.0, 1.0]})
cap = random_walk(4, 7200.0, seed=0, changes_per_hour=4.0, step=0.25)
outs = []
for engine in ("python", "compiled"):
    with use_engine(engine):
        r = simulate(jobs, cap, 4, 4.0, 7200.0, "ff", seed=0)
    outs.append(r)
a, b = outs
print(repr(sorted(a.metrics.items())) == repr(sorted(b.metrics.items())) and a.jobs.equals(b.jobs))
"""
    out = _run(code, env, REPO, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "True"
    assert sum("checksum" in ln for ln in out.stderr.splitlines()) == 1
