"""Where the reproduction table's words and numbers come from: the headline ids' former names (so a
warehouse written before a rename stays readable), the commit and time of a run of the table, and which
anchors, bands and default readings were written before the runs and which changed after.

Names no paper: the former ids are each paper's (``FORMER_IDS`` in its package, read through the registry).
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol


@functools.cache
def former_id_map() -> dict[str, str]:
    """Headline ids before they named their paper and section (2026-11-27), old → new, as each paper's
    package states them (``FORMER_IDS``): a warehouse written before the rename has the old ids in
    ``out_reproduction.headline_id``; :func:`current_id` reads them."""
    from studies.papers import PAPERS

    return {old: new for p in PAPERS for old, new in getattr(p.module, "FORMER_IDS", {}).items()}


def id_prefixes() -> tuple[str, ...]:
    """The prefix of every headline id: the home it belongs to (``thesis-``, ``zhang-chien-``, …)."""
    from studies.papers import PAPERS

    return tuple(f"{p.package.replace('_', '-')}-" for p in PAPERS)


def current_id(headline_id: str) -> str:
    """``headline_id`` under its current name (a reading's ``@<reading>`` suffix kept)."""
    base, at, reading = headline_id.partition("@")
    return former_id_map().get(base, base) + at + reading


def former_ids(headline_id: str) -> list[str]:
    """The names ``headline_id`` had before, oldest first (empty if never renamed)."""
    return [old for old, new in former_id_map().items() if new == headline_id]


@functools.cache
def run_stamp(root: Path | None = None) -> tuple[str, str]:
    """The code a table is computed with and when: ``(commit, time)`` — the repository's short HEAD
    (``+dirty`` when tracked files differ from it; empty outside a git checkout or without git) and the
    UTC time as ``YYYY-MM-DDTHH:MM:SSZ``. Computed once per process."""
    root = root or Path(__file__).resolve().parents[1]
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "", now
    return commit + ("+dirty" if dirty else ""), now


class _Headline(Protocol):
    id: str
    section: str
    reading_history: str


def changed_after_runs(headlines: Iterable[_Headline]) -> tuple[list[_Headline], list[_Headline]]:
    """``(unchanged, changed)``: the headlines whose anchor, band and default reading are as first written
    (no ``reading_history``), and those with a recorded change."""
    hs = list(headlines)
    return [h for h in hs if not h.reading_history], [h for h in hs if h.reading_history]
