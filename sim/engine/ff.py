"""First-Fit's kernel: :func:`~sim.engine.kernel._kernel` for a rule that admits every job that fits.

A run with no admission predicate, no per-machine time bound, no timed wake-ups, no naive rescan and no
checkpointing (First-Fit and its termination variants) takes the same decisions as the general kernel —
the same instants, the same starts in the same order, the same float sums added in the same order — from
one flat loop: the per-event work (completions, submissions, the pass, the starts) is written out in the
loop over the kernel's own arrays, and what it calls takes no state bundle and calls nothing itself
(:func:`~sim.engine.kit.heap1_push`, :func:`~sim.engine.kit.heap1_pop`, the trees' set and search). numba counts references to arrays
with atomic operations: an inlined helper copies each array it takes (two atomic operations per array per
call), and a function that calls another keeps the count of each array argument, so the general kernel's
phases spent about half of First-Fit's time counting references. The rare phases (capacity changes,
terminations, queue compaction, invariant checks, the time series) are the general kernel's own functions; the
queue's arrays grow (:func:`~sim.engine.queue._q_room`) just before a compaction that needs more room.
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
    _record,
    _set_machines_alive,
    _terminate,
    _violations,
)
from sim.engine.kit import heap1_pop, heap1_push, heap_room
from sim.engine.log import LOG_END, LOG_JOB, LOG_MACHINE, LOG_OUTCOME, LOG_START, LOG_USEFUL
from sim.engine.queue import CLS_H2, CLS_H4, CLS_L, _q_room, _q_size_for, _qx_new
from sim.engine.trees import _mt_first_ge, _mt_set, _qt_first_le, _qt_set
from sim.metrics import ATT_COMPLETED, ATT_RUNNING, COMPLETED, RUNNING

INF = np.inf


@kernel_fn
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
    pi = 0
    npm = pm_t.shape[0]
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
    qhead = 0
    qtail = 0
    qxs = (
        _qx_new(jcls, cores, False, CLS_H2),
        _qx_new(jcls, cores, False, CLS_H4),
        _qx_new(jcls, cores, False, CLS_L),
    )
    ht = np.empty(n + 16)
    hx = np.empty((n + 16, 1), np.int64)
    hn = 0
    acc = np.zeros(N_ACC)
    cnt = np.zeros(2, np.int64)
    ts = np.empty((3, 1024))
    ts_n = 0
    killed = np.empty(n, np.int64)
    # no work column (LOG_USEFUL: checkpointing only): 8 bytes an attempt less of the run's peak memory
    alog = np.empty((2 * n + 16, LOG_USEFUL))
    an = 0

    si = 0
    ci = 0
    nc = cap_t.shape[0]
    t_prev = 0.0
    t = 0.0
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
        if t >= horizon:
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
            qneed = _q_size_for(qjob, qhead, qtail, qsize, cnt[C_NK])  # the killed jobs' appends may compact
            if qneed > qjob.shape[0]:
                qjob, qt = _q_room(qjob, qt, qsize, qneed)
                qt0 = qt[0]
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
            else:  # compaction first (in place, in arrays grown to its size)
                qneed = _q_size_for(qjob, qhead, qtail, qsize, 1)
                if qneed > qjob.shape[0]:
                    qjob, qt = _q_room(qjob, qt, qsize, qneed)
                    qt0 = qt[0]
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
                if hn >= ht.shape[0]:
                    ht, hx = heap_room(ht, hx, hn)
                hn = heap1_push(ht, hx, hn, t + duration[j], j)
                if an >= alog.shape[0]:  # log._log_open's growth
                    grown = np.empty((2 * alog.shape[0] + 16, LOG_USEFUL))
                    grown[:an] = alog[:an]
                    alog = grown
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
        if record_ts:
            ts, ts_n = _record(ts, ts_n, t, acc[A_ALIVE_CORES], acc[A_USED_CORES])
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
