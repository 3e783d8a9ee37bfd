"""Seed 002's SlackSched scheduler: ``slacksched`` (with delayed scheduling) and ``slacksched-nodelay``.

Runs in the harvest-VM loop (:mod:`sim.harvest`) on per-machine capacity; a machines-alive trace is viewed
per machine (machine i has its cores while i < alive, so a LIFO turn-off is a shrink to 0).

* **Completion probability** (eq. 1): ``P_c(x, e, d) = 1 − P_s(x) · (1 − S(e + d) / S(e))`` where ``S`` is
  the empirical survival function of the inter-change times observed on allocated nodes in the last
  ``window_h`` hours (rolling), ``e`` the time since the node's last change (or allocation), ``d`` the job's
  duration and ``P_s(x)`` the bigram probability that the next change is a shrink given the last change's
  direction (all history, Laplace prior). Choices: with fewer than ``min_samples`` inter-change times in
  the window there is no model yet and ``P_c = 1``; a node older than every sample (``S(e) = 0``) is
  treated as one that will not change during the job.
* **Worst-case expected completion time** (eq. 2): ``E = a + p·d + (1 − p)·(w + E₀)``, with ``a`` the time
  until the node has the job's cores if its running jobs end as planned and its size holds (``inf`` if the
  node is smaller than the job), ``e' = e + a``, ``p = P_c(x, e', d)``, ``w = E[X − e' | e' < X ≤ e' + d]``
  (empirical; ``d/2`` if no sample falls there) and ``E₀ = E_wc(g, 0, 0, d)``. Eq. 2 defines ``E₀``
  recursively (a restart lands on a fresh node); we use the recursion's fixed point
  ``E₀ = d + w₀ (1 − p₀) / p₀`` (``p₀`` floored at 1e-9 so costs stay finite and comparable).
* ``slacksched``: the job goes to the node with the smallest ``E`` (ties: lower index) if that node has room
  now; otherwise it waits and the choice is recomputed at the next instant (Algorithm 1; non-work-
  conserving). ``slacksched-nodelay``: among nodes with room now, the highest ``P_c`` (ties: lower index).
* Options of the loop: ``nodes`` (cluster size out of the trace's pool; 0 = all) and ``acquirer``
  (Algorithm 2 every ``acquirer_period_h`` hours, releasing ``acquirer_fraction`` of the nodes).
Not modelled: the heartbeat variant (Algorithm 3) and runtime misestimates (durations are exact).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from sim.engine import _qt_first_le
from sim.harvest import GROW, INF, Cluster, ClusterOptions
from sim.policies import Dispatched, register
from sim.problem import Problem


@dataclass(frozen=True)
class SlackSchedParams(ClusterOptions):
    window_h: float = 24.0
    min_samples: int = 30


def _survival(xs: np.ndarray, t: np.ndarray) -> np.ndarray:
    return (xs.size - np.searchsorted(xs, t, side="right")) / xs.size


def completion_probability(xs: np.ndarray, p_shrink: np.ndarray, e: np.ndarray, d: float) -> np.ndarray:
    """Eq. 1 for nodes with elapsed times ``e`` given sorted inter-change samples ``xs``."""
    se, sed = _survival(xs, e), _survival(xs, e + d)
    change = np.where(se > 0, 1.0 - sed / np.where(se > 0, se, 1.0), 0.0)
    return 1.0 - p_shrink * change


def expected_waste(xs: np.ndarray, cum: np.ndarray, e: np.ndarray, d: float) -> np.ndarray:
    """``E[X − e | e < X ≤ e + d]`` from sorted samples and their prefix sums (``d/2`` where none)."""
    lo = np.searchsorted(xs, e, side="right")
    hi = np.searchsorted(xs, e + d, side="right")
    cnt = hi - lo
    return np.where(cnt > 0, (cum[hi] - cum[lo]) / np.maximum(cnt, 1) - e, d / 2.0)


def expected_completion(
    xs: np.ndarray, cum: np.ndarray, ps: np.ndarray, ps_grow: float, a: np.ndarray, e: np.ndarray, d: float
) -> np.ndarray:
    """Eq. 2 per node: waiting ``a``, elapsed ``e``, shrink probabilities ``ps``; ``inf`` where ``a`` is."""
    fin = np.isfinite(a)
    e2 = e + np.where(fin, a, 0.0)
    p = completion_probability(xs, ps, e2, d)
    w = expected_waste(xs, cum, e2, d)
    p0 = float(completion_probability(xs, np.array([ps_grow]), np.array([0.0]), d)[0])
    w0 = float(expected_waste(xs, cum, np.array([0.0]), d)[0])
    e0 = d + w0 * (1.0 - p0) / max(p0, 1e-9)  # finite even if a fresh node never completes the job
    return np.where(fin, np.where(fin, a, 0.0) + p * d + (1.0 - p) * (w + e0), INF)


@njit(cache=True)
def _survival_at(xs, x):
    return (xs.size - np.searchsorted(xs, x, side="right")) / xs.size


@njit(cache=True)
def most_likely_to_complete(free, c, d, elapsed, p_shrink, xs):
    """``slacksched-nodelay``'s choice, compiled: the node with room (``free ≥ c``) whose eq. 1 completion
    probability is highest (first on ties), −1 if none has room; the same arithmetic as
    :func:`completion_probability`, so the same node."""
    best, best_p = -1, -np.inf
    for m in range(free.size):
        if free[m] < c or free[m] < 0:
            continue
        if xs.size == 0:
            return m
        se = _survival_at(xs, elapsed[m])
        sed = _survival_at(xs, elapsed[m] + d)
        change = 1.0 - sed / se if se > 0 else 0.0
        p = 1.0 - p_shrink[m] * change
        if p > best_p:
            best, best_p = m, p
    return best


@njit(cache=True)
def _node_cost(a, d, e, ps_m, e0, xs, cum, modelled):
    """Eq. 2 for one node (finite waiting ``a``, elapsed ``e``): :func:`expected_completion`'s arithmetic."""
    if not modelled:
        return a + d
    n = xs.size
    e2 = e + a
    lo = np.searchsorted(xs, e2, side="right")
    hi = np.searchsorted(xs, e2 + d, side="right")
    se = (n - lo) / n
    sed = (n - hi) / n
    change = 1.0 - sed / se if se > 0 else 0.0
    pc = 1.0 - ps_m * change
    w = (cum[hi] - cum[lo]) / max(hi - lo, 1) - e2 if hi > lo else d / 2.0
    return a + pc * d + (1.0 - pc) * (w + e0)


@njit(cache=True)
def _cost_scan(
    tree,
    size,
    p,
    top,
    qjob,
    cores,
    duration,
    free,
    cap,
    elapsed,
    ps,
    ps_grow,
    xs,
    cum,
    modelled,
    ends,
    freed,
    ptr,
    t,
):
    """Waiting ``slacksched``'s schedule pass, compiled: from queue position ``p`` on (jobs needing ≤ ``top``
    cores), the first job whose smallest-``E`` node has room now, as ``(position, node)``; ``(-1, -1)`` if
    every such job waits. Per job the same arithmetic, in the same order, as :func:`expected_completion` with
    ``a`` from :meth:`Cluster.next_avail` (``ends``/``freed``: per-node sorted planned ends and the cores
    they free, cumulated, in CSR layout ``ptr``), so the same choices as the Python placement."""
    n = xs.size
    while True:
        p = _qt_first_le(tree, size, p, top)
        if p < 0:
            return -1, -1
        j = qjob[p]
        c, d = cores[j], duration[j]
        # E₀ of a fresh node (depends on d only)
        p0 = 1.0
        w0 = d / 2.0
        if modelled:
            lo0 = np.searchsorted(xs, 0.0, side="right")
            hi0 = np.searchsorted(xs, d, side="right")
            se0 = (n - lo0) / n
            sed0 = (n - hi0) / n
            ch0 = 1.0 - sed0 / se0 if se0 > 0 else 0.0
            p0 = 1.0 - ps_grow * ch0
            if hi0 > lo0:
                w0 = (cum[hi0] - cum[lo0]) / max(hi0 - lo0, 1) - 0.0
        e0 = d + w0 * (1.0 - p0) / max(p0, 1e-9)
        # the best node with room now (first smallest E); none: the job waits
        best, best_cost = -1, np.inf
        for m in range(free.size):
            if free[m] >= c:  # ≥ c ≥ 0: takes jobs and has room
                cost = _node_cost(0.0, d, elapsed[m], ps[m], e0, xs, cum, modelled)
                if best < 0 or cost < best_cost:
                    best, best_cost = m, cost
        if best < 0:
            p += 1
            continue
        # a node without room now beats it (or ties it at a lower index, as argmin would): wait. E ≥ a + d
        # (p ∈ [0, 1], w + E₀ ≥ d), so a node whose a + d exceeds the best E cannot; only the others are costed
        waits = False
        for m in range(free.size):
            if free[m] < 0 or free[m] >= c or cap[m] < c:
                continue
            k = np.searchsorted(freed[ptr[m] : ptr[m + 1]], c - free[m] - 1e-9, side="left")
            if k >= ptr[m + 1] - ptr[m]:
                continue  # never has room at its current size: E = inf
            a = ends[ptr[m] + k] - t
            if (a + d) * (1.0 - 1e-9) > best_cost:
                continue
            cost = _node_cost(a, d, elapsed[m], ps[m], e0, xs, cum, modelled)
            if cost < best_cost or (cost == best_cost and m < best):
                waits = True
                break
        if not waits:
            return p, best
        p += 1


class SlackSched(Dispatched):
    Params = SlackSchedParams

    def __init__(self, name: str, delay: bool) -> None:
        self.name, self.delay = name, delay

    def placement(self, params: SlackSchedParams):
        def place(cl: Cluster, j: int, t: float) -> int:
            c, d = float(cl.cores[j]), float(cl.duration[j])
            free = cl.free()
            nodes = np.flatnonzero(free >= 0)
            if nodes.size == 0 or free[nodes].max() < c:
                return -1  # no node could take it now, whatever the model says
            xs, cum = cl.history.sorted_samples(t)
            modelled = xs.size >= params.min_samples
            if not self.delay:
                if not modelled:
                    return int(nodes[np.argmax(free[nodes] >= c)])
                ps = cl.history.p_shrink(cl.last_dir)
                return int(most_likely_to_complete(free, c, d, t - cl.last_change, ps, xs))
            a = np.where(free[nodes] >= c, 0.0, INF)
            for k in np.flatnonzero((free[nodes] < c) & (cl.cap[nodes] >= c)):
                a[k] = cl.next_avail(int(nodes[k]), c, t)
            if not modelled:
                cost = np.where(np.isfinite(a), a + d, INF)
            else:
                ps = cl.history.p_shrink(cl.last_dir[nodes])
                ps_grow = float(cl.history.p_shrink(np.array([GROW]))[0])
                cost = expected_completion(xs, cum, ps, ps_grow, a, t - cl.last_change[nodes], d)
            k = int(np.argmin(cost))
            return int(nodes[k]) if a[k] == 0.0 else -1

        return place

    def scan(self, params: SlackSchedParams):
        """The waiting variant's compiled pass (:func:`_cost_scan`); ``None`` for NoDelay."""
        if not self.delay:
            return None

        def scan(cl: Cluster, t: float, p: int, top: float) -> tuple[int, int]:
            xs, cum = cl.history.sorted_samples(t)
            ps = cl.history.p_shrink(cl.last_dir)
            ps_grow = float(cl.history.p_shrink(np.array([GROW]))[0])
            ends, freed, ptr = cl.ends_csr()
            modelled = xs.size >= params.min_samples and xs.size > 0
            return _cost_scan(
                cl._qtree,
                cl._qsize,
                p,
                top,
                cl._qjob,
                cl.cores,
                cl.duration,
                cl.free(),
                cl.cap,
                t - cl.last_change,
                ps,
                ps_grow,
                xs,
                cum,
                modelled,
                ends,
                freed,
                ptr,
                t,
            )

        return scan

    def declare(self, problem: Problem, params: SlackSchedParams, seed: int) -> Cluster:
        return Cluster(
            problem,
            params.cluster(),
            seed,
            self.placement(params),
            params.window_h * 3600.0,
            scan=self.scan(params),
        )


register(SlackSched("slacksched", delay=True))
register(SlackSched("slacksched-nodelay", delay=False))
