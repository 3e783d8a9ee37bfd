"""First-Fit's kernel: :func:`~sim.engine.kernel._kernel` for a rule that admits every job that fits.

A run with no admission predicate, no per-machine time bound, no timed wake-ups, no naive rescan and no
checkpointing (First-Fit and its termination variants) takes the same decisions as the general kernel —
the same instants, the same starts in the same order, the same float sums added in the same order — from
one flat loop: the per-event work (completions, submissions, the pass, the starts) is written out in the
loop over the kernel's own arrays, and what it calls takes no state bundle and calls nothing itself
(:func:`~sim.engine.kit.heap1_push`, :func:`~sim.engine.kit.heap1_pop`, the trees' set and search). numba counts
references to arrays with atomic operations: an inlined helper copies each array it takes (two atomic
operations per array per call), a function that calls another keeps the count of each array argument, and
an array assigned again inside a loop is counted at every iteration. So the loop (:func:`_ff_events`) and
the helpers it calls each event are compiled without counting, and the loop allocates nothing: at the
start of an instant it checks that the heap, the attempt log, the queue and the time series hold the
instant's worst case, and returns to :func:`_ff_kernel` to grow them when they may not (the queue's
positions and trees use only its first ``qsize`` entries, so a larger array changes no decision). The
rare phases (capacity changes, terminations, queue compaction, invariant checks) are the general kernel's
own functions.
"""

from __future__ import annotations

import numpy as np

from sim.engine._jit import kernel_fn
from sim.engine.admission import W_BOUNDARY, W_EPOCH, W_MIN_CROSS, W_NEED_EVAL, W_NEXT_WAKE
from sim.engine.kernel import (
    A_ALIVE_CORES,
    A_AVAILABLE_CS,
    A_COMPLETED_CS,
    A_EVENTS,
    A_INFLIGHT_CS,
    A_USED_CORES,
    A_USED_CS,
    A_VIOLATIONS,
    C_NK,
    N_ACC,
    _append,
    _machine_events,
    _set_machines_alive,
    _terminate,
    _violations,
)
from sim.engine.kit import copy_cols, copy_head, copy_rows, heap1_pop, heap1_push
from sim.engine.log import LOG_END, LOG_JOB, LOG_MACHINE, LOG_OUTCOME, LOG_START, LOG_USEFUL
from sim.engine.queue import CLS_H2, CLS_H4, CLS_L, _q_room, _qx_new
from sim.engine.trees import _mt_first_ge, _mt_set, _qt_first_le, _qt_set
from sim.metrics import ATT_COMPLETED, ATT_RUNNING, COMPLETED, RUNNING

INF = np.inf
#: :func:`_ff_events`' state (``ist``): the next submission, capacity step and machine event, the queue's
#: size, head and tail, the heap's and the log's rows, the time series' columns, the room asked for
I_SI, I_CI, I_PI, I_QSIZE, I_QHEAD, I_QTAIL, I_HN, I_AN, I_TS_N, I_NEED = range(10)
N_IST = 10
#: what :func:`_ff_events` returns: the horizon reached, or which arrays to grow before it goes on
DONE, GROW_HEAP, GROW_LOG, GROW_QUEUE, GROW_TS = range(5)


@kernel_fn(entry=True)
def _ff_kernel(
    row, submit, duration, cores, mem, use_mem, cap_t, cap_n, n_machines, msize, machine_cores, machine_mem,
    horizon, term_policy, seed, qsize0, record_ts, check, pred, bound, timed, job_lo, job_hi, adm, full_rescan,
    use_frontier, jcls, cls_lo, cls_hi, pm_t, pm_m, pm_c, ck, terms,
):  # fmt: skip
    """:func:`~sim.engine.kernel._kernel` (same arguments, same results) for a run without predicate,
    per-job machine range (``job_lo``, ``job_hi`` empty), time bound, timed rule, naive rescan or
    checkpointing (the caller checks: :func:`sim.engine.flat_kernel`)."""
    n = submit.shape[0]
    work = duration
    ckd = np.zeros(0, np.int64)
    up_since = adm[4]
    # the capacity change's wake-up state (read by timed rules only)
    wake = np.empty(5)
    wake[W_EPOCH] = 0.0
    wake[W_BOUNDARY] = -1.0
    wake[W_NEED_EVAL] = 1.0
    wake[W_MIN_CROSS] = 1e300
    wake[W_NEXT_WAKE] = INF
    next_cross = np.full(n_machines, np.inf)
    knot_idx = np.zeros(n_machines, np.int64)
    dirty = np.empty(n_machines, np.int64)
    is_dirty = np.zeros(n_machines, np.bool_)
    np.random.seed(seed)
    # memory: the first starts, ends and attempt counts are read off the attempt log after the loop (none
    # of the phases called reads them), when the loop's own arrays are freed; job indices in 4 bytes
    none = np.empty(0)
    start = np.full(n, -1.0)
    status = np.zeros(n, np.int8)
    on_machine = np.full(n, -1, np.int32)
    nxt = np.full(n, -1, np.int32)
    prv = np.full(n, -1, np.int32)
    cur_att = np.full(n, -1, np.int32)
    jobs = (none, start, none, np.zeros(0, np.int64), terms, status, on_machine, nxt, prv, cur_att)
    alive = np.zeros(n_machines, np.bool_)
    free_c = np.zeros(n_machines)
    free_m = np.full(n_machines, machine_mem)
    head = np.full(n_machines, -1, np.int64)
    mtree = np.full(2 * msize, -1.0)
    mcap = np.zeros(n_machines)
    ma4 = np.full(2 * msize, -INF)
    lt = np.vstack((np.full((1, 2 * msize), -INF), np.full((1, 2 * msize), INF)))
    mach = (alive, free_c, free_m, head, mtree, mcap, up_since, ma4, lt)
    qsize = qsize0
    qjob = np.full(qsize, -1, np.int64)
    qt = np.full((1, 2 * qsize), INF)
    qt0 = qt[0]
    qxs = (
        _qx_new(jcls, cores, False, CLS_H2),
        _qx_new(jcls, cores, False, CLS_H4),
        _qx_new(jcls, cores, False, CLS_L),
    )
    ht = np.empty(n + 16)
    hx = np.empty((n + 16, 1), np.int64)
    acc = np.zeros(N_ACC)
    cnt = np.zeros(2, np.int64)
    ts = np.empty((3, 1024))
    killed = np.empty(n, np.int64)
    # no work column (LOG_USEFUL: checkpointing only): 8 bytes an attempt less of the run's peak memory
    alog = np.empty((2 * n + 16, LOG_USEFUL))

    # the event loop (:func:`_ff_events`) runs without reference counting and returns at the start of an
    # instant whose worst case the arrays may not hold; they grow here, and it goes on from that instant
    ist = np.zeros(N_IST, np.int64)
    ist[I_QSIZE] = qsize
    fst = np.zeros(1)
    while True:
        code = _ff_events(
            ist, fst, row, submit, duration, cores, mem, use_mem, cap_t, cap_n, n_machines, msize, machine_cores,
            machine_mem, horizon, term_policy, record_ts, check, bound, adm, jcls, pm_t, pm_m, pm_c, ck, terms,
            work, ckd, wake, next_cross, knot_idx, dirty, is_dirty, start, status, on_machine, nxt, prv, cur_att,
            jobs, alive, free_c, free_m, head, mtree, mcap, mach, qjob, qt, qt0, qxs, ht, hx, acc, cnt, ts,
            killed, alog,
        )  # fmt: skip
        if code == GROW_HEAP:
            ht, hx = _grown_heap(ht, hx, ist[I_HN], ist[I_NEED])
        elif code == GROW_LOG:
            alog = _grown_log(alog, ist[I_AN], ist[I_NEED])
        elif code == GROW_QUEUE:
            qjob, qt = _q_room(qjob, qt, ist[I_QSIZE], ist[I_NEED])
            qt0 = qt[0]
        elif code == GROW_TS:
            grown_ts = np.empty((3, 2 * ts.shape[1]))
            copy_cols(grown_ts, ts, ist[I_TS_N])
            ts = grown_ts
        else:
            break
    an = ist[I_AN]
    ts_n = ist[I_TS_N]
    t_prev = fst[0]
    # ---- close the books at the horizon
    if horizon > t_prev:
        acc[A_AVAILABLE_CS] += acc[A_ALIVE_CORES] * (horizon - t_prev)
        acc[A_USED_CS] += acc[A_USED_CORES] * (horizon - t_prev)
    inflight_cs = 0.0
    for j in range(n):
        if status[j] == RUNNING:
            inflight_cs += cores[j] * (horizon - start[j])
    acc[A_INFLIGHT_CS] = inflight_cs
    # each job's first start, end (completed) and attempts, from its rows in start order
    first_start = np.full(n, -1.0)
    end = np.full(n, -1.0)
    attempts = np.zeros(n, np.int64)
    for r in range(an):
        j = int(alog[r, LOG_JOB])
        attempts[j] += 1
        if attempts[j] == 1:
            first_start[j] = alog[r, LOG_START]
        if alog[r, LOG_OUTCOME] == ATT_COMPLETED:
            end[j] = alog[r, LOG_END]
    return first_start, end, attempts, terms, status, acc, ts[:, :ts_n], alog[:an]


@kernel_fn
def _grown_heap(ht, hx, hn, need):
    """The event heap's arrays with room for ``need`` entries: copies of the first ``hn``, at least doubled."""
    size = max(need, 2 * ht.shape[0] + 16)
    ht2 = np.empty(size)
    hx2 = np.empty((size, hx.shape[1]), np.int64)
    copy_head(ht2, ht, hn)
    copy_rows(hx2, hx, hn)
    return ht2, hx2


@kernel_fn
def _grown_log(alog, an, need):
    """The attempt log with room for ``need`` rows: a copy of the first ``an``, at least doubled."""
    grown = np.empty((max(need, 2 * alog.shape[0] + 16), alog.shape[1]))
    copy_rows(grown, alog, an)
    return grown


@kernel_fn(counted=False)
def _ff_events(
    ist, fst, row, submit, duration, cores, mem, use_mem, cap_t, cap_n, n_machines, msize, machine_cores,
    machine_mem, horizon, term_policy, record_ts, check, bound, adm, jcls, pm_t, pm_m, pm_c, ck, terms, work, ckd,
    wake, next_cross, knot_idx, dirty, is_dirty, start, status, on_machine, nxt, prv, cur_att, jobs, alive,
    free_c, free_m, head, mtree, mcap, mach, qjob, qt, qt0, qxs, ht, hx, acc, cnt, ts, killed, alog,
):  # fmt: skip
    """:func:`_ff_kernel`'s event loop from the state in ``ist``/``fst`` (the next submission, capacity step
    and machine event, the queue's size, head and tail, the heap's, log's and time series' rows, the last
    instant) until the horizon (returns ``DONE``) or an instant whose worst case the arrays may not hold
    (returns a ``GROW_*`` code, ``ist[I_NEED]`` the room asked for, before anything of that instant
    happened). Compiled without reference counting and allocating nothing: no array is assigned again
    inside the loop. When the loop grew its arrays itself, numba counted every such loop-carried array at
    every iteration (two atomic operations each: 40 % of a 600k-job process's samples, perf, 2026-12-02)."""
    si, ci, pi = ist[I_SI], ist[I_CI], ist[I_PI]
    qsize, qhead, qtail = ist[I_QSIZE], ist[I_QHEAD], ist[I_QTAIL]
    hn, an, ts_n = ist[I_HN], ist[I_AN], ist[I_TS_N]
    t_prev = fst[0]
    n = submit.shape[0]
    npm = pm_t.shape[0]
    nc = cap_t.shape[0]
    code = DONE
    need = 0
    while True:
        # ------------------------------------------------------------- next instant
        t = INF
        if hn > 0:
            t = ht[0]
        if ci < nc and cap_t[ci] < t:
            t = cap_t[ci]
        if pi < npm and pm_t[pi] < t:
            t = pm_t[pi]
        if si < n and submit[si] < t:
            t = submit[si]
        if t >= horizon:  # code is DONE: an instant that asks for room returns
            break
        # room for the instant's worst case before any of it happens: every job queued after its kills
        # (at most the running jobs, each with an end in the heap) and submissions may start, each start
        # pushes an end and opens a log row, and those appends may compact the queue
        subs = 0
        while si + subs < n and submit[si + subs] == t:
            subs += 1
        kills = hn if ((ci < nc and cap_t[ci] == t) or (pi < npm and pm_t[pi] == t)) else 0
        starts = (qtail - qhead) + subs + kills
        code = DONE
        need = 0
        if hn + starts > ht.shape[0]:
            code, need = GROW_HEAP, hn + starts
        elif an + starts > alog.shape[0]:
            code, need = GROW_LOG, an + starts
        elif qtail + subs + kills > qsize:
            # queue._q_size_for without its scan: each compaction doubles the size from qsize until it
            # holds twice the live count (at most every position from the head and every append) plus 16
            need = qsize
            while need < 2 * (qtail - qhead + subs + kills) + 16:
                need *= 2
            if need > qjob.shape[0]:
                code = GROW_QUEUE
        if code == DONE and record_ts and ts_n >= ts.shape[1]:
            code = GROW_TS
        if code != DONE:
            break
        acc[A_EVENTS] += 1.0
        acc[A_AVAILABLE_CS] += acc[A_ALIVE_CORES] * (t - t_prev)
        acc[A_USED_CS] += acc[A_USED_CORES] * (t - t_prev)
        t_prev = t
        new_from = qtail
        nd = 0
        # ------------------------------------------------------------- 1. completions (kernel._complete)
        freed = False
        while hn > 0 and ht[0] == t:
            tt = ht[0]
            j = hx[0, 0]
            hn = heap1_pop(ht, hx, hn)
            if status[j] != RUNNING or start[j] + duration[j] != tt:
                continue  # stale entry of a terminated attempt
            m = on_machine[j]
            status[j] = COMPLETED
            k = cur_att[j]
            alog[k, LOG_END] = t
            alog[k, LOG_OUTCOME] = ATT_COMPLETED
            acc[A_COMPLETED_CS] += cores[j] * work[j]
            free_c[m] += cores[j]
            free_m[m] += mem[j]
            acc[A_USED_CORES] -= cores[j]
            if prv[j] >= 0:
                nxt[prv[j]] = nxt[j]
            else:
                head[m] = nxt[j]
            if nxt[j] >= 0:
                prv[nxt[j]] = prv[j]
            on_machine[j] = -1
            if head[m] < 0:  # empty machine: reset exactly (no float drift from fractional cores)
                free_c[m] = mcap[m]
                free_m[m] = machine_mem
            _mt_set(mtree, msize, m, free_c[m])
            freed = True
        # ------------------------------------------------------------- 2. capacity change
        cnt[C_NK] = 0
        if ci < nc and cap_t[ci] == t:
            f, nd = _set_machines_alive(
                t, cap_n[ci], jobs, mach, cores, duration, machine_cores, msize, term_policy, bound, adm, wake,
                next_cross, knot_idx, killed, cnt, acc, dirty, is_dirty, nd,
            )  # fmt: skip
            ci += 1
            freed = freed or f
        if pi < npm and pm_t[pi] == t:
            pi, f, nd = _machine_events(
                t, pi, pm_t, pm_m, pm_c, jobs, mach, row, cores, mem, duration, msize, term_policy, killed, cnt,
                acc, dirty, is_dirty, nd,
            )  # fmt: skip
            freed = freed or f
        if cnt[C_NK] > 0:
            qsize, qhead, qtail, moved = _terminate(
                t, killed, cnt[C_NK], jobs, mach, row, cores, duration, jcls, machine_mem, msize, term_policy, alog,
                acc, qjob, qt, qsize, qhead, qtail, work, ckd, ck, False, qxs,
            )  # fmt: skip
            if moved:  # positions moved: rescan everything
                freed = True
        for x in range(nd):
            is_dirty[dirty[x]] = False
        # ------------------------------------------------------------- 3. submissions (kernel._append)
        while si < n and submit[si] == t:
            if qtail < qsize:
                qjob[qtail] = si
                _qt_set(qt0, qsize, qtail, cores[si])
                qtail += 1
            else:  # compaction first (in place, in arrays the instant's room check grew to its size)
                qsize, qhead, qtail, moved = _append(
                    si, qjob, qt, qsize, qhead, qtail, cores, duration, jcls, qxs
                )
                freed = True
            si += 1
        # ------------------------------------------------------------- 4. the pass (kernel._kernel's, without
        # a predicate)
        lo = qhead if freed else new_from
        pos = _qt_first_le(qt0, qsize, lo, mtree[1]) if lo < qtail else -1
        while pos >= 0:
            j = qjob[pos]
            c = cores[j]
            m = _mt_first_ge(mtree, msize, 0, c)  # no per-job machine range (job_lo, job_hi: empty)
            while m >= 0:
                if m >= n_machines:
                    m = -1
                    break
                if not (not alive[m] or free_c[m] < c or (use_mem and free_m[m] < mem[j])):
                    break
                if m + 1 >= msize:
                    m = -1
                    break
                m = _mt_first_ge(mtree, msize, m + 1, c)
            if m >= 0:
                qjob[pos] = -1
                _qt_set(qt0, qsize, pos, INF)
                free_c[m] -= c
                free_m[m] -= mem[j]
                _mt_set(mtree, msize, m, free_c[m])
                start[j] = t
                status[j] = RUNNING
                on_machine[j] = m
                prv[j] = -1
                nxt[j] = head[m]
                if head[m] >= 0:
                    prv[head[m]] = j
                head[m] = j
                hn = heap1_push(ht, hx, hn, t + duration[j], j)
                alog[an, LOG_JOB] = j
                alog[an, LOG_START] = t
                alog[an, LOG_END] = horizon
                alog[an, LOG_OUTCOME] = ATT_RUNNING
                alog[an, LOG_MACHINE] = m
                cur_att[j] = an
                an += 1
                acc[A_USED_CORES] += c
            pos += 1
            pos = _qt_first_le(qt0, qsize, pos, mtree[1]) if pos < qtail else -1
        while qhead < qtail and qjob[qhead] < 0:
            qhead += 1
        # ------------------------------------------------------------- invariants (tests), time series
        if check:
            acc[A_VIOLATIONS] += _violations(mach, msize)
        if record_ts:  # the time series' column (its room checked at the instant's start)
            ts[0, ts_n] = t
            ts[1, ts_n] = acc[A_ALIVE_CORES]
            ts[2, ts_n] = acc[A_USED_CORES]
            ts_n += 1
    ist[I_SI], ist[I_CI], ist[I_PI] = si, ci, pi
    ist[I_QSIZE], ist[I_QHEAD], ist[I_QTAIL] = qsize, qhead, qtail
    ist[I_HN], ist[I_AN], ist[I_TS_N] = hn, an, ts_n
    ist[I_NEED] = need
    fst[0] = t_prev
    return code
