"""Scenario catalogue: named studies that expand to simulation scenarios with stable ids.

A :class:`Scenario` is data (workload, capacity spec, policy + settings, platform, horizon, seed); its id is
a hash of those parameters only, so a scenario shared by two studies is simulated once. Building the jobs
and the capacity of a scenario (:func:`build_jobs`, :func:`build_capacity`) needs only the exported sweep
inputs (``data/sim/inputs``: workloads and grid signals written by the ``out_sim_inputs`` asset) and
:mod:`sim` — never DuckDB, so many scenario processes can run while the warehouse is being written.

Sweep studies: the smoke study here (:data:`SWEEP_STUDIES`, the only one that names no paper: 4 tiny
scenarios for tests and the dask executor check); each paper's sweep studies are in its package
(``studies/<paper>/sweeps.py``) and :mod:`studies.papers` lists them all for :mod:`studies.catalogue`.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from sim.capacity.kinds import get_kind
from sim.capacity.trace import (
    DAY,
    MEAN_CAPACITY,
    CapacitySpec,
    CapacityTrace,
    MachineCapacityTrace,
)
from sim.checkpoint import KEYS as CHECKPOINT_KEYS
from sim.policies import get_policy, parse_params
from sim.workloads.generators import offered_load
from sim.workloads.registry import WorkloadArgs, WorkloadSpec, concrete_names, get_workload, resolve_workload
from studies.signals import scenario_signal, signal_input

#: short names of capacity kinds in scenario labels and partition keys (:mod:`studies.keys`); a kind not
#: listed shows its own name
SHORT_KIND = {
    "random_walk": "rw",
    "random_uniform": "ru",
    "risk_aware_walk": "riskwalk",
    "carbon_budget": "co2",
}


@dataclass(frozen=True)
class Scenario:
    """One simulation. ``machines = 0`` sizes the platform so the workload offers ``load`` of the mean
    capacity (``mean`` alive fraction × cores), as the thesis does."""

    workload: str
    capacity: dict[str, Any]
    policy: str = "ff"
    settings: dict[str, str] = field(default_factory=dict)
    machines: int = 0
    cores: int = 24
    horizon_days: float = 30.0
    seed: int = 0
    load: float = 0.8
    warmup_days: float = 0.0  # metrics over [warmup, horizon] only (paper 001 §5.1; thesis "steady state")
    # machines = 0: size from the work "offered" (every job submitted in the horizon, whole) or "clipped"
    # (each job's work inside the horizon only)
    sizing: str = "offered"

    def __post_init__(self) -> None:
        """Parse and check every field once: ValueError (one line naming the field and its valid values)
        for a sizing, workload or capacity spec that is not valid; the policy's own KeyError/ValueError for
        an unknown policy or setting. The parsed views are :attr:`workload_spec`,
        :attr:`workload_values`, :attr:`capacity_spec` and :attr:`policy_params`."""
        if self.sizing not in ("offered", "clipped"):
            raise ValueError(f"scenario sizing must be 'offered' or 'clipped', not {self.sizing!r}")
        # settings equal to the policy's defaults are dropped, so equal simulations get equal ids
        pol = get_policy(self.policy)
        default = pol.Params()
        given = parse_params(pol, dict(self.settings))
        kept = {
            k: v
            for k, v in self.settings.items()
            if (float(v) != 0.0 if k in CHECKPOINT_KEYS else getattr(given, k) != getattr(default, k))
        }
        object.__setattr__(self, "settings", dict(sorted(kept.items())))
        try:
            wl, values = resolve_workload(self.workload)
        except ValueError as e:
            raise ValueError(f"scenario workload: {str(e).splitlines()[0]}") from None
        try:
            cap = _checked_spec(self.capacity)
        except ValueError as e:
            raise ValueError(f"scenario capacity: {str(e).splitlines()[0]}") from None
        # parsed views: not fields, so they stay out of params(), the id, equality and repr
        object.__setattr__(self, "_parsed", (wl, values, cap, given))

    @property
    def workload_spec(self) -> WorkloadSpec:
        """The registered workload :attr:`workload` names (parsed once, at construction)."""
        return self._parsed[0]

    @property
    def workload_values(self) -> dict[str, Any]:
        """The workload name's pattern values, converted to their types (``zipf-1.5`` → ``{"s": 1.5}``)."""
        return self._parsed[1]

    @property
    def capacity_spec(self) -> CapacitySpec:
        """:attr:`capacity` parsed and checked against its kind's parameters (nested specs checked too)."""
        return self._parsed[2]

    @property
    def policy_params(self) -> Any:
        """The policy's parameters object of :attr:`settings` (defaults filled in)."""
        return self._parsed[3]

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """A scenario pickles as its parameters (the parsed views are parsed again)."""
        return (Scenario.from_params, (self.params(),))

    def params(self) -> dict[str, Any]:
        """The parameters (fields added after the first catalogue are left out at their default, so ids of
        existing scenarios do not change)."""
        p = asdict(self)
        for k, default in _LATER_FIELDS.items():
            if p[k] == default:
                del p[k]
        return p

    @property
    def window_start_s(self) -> float:
        return self.warmup_days * DAY

    @functools.cached_property
    def id(self) -> str:
        """sha256 of :meth:`params` (12 hex), computed once: the dataclass is frozen (``settings`` and
        ``capacity`` must not be mutated after construction)."""
        blob = json.dumps(self.params(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    @property
    def horizon_s(self) -> float:
        return self.horizon_days * DAY

    def label(self) -> str:
        """Compact description, e.g. ``azure rw(f=1,step=0.15) ias(aggressiveness=0.6)``."""
        cap = ",".join(
            f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in self.capacity.items()
            if k not in ("kind", "seed", "dynamic_range") or (k == "dynamic_range" and v != 0.6)
        )
        cap = cap.replace("changes_per_hour", "f")
        st = ",".join(f"{k}={v}" for k, v in sorted(self.settings.items()))
        kind = SHORT_KIND.get(self.capacity["kind"], self.capacity["kind"])
        return f"{self.workload} {kind}({cap}) {self.policy}{'(' + st + ')' if st else ''}"

    @classmethod
    def from_params(cls, p: dict[str, Any]) -> Scenario:
        return cls(**p)


_LATER_FIELDS: dict[str, Any] = {"warmup_days": 0.0, "sizing": "offered"}


def _checked_spec(capacity: dict[str, Any] | CapacitySpec) -> CapacitySpec:
    """A catalogue capacity dict as a :class:`CapacitySpec`, its nested specs (a pool's ``of``) parsed
    too. ValueError naming the kind and its parameters or the kinds."""
    spec = capacity if isinstance(capacity, CapacitySpec) else CapacitySpec.from_dict(capacity)
    for name, param in get_kind(spec.kind).params.items():
        if param.type is dict and name in spec.params:
            _checked_spec(spec.params[name])
    return spec


def walk(f: float, step: float, seed: int = 0, dr: float = 0.6) -> dict[str, Any]:
    """A random-walk capacity spec (``f`` changes per hour, ``step``, dynamic range ``dr``, walk ``seed``):
    the one helper every study builds its walks with."""
    return {"kind": "random_walk", "changes_per_hour": f, "step": step, "dynamic_range": dr, "seed": seed}


def _smoke() -> list[Scenario]:
    return [
        Scenario("zipf-1.5", walk(f, 0.15), p, machines=40, horizon_days=3.0)
        for f in (1.0, 4.0)
        for p in ("ff", "ias")
    ]


#: The generic sweep study (each paper's are in its package; the whole catalogue is
#: :data:`studies.catalogue.STUDIES`).
SWEEP_STUDIES: dict[str, Any] = {"smoke": _smoke}


# ---------------------------------------------------------------------- building a scenario's inputs
def workload_needs(workload: str | WorkloadSpec) -> str | None:
    """The exported input file a workload (its name, or its parsed spec) is built from (None: generated
    from its parameters). ValueError listing the workloads for an unknown name."""
    template = (get_workload(workload) if isinstance(workload, str) else workload).template
    return f"workload_{template}.parquet" if template else None


def capacity_needs(capacity: dict[str, Any] | CapacitySpec) -> list[str]:
    """The exported input files a capacity spec (parsed, or a catalogue dict; nested specs included) is
    built from. ValueError for an unknown kind or a signal no exported input holds."""
    spec = capacity if isinstance(capacity, CapacitySpec) else CapacitySpec.from_dict(capacity)
    kind = get_kind(spec.kind)
    out = [signal_input(spec)[0]] if kind.signal else []
    for name, param in kind.params.items():
        if param.type is dict and name in spec.params:  # a nested spec (a pool's `of`)
            out += capacity_needs(spec.params[name])
    return list(dict.fromkeys(out))


class _Watched(Mapping[str, Any]):
    """A read-only view of a scenario's ``settings`` or ``capacity`` that notes whether it was read."""

    def __init__(self, d: Mapping[str, Any]) -> None:
        self._d = d
        self.read = False

    def __getitem__(self, k: str) -> Any:
        self.read = True
        return self._d[k]

    def __iter__(self) -> Iterator[str]:
        self.read = True
        return iter(self._d)

    def __len__(self) -> int:
        self.read = True
        return len(self._d)


#: jobs built in this process: (:func:`workload_key`, machines, template file) → [(settings or
#: None, capacity or None, jobs)], None where the builder did not read it; the newest keys last
_BUILT: OrderedDict[tuple[Any, ...], list[tuple[Any, Any, pl.DataFrame]]] = OrderedDict()
BUILT_KEEP = 8  # workloads kept per process (a study's scenarios of one instance share one)
BUILT_ROWS = 2_000_000  # and at most this many jobs in all (a Borg-scale workload is not kept 8 times)


def workload_key(sc: Scenario) -> tuple[str, int, float, float, float, int]:
    """What a scenario's jobs are built from, besides settings a builder may read: scenarios with equal
    keys share their jobs (:func:`build_jobs`)."""
    return (
        sc.workload,
        sc.machines or 0,
        float(sc.cores),
        float(sc.horizon_days),
        float(sc.load),
        int(sc.seed),
    )


def _frozen(d: Mapping[str, Any]) -> str:
    return json.dumps(d, sort_keys=True, default=str)


def build_jobs(sc: Scenario, inputs: Path, machines: int) -> pl.DataFrame:
    """Jobs of ``sc`` on ``machines`` machines, by its workload's builder (:mod:`sim.workloads.registry`),
    handed the exported template workload if it has one. Raises FileNotFoundError naming a missing input,
    ValueError listing the workloads for an unknown one.

    The jobs are the builder's for the pattern's values, the platform, horizon, load and seed, the template
    file, and the scenario's ``settings`` and ``capacity`` where the builder reads them (noted as it
    builds): the last :data:`BUILT_KEEP` such workloads (:data:`BUILT_ROWS` jobs in all) are kept in the
    process and handed out again (a copy) to a scenario that asks for the same, e.g. the policies run on
    one instance."""
    spec, values = sc.workload_spec, sc.workload_values
    f = None
    stamp: tuple[Any, ...] = ()
    if spec.template:
        f = inputs / f"workload_{spec.template}.parquet"
        if not f.is_file():
            raise FileNotFoundError(
                f"{f}: sweep input missing; materialize out_sim_inputs (varcap sweep does)"
            )
        st = f.stat()
        stamp = (str(f.resolve()), st.st_mtime_ns, st.st_size)
    key = (workload_key(sc), machines, stamp)
    settings, capacity = _frozen(sc.settings), _frozen(sc.capacity)
    for s, c, jobs in _BUILT.get(key, ()):
        if s in (None, settings) and c in (None, capacity):
            _BUILT.move_to_end(key)
            return jobs.clone()
    ws, wc = _Watched(sc.settings), _Watched(sc.capacity)
    args = WorkloadArgs(
        values,
        machines,
        sc.cores,
        sc.horizon_s,
        sc.horizon_days,
        sc.load,
        sc.seed,
        ws,
        wc,
        pl.read_parquet(f) if f is not None else None,
    )
    jobs = spec.build(args)
    if isinstance(jobs, pl.DataFrame) and jobs.height <= BUILT_ROWS:
        _BUILT.setdefault(key, []).append(
            (settings if ws.read else None, capacity if wc.read else None, jobs)
        )
        _BUILT.move_to_end(key)
        while len(_BUILT) > BUILT_KEEP or sum(j.height for v in _BUILT.values() for *_, j in v) > BUILT_ROWS:
            _BUILT.popitem(last=False)
        return jobs.clone()
    return jobs


#: workloads whose jobs do not depend on the platform size (:func:`build_jobs` ignores ``machines``)
SIZE_FREE_WORKLOADS = concrete_names(lambda s: s.size_free)


def sized_jobs(sc: Scenario, inputs: Path) -> tuple[int, pl.DataFrame]:
    """The platform size of ``sc`` (:func:`platform_size`) and its jobs (:func:`build_jobs`), building the
    jobs once where sizing needed them and they do not depend on the size (``size_free`` workloads).
    Raises like those two."""
    spec = sc.workload_spec
    if sc.machines or spec.default_machines or spec.needs_machines:
        machines = platform_size(sc, inputs)
        return machines, build_jobs(sc, inputs, machines)
    probe = build_jobs(sc, inputs, 1)
    machines = _size_for(sc, probe)
    return machines, probe if spec.size_free else build_jobs(sc, inputs, machines)


def clipped_load(jobs: pl.DataFrame, horizon_s: float) -> float:
    """Mean cores demanded inside ``[0, horizon_s)``: each job's work up to the horizon only."""
    inside = (pl.lit(horizon_s) - pl.col("submit_s")).clip(lower_bound=0.0)
    return (
        float(jobs.select((pl.min_horizontal("duration_s", inside) * pl.col("cores")).sum()).item())
        / horizon_s
    )


def _size_for(sc: Scenario, jobs: pl.DataFrame) -> int:
    load = clipped_load(jobs, sc.horizon_s) if sc.sizing == "clipped" else offered_load(jobs, sc.horizon_s)
    return max(1, int(round(load / (sc.load * MEAN_CAPACITY * sc.cores))))


def platform_size(sc: Scenario, inputs: Path) -> int:
    """``sc.machines``, the workload's default platform, or the platform at which the workload offers
    ``load`` of the mean capacity. ValueError if the workload needs the size given."""
    if sc.machines:
        return sc.machines
    spec = sc.workload_spec
    if spec.default_machines:
        return spec.default_machines
    if spec.needs_machines:
        raise ValueError(f"{sc.workload}: give the platform size (machines)")
    return _size_for(sc, build_jobs(sc, inputs, 1))


def build_capacity(sc: Scenario, inputs: Path, machines: int) -> CapacityTrace | MachineCapacityTrace:
    """The capacity trace named by ``sc.capacity``, built by its kind (:mod:`sim.capacity.kinds`); a
    signal kind reads its hourly signal from the exported inputs (:func:`scenario_signal`). Raises
    ValueError for an unknown kind, FileNotFoundError for a missing input.

    ``{"kind": "pool", "of": SPEC}`` (paper 003's resource level): one machine holding every core, whose
    cores follow ``cores × machines alive`` of the machines-alive trace ``SPEC``."""
    spec = sc.capacity_spec
    return spec.build(machines, sc.horizon_s, cores=sc.cores, signal_of=lambda s: scenario_signal(s, inputs))


def simulated_platform(sc: Scenario, machines: int) -> tuple[int, float]:
    """``(machines, cores per machine)`` the simulator runs ``sc`` on: the platform, or one machine holding
    every core for a ``one_machine`` capacity kind (a pool)."""
    if sc.capacity_spec.one_machine:
        return 1, machines * sc.cores
    return machines, sc.cores
