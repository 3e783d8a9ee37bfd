"""Seeded capacity-trace generators.

* :func:`random_walk` — thesis §3.4 / paper 003 §4.1: changes only at period boundaries, up/down/stay with
  equal probability by ``step × machines``, within ``mean ± dynamic_range/2``.
* :func:`random_uniform` — paper 003: each period uniform within the range.
* :func:`risk_aware_walk` — paper 001 §5.1: ``M_avg ± M_ra``, step ``⌊M_ra/4⌋``, period φ; at a bound it
  stays or moves inward with equal probability.
* :func:`budget_trace` — constant carbon budget (thesis §2.1.2, paper 003 §3.2) or constant cost budget
  (paper 003 §3.1): capacity per hour ∝ budget / signal, budget solved so the mean is the target.
* :func:`stranded_trace` — paper 003 §3.3: full capacity only while the signal is at/below a threshold.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sim.capacity.trace import HOUR, MEAN_CAPACITY, CapacityTrace, MachineCapacityTrace

#: most points a generated trace may have (8 bytes each per array; the kernel and the survival model keep
#: a few such arrays): 20 million = a change every 0.13 s over 30 days
MAX_TRACE_POINTS = 20_000_000


def _periods(kind: str, horizon_s: float, period_s: float) -> int:
    """Number of change periods over the horizon, checked before anything is allocated: ValueError naming
    the parameters if the period is not positive and finite or the trace would exceed
    :data:`MAX_TRACE_POINTS` (rather than a MemoryError deep in numpy)."""
    if not (np.isfinite(period_s) and period_s > 0):
        raise ValueError(f"{kind}: the change period must be finite and > 0 s (got {period_s:g})")
    n = float(np.ceil(horizon_s / period_s))
    if n > MAX_TRACE_POINTS:
        raise ValueError(
            f"{kind}: {HOUR / period_s:g} changes/h over {horizon_s / HOUR:g} h is {n:,.0f} capacity points "
            f"(~{n * 8 * 4 / 1e9:.1f} GB); at most {MAX_TRACE_POINTS:,} are supported: lower changes_per_hour "
            "or the horizon"
        )
    return int(n)


def _bounds(machines: int, mean: float, dynamic_range: float) -> tuple[int, int]:
    lb = int(round(max(mean - dynamic_range / 2, 0.0) * machines))
    ub = int(round(min(mean + dynamic_range / 2, 1.0) * machines))
    return lb, ub


def random_walk(
    machines: int,
    horizon_s: float,
    changes_per_hour: float = 1.0,
    step: float = 0.15,
    dynamic_range: float = 0.6,
    mean: float = MEAN_CAPACITY,
    seed: int = 0,
    boundary: str = "reflect",
) -> CapacityTrace:
    """Random walk of machines alive (see module doc), starting at the mean.

    ``boundary="reflect"`` (default): a move past a bound is mirrored at it (``ub − overshoot``); where
    the mirror image is the current level (a step of twice the distance to the bound, e.g. step 0.6 from
    the middle of a 0.6 range) the walk stops at the bound instead, and any image still outside is
    clipped. ``boundary="clip"``: a move past a bound stops at the bound. Both keep the walk symmetric, so
    the long-run mean is the middle of the range (measured: 0.700–0.701 for steps 0.15–0.6); simply
    reversing the move at a bound does not (it gets stuck at a mean of 0.625 for step 0.45)."""
    if boundary not in ("reflect", "clip"):
        raise ValueError("boundary must be 'reflect' or 'clip'")
    if changes_per_hour <= 0:
        raise ValueError("changes_per_hour must be positive")
    period = HOUR / changes_per_hour
    lb, ub = _bounds(machines, mean, dynamic_range)
    delta = max(1, int(round(step * machines)))
    n = _periods("random_walk", horizon_s, period)
    moves = np.random.default_rng(seed).integers(-1, 2, size=n)  # -1, 0, +1 equally likely
    out = np.empty(n, dtype=np.int64)
    cur = int(round(mean * machines))
    for i in range(n):
        if i > 0:
            nxt = cur + moves[i] * delta
            if boundary == "reflect" and (nxt > ub or nxt < lb):
                mirrored = 2 * ub - nxt if nxt > ub else 2 * lb - nxt
                nxt = mirrored if mirrored != cur else nxt
            cur = min(max(nxt, lb), ub)
        out[i] = cur
    return CapacityTrace(
        np.arange(n) * period,
        out,
        machines,
        horizon_s,
        period,
        "random_walk",
        {"changes_per_hour": changes_per_hour, "step": step, "dynamic_range": dynamic_range, "mean": mean},
        seed,
    )


def random_uniform(
    machines: int,
    horizon_s: float,
    changes_per_hour: float = 1.0,
    dynamic_range: float = 0.6,
    mean: float = MEAN_CAPACITY,
    seed: int = 0,
) -> CapacityTrace:
    """Each period, machines alive drawn uniformly from the integer range ``[lb, ub]``."""
    if not changes_per_hour > 0:
        raise ValueError("changes_per_hour must be positive")
    period = HOUR / changes_per_hour
    lb, ub = _bounds(machines, mean, dynamic_range)
    n = _periods("random_uniform", horizon_s, period)
    out = np.random.default_rng(seed).integers(lb, ub + 1, size=n)
    return CapacityTrace(
        np.arange(n) * period,
        out,
        machines,
        horizon_s,
        period,
        "random_uniform",
        {"changes_per_hour": changes_per_hour, "dynamic_range": dynamic_range, "mean": mean},
        seed,
    )


def risk_aware_walk(m_avg: int, m_ra: int, period_s: float, horizon_s: float, seed: int = 0) -> CapacityTrace:
    """Paper 001 §5.1: walk in ``[M_avg − M_ra, M_avg + M_ra]`` with step ``⌊M_ra/4⌋`` every ``period_s``.

    Inside the range: stay/up/down with probability 1/3 each; at a bound: stay or move inward, 1/2 each.
    The platform has ``M_avg + M_ra`` machines. ValueError unless ``0 ≤ m_ra ≤ m_avg``."""
    if not 0 <= m_ra <= m_avg:
        raise ValueError(f"risk_aware_walk: m_ra={m_ra} must lie in [0, m_avg={m_avg}]")
    lo, hi = m_avg - m_ra, m_avg + m_ra
    step = max(1, m_ra // 4)
    n = _periods("risk_aware_walk", horizon_s, period_s)
    rng = np.random.default_rng(seed)
    out = np.empty(n, dtype=np.int64)
    cur = m_avg
    for i in range(n):
        if i > 0:
            can_up, can_down = cur + step <= hi, cur - step >= lo
            choices = [0] + ([step] if can_up else []) + ([-step] if can_down else [])
            cur += choices[rng.integers(len(choices))]
        out[i] = cur
    return CapacityTrace(
        np.arange(n) * period_s,
        out,
        hi,
        horizon_s,
        period_s,
        "risk_aware_walk",
        {"m_avg": m_avg, "m_ra": m_ra, "step": step},
        seed,
    )


def _solve_budget(
    signal: np.ndarray, machines: int, target_mean: float, floor: float
) -> tuple[float, np.ndarray]:
    """Budget B such that mean(clip(B / signal, floor, 1)) == target (bisection); non-positive signal
    means free power (full capacity)."""
    s = np.asarray(signal, dtype=np.float64)

    def frac(b: float) -> np.ndarray:
        with np.errstate(divide="ignore"):
            f = np.where(s > 0, b / np.where(s > 0, s, 1.0), 1.0)
        return np.clip(f, floor, 1.0)

    if frac(0.0).mean() > target_mean:
        raise ValueError(f"floor {floor} and free hours already exceed the target mean {target_mean}")
    lo, hi = 0.0, float(np.nanmax(s[s > 0])) if np.any(s > 0) else 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if frac(mid).mean() < target_mean:
            lo = mid
        else:
            hi = mid
    b = (lo + hi) / 2
    return b, frac(b)


def budget_trace(
    signal: np.ndarray,
    machines: int,
    kind: str = "carbon",
    target_mean: float = MEAN_CAPACITY,
    floor: float = 0.0,
    step_s: float = HOUR,
    label: str = "",
) -> CapacityTrace:
    """Constant budget: capacity in hour h is ``clip(B / signal[h], floor, 1) × machines`` (rounded), with
    B chosen so the mean fraction equals ``target_mean``. ``kind`` is ``carbon`` (signal gCO2/kWh) or
    ``cost`` (USD/MWh; paper 003 uses a 20 % floor). Lower signal never gives fewer machines."""
    b, f = _solve_budget(signal, machines, target_mean, floor)
    alive = np.rint(f * machines).astype(np.int64)
    return CapacityTrace(
        np.arange(len(alive)) * step_s,
        alive,
        machines,
        len(alive) * step_s,
        step_s,
        f"{kind}_budget",
        {"budget": b, "target_mean": target_mean, "floor": floor, "label": label},
        None,
    )


def stranded_trace(
    signal: np.ndarray,
    machines: int,
    threshold: float,
    base_fraction: float = 0.0,
    step_s: float = HOUR,
    label: str = "",
) -> CapacityTrace:
    """All machines on while ``signal <= threshold`` (e.g. price ≤ 0, or intensity below a percentile),
    otherwise ``base_fraction × machines``."""
    s = np.asarray(signal, dtype=np.float64)
    alive = np.where(s <= threshold, machines, int(round(base_fraction * machines))).astype(np.int64)
    return CapacityTrace(
        np.arange(len(alive)) * step_s,
        alive,
        machines,
        len(alive) * step_s,
        step_s,
        "stranded",
        {"threshold": threshold, "base_fraction": base_fraction, "label": label},
        None,
    )


def _change_cores(
    rng: np.random.Generator,
    cur: int,
    last_shrink: bool,
    draw_size: Callable[[], int],
    cores: tuple[int, int],
    probs: tuple[float, float, float],
) -> tuple[int, bool]:
    """One change of a harvest VM's cores: ``(cores after it, whether it shrank)``. An evicted VM (0 cores)
    comes back at the minimum; otherwise it shrinks with the probability after a growth or after a shrink
    (``probs``: after growth, after shrink, eviction), by ``draw_size()`` cores within ``cores`` (min, max),
    a shrink being an eviction with the eviction probability; at a bound it goes the other way. The draws
    are in this order: shrink, size, eviction (both trace models depend on it)."""
    lo, hi = cores
    p_after_growth, p_after_shrink, eviction_prob = probs
    if cur == 0:
        return lo, False
    shrink = rng.random() < (p_after_shrink if last_shrink else p_after_growth)
    size = draw_size()
    if shrink and rng.random() < eviction_prob:
        nxt = 0
    elif shrink:
        nxt = max(cur - size, lo)
    else:
        nxt = min(cur + size, hi)
    if nxt == cur:  # at a bound: the change goes the other way
        nxt = min(cur + size, hi) if shrink else max(cur - size, lo)
        shrink = not shrink
    return nxt, shrink


def harvest_trace(
    machines: int,
    horizon_s: float,
    max_cores: int = 48,
    min_cores: int = 2,
    mean_inter_change_s: float = 3600.0,
    inter_change_sigma: float = 1.2,
    mean_change_cores: float = 6.0,
    p_shrink_after_growth: float = 0.6,
    p_shrink_after_shrink: float = 0.4,
    eviction_prob: float = 0.02,
    seed: int = 0,
    stability_spread: float = 0.0,
) -> MachineCapacityTrace:
    """Synthetic harvest-VM cores per machine (paper 002 §2.1), a documented model:

    * each machine starts at a uniform core count in ``[min_cores, max_cores]``;
    * times between its changes are log-normal with mean ``mean_inter_change_s`` and log-sd
      ``inter_change_sigma`` (heavy-tailed, as measured in paper 002 Fig. 1);
    * whether a change shrinks follows a bigram chain: P(shrink | last change grew) and
      P(shrink | last change shrank) (paper 002 §3.1.1);
    * change sizes are 1 + Poisson(``mean_change_cores`` − 1) cores, clipped to the bounds;
    * with ``eviction_prob`` a shrink is an eviction to 0 cores; the VM comes back at ``min_cores`` at its
      next change (counted as a growth);
    * ``stability_spread`` > 0 makes HVMs differ in stability (paper 002 Fig. 2: some servers see far less
      regular-VM churn): machine ``m``'s mean inter-change time is ``mean_inter_change_s`` times a
      log-normal factor of log-sd ``stability_spread`` and mean 1 (drawn from a separate seeded stream, so
      ``stability_spread = 0`` reproduces the homogeneous trace).
    """
    rng = np.random.default_rng(seed)
    factor = np.ones(machines)
    if stability_spread > 0:
        factor = np.random.default_rng([seed, 1]).lognormal(
            -(stability_spread**2) / 2, stability_spread, machines
        )
    ts, ms, cs = [], [], []
    for m in range(machines):
        mu = np.log(mean_inter_change_s * factor[m]) - inter_change_sigma**2 / 2
        cur = int(rng.integers(min_cores, max_cores + 1))
        ts.append(0.0)
        ms.append(m)
        cs.append(cur)
        t = 0.0
        last_shrink = bool(rng.random() < 0.5)
        while True:
            t += float(rng.lognormal(mu, inter_change_sigma))
            if t >= horizon_s:
                break
            cur, last_shrink = _change_cores(
                rng,
                cur,
                last_shrink,
                lambda: 1 + int(rng.poisson(max(mean_change_cores - 1, 0.0))),
                (min_cores, max_cores),
                (p_shrink_after_growth, p_shrink_after_shrink, eviction_prob),
            )
            ts.append(t)
            ms.append(m)
            cs.append(cur)
    return MachineCapacityTrace(
        np.array(ts),
        np.array(ms),
        np.array(cs, dtype=float),
        machines,
        horizon_s,
        "harvest",
        {
            "max_cores": max_cores,
            "min_cores": min_cores,
            "mean_inter_change_s": mean_inter_change_s,
            "inter_change_sigma": inter_change_sigma,
            "mean_change_cores": mean_change_cores,
            "p_shrink_after_growth": p_shrink_after_growth,
            "p_shrink_after_shrink": p_shrink_after_shrink,
            "eviction_prob": eviction_prob,
            "stability_spread": stability_spread,
        },
        seed,
    )


#: paper 002's published harvest-VM statistics a calibrated trace is fitted to (:func:`harvest_statistics`
#: measures them). §2.1, cluster C2: "84 % within one hour, 40 % within 10 minutes, 16 % within 1 minute";
#: C1–C6: "a mean inter-change time of 26–224 minutes, and a 95th percentile of 1.2–11.2 hours"; Fig. 2
#: (per HVM, per 1-hour window): "the worst 10 % HVMs can witness tens of changes in an hour while the
#: relatively stable 50 % HVMs witness up to one change in an hour"; Fig. 1(a): "the mean magnitude of
#: change is between ≈ 5 and 13 SMT cores"; Fig. 3: "for the first ≈ 4 days the HVM is very stable".
HVM_PAPER = {
    "within_1min": 0.16,
    "within_10min": 0.40,
    "within_1h": 0.84,
    "mean_gap_min": (26.0, 224.0),
    "p95_gap_h": (1.2, 11.2),
    "stable50_rate_h": 1.0,  # at most: the median HVM's changes per hour
    "worst10_peak_hour": 10.0,  # at least ("tens"): the worst 10 % HVMs' busiest hour
    "change_cores": (5.0, 13.0),
}


def harvest_regime_trace(
    machines: int,
    horizon_s: float,
    max_cores: int = 48,
    min_cores: int = 2,
    calm_days: float = 4.0,
    burst_hours: float = 59.0,
    calm_gap_h: float = 2.8,
    burst_gap_min: float = 27.0,
    clump_prob: float = 0.10,
    clump_gap_s: float = 15.0,
    node_spread: float = 0.75,
    mean_change_cores: float = 9.0,
    p_shrink_after_growth: float = 0.6,
    p_shrink_after_shrink: float = 0.4,
    eviction_prob: float = 0.02,
    seed: int = 0,
) -> MachineCapacityTrace:
    """Harvest-VM cores per machine with independent axes (paper 002 §2.1, Figs. 1–3):

    * **regimes** (time, Fig. 3): every HVM alternates calm periods (exponential, mean ``calm_days``) and
      bursts (exponential, mean ``burst_hours``), starting in either with its long-run share. The gap to
      the next change is exponential with mean ``calm_gap_h`` in a calm period and ``burst_gap_min`` in a
      burst; a gap that runs past its period's end is cut there and drawn again in the next period.
    * **clumps**: with ``clump_prob`` a change is followed by another after an exponential gap of mean
      ``clump_gap_s`` (several regular VMs placed or removed together; §2.1's 16 % of C2's gaps "within 1
      minute"), in either regime.
    * **per-node diversity** (space, Fig. 2): HVM ``m`` runs its regime gaps ``a_m`` times faster, ``a_m``
      log-normal with mean 1 and log-sd ``node_spread`` (a separate seeded stream). The change rate is
      linear in ``a_m``, so the pooled expected rate does not move with the spread: ``node_spread`` says
      "more diverse" without "more active" (0 = identical HVMs).
    * **change sizes** (Fig. 1a): 1 + geometric cores of mean ``mean_change_cores``, clipped to
      ``[min_cores, max_cores]``; grow/shrink by the bigram chain of :func:`harvest_trace`, evictions to 0
      with ``eviction_prob`` per shrink (back at ``min_cores`` at the next change).

    Each HVM starts at a uniform core count in ``[min_cores, max_cores]``. The defaults are a fit to
    :data:`HVM_PAPER` (``python -m studies.slacksched.calibrate``), never to a scheduler's result. ValueError
    naming the parameter if one is out of range."""
    positive = (("calm_days", calm_days), ("burst_hours", burst_hours), ("calm_gap_h", calm_gap_h),
                ("burst_gap_min", burst_gap_min), ("clump_gap_s", clump_gap_s),
                ("mean_change_cores", mean_change_cores))  # fmt: skip
    for name, v in positive:
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"harvest_regime_trace: {name} must be finite and > 0 (got {v:g})")
    if not (np.isfinite(node_spread) and 0 <= node_spread <= 5):
        raise ValueError(f"harvest_regime_trace: node_spread must be in [0, 5] (got {node_spread:g})")
    if not 0 <= clump_prob < 1:
        raise ValueError(f"harvest_regime_trace: clump_prob must be in [0, 1) (got {clump_prob:g})")
    if not 1 <= min_cores < max_cores:
        raise ValueError(
            f"harvest_regime_trace: need 1 ≤ min_cores < max_cores (got {min_cores}, {max_cores})"
        )
    calm_s, burst_s = calm_days * 86400.0, burst_hours * HOUR
    calm_gap, burst_gap = calm_gap_h * HOUR, burst_gap_min * 60.0
    rate = (calm_s / calm_gap + burst_s / burst_gap) / (calm_s + burst_s) / (1.0 - clump_prob)
    _periods("harvest_regime_trace", horizon_s * machines, 1.0 / rate)
    rng = np.random.default_rng(seed)
    act = np.random.default_rng([seed, 1]).lognormal(-(node_spread**2) / 2, node_spread, machines)
    p_geo = 1.0 / max(mean_change_cores, 1.0)
    ts: list[float] = []
    ms: list[int] = []
    cs: list[int] = []
    for m in range(machines):
        a = float(act[m])
        cur = int(rng.integers(min_cores, max_cores + 1))
        ts.append(0.0)
        ms.append(m)
        cs.append(cur)
        burst = bool(rng.random() < burst_s / (calm_s + burst_s))
        end = float(rng.exponential(burst_s if burst else calm_s))
        t = 0.0
        clump = False
        last_shrink = bool(rng.random() < 0.5)
        while True:
            if clump:
                t += float(rng.exponential(clump_gap_s))
            else:
                gap = float(rng.exponential(burst_gap if burst else calm_gap)) / a
                if t + gap >= end:  # the period ends first: draw again in the next one
                    t, burst = end, not burst
                    end = t + float(rng.exponential(burst_s if burst else calm_s))
                    if t >= horizon_s:
                        break
                    continue
                t += gap
            if t >= horizon_s:
                break
            clump = bool(rng.random() < clump_prob)
            cur, last_shrink = _change_cores(
                rng,
                cur,
                last_shrink,
                lambda: int(rng.geometric(p_geo)),
                (min_cores, max_cores),
                (p_shrink_after_growth, p_shrink_after_shrink, eviction_prob),
            )
            ts.append(t)
            ms.append(m)
            cs.append(cur)
    return MachineCapacityTrace(
        np.array(ts),
        np.array(ms),
        np.array(cs, dtype=float),
        machines,
        horizon_s,
        "harvest_regimes",
        {
            "max_cores": max_cores,
            "min_cores": min_cores,
            "calm_days": calm_days,
            "burst_hours": burst_hours,
            "calm_gap_h": calm_gap_h,
            "burst_gap_min": burst_gap_min,
            "clump_prob": clump_prob,
            "clump_gap_s": clump_gap_s,
            "node_spread": node_spread,
            "mean_change_cores": mean_change_cores,
            "p_shrink_after_growth": p_shrink_after_growth,
            "p_shrink_after_shrink": p_shrink_after_shrink,
            "eviction_prob": eviction_prob,
        },
        seed,
    )


def harvest_statistics(tr: MachineCapacityTrace) -> dict[str, float]:
    """Paper 002 §2.1's statistics of a per-machine trace (the keys of :data:`HVM_PAPER`): the shares of
    inter-change times within 1 min / 10 min / 1 h, their mean (min) and 95th percentile (h) (gaps between
    consecutive changes of one HVM; its initial size is no change); Fig. 2's per-HVM stability read per
    HVM (§2.1: "the worst 10 % HVMs can witness tens of changes in an hour while the relatively stable
    50 % HVMs witness up to one change in an hour"): the median HVM's changes per hour
    (``stable50_rate_h``) and the mean busiest whole hour of the 10 % HVMs with the most changes
    (``worst10_peak_hour``); the same per HVM-hour window, Fig. 2's unit, for reference (``window_p50``,
    ``worst10_window_mean``: the median and the mean of the worst 10 % windows); the mean magnitude of a
    change in cores (evictions and returns included, §2.1 counts an eviction as a change to 0), the rate in
    changes per HVM-hour and the mean HVM cores (time-weighted). ValueError if the trace has fewer than two
    inter-change times."""
    t, m, c = tr.time_s, tr.machine, tr.cores
    order = np.lexsort((t, m))
    t, m, c = t[order], m[order], c[order]
    same = m[1:] == m[:-1]
    first = np.ones(t.size, bool)
    first[1:] = ~same
    gaps = np.diff(t)[same]
    if gaps.size < 2:
        raise ValueError("harvest_statistics: the trace has fewer than two inter-change times")
    sizes = np.abs(np.diff(c))[same]
    hours = int(tr.horizon_s // HOUR)
    ch = ~first & (t < hours * HOUR)
    win = np.bincount((m[ch] * hours + (t[ch] // HOUR).astype(np.int64)), minlength=tr.machines * hours)
    worst = np.sort(win)[-max(1, win.size // 10) :]
    per_hvm = win.reshape(tr.machines, hours) if hours else np.zeros((tr.machines, 1), np.int64)
    busy = np.argsort(per_hvm.sum(axis=1), kind="stable")[-max(1, tr.machines // 10) :]
    # time-weighted cores: each row holds until the machine's next row (or the horizon)
    nxt = np.append(t[1:], tr.horizon_s)
    nxt[np.flatnonzero(~np.append(same, False))] = tr.horizon_s
    held = np.clip(nxt - t, 0.0, None)
    return {
        "within_1min": float(np.mean(gaps <= 60.0)),
        "within_10min": float(np.mean(gaps <= 600.0)),
        "within_1h": float(np.mean(gaps <= HOUR)),
        "mean_gap_min": float(gaps.mean() / 60.0),
        "p95_gap_h": float(np.percentile(gaps, 95) / HOUR),
        "stable50_rate_h": float(np.median(per_hvm.mean(axis=1))),
        "worst10_peak_hour": float(per_hvm[busy].max(axis=1).mean()),
        "window_p50": float(np.median(win)),
        "worst10_window_mean": float(worst.mean()),
        "change_cores": float(sizes.mean()),
        "changes_per_hvm_hour": float(ch.sum() / max(tr.machines * hours, 1)),
        "mean_cores": float((c * held).sum() / max(held.sum(), 1e-9)),
    }
