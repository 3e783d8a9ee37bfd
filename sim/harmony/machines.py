"""Machine types of the paper's Table 2 and the energy model of eq. (6).

§9: "We normalized the CPU core count and memory capacity to the largest machine size. Hence, HP DL585
G7 has a capacity 1 CPU unit and 1 memory unit, which corresponds to 48 cores and 64 GB." Table 2:

=====================  =====  =====  ======  ========
model                  procs  cores  memory  machines
=====================  =====  =====  ======  ========
Dell PowerEdge R210    1      4      4 GB    7000
Dell PowerEdge R515    2      6      32 GB   1500
HP DL385 G7            2      12     16 GB   1000
HP DL585 G7            4      12     64 GB   500
=====================  =====  =====  ======  ========

("Num. of Cores" is per processor: 4 × 12 = 48 cores for the DL585 G7, as §9 states.)

Eq. (6): ``E_t = p_t Σ_m Σ_i y_t^i (E^{idle,m} + Σ_r α^{mr} u_t^{ir})``. The paper estimated ``E^{idle,m}``
and ``α^{mr}`` from the Energy Star server list [2] and only plots them (Fig. 9). The SPECpower_ssj2008
result pages of these four servers could not be retrieved here (the search corpora hold none of
spec.org's result pages for them); what was found are SPECpower_ssj2008 measurements of the same
processor configurations in other chassis (each ``source`` says which):

* Dell PowerEdge R515 (2 × 6-core Opteron 4100): idle 72 W, 100 % load 174 W — SPECpower_ssj2008 run of a
  1U server with 2 × Opteron 4170 HE (tecChannel test "AMD Opteron 4122, 4162 EE und 4170 HE",
  https://channelpartner.de/a/test-amd-opteron-4122-4162-ee-und-4170-he,2033703,7, 2010).
* HP DL385 G7 (2 × 12-core Opteron 6100): idle 131 W, 100 % load 345 W — SPECpower_ssj2008 run of a
  2-socket G34 server with 2 × Opteron 6174 (tecChannel/computerwoche "AMD Opteron 6262 HE und 6276 mit
  16-Core-Bulldozer", https://www.computerwoche.de/a/amd-opteron-6262-he-und-6276-mit-16-core-bulldozer,
  2038251,7, 05.12.2011: "131 bei 2x Opteron 6174" idle, "Unter Volllast mit zwei Opteron 6174 fordert der
  Server 345 Watt").
* Dell PowerEdge R210 (1 × 4-core Xeon 3400): idle 40 W, 100 % load 110 W — *estimate* (single-socket
  95 W-TDP 1U server; no measurement located).
* HP DL585 G7 (4 × 12-core Opteron 6100): idle 300 W, 100 % load 680 W — *estimate* (four 115 W-ACP
  sockets; no measurement located).

SPECpower measures power against CPU load, so ``α^{m,cpu} = P_peak − P_idle``. Eq. (6) sums a slope per
resource (``Σ_r α^{mr} u_t^{ir}``), so memory has its own: ``α^{m,mem}`` = 1.25 W per GB installed × the
type's GB — an *estimate* from HP's DDR3 technology brief for ProLiant G6/G7 servers ("A dual-rank 8 GB
low-voltage DDR3 DIMM running at 1333 MT/s consumes about 8.5 watts compared to the 10 watts that a
standard voltage DIMM consumes", "DDR3 memory technology", HP technology brief, page 6: 10 W / 8 GB),
taken as the slope from unused to fully used memory (an upper estimate: part of a DIMM's power is drawn
idle, inside ``E^{idle}``). R210 5 W, R515 40 W, DL385 G7 20 W, DL585 G7 80 W.

Replace these numbers with measured ones by passing other :class:`MachineType` lists; nothing else
depends on them. :func:`paper_statements` checks a list against the two statements of §9/§9.2 about the
types' efficiency; the figures here meet the first (DL585 G7 the most efficient per CPU unit) and not the
second (a 0.2-CPU container is cheapest on the R515 counting the whole machine, on the DL585 G7 counting
its marginal watts; §9 says the DL385 G7) — tested, so a change of figures shows up.

The baseline's type order (§9: "turning them on in decreasing order of energy efficiency (e.g., always
turning on HP-DL585-G7 machines first)") is a reading (:func:`type_order`): ``paper`` (default) — the
DL585 G7 first as §9's example, the R210 next as §9.2's account of the baseline implies ("As soon as the
most energy efficient (i.e., HP DL585 G7) machines are all turned on, it began to make wrong decisions
regarding the type of machines to be turned on. As a result, many tasks cannot be scheduled in the newly
provisioned machines": of Table 2's types only the R210, 4 cores and 4 GB, is too small for many tasks),
then the others by peak watts per CPU unit; ``cpu`` — all by peak watts per CPU unit (DL585 G7 first, R210
last); ``capacity`` — by peak watts per unit of mean (cpu, memory) capacity (R515 first, against §9's
example; the default before the paper's order was read from §9/§9.2).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

CPU, MEM = 0, 1
R = 2  # resource types (|R| in the paper)


@dataclass(frozen=True)
class MachineType:
    """One machine model: normalized capacity (cpu, memory), count, power at idle and at 100 % CPU."""

    name: str
    cpu: float
    mem: float
    count: int
    idle_w: float
    peak_w: float
    source: str = ""
    mem_w_per_gb: float = 1.25  # estimate, see the module docstring
    mem_gb: float = 0.0  # installed memory (memory slope = mem_w_per_gb × mem_gb)

    @property
    def capacity(self) -> np.ndarray:
        return np.array([self.cpu, self.mem])

    @property
    def slope_w(self) -> np.ndarray:
        """``α^{m,r}`` in W per unit utilization of resource r (cpu: peak − idle; memory: W per GB × GB)."""
        return np.array([self.peak_w - self.idle_w, self.mem_w_per_gb * self.mem_gb])


TABLE2: tuple[MachineType, ...] = (
    MachineType("Dell PowerEdge R210", 4 / 48, 4 / 64, 7000, 40.0, 110.0, "estimate", mem_gb=4.0),
    MachineType(
        "Dell PowerEdge R515",
        12 / 48,
        32 / 64,
        1500,
        72.0,
        174.0,
        "channelpartner.de Opteron 4170 HE",
        mem_gb=32.0,
    ),
    MachineType(
        "HP DL385 G7", 24 / 48, 16 / 64, 1000, 131.0, 345.0, "computerwoche.de 2 x Opteron 6174", mem_gb=16.0
    ),
    MachineType("HP DL585 G7", 1.0, 1.0, 500, 300.0, 680.0, "estimate", mem_gb=64.0),
)

#: §9: "we use the average electricity price in the state of California, which is 12.25 cents per
#: Kilowatthour"; "The reconfiguration cost per machine power cycle is set to 0.5 cents"; "cooling costs
#: ... proportional to the cost of energy consumed by the servers (the proportionality factor is set to 0.8)"
PRICE_USD_PER_KWH = 0.1225
SWITCH_USD = 0.005
COOLING = 0.8


def scaled(types: tuple[MachineType, ...], fraction: float) -> tuple[MachineType, ...]:
    """The same types with ``round(count × fraction)`` machines each (at least one)."""
    return tuple(replace(t, count=max(1, round(t.count * fraction))) for t in types)


def efficiency_order(types: tuple[MachineType, ...]) -> np.ndarray:
    """Types from most to least energy-efficient: peak watts per unit of mean (cpu, memory) capacity."""
    w = np.array([t.peak_w / ((t.cpu + t.mem) / 2) for t in types])
    return np.argsort(w, kind="stable")


def energy_kwh(types: tuple[MachineType, ...], on_s: np.ndarray, used_s: np.ndarray) -> np.ndarray:
    """Eq. (6) energy per type: ``on_s[m]`` machine-seconds on, ``used_s[m, r]`` resource-unit-seconds used.

    ``Σ_i y^i (E^idle + Σ_r α^r u^{ir})`` integrated over time, with ``u^{ir} = used^{ir}/C^{mr}``."""
    out = np.zeros(len(types))
    for m, t in enumerate(types):
        util = used_s[m] / t.capacity  # utilization-seconds summed over machines
        out[m] = (t.idle_w * on_s[m] + float(t.slope_w @ util)) / 3.6e6
    return out


def cpu_efficiency_order(types: tuple[MachineType, ...]) -> np.ndarray:
    """Types from most to least energy-efficient per CPU unit: peak watts per unit of CPU capacity (the
    x axis of the paper's Fig. 9, "energy consumption as function of CPU usage")."""
    return np.argsort(np.array([t.peak_w / t.cpu for t in types]), kind="stable")


#: baseline type-order readings (:func:`type_order`), the default first
ORDERS = ("paper", "cpu", "capacity")


def type_order(types: tuple[MachineType, ...], reading: str = "paper") -> np.ndarray:
    """The baseline's order of types under ``reading`` (see the module docstring); ``paper`` puts the types
    named "HP DL585 G7" and "Dell PowerEdge R210" first where the list has them, the rest by
    :func:`cpu_efficiency_order`. ValueError for an unknown reading."""
    if reading == "capacity":
        return efficiency_order(types)
    if reading == "cpu":
        return cpu_efficiency_order(types)
    if reading != "paper":
        raise ValueError(f"type order must be one of {ORDERS}, got {reading!r}")
    names = [t.name for t in types]
    head = [names.index(w) for w in ("HP DL585 G7", "Dell PowerEdge R210") if w in names]
    rest = [int(m) for m in cpu_efficiency_order(types) if int(m) not in head]
    return np.array(head + rest, dtype=np.int64)


def paper_statements(types: tuple[MachineType, ...], container_cpu: float = 0.2) -> dict[str, object]:
    """The power figures against §9.2 ("the most energy efficient (i.e., HP DL585 G7)") and §9 ("a
    container requiring 0.2 CPU units should be placed in a HP DL385 G7 since the PowerEdge R210 does not
    have enough CPU capacity, whereas the other types of servers are able to host it but will consume much
    more energy").

    Returns the type names in the per-capacity order (:func:`efficiency_order`) and the per-CPU order,
    and the cheapest type able to host a ``container_cpu`` container read two ways: the power of a machine
    running just that container (``idle + slope × c/C``) and the container's marginal power
    (``slope × c/C``); ``*_holds`` say whether the statement holds for each reading."""
    names = [t.name for t in types]
    fits = [m for m, t in enumerate(types) if t.cpu >= container_cpu - 1e-12]
    whole = {
        names[m]: types[m].idle_w + (types[m].peak_w - types[m].idle_w) * container_cpu / types[m].cpu
        for m in fits
    }
    marginal = {names[m]: (types[m].peak_w - types[m].idle_w) * container_cpu / types[m].cpu for m in fits}
    per_cap = [names[m] for m in efficiency_order(types)]
    per_cpu = [names[m] for m in cpu_efficiency_order(types)]
    cheapest_whole = min(whole, key=whole.__getitem__) if whole else ""
    cheapest_marginal = min(marginal, key=marginal.__getitem__) if marginal else ""
    return {
        "capacity_order": per_cap,
        "cpu_order": per_cpu,
        "most_efficient_capacity_holds": per_cap[0] == "HP DL585 G7",
        "most_efficient_per_cpu_holds": per_cpu[0] == "HP DL585 G7",
        "container_w_whole": whole,
        "container_w_marginal": marginal,
        "cheapest_whole": cheapest_whole,
        "cheapest_marginal": cheapest_marginal,
        "container_whole_holds": cheapest_whole == "HP DL385 G7",
        "container_marginal_holds": cheapest_marginal == "HP DL385 G7",
    }
