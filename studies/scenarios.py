"""Scenario catalogue: named studies that expand to simulation scenarios with stable ids.

A :class:`Scenario` is data (workload, capacity spec, policy + settings, platform, horizon, seed); its id is
a hash of those parameters only, so a scenario shared by two studies is simulated once. Building the jobs
and the capacity of a scenario (:func:`build_jobs`, :func:`build_capacity`) needs only the exported sweep
inputs (``data/sim/inputs``: workloads and grid signals written by the ``out_sim_inputs`` asset) and
:mod:`sim` — never DuckDB, so many scenario processes can run while the warehouse is being written.

Sweep studies (:data:`SWEEP_STUDIES`; from the seeds, see the README's sweep section; the reproduction
studies ``repro-*`` are the paper packages', and :mod:`studies.catalogue` lists both):

* ``thesis-ch4-synthetic`` — 6 change frequencies × 4 step sizes × {azure, borg2011} × ff (48).
* ``thesis-ch6-ias`` — {zipf-1.1 … zipf-1.8, azure} × {ff, ias (A = 0.6)} at 1 change/h, step 0.15 (18).
* ``thesis-ch6-aggressiveness`` — the same workloads × ias with A ∈ {0.1 … 0.9} (81; A = 0.6 shared).
* ``thesis-grids`` — {CAISO, ERCOT, MISO} constant-carbon-budget traces × azure × {ff, ias} (6).
* ``riskaware`` — seed 001 §5.4: M_avg ∈ {20 … 28}, φ ∈ {400 … 32400 s}, M_ra ∈ {4 … 16} one at a time,
  × {ff, ff-unaware, target-stretch, target-asap, packed-target-asap} (65).
* ``zhang-chien`` — seed 003: dynamic range × structure (random walk, random uniform) × frequency ×
  termination policy (lifo, random, lww, lfd) on azure (48).
* ``slacksched`` — seed 002: harvest-VM pool × {ff, slacksched-nodelay, slacksched, oracle} × Acquirer
  off/on (8).
* ``smoke`` — 4 tiny scenarios (tests, the dask executor check).
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sim.capacity import DAY, MEAN_CAPACITY, CapacitySpec, CapacityTrace, MachineCapacityTrace
from sim.policies import get_policy, parse_params
from sim.workloads import (
    bootstrap_jobs,
    harvest_jobs,
    harvest_tasks,
    native_bootstrap,
    offered_load,
    pareto_workload,
    seed001_uniform,
    zipf_workload,
)

CH4_FREQS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
CH4_STEPS = (0.15, 0.3, 0.45, 0.6)
ZIPF = tuple(f"zipf-{s / 10:.1f}" for s in range(11, 19))
GRIDS = {"CAISO": "electricitymaps:2024-04", "ERCOT": "electricitymaps:2024-04", "MISO": "eia930:2022-04"}
RISKAWARE = ("ff", "ff-unaware", "target-stretch", "target-asap", "packed-target-asap")


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
    warmup_days: float = 0.0  # metrics over [warmup, horizon] only (seed 001 §5.1; thesis "steady state")

    def __post_init__(self) -> None:
        # settings equal to the policy's defaults are dropped, so equal simulations get equal ids
        pol = get_policy(self.policy)
        default = pol.Params()
        given = parse_params(pol, dict(self.settings))
        kept = {k: v for k, v in self.settings.items() if getattr(given, k) != getattr(default, k)}
        object.__setattr__(self, "settings", dict(sorted(kept.items())))

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
        short = {
            "random_walk": "rw",
            "random_uniform": "ru",
            "risk_aware_walk": "raw",
            "carbon_budget": "co2",
        }
        cap = ",".join(
            f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in self.capacity.items()
            if k not in ("kind", "seed", "dynamic_range") or (k == "dynamic_range" and v != 0.6)
        )
        cap = cap.replace("changes_per_hour", "f")
        st = ",".join(f"{k}={v}" for k, v in sorted(self.settings.items()))
        kind = short.get(self.capacity["kind"], self.capacity["kind"])
        return f"{self.workload} {kind}({cap}) {self.policy}{'(' + st + ')' if st else ''}"

    @classmethod
    def from_params(cls, p: dict[str, Any]) -> Scenario:
        return cls(**p)


_LATER_FIELDS: dict[str, Any] = {"warmup_days": 0.0}


def _walk(freq: float, step: float, dr: float = 0.6, seed: int = 0) -> dict[str, Any]:
    return {"kind": "random_walk", "changes_per_hour": freq, "step": step, "dynamic_range": dr, "seed": seed}


def _ch4() -> list[Scenario]:
    out = []
    for wl, days in (("azure", 30.0), ("borg2011", 7.0)):
        for f in CH4_FREQS:
            for s in CH4_STEPS:
                out.append(Scenario(wl, _walk(f, s), horizon_days=days))
    return out


def _ch6(policies: list[tuple[str, dict[str, str]]]) -> list[Scenario]:
    out = []
    for wl in (*ZIPF, "azure"):
        machines = 1000 if wl.startswith("zipf") else 0
        for p, st in policies:
            out.append(Scenario(wl, _walk(1.0, 0.15), p, st, machines=machines))
    return out


def _grids() -> list[Scenario]:
    return [
        Scenario("azure", {"kind": "carbon_budget", "grid": g, "signal": s}, p)
        for g, s in GRIDS.items()
        for p in ("ff", "ias")
    ]


def _riskaware() -> list[Scenario]:
    grid = [(m, 1200.0, 8) for m in (20, 22, 24, 26, 28)]
    grid += [(24, phi, 8) for phi in (400.0, 1200.0, 3600.0, 10800.0, 32400.0)]
    grid += [(24, 1200.0, r) for r in (4, 6, 8, 12, 16)]
    out = []
    for m_avg, phi, m_ra in dict.fromkeys(grid):
        cap = {"kind": "risk_aware_walk", "m_avg": m_avg, "m_ra": m_ra, "period_s": phi, "seed": 0}
        for p in RISKAWARE:
            out.append(Scenario("borg2011-riskaware", cap, p, machines=m_avg + m_ra, horizon_days=21.0))
    return out


def _zhang_chien() -> list[Scenario]:
    out = []
    for dr in (0.2, 0.6):
        for kind in ("random_walk", "random_uniform"):
            for f in (1.0, 4.0, 12.0):
                cap = {"kind": kind, "changes_per_hour": f, "dynamic_range": dr, "seed": 0}
                if kind == "random_walk":
                    cap["step"] = 0.15
                for term in ("lifo", "random", "lww", "lfd"):
                    out.append(Scenario("azure", cap, "ff", {"termination": term}))
    return out


def _slacksched() -> list[Scenario]:
    cap = {"kind": "harvest", "pool": 64, "max_cores": 48, "stability_spread": 1.0, "seed": 0}
    return [
        Scenario("harvest-tasks", cap, p, {"nodes": "32", "acquirer": str(acq).lower()}, 64, 48, 7.0)
        for acq in (False, True)
        for p in ("ff", "slacksched-nodelay", "slacksched", "oracle")
    ]


def _smoke() -> list[Scenario]:
    return [
        Scenario("zipf-1.5", _walk(f, 0.15), p, machines=40, horizon_days=3.0)
        for f in (1.0, 4.0)
        for p in ("ff", "ias")
    ]


#: The sweep studies (the reproduction studies, ``repro-*``, are the paper packages'; the whole catalogue,
#: both together, is :data:`studies.catalogue.STUDIES`).
SWEEP_STUDIES: dict[str, Any] = {
    "thesis-ch4-synthetic": _ch4,
    "thesis-ch6-ias": lambda: _ch6([("ff", {}), ("ias", {"aggressiveness": "0.6"})]),
    "thesis-ch6-aggressiveness": lambda: _ch6(
        [("ias", {"aggressiveness": f"{a / 10:.1f}"}) for a in range(1, 10)]
    ),
    "thesis-grids": _grids,
    "riskaware": _riskaware,
    "zhang-chien": _zhang_chien,
    "slacksched": _slacksched,
    "smoke": _smoke,
}


# ---------------------------------------------------------------------- building a scenario's inputs
def workload_needs(workload: str) -> str | None:
    """The exported input file a workload is built from (None: generated from its parameters)."""
    if workload in ("azure", "borg2011"):
        return f"workload_{workload}.parquet"
    if workload in ("borg2011-riskaware", "borg2011-native", "borg2011-seed001"):
        return "workload_borg2011.parquet"
    return None


def build_jobs(sc: Scenario, inputs: Path, machines: int) -> pl.DataFrame:
    """Jobs of ``sc``: exported warehouse workloads, borg2011 resampled to the platform's load, Zipf-s
    (thesis §4.3.1) or seed 002-style harvest tasks. Raises FileNotFoundError naming a missing input."""
    h = sc.horizon_s
    if sc.workload.startswith("zipf-"):
        return zipf_workload(float(sc.workload.split("-")[1]), machines, sc.cores, h, seed=sc.seed)
    if sc.workload.startswith("pareto-"):  # pareto-<alpha>-<xm_s>: the issue's generic instance
        _, alpha, xm = sc.workload.split("-")
        load = sc.load * MEAN_CAPACITY
        return pareto_workload(float(alpha), float(xm), machines, sc.cores, h, load=load, seed=sc.seed)
    if sc.workload in ("seed001-uniform", "seed001-uniform-literal"):
        # seed 001 §5.3–5.4: n = 20,000 jobs over 3 weeks (density kept for other horizons); "the total
        # number of machines required … is around 26 (e.g. such that the total core hour is around 209664,
        # which means T_avg = 209664/n hours)" — two readings: 26 machines' worth of work (cores counted,
        # default) or T_avg = 209,664 h / n literally (2.8 × that work)
        n = max(1, int(round(20_000 * h / (21 * DAY))))
        mean_cores = 3.5  # E[c] of the 1/2/4/8-core draw
        tavg = 26 * sc.cores * h / (n * mean_cores)
        if sc.workload.endswith("literal"):
            tavg = 209_664 * 3600.0 / 20_000
        return seed001_uniform(n, h, tavg, seed=sc.seed)
    if sc.workload == "harvest-jobs":
        return harvest_jobs(machines * 25.0, h, load=sc.load, seed=sc.seed)  # 25 = mean cores of a 2–48 HVM
    if sc.workload == "harvest-tasks":
        nodes = int(sc.settings.get("nodes", machines))
        return harvest_tasks(nodes * 25.0, h, load=0.6, seed=sc.seed)  # 25 = mean cores of a 2–48 core HVM
    f = inputs / (workload_needs(sc.workload) or "")
    if not f.is_file():
        raise FileNotFoundError(f"{f}: sweep input missing; materialize out_sim_inputs (varcap sweep does)")
    jobs = pl.read_parquet(f)
    if sc.workload == "azure":
        return jobs
    if sc.workload == "borg2011-native":
        # thesis §3.4: the workload offers ~80 % of the mean (70 %) capacity; jobs keep their real
        # durations and cores — only the count follows from the load (no duration rescaling)
        return native_bootstrap(jobs, sc.load * MEAN_CAPACITY * machines * sc.cores, h, seed=sc.seed)
    if sc.workload == "borg2011-seed001":
        # seed 001 §5.2: jobs lasting less than a day; total work pruned to the peak capacity of 26
        # machines × 24 cores over the window (we hold that density over warm-up and window alike)
        short = jobs.filter(pl.col("duration_s") < DAY)
        return native_bootstrap(short, 26 * sc.cores, h, seed=sc.seed)
    target = sc.load * MEAN_CAPACITY * machines * sc.cores
    if sc.workload == "borg2011-riskaware":
        target = sc.load * sc.capacity["m_avg"] * sc.cores
        return bootstrap_jobs(jobs, 3000, h, target_cores=target, seed=sc.seed)
    per_machine_day = 430  # the Borg-scale benchmark's density: 600k jobs on 200 machines for 7 days
    n = int(per_machine_day * machines * sc.horizon_days)
    return bootstrap_jobs(jobs, n, h, target_cores=target, seed=sc.seed)


#: workloads whose jobs do not depend on the platform size (:func:`build_jobs` ignores ``machines``)
SIZE_FREE_WORKLOADS = ("azure", "seed001-uniform", "seed001-uniform-literal", "borg2011-riskaware")


def sized_jobs(sc: Scenario, inputs: Path) -> tuple[int, pl.DataFrame]:
    """The platform size of ``sc`` (:func:`platform_size`) and its jobs (:func:`build_jobs`), building the
    jobs once where sizing needed them and they do not depend on the size (:data:`SIZE_FREE_WORKLOADS`).
    Raises like those two."""
    if sc.machines or sc.workload in ("borg2011", "borg2011-native", "borg2011-seed001"):
        machines = platform_size(sc, inputs)
        return machines, build_jobs(sc, inputs, machines)
    probe = build_jobs(sc, inputs, 1)
    machines = _size_for(sc, probe)
    return machines, probe if sc.workload in SIZE_FREE_WORKLOADS else build_jobs(sc, inputs, machines)


def _size_for(sc: Scenario, jobs: pl.DataFrame) -> int:
    return max(1, int(round(offered_load(jobs, sc.horizon_s) / (sc.load * MEAN_CAPACITY * sc.cores))))


def platform_size(sc: Scenario, inputs: Path) -> int:
    """``sc.machines``, or the platform at which the workload offers ``load`` of the mean capacity."""
    if sc.machines:
        return sc.machines
    if sc.workload == "borg2011":
        return 100
    if sc.workload in ("borg2011-native", "borg2011-seed001"):
        raise ValueError(f"{sc.workload}: give the platform size (machines)")
    return _size_for(sc, build_jobs(sc, inputs, 1))


def build_capacity(sc: Scenario, inputs: Path, machines: int) -> CapacityTrace | MachineCapacityTrace:
    """The capacity trace named by ``sc.capacity``. Raises ValueError for an unknown kind.

    ``{"kind": "pool", "of": SPEC}`` (seed 003's resource level): one machine holding every core, whose
    cores follow ``cores × machines alive`` of the machines-alive trace ``SPEC``."""
    if sc.capacity["kind"] == "pool":
        inner = Scenario(sc.workload, dict(sc.capacity["of"]), horizon_days=sc.horizon_days, seed=sc.seed)
        walk = build_capacity(inner, inputs, machines)
        if not isinstance(walk, CapacityTrace):
            raise ValueError("a pool capacity needs a machines-alive trace inside")
        t = walk.time_s
        return MachineCapacityTrace(
            t,
            np.zeros(len(t), np.int64),
            walk.machines_alive * sc.cores,
            1,
            sc.horizon_s,
            "pool",
            sc.capacity,
        )
    spec = CapacitySpec.from_dict(sc.capacity)
    signal = None
    if spec.kind == "carbon_budget":
        f = inputs / "grid_carbon.parquet"
        if not f.is_file():
            raise FileNotFoundError(f"{f}: sweep input missing; materialize out_sim_inputs")
        series = f"{spec.get('grid')}:{spec.get('signal')}"
        sig = pl.read_parquet(f).filter(pl.col("series") == series)
        if sig.height == 0:
            raise ValueError(f"{f}: no carbon series {series}")
        signal = sig.sort("hour")["gco2_per_kwh"].to_numpy()
    return spec.build(machines, sc.horizon_s, signal)
