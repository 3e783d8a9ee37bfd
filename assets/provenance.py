"""Provenance of a rendered chapter: what a figure copied out of the workbench must carry with it — the code
(commit), the profile, the Dagster run, the studies' results it read and the data versions (the raw files'
sha256s in ``raw_files``). Written as a block at the top of each chapter page and as
``figures/<chapter>/provenance.json`` beside its figures; ``varcap figures`` reads it to never replace a
full-profile README figure with a quick one."""

from __future__ import annotations

import hashlib
import html
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FILE = "provenance.json"


def code_commit() -> str:
    """The code's commit as the reproduction table records it (:func:`studies.provenance.run_stamp`: short
    HEAD, ``+dirty`` when tracked files differ); the package version when there is no git checkout."""
    from studies.provenance import run_stamp

    commit = run_stamp()[0]
    if commit:
        return commit
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"varcap {version('varcap')} (no git checkout)"
    except PackageNotFoundError:
        return "unknown (no git checkout)"


def data_versions(con: Any) -> list[dict[str, str]]:
    """``dataset, name, source, sha256`` of every raw file in ``raw_files`` (empty when the table is missing)."""
    try:
        rows = con.execute(
            "SELECT dataset, name, source, sha256 FROM raw_files ORDER BY dataset, name"
        ).fetchall()
    except Exception:  # noqa: BLE001 — no raw_files yet: nothing to state
        return []
    return [{"dataset": d, "name": n, "source": s, "sha256": h} for d, n, s, h in rows]


def chapter_provenance(
    chapter: str,
    profile: str,
    run_id: str | None,
    studies: dict[str, list[str]] | None,
    con: Any,
) -> dict[str, Any]:
    """The provenance record of ``chapter`` rendered now: commit, UTC time, profile, Dagster run id, per study
    it reads the number of scenarios and a sha256 of their ids, and the raw files' versions."""
    return {
        "chapter": chapter,
        "commit": code_commit(),
        "rendered_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "profile": profile,
        "run_id": run_id,
        "studies": {
            name: {
                "scenarios": len(ids),
                "ids_sha256": hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()[:16],
            }
            for name, ids in (studies or {}).items()
        },
        "data": data_versions(con),
    }


def html_block(prov: dict[str, Any]) -> str:
    """The provenance block shown at the top of a chapter page (plain HTML, no script)."""
    e = html.escape
    studies = "; ".join(
        f"{e(k)}: {v['scenarios']} scenarios (ids {e(v['ids_sha256'])})" for k, v in prov["studies"].items()
    )
    data = ", ".join(f"{e(d['name'])} {e(d['sha256'][:12])}" for d in prov["data"])
    rows = [
        ("commit", e(prov["commit"])),
        ("profile", e(prov["profile"])),
        ("rendered", e(prov["rendered_utc"]) + " UTC"),
        ("Dagster run", e(prov["run_id"] or "–")),
        *([("studies", studies)] if studies else []),
        ("data (raw file sha256)", data or "–"),
    ]
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return (
        '<details class="varcap-provenance" open style="font:12px sans-serif;margin:8px 16px;color:#333">'
        "<summary><b>Provenance</b> — cite with the figure</summary>"
        f'<table style="border-collapse:collapse;margin-top:4px">{body}</table></details>'
    )


def add_to_page(page: str, prov: dict[str, Any]) -> str:
    """``page`` (an HTML document) with the provenance block right after ``<body…>`` (at the start if none)."""
    block = html_block(prov)
    i = page.find("<body")
    if i < 0:
        return block + page
    j = page.index(">", i) + 1
    return page[:j] + block + page[j:]


def write(fig_dir: Path, prov: dict[str, Any]) -> Path:
    """Write ``prov`` as ``fig_dir/provenance.json``."""
    p = fig_dir / FILE
    p.write_text(json.dumps(prov, indent=2) + "\n")
    return p


def read(path: Path) -> dict[str, Any] | None:
    """The provenance record at ``path`` (None when missing or unreadable)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
