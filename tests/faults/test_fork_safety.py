"""Loading the Dagster definitions must not start polars' thread pool.

Dagster's multiprocess executor forks its step processes from a forkserver that has imported
``pipelines.definitions``; a polars (rayon) pool started during that import is dead in every fork, and the
first parallel polars call in a step waits forever (a sweep hung this way when the spot-real study read its
traces with polars while the catalogue was built)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import os
import pipelines.definitions  # noqa: F401
task = f"/proc/{os.getpid()}/task"
names = [open(f"{task}/{t}/comm").read().strip() for t in os.listdir(task)]
print(",".join(sorted(n for n in names if n.startswith("polars-") and n[7:].isdigit())))
"""


def test_loading_the_definitions_starts_no_polars_worker_thread() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.strip() == "", f"polars workers started at import: {out.stdout.strip()}"
