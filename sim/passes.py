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
def _avail(m, c, free_m, t, ends, cores, count, claim_end, claim_cores, nclaim):
    """:meth:`sim.harvest.Cluster.next_avail` for a node without room now (``free_m`` < ``c``, claims
    deducted) and large enough: its running jobs' ends and this pass's claims merged by end (running
    first on ties), cores cumulated in that order until ``c`` are free; ``inf`` if never."""
    need = c - free_m - 1e-9
    i, k, n, nc = 0, 0, count[m], nclaim[m]
    acc = 0.0
    while i < n or k < nc:
        if k >= nc or (i < n and ends[m, i] <= claim_end[m, k]):
            acc += cores[m, i]
            e = ends[m, i]
            i += 1
        else:
            acc += claim_cores[m, k]
            e = claim_end[m, k]
            k += 1
        if acc >= need:
            return e - t
    return np.inf


@njit(cache=True)
def _top_free(free, claimed, reserve):
    top = -np.inf
    for m in range(free.size):
        room = free[m] - claimed[m] if reserve else free[m]
        if free[m] >= 0 and room > top:
            top = room
    return top


@njit(cache=True)
def _best_node(
    c, d, free, cap, elapsed, ps, ps_grow, xs, cum, modelled, ends, run_cores, count, claimed, claim_end,
    claim_cores, nclaim, reserve, t,
):  # fmt: skip
    """MatchMaker (Algorithm 1) for a job of ``c`` cores and duration ``d``: the node of smallest eq. 2 cost
    (first on ties), that cost and its wait ``a`` (0: room now, less this pass's claims if ``reserve``;
    else claims only delay ``a``); ``(-1, inf, 0)`` if no node ever has room."""
    # E₀ of a fresh node (depends on d only)
    p0, w0 = _eq1(xs, cum, 0.0, d, ps_grow) if modelled else (1.0, d / 2.0)
    e0 = d + w0 * (1.0 - p0) / max(p0, 1e-9)
    # the best node with room now (first smallest E)
    best, best_cost, best_a = -1, np.inf, 0.0
    for m in range(free.size):
        if free[m] >= 0 and (free[m] - claimed[m] if reserve else free[m]) >= c:  # takes jobs, has room
            cost = _node_cost(0.0, d, elapsed[m], ps[m], e0, xs, cum, modelled)
            if best < 0 or cost < best_cost:
                best, best_cost = m, cost
    # nodes without room now: E ≥ a + d (p ∈ [0, 1], w + E₀ ≥ d), so a node whose a + d exceeds the best E
    # cannot beat it; only the others are costed. First smallest E overall, as argmin.
    for m in range(free.size):
        if free[m] < 0 or (free[m] - claimed[m] if reserve else free[m]) >= c or cap[m] < c:
            continue
        # a lower bound of a without the walk: the node's first end (running job or claim)
        a0 = np.inf
        if count[m] > 0:
            a0 = ends[m, 0] - t
        if nclaim[m] > 0 and claim_end[m, 0] - t < a0:
            a0 = claim_end[m, 0] - t
        if (a0 + d) * (1.0 - 1e-9) > best_cost:
            continue
        a = _avail(m, c, free[m] - claimed[m], t, ends, run_cores, count, claim_end, claim_cores, nclaim)
        if not np.isfinite(a) or (a + d) * (1.0 - 1e-9) > best_cost:
            continue
        cost = _node_cost(a, d, elapsed[m], ps[m], e0, xs, cum, modelled)
        if best < 0 or cost < best_cost or (cost == best_cost and m < best):
            best, best_cost, best_a = m, cost, a
    return best, best_cost, best_a


@njit(cache=True)
def _node_state(cap, used, accept, last_change, last_dir, ps2, t):
    """Per node: free cores (−1 where it takes no jobs: :meth:`sim.harvest.Cluster.free`), time since its
    last change, and P(next change is a shrink) from the bigram row ``ps2`` of its last direction."""
    n = cap.size
    free, elapsed, ps = np.empty(n), np.empty(n), np.empty(n)
    for m in range(n):
        free[m] = cap[m] - used[m] if accept[m] else -1.0
        elapsed[m] = t - last_change[m]
        ps[m] = ps2[last_dir[m]]
    return free, elapsed, ps


@njit(cache=True)
def cost_scan(
    tree,
    size,
    p,
    qjob,
    cores,
    duration,
    cap,
    used,
    accept,
    last_change,
    last_dir,
    ps2,
    ps_grow,
    xs,
    cum,
    modelled,
    ends,
    run_cores,
    count,
    claimed,
    claim_end,
    claim_cores,
    nclaim,
    reserve,
    t,
):
    """Waiting ``slacksched``'s schedule pass, compiled: from queue position ``p`` on, every queued job in
    order while some job behind could still start (needs at most the most free cores of a node, less the
    claims if ``reserve``), each costed by eq. 2 on every node; the first whose smallest-``E`` node has room now is
    returned as ``(position, node)``; a job whose best node has no room claims its cores there
    (``claimed``/``claim_end``/``claim_cores``/``nclaim``, updated in place); ``(-1, -1)`` when no job
    starts; ``(p, -2)`` if node's claim row is full (the caller grows it and asks again from ``p``). The
    arithmetic, in the same order, of :func:`sim.policies.slacksched.expected_completion` with ``a`` from
    :meth:`sim.harvest.Cluster.next_avail` (``ends``/``run_cores``/``count``: per-node sorted planned ends
    of running jobs and their cores in padded rows), so the choices of the Python placement."""
    free, elapsed, ps = _node_state(cap, used, accept, last_change, last_dir, ps2, t)
    while True:
        if _qt_first_le(tree, size, p, _top_free(free, claimed, reserve)) < 0:
            return -1, -1
        p = _qt_first_le(tree, size, p, 1e300)
        j = qjob[p]
        c, d = cores[j], duration[j]
        best, best_cost, best_a = _best_node(
            c, d, free, cap, elapsed, ps, ps_grow, xs, cum, modelled, ends, run_cores, count, claimed,
            claim_end, claim_cores, nclaim, reserve, t,
        )  # fmt: skip
        if best >= 0 and best_a == 0.0:
            return p, best
        if best >= 0 and np.isfinite(best_cost):
            k = nclaim[best]
            if k == claim_end.shape[1]:
                return p, -2
            end = t + best_a + d
            i = k
            while i > 0 and claim_end[best, i - 1] > end:
                claim_end[best, i] = claim_end[best, i - 1]
                claim_cores[best, i] = claim_cores[best, i - 1]
                i -= 1
            claim_end[best, i] = end
            claim_cores[best, i] = c
            nclaim[best] = k + 1
            claimed[best] += c
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


@njit(cache=True)
def heartbeat_scan(
    dtree, dsize, drank_job, dgroup, qpos, cores, duration, cap, used, accept, last_change, last_dir, ps2,
    ps_grow, xs, cum, modelled, ends, run_cores, count, claimed, claim_end, claim_cores, nclaim, threshold,
    state, pass_no, t,
):  # fmt: skip
    """Algorithm 3's pass, compiled (:class:`sim.policies.slacksched_heartbeat.Heartbeat`'s Python pass, the
    same choices): nodes heartbeat in index order from ``state[1]`` (reset to 0 when ``state[0]`` is not
    ``pass_no``). For node ``m`` the first queued task in ``dtree`` order that fits it (the first job, in
    ``dtree``'s group order, with a task that fits; within it the shortest) starts on ``m`` if its eq. 1
    completion probability there exceeds ``threshold``; else MatchMaker runs for that job's shortest queued
    task (once per job until the next start). Returns the next start as ``(queue position, node)``, or
    ``(-1, -1)``. ``dtree``: min-tree of queued tasks' cores in (group, duration, row) order, ``drank_job``
    its task per leaf, ``dgroup`` the first leaf of each leaf's group."""
    if state[0] != pass_no:
        state[0], state[1] = pass_no, 0
    free, elapsed, ps = _node_state(cap, used, accept, last_change, last_dir, ps2, t)
    mm_group = -1  # the group whose MatchMaker said "wait" in this call
    m = state[1]
    while m < free.size:
        if free[m] >= 0 and dtree[1] <= free[m]:
            r = _qt_first_le(dtree, dsize, 0, free[m])
            j = drank_job[r]
            if modelled:
                pc, _ = _eq1(xs, cum, elapsed[m], duration[j], ps[m])
            else:
                pc = 1.0
            if pc > threshold:
                state[1] = m
                return qpos[j], m
            g = dgroup[r]
            if g != mm_group:
                s = drank_job[_qt_first_le(dtree, dsize, g, 1e300)]
                best, _, best_a = _best_node(
                    cores[s], duration[s], free, cap, elapsed, ps, ps_grow, xs, cum, modelled, ends,
                    run_cores, count, claimed, claim_end, claim_cores, nclaim, False, t,
                )  # fmt: skip
                if best >= 0 and best_a == 0.0:
                    state[1] = m
                    return qpos[s], best
                mm_group = g
        m += 1
    state[1] = m
    return -1, -1
