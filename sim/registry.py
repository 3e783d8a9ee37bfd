"""A name registry with name patterns, shared by the workload and capacity-kind registries.

Light on purpose (no numpy, no polars): ``varcap --help`` builds its help text from the registries.
A name may be a pattern with ``<field>`` placeholders (``zipf-<s>``, ``pareto-<alpha>-<xm_s>``): each
placeholder matches one ``-``-free part of a name and is handed to the entry as a string.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")
_FIELD = re.compile(r"<([a-z_][a-z0-9_]*)>")


def pattern_fields(name: str) -> list[str]:
    """The ``<field>`` placeholders of a name, in order (empty for a plain name)."""
    return _FIELD.findall(name)


def _regex(pattern: str) -> re.Pattern[str]:
    parts = _FIELD.split(pattern)  # literal, field, literal, field, …
    body = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>[^-]+)" for i, p in enumerate(parts))
    return re.compile(f"^{body}$")


class Registry(Generic[T]):
    """Entries by name, in registration order. ``what`` names the entries in error messages."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, T] = {}
        self._patterns: dict[str, re.Pattern[str]] = {}

    def register(self, name: str, item: T) -> T:
        """Add ``item`` under ``name`` (a plain name or a pattern). ValueError on a duplicate name."""
        if name in self._items:
            raise ValueError(f"{self.what} {name!r} registered twice")
        self._items[name] = item
        if pattern_fields(name):
            self._patterns[name] = _regex(name)
        return item

    def unregister(self, name: str) -> None:
        """Remove the entry registered as ``name`` (KeyError if there is none)."""
        del self._items[name]
        self._patterns.pop(name, None)

    def resolve(self, name: str) -> tuple[str, T, dict[str, str]]:
        """``(registered name, entry, placeholder values)`` for ``name``: an exact name first, then the
        patterns in registration order. ValueError naming every registered name if none matches."""
        if name in self._items:
            return name, self._items[name], {}
        for key, rx in self._patterns.items():
            m = rx.match(name)
            if m:
                return key, self._items[key], m.groupdict()
        raise ValueError(f"unknown {self.what} {name!r}; {self.what}s: {', '.join(self._items)}")

    def get(self, name: str) -> T:
        """The entry for ``name`` (see :meth:`resolve`)."""
        return self.resolve(name)[1]

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self.resolve(name)
        except ValueError:
            return False
        return True

    def names(self) -> list[str]:
        """Registered names and patterns, in registration order."""
        return list(self._items)

    def items(self) -> Iterator[tuple[str, T]]:
        return iter(list(self._items.items()))
