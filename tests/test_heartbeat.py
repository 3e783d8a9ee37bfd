"""Off a terminal, a long command prints a line whenever it has been silent for the heartbeat interval."""

from __future__ import annotations

import io
import sys
import time

from pipelines.cli.common import heartbeat


class _Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


def test_a_silent_phase_gets_heartbeat_lines_and_output_resets_the_clock(monkeypatch) -> None:
    out = _Pipe()
    monkeypatch.setattr(sys, "stderr", out)
    stop = heartbeat("run", every_s=0.3)
    try:
        time.sleep(1.0)
        beats = out.getvalue().count("varcap run: still running")
        assert beats >= 1
        for _ in range(8):  # output every 0.1 s: no heartbeat while the command speaks
            print("step", file=sys.stderr)
            time.sleep(0.1)
        tail = out.getvalue().rsplit("step", 1)[0]
        assert tail.count("varcap run: still running") == beats
    finally:
        stop()
    assert sys.stderr is out  # streams restored
    n = out.getvalue().count("still running")
    time.sleep(0.5)
    assert out.getvalue().count("still running") == n  # stopped


def test_no_heartbeat_on_a_terminal(monkeypatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    stop = heartbeat("sweep", every_s=0.1)
    time.sleep(0.3)
    stop()
    assert tty.getvalue() == "" and sys.stderr is tty
