"""Capacity kinds: every kind of capacity a spec can name, with its parameters, help text and builder.

One :class:`CapacityKind` and one :func:`register` line per kind; :class:`sim.capacity.trace.CapacitySpec`
(CLI ``--capacity``, catalogue dicts, capacity assets) validates and builds through this registry, the
scenario runner asks it which hourly signal a kind reads and on what platform it is simulated, and
``varcap simulate --help`` shows :func:`capacity_help`. Light on purpose: builders import the
generators (numpy) when they run.

A builder is ``build(spec, args)``: ``spec.get(name)`` gives a parameter or its default, ``args``
(:class:`BuildArgs`) the platform, horizon and — for a kind with a ``signal`` — the hourly signal,
already repeated to cover the horizon and cut to whole hours.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sim.bounds import Bound
from sim.registry import Registry

if TYPE_CHECKING:
    from sim.capacity.trace import CapacitySpec

#: Mean fraction of machines alive in every variable-capacity model (thesis §3.4: "on average 70 % of
#: the machines"); also the fixed-capacity reference and the target of budget traces. Re-exported as
#: ``sim.capacity.trace.MEAN_CAPACITY``.
MEAN_CAPACITY = 0.7


class _Required:
    def __repr__(self) -> str:
        return "required"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Param:
    """One parameter of a capacity kind: its type, default (``REQUIRED``: none), help text and — for a
    number — its :class:`~sim.bounds.Bound` (checked when a spec is made)."""

    type: type
    default: Any = REQUIRED
    help: str = ""
    bound: Bound | None = None


@dataclass(frozen=True)
class BuildArgs:
    """What a builder gets besides its spec. ``signal``: hourly values covering the horizon (signal kinds
    only); ``label``: the signal's name as given by the caller (None: the kind's default);
    ``signal_of(spec)``: the hourly signal of a nested spec (a ``pool``'s inner spec), None if the caller
    has none."""

    machines: int
    horizon_s: float
    cores: float = 1.0
    signal: Any = None
    label: str | None = None
    signal_of: Callable[[CapacitySpec], Any] | None = None


@dataclass(frozen=True)
class CapacityKind:
    """A kind of capacity. ``signal``: the hourly signal it is built from (``carbon`` = gCO2/kWh,
    ``price`` = USD/MWh, ``any``; None: generated from its parameters alone). ``one_machine``: simulated
    as one machine holding every core of the platform (paper 003's resource level). ``cli``: can be
    written as ``--capacity KIND:key=value,…`` (False for kinds whose parameters are not scalars).
    ``points(spec, machines, horizon_s)``: about how many capacity points the trace has, known before it
    is built (None: one, plus each time-step or rate parameter's steps over the horizon)."""

    name: str
    help: str
    params: Mapping[str, Param]
    build: Callable[[CapacitySpec, BuildArgs], Any]
    signal: str | None = None
    one_machine: bool = False
    cli: bool = True
    positional: str | None = None  # ``KIND:value`` sets this parameter (``spot:us-west-2a``)
    points: Callable[[CapacitySpec, int, float], float] | None = None


def expected_points(spec: CapacitySpec, machines: int, horizon_s: float) -> float:
    """About how many points ``spec``'s trace has over ``horizon_s`` on ``machines`` machines, before it is
    built (:mod:`sim.estimate` sizes a run with it; 0 when it cannot be told, e.g. a trace file)."""
    kind = get_kind(spec.kind)
    if kind.points is not None:
        return float(kind.points(spec, machines, horizon_s))
    steps = (p.bound.steps(float(spec.get(k)), horizon_s) for k, p in kind.params.items() if p.bound)
    return 1.0 + sum(steps)


def _hourly(spec: CapacitySpec, machines: int, horizon_s: float) -> float:
    return horizon_s / 3600.0 + 1.0


KINDS: Registry[CapacityKind] = Registry("capacity kind")


def register(kind: CapacityKind) -> CapacityKind:
    """Add a capacity kind (ValueError if its name is taken)."""
    return KINDS.register(kind.name, kind)


def get_kind(name: str) -> CapacityKind:
    """The kind registered as ``name`` (``-`` or ``_``). ValueError listing the kinds if there is none."""
    return KINDS.get(name.replace("-", "_"))


def capacity_help() -> str:
    """The ``--capacity`` help of ``varcap simulate``: a trace file, or each command-line kind with its
    parameters and defaults (from the registry)."""
    kinds = []
    for name, k in KINDS.items():
        if not k.cli or k.signal:
            continue
        ps = ",".join(f"{p}={_fmt(v.default)}" for p, v in k.params.items())
        kinds.append(f"{name.replace('_', '-')}[:{ps}] ({k.help})")
    signal = [n.replace("_", "-") for n, k in KINDS.items() if k.signal]
    return (
        "CAP.csv|parquet (time_s, machines_alive | time_s, machine, cores_available) or KIND[:key=value,…]: "
        + "; ".join(kinds)
        + (f". Built from grid signals by the capacity assets: {', '.join(signal)}" if signal else "")
    )


def _fmt(v: Any) -> str:
    return "REQUIRED" if v is REQUIRED else f"{v:g}" if isinstance(v, float) else str(v)


# ------------------------------------------------------------------------------------------ the kinds
def _constant(spec: CapacitySpec, a: BuildArgs) -> Any:
    from sim.capacity.trace import CapacityTrace

    return CapacityTrace.constant(a.machines, a.horizon_s, int(round(spec.get("fraction") * a.machines)))


def _random_walk(spec: CapacitySpec, a: BuildArgs) -> Any:
    from sim.capacity.generators import random_walk

    p = spec.get
    return random_walk(
        a.machines, a.horizon_s, p("changes_per_hour"), p("step"), p("dynamic_range"), p("mean"), p("seed")
    )


def _random_uniform(spec: CapacitySpec, a: BuildArgs) -> Any:
    from sim.capacity.generators import random_uniform

    p = spec.get
    return random_uniform(
        a.machines, a.horizon_s, p("changes_per_hour"), p("dynamic_range"), p("mean"), p("seed")
    )


def _risk_aware_walk(spec: CapacitySpec, a: BuildArgs) -> Any:
    from sim.capacity.generators import risk_aware_walk

    p = spec.get
    return risk_aware_walk(p("m_avg"), p("m_ra"), p("period_s"), a.horizon_s, seed=p("seed"))


def _harvest(spec: CapacitySpec, a: BuildArgs) -> Any:
    from sim.capacity.generators import harvest_trace

    p = spec.get
    return harvest_trace(
        p("pool"),
        a.horizon_s,
        max_cores=p("max_cores"),
        stability_spread=p("stability_spread"),
        seed=p("seed"),
    )


def _harvest_regimes(spec: CapacitySpec, a: BuildArgs) -> Any:
    from sim.capacity.generators import harvest_regime_trace

    p = spec.get
    return harvest_regime_trace(
        p("pool"),
        a.horizon_s,
        max_cores=p("max_cores"),
        calm_days=p("calm_days"),
        burst_hours=p("burst_hours"),
        calm_gap_h=p("calm_gap_h"),
        burst_gap_min=p("burst_gap_min"),
        clump_prob=p("clump_prob"),
        node_spread=p("node_spread"),
        mean_change_cores=p("mean_change_cores"),
        seed=p("seed"),
    )


def _budget(spec: CapacitySpec, a: BuildArgs) -> Any:
    from sim.capacity.generators import budget_trace

    kind = spec.kind.removesuffix("_budget")
    label = spec.get("grid") if a.label is None and spec.kind == "carbon_budget" else (a.label or "")
    return budget_trace(a.signal, a.machines, kind, spec.get("mean"), spec.get("floor"), label=label)


def _stranded(spec: CapacitySpec, a: BuildArgs) -> Any:
    from sim.capacity.generators import stranded_trace

    p = spec.get
    return stranded_trace(a.signal, a.machines, p("threshold"), p("base_fraction"), label=a.label or "")


def _file(spec: CapacitySpec, a: BuildArgs) -> Any:
    from sim.capacity.trace import read_capacity

    return read_capacity(spec.get("path"), a.machines, a.horizon_s)


def _spot(spec: CapacitySpec, a: BuildArgs) -> Any:
    from sim.capacity.spot import spot_steps, trace_source, trace_version
    from sim.capacity.trace import CapacityTrace

    off = spec.get("offset_ticks")
    pinned = spec.get("data")
    if pinned and pinned != (now := trace_version(spec.get("trace"))):
        raise ValueError(
            f"spot trace {spec.get('trace')!r}: the scenario pins data {pinned}, but "
            f"{trace_source(spec.get('trace'))[0]} holds {now} (rebuild the scenario from the current data)"
        )
    t, alive, tr = spot_steps(spec.get("trace"), a.machines, a.horizon_s, off)
    return CapacityTrace(
        t, alive, a.machines, a.horizon_s, tr.gap_s, "spot", {"trace": tr.name, "offset_ticks": off}, None
    )


def _spec(d: Any) -> CapacitySpec:
    from sim.capacity.trace import CapacitySpec

    return CapacitySpec.from_dict(d)


def _spot_tick(trace: str) -> float:
    from sim.capacity.spot import resolve

    return resolve(trace).gap_s


def _pool(spec: CapacitySpec, a: BuildArgs) -> Any:
    import numpy as np

    from sim.capacity.trace import CapacitySpec, CapacityTrace, MachineCapacityTrace

    inner = CapacitySpec.from_dict(spec.get("of"))
    signal = a.signal_of(inner) if a.signal_of is not None and inner.needs_signal else None
    walk = inner.build(a.machines, a.horizon_s, signal, cores=a.cores, signal_of=a.signal_of)
    if not isinstance(walk, CapacityTrace):
        raise ValueError("a pool capacity needs a machines-alive trace inside")
    t = walk.time_s
    alive = walk.machines_alive * a.cores
    return MachineCapacityTrace(t, np.zeros(len(t), np.int64), alive, 1, a.horizon_s, "pool", spec.to_dict())


_FRACTION = Bound(0.0, 1.0, "of the machines")
_SEED = Bound(0, 2**63 - 1)
_SHAPE = {
    "dynamic_range": Param(float, 0.6, "max − min alive, fraction of machines", _FRACTION),
    "mean": Param(float, MEAN_CAPACITY, "mean fraction of machines alive", _FRACTION),
    "seed": Param(int, 0, "random seed", _SEED),
}
_BUDGET = {
    "mean": Param(float, MEAN_CAPACITY, "mean fraction of machines alive", _FRACTION),
    "floor": Param(float, 0.0, "least fraction alive", _FRACTION),
}
#: a change rate: about ``horizon × rate`` capacity points (sim.estimate counts them)
_RATE = Bound(0.0, 1e9, "per hour", lo_open=True, per_s=1 / 3600.0, what="capacity changes")

register(
    CapacityKind(
        "constant",
        "the fixed-capacity reference, thesis Fig. 2.1a",
        {"fraction": Param(float, MEAN_CAPACITY, "fraction of machines alive", _FRACTION)},
        _constant,
    )
)
register(
    CapacityKind(
        "random_walk",
        "thesis ch. 4 random walk of machines alive",
        {
            "changes_per_hour": Param(float, 1.0, "changes per hour", _RATE),
            "step": Param(
                float, 0.15, "step, fraction of machines", Bound(0.0, 1.0, "of the machines", lo_open=True)
            ),
            **_SHAPE,
        },
        _random_walk,
    )
)
register(
    CapacityKind(
        "random_uniform",
        "paper 003: a uniform draw in the range at each change",
        {"changes_per_hour": Param(float, 1.0, "changes per hour", _RATE), **_SHAPE},
        _random_uniform,
    )
)
register(
    CapacityKind(
        "risk_aware_walk",
        "paper 001 §5.4: m_avg + m_ra machines, m_ra of them at risk every period",
        {
            "m_avg": Param(int, REQUIRED, "machines always alive on average", Bound(1, 1e8, "machines")),
            "m_ra": Param(int, REQUIRED, "machines at risk", Bound(0, 1e8, "machines")),
            "period_s": Param(
                float,
                REQUIRED,
                "period of a change, seconds",
                Bound(1.0, 1e9, "seconds", step_s=1.0, what="capacity changes"),
            ),
            "seed": Param(int, 0, "random seed", _SEED),
        },
        _risk_aware_walk,
    )
)
register(
    CapacityKind(
        "harvest",
        "paper 002: harvest VMs whose cores change, one trace per machine",
        {
            "pool": Param(int, REQUIRED, "harvest VMs", Bound(1, 1e7, "VMs")),
            "max_cores": Param(int, 48, "cores of a full VM", Bound(2, 1e6, "cores")),
            "stability_spread": Param(
                float, 0.0, "spread of the VMs' change rates", Bound(0.0, 2.0, "(log-sd)")
            ),
            "seed": Param(int, 0, "random seed", _SEED),
        },
        _harvest,
        # paper 002's VMs change about once an hour each (generators.harvest_trace: mean 3600 s)
        points=lambda s, m, h: s.get("pool") * (h / 3600.0 + 1.0),
    )
)
register(
    CapacityKind(
        "harvest_regimes",
        "paper 002: harvest VMs calibrated to §2.1: calm periods, bursts, per-VM activity",
        {
            "pool": Param(int, REQUIRED, "harvest VMs", Bound(1, 1e7, "VMs")),
            "max_cores": Param(int, 48, "cores of a full VM", Bound(2, 1e6, "cores")),
            "calm_days": Param(
                float, 4.0, "mean calm period, days (Fig. 3)", Bound(0.0, 1e4, "days", lo_open=True)
            ),
            "burst_hours": Param(
                float, 59.0, "mean burst period, hours", Bound(0.0, 1e6, "hours", lo_open=True)
            ),
            "calm_gap_h": Param(
                float,
                2.8,
                "mean gap between changes in a calm period, hours",
                Bound(0.0, 1e6, "hours", lo_open=True, step_s=3600.0, what="calm-period changes"),
            ),
            "burst_gap_min": Param(
                float,
                27.0,
                "mean gap between changes in a burst, minutes",
                Bound(0.0, 1e6, "minutes", lo_open=True, step_s=60.0, what="burst changes"),
            ),
            "clump_prob": Param(
                float, 0.10, "share of changes followed by another within seconds", Bound(0.0, 0.99)
            ),
            "node_spread": Param(
                float, 0.75, "log-sd of the VMs' activity (0: identical VMs)", Bound(0.0, 5.0)
            ),
            "mean_change_cores": Param(
                float, 9.0, "mean change size, cores (Fig. 1a: 5–13)", Bound(0.0, 1e6, "cores", lo_open=True)
            ),
            "seed": Param(int, 0, "random seed", _SEED),
        },
        _harvest_regimes,
        # at most one change per gap (the shorter of a burst's and a calm period's) on each VM, plus its
        # clumps (generators.harvest_regime_trace)
        points=lambda s, m, h: (
            s.get("pool")
            * (
                h
                / min(60.0 * s.get("burst_gap_min"), 3600.0 * s.get("calm_gap_h"))
                * (1.0 + s.get("clump_prob"))
                + 1.0
            )
        ),
    )
)
register(
    CapacityKind(
        "carbon_budget",
        "constant carbon budget over an hourly carbon intensity",
        {
            "grid": Param(str, "", "grid of the signal (a scenario's series is grid:signal)"),
            "signal": Param(str, "", "source:YYYY-MM of the signal"),
            **_BUDGET,
        },
        _budget,
        signal="carbon",
        points=_hourly,
    )
)
register(
    CapacityKind(
        "cost_budget",
        "constant cost budget over an hourly power price",
        _BUDGET,
        _budget,
        signal="price",
        points=_hourly,
    )
)
register(
    CapacityKind(
        "stranded",
        "every machine while the signal is at most the threshold",
        {
            "threshold": Param(float, REQUIRED, "signal at or below which power is stranded", Bound()),
            "base_fraction": Param(float, 0.0, "fraction alive otherwise", _FRACTION),
        },
        _stranded,
        signal="any",
        points=_hourly,
    )
)
register(
    CapacityKind(
        "file",
        "a trace file",
        {"path": Param(str, REQUIRED, "CSV or parquet")},
        _file,
        cli=False,
        points=lambda s, m, h: 0.0,  # read, not generated: its size is the file's
    )
)
register(
    CapacityKind(
        "pool",
        "paper 003's resource level: one machine holding every core, following cores × machines alive of "
        "the machines-alive spec `of`",
        {"of": Param(dict, REQUIRED, "the machines-alive capacity spec, a dict")},
        _pool,
        one_machine=True,
        cli=False,
        points=lambda s, m, h: expected_points(_spec(s.get("of")), m, h),
    )
)
register(
    CapacityKind(
        "spot",
        "a public AWS spot availability trace (skypilot-org/spot-traces, 300 s ticks) scaled to the "
        "platform: spot:us-east-2b|us-west-2a|us-west-2c",
        {
            "trace": Param(str, REQUIRED, "trace name or zone"),
            "offset_ticks": Param(int, 0, "start this many ticks into the trace", Bound(0, 1e9, "ticks")),
            "data": Param(
                str, "", "the values' version (sim.capacity.spot.trace_version) a scenario pins; empty: any"
            ),
        },
        _spot,
        positional="trace",
        points=lambda s, m, h: h / _spot_tick(s.get("trace")) + 1.0,
    )
)
