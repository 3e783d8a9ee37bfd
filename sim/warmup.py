"""Compile the simulator's numba kernel once per environment, not once per process.

The engine's functions are ``@njit(cache=True)``: numba writes the machine code beside the sources (or in
``$NUMBA_CACHE_DIR``) and later processes load it in about a second instead of compiling for about a
minute. Only the first process after an install or an edit of the engine compiles; :func:`warm` makes that
happen once, up front, with a message (``varcap warm``, run by ``make install``; ``varcap simulate`` and
``varcap sweep`` call :func:`ensure_warm` so parallel sweep workers never compile side by side).

A cache that numba indexes is not trusted as warm until it loads: :func:`ensure_warm` runs the warm-up
simulations on it, and a cache file that fails to load (corrupt, truncated, written by another LLVM) is
deleted and the engine compiled again, with a message naming the error.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# every policy whose engine path the warm-up exercises: those whose registry entry says ``warm``
# (:func:`warm_policies`; one kernel signature serves them all today; simulating each also loads their
# modules, so a policy that adds a compiled path is warmed too). The Target* hooks are numba functions of
# their own (sim.policies.target): left out, the first Target* run after `varcap warm` compiled them
# (target-stretch at Borg scale: ~12 CPU s and 140 MB more peak RSS than target-asap run after it).
# SlackSched's passes (sim.harvest.passes) need a modelled history, which a 4-job warm-up does not build:
# they compile on first use (a few seconds)
# what :func:`cache_loads` runs to check a warm cache before every compiled `varcap simulate`/`sweep`: the
# kernel's one signature (``tests/test_warm_once.py`` holds every warm policy to it) loads through FF alone,
# without IAS's survival fit, which imported statsmodels/scipy/pandas into every simulating process
# (ensure_warm: 314 -> 204 MB peak RSS, 1.42 -> 0.63 CPU s)
CHECK_POLICIES = ("ff",)
# CPU seconds of a cold `varcap warm` (every warm policy compiled): 115.7 (user + sys, `/usr/bin/time -v`,
# 2026-11-27, load 6-14 on 2 cores: 17 min of wall time); the message says it in minutes
COMPILE_CPU_S = 120


def warm_policies() -> tuple[str, ...]:
    """The policies ``varcap warm`` runs: every registered policy whose entry says ``warm``."""
    from sim.policies import entries

    return tuple(name for name, e in entries() if e.warm)


def hook_modules() -> dict[str, str]:
    """Modules of numba functions of their own (outside the engine kernel) → the warm policy whose warm-up
    compiles them (its entry's ``compiled_modules``; :func:`cold_hooks`)."""
    from sim.policies import entries

    return {m: name for name, e in entries() if e.warm for m in e.compiled_modules}


def __getattr__(name: str) -> object:
    # computed on use: they import every policy module
    if name == "WARM_POLICIES":
        return warm_policies()
    if name == "HOOK_MODULES":
        return hook_modules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def module_cached(name: str) -> bool:
    """True if numba's on-disk cache holds any function of module ``name`` compiled from its current
    source (numba keys each function's cache index by its source file's stamp: an edit makes them all
    stale at once)."""
    import importlib

    from sim.engine._jit import cache_index

    mod = importlib.import_module(name)
    for v in vars(mod).values():
        f = getattr(getattr(v, "_cache", None), "_cache_file", None)
        if f is None or getattr(v, "__module__", None) != name:
            continue
        try:
            if cache_index(v):
                return True
        except (AttributeError, OSError, EOFError, ValueError):
            continue
    return False


def cold_hooks() -> tuple[str, ...]:
    """The policies of :func:`hook_modules` whose module's numba functions are not cached."""
    return tuple(p for m, p in hook_modules().items() if not module_cached(m))


def kernel_cached() -> bool | None:
    """True if numba's on-disk cache holds the engine kernel compiled from the current source, False if
    not, None if this numba version does not let us tell (then :func:`ensure_warm` warms to be safe)."""
    from sim.engine import _kernel
    from sim.engine._jit import cache_index

    try:
        return bool(cache_index(_kernel))
    except (AttributeError, OSError, EOFError, ValueError):
        return None


def warm(policies: tuple[str, ...] | None = None) -> float:
    """Run a tiny simulation with every policy in ``policies`` (default: :func:`warm_policies`), compiling
    and caching the kernel if needed; return the seconds it took."""
    import polars as pl

    from sim.api import simulate
    from sim.capacity.generators import random_walk
    from sim.engine import use_engine

    policies = warm_policies() if policies is None else policies
    t0 = time.perf_counter()
    jobs = pl.DataFrame(
        {
            "job_id": [0, 1, 2, 3],
            "submit_s": [0.0, 60.0, 600.0, 1800.0],
            "duration_s": [900.0, 300.0, 4000.0, 120.0],
            "cores": [1.0, 2.0, 4.0, 1.0],
        }
    )
    cap = random_walk(4, 7200.0, seed=0, changes_per_hour=4.0, step=0.25)
    with use_engine("compiled"):  # a 4-job run would otherwise take the interpreted engine
        for policy in policies:
            simulate(jobs, cap, 4, 4.0, 7200.0, policy, seed=0)
    return time.perf_counter() - t0


def cache_loads() -> str | None:
    """None if the engine's cached machine code loads and runs (the warm-up simulations of
    :data:`CHECK_POLICIES`, compiled engine), else the error, in one line. Loads the compiled engine into
    this process (as a simulation would)."""
    from sim.validate import InputError

    try:
        warm(CHECK_POLICIES)
    except InputError:
        raise
    except Exception as e:  # numba raises e.g. RuntimeError("LLVM bitcode parsing error") on a bad file
        return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return None


def ensure_warm(say: Callable[[str], object] = print) -> bool:
    """Warm the cache if it is cold, or if it is indexed but does not load (:func:`cache_loads`: the bad
    files are deleted and the engine compiled again), telling ``say`` why the wait; True if a compile was
    needed. Raises RuntimeError if the freshly compiled engine still fails."""
    from sim.engine import _jit

    if kernel_cached():
        err = cache_loads()
        if err is None:
            return False
        n = _jit.discard_cache()
        say(f"the simulator's numba cache does not load ({err}); deleted its {n} files, compiling again …")
        say(f"simulator compiled and cached in {warm():.0f} s")
        err = cache_loads()
        if err is not None:
            raise RuntimeError(f"the simulator's compiled engine fails even after a fresh compile: {err}")
        return True
    say(
        f"compiling the simulator once for this environment (about {COMPILE_CPU_S // 60} CPU minutes, longer on a "
        "busy machine; later runs reuse numba's cache) …"
    )
    say(f"simulator compiled and cached in {warm():.0f} s")
    return True
