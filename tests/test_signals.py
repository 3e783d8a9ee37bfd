"""A varcap started with SIGINT ignored (``cmd &`` in a script, nohup, CI) must not hand an ignored SIGTERM
to its children: Dagster's log mirroring ``tail -F`` then survives ``terminate()`` and every in-process run
waits 60 s for it."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import signal, subprocess, sys
    fix = sys.argv[1] == "fix"
    if fix:
        from pipelines.cli import _terminable_children
        _terminable_children()
    from dagster._utils.interrupts import capture_interrupts
    with capture_interrupts():  # what a run on the main thread does
        pass
    p = subprocess.Popen(["sleep", "30"])
    p.terminate()
    try:
        p.wait(timeout=5)
        print("terminated")
    except subprocess.TimeoutExpired:
        p.kill()
        print("ignored")
    print("sigint-ignored" if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else "sigint-handled")
    """
)


def _run(mode: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as a background job's shell does
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


def test_children_stay_terminable_when_started_with_sigint_ignored() -> None:
    assert _run("plain")[0] == "ignored"  # the cause: without the fix SIGTERM reaches children ignored
    assert _run("fix") == ["terminated", "sigint-handled"]
