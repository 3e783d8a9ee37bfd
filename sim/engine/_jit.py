"""Lazy compilation of the engine: its functions are plain Python until the compiled engine is asked for.

Every engine function is marked with :func:`kernel_fn` and stays a plain Python function in its module, so
``import sim.engine`` does not import numba. :func:`compiled` imports numba once, wraps every marked
function in ``njit(cache=True)`` and rebinds the engine modules' globals to the compiled versions, so the
compiled kernel calls compiled phase functions. The plain functions (:func:`plain`) run the very same code
in the interpreter: the Python engine of small instances.

numba's on-disk cache checks only the source file of the function it loads, not the files of the functions
it calls; :func:`compiled` therefore keeps a hash of every engine source beside numba's cache files and
deletes the engine's cache files when it changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENGINE_DIR = Path(__file__).resolve().parent
MODULES = ("trees", "queue", "log", "admission", "kernel")
_PLAIN: dict[str, Callable[..., Any]] = {}
_COMPILED: dict[str, Any] = {}


def kernel_fn(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fn`` as part of the compiled engine (compiled by :func:`compiled`); returns it unchanged."""
    if fn.__name__ in _PLAIN:
        raise ValueError(f"engine function {fn.__name__} defined twice")
    _PLAIN[fn.__name__] = fn
    return fn


def plain(name: str) -> Callable[..., Any]:
    """The interpreted version of engine function ``name``."""
    _load_modules()
    return _PLAIN[name]


def _load_modules() -> list[Any]:
    import importlib

    return [importlib.import_module(f"sim.engine.{m}") for m in MODULES]


def sources_hash() -> str:
    """sha256 over the engine's source files (what a compiled kernel was built from)."""
    h = hashlib.sha256()
    for m in MODULES:
        h.update((ENGINE_DIR / f"{m}.py").read_bytes())
    return h.hexdigest()


def cache_dirs() -> list[Path]:
    """Where numba keeps the engine's cache files (beside the sources, or under ``$NUMBA_CACHE_DIR``)."""
    dirs = [ENGINE_DIR / "__pycache__"]
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        dirs.append(Path(env) / ENGINE_DIR.relative_to(ENGINE_DIR.anchor))
    return dirs


def _invalidate_stale_cache() -> None:
    """Delete the engine's numba cache files if any engine source changed since they were written."""
    digest = sources_hash()
    for d in cache_dirs():
        stamp = d / "varcap_engine.sha256"
        try:
            if stamp.read_text() == digest:
                continue
        except OSError:
            pass
        if not d.is_dir():
            continue
        for f in d.iterdir():
            if f.suffix in (".nbi", ".nbc") and f.name.split(".")[0] in MODULES:
                f.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            stamp.write_text(digest)


def compiled() -> dict[str, Any]:
    """name → numba dispatcher of every engine function (imports numba and rebinds the modules' globals on
    first use)."""
    if _COMPILED:
        return _COMPILED
    from numba import njit

    mods = _load_modules()
    _invalidate_stale_cache()
    disp = {name: njit(cache=True)(fn) for name, fn in _PLAIN.items()}
    by_fn = {id(fn): disp[name] for name, fn in _PLAIN.items()}
    for mod in mods:
        for k, v in list(vars(mod).items()):
            if callable(v) and id(v) in by_fn:
                setattr(mod, k, by_fn[id(v)])
    _COMPILED.update(disp)
    return _COMPILED


def is_compiled() -> bool:
    """Whether :func:`compiled` has run in this process (numba is imported)."""
    return bool(_COMPILED) and "numba" in sys.modules
