"""`varcap warm` verifies the numba cache it calls warm.

On adfffce a corrupt cache file of the engine kernel failed every simulation ("LLVM bitcode parsing
error") while `varcap warm` said "simulator cache is warm: nothing to compile": it only asked numba's index
whether an entry exists. Each test works on a copy of the engine's cache under its own
``$NUMBA_CACHE_DIR`` (the worktree's cache is left alone) in a child process.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sim.engine import _jit

REPO = Path(__file__).resolve().parents[2]


def _corrupt_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the engine's (warm) cache under ``tmp_path`` with the kernels' machine code damaged (the
    general kernel's and First-Fit's, which the check runs; checksummed as they are)."""
    src = _jit.ENGINE_DIR / "__pycache__"
    files = [f for f in src.glob("*.nb*") if f.name.split(".")[0] in _jit.MODULES]
    if not any(f.name.startswith("kernel._kernel-") and f.suffix == ".nbc" for f in files):
        pytest.skip("the engine is not compiled in this checkout (run `varcap warm` first)")
    with monkeypatch.context() as m:
        m.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
        dst = _jit.cache_dirs()[-1]  # where numba looks under $NUMBA_CACHE_DIR
    dst.mkdir(parents=True)
    for f in [*files, src / "varcap_engine.sha256"]:
        shutil.copy2(f, dst / f.name)
    for f in [*dst.glob("kernel._kernel-*.nbc"), *dst.glob("ff._ff_kernel-*.nbc")]:
        b = bytearray(f.read_bytes())
        b[len(b) // 4 : 3 * len(b) // 4] = b"\0" * (3 * len(b) // 4 - len(b) // 4)
        f.write_bytes(bytes(b))
        # its checksum rewritten to match: a file that passes the check before loading and still fails to
        # load (written by another LLVM, say) is what the repair below is for (a mismatch is caught earlier:
        # tests/faults/test_numba_cache_checksums.py)
        f.with_name(f.name + ".sha256").write_text(hashlib.sha256(bytes(b)).hexdigest())
    return tmp_path / "numba"


def _child(code: str, cache: Path, timeout: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_a_corrupt_cache_is_not_reported_warm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _corrupt_copy(tmp_path, monkeypatch)
    out = _child(
        "from sim.warmup import kernel_cached, cache_loads\nprint(kernel_cached())\nprint(cache_loads())",
        cache,
        300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    indexed, loads = out.stdout.strip().splitlines()[-2:]
    assert indexed == "True"  # numba's index still lists the kernel …
    # … but it does not load (numba's LLVM "RuntimeError" or an "UnpicklingError", by where the damage
    # falls): detected, in one line
    assert loads != "None" and loads.split(":")[0].endswith("Error") and "\n" not in loads


@pytest.mark.slow  # compiles the engine afresh: ~100-260 CPU s
def test_varcap_warm_rebuilds_a_corrupt_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _corrupt_copy(tmp_path, monkeypatch)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_CACHE_DIR": str(cache)}
    env["DAGSTER_HOME"] = str(tmp_path / "dh")
    out = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "warm"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "numba cache does not load (" in out.stdout and "compiled and cached" in out.stdout
    assert "nothing to compile" not in out.stdout
    check = _child("from sim.warmup import cache_loads\nprint(cache_loads())", cache, 300)
    assert check.stdout.strip().splitlines()[-1] == "None", check.stderr[-2000:]
