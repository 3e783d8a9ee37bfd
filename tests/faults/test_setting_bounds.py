"""Every numeric setting of every registered policy, capacity kind and workload has a declared bound
(:mod:`sim.bounds`): hostile values (NaN, ±inf, 0, tiny, negative, huge, and each bound's own ends) are
either refused with one ValueError line naming the setting, or the run finishes within a wall-clock
guard — no setting can hang a run, crash it with another exception or silently run the defaults."""

from __future__ import annotations

import dataclasses
import functools
import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sim import simulate
from sim.bounds import Bound, bounds_of, numeric_fields
from sim.capacity.generators import harvest_trace, random_walk
from sim.capacity.kinds import KINDS, REQUIRED
from sim.capacity.trace import CapacitySpec
from sim.energy import CarbonSignal
from sim.policies import available, get_policy, parse_params
from sim.workloads.registry import WORKLOADS, WorkloadArgs, resolve_workload
from tests.test_sim_engine import frame

H = 3600.0
HORIZON = 24 * H
GUARD_S = 60.0  # a run on the 20-job problem takes about a second at every accepted value (loaded CI: more)
HOSTILE = ("nan", "inf", "-inf", "0", "1e-9", "-1e-9", "-1", "-1e9", "1e9", "1e300")


def _ends(b: Bound) -> list[str]:
    """The bound's own finite ends (accepted unless open): the extremes a run must survive."""
    return [repr(float(x)) for x in (b.lo, b.hi) if math.isfinite(x)]


def guarded(fn: Callable[[], Any], what: str) -> Any:
    """``fn()`` in a daemon thread; fails the test if it runs longer than :data:`GUARD_S`."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(GUARD_S)
    if t.is_alive():
        pytest.fail(f"{what}: still running after {GUARD_S:g} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _policies() -> list[str]:
    names = [n for n in available() if n != "defer"]  # defer forecasts from a carbon signal: below
    return names


_JOBS = frame([(1800.0 * i, 1800.0 + 300.0 * (i % 7), 1 + i % 3) for i in range(20)])
#: the policies a run is tried with: one per Params class and code path (the IAS family differs only in
#: which heuristics run; ias-h3 reads the survival model that history/refit_h/window_h feed)
RUN_POLICIES = {
    "ff", "ff-unaware", "ias", "ias-h3", "ias-forecast", "oracle", "capsched", "slacksched",
    "slacksched-nodelay", "slacksched-heartbeat", "target-asap", "packed-target-asap",
}  # fmt: skip
_CAP = random_walk(4, HORIZON, changes_per_hour=1.0, step=0.25, seed=1)
_HARVEST = harvest_trace(4, HORIZON, seed=1)  # per-machine: what nodes and the acquirer run on


def _extra(policy: str, key: str) -> dict[str, str]:
    """Settings a setting needs to take effect (refit_h/window_h read only under history=trailing; the
    harvest-loop options only with nodes or the acquirer)."""
    if key in ("refit_h", "window_h") and policy.startswith("ias"):
        return {"history": "trailing"}
    if key in ("acquirer_period_h", "acquirer_fraction"):
        return {"acquirer": "true"}
    return {}


_INTENSITY = 100.0 + 150.0 * (1 + np.sin(np.arange(48) * 2 * np.pi / 24))  # gCO2/kWh, hourly
_CARBON = CarbonSignal(_INTENSITY)
#: ias-forecast reads a carbon-budget capacity (4 machines on at intensity ≤ 100 gCO2/kWh, fewer above)
_BUDGET_CAP = CapacitySpec("carbon_budget", {"mean": 0.5}).build(4, HORIZON, _INTENSITY)


def _capacity(policy: str, key: str) -> tuple[Any, float]:
    if key in ("nodes", "acquirer_period_h", "acquirer_fraction"):
        return _HARVEST, 48.0
    return (_BUDGET_CAP if policy == "ias-forecast" else _CAP), 4.0


@functools.cache
def _warm(policy: str) -> None:
    """One unguarded run with the defaults: a cold numba cache compiles here, not under the guard."""
    carbon = _CARBON if policy == "ias-forecast" else None
    cap, cores = _capacity(policy, "")
    simulate(_JOBS, cap, 4, cores, HORIZON, policy=policy, carbon=carbon)


POLICY_CASES = [
    (name, key, value)
    for name in _policies()
    for key in numeric_fields(get_policy(name).Params)
    for value in dict.fromkeys((*HOSTILE, *_ends(bounds_of(get_policy(name).Params)[key])))
]


def test_run_policies_are_registered() -> None:
    assert set(available()) >= RUN_POLICIES


def test_every_numeric_policy_setting_declares_a_bound() -> None:
    for name in available():
        if not type(get_policy(name)).__module__.startswith("sim.policies."):
            continue  # a policy a test registered (tests/test_python_policy.py's toy), not the product's
        params = get_policy(name).Params
        missing = sorted(set(numeric_fields(params)) - set(bounds_of(params)))
        assert not missing, f"policy {name}: settings without a declared bound: {missing}"


@pytest.mark.parametrize(("policy", "key", "value"), POLICY_CASES)
def test_policy_setting_refused_or_runs(policy: str, key: str, value: str) -> None:
    settings = {key: value, **_extra(policy, key)}
    bound = bounds_of(get_policy(policy).Params)[key]
    try:
        parse_params(get_policy(policy), settings)
    except ValueError as e:
        msg = str(e)
        assert "\n" not in msg and msg.startswith(f"{policy}: {key}="), msg
        assert f"{key} must be" in msg or "is not a" in msg, msg
        f = float(value)
        assert not bound.ok(f) or not float(f).is_integer(), msg  # refused: outside the bound (or not whole)
        return
    f = float(value)
    assert bound.ok(f), f"{policy}: {key}={value} accepted outside {bound.describe()}"
    if policy not in RUN_POLICIES:
        return  # its refusals are checked; its runs are those of its family's representative
    _warm(policy)
    cap, cores = _capacity(policy, key)
    carbon = _CARBON if policy == "ias-forecast" else None
    try:
        r = guarded(
            lambda: simulate(_JOBS, cap, 4, cores, HORIZON, policy=policy, settings=settings, carbon=carbon),
            f"{policy} {key}={value}",
        )
    except ValueError as e:  # a time step too fine for the horizon, more nodes than the trace has: refused
        assert "\n" not in str(e) and f"{key}=" in str(e), e
        return
    assert r.jobs.height == 20


def test_defer_slack_refused_or_runs() -> None:
    from sim.energy import CarbonSignal

    carbon = CarbonSignal(np.linspace(100.0, 400.0, 48))
    bound = bounds_of(get_policy("defer").Params)["slack"]
    for value in (*HOSTILE, *_ends(bound)):
        try:
            parse_params(get_policy("defer"), {"slack": value})
        except ValueError as e:
            assert str(e).startswith("defer: slack="), e
            continue
        guarded(
            lambda v=value: simulate(
                _JOBS, _CAP, 4, 4.0, HORIZON, policy="defer", settings={"slack": v}, carbon=carbon
            ),
            f"defer slack={value}",
        )


# ------------------------------------------------------------------------------------- capacity kinds
def _base(kind: str) -> dict[str, Any]:
    """Valid values for a kind's required parameters."""
    required = {
        "m_avg": 4,
        "m_ra": 2,
        "period_s": 3600.0,
        "pool": 3,
        "threshold": 200.0,
        "trace": "us-west-2a",
    }
    return {
        k: required[k] for k, p in KINDS.get(kind).params.items() if p.default is REQUIRED and k in required
    }


KIND_CASES = [
    (name, key, value)
    for name, kind in KINDS.items()
    for key, p in kind.params.items()
    if p.type in (int, float)
    for value in (*HOSTILE, *_ends(p.bound or Bound()))
]


def test_every_numeric_kind_parameter_declares_a_bound() -> None:
    for name, kind in KINDS.items():
        for key, p in kind.params.items():
            assert p.type not in (int, float) or p.bound is not None, f"capacity kind {name}: {key}"


@pytest.mark.parametrize(("kind", "key", "value"), KIND_CASES)
def test_kind_parameter_refused_or_builds(kind: str, key: str, value: str) -> None:
    text = f"{kind}:" + ",".join(f"{k}={v}" for k, v in {**_base(kind), key: value}.items())
    p = KINDS.get(kind).params[key]
    try:
        spec = (
            CapacitySpec.parse(text)
            if KINDS.get(kind).cli
            else CapacitySpec(kind, {**_base(kind), key: float(value)})
        )
    except ValueError as e:
        msg = str(e)
        assert "\n" not in msg and f"{key}=" in msg, msg
        return
    assert p.bound is not None and p.bound.ok(float(spec.params[key])), f"{kind}: {key}={value} accepted"
    if kind == "spot":
        return  # built from the stored public trace: its offset is checked against the trace's length
    signal = np.linspace(50.0, 400.0, 48)
    try:
        trace = guarded(lambda: spec.build(4, HORIZON, signal, cores=4.0), f"{kind} {key}={value}")
    except ValueError as e:  # a limit that depends on the horizon or on another parameter
        assert "\n" not in str(e) and key in str(e), e
        return
    assert trace.horizon_s == HORIZON


# ------------------------------------------------------------------------------------------ workloads
WORKLOAD_CASES = [
    (name, key, value)
    for name, spec in WORKLOADS.items()
    for key in spec.bounds
    for value in (*HOSTILE, *_ends(spec.bounds[key]))
]


def test_every_numeric_workload_field_declares_a_bound() -> None:
    from sim.registry import pattern_fields

    for name, spec in WORKLOADS.items():
        numeric = [f for f in pattern_fields(name) if spec.params.get(f, float) in (int, float)]
        assert sorted(numeric) == sorted(spec.bounds), f"workload {name}"


_WORKLOAD_OK = {
    "s": "1.5",
    "alpha": "1.5",
    "xm_s": "300",
    "mix": "light",
    "tasks_min": "2",
    "tasks_max": "4",
    "hours": "2",
}


@pytest.mark.parametrize(("workload", "key", "value"), WORKLOAD_CASES)
def test_workload_field_refused_or_builds(workload: str, key: str, value: str) -> None:
    from sim.registry import pattern_fields

    vals = {f: (value if f == key else _WORKLOAD_OK[f]) for f in pattern_fields(workload)}
    name = workload
    for f, v in vals.items():
        name = name.replace(f"<{f}>", v)
    if "-" in value:  # a name field holds no '-' (-1, 1e-9): the name matches no pattern at all
        return
    try:
        spec, params = resolve_workload(name)
    except ValueError as e:
        assert "\n" not in str(e) and f"{key}=" in str(e), e
        return
    args = WorkloadArgs(params, 2, 4.0, HORIZON, HORIZON / 86400.0, 0.5, 0)
    try:
        jobs = guarded(lambda: spec.build(args), f"workload {name}")
    except ValueError as e:  # a limit that depends on the horizon (fixed-<hours>: shorter than it)
        assert "\n" not in str(e) and f"{key}=" in str(e), e
        return
    assert jobs.height >= 0


def test_params_built_directly_are_checked_too() -> None:
    """The bound holds however the settings arrive: the Python API building a Params dataclass itself."""
    from sim.policies.ias import IASParams
    from sim.policies.target import TargetParams

    with pytest.raises(ValueError, match=r"^period_s=nan is out of range; period_s must be"):
        IASParams(period_s=float("nan"))
    with pytest.raises(ValueError, match=r"^reference_days=0 is out of range"):
        TargetParams(reference_days=0)
    from sim.policies.ff import FFParams  # its own __post_init__ does not call the base's: checked anyway

    with pytest.raises(ValueError, match=r"^acquirer_fraction=2 is out of range"):
        FFParams(acquirer_fraction=2)
    assert dataclasses.replace(TargetParams(), pack=3).pack == 3
