"""Compiled schedule passes of the harvest-VM loop (:mod:`sim.harvest`): numba versions of placements that
ask the same question of many queued jobs (waiting SlackSched's eq. 2 costs, the per-machine Oracle's
look-ahead, SlackSched-NoDelay's choice). Imported on first use, so importing a policy does not import
numba; each function makes exactly the choices of its Python placement (``tests/test_slacksched.py``)."""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.engine._jit import compiled

_qt_first_le = compiled()["_qt_first_le"]


@njit(cache=True)
def _eq1(xs, cum, e, d, ps_m):
    """Eq. 1 for a node of elapsed time ``e`` and a job of duration ``d``: completion probability ``p`` and
    expected waste ``w`` (``d/2`` if no sample falls in ``(e, e + d]``), from sorted samples ``xs`` (non-empty)
    and their prefix sums ``cum``; :func:`sim.policies.slacksched.completion_probability` and
    :func:`~sim.policies.slacksched.expected_waste`'s arithmetic, in the same order."""
    n = xs.size
    lo = np.searchsorted(xs, e, side="right")
    hi = np.searchsorted(xs, e + d, side="right")
    se = (n - lo) / n
    sed = (n - hi) / n
    change = 1.0 - sed / se if se > 0 else 0.0
    p = 1.0 - ps_m * change
    w = (cum[hi] - cum[lo]) / max(hi - lo, 1) - e if hi > lo else d / 2.0
    return p, w


@njit(cache=True)
def most_likely_to_complete(free, c, d, elapsed, p_shrink, xs, cum):
    """``slacksched-nodelay``'s choice, compiled: the node with room (``free ≥ c``) whose eq. 1 completion
    probability is highest (first on ties), −1 if none has room; the same arithmetic as
    :func:`sim.policies.slacksched.completion_probability`, so the same node."""
    best, best_p = -1, -np.inf
    for m in range(free.size):
        if free[m] < c or free[m] < 0:
            continue
        if xs.size == 0:
            return m
        p, _ = _eq1(xs, cum, elapsed[m], d, p_shrink[m])
        if p > best_p:
            best, best_p = m, p
    return best


@njit(cache=True)
def _node_cost(a, d, e, ps_m, e0, xs, cum, modelled):
    """Eq. 2 for one node (finite waiting ``a``, elapsed ``e``): :func:`expected_completion`'s arithmetic."""
    if not modelled:
        return a + d
    pc, w = _eq1(xs, cum, e + a, d, ps_m)
    return a + pc * d + (1.0 - pc) * (w + e0)


@njit(cache=True)
def cost_scan(
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
    """Waiting ``slacksched``'s schedule pass, compiled: from queue position ``p`` on (jobs needing
    ≤ ``top`` cores), the first job whose smallest-``E`` node has room now, as ``(position, node)``;
    ``(-1, -1)`` if every such job waits. Per job the arithmetic, in the same order, of
    :func:`sim.policies.slacksched.expected_completion` with ``a`` from :meth:`sim.harvest.Cluster.next_avail`
    (``ends``/``freed``: per-node sorted planned ends and the cores they free, cumulated, in CSR layout
    ``ptr``), so the choices of the Python placement."""
    while True:
        p = _qt_first_le(tree, size, p, top)
        if p < 0:
            return -1, -1
        j = qjob[p]
        c, d = cores[j], duration[j]
        # E₀ of a fresh node (depends on d only)
        p0, w0 = _eq1(xs, cum, 0.0, d, ps_grow) if modelled else (1.0, d / 2.0)
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


@njit(cache=True)
def oracle_scan(tree, size, p, top, qjob, cores, duration, free, used, cap, fut_ptr, fut_t, fut_c, t):
    """:func:`sim.harvest.place_oracle` over the queue from position ``p`` (jobs needing ≤ ``top`` cores),
    compiled: the first job with a node, as ``(position, node)``, or ``(-1, -1)``; the same test in the
    same order."""
    while True:
        p = _qt_first_le(tree, size, p, top)
        if p < 0:
            return -1, -1
        j = qjob[p]
        c, d = cores[j], duration[j]
        for m in range(free.size):
            if not free[m] >= c:
                continue
            lo, hi = fut_ptr[m], fut_ptr[m + 1]
            a = lo + np.searchsorted(fut_t[lo:hi], t, side="left")
            b = lo + np.searchsorted(fut_t[lo:hi], t + d, side="left")
            low = cap[m]
            for i in range(a, b):
                if fut_c[i] < low:
                    low = fut_c[i]
            if low >= used[m] + c - 1e-9:
                return p, m
        p += 1
