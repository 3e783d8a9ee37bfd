"""The scenario cache key's code part: which sources a scenario's result depends on, and their hash.

What decides a result is the simulator (``sim/``: every policy module and the ``sim`` modules they and the
run path import; not the benchmarks, nor Harmony's simulator, which no scenario runs) and the generic run
path (:data:`_RUN_PATH`: the runner, scenario building, the signals a run reads, this key), together with the
scenario's own parameters (its id). A paper's or chapter's modules, its study lists and the catalogue are
not in it: editing them keeps every cached run whose parameters are unchanged. Each file counts by its
syntax tree without docstrings (:func:`normalized_source`), so comments, docstrings and layout do not
count either.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import sys
from pathlib import Path

#: the studies modules a scenario's run goes through (runner, scenario building, signals, this key); see
#: :func:`result_sources`
_RUN_PATH = ("studies/sweep.py", "studies/scenarios.py", "studies/signals.py", "studies/code_version.py")


@functools.cache
def code_version() -> str:
    """The scenario cache key's code part: hash of the sources a scenario's result depends on
    (:func:`result_sources`), so editing a benchmark, the Harmony simulator, a paper's studies, a comment
    or the docs keeps every cached run. Computed once per process."""
    return source_version(Path(__file__).resolve().parents[1])


def source_version(root: Path) -> str:
    """Hash (12 hex) of the relative paths and normalized sources (:func:`normalized_source`) of
    :func:`result_sources` under ``root``."""
    memo = _Memo.load()
    h = hashlib.sha256()
    for f in result_sources(root, memo):
        h.update(str(f.relative_to(root)).encode())
        h.update(memo.facts(f)[0].encode())
    memo.save()
    return h.hexdigest()[:12]


class _Memo:
    """Per source file, keyed by the sha256 of its bytes and the Python version: the digest of its
    normalized source and the ``sim`` module names it imports or names (parsing ~60 files costs about a
    CPU second at every start; hashing their bytes, milliseconds). Kept in
    ``<data>/cache/code_version.json``; a memo that cannot be read or written is rebuilt or skipped."""

    def __init__(self, path: Path | None, known: dict[str, list]) -> None:
        self.path, self.known, self.dirty = path, known, False

    @classmethod
    def load(cls) -> _Memo:
        try:
            from sim.paths import data_dir

            path = data_dir() / "cache" / "code_version.json"
        except Exception:  # noqa: BLE001 - a memo is an optimisation: never a reason to fail
            return cls(None, {})
        try:
            known = json.loads(path.read_text())
        except (OSError, ValueError):
            known = {}
        return cls(path, known if isinstance(known, dict) else {})

    def facts(self, path: Path) -> tuple[str, list[str]]:
        raw = path.read_bytes()
        key = f"{sys.version_info[0]}.{sys.version_info[1]}:{hashlib.sha256(raw).hexdigest()}"
        hit = self.known.get(key)
        if isinstance(hit, list) and len(hit) == 2:
            return hit[0], hit[1]
        tree = ast.parse(raw, filename=str(path))
        names = sorted(_imported_names(tree))
        digest = hashlib.sha256(_normalized(tree).encode()).hexdigest()
        self.known[key], self.dirty = [digest, names], True
        return digest, names

    def save(self) -> None:
        if not (self.dirty and self.path):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.known))
            os.replace(tmp, self.path)  # atomic: processes started side by side never read half a file
        except OSError:
            pass


def normalized_source(path: Path) -> str:
    """The module's syntax tree without its docstrings (module, class and function), dumped without
    positions: equal for two sources that differ only in comments, docstrings or layout. (The dump's form
    belongs to the Python version: a new Python may change every key once.)"""
    return _normalized(ast.parse(path.read_bytes(), filename=str(path)))


def _normalized(tree: ast.Module) -> str:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):  # fmt: skip
                node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def result_sources(root: Path, memo: _Memo | None = None) -> list[Path]:
    """The files a scenario's result depends on, sorted: the run path (:data:`_RUN_PATH`: runner, scenario
    building), every policy module (``sim/policies/``), and every ``sim`` module these import — at any
    depth, inside functions too, or named as a string (``sim/__init__``'s lazy names) — with the
    ``__init__`` of each package on the way. Engine, event loop, metrics, workload and capacity registries
    and generators are in; ``sim/bench/``, ``sim/harmony/``, the papers' packages, the registry and the
    catalogue are not."""
    memo = memo or _Memo(None, {})
    todo = [root / r for r in _RUN_PATH] + sorted((root / "sim" / "policies").glob("*.py"))
    seen: set[Path] = set()
    while todo:
        f = todo.pop()
        if f in seen or not f.is_file():
            continue
        seen.add(f)
        todo += _sim_files(memo.facts(f)[1], root)
    return sorted(seen)


def _imported_names(tree: ast.Module) -> set[str]:
    """The ``sim`` module names a syntax tree imports or names as a string."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
    return {n for n in names if n == "sim" or n.startswith("sim.")}


def _sim_files(names: list[str], root: Path) -> list[Path]:
    """Files of the ``sim`` modules (and their packages' ``__init__``) among the module ``names``."""
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
