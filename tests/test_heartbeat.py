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


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_heartbeat_lines_on_a_fake_clock_name_the_phase_and_its_length(monkeypatch) -> None:
    from pipelines.cli import common

    clock = _Clock()
    monkeypatch.setattr(common, "_now", clock)
    out, stamp = _Pipe(), [clock.t]
    watched = common._Watched(out, stamp)
    beat = common._Beat("warm", 30.0, watched, stamp, clock.t)
    clock.t += 29.9
    assert not beat.tick(clock.t) and out.getvalue() == ""
    clock.t += 0.1
    assert beat.tick(clock.t)
    assert out.getvalue() == "varcap warm: still running (30 s)\n"
    clock.t += 5.0
    with common.doing("compiling the simulator"):
        clock.t += 20.0
        assert not beat.tick(clock.t)  # 25 s since the last line
        clock.t += 10.0
        with common.doing("loading its cache"):  # the innermost phase is named
            clock.t += 1.0
            watched.write("some output\n")  # output restarts the silence
            clock.t += 29.0
            assert not beat.tick(clock.t)
            clock.t += 1.0
            assert beat.tick(clock.t)
        assert (
            out.getvalue().splitlines()[-1] == "varcap warm: still running (96 s; loading its cache for 31 s)"
        )
        clock.t += 30.0
        assert beat.tick(clock.t)
        assert (
            out.getvalue().splitlines()[-1]
            == "varcap warm: still running (126 s; compiling the simulator for 91 s)"
        )
    assert common._PHASES == []
    clock.t += 30.0
    assert beat.tick(clock.t) and out.getvalue().splitlines()[-1] == "varcap warm: still running (156 s)"


def test_status_off_a_terminal_prints_its_line_once_and_is_the_phase() -> None:
    from rich.console import Console

    from pipelines.cli import common

    out = _Pipe()
    console = Console(file=out, force_terminal=False)
    with common.status(console, "materializing 3 assets …"):
        assert [w for w, _ in common._PHASES] == ["materializing 3 assets"]
    assert out.getvalue() == "materializing 3 assets …\n" and common._PHASES == []


def test_long_commands_have_a_heartbeat() -> None:
    from pipelines.cli import build_parser

    p = build_parser()
    for argv in (["run"], ["reproduce"], ["sweep", "thesis-ias"], ["warm"]):
        assert p.parse_args(argv).heartbeat == argv[0]
    assert getattr(p.parse_args(["policies"]), "heartbeat", None) is None
