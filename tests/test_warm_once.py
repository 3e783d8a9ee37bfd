"""A fresh checkout compiles the engine once, whatever Python's bytecode setting.

Before the fix, ``_jit._invalidate_stale_cache`` stamped the cache directory with the sources' hash only if
the directory existed; with ``PYTHONDONTWRITEBYTECODE=1`` (or ``python -B``, as sweep workers run) a fresh
checkout has no ``sim/engine/__pycache__`` until numba writes its files, so the first process left no stamp
and the second deleted the 44 freshly compiled engine functions as stale and compiled them all again
(``make install`` then ``make run`` compiled twice).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sim.engine import _jit

REPO = Path(__file__).resolve().parents[1]

# a child process: the warm-up simulations, then how many engine functions numba compiled (cache misses)
# and how many it loaded from its cache (hits)
_PROBE = """
from sim.engine import _jit
from sim.warmup import warm
warm()
d = _jit.compiled()
print(sum(len(v.stats.cache_misses) for v in d.values()), sum(len(v.stats.cache_hits) for v in d.values()))
"""


def _clean_checkout(dst: Path) -> Path:
    """The simulator's tracked sources of this working tree (uncommitted edits included) under ``dst``,
    without any ``__pycache__``: what a fresh clone holds."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "sim"], cwd=REPO, capture_output=True, check=True, timeout=60
        ).stdout
        files = [REPO / f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = [f for f in (REPO / "sim").rglob("*.py") if "__pycache__" not in f.parts]
    for f in files:
        if f.is_file():
            (dst / f.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dst / f.relative_to(REPO))
    assert not list(dst.rglob("__pycache__"))
    return dst


def _run(root: Path) -> tuple[int, int]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "VARCAP_ENGINE")}
    env.update(PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=root, env=env, capture_output=True, text=True, timeout=900
    )
    assert out.returncode == 0, out.stderr[-2000:]
    misses, hits = out.stdout.split()[-2:]
    return int(misses), int(hits)


@pytest.mark.slow  # compiles the engine once in a fresh copy: ~30-60 CPU s
def test_second_process_of_a_fresh_checkout_compiles_nothing(tmp_path: Path) -> None:
    root = _clean_checkout(tmp_path / "checkout")
    misses, hits = _run(root)
    assert misses > 0 and hits == 0  # the first process compiled (the copy really was cold) …
    stamp = root / "sim" / "engine" / "__pycache__" / "varcap_engine.sha256"
    assert stamp.read_text() == _jit.sources_hash()  # … and stamped what it compiled from
    misses, hits = _run(root)
    assert misses == 0 and hits > 0  # the second loaded every engine function and compiled none


def test_stamp_written_before_the_cache_directory_exists(tmp_path: Path, monkeypatch) -> None:
    """The stamp goes into a cache directory that does not exist yet (created), so numba's files written
    next are known to be current."""
    d = tmp_path / "not" / "yet"
    monkeypatch.setattr(_jit, "cache_dirs", lambda: [d])
    _jit._invalidate_stale_cache()
    assert (d / "varcap_engine.sha256").read_text() == _jit.sources_hash()


def test_every_warm_policy_runs_the_one_kernel_signature_the_check_loads() -> None:
    """``ensure_warm`` checks a warm cache by loading the kernel through FF alone
    (:data:`sim.warmup.CHECK_POLICIES`); that loads what every policy runs only while they share the
    kernel's one compiled signature."""
    from sim.warmup import CHECK_POLICIES, WARM_POLICIES, warm

    assert set(CHECK_POLICIES) <= set(WARM_POLICIES)
    warm()  # every warm policy, compiled engine (compiles only if this checkout's cache is cold)
    assert len(_jit.compiled()["_kernel"].signatures) == 1
    assert len(_jit.compiled()["_ff_kernel"].signatures) == 1


def test_warm_cache_check_imports_no_survival_model_libraries() -> None:
    """The check before every compiled simulation leaves statsmodels, pandas and scipy.stats unloaded
    (IAS's survival fit brought ~110 MB and ~0.8 CPU s into every `varcap simulate`)."""
    first = subprocess.run([sys.executable, "-c", "from sim.warmup import warm; warm()"], cwd=REPO,
                           env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                           timeout=900)  # fmt: skip
    assert first.returncode == 0, first.stderr[-2000:]
    code = (
        "import sys\nfrom sim.warmup import cache_loads\nprint(cache_loads())\n"
        "print([m for m in ('statsmodels', 'pandas', 'scipy.stats') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-2:] == ["None", "[]"]
