"""One line each: a full disk says so (a failed ROLLBACK no longer hides it), a padded value in a capacity
file names file and line, a step failure does not start with the exception's module path, and the Python
API names the argument of a wrong type."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pytest

from pipelines.guard import failure_lines, user_error


class _FullDisk:
    """A connection whose writes fail as on a full disk, after which DuckDB has no transaction to roll back."""

    def __init__(self) -> None:
        self.con = duckdb.connect()

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.startswith(("DELETE", "INSERT")):
            raise duckdb.IOException('IO Error: Could not write file "w.duckdb.wal": No space left on device')
        if sql == "ROLLBACK":
            raise duckdb.TransactionException(
                "TransactionContext Error: cannot rollback - no transaction is active"
            )
        return self.con.execute(sql, *args)


def test_full_disk_is_reported_as_a_full_disk() -> None:
    from assets.raw import record_files

    with pytest.raises(duckdb.IOException) as ei:
        record_files(_FullDisk(), "power_prices", [])
    code, msg = user_error(ei.value)
    assert code == 1 and msg.startswith("disk full: free some space and run again (IO Error: "), msg
    assert "cannot rollback" not in msg
    code, msg = user_error(OSError(errno.ENOSPC, "No space left on device", "data/warehouse.duckdb"))
    assert msg.startswith("disk full writing data/warehouse.duckdb: free some space"), msg


def test_padded_value_in_a_capacity_file_names_file_and_line(tmp_path: Path) -> None:
    from sim.capacity.trace import read_capacity

    p = tmp_path / "cap.csv"
    p.write_text("time_s,machines_alive\n0,2\n50, 0 \n")
    assert read_capacity(p, 2, 100.0).machines_alive.tolist() == [2, 0]  # padding is not an error
    p.write_text("time_s,machines_alive\n0,2\n50, x \n")
    with pytest.raises(ValueError, match=r"cap.csv line 3: machines_alive must be a number \(got ' x '\)$"):
        read_capacity(p, 2, 100.0)


class TableBroken(Exception):  # no Error/Exception suffix: the module path used to stay in the line
    pass


def test_step_failure_line_has_no_module_path() -> None:
    @dg.asset
    def brittle(context) -> None:  # unannotated: Dagster cannot resolve a string annotation here
        raise TableBroken("brittle: data/x.csv line 3: bad value")

    with dg.instance_for_test() as inst:
        res = dg.materialize([brittle], instance=inst, raise_on_error=False)
        assert failure_lines(res.all_events) == ["brittle: data/x.csv line 3: bad value"]


@pytest.mark.parametrize(
    ("kw", "expect"),
    [
        ({"cores": "4"}, r"^cores must be a number, not a string \(got '4'\)$"),
        ({"horizon_s": "100"}, r"^horizon_s must be a number, not a string \(got '100'\)$"),
        ({"machines": "2"}, r"^machines must be an integer \(got '2'\)$"),
    ],
)
def test_python_api_names_the_argument_of_a_wrong_type(kw: dict[str, Any], expect: str) -> None:
    from sim import simulate
    from sim.capacity.generators import random_walk
    from tests.test_sim_engine import frame

    args: dict[str, Any] = {"machines": 2, "cores": 4.0, "horizon_s": 100.0, **kw}
    with pytest.raises(ValueError, match=expect):
        simulate(frame([(0, 10, 1)]), random_walk(2, 100.0), **args)


def test_ctrl_c_prints_one_line_and_no_teardown_noise() -> None:
    """After ``varcap: interrupted`` the interpreter's teardown (where DuckDB's nanobind reported every
    object still alive, 43 lines on a sweep) writes nowhere."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    code = (
        "import atexit, os, sys\n"
        "atexit.register(lambda: os.write(2, b'nanobind: leaked 3 instances!\\n'))\n"
        "import pipelines.cli as c\n"
        "def boom(args):\n    raise KeyboardInterrupt\n"
        "c.cmd_policies = boom\n"
        "sys.exit(c.main(['policies']))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert p.returncode == 130 and p.stderr == "varcap: interrupted\n", p


def test_sweep_workers_leave_ctrl_c_to_their_parent() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    code = (
        "import os, signal\nfrom studies.sweep import _watch_parent\n_watch_parent(os.getppid())\n"
        "print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert p.stdout.strip() == "True", p
