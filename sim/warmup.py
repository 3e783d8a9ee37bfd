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
# The harvest policies (entries with ``warm_capacity = "harvest"``) run on 8 harvest VMs with a long enough
# change history for SlackSched's modelled passes (sim.harvest.passes) and a queue for its fast pass;
# Harmony's engine (its own simulator) by :func:`warm_harmony`
# what :func:`cache_loads` runs to check a warm cache before every compiled `varcap simulate`/`sweep`: the
# kernels' one signature each (``tests/test_warm_once.py`` holds every warm policy to it) loads through FF
# alone — First-Fit's flat kernel (sim.engine.ff); the general kernel, which a First-Fit process never
# loads, is checked by its index only (kernel_cached), so a damaged one fails its first run, not this check —
# without IAS's survival fit, which imported statsmodels/scipy/pandas into every simulating process
# (ensure_warm: 314 -> 204 MB peak RSS, 1.42 -> 0.63 CPU s)
CHECK_POLICIES = ("ff",)
# CPU seconds of a cold `varcap warm` (every warm policy and Harmony compiled into an empty cache), user +
# sys of `NUMBA_CACHE_DIR=<fresh dir> /usr/bin/time varcap warm` on 2 cores, 2026-12-02: 185.74 = 176.71 +
# 9.03 at 075974a (load 3.7-4.4; 6 min 18 s of wall time, peak RSS 1.07 GB), run side by side with 84a9fa6
# before it: 239.89 = 227.17 + 12.72 (1.25 GB); an earlier pair 188.65 against 227.99. 84a9fa6 compiled
# 448 overloads of 226 functions, a callee again for every combination of constants at its call sites
# (numba types a constant argument as a literal) and integer sort keys a second time; 075974a compiles
# each simulator function once (367 overloads; sim.engine._jit.cached_njit). On a quiet machine (nothing
# else running, load 1.0-1.4) at 2df22c4 + the benchmark order: 127.02 = 120.25 + 6.77 (2 min 7 s of wall
# time, peak RSS 1.01 GB). On another 2-core machine (2.0 GHz Xeon, quiet: load 0.4-1.0), the cold warm of
# `make run` on a fresh clone at 573e39b took 160 s of wall time, one process; on the same machine on
# 2026-12-03, `varcap warm` of a fresh clone at 962af0d, the only process (load 0.04 at its start), 238.30 =
# 230.52 + 7.78 CPU s (this machine's speed moves by up to 1.8x within an hour). Of a cProfile'd cold warm,
# a quarter is in LLVM (llvmlite's calls: 115 of 438 profiled s), the rest numba's typing and lowering in
# Python. On 2026-12-05 with eba11fa's change (numba's own overloads linked too), a fresh NUMBA_CACHE_DIR
# each, one process at a time in a fast hour (the C reference First-Fit at 0.26-0.28 µs a job): 87.6, 88.5,
# 91.4, 92.7 CPU s. The message quotes the quiet extremes, in CPU minutes, and says a busy machine takes longer
COMPILE_CPU_S = (88, 238)


def warm_policies() -> tuple[str, ...]:
    """The policies ``varcap warm`` runs: every registered policy whose entry says ``warm``."""
    from sim.policies import entries

    return tuple(name for name, e in entries() if e.warm)


#: Harmony's compiled engine: not a policy of the registry (its own simulator), warmed by
#: :func:`warm_harmony`; :func:`cold_hooks` names it ``harmony``
HARMONY_MODULE = "sim.harmony.engine"
#: every module of Harmony's compiled functions (the engine, the queueing model's container counts):
#: a cold cache of any of them is a cold Harmony
HARMONY_MODULES = (HARMONY_MODULE, "sim.harmony.queueing")


def hook_modules() -> dict[str, str]:
    """Modules of numba functions of their own (outside the engine kernel) → the warm policy whose warm-up
    compiles them (its entry's ``compiled_modules``; :func:`cold_hooks`), and Harmony's modules →
    ``harmony``."""
    from sim.policies import entries

    return {m: name for name, e in entries() if e.warm for m in e.compiled_modules} | {
        m: "harmony" for m in HARMONY_MODULES
    }


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
    """Every warm policy one of whose ``compiled_modules`` has no cached numba function (several policies
    may compile parts of one module: all of them run), and ``harmony`` if one of Harmony's modules has
    none."""
    from sim.policies import entries

    cold = {m for m in hook_modules() if not module_cached(m)}
    pols = tuple(name for name, e in entries() if e.warm and cold & set(e.compiled_modules))
    return pols + (("harmony",) if cold & set(HARMONY_MODULES) else ())


def kernel_cached() -> bool | None:
    """True if numba's on-disk cache holds the engine kernels (the general one and First-Fit's) compiled
    from the current source, False if not, None if this numba version does not let us tell (then
    :func:`ensure_warm` warms to be safe)."""
    import sim.engine.ff  # noqa: F401  (defines First-Fit's kernel)
    from sim.engine import _ff_kernel, _kernel
    from sim.engine._jit import cache_index

    try:
        return bool(cache_index(_kernel)) and bool(cache_index(_ff_kernel))
    except (AttributeError, OSError, EOFError, ValueError):
        return None


def warm(policies: tuple[str, ...] | None = None, harmony: bool | None = None) -> float:
    """Run a tiny simulation with every policy in ``policies`` (default: :func:`warm_policies`), each on
    the capacity its entry names (``warm_capacity``: a 4-machine random walk, or 8 harvest VMs whose change
    history is long enough for the modelled passes), and Harmony's three schemes on a tiny workload
    (:func:`warm_harmony`; ``harmony`` default: when ``policies`` is None or names ``harmony``, as
    :func:`cold_hooks` does), compiling and caching what they run if needed; return the seconds it took."""
    import polars as pl

    from sim.api import simulate
    from sim.capacity.generators import harvest_trace, random_walk
    from sim.engine import use_engine
    from sim.policies import entry
    from sim.workloads.generators import harvest_tasks

    if harmony is None:
        harmony = policies is None or "harmony" in policies
    policies = warm_policies() if policies is None else tuple(p for p in policies if p != "harmony")
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
    # harvest VMs: 8 nodes changing every 15 min on average for a day (enough inter-change times for
    # eq. 1's model), offered 90 % of their cores so a queue forms (the waiting pass's fast path)
    day = 86400.0
    htr = harvest_trace(8, day, max_cores=16, mean_inter_change_s=900.0, seed=0)
    hjobs = harvest_tasks(8 * 9.0, day, 0.9, seed=0)  # 8 VMs of 9 cores on average (2–16)
    with use_engine("compiled"):  # a small run would otherwise take the interpreted engine
        for policy in policies:
            if entry(policy).warm_capacity == "harvest":
                simulate(hjobs, htr, 8, 16.0, day, policy, {"nodes": "8"}, seed=0)
            else:
                simulate(jobs, cap, 4, 4.0, 7200.0, policy, seed=0)
    if harmony:
        warm_harmony()
    return time.perf_counter() - t0


def warm_harmony() -> None:
    """Run Harmony's baseline, CBP and CBS once on a tiny synthetic workload (200 tasks, an hour, two
    machine types), so its compiled engine (:mod:`sim.harmony.engine`) is cached."""
    import numpy as np
    import polars as pl

    from sim.harmony.classify import fit_classes
    from sim.harmony.forecast import ForecastConfig
    from sim.harmony.machines import MachineType
    from sim.harmony.run import HarmonyConfig, predict_demand, simulate_harmony

    rng = np.random.default_rng(0)
    n = 200
    big = rng.random(n) < 0.2
    jobs = pl.DataFrame(
        {
            "submit_s": np.sort(rng.uniform(0, 3600.0, n)),
            "duration_s": rng.exponential(300.0, n) + 1.0,
            "cpu": np.where(big, rng.uniform(0.2, 0.5, n), rng.uniform(0.005, 0.05, n)),
            "mem": np.where(big, rng.uniform(0.05, 0.3, n), rng.uniform(0.005, 0.05, n)),
            "priority": rng.choice([0, 4, 9], n),
        }
    )
    a = {c: jobs[c].to_numpy() for c in ("cpu", "mem", "priority", "duration_s")}
    tc = fit_classes(a["cpu"], a["mem"], a["priority"], a["duration_s"], k_max=2, seed=0)
    types = (MachineType("a", 0.25, 0.5, 30, 70, 170), MachineType("b", 1.0, 1.0, 10, 300, 680))
    for scheme in ("baseline", "cbp", "cbs"):
        cfg = HarmonyConfig(scheme=scheme, types=types)
        dem = predict_demand(jobs, tc, 12, cfg, ForecastConfig(window=12, refit_every=12, min_train=4))
        simulate_harmony(jobs, tc, dem, cfg)


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
        f"compiling the simulator once for this environment (about {COMPILE_CPU_S[0] / 60:.0f}–"
        f"{COMPILE_CPU_S[1] / 60:.0f} CPU minutes, longer on a "
        "busy machine; later runs reuse numba's cache) …"
    )
    say(f"simulator compiled and cached in {warm():.0f} s")
    return True
