"""Compiled schedule passes of the harvest-VM loop (:mod:`sim.harvest.cluster`): numba versions of placements that
ask the same question of many queued jobs (waiting SlackSched's eq. 2 costs, the per-machine Oracle's
look-ahead, SlackSched-NoDelay's choice). Imported on first use, so importing a policy does not import
numba; each function makes exactly the choices of its Python placement (``tests/test_slacksched.py``)."""

from __future__ import annotations

import numpy as np

from sim.engine._jit import cached_njit, compiled, uncounted

_qt_first_le = compiled()["_qt_first_le"]


@uncounted
def _eq1_counts(cum, n, lo, hi, e, d, ps_m):
    """Eq. 1's arithmetic from the counts of samples ``≤ e`` (``lo``) and ``≤ e + d`` (``hi``) of ``n``: the one
    body of :func:`_eq1` and :func:`_eq1f`, which differ only in how they count."""
    se = (n - lo) / n
    sed = (n - hi) / n
    change = 1.0 - sed / se if se > 0 else 0.0
    p = 1.0 - ps_m * change
    w = (cum[hi] - cum[lo]) / max(hi - lo, 1) - e if hi > lo else d / 2.0
    return p, w


@uncounted
def _eq1(xs, cum, e, d, ps_m):
    """Eq. 1 for a node of elapsed time ``e`` and a job of duration ``d``: completion probability ``p`` and
    expected waste ``w`` (``d/2`` if no sample falls in ``(e, e + d]``), from sorted samples ``xs`` (non-empty)
    and their prefix sums ``cum``; :func:`sim.policies.slacksched.completion_probability` and
    :func:`~sim.policies.slacksched.expected_waste`'s arithmetic, in the same order."""
    n = xs.size
    lo = np.searchsorted(xs, e, side="right")
    hi = np.searchsorted(xs, e + d, side="right")
    return _eq1_counts(cum, n, lo, hi, e, d, ps_m)


@uncounted(entry=True)
def most_likely_to_complete(free, c, d, elapsed, p_shrink, xs, cum):
    """``slacksched-nodelay``'s choice, compiled: the node with room (``free ≥ c``) whose eq. 1 completion
    probability is highest (first on ties), −1 if none has room; the same arithmetic as
    :func:`sim.policies.slacksched.completion_probability`, so the same node. Eq. 1 is computed once for a
    run of nodes with the same elapsed time and shrink probability (nodes that changed in the same capacity
    batch): a pure function of those, so the same value."""
    best, best_p = -1, -np.inf
    pe, pps, pp = np.nan, np.nan, 0.0  # the last node's (elapsed, shrink probability) and its eq. 1
    for m in range(free.size):
        if free[m] < c or free[m] < 0:
            continue
        if xs.size == 0:
            return m
        if elapsed[m] == pe and p_shrink[m] == pps:  # a run of nodes that changed together: the same p
            p = pp
        else:
            p, _ = _eq1(xs, cum, elapsed[m], d, p_shrink[m])
            pe, pps, pp = elapsed[m], p_shrink[m], p
        if p > best_p:
            best, best_p = m, p
    return best


@uncounted
def node_free(cap, used, accept, m):
    """Node ``m``'s free cores, −1 if it takes no jobs (``accept[m]`` False): ``Cluster.free()[m]``, the one
    definition the compiled passes and loop use."""
    return cap[m] - used[m] if accept[m] else -1.0


@uncounted(entry=True)
def max_free(cap, used, accept):
    """The most free cores of a node, −1 for nodes taking no jobs: ``Cluster.free().max()``, the same value."""
    top = -np.inf
    for m in range(cap.size):
        f = node_free(cap, used, accept, m)
        if f > top:
            top = f
    return top


@cached_njit(entry=True)
def nodelay_scan(tree, size, p, top, qjob, cores, duration, cap, used, accept, last_change, last_dir, ps2, xs, cum,
                 modelled, t):  # fmt: skip
    """``slacksched-nodelay``'s schedule pass, compiled: from queue position ``p`` on, the first queued job
    needing at most ``top`` cores (the caller's most free cores of a node) for which some node taking jobs
    has room now, as ``(position, node)``; ``(-1, -1)`` if none. The node is the first with room if not
    ``modelled``, else :func:`most_likely_to_complete`'s: the choices of
    :meth:`sim.policies.slacksched.SlackSched.placement` asked about the same jobs, with the same
    arithmetic (free cores, elapsed times and shrink probabilities as :func:`_node_state`)."""
    n = cap.size
    return nodelay_scan_into(
        tree, size, p, top, qjob, cores, duration, cap, used, accept, last_change, last_dir, ps2, xs, cum,
        modelled, t, np.empty(n), np.empty(n), np.empty(n),
    )  # fmt: skip


@uncounted
def nodelay_scan_into(tree, size, p, top, qjob, cores, duration, cap, used, accept, last_change, last_dir, ps2,
                      xs, cum, modelled, t, free, elapsed, ps):  # fmt: skip
    """:func:`nodelay_scan` with the per-node state written into the caller's buffers ``free``, ``elapsed``,
    ``ps`` (one node each; :func:`_node_state_into`): the compiled harvest loop's pass, allocating nothing."""
    _node_state_into(cap, used, accept, last_change, last_dir, ps2, t, free, elapsed, ps)
    mx, any_node = -np.inf, False  # the most free cores of a node taking jobs
    for m in range(free.size):
        if free[m] >= 0:
            any_node = True
            if free[m] > mx:
                mx = free[m]
    p = _qt_first_le(tree, size, p, top)
    while p >= 0:
        j = qjob[p]
        c = cores[j]
        if any_node and not mx < c:
            if not modelled:
                for m in range(free.size):
                    if free[m] >= 0 and free[m] >= c:
                        return p, m
            return p, most_likely_to_complete(free, c, duration[j], elapsed, ps, xs, cum)
        p = _qt_first_le(tree, size, p + 1, top)
    return -1, -1


@uncounted
def _node_cost(a, d, e, ps_m, e0, xs, cum, modelled):
    """Eq. 2 for one node (finite waiting ``a``, elapsed ``e``): :func:`expected_completion`'s arithmetic."""
    if not modelled:
        return a + d
    pc, w = _eq1(xs, cum, e + a, d, ps_m)
    return a + pc * d + (1.0 - pc) * (w + e0)


@uncounted
def _avail(m, c, free_m, t, ends, cores, count, claim_end, claim_cores, nclaim):
    """:meth:`sim.harvest.cluster.Cluster.next_avail` for a node without room now (``free_m`` < ``c``, claims
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


@uncounted
def _top_free(free, claimed, reserve):
    top = -np.inf
    for m in range(free.size):
        room = free[m] - claimed[m] if reserve else free[m]
        if free[m] >= 0 and room > top:
            top = room
    return top


@uncounted
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
    pe, pps, pcost = np.nan, np.nan, 0.0  # the last costed node's (elapsed, shrink probability) and cost
    for m in range(free.size):
        if free[m] >= 0 and (free[m] - claimed[m] if reserve else free[m]) >= c:  # takes jobs, has room
            if elapsed[m] == pe and ps[m] == pps:  # a run of nodes that changed together: the same cost
                cost = pcost
            else:
                cost = _node_cost(0.0, d, elapsed[m], ps[m], e0, xs, cum, modelled)
                pe, pps, pcost = elapsed[m], ps[m], cost
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


@cached_njit
def _node_state(cap, used, accept, last_change, last_dir, ps2, t):
    """Per node: free cores (−1 where it takes no jobs: :meth:`sim.harvest.cluster.Cluster.free`), time since its
    last change, and P(next change is a shrink) from the bigram row ``ps2`` of its last direction."""
    n = cap.size
    free, elapsed, ps = np.empty(n), np.empty(n), np.empty(n)
    _node_state_into(cap, used, accept, last_change, last_dir, ps2, t, free, elapsed, ps)
    return free, elapsed, ps


@uncounted
def _node_state_into(cap, used, accept, last_change, last_dir, ps2, t, free, elapsed, ps):
    """:func:`_node_state` written into the caller's buffers (one entry per node)."""
    for m in range(cap.size):
        free[m] = node_free(cap, used, accept, m)
        elapsed[m] = t - last_change[m]
        ps[m] = ps2[last_dir[m]]


@uncounted
def _add_claim(
    claim_end: np.ndarray,
    claim_cores: np.ndarray,
    nclaim: np.ndarray,
    claimed: np.ndarray,
    node: int,
    end: float,
    c: float,
) -> bool:
    """Record a waiting task's claim of ``c`` cores on ``node`` until ``end`` (claims kept sorted by end);
    False, recording nothing, when the node's claim table is full."""  # fmt: skip
    k = nclaim[node]
    if k == claim_end.shape[1]:
        return False
    i = k
    while i > 0 and claim_end[node, i - 1] > end:
        claim_end[node, i] = claim_end[node, i - 1]
        claim_cores[node, i] = claim_cores[node, i - 1]
        i -= 1
    claim_end[node, i] = end
    claim_cores[node, i] = c
    nclaim[node] = k + 1
    claimed[node] += c
    return True


@cached_njit(entry=True)
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
    :meth:`sim.harvest.cluster.Cluster.next_avail` (``ends``/``run_cores``/``count``: per-node sorted planned ends
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
            end = t + best_a + d
            if not _add_claim(claim_end, claim_cores, nclaim, claimed, best, end, c):
                return p, -2
        p += 1


@uncounted(entry=True)
def oracle_scan(tree, size, p, top, qjob, cores, duration, free, used, cap, fut_ptr, fut_t, fut_c, t):
    """:func:`sim.harvest.cluster.place_oracle` over the queue from position ``p`` (jobs needing ≤ ``top`` cores),
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


# ---------------------------------------------------------------------- fast waiting pass
# Same choices as :func:`cost_scan` (``tests/test_slacksched_fast.py`` holds it to it and to the Python
# placement), found with less work: eq. 1's two counts come from a bucket index over the sorted samples
# instead of two binary searches over all of them, and the nodes without room are visited in order of a
# lower bound of their wait, so the search stops at the first whose bound exceeds the best cost so far.


@uncounted
def _bucket(x, x0, inv_h, nb):
    """Bucket of ``x`` (monotone non-decreasing in ``x``, clipped to ``[0, nb − 1]``)."""
    v = (x - x0) * inv_h
    if not v > 0.0:
        return 0
    if v >= nb - 1:
        return nb - 1
    return int(v)


@cached_njit(entry=True)
def search_table(xs):
    """Bucket index of sorted ``xs``: ``(start, x0, inv_h)`` with ``start[k]`` the first sample whose
    bucket is ≥ ``k`` (``start[nb] = n``). Every sample before ``start[bucket(x)]`` is < ``x`` and every one
    from ``start[bucket(x) + 1]`` on is > ``x`` (the bucket is monotone in ``x``), so
    :func:`count_le` equals ``np.searchsorted(xs, x, side="right")`` exactly."""
    n = xs.size
    nb = max(n, 1)
    x0 = xs[0] if n else 0.0
    span = xs[n - 1] - x0 if n else 0.0
    inv_h = nb / span if span > 0.0 else 0.0
    start = np.empty(nb + 1, np.int64)
    k = 0
    for i in range(n):
        b = _bucket(xs[i], x0, inv_h, nb)
        while k <= b:
            start[k] = i
            k += 1
    while k <= nb:
        start[k] = n
        k += 1
    return start, x0, inv_h


@uncounted
def count_le(xs, x, start, x0, inv_h):
    """``np.searchsorted(xs, x, side="right")`` through the bucket index of :func:`search_table`."""
    b = _bucket(x, x0, inv_h, start.size - 1)
    lo, hi = start[b], start[b + 1]
    while hi - lo > 8:
        mid = (lo + hi) >> 1
        if xs[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    while lo < hi and xs[lo] <= x:
        lo += 1
    return lo


@uncounted
def _eq1f(xs, cum, e, d, ps_m, start, x0, inv_h):
    """:func:`_eq1` with the counts from the bucket index: the same values, the same arithmetic."""
    n = xs.size
    lo = count_le(xs, e, start, x0, inv_h)
    hi = count_le(xs, e + d, start, x0, inv_h)
    return _eq1_counts(cum, n, lo, hi, e, d, ps_m)


@uncounted
def _node_cost_f(a, d, e, ps_m, e0, xs, cum, modelled, start, x0, inv_h):
    """:func:`_node_cost` through :func:`_eq1f`."""
    if not modelled:
        return a + d
    lo = count_le(xs, e + a, start, x0, inv_h)
    return _node_cost_lo(a, d, e + a, ps_m, e0, xs, cum, lo, start, x0, inv_h)


@uncounted
def _node_cost_lo(a, d, ea, ps_m, e0, xs, cum, lo, start, x0, inv_h):
    """:func:`_node_cost_f` (modelled) at ``ea = e + a`` given eq. 1's first count ``lo`` (samples
    ``≤ ea``): :func:`_eq1f`'s second count and arithmetic, the same values."""
    hi = count_le(xs, ea + d, start, x0, inv_h)
    pc, w = _eq1_counts(cum, xs.size, lo, hi, ea, d, ps_m)
    return a + pc * d + (1.0 - pc) * (w + e0)


@uncounted
def _merge_row(m, ends, run_cores, count, claim_end, claim_cores, nclaim, mend, macc, mlen):
    """Node ``m``'s running ends and claims merged by end (running first on ties) into ``mend[m]``, the
    cores cumulated in that order into ``macc[m]``: the sequence and the sums of :func:`_avail`'s walk."""
    i, k, n, nc = 0, 0, count[m], nclaim[m]
    acc = 0.0
    r = 0
    while i < n or k < nc:
        if k >= nc or (i < n and ends[m, i] <= claim_end[m, k]):
            acc += run_cores[m, i]
            mend[m, r] = ends[m, i]
            i += 1
        else:
            acc += claim_cores[m, k]
            mend[m, r] = claim_end[m, k]
            k += 1
        macc[m, r] = acc
        r += 1
    mlen[m] = r


@uncounted
def _merged_avail(m, c, free_m, t, mend, macc, mlen):
    """:func:`_avail` from the merged row: the first end whose cumulated cores reach ``c − free_m − 1e-9``
    (the cumulated cores never decrease), ``inf`` if none."""
    need = c - free_m - 1e-9
    lo, hi = 0, mlen[m]
    while lo < hi:
        mid = (lo + hi) >> 1
        if macc[m, mid] >= need:
            hi = mid
        else:
            lo = mid + 1
    if lo == mlen[m]:
        return np.inf
    return mend[m, lo] - t


@uncounted
def _slot(cvals, nused, c):
    """The column of the per-call tables (:func:`new_node_tables`) that holds jobs of ``c`` cores: the
    column of ``c`` if seen, else a new one; −1 once every column is taken (the caller then computes)."""
    k = nused[0]
    for i in range(k):
        if cvals[i] == c:
            return i
    if k < cvals.size:
        cvals[k] = c
        nused[0] = k + 1
        return k
    return -1


NODE_TABLE_COLUMNS = 16  # distinct core counts a pass remembers waits for (the harvest jobs have 8)


@cached_njit
def new_node_tables(m):
    """Empty per-call tables of :func:`_best_node_fast` for ``m`` nodes: per node and core count, the wait
    ``a`` (NaN: not known) and the count of samples ``≤ elapsed + a`` (−1: not known); the core count of
    each column; the columns used."""
    k = NODE_TABLE_COLUMNS
    return np.full((m, k), np.nan), np.full((m, k), -1, np.int64), np.empty(k), np.zeros(1, np.int64)


@uncounted
def forget_node(m, await_, alo):
    """Node ``m``'s claims changed: its remembered waits are no longer known."""
    for k in range(await_.shape[1]):
        await_[m, k] = np.nan
        alo[m, k] = -1


@uncounted
def _best_node_fast(
    c, d, free, cap, elapsed, ps, ps_grow, xs, cum, start, x0, inv_h, modelled, ends, run_cores, count,
    claimed, claim_end, claim_cores, nclaim, t, order, key, mend, macc, mlen, built, top, await_, alo,
    cvals, nused,
):  # fmt: skip
    """:func:`_best_node` without ``reserve`` (claims only delay ``a``): the same node, cost and wait.

    The result is the lexicographic smallest (cost, node) over the nodes with a finite cost, whatever order
    they are visited in; a node is skipped only when a lower bound of its cost exceeds the best so far
    (relative slack 1e-9, as :func:`_best_node`), so it could not be chosen. Nodes with room now are looked
    for only if ``c`` is at most ``top`` (the most free cores of a node). Nodes without room are visited
    in ``order`` (ascending ``key``: the node's first running or claimed end, the bound ``a ≥ key − t`` of
    :func:`_best_node`), and the visit stops at the first whose ``(key − t + d)`` exceeds the best cost.
    ``a`` is :func:`_avail`'s by a binary search over the node's merged ends and their cumulated cores
    (``mend``/``macc``/``mlen``, built on first use where ``built`` is false: :func:`_merge_row`); within
    a call it depends on the node's claims and ``c`` only, so it is remembered per node and core count
    (``await_``, with eq. 1's count of samples ``≤ elapsed + a`` in ``alo``, columns ``cvals``/``nused``:
    :func:`new_node_tables`) until the node's claims change (:func:`forget_node`). The same numbers, in
    the same arithmetic."""
    if modelled:
        p0, w0 = _eq1f(xs, cum, 0.0, d, ps_grow, start, x0, inv_h)
    else:
        p0, w0 = 1.0, d / 2.0
    e0 = d + w0 * (1.0 - p0) / max(p0, 1e-9)
    best, best_cost, best_a = -1, np.inf, 0.0
    pe, pps, pcost = np.nan, np.nan, 0.0  # as _best_node: a run of equal (elapsed, ps) shares its cost
    if c <= top:
        for m in range(free.size):
            if free[m] >= 0 and free[m] >= c:
                if elapsed[m] == pe and ps[m] == pps:
                    cost = pcost
                else:
                    cost = _node_cost_f(0.0, d, elapsed[m], ps[m], e0, xs, cum, modelled, start, x0, inv_h)
                    pe, pps, pcost = elapsed[m], ps[m], cost
                if best < 0 or cost < best_cost:
                    best, best_cost = m, cost
    col = _slot(cvals, nused, c)
    for i in range(order.size):
        m = order[i]
        if (key[m] - t + d) * (1.0 - 1e-9) > best_cost:
            break  # every later node's bound is at least this one's
        if free[m] < 0 or free[m] >= c or cap[m] < c:
            continue
        if col >= 0 and await_[m, col] == await_[m, col]:
            a = await_[m, col]
        else:
            if not built[m]:
                _merge_row(m, ends, run_cores, count, claim_end, claim_cores, nclaim, mend, macc, mlen)
                built[m] = True
            a = _merged_avail(m, c, free[m] - claimed[m], t, mend, macc, mlen)
            if col >= 0:
                await_[m, col] = a
        if not np.isfinite(a) or (a + d) * (1.0 - 1e-9) > best_cost:
            continue
        if modelled:  # _node_cost_f, eq. 1's count at elapsed + a remembered
            e = elapsed[m] + a
            lo = alo[m, col] if col >= 0 else -1
            if lo < 0:
                lo = count_le(xs, e, start, x0, inv_h)
                if col >= 0:
                    alo[m, col] = lo
            cost = _node_cost_lo(a, d, e, ps[m], e0, xs, cum, lo, start, x0, inv_h)
        else:
            cost = a + d
        if best < 0 or cost < best_cost or (cost == best_cost and m < best):
            best, best_cost, best_a = m, cost, a
    return best, best_cost, best_a


@cached_njit
def _wait_order(free, ends, count, claim_end, nclaim):
    """Nodes that take jobs sorted by ``key`` (their first running or claimed end, ``inf`` if none), and
    ``key``."""
    n = free.size
    key = np.full(n, np.inf)
    for m in range(n):
        if free[m] >= 0:
            if count[m] > 0:
                key[m] = ends[m, 0]
            if nclaim[m] > 0 and claim_end[m, 0] < key[m]:
                key[m] = claim_end[m, 0]
    order = np.argsort(key)
    sel = np.empty(n, np.int64)
    k = 0
    for i in range(n):
        if free[order[i]] >= 0:
            sel[k] = order[i]
            k += 1
    return sel[:k].copy(), key


@cached_njit(entry=True)
def cost_scan_fast(
    tree, size, p, qjob, cores, duration, cap, used, accept, last_change, last_dir, ps2, ps_grow, xs, cum,
    start, x0, inv_h, modelled, ends, run_cores, count, claimed, claim_end, claim_cores, nclaim, t,
):  # fmt: skip
    """:func:`cost_scan` without ``reserve``, the same starts, claims and return values, through
    :func:`_best_node_fast` (``start``/``x0``/``inv_h``: :func:`search_table` of ``xs``)."""
    free, elapsed, ps = _node_state(cap, used, accept, last_change, last_dir, ps2, t)
    order, key = _wait_order(free, ends, count, claim_end, nclaim)
    top = _top_free(free, claimed, False)
    w = ends.shape[1] + claim_end.shape[1]
    mend, macc = np.empty((free.size, w)), np.empty((free.size, w))
    mlen = np.zeros(free.size, np.int64)
    built = np.zeros(free.size, np.bool_)
    await_, alo, cvals, nused = new_node_tables(free.size)
    while True:
        if _qt_first_le(tree, size, p, top) < 0:
            return -1, -1
        p = _qt_first_le(tree, size, p, 1e300)
        j = qjob[p]
        c, d = cores[j], duration[j]
        best, best_cost, best_a = _best_node_fast(
            c, d, free, cap, elapsed, ps, ps_grow, xs, cum, start, x0, inv_h, modelled, ends, run_cores,
            count, claimed, claim_end, claim_cores, nclaim, t, order, key, mend, macc, mlen, built, top,
            await_, alo, cvals, nused,
        )  # fmt: skip
        if best >= 0 and best_a == 0.0:
            return p, best
        if best >= 0 and np.isfinite(best_cost):
            end = t + best_a + d
            if not _add_claim(claim_end, claim_cores, nclaim, claimed, best, end, c):
                return p, -2
            built[best] = False
            forget_node(best, await_, alo)
            if end < key[best]:  # cannot happen (a ≥ key − t, d > 0); kept so the order stays a bound
                order, key = _wait_order(free, ends, count, claim_end, nclaim)
        p += 1


@cached_njit(entry=True)
def heartbeat_scan(
    dtree, dsize, drank_job, dgroup, dnext, qpos, cores, duration, cap, used, accept, last_change, last_dir,
    ps2, ps_grow, xs, cum, start, x0, inv_h, modelled, ends, run_cores, count, claimed, claim_end,
    claim_cores, nclaim, threshold, move_on, mm_seen, state, pass_no, t,
):  # fmt: skip
    """Algorithm 3's pass, compiled (:class:`sim.policies.slacksched_heartbeat.Heartbeat`'s Python pass, the
    same choices): nodes heartbeat in index order from ``state[1]`` (reset to 0 when ``state[0]`` is not
    ``pass_no``). For node ``m`` the first job, in ``dtree``'s group order, with a queued task that fits it
    is served: its shortest fitting task starts on ``m`` if its eq. 1 completion probability there exceeds
    ``threshold``; else MatchMaker runs for that job's shortest queued task and starts it if its node has
    room now. If the job takes nothing, ``move_on`` serves the next job with a fitting task (YARN's
    CapacityScheduler moves on to the next application), else the heartbeat ends. MatchMaker's "wait" is
    remembered per job for the call (``mm_seen``: a stamp per group's first leaf, ``state[2]`` the call's
    stamp): nothing changes within a call. Returns the next start as ``(queue position, node)``, or
    ``(-1, -1)``. ``dtree``: min-tree of queued tasks' cores in (group, duration, row) order, ``drank_job``
    its task per leaf, ``dgroup`` the first leaf of each leaf's group, ``dnext`` the first leaf of the next
    group. Eq. 1 and MatchMaker go through the bucket index of ``xs`` (``start``/``x0``/``inv_h``,
    :func:`search_table`) and :func:`_best_node_fast` (this pass claims nothing), the same values as
    :func:`_eq1` and :func:`_best_node`."""
    if state[0] != pass_no:
        state[0], state[1] = pass_no, 0
    state[2] += 1
    stamp = state[2]
    free, elapsed, ps = _node_state(cap, used, accept, last_change, last_dir, ps2, t)
    order = np.empty(0, np.int64)  # the nodes by first end, built at the first MatchMaker of this call
    key = np.empty(0)
    mend, macc = np.empty((0, 0)), np.empty((0, 0))
    mlen = np.empty(0, np.int64)
    built = np.empty(0, np.bool_)
    await_, alo, cvals, nused = np.empty((0, 0)), np.empty((0, 0), np.int64), np.empty(0), np.zeros(1, np.int64)
    top = -np.inf
    have_order = 0
    m = state[1]
    while m < free.size:
        if free[m] >= 0 and dtree[1] <= free[m]:
            r = _qt_first_le(dtree, dsize, 0, free[m])
            while r >= 0:
                j = drank_job[r]
                if modelled:
                    pc, _ = _eq1f(xs, cum, elapsed[m], duration[j], ps[m], start, x0, inv_h)
                else:
                    pc = 1.0
                if pc > threshold:
                    state[1] = m
                    return qpos[j], m
                g = dgroup[r]
                if mm_seen[g] != stamp:
                    s = drank_job[_qt_first_le(dtree, dsize, g, 1e300)]
                    if have_order == 0:
                        order, key = _wait_order(free, ends, count, claim_end, nclaim)
                        w = ends.shape[1] + claim_end.shape[1]
                        mend, macc = np.empty((free.size, w)), np.empty((free.size, w))
                        mlen = np.zeros(free.size, np.int64)
                        built = np.zeros(free.size, np.bool_)
                        await_, alo, cvals, nused = new_node_tables(free.size)
                        top = _top_free(free, claimed, False)
                        have_order = 1
                    best, _, best_a = _best_node_fast(
                        cores[s], duration[s], free, cap, elapsed, ps, ps_grow, xs, cum, start, x0, inv_h,
                        modelled, ends, run_cores, count, claimed, claim_end, claim_cores, nclaim, t, order,
                        key, mend, macc, mlen, built, top, await_, alo, cvals, nused,
                    )  # fmt: skip
                    if best >= 0 and best_a == 0.0:
                        state[1] = m
                        return qpos[s], best
                    mm_seen[g] = stamp
                if not move_on:
                    break
                r = _qt_first_le(dtree, dsize, dnext[r], free[m])
        m += 1
    state[1] = m
    return -1, -1
