"""One way for every benchmark to measure a command as a whole process: its own CPU seconds and peak RSS.

The command runs as the child of a small launcher (:data:`LAUNCHER`, ``python -S``: a few MB), which
reads the child's usage with ``os.wait4`` and writes it to a file. Linux carries the forking process's
high-water RSS into the child's ``ru_maxrss`` at exec, so a command forked straight from a large process
(a 2-GB pytest worker) reads that process's peak (measured: 2,040 MB for a 20-job run); through the
launcher the figure is the command's own. No external tool (``/usr/bin/time``) is needed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: starts ``argv[2:]`` (searched on PATH), waits for it and writes its exit code and ``wait4`` usage as JSON
#: to ``argv[1]``; the command keeps the launcher's stdout and stderr
LAUNCHER = (
    "import json, os, sys\n"
    "pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)\n"
    "_, status, ru = os.wait4(pid, 0)\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    json.dump({'code': os.waitstatus_to_exitcode(status), 'cpu_s': ru.ru_utime + ru.ru_stime,"
    " 'rss_kb': ru.ru_maxrss}, f)\n"
)


def measured_process(
    cmd: list[str], env: dict[str, str] | None = None, cwd: str | None = None, name: str | None = None
) -> dict:
    """Run ``cmd`` as a fresh process (through :data:`LAUNCHER`); returns its own ``cpu_s`` (user + sys),
    ``rss_mb`` (peak), ``wall_s`` and ``out`` (stdout). Bytecode is written and read as an installed
    environment runs (``PYTHONDONTWRITEBYTECODE`` is dropped: with it every module of the project was
    compiled from source in each process, ~0.05 CPU s of a small run). Raises RuntimeError naming the
    command (``name``, else the command line), with the end of its stderr, if it fails."""
    env = {k: v for k, v in (os.environ if env is None else env).items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="varcap-usage-") as d:
        usage = Path(d, "usage.json")
        t0 = time.perf_counter()
        r = subprocess.run(
            [sys.executable, "-S", "-c", LAUNCHER, str(usage), *cmd],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            check=False,
        )
        wall = time.perf_counter() - t0
        res = json.loads(usage.read_text()) if usage.is_file() else {"code": r.returncode}
    if r.returncode != 0 or res["code"] != 0:
        raise RuntimeError(f"{name or ' '.join(cmd)} failed: {r.stderr.strip()[-500:]}")
    return {"cpu_s": res["cpu_s"], "rss_mb": res["rss_kb"] / 1024, "wall_s": wall, "out": r.stdout}
