"""The harvest-VM loop of ``slacksched-nodelay``, waiting ``slacksched``, ``capsched``, ``ff``, ``oracle`` and
``slacksched-heartbeat``, compiled: one numba function runs the whole event loop, the Acquirer included.

:class:`sim.engine.loop.Loop` with :class:`sim.harvest.cluster.Cluster`'s hooks costs ~22–25 µs CPU per job in the
interpreter. :func:`harvest_run` runs the same loop over array state — an array event heap keyed
``(time, job, attempt)`` (the Cluster's ``END``s tie by job, :attr:`Cluster.end_tie_by_job`), the queue's
min-tree, per-node job lists, the loop's accounting, the attempt log and the change history — and makes
exactly the Python loop's choices with the same float arithmetic in the same order: every scalar, per-job
array, attempt-log row, capacity step and the event count are bit-identical (``tests/test_hloop.py``,
``test_hloop_capsched.py``, ``test_hloop_waiting.py``, ``test_hloop_acquirer.py``).

The schedule pass is the policy's: NoDelay's (:func:`sim.harvest.passes.nodelay_scan_into`, the Python
loop's pass with the loop's buffers: eq. 1 over the change history) or
``capsched``'s (:func:`_cap_scan`, a node drawn uniformly among those with room by the policy's own
``numpy.random.Generator``, passed in: numba's ``Generator.integers`` is numpy's bounded-integer algorithm
over the same bit generator, so the draws and the generator's state after them are numpy's, bit for bit),
waiting SlackSched's (:func:`sim.harvest.passes.cost_scan_fast` / ``cost_scan`` over per-pass claims), First-Fit's
(:func:`_ff_scan`), the per-machine Oracle's (:func:`sim.harvest.passes.oracle_scan`) or Algorithm 3's
(:func:`sim.harvest.passes.heartbeat_scan` over the Cluster's duration-ordered queue index, kept here; the pass
runs only at heartbeat ticks with ``beats``, the Acquirer at the first heartbeat at or after its period). A cluster smaller than
the pool (``nodes``: the Cluster's seeded initial choice, made in Python) and the Acquirer (Algorithm 2:
:data:`TICK` events every period, :func:`_acquire`, graceful decommissioning at a node's last end or kill,
replacements drawn from the Cluster's own generator by :func:`choice`, numpy's ``Generator.choice`` bit for
bit) run here too. Not served (the ``run_*`` functions return None and the Python loop runs): checkpointing,
``full_pass``. Imported on first use (numba).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sim.engine._jit import cached_njit, compiled, stamp_loop_cache
from sim.harvest.passes import (
    cost_scan,
    cost_scan_fast,
    heartbeat_scan,
    max_free,
    node_free,
    nodelay_scan_into,
    oracle_scan,
    search_table,
)

if TYPE_CHECKING:
    from sim.harvest.cluster import Cluster
    from sim.metrics import EngineOutput

_qt_first_le = compiled()["_qt_first_le"]
_qt_set = compiled()["_qt_set"]
heap_room, heap_push, heap_pop = compiled()["heap_room"], compiled()["heap_push"], compiled()["heap_pop"]
np_sum, log_new = compiled()["np_sum"], compiled()["log_new"]
copy_head, copy_cols = compiled()["copy_head"], compiled()["copy_cols"]  # slice copies: sim.engine.kit
attempt_start, attempt_complete, attempt_kill = (
    compiled()[f] for f in ("attempt_start", "attempt_complete", "attempt_kill")
)
HERE = Path(__file__).resolve()


def _invalidate_stale_cache() -> None:
    """The compiled-loop cache stamp (:func:`sim.engine._jit.stamp_loop_cache`) of this module: its cache
    files go when it, ``passes.py`` or an engine source changes."""
    stamp_loop_cache(__file__, "hloop", HERE.parent / "passes.py")


_invalidate_stale_cache()

#: use the compiled loop where it applies (tests set it False to run the Python loop on the same input)
ENABLED = True

INF = np.inf
RUNNING = 1  # sim.metrics.RUNNING (literal here: numba reads module globals as constants)
GROW, SHRINK = 0, 1
END, CAPACITY, TICK, ARRIVAL = 0, 1, 2, 4  # sim.engine.loop's event kinds (the Cluster plans no STARTs)
NODELAY, CAPSCHED, WAITING, FIRST_FIT, ORACLE, HEARTBEAT = (
    0,
    1,
    2,
    3,
    4,
    5,
)  # the schedule pass harvest_run makes


@cached_njit
def _enqueue(qtree, qjob, qsize, qtail, j, c, qpos):
    """:meth:`sim.harvest.cluster.Cluster._enqueue` (compacting the positions when the tail reaches the end;
    ``qpos``: each queued job's position, kept): returns the (maybe new) ``qtree, qjob, qsize`` and the new
    tail."""
    if qtail == qsize:
        nlive = 0
        for p in range(qtail):
            if qtree[qsize + p] < INF:
                nlive += 1
        size = qsize
        while size < 2 * nlive + 1024:
            size *= 2
        tree = np.full(2 * size, INF)
        jobs = np.full(size, -1, np.int64)
        w = 0
        for p in range(qtail):
            if qtree[qsize + p] < INF:
                jobs[w] = qjob[p]
                qpos[qjob[p]] = w
                tree[size + w] = qtree[qsize + p]
                w += 1
        for k in range(size - 1, 0, -1):
            a, b = tree[2 * k], tree[2 * k + 1]
            tree[k] = a if a < b else b
        qtree, qjob, qsize, qtail = tree, jobs, size, w
    qjob[qtail] = j
    qpos[j] = qtail
    _qt_set(qtree, qsize, qtail, c)
    return qtree, qjob, qsize, qtail + 1


@cached_njit
def _window(sx, scum, ns, hist_x, mhead, mnh, h, nh):
    """:meth:`sim.harvest.cluster.ChangeHistory.sorted_samples` over the window ``hist_x[h:nh]`` (sorted, prefix
    sums from 0), kept up to date instead of sorted afresh at every change: ``sx[:ns]`` holds the window ``hist_x[mhead:mnh]`` sorted (``scum[:ns + 1]`` its sums); the
    samples that left it are taken out and the new ones put in at their places (the same multiset, so the
    same sorted values), and the sums redone from the first place that changed (the same sequential sums).
    Sorts afresh at the first call (``mhead < 0``) or when many samples changed. Returns the (maybe grown)
    buffers and the new count."""
    gone_hi = min(h, mnh)
    add_lo = max(h, mnh)
    size = nh - h
    if scum.size < size + 1:
        g1, g2 = np.empty(2 * size + 16), np.empty(2 * size + 17)
        copy_head(g1, sx, ns)
        copy_head(g2, scum, ns + 1)
        sx, scum = g1, g2
    if mhead < 0 or (gone_hi - mhead) + (nh - add_lo) > 32:
        copy_head(sx, np.sort(hist_x[h:nh]), size)
        ns = size
        lo = 0
    else:
        lo = ns
        for i in range(mhead, gone_hi):  # expired: the first sample of the same value goes
            k = np.searchsorted(sx[:ns], hist_x[i], side="left")
            for q in range(k, ns - 1):
                sx[q] = sx[q + 1]
            ns -= 1
            if k < lo:
                lo = k
        for i in range(add_lo, nh):  # new: after the equal values
            v = hist_x[i]
            k = np.searchsorted(sx[:ns], v, side="right")
            for q in range(ns, k, -1):
                sx[q] = sx[q - 1]
            sx[k] = v
            ns += 1
            if k < lo:
                lo = k
    scum[0] = 0.0
    acc = scum[lo]
    for i in range(lo, ns):
        acc += sx[i]
        scum[i + 1] = acc
    return sx, scum, ns


@cached_njit
def _cap_scan(tree, size, p, top, qjob, cores, cap, used, accept, rng, room):
    """``capsched``'s pass (:meth:`sim.harvest.cluster.Cluster._placement_scan` with its placement): from queue
    position ``p`` on, the first queued job needing at most ``top`` cores with a node taking jobs that has
    its cores free now, placed on one of those nodes drawn by ``rng.integers(0, count)`` (the placement's
    ``rng.integers(room.size)``: no draw when there is no such node), as ``(position, node)``; ``(-1, -1)``
    if none. ``room``: a buffer of ``cap.size`` node indices."""
    p = _qt_first_le(tree, size, p, top)
    while p >= 0:
        c = cores[qjob[p]]
        k = 0
        for m in range(cap.size):
            f = node_free(cap, used, accept, m)
            if f >= c:
                room[k] = m
                k += 1
        if k:
            return p, room[rng.integers(0, k)]
        p = _qt_first_le(tree, size, p + 1, top)
    return -1, -1


@cached_njit
def choice(rng, a, size):
    """``rng.choice(a, size, replace=False)`` for a 1-d int64 ``a`` and ``1 ≤ size ≤ a.size``: numpy's
    ``Generator.choice`` algorithm (Floyd's sampling over a hash set then a shuffle; a tail shuffle of
    ``arange`` when ``a.size > 10000`` and ``size > a.size // 50``) with the same bounded draws
    (``rng.integers``: numpy's Lemire draws on the same bit generator), so the sample and the generator's
    state after it are numpy's, bit for bit (``tests/test_hloop_acquirer.py``)."""
    pop = a.size
    idx = np.empty(size, np.int64)
    if pop > 10000 and size > pop // 50:
        full = np.arange(pop)
        first = max(pop - size, 1)
        for i in range(pop - 1, first - 1, -1):
            j = rng.integers(0, i + 1)
            full[i], full[j] = full[j], full[i]
        copy_head(idx, full[pop - size :], size)
    else:
        mask = np.uint64(1.2 * size)  # numpy's _gen_mask: all ones up to the top bit
        for sh in (1, 2, 4, 8, 16, 32):
            mask |= mask >> np.uint64(sh)
        hs = np.full(mask + np.uint64(1), -1, np.int64)
        for j in range(pop - size, pop):
            val = rng.integers(0, j + 1)
            loc = val & mask
            while hs[loc] != -1 and hs[loc] != val:
                loc = (loc + 1) & mask
            if hs[loc] == -1:
                hs[loc] = val
                idx[j - pop + size] = val
            else:
                loc = j & mask
                while hs[loc] != -1:
                    loc = (loc + 1) & mask
                hs[loc] = j
                idx[j - pop + size] = j
        for i in range(size - 1, 0, -1):
            k = rng.integers(0, i + 1)
            idx[i], idx[k] = idx[k], idx[i]
    out = np.empty(size, np.int64)
    for i in range(size):
        out[i] = a[idx[i]]
    return out


@cached_njit
def _acquire(t, allocated, decom, cap, last_change, last_dir, nrun, fraction, rng):
    """:meth:`sim.harvest.cluster.Cluster._acquire` (Algorithm 2): the most recently changed
    ``⌊fraction × live⌋`` live nodes (ties: higher index first) are marked for graceful decommissioning
    after as many replacements are allocated, drawn by :func:`choice` among the unallocated nodes with
    cores; an idle marked node is deallocated at once. Returns the allocations made and whether any node
    state changed (the capacity step and the accepting nodes are then stale)."""
    M = cap.size
    nlive = 0
    for m in range(M):
        if allocated[m] and not decom[m]:
            nlive += 1
    k = int(np.floor(fraction * nlive))
    if k == 0:
        return 0, False
    live = np.empty(nlive, np.int64)  # descending index: the stable sort by ``since`` puts ties high first
    since = np.empty(nlive)
    w = 0
    for m in range(M - 1, -1, -1):
        if allocated[m] and not decom[m]:
            live[w] = m
            since[w] = t - last_change[m]
            w += 1
    victims = live[np.argsort(since, kind="mergesort")[:k]]
    ncand = 0
    for m in range(M):
        if not allocated[m] and cap[m] > 0:
            ncand += 1
    nnew = 0
    if ncand:
        cand = np.empty(ncand, np.int64)
        w = 0
        for m in range(M):
            if not allocated[m] and cap[m] > 0:
                cand[w] = m
                w += 1
        new = choice(rng, cand, min(k, ncand))
        for m in new:  # Cluster._allocate
            allocated[m] = True
            last_change[m] = t
            last_dir[m] = GROW
        nnew = new.size
    for m in victims:  # mark; Cluster._deallocate_if_idle
        decom[m] = True
        if nrun[m] == 0:
            decom[m] = False
            allocated[m] = False
    return nnew, True


@cached_njit
def _ff_scan(tree, size, p, top, qjob, cores, cap, used, accept):
    """``ff``'s pass in the harvest loop (:meth:`sim.harvest.cluster.Cluster._placement_scan` with
    :func:`sim.harvest.cluster.place_first_fit`): from queue position ``p`` on, the first queued job needing
    at most ``top`` cores that some node taking jobs has room for, on the lowest-index such node, as
    ``(position, node)``; ``(-1, -1)`` if none."""
    p = _qt_first_le(tree, size, p, top)
    while p >= 0:
        c = cores[qjob[p]]
        for m in range(cap.size):
            if node_free(cap, used, accept, m) >= c:
                return p, m
        p = _qt_first_le(tree, size, p + 1, top)
    return -1, -1


@cached_njit
def _row_insert(re2, rc2, rj2, rn2, m, j, e, c):
    """:meth:`sim.harvest.cluster.Cluster._row_insert`: job ``j`` (end ``e``, ``c`` cores) into node ``m``'s sorted
    row after the equal ends (the rows doubled when full); returns the (maybe new) rows."""
    k = rn2[m]
    if k == re2.shape[1]:
        M, w = re2.shape
        g1, g2, g3 = np.zeros((M, 2 * w)), np.zeros((M, 2 * w)), np.zeros((M, 2 * w), np.int64)
        copy_cols(g1, re2, w)
        copy_cols(g2, rc2, w)
        copy_cols(g3, rj2, w)
        re2, rc2, rj2 = g1, g2, g3
    i = k
    while i > 0 and re2[m, i - 1] > e:
        re2[m, i], rc2[m, i], rj2[m, i] = re2[m, i - 1], rc2[m, i - 1], rj2[m, i - 1]
        i -= 1
    re2[m, i], rc2[m, i], rj2[m, i] = e, c, j
    rn2[m] = k + 1
    return re2, rc2, rj2


@cached_njit
def _row_delete(re2, rc2, rj2, rn2, m, j):
    """:meth:`sim.harvest.cluster.Cluster._row_delete`: job ``j`` out of node ``m``'s sorted row."""
    k = rn2[m]
    i = 0
    while rj2[m, i] != j:
        i += 1
    while i < k - 1:
        re2[m, i], rc2[m, i], rj2[m, i] = re2[m, i + 1], rc2[m, i + 1], rj2[m, i + 1]
        i += 1
    rn2[m] = k - 1


# nogil: a sweep worker's watchdog thread can end a scenario over its timeout; entry: Python calls it
@cached_njit(nogil=True, entry=True)
def harvest_run(
    submit, duration, cores, row, horizon, tr_t, tr_m, tr_c, cap, used, allocated, last_change, last_dir,
    window_s, min_samples, check, newest, first, start_s, end, att, terms, status, machine, cur_att, acc, cnt,
    policy, rng, fast_min, decom, tick_s, acq_fraction, arng, fut_ptr, fut_t, fut_c, beats, acq_period, qpos,
    dtree, dsize, drank, drank_job, dgroup, dnext, threshold, move_on, reserve,
):  # fmt: skip
    """The harvest-VM loop with ``policy``'s pass (:data:`NODELAY`, :data:`CAPSCHED` drawing from ``rng``,
    :data:`WAITING` (``reserve``: claimed cores taken from jobs that fit now too), :data:`FIRST_FIT`, :data:`ORACLE` over the trace's future ``fut_*``, :data:`HEARTBEAT`
    over the duration-ordered index ``dtree``…, ``threshold``, ``move_on``; with ``beats`` the ticks are
    heartbeats and the pass runs only at them, the Acquirer every ``acq_period`` at the next one)
    (:meth:`sim.engine.loop.Loop.run` with :class:`sim.harvest.cluster.Cluster`'s hooks, no checkpointing), from
    the Cluster's initial state; the Acquirer every ``tick_s`` (inf: none) marks ``acq_fraction`` of the live
    nodes and draws replacements from ``arng``. Fills the per-job arrays (engine order) and node state
    (``allocated``, ``decom`` …) in place, ``acc`` with (completed, wasted, available, used core-s, aborted s)
    and ``cnt`` with (terminations, events, violations, acquisitions); returns the attempt log's (job, start,
    end, outcome, machine) and the capacity step function's (times, cores), each trimmed (views)."""
    n = submit.size
    M = cap.size
    nct = tr_t.size
    # event heap (ENDs only: the Cluster plans no starts)
    ht = np.empty(1024)
    hx = np.empty((1024, 2), np.int64)  # (job, attempt)
    hn = 0
    # queue
    qsize = 1024
    qtree = np.full(2 * qsize, INF)
    qjob = np.full(qsize, -1, np.int64)
    qtail = 0
    qlen = 0
    # running jobs per node (unordered rows) and each job's place in its row
    kcap = 8
    njobs = np.zeros((M, kcap), np.int64)
    nrun = np.zeros(M, np.int64)
    npos = np.zeros(n, np.int64)
    # attempt log
    log_job, log_start, log_end, log_out, log_m = log_new(n)
    nlog = 0
    # capacity step function
    ccap = 1024
    cap_t = np.empty(ccap)
    cap_v = np.empty(ccap)
    ncap = 0
    # change history (rolling window of inter-change times, bigram counts)
    hicap = 1024
    hist_t = np.empty(hicap)
    hist_x = np.empty(hicap)
    nh = 0
    head = 0
    bigram = np.ones((2, 2))
    sx, scum, ns = np.empty(1024), np.zeros(1025), 0  # the window's samples sorted, their prefix sums
    xs = sx[:0]
    cum = scum[:1]
    mhead = -1  # window head and sample count the cached model was built from
    mnh = -1
    mpass = False  # the model is current for this pass
    ps2 = np.empty(2)
    killed = np.empty(16, np.int64)
    accept = np.zeros(M, np.bool_)
    sfree, selapsed, sps = np.empty(M), np.empty(M), np.empty(M)  # the scan's per-node buffers
    room = np.empty(M, np.int64)  # capsched's nodes with room
    # waiting slacksched: running jobs' planned ends per node, sorted (a start after equal ends), their cores
    # and jobs (Cluster.ends_rows), this pass's claims, and the samples' search table
    re2, rc2, rj2 = np.zeros((M, 4)), np.zeros((M, 4)), np.zeros((M, 4), np.int64)
    rn2 = np.zeros(M, np.int64)
    claimed, claim_end, claim_cores = np.zeros(M), np.zeros((M, 4)), np.zeros((M, 4))
    nclaim = np.zeros(M, np.int64)
    tstart, tx0, tinv_h = search_table(xs)
    completed_cs = wasted_cs = available_cs = used_cs = aborted = 0.0
    alive = busy = 0.0
    n_term = events = violations = acquisitions = 0
    next_tick = tick_s  # the next tick: a heartbeat (``beats``) or the Acquirer's period (inf: none)
    next_acq = acq_period  # with ``beats``: the Acquirer runs at the first heartbeat at or after this
    beat = False  # a heartbeat in this instant (with ``beats``, the pass runs only then)
    pass_no = 0
    keep_rows = policy in (WAITING, HEARTBEAT)  # the passes that read the running jobs' ends per node
    hstate = np.array([-1, 0, 0], np.int64)  # heartbeat_scan's (pass, cursor, call stamp)
    seen = np.zeros(max(n, 1), np.int64)
    cap_dirty = True
    ci = 0
    si = 0
    t_prev = 0.0
    cur = 0.0
    have_cur = False
    while True:
        t = INF
        kind = 5
        if hn > 0:
            t = ht[0]
            kind = END
        if ci < nct and (tr_t[ci] < t or (tr_t[ci] == t and kind > CAPACITY)):
            t = tr_t[ci]
            kind = CAPACITY
        if next_tick < t or (next_tick == t and kind > TICK):
            t = next_tick
            kind = TICK
        if si < n and submit[si] < t:
            t = submit[si]
            kind = ARRIVAL
        if have_cur and t != cur:
            # ---------------------------------------------------------- Cluster.on_instant_end(cur)
            now = cur
            have_cur = False
            go = beat or not beats
            beat = False
            if qlen and go:
                pass_no += 1
                mpass = False
                if policy == WAITING:  # Cluster._reset_claims: claims last one pass
                    for m in range(M):
                        claimed[m] = 0.0
                        nclaim[m] = 0
                if cap_dirty:
                    for m in range(M):
                        accept[m] = allocated[m] and not decom[m] and cap[m] > 0
                top = max_free(cap, used, accept)
                p, m = -1, -1
                while qtree[1] <= top:
                    if policy == CAPSCHED:
                        p, m = _cap_scan(qtree, qsize, p + 1, top, qjob, cores, cap, used, accept, rng, room)
                    elif policy == FIRST_FIT:
                        p, m = _ff_scan(qtree, qsize, p + 1, top, qjob, cores, cap, used, accept)
                    elif policy == ORACLE:  # sim.harvest.cluster.scan_oracle over Cluster.free()
                        for m in range(M):
                            sfree[m] = node_free(cap, used, accept, m)
                        p, m = oracle_scan(
                            qtree, qsize, p + 1, top, qjob, cores, duration, sfree, used, cap, fut_ptr, fut_t,
                            fut_c, now,
                        )  # fmt: skip
                    else:
                        if not mpass:
                            cut = now - window_s
                            h = head
                            while h < nh and hist_t[h] <= cut:
                                h += 1
                            if h != mhead or nh != mnh:
                                sx, scum, ns = _window(sx, scum, ns, hist_x, mhead, mnh, h, nh)
                                xs, cum = sx[:ns], scum[: ns + 1]
                                head = h
                                mhead, mnh = head, nh
                                if keep_rows:
                                    tstart, tx0, tinv_h = search_table(xs)
                            for d in range(2):
                                ps2[d] = bigram[d, SHRINK] / (bigram[d, 0] + bigram[d, 1])
                            mpass = True
                    if policy == WAITING:
                        # SlackSched.scan: cost_scan_fast from fast_min queued jobs, else cost_scan (the same
                        # choices); a full claim row is doubled and the job at p decided again
                        q = p + 1
                        while True:
                            if qlen >= fast_min and not reserve:
                                p, m = cost_scan_fast(
                                    qtree, qsize, q, qjob, cores, duration, cap, used, accept, last_change,
                                    last_dir, ps2, ps2[GROW], xs, cum, tstart, tx0, tinv_h,
                                    xs.size >= min_samples and xs.size > 0, re2, rc2, rn2, claimed, claim_end,
                                    claim_cores, nclaim, now,
                                )  # fmt: skip
                            else:
                                p, m = cost_scan(
                                    qtree, qsize, q, qjob, cores, duration, cap, used, accept, last_change,
                                    last_dir, ps2, ps2[GROW], xs, cum, xs.size >= min_samples and xs.size > 0,
                                    re2, rc2, rn2, claimed, claim_end, claim_cores, nclaim, reserve, now,
                                )  # fmt: skip
                            if m != -2:
                                break
                            w = claim_end.shape[1]
                            g1, g2 = np.zeros((M, 2 * w)), np.zeros((M, 2 * w))
                            copy_cols(g1, claim_end, w)
                            copy_cols(g2, claim_cores, w)
                            claim_end, claim_cores = g1, g2
                            q = p
                    elif policy == HEARTBEAT:  # Heartbeat.scan: the start's queue position and node
                        modelled = xs.size >= min_samples and xs.size > 0
                        p, m = heartbeat_scan(
                            dtree, dsize, drank_job, dgroup, dnext, qpos, cores, duration, cap, used, accept,
                            last_change, last_dir, ps2, ps2[GROW], xs, cum, tstart, tx0, tinv_h,
                            modelled, re2, rc2, rn2, claimed, claim_end,
                            claim_cores, nclaim, threshold, move_on, seen, hstate, pass_no, now,
                        )  # fmt: skip
                    elif policy == NODELAY:
                        p, m = nodelay_scan_into(
                            qtree, qsize, p + 1, top, qjob, cores, duration, cap, used, accept, last_change,
                            last_dir, ps2, xs, cum, xs.size >= min_samples, now, sfree, selapsed, sps,
                        )  # fmt: skip
                    if p < 0:
                        break
                    # Cluster._start -> Loop.start
                    j = qjob[p]
                    c = cores[j]
                    log_job, log_start, log_end, log_out, log_m, nlog, busy = attempt_start(
                        log_job, log_start, log_end, log_out, log_m, nlog, cur_att, status, start_s, first, att,
                        machine, cores, j, m, now, horizon, busy,
                    )  # fmt: skip
                    e = now + duration[j]
                    ht, hx = heap_room(ht, hx, hn)
                    hn = heap_push(ht, hx, hn, e, j, att[j], 0, 0)
                    if nrun[m] == njobs.shape[1]:
                        grown = np.zeros((M, 2 * njobs.shape[1]), np.int64)
                        copy_cols(grown, njobs, njobs.shape[1])
                        njobs = grown
                    njobs[m, nrun[m]] = j
                    npos[j] = nrun[m]
                    nrun[m] += 1
                    if keep_rows:
                        re2, rc2, rj2 = _row_insert(re2, rc2, rj2, rn2, m, j, e, c)
                    used[m] += c
                    # Cluster._dequeue
                    _qt_set(qtree, qsize, p, INF)
                    qpos[j] = -1
                    if dsize:
                        _qt_set(dtree, dsize, drank[j], INF)
                    qlen -= 1
                    top = max_free(cap, used, accept)
            if cap_dirty:
                s = 0.0
                na = 0
                for m in range(M):
                    if allocated[m]:
                        na += 1
                buf = np.empty(na)
                na = 0
                for m in range(M):
                    if allocated[m]:
                        buf[na] = cap[m]
                        na += 1
                s = np_sum(buf)
                alive = s
                if ncap == 0 or s != cap_v[ncap - 1]:
                    if ncap == cap_t.size:
                        cap_t = np.concatenate((cap_t, np.empty(ncap)))
                        cap_v = np.concatenate((cap_v, np.empty(ncap)))
                    cap_t[ncap] = now
                    cap_v[ncap] = s
                    ncap += 1
                for m in range(M):
                    accept[m] = allocated[m] and not decom[m] and cap[m] > 0
                cap_dirty = False
            if check:
                for m in range(M):
                    if used[m] > cap[m] + 1e-9 or (used[m] > 0 and not allocated[m]):
                        violations += 1
            continue
        if t >= horizon:
            break
        cur = t
        have_cur = True
        events += 1
        dt = t - t_prev
        if dt != 0:
            available_cs += alive * dt
            used_cs += busy * dt
            t_prev = t
        if kind == ARRIVAL:
            si += 1
            qtree, qjob, qsize, qtail = _enqueue(qtree, qjob, qsize, qtail, si - 1, cores[si - 1], qpos)
            if dsize:
                _qt_set(dtree, dsize, drank[si - 1], cores[si - 1])
            qlen += 1
        elif kind == CAPACITY:
            lo = ci
            while ci < nct and tr_t[ci] == t:
                ci += 1
            nk = 0
            cap_dirty = True
            for pi in range(lo, ci):
                m = tr_m[pi]
                newc = tr_c[pi]
                old = cap[m]
                if newc == old:
                    continue
                cap[m] = newc
                if not allocated[m]:
                    continue
                d = SHRINK if newc < old else GROW
                if t > last_change[m]:
                    if nh == hist_t.size:
                        hist_t = np.concatenate((hist_t, np.empty(nh)))
                        hist_x = np.concatenate((hist_x, np.empty(nh)))
                    hist_t[nh] = t
                    hist_x[nh] = t - last_change[m]
                    nh += 1
                    bigram[last_dir[m], d] += 1
                last_change[m] = t
                last_dir[m] = d
                while nrun[m] > 0 and (used[m] > newc + 1e-9 or newc <= 0.0):
                    # the victim: oldest start first (ties: lower input row), or newest with ``newest``
                    v = njobs[m, 0]
                    for k in range(1, nrun[m]):
                        j = njobs[m, k]
                        if newest:
                            if start_s[j] > start_s[v] or (start_s[j] == start_s[v] and row[j] > row[v]):
                                v = j
                        elif start_s[j] < start_s[v] or (start_s[j] == start_s[v] and row[j] < row[v]):
                            v = j
                    # Cluster._detach
                    k = npos[v]
                    last = njobs[m, nrun[m] - 1]
                    njobs[m, k] = last
                    npos[last] = k
                    nrun[m] -= 1
                    if keep_rows:
                        _row_delete(re2, rc2, rj2, rn2, m, v)
                    used[m] -= cores[v]
                    if nrun[m] == 0:
                        used[m] = 0.0
                    wasted_cs, aborted, busy, n_term = attempt_kill(
                        log_end, log_out, cur_att, status, start_s, terms, machine, cores, v, t, wasted_cs,
                        aborted, busy, n_term,
                    )  # fmt: skip
                    if nk == killed.size:
                        killed = np.concatenate((killed, np.empty(nk, np.int64)))
                    killed[nk] = v
                    nk += 1
                if decom[m] and nrun[m] == 0:  # Cluster._deallocate_if_idle
                    decom[m] = False
                    allocated[m] = False
            # killed jobs join the queue's back, earlier start first, then input row (insertion sort)
            for a in range(1, nk):
                v = killed[a]
                b = a - 1
                while b >= 0 and (
                    start_s[killed[b]] > start_s[v]
                    or (start_s[killed[b]] == start_s[v] and row[killed[b]] > row[v])
                ):
                    killed[b + 1] = killed[b]
                    b -= 1
                killed[b + 1] = v
            for a in range(nk):
                v = killed[a]
                qtree, qjob, qsize, qtail = _enqueue(qtree, qjob, qsize, qtail, v, cores[v], qpos)
                if dsize:
                    _qt_set(dtree, dsize, drank[v], cores[v])
                qlen += 1
        elif (
            kind == TICK
        ):  # Cluster.on_tick: a heartbeat (the Acquirer at or after its period) or the Acquirer
            next_tick += tick_s
            acq = True
            if beats:
                beat = True
                acq = t >= next_acq
                if acq:
                    next_acq += acq_period
            if acq:
                nnew, changed = _acquire(
                    t, allocated, decom, cap, last_change, last_dir, nrun, acq_fraction, arng
                )
                acquisitions += nnew
                if changed:
                    cap_dirty = True
        else:
            j = hx[0, 0]
            a = hx[0, 1]
            hn = heap_pop(ht, hx, hn)
            if status[j] != RUNNING or a != att[j]:
                continue
            c = cores[j]
            completed_cs, busy = attempt_complete(
                log_end, log_out, cur_att, status, end, cores, duration, j, t, completed_cs, busy
            )
            # Cluster.on_end -> _detach
            m = machine[j]
            k = npos[j]
            last = njobs[m, nrun[m] - 1]
            njobs[m, k] = last
            npos[last] = k
            nrun[m] -= 1
            if keep_rows:
                _row_delete(re2, rc2, rj2, rn2, m, j)
            used[m] -= c
            if nrun[m] == 0:
                used[m] = 0.0
            machine[j] = -1
            if decom[m] and nrun[m] == 0:  # Cluster._deallocate_if_idle
                decom[m] = False
                allocated[m] = False
                cap_dirty = True
    available_cs += alive * (horizon - t_prev)
    used_cs += busy * (horizon - t_prev)
    acc[0], acc[1], acc[2], acc[3], acc[4] = completed_cs, wasted_cs, available_cs, used_cs, aborted
    cnt[0], cnt[1], cnt[2], cnt[3] = n_term, events, violations, acquisitions
    # views, not copies: a copy of the log at its end would be the run's peak memory
    return (
        log_job[:nlog],
        log_start[:nlog],
        log_end[:nlog],
        log_out[:nlog],
        log_m[:nlog],
        cap_t[:ncap],
        cap_v[:ncap],
    )


def run_nodelay(cl: Cluster, min_samples: int) -> EngineOutput | None:
    """Run ``cl`` (a fresh ``slacksched-nodelay`` Cluster) with :func:`harvest_run`; None where the compiled
    loop does not apply (disabled, checkpointing, heartbeats, ``full_pass``, a run already started): the
    Python loop runs then."""
    return _run(cl, NODELAY, min_samples, np.random.default_rng(0))  # a generator NoDelay never draws from


def run_waiting(cl: Cluster, min_samples: int, fast_min: int) -> EngineOutput | None:
    """Run ``cl`` (a fresh waiting ``slacksched`` Cluster) with :func:`harvest_run`, its pass
    :meth:`sim.policies.slacksched.SlackSched.scan`'s (``cost_scan_fast`` from ``fast_min`` queued jobs
    without ``reserve``, else ``cost_scan``, over per-pass claims); None where the compiled loop does not
    apply (as :func:`run_nodelay`): the Python loop runs then."""
    return _run(cl, WAITING, min_samples, np.random.default_rng(0), fast_min)


def run_capsched(cl: Cluster, rng: np.random.Generator) -> EngineOutput | None:
    """Run ``cl`` (a fresh ``capsched`` Cluster) with :func:`harvest_run`, drawing nodes from ``rng`` (its
    placement's generator, left in the state the Python loop leaves it in); None where the compiled loop does
    not apply (as :func:`run_nodelay`): the Python loop runs then."""
    return _run(cl, CAPSCHED, 0, rng)


def run_first_fit(cl: Cluster) -> EngineOutput | None:
    """Run ``cl`` (a fresh Cluster with :func:`sim.harvest.cluster.place_first_fit`: ``ff`` with ``nodes`` or
    the Acquirer) with :func:`harvest_run`; None where the compiled loop does not apply (as
    :func:`run_nodelay`)."""
    return _run(cl, FIRST_FIT, 0, np.random.default_rng(0))


def run_oracle(cl: Cluster) -> EngineOutput | None:
    """Run ``cl`` (a fresh Cluster with :func:`sim.harvest.cluster.place_oracle`: the per-machine ``oracle``)
    with :func:`harvest_run`, its pass :func:`sim.harvest.passes.oracle_scan` over the trace's future; None
    where the compiled loop does not apply (as :func:`run_nodelay`)."""
    return _run(cl, ORACLE, 0, np.random.default_rng(0))


def run_heartbeat(cl: Cluster, min_samples: int, threshold: float, move_on: bool) -> EngineOutput | None:
    """Run ``cl`` (a fresh ``slacksched-heartbeat`` Cluster with the compiled pass) with :func:`harvest_run`, its
    pass :func:`sim.harvest.passes.heartbeat_scan` (Algorithm 3 over the duration-ordered queue index,
    heartbeats every ``heartbeat_s`` or at every instant); None where the compiled loop does not apply (as
    :func:`run_nodelay`)."""
    if cl.dtree is None:
        return None
    return _run(cl, HEARTBEAT, min_samples, np.random.default_rng(0), 0, threshold, move_on)


def _run(
    cl: Cluster,
    policy: int,
    min_samples: int,
    rng: np.random.Generator,
    fast_min: int = 0,
    threshold: float = 0.0,
    move_on: bool = False,
) -> EngineOutput | None:
    """:func:`harvest_run` on ``cl``'s state with ``policy``'s pass, the loop's accounting and log written back
    (None where it does not apply). The Acquirer draws its replacements from ``cl.rng`` (left in the state
    the Python loop leaves it in)."""
    loop = cl.loop
    if (
        not ENABLED
        or cl.full_pass
        or (cl.heartbeat_s is not None and policy != HEARTBEAT)
        or loop.ck is not None
        or loop.events
        or loop.heap
        or cl.decom.any()
        or cl.acquisitions
    ):
        return None
    tr = cl.trace
    acc = np.zeros(5)
    cnt = np.zeros(4, np.int64)
    f64 = np.float64
    acq_period = float(cl.cfg.acquirer_period_s) if cl.cfg.acquirer else INF
    if cl.dtree is not None:
        dtree, dsize, drank, drank_job, dgroup, dnext = (
            cl.dtree,
            cl.dsize,
            cl.drank,
            cl.drank_job,
            cl.dgroup,
            cl.dnext,
        )
    else:  # no duration-ordered index (dsize 0: never touched)
        dtree, dsize = np.full(2, INF), 0
        drank = drank_job = dgroup = dnext = np.zeros(1, np.int64)
    (lj, ls, le, lo, lm, ct, cv) = harvest_run(
        np.ascontiguousarray(loop.submit, f64), np.ascontiguousarray(loop.duration, f64),
        np.ascontiguousarray(loop.cores, f64), np.ascontiguousarray(loop.row, np.int64), float(loop.horizon),
        np.ascontiguousarray(tr.time_s, f64), np.ascontiguousarray(tr.machine, np.int64),
        np.ascontiguousarray(tr.cores, f64), cl.cap, cl.used, cl.allocated, cl.last_change, cl.last_dir,
        float(cl.history.window_s), int(min_samples), bool(loop.check), cl.cfg.kill_order == "newest",
        loop.first, loop.start_s, loop.end, loop.att, loop.terms, loop.status, loop.machine, loop.cur_att,
        acc, cnt, policy, rng, int(fast_min), cl.decom, float(cl.tick_s), float(cl.cfg.acquirer_fraction), cl.rng,
        np.ascontiguousarray(cl.fut_ptr, np.int64), np.ascontiguousarray(cl.fut_t, f64),
        np.ascontiguousarray(cl.fut_c, f64), cl.heartbeat_s is not None, acq_period, cl.qpos, dtree, int(dsize),
        drank, drank_job, dgroup, dnext, float(threshold), bool(move_on), bool(cl.reserve),
    )  # fmt: skip
    loop.completed_cs, loop.wasted_cs, loop.available_cs, loop.used_cs, loop.aborted = map(float, acc)
    loop.n_term, loop.events, loop.violations = map(int, cnt[:3])
    cl.acquisitions = int(cnt[3])
    log = loop.log
    log.job, log.start, log.end, log.outcome, log.machine = lj, ls, le, lo, lm  # type: ignore[assignment]
    loop.cap_t, loop.cap_v = ct.tolist(), cv.tolist()
    loop.alive_cores = float(cv[-1]) if cv.size else 0.0
    return loop.output()
