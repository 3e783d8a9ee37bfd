"""Lazy compilation of the engine: its functions are plain Python until the compiled engine is asked for.

Every engine function is marked with :func:`kernel_fn` and stays a plain Python function in its module, so
``import sim.engine`` does not import numba. :func:`compiled` imports numba once, wraps every marked
function in ``njit(cache=True)`` over a copy of its module's namespace in which the engine functions are the
compiled ones, so the compiled kernel calls compiled phase functions while the modules keep the plain
functions (:func:`plain`): the very same code run by the interpreter, the engine of small instances.

numba's on-disk cache checks only the source file of the function it loads, not the files of the functions
it calls; :func:`compiled` therefore keeps a hash of every engine source beside numba's cache files and
deletes the engine's cache files when it changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENGINE_DIR = Path(__file__).resolve().parent
MODULES = ("kit", "trees", "queue", "log", "admission", "kernel")
_PLAIN: dict[str, Callable[..., Any]] = {}
_INLINE: set[str] = set()
_COMPILED: dict[str, Any] = {}


def kernel_fn(fn: Callable[..., Any] | None = None, *, inline: bool = False) -> Any:
    """Mark ``fn`` as part of the compiled engine (compiled by :func:`compiled`); returns it unchanged.
    ``inline=True``: numba inlines it into its callers (per-job helpers that take the state bundles, whose
    call would otherwise cost a reference-count update per array)."""

    def mark(f: Callable[..., Any]) -> Callable[..., Any]:
        if f.__name__ in _PLAIN:
            raise ValueError(f"engine function {f.__name__} defined twice")
        _PLAIN[f.__name__] = f
        if inline:
            _INLINE.add(f.__name__)
        return f

    return mark if fn is None else mark(fn)


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
    """Where numba keeps the engine's cache files: under ``$NUMBA_CACHE_DIR`` if set (numba then uses only
    that), else beside the sources."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        # numba's own sub-directory name for a source directory (numba.core.caching._CacheLocator)
        sub = f"{ENGINE_DIR.name}_{hashlib.sha1(str(ENGINE_DIR).encode()).hexdigest()}"  # noqa: S324
        return [Path(env) / sub]
    return [ENGINE_DIR / "__pycache__"]


def _delete_cache_files(d: Path) -> int:
    """Delete the engine's numba cache files in ``d``; return how many."""
    n = 0
    if d.is_dir():
        for f in d.iterdir():
            if f.suffix in (".nbi", ".nbc") and f.name.split(".")[0] in MODULES:
                f.unlink(missing_ok=True)
                n += 1
    return n


def _invalidate_stale_cache() -> None:
    """Delete the engine's numba cache files if any engine source changed since they were written, and
    stamp the cache directory with the sources' hash before numba writes into it.

    The stamp is written even when the directory does not exist yet (it is created): numba creates it
    when it first saves, so a stamp written only into an existing directory was skipped in a fresh
    checkout whenever Python writes no bytecode (``PYTHONDONTWRITEBYTECODE=1``, ``python -B``: no
    ``__pycache__`` before numba's), and the next process deleted the freshly compiled engine as stale."""
    digest = sources_hash()
    for d in cache_dirs():
        stamp = d / "varcap_engine.sha256"
        try:
            if stamp.read_text() == digest:
                continue
        except OSError:
            pass
        _delete_cache_files(d)
        with contextlib.suppress(OSError):  # a read-only tree: numba caches elsewhere, nothing to stamp
            d.mkdir(parents=True, exist_ok=True)
            stamp.write_text(digest)


def discard_cache() -> int:
    """Delete every engine cache file (e.g. one that no longer loads) and forget this process's compiled
    functions, so the next :func:`compiled` compiles afresh; return how many files were deleted."""
    _COMPILED.clear()
    return sum(_delete_cache_files(d) for d in cache_dirs())


def compiled() -> dict[str, Any]:
    """name → numba dispatcher of every engine function (imports numba and rebinds the modules' globals on
    first use)."""
    if _COMPILED:
        return _COMPILED
    from numba import njit

    mods = _load_modules()
    _invalidate_stale_cache()
    # each compiled function gets a copy of its module's namespace in which the engine functions are the
    # compiled ones; the modules themselves keep the plain functions (the interpreted engine stays pure)
    spaces = {mod.__name__: dict(vars(mod)) for mod in mods}
    disp = {}
    for name, fn in _PLAIN.items():
        twin = types.FunctionType(
            fn.__code__, spaces[fn.__module__], fn.__name__, fn.__defaults__, fn.__closure__
        )
        twin.__qualname__, twin.__module__, twin.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
        disp[name] = njit(cache=True, inline="always" if name in _INLINE else "never")(twin)
    by_fn = {id(fn): disp[name] for name, fn in _PLAIN.items()}
    for space in spaces.values():
        for k, v in list(space.items()):
            if callable(v) and id(v) in by_fn:
                space[k] = by_fn[id(v)]
    _COMPILED.update(disp)
    return _COMPILED


def is_compiled() -> bool:
    """Whether :func:`compiled` has run in this process (numba is imported)."""
    return bool(_COMPILED) and "numba" in sys.modules
