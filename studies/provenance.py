"""Where the reproduction table's words and numbers come from: the headline ids' former names (so a
warehouse written before a rename stays readable), the commit and time of a run of the table, and which
anchors, bands and default readings were written before the runs and which changed after.

Imports nothing of the paper packages: :mod:`studies.reproduction` and ``varcap docs`` pass the headlines in.
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

#: Headline ids before they named their paper and section (2026-11-27), old → new. A warehouse written
#: before the rename has the old ids in ``out_reproduction.headline_id``; :func:`current_id` reads them.
FORMER_IDS: dict[str, str] = {
    "issue10-generic-ias-cut": "thesis-6.2-ias-cut-generic",
    "issue24-ias-robustness": "thesis-6.2-ias-robustness-grid",
    "seed001-targetasap-goodput-gain": "riskaware-6-targetasap-goodput-gain",
    "seed001-packed-goodput-gain": "riskaware-6-packed-goodput-gain",
    "seed002-slacksched-mean-jct-reduction": "slacksched-4.2-mean-jct-reduction",
    "seed002-slacksched-p90-jct-reduction": "slacksched-4.2-p90-jct-reduction",
    "seed003-lww-vs-random-goodput": "zhang-chien-5.3-lww-vs-random-goodput",
    "seed003-range-0.6-goodput-decline": "zhang-chien-5.2-range-0.6-goodput-decline",
    "seed004-cbs-energy-reduction": "harmony-9.2-cbs-energy-reduction",
}
#: the prefix of every headline id: the paper it tests
ID_PREFIXES = ("thesis-", "riskaware-", "slacksched-", "zhang-chien-", "harmony-")


def current_id(headline_id: str) -> str:
    """``headline_id`` under its current name (a reading's ``@<reading>`` suffix kept)."""
    base, at, reading = headline_id.partition("@")
    return FORMER_IDS.get(base, base) + at + reading


def former_ids(headline_id: str) -> list[str]:
    """The names ``headline_id`` had before, oldest first (empty if never renamed)."""
    return [old for old, new in FORMER_IDS.items() if new == headline_id]


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
