"""Content keys: what a step read, hashed, so a step whose inputs are all unchanged is not done again.

A key is a sha256 over the project's code (:func:`code_fingerprint`: every source file, notebook and study
file under the repository), the Python environment (:func:`environment_fingerprint`: the interpreter and
the installed distributions' names and versions), and the step's data inputs (for example
:func:`tables_fingerprint`: each warehouse table's row count and an order-insensitive hash of its rows).
A step stores its key with what it wrote (:func:`write_stamp`); when the key it computes next time equals
the stored one and the outputs are still there, it reuses them instead of computing them again. Any change
of code, package versions or input rows changes the key, so the step runs again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

#: the repository whose code the keys cover
ROOT = Path(__file__).resolve().parents[1]
#: folders of the repository whose files decide what the pipeline computes
CODE_DIRS = ("analysis", "assets", "notebooks", "pipelines", "sim", "studies")
#: the suffixes of the files read in them (code, notebooks, study files, claims, samples' manifests)
CODE_SUFFIXES = frozenset({".py", ".ipynb", ".toml", ".json", ".csv", ".yaml", ".yml", ".txt", ".md"})
#: files at the root that decide it too
ROOT_FILES = ("pyproject.toml", "constraints.txt", "dagster.yaml")


def digest(*parts: object) -> str:
    """A sha256 (hex) of ``parts`` as JSON (keys sorted): equal parts give equal digests."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def files_fingerprint(files: list[Path], root: Path) -> str:
    """A sha256 over ``files``' paths (relative to ``root``) and contents, in path order."""
    h = hashlib.sha256()
    for p in sorted(files):
        h.update(str(p.relative_to(root)).encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def _code_files(root: Path) -> list[Path]:
    out = [root / f for f in ROOT_FILES if (root / f).is_file()]
    for d in CODE_DIRS:
        for dirpath, dirnames, filenames in os.walk(root / d):
            dirnames[:] = [n for n in dirnames if n != "__pycache__" and not n.startswith(".")]
            out.extend(Path(dirpath) / f for f in filenames if Path(f).suffix in CODE_SUFFIXES)
    return out


@lru_cache(maxsize=4)
def code_fingerprint(root: Path = ROOT) -> str:
    """A sha256 of the repository's code: every file of :data:`CODE_SUFFIXES` under :data:`CODE_DIRS` and
    the :data:`ROOT_FILES` (read once per process)."""
    return files_fingerprint(_code_files(root), root)


@lru_cache(maxsize=1)
def environment_fingerprint() -> str:
    """A sha256 of the interpreter's version and of the names of the distributions installed beside it
    (``<name>-<version>.dist-info``): a package upgrade changes it (read once per process)."""
    names: list[str] = [sys.version]
    for d in sorted({p for p in sys.path if p and Path(p).is_dir()}):
        try:
            names.extend(f"{d}/{n}" for n in sorted(os.listdir(d)) if n.endswith((".dist-info", ".egg-info")))
        except OSError:
            continue
    return digest(names)


#: columns that say when a row was written or how long computing it took, not what it holds: left out of
#: a table's fingerprint, so a table rebuilt with the same rows keeps it (a page that shows one of them
#: keeps the value it was rendered with)
WHEN_COLUMNS: dict[str, tuple[str, ...]] = {
    "raw_files": ("registered_at",),
    "core_builds": ("built_at",),
    "out_reproduction": ("computed_at_utc",),
    "out_backtest": ("cpu_s",),
}


def tables_fingerprint(con: Any, tables: list[str] | None = None) -> dict[str, str]:
    """Per table of the DuckDB connection ``con`` (all base tables of its database, or those of ``tables``
    it has), ``"<rows>:<sum of row hashes>"`` over its columns but :data:`WHEN_COLUMNS`: equal for equal
    multisets of rows, whatever their order."""
    have = [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' AND table_schema = 'main' ORDER BY 1"
        ).fetchall()
    ]
    out = {}
    for name in have if tables is None else [t for t in tables if t in set(have)]:
        when = [
            c
            for (c,) in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' "
                "AND table_name = ? ORDER BY ordinal_position",
                [name],
            ).fetchall()
            if c in WHEN_COLUMNS.get(name, ())
        ]
        rows = (
            f'(SELECT * EXCLUDE ({", ".join(f"{chr(34)}{c}{chr(34)}" for c in when)}) FROM "{name}")'
            if when
            else f'"{name}"'
        )
        n, h = con.execute(f"SELECT count(*), sum(hash(t)::HUGEINT)::VARCHAR FROM {rows} t").fetchone()
        out[name] = f"{n}:{h}"
    return out


_DB_FINGERPRINTS: dict[tuple[str, int, int], dict[str, str]] = {}


def database_fingerprint(path: Path) -> dict[str, str]:
    """:func:`tables_fingerprint` of every table of the DuckDB file ``path`` (opened read-only), kept per
    process for as long as the file's size and modification time stay the same (a published snapshot is a
    new file: :mod:`assets.snapshot`). Empty when there is no such file."""
    import duckdb

    try:
        st = path.stat()
    except FileNotFoundError:
        return {}
    memo = (str(path), st.st_mtime_ns, st.st_size)
    if memo not in _DB_FINGERPRINTS:
        with duckdb.connect(str(path), read_only=True) as con:
            _DB_FINGERPRINTS.clear()
            _DB_FINGERPRINTS[memo] = tables_fingerprint(con)
    return dict(_DB_FINGERPRINTS[memo])


def read_stamp(path: Path) -> dict[str, Any] | None:
    """The stamp stored at ``path`` (None when missing or unreadable)."""
    try:
        out = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return out if isinstance(out, dict) else None


def write_stamp(path: Path, stamp: dict[str, Any]) -> None:
    """Store ``stamp`` (JSON) at ``path``, atomically (a temporary sibling renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(stamp, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
