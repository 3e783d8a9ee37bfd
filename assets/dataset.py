"""What a raw dataset is (:class:`Dataset`, :class:`RemoteFile`) and the checked readers of its remote
listing parameters (:func:`fill`, :func:`path_part`, :func:`names`, :func:`integer`, :func:`integers`).

Pure (no Dagster): the dataset catalogue (:mod:`assets.sources`) and every grid source module
(:mod:`assets.grid`) declare their datasets with these.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from assets.download import Expect


@dataclass(frozen=True)
class RemoteFile:
    """One upstream file: where to get it, its name in the cache and what its body must look like."""

    url: str
    dest: str
    expect: Expect = "any"
    has_header: bool = True
    #: the pinned digest, when upstream publishes one (a body that differs is refused, nothing cached)
    sha256: str | None = None


@dataclass(frozen=True)
class Dataset:
    """A raw dataset: sample files (paths relative to ``data/samples``), a remote file lister (lazy: files
    are listed as they are fetched) and a cap on the bytes its remote files may total (``max_bytes``,
    overridable by the ``max_bytes`` parameter)."""

    key: str
    description: str
    sample_files: tuple[str, ...]
    has_header: bool = True
    columns: tuple[str, ...] | None = None
    remote: Callable[[dict[str, Any]], Iterable[RemoteFile]] | None = None
    needs_env: tuple[str, ...] = field(default_factory=tuple)
    max_bytes: int = 1 << 30


# ------------------------------------------------------------------------------- parameter validation
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,127}")


_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def fill(template: str, param: str, **values: str) -> str:
    """``template`` with each ``{name}`` of ``values`` replaced (no ``str.format``: no attribute or index
    lookups, no format specs). ValueError naming ``param`` and the placeholders it takes for any other
    ``{…}`` or a stray brace."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in values:
            takes = ", ".join(f"{{{k}}}" for k in values)
            raise ValueError(
                f"params_json: {param}: unknown placeholder {{{name}}} in {template!r}; it takes {takes}"
            )
        return str(values[name])

    rest = _PLACEHOLDER.sub("", str(template))
    if "{" in rest or "}" in rest:
        raise ValueError(f"params_json: {param}: unmatched brace in {template!r}")
    return _PLACEHOLDER.sub(sub, str(template))


def path_part(field_name: str, value: object) -> str:
    """``value`` as one file-name component of a cache path: a string of letters, digits and ``. _ - : +``
    that does not start with a dot (so never ``..``, ``/``, an absolute path or a hidden name). Raises
    ``ValueError`` naming the parameter and the value otherwise."""
    if not isinstance(value, str) or not _NAME.fullmatch(value) or ".." in value:
        raise ValueError(
            f"params_json: {field_name} = {value!r} is not a plain name (letters, digits and . _ - : + "
            "only, no '..' or '/'); it becomes part of a file name in the raw cache"
        )
    return value


def names(p: dict[str, Any], key: str, default: list[str]) -> list[str]:
    """The list parameter ``key`` (default ``default``), each element checked by :func:`path_part`."""
    v = p.get(key, default)
    if not isinstance(v, list) or not v:
        raise ValueError(f"params_json: {key} must be a non-empty list of names, got {v!r}")
    return [path_part(f"{key}[{i}]", x) for i, x in enumerate(v)]


def integer(p: dict[str, Any], key: str, default: int, lo: int = 0, hi: int = 10**9) -> int:
    """The integer parameter ``key`` (default ``default``) within ``[lo, hi]``; ``ValueError`` otherwise."""
    v = p.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ValueError(f"params_json: {key} = {v!r} must be an integer in [{lo}, {hi}]")
    return v


def integers(p: dict[str, Any], key: str, default: list[int], lo: int = 0, hi: int = 10**9) -> list[int]:
    v = p.get(key, default)
    if not isinstance(v, list) or not v:
        raise ValueError(f"params_json: {key} must be a non-empty list of integers, got {v!r}")
    return [integer({key: x}, f"{key}", 0, lo, hi) for x in v]
