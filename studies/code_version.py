"""The scenario cache key's code part: which sources a scenario's result depends on, and their hash."""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

#: the studies modules a scenario's run goes through (runner, scenario building, this key); see
#: :func:`result_sources`
_RUN_PATH = ("studies/sweep.py", "studies/scenarios.py", "studies/code_version.py", "studies/signals.py")


@functools.cache
def code_version() -> str:
    """The scenario cache key's code part: hash of the sources a scenario's result depends on
    (:func:`result_sources`), so editing a benchmark, the Harmony simulator or the docs keeps every cached
    run. Computed once per process."""
    return source_version(Path(__file__).resolve().parents[1])


def source_version(root: Path) -> str:
    """Hash (12 hex) of the relative paths and contents of :func:`result_sources` under ``root``."""
    h = hashlib.sha256()
    for f in result_sources(root):
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def result_sources(root: Path) -> list[Path]:
    """The files a scenario's result depends on, sorted: the run path (:data:`_RUN_PATH`: runner, scenario
    building), every policy module (``sim/policies/``), and every ``sim`` module these import — at any
    depth, inside functions too, or named as a string (``sim/__init__``'s lazy names) — with the
    ``__init__`` of each package on the way. Engine, event loop, metrics, workload and capacity registries
    and generators are in; ``sim/bench/scale.py``, ``sim/harmony/`` and the studies' catalogues are not."""
    todo = [root / r for r in _RUN_PATH] + sorted((root / "sim" / "policies").glob("*.py"))
    seen: set[Path] = set()
    while todo:
        f = todo.pop()
        if f in seen or not f.is_file():
            continue
        seen.add(f)
        todo += _sim_modules(f, root)
    return sorted(seen)


def _sim_modules(path: Path, root: Path) -> list[Path]:
    """Files of the ``sim`` modules (and their packages' ``__init__``) that ``path`` imports or names."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
    out = []
    for name in names:
        parts = name.split(".")
        if parts[0] != "sim" or not all(p.isidentifier() for p in parts):
            continue
        for i in range(1, len(parts) + 1):
            base = root.joinpath(*parts[:i])
            for f in (base / "__init__.py", base.with_suffix(".py")):
                if f.is_file():
                    out.append(f)
                    break
    return out
