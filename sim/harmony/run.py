"""The Harmony simulation over control intervals (§9): baseline, CBP and CBS on one workload.

§9: "The DCP procedure is performed once every 5 minutes ... We have chosen the time horizon to be T = 1";
"we mainly focus on simulating the arrival of new tasks". Each interval t (length Δ = 300 s):

1. demand (computed once per workload by :func:`predict_demand`, shared by every scheme): the forecast
   arrivals of each size class (ARIMA, trailing window) give the short-class containers by the M/G/N
   model for the group's target delay; the forecast number of long-running tasks gives the long-class
   containers (§5.2). A short class's service time is the time a task holds a short container,
   ``min(duration, threshold)`` over all the cluster's tasks (every task starts short, §5.1; see
   :meth:`sim.harmony.classify.TaskClasses.short_hold_s`). The demand depends on the workload only, never
   on a scheme's own queue, so CBP and CBS solve the same LP and "provision the same number of machines"
   (§9.2);
2. Harmony (CBP, CBS): DCP-RELAX with Theorem 1 container sizes and over-provisioning ω, the current
   machines as z_{t−1}, the interval's price; then ⌈z⌉ machines (both), and for CBS ⌈x⌉ containers placed by
   first fit; baseline: the 80 % bottleneck-utilization rule on the current total demand;
3. the scheduler (:mod:`sim.harmony.engine`) runs the tasks until the next decision.

Energy of an interval: eq. (6) over the machine-seconds on and the resource-seconds used, times the
price, times (1 + cooling 0.8), plus 0.5 ¢ per power-on. Scheduling delay of a task: start − submit; a
task still waiting at the horizon counts with horizon − submit (a lower bound) and as unscheduled.

Free parameters and their defaults (none tuned to the paper's numbers): target delays per group
(production 5 s, other 30 s, gratis 120 s; the paper gives none), the unserved-container penalty (10 ×
the cost of the largest machine for an interval), ε = 0.001, M^k = 100 (§9.1), ω = 1.2 (§7.2).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from sim.harmony.classify import GROUPS, TaskClasses, priority_group
from sim.harmony.engine import active_lists, apply_config, place_containers, repack_running, run_until
from sim.harmony.forecast import ForecastConfig, counts_per_interval, mape, one_step_forecasts
from sim.harmony.lp import DCPRelax
from sim.harmony.machines import (
    COOLING,
    ORDERS,
    PRICE_USD_PER_KWH,
    SWITCH_USD,
    TABLE2,
    MachineType,
    type_order,
)
from sim.harmony.provision import baseline_machines, lemma1_bound, machines_from_lp, round_up
from sim.harmony.queueing import container_size, containers_for_delay, theorem1_beta

SCHEMES = ("baseline", "cbp", "cbs")
_MODE = {"baseline": 0, "cbp": 1, "cbs": 2}
#: CBS's relabel readings (:func:`sim.harmony.engine.run_until`): "free" = the short container is freed on
#: the machine where the task runs (its long reservation grows); "swap" = exchanged with a free long
#: container of the class elsewhere, where there is one
RELABELS = ("free", "swap")
_RELABEL = {r: i for i, r in enumerate(RELABELS)}
LONG_COUNTS = ("submitted", "running")


@dataclass(frozen=True)
class HarmonyConfig:
    """One run. ``machine_fraction`` scales Table 2's counts (1.0 = the paper's 10,000 machines)."""

    scheme: str = "cbs"
    omega: float = 1.2
    interval_s: float = 300.0
    horizon: int = 1
    machine_fraction: float = 1.0
    price_usd_per_kwh: float = PRICE_USD_PER_KWH
    target_delay_s: tuple[float, float, float] = (5.0, 30.0, 120.0)  # production, other, gratis
    eps: float = 0.001
    mk: int = 100
    baseline_util: float = 0.8
    seed: int = 0
    types: tuple[MachineType, ...] = field(default=TABLE2)
    # the baseline's type order, a reading of §9's "in decreasing order of energy efficiency (e.g., always
    # turning on HP-DL585-G7 machines first)" (sim.harmony.machines.type_order): "paper" = DL585 G7, then
    # R210 (§9.2's account), then per CPU watts; "cpu" = peak W per CPU unit; "capacity" = peak W per unit
    # of mean (cpu, memory) capacity (R515 first; the default until the paper's order was read)
    efficiency: str = "paper"
    # readings of the container manager (off by default; `python -m studies.harmony.isolate starvation`):
    # backlog — every task waiting at a decision adds one short container of its class (§4: the container
    # manager "evaluates the number of containers required to schedule the current workload"); CBP and CBS
    # then no longer solve the same LP (§9.2: "both CBS and CBP provision the same number of machines").
    backlog: bool = False
    # keep_running — CBS's DCP-RELAX must keep, per machine type, the containers that hold running tasks
    # (Algorithm 1 re-packs them by migration, line 11; this scheduler never migrates a task)
    keep_running: bool = False
    # metrics "_steady" read tasks submitted from warmup_s on: the paper states no warm-up; the first hour is
    # the forecasts' own start-up (ForecastConfig.min_train = 12 intervals of persistence before the first
    # ARIMA fit) on a cluster that starts empty (§9.2 simulates "the arrival of new tasks")
    warmup_s: float = 3600.0
    # CBS's relabel (sim.harmony.engine): "swap" — the relabelled task's short container turns long and a free
    # long container of its class elsewhere turns short (capacity-true); "free" — its short container is
    # freed where the task runs (the model until 2026-11-27; a container on a machine the task still fills)
    relabel: str = "swap"
    # repack — CBS re-packs the running tasks' containers by first fit at each decision, each task moving with
    # its container (Algorithm 1 lines 10–11: "Compute a re-packing configuration on all selected active
    # machines", "perform re-packing using FF, turn off other machines"; §7.3.2: "Container reassignment
    # (i.e., migration) is then performed"; sim.harmony.engine.repack_running), and the LP's demand of a class
    # is at least the containers its running tasks hold (the configuration must host them, so CBS no longer
    # solves CBP's LP, against §9.2's "both CBS and CBP provision the same number of machines": a reading,
    # off by default). §7.3.2: "container reassignment cost is modeled as part of the machine switching
    # cost": no cost is added. False: no task ever moves (a running task's container stays where it started)
    repack: bool = False
    # long_count — the long-class containers (§5.2: "we use the ARIMA model to predict the number of long
    # running tasks"): "submitted" = the one-step forecast of the long-running count as if every task started
    # when submitted (a property of the workload, shared by every scheme); "running" = the number of the
    # scheme's own tasks running past their class's threshold at the decision (an isolating reading: no
    # forecast, the count the scheme's delays produce)
    long_count: str = "submitted"

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {SCHEMES}, got {self.scheme!r}")
        if self.relabel not in RELABELS:
            raise ValueError(f"relabel must be one of {RELABELS}, got {self.relabel!r}")
        if self.long_count not in LONG_COUNTS:
            raise ValueError(f"long_count must be one of {LONG_COUNTS}, got {self.long_count!r}")
        if self.efficiency not in ORDERS:
            raise ValueError(f"efficiency must be one of {ORDERS}, got {self.efficiency!r}")


@dataclass
class Demand:
    """Per-interval observed and forecast counts per size class, and required containers per class."""

    arrivals: np.ndarray  # (T, Q) observed
    arrivals_fc: np.ndarray  # (T, Q) forecast from intervals < t
    long_running: np.ndarray  # (T, Q) observed at interval start (tasks started at submission)
    long_fc: np.ndarray  # (T, Q)
    containers: np.ndarray  # (T, 2Q) required containers (short: M/G/N; long: forecast count)
    mape_arrivals: np.ndarray  # (Q,)
    mape_long: np.ndarray  # (Q,)
    seconds: float


def jobs_arrays(jobs: pl.DataFrame) -> dict[str, np.ndarray]:
    """Columns ``submit_s, duration_s, cpu, mem, priority`` as arrays sorted by all five values (submit
    time first), so the run never depends on the frame's row order (a query without ORDER BY returns rows
    in any order)."""
    need = ["submit_s", "duration_s", "cpu", "mem", "priority"]
    missing = [c for c in need if c not in jobs.columns]
    if missing:
        raise ValueError(f"Harmony jobs frame lacks columns {missing}")
    j = jobs.select(need).sort(need)
    return {c: j[c].to_numpy().astype(np.int64 if c == "priority" else np.float64) for c in need}


def predict_demand(
    jobs: pl.DataFrame,
    classes: TaskClasses,
    n_intervals: int,
    cfg: HarmonyConfig,
    fcfg: ForecastConfig | None = None,
) -> Demand:
    """§5.2 demand per interval: forecasts read only earlier intervals (see :mod:`sim.harmony.forecast`)."""
    t0 = time.perf_counter()
    fcfg = fcfg or ForecastConfig()
    a = jobs_arrays(jobs)
    Q = classes.n_queues
    q = classes.size_cluster(a["cpu"], a["mem"], a["priority"])
    arr = counts_per_interval(a["submit_s"], q, Q, cfg.interval_s, n_intervals)
    # long-running tasks at each interval start, as if every task started when submitted (a property of
    # the workload, shared by all schemes)
    thr = classes.threshold_s[q]
    is_long = a["duration_s"] > thr
    long_run = np.zeros((n_intervals, Q))
    starts = np.arange(n_intervals) * cfg.interval_s
    for qi in range(Q):
        sel = is_long & (q == qi)
        if not sel.any():
            continue
        lo = np.sort(a["submit_s"][sel] + thr[sel])
        hi = np.sort(a["submit_s"][sel] + a["duration_s"][sel])
        long_run[:, qi] = np.searchsorted(lo, starts, "right") - np.searchsorted(hi, starts, "right")
    arr_fc = one_step_forecasts(arr, fcfg)
    long_fc = one_step_forecasts(long_run, fcfg)
    return Demand(
        arr,
        arr_fc,
        long_run,
        long_fc,
        required_containers(arr_fc, long_fc, classes, cfg),
        mape(arr, arr_fc),
        mape(long_run, long_fc),
        time.perf_counter() - t0,
    )


def required_containers(
    arrivals_fc: np.ndarray, long_fc: np.ndarray, classes: TaskClasses, cfg: HarmonyConfig
) -> np.ndarray:
    """(T, 2Q) containers per class from forecast arrivals (short: M/G/N, eq. 1, for the group's target
    delay, service = the time a short container is held) and forecast long-running tasks (long, §5.2)."""
    T, Q = arrivals_fc.shape
    cont = np.zeros((T, 2 * Q))
    for qi in range(Q):
        c = 2 * qi
        mean_d, cv2 = classes.short_hold_s(qi)  # every arrival holds a short container (§5.1)
        target = cfg.target_delay_s[int(classes.group[qi])]
        for t in range(T):
            lam = arrivals_fc[t, qi] / cfg.interval_s
            if mean_d > 0:
                cont[t, c] = containers_for_delay(lam, 1.0 / mean_d, cv2, target, 10**7)
        cont[:, c + 1] = np.ceil(long_fc[:, qi] - 1e-9)
    return cont


def with_oracle(demand: Demand, classes: TaskClasses, cfg: HarmonyConfig, long: bool = False) -> Demand:
    """``demand`` with each interval's true arrivals as its forecast (and, with ``long``, the true
    long-running counts): an isolating run of forecast error, not a scheme."""
    from dataclasses import replace

    afc = demand.arrivals.copy()
    lfc = demand.long_running.copy() if long else demand.long_fc
    return replace(
        demand, arrivals_fc=afc, long_fc=lfc, containers=required_containers(afc, lfc, classes, cfg)
    )


@dataclass
class HarmonyResult:
    config: HarmonyConfig
    intervals: pl.DataFrame  # one row per interval (and machine type columns)
    tasks: pl.DataFrame  # submit_s, start_s, delay_s, group, scheduled
    metrics: dict[str, float]
    lp_seconds: float
    wall_s: float
    migrations: int = 0  # tasks moved by CBS's re-packing (``HarmonyConfig.repack``)
    repack_stuck: int = 0  # re-packed tasks left on their machine without room for their container


def container_sizes(classes: TaskClasses, cfg: HarmonyConfig) -> np.ndarray:
    """Theorem 1 container size per class (at most the class maximum), used by the LP of CBP and CBS."""
    beta = theorem1_beta(cfg.eps, 2, cfg.mk)
    return container_size(classes.mean, classes.std, beta, classes.max)


def simulate_harmony(
    jobs: pl.DataFrame,
    classes: TaskClasses,
    demand: Demand,
    cfg: HarmonyConfig,
    prices_usd_per_kwh: np.ndarray | None = None,
) -> HarmonyResult:
    """Run one scheme over ``demand``'s intervals. ``prices`` per interval (default: the constant price)."""
    wall0 = time.perf_counter()
    a = jobs_arrays(jobs)
    T = demand.containers.shape[0]
    horizon_s = T * cfg.interval_s
    Q, K = classes.n_queues, classes.n_classes
    types = cfg.types if cfg.machine_fraction == 1.0 else _scaled(cfg.types, cfg.machine_fraction)
    M = len(types)
    price = (
        np.full(T, cfg.price_usd_per_kwh) if prices_usd_per_kwh is None else np.asarray(prices_usd_per_kwh)
    )
    if price.shape[0] < T:
        raise ValueError(f"{price.shape[0]} prices for {T} intervals")
    counts = np.array([t.count for t in types], dtype=np.int64)
    type_start = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    type_end = np.cumsum(counts).astype(np.int64)
    n_mach = int(counts.sum())
    mtype = np.repeat(np.arange(M), counts).astype(np.int64)
    cap_t = np.array([[t.cpu, t.mem] for t in types])
    mcap = cap_t[mtype]
    eff = type_order(types, cfg.efficiency).astype(np.int64)
    # tasks
    fits_any = (
        (a["cpu"][:, None] <= cap_t[None, :, 0] + 1e-9) & (a["mem"][:, None] <= cap_t[None, :, 1] + 1e-9)
    ).any(axis=1)
    keep = fits_any & (a["submit_s"] < horizon_s)
    a = {k: v[keep] for k, v in a.items()}
    n = a["submit_s"].size
    q = classes.size_cluster(a["cpu"], a["mem"], a["priority"]).astype(np.int64)
    order = np.arange(n, dtype=np.int64)
    qorder = np.argsort(q, kind="stable").astype(np.int64)  # within a class: submit order
    qstart = np.concatenate([[0], np.cumsum(np.bincount(q, minlength=Q))]).astype(np.int64)
    qcum_cpu = np.concatenate([[0.0], np.cumsum(a["cpu"][qorder])])
    qcum_mem = np.concatenate([[0.0], np.cumsum(a["mem"][qorder])])
    thr = classes.threshold_s.astype(np.float64)
    # state
    state = np.zeros(n_mach, np.int64)
    used = np.zeros((n_mach, 2))
    nrun = np.zeros(n_mach, np.int64)
    slots = np.zeros((n_mach, K), np.int64)
    occ = np.zeros((n_mach, K), np.int64)
    tused = np.zeros((M, 2))
    n_on = np.zeros(M, np.int64)
    acc_on = np.zeros(M)
    acc_used = np.zeros((M, 2))
    start = np.full(n, -1.0)
    mach = np.full(n, -1, np.int64)
    slotc = np.zeros(n, np.int64)
    run_qm = np.zeros((Q, M), np.int64)
    head = np.zeros(Q, np.int64)
    arrived = np.zeros(Q, np.int64)
    fresh = np.ones(Q, np.bool_)
    aptr = np.zeros(1, np.int64)
    tnow = np.zeros(1)
    hsize = int(min(2 * n + 16, 8_000_000))
    ht = np.empty(hsize)
    hx = np.empty((hsize, 1), np.int64)
    hn = np.zeros(1, np.int64)
    xw = np.zeros((Q, M))
    mode = _MODE[cfg.scheme]
    csize = container_sizes(classes, cfg)
    lp = None
    if cfg.scheme != "baseline":
        per_iv = max(t.peak_w for t in types) * cfg.interval_s / 3.6e6 * cfg.price_usd_per_kwh * (1 + COOLING)
        lp = DCPRelax(
            cap_t,
            counts,
            np.array([t.idle_w for t in types]),
            np.array([t.slope_w for t in types]),
            csize,
            cfg.omega,
            cfg.horizon,
            cfg.interval_s,
            COOLING,
            SWITCH_USD,
            10.0 * per_iv,
        )
    class_order = np.argsort(-csize.max(axis=1), kind="stable").astype(np.int64)
    rows = []
    lp_s = 0.0
    moved = stuck = 0
    for t in range(T):
        t_s = t * cfg.interval_s
        active_now = np.array([int(((state == 1) & (mtype == m)).sum()) for m in range(M)])
        contained = np.zeros(K)
        if lp is None:
            queued_cpu = sum(
                qcum_cpu[qstart[i] + arrived[i]] - qcum_cpu[qstart[i] + head[i]] for i in range(Q)
            )
            queued_mem = sum(
                qcum_mem[qstart[i] + arrived[i]] - qcum_mem[qstart[i] + head[i]] for i in range(Q)
            )
            # tasks arriving exactly at t_s are not in the system yet
            dem = tused.sum(axis=0) + np.array([queued_cpu, queued_mem])
            target = baseline_machines(dem, cap_t, counts, eff, cfg.baseline_util)
        else:
            l0 = time.perf_counter()
            d = demand.containers[t : t + cfg.horizon].copy()
            if cfg.long_count == "running":  # the scheme's own long-running tasks at the decision
                run_long = (start >= 0) & (start + a["duration_s"] >= t_s) & (t_s - start >= thr[q])
                d[:, 1::2] = np.bincount(q[run_long], minlength=Q)[None, :]
            if cfg.repack and mode == 2:  # re-packed, the running tasks' containers are in the configuration
                d = np.maximum(d, occ.sum(axis=0)[None, :])
            if cfg.backlog:  # every task waiting at the decision needs a short container of its class
                d[:, 0::2] += (arrived - head)[None, :]
            if d.shape[0] < cfg.horizon:
                d = np.vstack([d, np.repeat(d[-1:], cfg.horizon - d.shape[0], axis=0)])
            pw = price[t : t + cfg.horizon]
            if pw.shape[0] < cfg.horizon:
                pw = np.concatenate([pw, np.repeat(pw[-1:], cfg.horizon - pw.shape[0])])
            x_min = None
            if cfg.keep_running and mode == 2:
                # the containers holding running tasks stay on their machine type (never migrated), scaled
                # down where ω × their size exceeds the type's whole capacity (the LP would be infeasible)
                x_min = np.zeros((M, K))
                for m in range(M):
                    x_min[m] = occ[(state == 1) & (mtype == m)].sum(axis=0)
                    need = (cfg.omega * x_min[m][:, None] * csize).sum(axis=0) / (cap_t[m] * counts[m])
                    if need.max() > 0.999:
                        x_min[m] *= 0.999 / need.max()
            sol = lp.solve(d, pw, active_now, x_min)
            target = machines_from_lp(sol.z[0], counts)
            x = sol.x[0]  # (M, K)
            lp_s += time.perf_counter() - l0
            xw = np.ascontiguousarray(x.T.reshape(Q, 2, M).sum(axis=1))  # weights per size class
        ons = apply_config(target.astype(np.int64), mtype, type_start, type_end, state, nrun, n_on)
        if mode == 2:
            tgt = round_up(sol.x[0])
            first = np.minimum(lemma1_bound(sol.x[0]), tgt)
            if cfg.repack:
                cand = np.flatnonzero((start >= 0) & (start + a["duration_s"] >= t_s))
                mv, st = repack_running(
                    cand, tgt, csize, class_order, mcap, mtype, type_start, type_end, state, n_on, occ, used,
                    nrun, tused, run_qm, a["cpu"], a["mem"], q, slotc, mach,
                )  # fmt: skip
                moved += mv
                stuck += st
            placed = place_containers(
                first, tgt, csize, class_order, mcap, state, occ, slots, type_start, type_end
            )
            contained = placed.sum(axis=0)
        act_idx, act_s, act_e = active_lists(state, type_start, type_end)
        on0, used0 = acc_on.copy(), acc_used.copy()
        run_until(
            t_s + cfg.interval_s,
            mode,
            a["submit_s"],
            a["duration_s"],
            a["cpu"],
            a["mem"],
            q,
            thr,
            order,
            qorder,
            qstart,
            mtype,
            mcap,
            state,
            used,
            nrun,
            slots,
            occ,
            act_idx,
            act_s,
            act_e,
            eff,
            xw,
            tused,
            n_on,
            acc_on,
            acc_used,
            start,
            mach,
            slotc,
            run_qm,
            head,
            arrived,
            fresh,
            aptr,
            tnow,
            ht,
            hx,
            hn,
            True,
            _RELABEL[cfg.relabel],
        )
        d_on, d_used = acc_on - on0, acc_used - used0
        kwh_m = np.array(
            [
                (types[m].idle_w * d_on[m] + float(types[m].slope_w @ (d_used[m] / cap_t[m]))) / 3.6e6
                for m in range(M)
            ]
        )
        kwh = float(kwh_m.sum())
        cap_s = (d_on[:, None] * cap_t).sum(axis=0)
        row = {
            "interval": t,
            "t_s": t_s,
            "energy_kwh": kwh,
            "energy_cost_usd": kwh * price[t] * (1 + COOLING) + float(ons.sum()) * SWITCH_USD,
            "switching_usd": float(ons.sum()) * SWITCH_USD,
            "power_ons": int(ons.sum()),
            "cpu_util": float(d_used[:, 0].sum() / cap_s[0]) if cap_s[0] > 0 else 0.0,
            "mem_util": float(d_used[:, 1].sum() / cap_s[1]) if cap_s[1] > 0 else 0.0,
            "queued": int((arrived - head).sum()),
            "running": int(nrun.sum()),
            "containers": float(demand.containers[t].sum()),
            "containers_placed": float(contained.sum()),
            "price_usd_per_kwh": float(price[t]),
        }
        for m in range(M):
            row[f"machines_on_{m}"] = float(d_on[m] / cfg.interval_s)
            row[f"target_{m}"] = int(target[m])
        rows.append(row)
    grp = priority_group(a["priority"])
    scheduled = start >= 0
    delay = np.where(scheduled, start - a["submit_s"], horizon_s - a["submit_s"])
    tasks = pl.DataFrame(
        {
            "submit_s": a["submit_s"],
            "start_s": np.where(scheduled, start, np.nan),
            "delay_s": delay,
            "group": np.array(GROUPS)[grp],
            "scheduled": scheduled,
            "machine": mach,
            "cpu": a["cpu"],
            "mem": a["mem"],
            "end_s": np.where(scheduled, start + a["duration_s"], np.nan),
        }
    )
    iv = pl.DataFrame(rows)
    metrics = {
        "tasks": float(n),
        "unscheduled": float((~scheduled).sum()),
        "energy_kwh": float(iv["energy_kwh"].sum()),
        "energy_cost_usd": float(iv["energy_cost_usd"].sum()),
        "switching_usd": float(iv["switching_usd"].sum()),
        "cpu_util": float(iv["cpu_util"].mean()),
        "mem_util": float(iv["mem_util"].mean()),
        "machines_on_mean": float(sum(iv[f"machines_on_{m}"].mean() for m in range(M))),
    }
    steady = a["submit_s"] >= cfg.warmup_s
    # tasks of the steady window still waiting at the horizon though submitted more than an interval before it
    metrics["unscheduled_steady"] = float(
        (steady & ~scheduled & (a["submit_s"] < horizon_s - cfg.interval_s)).sum()
    )
    metrics["tasks_steady"] = float(steady.sum())
    for name, sel in (
        ("all", np.ones(n, bool)),
        *((g, grp == i) for i, g in enumerate(GROUPS)),
        ("steady", steady),
    ):
        d = delay[sel]
        for p in (50, 90, 99):
            metrics[f"delay_p{p}_s_{name}"] = float(np.percentile(d, p)) if d.size else float("nan")
        metrics[f"delay_mean_s_{name}"] = float(d.mean()) if d.size else float("nan")
    return HarmonyResult(cfg, iv, tasks, metrics, lp_s, time.perf_counter() - wall0, moved, stuck)


def _scaled(types: tuple[MachineType, ...], f: float) -> tuple[MachineType, ...]:
    from sim.harmony.machines import scaled

    return scaled(types, f)
