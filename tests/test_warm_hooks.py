"""`varcap warm` also compiles the numba functions outside the engine kernel: Target*'s (Borg-scale
target-stretch run first after `varcap warm` compiled them, ~12 CPU s and 140 MB of peak RSS more than
target-asap run after it), SlackSched's passes (on a modelled history) and Harmony's engine."""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim import warmup

REPO = Path(__file__).resolve().parents[1]


def test_a_cold_warm_up_covers_every_hook_module() -> None:
    """A cold cache's warm-up (:func:`sim.warmup.warm`, all of WARM_POLICIES) compiles the hook modules."""
    assert set(warmup.HOOK_MODULES.values()) <= {*warmup.WARM_POLICIES, "harmony"}
    assert {"sim.policies.target", "sim.harvest.passes", warmup.HARMONY_MODULE} <= set(warmup.HOOK_MODULES)


def test_a_cold_harmony_module_alone_makes_harmony_cold(monkeypatch) -> None:
    """Harmony's queueing model compiles a function of its own: its cache cold, the engine's warm, Harmony
    is warmed again (it used to be left to the first Harmony run)."""
    monkeypatch.setattr(warmup, "module_cached", lambda m: m != "sim.harmony.queueing")
    assert warmup.cold_hooks() == ("harmony",)
    monkeypatch.setattr(warmup, "module_cached", lambda m: True)
    assert warmup.cold_hooks() == ()


def test_varcap_warm_compiles_cold_hooks_when_the_kernel_is_warm(monkeypatch, capsys) -> None:
    from pipelines.cli.data import cmd_warm

    ran: list[tuple[str, ...]] = []
    monkeypatch.setattr(warmup, "ensure_warm", lambda *a: False)  # the kernel is warm …
    monkeypatch.setattr(warmup, "cold_hooks", lambda: ("target-asap",))  # … Target*'s hooks are not
    monkeypatch.setattr(warmup, "warm", lambda policies=(), harmony=None: ran.append(tuple(policies)) or 0.0)
    assert cmd_warm(argparse.Namespace(force=False)) == 0
    assert ran == [("target-asap",)]
    assert "target-asap" in capsys.readouterr().out
    monkeypatch.setattr(warmup, "cold_hooks", lambda: ())
    ran.clear()
    assert cmd_warm(argparse.Namespace(force=False)) == 0
    assert ran == []  # all warm: nothing run


_PROBE = """
import sys
from sim import warmup
print(warmup.cold_hooks())
if sys.argv[1] == "warm":
    warmup.warm(warmup.cold_hooks())
else:
    import polars as pl
    from sim.api import simulate
    from sim.capacity.generators import random_walk
    import sim.policies.target as T
    jobs = pl.DataFrame({"job_id": [0, 1, 2], "submit_s": [0.0, 5.0, 9.0], "duration_s": [900.0, 60.0, 30.0],
                         "cores": [2.0, 4.0, 1.0]})
    simulate(jobs, random_walk(4, 3600.0, seed=0, changes_per_hour=4.0, step=0.25), 4, 4.0, 3600.0,
             "target-stretch")
    # SlackSched's passes and Harmony's engine through the same warm-up runs, in this second process
    warmup.warm(("slacksched", "slacksched-heartbeat", "harmony"))
    import sim.harmony.engine as H
    import sim.harvest.passes as P
    ds = [v for M in (T, P, H) for v in vars(M).values()
          if getattr(v, "__module__", "") == M.__name__ and hasattr(v, "stats")]
    print(sum(len(d.stats.cache_misses) for d in ds), sum(len(d.stats.cache_hits) for d in ds))
"""


@pytest.mark.slow  # compiles the hook modules once in an empty cache: ~1-2 CPU min
def test_target_runs_compile_nothing_after_the_hooks_warm_up(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_CACHE_DIR": str(tmp_path / "numba")}

    def run(mode: str) -> list[str]:
        out = subprocess.run([sys.executable, "-c", _PROBE, mode], cwd=REPO, env=env, capture_output=True,
                             text=True, timeout=900)  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout.strip().splitlines()

    cold = ast.literal_eval(run("warm")[0])  # the names the probe printed; an empty cache: all cold
    assert {*warmup.HOOK_MODULES.values(), "slacksched"} <= set(cold)
    first, counts = run("simulate")
    assert first == "()"  # warm now …
    misses, hits = map(int, counts.split())
    # … and another process's Target*, SlackSched and Harmony runs load, compile nothing
    assert misses == 0 and hits > 0
