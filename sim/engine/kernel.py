"""The kernel: one instant at a time, in phases (see :mod:`sim.engine` for the semantics).

Each instant ``t``: the completions (jobs ending at t), :func:`_set_machines_alive` or
:func:`_machine_events` (the capacity change; killed jobs collected), :func:`_terminate` (killed jobs back
to the queue, or failed), the submissions (:func:`_append` when the queue compacts),
:func:`~sim.engine.admission._wakeups` for timed admission rules, then the scheduling pass
(the dirty pass for old entries when only some machines changed, then the pass over the queue). The
per-event work — completions, submissions, the pass's search for the next position and machine, the
starts — is written out in the loop over arrays unpacked once before it, and its per-job calls go to
functions that call nothing and take no views (:func:`~sim.engine.admission._admit_flat`, the trees' searches,
:func:`~sim.engine.queue._q_put`, :func:`~sim.engine.queue._qx_put`): numba counts references to arrays with
atomic operations, an inlined helper copies each array it takes and a call that unpacks a bundle or takes a
view counts each one (:mod:`sim.engine.ff`). The pass's searches and admission tests are compiled without
reference counting (``kernel_fn(counted=False)``: they allocate and return no array), and the arrays that
grow (completion heap, attempt log, time series, the queue) are replaced only between instants, after room
for the instant's starts and appends is made, since an array replaced inside a loop is counted at each of
its joins. The rare phases take the state bundles: ``jobs`` (per-job arrays), ``mach`` (per-machine arrays
and the machine tree), ``acc`` (float accumulators, indexed by the ``A_*`` names), ``cnt`` (int counters
``C_*``) and the queue (arrays compacted in place; phases return its size, head and tail).
"""

from __future__ import annotations

import numpy as np

from sim.engine._jit import kernel_fn
from sim.engine.admission import (
    BOUND_NONE,
    H2_BANDED_FLAG,
    H2_FLAG,
    PRED_NONE,
    W_BOUNDARY,
    W_EPOCH,
    W_MIN_CROSS,
    W_NEED_EVAL,
    W_NEXT_WAKE,
    _admit,
    _admit_flat,
    _bound_at_up,
    _can_run,
    _class_bounds,
    _dirty_any,
    _dirty_bounds,
    _lit_due,
    _lit_lower,
    _lit_wake,
    _mark_dirty,
    _period_index,
    _wakeups,
)
from sim.engine.kit import copy_cols, copy_head, copy_rows, heap1_pop, heap1_push
from sim.engine.log import (
    LOG_COLUMNS,
    LOG_END,
    LOG_JOB,
    LOG_MACHINE,
    LOG_OUTCOME,
    LOG_START,
    LOG_USEFUL,
    _log_close,
)
from sim.engine.queue import (
    CLS_H2,
    CLS_H4,
    CLS_L,
    _front_build,
    _front_drop,
    _q_compact,
    _q_first_ias,
    _q_put,
    _q_room,
    _q_size_for,
    _qx_has,
    _qx_lowest,
    _qx_lowest_by,
    _qx_moved,
    _qx_new,
    _qx_put,
    _qx_set,
)
from sim.engine.trees import _mt2_first, _mt_first_ge, _mt_fix, _mt_set, _qt_first_le, _qt_set
from sim.metrics import ATT_COMPLETED, ATT_KILLED, ATT_RUNNING, COMPLETED, FAILED, QUEUED, RUNNING

INF = np.inf

# float accumulators (the first nine are the run's scalar results, in this order)
A_COMPLETED_CS, A_WASTED_CS, A_INFLIGHT_CS, A_AVAILABLE_CS, A_USED_CS = 0, 1, 2, 3, 4
A_TERMINATIONS, A_ABORTED_S, A_VIOLATIONS, A_EVENTS = 5, 6, 7, 8
A_USED_CORES, A_ALIVE_CORES = 9, 10
N_ACC = 11
# the dirty pass asks the position trees first, then (past this many nodes) the (cores, duration) index
DIRTY_BUDGET = 64
# a full pass builds the H4-class frontier after this many H4-class jobs that no machine took (pruning only:
# the pass starts the same jobs with or without it)
FRONT_AFTER_MISSES = 4
# int counters
C_N_ALIVE, C_NK = 0, 1


@kernel_fn(inline=True)
def _unlink(j, m, head, nxt, prv):
    """Remove job j from machine m's list of running jobs."""
    if prv[j] >= 0:
        nxt[prv[j]] = nxt[j]
    else:
        head[m] = nxt[j]
    if nxt[j] >= 0:
        prv[nxt[j]] = prv[j]


@kernel_fn
def _add_each(a, xs, sign):
    """``a`` plus (``sign`` 1) or minus (-1) each of ``xs`` in turn: the float that loop gives, in one step
    when every partial sum is an exact integer (integer terms and totals below 2**53)."""
    if a == np.floor(a) and np.all(xs == np.floor(xs)) and abs(a) + np.sum(np.abs(xs)) < 2.0**53:
        return a + sign * np.sum(xs)
    for x in xs:
        a += sign * x
    return a


@kernel_fn
def _set_machines_alive(
    t, target, jobs, mach, cores, duration, machine_cores, msize, term_policy, bound, adm, wake, next_cross,
    knot_idx, killed, cnt, acc, dirty, is_dirty, nd,
):  # fmt: skip
    """Phase 2 (machines-alive trace): turn on the lowest-index off machines, or turn off the machines the
    termination rule picks (their jobs go to ``killed``). Returns (freed, dirty count)."""
    first_start, start, end, attempts, terms, status, on_machine, nxt, prv, cur_att = jobs
    alive, free_c, free_m, head, mtree, mcap, up_since, ma4, lt = mach
    n_machines = alive.shape[0]
    freed = False
    if target > n_machines:
        target = n_machines
    if target < 0:
        target = 0
    # a change may turn thousands of machines on or off: whole-array steps (the interpreted engine's cost
    # per machine is then numpy's, not the interpreter's), one pass of the trees over the range touched
    # (_mt_fix); sums are still added machine by machine, in machine order (the same float results)
    if target > cnt[C_N_ALIVE]:
        on = np.flatnonzero(~alive)[: target - cnt[C_N_ALIVE]]  # the lowest-index off machines
        alive[on] = True
        up_since[on] = t
        knot_idx[on] = 0
        next_cross[on] = np.inf
        wake[W_NEED_EVAL] = 1.0
        if bound != BOUND_NONE:  # only a bound known at start-up (interval end) is set here
            for m in on:
                _bound_at_up(bound, m, t, ma4, msize, adm)
        fresh = on[~is_dirty[on]]  # _mark_dirty of each, in machine order
        is_dirty[fresh] = True
        copy_head(dirty[nd:], fresh, fresh.size)
        nd += fresh.size
        cnt[C_N_ALIVE] += on.size
        mcap[on] = machine_cores
        # element by element, not an array assigned through an index array (sim.engine.kit.copy_head)
        for m in on:
            if head[m] < 0:
                free_c[m] = machine_cores
            mtree[msize + m] = free_c[m]
        acc[A_ALIVE_CORES] = _add_each(acc[A_ALIVE_CORES], mcap[on], 1.0)
        _mt_fix(mtree, msize, on[0], on[-1])
        freed = True
    elif target < cnt[C_N_ALIVE]:
        n_alive = cnt[C_N_ALIVE]
        k = n_alive - target
        rule = term_policy % 4
        if rule == 0:  # lifo: the k highest-index alive machines, highest first
            vict = np.flatnonzero(alive)[n_alive - k :][::-1].copy()
        else:  # choose k victims among alive machines by score
            cand = np.empty(n_alive, np.int64)
            score = np.empty(n_alive)
            nc_ = 0
            for m in range(n_machines - 1, -1, -1):  # high index first: ties go to high index
                if alive[m]:
                    cand[nc_] = m
                    s = 0.0
                    if rule == 2:  # lww: work lost if turned off
                        j = head[m]
                        while j >= 0:
                            s += cores[j] * (t - start[j])
                            j = nxt[j]
                    elif rule == 3:  # lfd: the most-advanced job's fraction done
                        j = head[m]
                        while j >= 0:
                            f = (t - start[j]) / duration[j]
                            if f > s:
                                s = f
                            j = nxt[j]
                    else:
                        s = np.random.random()
                    score[nc_] = s
                    nc_ += 1
            vict = cand[np.argsort(score[:nc_], kind="mergesort")[:k]]
        alive[vict] = False
        cnt[C_N_ALIVE] -= k
        acc[A_ALIVE_CORES] = _add_each(acc[A_ALIVE_CORES], mcap[vict], -1.0)
        nk = cnt[C_NK]
        for m in vict[head[vict] >= 0]:  # their jobs, victim by victim
            j = head[m]
            while j >= 0:
                killed[nk] = j
                nk += 1
                j = nxt[j]
        head[vict] = -1
        mtree[msize + vict] = -1.0
        lo_m, hi_m = vict.min(), vict.max()
        _mt_fix(mtree, msize, lo_m, hi_m)
        if bound != BOUND_NONE:
            ma4[msize + vict] = -INF
            _mt_fix(ma4, msize, lo_m, hi_m)
            lt[0][msize + vict] = -INF  # literal H4's bound (max-tree of −L) and wake-up (min-tree)
            _mt_fix(lt[0], msize, lo_m, hi_m)
            for m in vict:
                _qt_set(lt[1], msize, m, INF)
        cnt[C_NK] = nk
    return freed, nd


@kernel_fn
def _victim_score(term_policy, t, st, c, d):
    """Per-machine mode: the job with the smallest score is killed first (see :func:`_machine_events`)."""
    if term_policy == 1:
        return np.random.random()
    if term_policy == 2:
        return c * (t - st)
    if term_policy == 3:
        return (t - st) / d
    return -st


@kernel_fn(inline=True)
def _row(row, j):
    """Job ``j``'s input row: ``row[j]``, or ``j`` when ``row`` is empty (jobs in submit order: the identity
    is not held, 8 bytes a job)."""
    return row[j] if row.shape[0] > 0 else j


@kernel_fn
def _machine_events(
    t, pi, pm_t, pm_m, pm_c, jobs, mach, row, cores, mem, duration, msize, term_policy, killed, cnt, acc,
    dirty, is_dirty, nd,
):  # fmt: skip
    """Phase 2 (per-machine trace, harvest VMs): a machine's cores change at t; a machine shrinking below
    its running jobs' demand kills jobs (victim rule: lifo newest start first, ties later input row;
    random; lww the least cores × (t − start); lfd the least (t − start) / duration; ties the lifo order)
    until they fit. Returns (next event index, freed, dirty count)."""
    first_start, start, end, attempts, terms, status, on_machine, nxt, prv, cur_att = jobs
    alive, free_c, free_m, head, mtree, mcap, up_since, ma4, lt = mach
    freed = False
    npm = pm_t.shape[0]
    while pi < npm and pm_t[pi] == t:
        m = pm_m[pi]
        newc = pm_c[pi]
        pi += 1
        old = mcap[m]
        if newc > old:
            if old <= 0.0:
                alive[m] = True
                up_since[m] = t
                cnt[C_N_ALIVE] += 1
            free_c[m] += newc - old
            acc[A_ALIVE_CORES] += newc - old
            mcap[m] = newc
            freed = True
            nd = _mark_dirty(m, dirty, is_dirty, nd)
            _mt_set(mtree, msize, m, free_c[m])
        elif newc < old:
            free_c[m] -= old - newc
            acc[A_ALIVE_CORES] -= old - newc
            mcap[m] = newc
            nk = cnt[C_NK]
            while head[m] >= 0 and (free_c[m] < -1e-9 or newc <= 0.0):
                best = head[m]
                bs = _victim_score(term_policy % 4, t, start[best], cores[best], duration[best])
                jj = nxt[best]
                while jj >= 0:
                    sj = _victim_score(term_policy % 4, t, start[jj], cores[jj], duration[jj])
                    if sj < bs or (
                        sj == bs
                        and (
                            start[jj] > start[best]
                            or (start[jj] == start[best] and _row(row, jj) > _row(row, best))
                        )
                    ):
                        best, bs = jj, sj
                    jj = nxt[jj]
                free_c[m] += cores[best]
                free_m[m] += mem[best]
                _unlink(best, m, head, nxt, prv)
                killed[nk] = best
                nk += 1
            cnt[C_NK] = nk
            if free_c[m] > 1e-9:  # a kill can leave more room than the last pass saw
                freed = True
                nd = _mark_dirty(m, dirty, is_dirty, nd)
            if newc <= 0.0:
                alive[m] = False
                cnt[C_N_ALIVE] -= 1
                _mt_set(mtree, msize, m, -1.0)
            else:
                _mt_set(mtree, msize, m, free_c[m])
    return pi, freed, nd


@kernel_fn(inline=True)
def _append(j, qjob, qt, qsize, qhead, qtail, cores, duration, jcls, qxs):
    """Append job j to the queue (compacting it in place first if the tail is at the end: the arrays must
    have room, :func:`~sim.engine.queue._q_room`; ``qxs``: the cores-ordered H2, H4 and L trees of
    :func:`~sim.engine.queue._qx_new`). Returns the queue's size, head and tail and whether positions moved
    (then the whole queue must be rescanned)."""
    moved = False
    if qtail >= qsize:
        qsize, qtail = _q_compact(qjob, qt, qhead, qtail, qsize, cores, duration, jcls)
        qhead = 0
        moved = True
    qjob[qtail] = j
    _q_put(qt, qsize, qtail, jcls[j], cores[j], duration[j])
    for x in range(3):
        if moved:
            _qx_moved(qxs[x], qjob, qtail)
        if _qx_has(qxs[x], j):  # job j is in this index (a call only then: First-Fit has none)
            _qx_set(qxs[x], j, -duration[j] if x == 2 else duration[j], qtail)
    return qsize, qhead, qtail + 1, moved


@kernel_fn
def _ck_len(work, done, restarted, ck):
    """Wall length of an attempt with ``done`` checkpoints committed (:func:`sim.checkpoint.attempt_length`)."""
    n = 0
    if ck[0] > 0.0:
        n = max(int(np.ceil(work / ck[0])) - 1, 0)
    r = ck[2] if restarted else 0.0
    return r + (work - done * ck[0]) + (n - done) * ck[1]


@kernel_fn
def _ck_kept(elapsed, work, done, restarted, ck):
    """Checkpoints an attempt killed after ``elapsed`` completed (:func:`sim.checkpoint.killed_progress`)."""
    r = ck[2] if restarted else 0.0
    if ck[0] <= 0.0 or elapsed <= r:
        return 0
    n = max(int(np.ceil(work / ck[0])) - 1, 0)
    k = min(int(np.floor((elapsed - r) / (ck[0] + ck[1]))), n - done)
    return max(k, 0)


@kernel_fn
def _terminate(
    t, killed, nk, jobs, mach, row, cores, duration, jcls, machine_mem, msize, term_policy, alog, acc, qjob,
    qt, qsize, qhead, qtail, work, ckd, ck, use_ck, qxs,
):  # fmt: skip
    """Phase 2b: killed jobs — earlier start first, then input order — count their wasted work and go to
    the back of the queue (``<rule>-fail``: fail for good); empty machines reset. With checkpointing
    (``use_ck``) a requeued job keeps the checkpoints its attempt completed and its next attempt's wall
    length (``duration``) is set. The queue's arrays must have room for ``nk`` appends
    (:func:`~sim.engine.queue._q_room`). Returns the queue's size, head and tail and whether its positions
    moved."""
    first_start, start, end, attempts, terms, status, on_machine, nxt, prv, cur_att = jobs
    alive, free_c, free_m, head, mtree, mcap, up_since, ma4, lt = mach
    moved = False
    ks = killed[:nk].copy()
    keys = np.empty(nk)
    for r in range(nk):
        keys[r] = start[ks[r]]
    # stable sort by input row, then by start; the rows as float keys (exact below 2**53): numba's stable
    # argsort is then the one compiled for float keys, not a second copy for int64 (the same order)
    rk = np.empty(nk)
    for r in range(nk):
        rk[r] = _row(row, ks[r])
    ks = ks[np.argsort(rk, kind="mergesort")]
    for r in range(nk):
        keys[r] = start[ks[r]]
    ks = ks[np.argsort(keys, kind="mergesort")]
    for r in range(nk):
        j = ks[r]
        acc[A_USED_CORES] -= cores[j]
        if use_ck and term_policy < 4:
            k = _ck_kept(t - start[j], work[j], ckd[j], terms[j] > 0, ck[j])
            alog[cur_att[j], LOG_USEFUL] = k * ck[j, 0]
            acc[A_WASTED_CS] += cores[j] * ((t - start[j]) - k * ck[j, 0])
            ckd[j] += k
            duration[j] = _ck_len(work[j], ckd[j], True, ck[j])
        else:
            acc[A_WASTED_CS] += cores[j] * (t - start[j])
        _log_close(alog, cur_att, j, t, ATT_KILLED)
        acc[A_ABORTED_S] += t - start[j]
        acc[A_TERMINATIONS] += 1.0
        terms[j] += 1
        on_machine[j] = -1
        nxt[j] = -1
        prv[j] = -1
        if term_policy >= 4:  # the job fails for good
            status[j] = FAILED
            continue
        status[j] = QUEUED
        qsize, qhead, qtail, mv = _append(j, qjob, qt, qsize, qhead, qtail, cores, duration, jcls, qxs)
        moved = moved or mv
    for m in range(alive.shape[0]):
        if head[m] < 0:
            free_c[m] = mcap[m]
            free_m[m] = machine_mem
        _mt_set(mtree, msize, m, free_c[m] if alive[m] else -1.0)
    return qsize, qhead, qtail, moved


@kernel_fn(counted=False)
def _dirty_next(lo, qt, qsize, qxs, dm, nd, alive, free_c, ma4, msize, cls_lo, cls_hi, use_bound, cu, c2, r2, c4,
                g4, cu2, cl, gl, lt, t, slack, stk, fv, fb):  # fmt: skip
    """The dirty pass's next position >= lo: the lowest of what :func:`~sim.engine.queue._q_first_ias`
    lets through for classes U and U2 and, for H2-, H4- and L-class jobs, of those with cores and duration
    admissible together on one dirty machine (:func:`~sim.engine.queue._qx_lowest`; all of them also
    pass the class bounds ``c2, r2, c4, g4, cl, gl`` that the position-tree search applies). Falls back to
    that search when one machine would let many jobs through. -1: none.

    A machine's jobs are a subset of another's when it has no more free cores and no later bound, so the H2
    class asks once with the dirty machines' most free cores (its duration limit is the same everywhere)
    and the H4 and L classes skip a machine dominated by the one asked just before (machines turned on
    together often share both)."""
    p4 = -1
    if c2 > -INF:
        p4 = _qx_lowest(qxs[0], c2, r2, lo, r2, p4, 64, stk)
        if p4 == -2:
            return _q_first_ias(qt, qsize, lo, cu, c2, r2, c4, g4, cu2, cl, gl, stk, fv, fb, -1, t, 0)
    if c4 > -INF:
        fp = -INF
        gp = -INF
        for x in range(nd):
            m = dm[x]
            if not alive[m] or m < cls_lo[2] or m >= cls_hi[2]:
                continue
            g = ma4[msize + m] - t + 2.0 * slack if use_bound else INF
            f = free_c[m]
            if f <= fp and g <= gp:
                continue
            fp = f
            gp = g
            p4 = _qx_lowest(qxs[1], f, g, lo, g4, p4, 64, stk)
            if p4 == -2:
                return _q_first_ias(qt, qsize, lo, cu, c2, r2, c4, g4, cu2, cl, gl, stk, fv, fb, -1, t, 0)
    if cl > -INF:
        fp = -INF
        gp = -INF
        for x in range(nd):
            m = dm[x]
            if not alive[m] or m < cls_lo[CLS_L] or m >= cls_hi[CLS_L]:
                continue
            g = lt[0, msize + m] + t + 2.0 * slack
            f = free_c[m]
            if f <= fp and g <= gp:
                continue
            fp = f
            gp = g
            p4 = _qx_lowest_by(qxs[2], f, g, lo, INF, p4, 64, stk, 1.0)
            if p4 == -2:
                return _q_first_ias(qt, qsize, lo, cu, c2, r2, c4, g4, cu2, cl, gl, stk, fv, fb, -1, t, 0)
    po = _q_first_ias(qt, qsize, lo, cu, -INF, r2, -INF, g4, cu2, -INF, gl, stk, fv, fb, -1, t, 0)
    if po < 0 or (p4 >= 0 and p4 < po):
        return p4
    return po


@kernel_fn(inline=True)
def _find_machine(j, t, full_rescan, use_bound, jcls, job_lo, job_hi, cores, mem, use_mem, duration, mach, msize,
                  pred, adm, stk):  # fmt: skip
    """The lowest-index machine in job j's range that can run it now, or -1."""
    alive, free_c, free_m, head, mtree, mcap, up_since, ma4, lt = mach
    if full_rescan:
        # reference path (tests): scan machines linearly, no pruning
        m = job_lo[j]
        while m < job_hi[j] and not _can_run(
            pred, j, m, t, cores, mem, use_mem, duration, alive, free_c, free_m, adm
        ):
            m += 1
        return m if m < job_hi[j] else -1
    by_bound = use_bound and (jcls[j] == CLS_H4 or jcls[j] == CLS_L)
    tg = 0.0
    tb = ma4
    if by_bound:
        if jcls[j] == CLS_H4:  # H4: t + d < the machine's bound
            tg = t + duration[j] - 1e-9 * (abs(t) + duration[j] + 1.0)
        else:  # literal H4: t + d >= the machine's bound L (lt[0] holds -L)
            tb = lt[0]
            tg = -(t + duration[j]) - 2e-9 * (abs(t) + duration[j] + 1.0)
    if by_bound:
        m = _mt2_first(mtree, tb, msize, job_lo[j], cores[j], tg, stk)
    else:
        m = _mt_first_ge(mtree, msize, job_lo[j], cores[j])
    while m >= 0:
        if m >= job_hi[j]:
            return -1
        # _can_run written out (see the dirty pass)
        if not (not alive[m] or free_c[m] < cores[j] or (use_mem and free_m[m] < mem[j])) and (
            pred == PRED_NONE or _admit(pred, j, m, t, duration, adm)
        ):
            return m
        if m + 1 >= msize:
            return -1
        if by_bound:
            m = _mt2_first(mtree, tb, msize, m + 1, cores[j], tg, stk)
        else:
            m = _mt_first_ge(mtree, msize, m + 1, cores[j])
    return -1


@kernel_fn
def _violations(mach, msize):
    """Invariant breaches at this instant (tests): over-commit, a job on an off machine, a stale tree."""
    alive, free_c, free_m, head, mtree, mcap, up_since, ma4, lt = mach
    v = 0
    for m in range(alive.shape[0]):
        if free_c[m] < -1e-9 or free_m[m] < -1e-9:
            v += 1
        if not alive[m] and head[m] >= 0:
            v += 1
        if alive[m] and mtree[msize + m] != free_c[m]:
            v += 1
    return v


@kernel_fn
def _record(ts, ts_n, t, alive_cores, used_cores):
    """Append (t, alive cores, used cores) to the time series (grown by doubling)."""
    if ts_n >= ts.shape[1]:
        grown = np.empty((3, 2 * ts.shape[1]))
        copy_cols(grown, ts, ts_n)
        ts = grown
    ts[0, ts_n] = t
    ts[1, ts_n] = alive_cores
    ts[2, ts_n] = used_cores
    return ts, ts_n + 1


@kernel_fn(entry=True)
def _kernel(
    row, submit, duration, cores, mem, use_mem, cap_t, cap_n, n_machines, msize, machine_cores, machine_mem,
    horizon, term_policy, seed, qsize0, record_ts, check, pred, bound, timed, job_lo, job_hi, adm, full_rescan,
    use_frontier, jcls, cls_lo, cls_hi, pm_t, pm_m, pm_c, ck, terms,
):  # fmt: skip
    """Run the simulation; returns (first_start, end, attempts, terms, status, acc, ts, attempt log).
    ``ck`` = each job's checkpoint τ, δ, R, one row a job (:mod:`sim.checkpoint`; no rows: off, and ``work``
    below is ``duration``). ``row``: each job's input row, or empty when it is the job's index (jobs given in
    submit order). ``terms``: zeros, one a job, the caller's (returned with each job's terminations: a
    ``numpy.zeros`` array's pages take memory only where a job is killed)."""
    n = submit.shape[0]
    # checkpointing: `duration` becomes each job's next attempt length (a copy), `work` keeps its own
    work = duration
    use_ck = ck.shape[0] > 0
    ckd = np.zeros(n if use_ck else 0, np.int64)
    if use_ck:
        duration = work.copy()
        for jj in range(n):
            duration[jj] = _ck_len(work[jj], 0, False, ck[jj])
    pi = 0
    npm = pm_t.shape[0]
    use_bound = bound != BOUND_NONE  # a per-machine time bound prunes the pass
    stk = np.empty((3, 128), np.int64)  # DFS stacks for the pruned searches (depth <= 2 log2 size)
    cb = np.zeros(9)  # the pass's class bounds (_class_bounds in cb[:7], cb[7] = 1 while valid; machines)
    cb[8] = n_machines
    # the admission inputs one by one (the pass calls _admit_flat with them: see the loop's names below)
    (jflag, period, a_thresh, p90, up_since, mt, ms, mn, mk, mtl, mkn, mmax, epoch_s, iv_ptr, iv_end, band,
     jthresh) = adm  # fmt: skip
    any_h2 = False
    for jj in range(n):
        if (jflag[jj] & (H2_FLAG | H2_BANDED_FLAG)) != 0:  # both wake at period boundaries
            any_h2 = True
            break
    # wake-up state of timed rules (see admission._wakeups)
    wake = np.empty(5)
    wake[W_EPOCH] = 0.0
    wake[W_BOUNDARY] = -1.0
    wake[W_NEED_EVAL] = 1.0
    wake[W_MIN_CROSS] = 1e300
    wake[W_NEXT_WAKE] = INF
    next_cross = np.full(n_machines, np.inf)
    knot_idx = np.zeros(n_machines, np.int64)
    # machines whose state improved this instant: a job refused before can only be admitted now on one of
    # them, unless a global wake (boundary, epoch, queue compaction) happened
    dirty = np.empty(n_machines, np.int64)
    is_dirty = np.zeros(n_machines, np.bool_)
    # H4-class frontier (queue._front_build): built in a pass that rescans the queue from its head once it
    # has met FRONT_AFTER_MISSES refused H4-class jobs, kept exact through that pass's later starts
    front = (
        np.zeros(n_machines),  # fv: free cores, descending
        np.zeros(n_machines),  # fb: running best time bound
        np.zeros(n_machines, np.int64),  # fm: machine at each place
        np.full(n_machines, -1, np.int64),  # fpos: place of each machine
        np.zeros(1, np.int64),  # fk: count
    )
    np.random.seed(seed)
    jobs = (
        np.full(n, -1.0),  # first_start
        np.full(n, -1.0),  # start
        np.full(n, -1.0),  # end
        np.zeros(n, np.int64),  # attempts
        terms,
        np.zeros(n, np.int8),  # status
        # machine, running-list links and attempt row in 4 bytes, as First-Fit's kernel has them (the phases'
        # same compiled versions): 21 MB less to touch on 1.3M jobs
        np.full(n, -1, np.int32),  # on_machine
        np.full(n, -1, np.int32),  # nxt
        np.full(n, -1, np.int32),  # prv
        np.full(n, -1, np.int32),  # cur_att
    )
    mach = (
        np.zeros(n_machines, np.bool_),  # alive
        np.zeros(n_machines),  # free_c
        np.full(n_machines, machine_mem),  # free_m
        np.full(n_machines, -1, np.int64),  # head
        np.full(2 * msize, -1.0),  # mtree
        np.zeros(n_machines),  # mcap: cores each machine has while on
        up_since,
        np.full(2 * msize, -INF),  # ma4: max over machines of the time bound
        # literal H4 (class L): row 0 the max-tree of each machine's bound L negated (-inf: none), row 1 the
        # min-tree of each machine's wake-up time (admission._lit_wake; +inf: none)
        np.vstack((np.full((1, 2 * msize), -INF), np.full((1, 2 * msize), INF))),
    )
    # the loop reads the bundles' arrays through these names: unpacking a bundle (or passing it to an inlined
    # helper) inside the loop costs two atomic reference-count operations per array each time (see
    # sim.engine.ff); the rare phases still take the bundles
    first_start, start, end, attempts, terms, status, on_machine, nxt, prv, cur_att = jobs
    alive, free_c, free_m, head, mtree, mcap, _up, ma4, lt = mach
    lt0 = lt[0]
    fv, fb = front[0], front[1]
    # queue (positions are append order; trees over positions hold demand or +inf)
    qsize = qsize0
    qjob = np.full(qsize, -1, np.int64)
    qt = np.full((1 if pred == PRED_NONE else 8, 2 * qsize), INF)
    qhead = 0
    qtail = 0
    # queued H2-, H4- and L-class jobs by cores (the dirty pass's search; empty unless a rule prunes; class
    # L's also times the literal wake-ups, which the naive rescan (full_rescan) shares)
    qx_on = pred != PRED_NONE and not full_rescan
    use_lit = timed and cls_hi[CLS_L] > cls_lo[CLS_L]
    qxs = (
        _qx_new(jcls, cores, qx_on, CLS_H2),
        _qx_new(jcls, cores, qx_on, CLS_H4),
        _qx_new(jcls, cores, use_lit, CLS_L),
    )
    x2t, x2r, _x2s, x2p = qxs[0]
    x4t, x4r, _x4s, x4p = qxs[1]
    xlt, xlr, _xls, xlp = qxs[2]
    # completion heap (one live entry per running job, stale entries skipped)
    ht = np.empty(n + 16)
    hx = np.empty((n + 16, 1), np.int64)
    hn = 0
    acc = np.zeros(N_ACC)
    cnt = np.zeros(2, np.int64)
    ts = np.empty((3, 1024))
    ts_n = 0
    killed = np.empty(n, np.int64)
    # room for two attempts a job: np.empty's untouched pages take no memory, and a log that doubled
    # late in the run held the old and the new copy at once (the run's peak RSS)
    alog = np.empty((2 * n + 16, LOG_COLUMNS))
    an = 0

    si = 0
    ci = 0
    nc = cap_t.shape[0]
    t_prev = 0.0
    t = 0.0
    room = 0  # starts this instant may make at most (see below)
    qneed = qsize  # the queue's size this instant may reach (see below)
    done = False
    while not done:
        # the arrays that grow (completion heap, attempt log, time series, queue) are replaced only here, between
        # instants, never in the instant loop below: an array replaced in a loop is a new variable at every
        # iteration, which numba counts (two atomic operations) at each of the loop's joins
        if hn + room > ht.shape[0]:
            size = max(2 * hn + 16, hn + room)
            ht2 = np.empty(size)
            hx2 = np.empty((size, hx.shape[1]), np.int64)
            copy_head(ht2, ht, hn)
            copy_rows(hx2, hx, hn)
            ht = ht2
            hx = hx2
        if an + room > alog.shape[0]:  # log._log_open's growth, or more
            grown = np.empty((max(2 * alog.shape[0] + 16, an + room), LOG_COLUMNS))
            copy_rows(grown, alog, an)
            alog = grown
        if record_ts and ts_n >= ts.shape[1]:
            grown_ts = np.empty((3, 2 * ts.shape[1]))
            copy_cols(grown_ts, ts, ts_n)
            ts = grown_ts
        qjob, qt = _q_room(qjob, qt, qsize, qneed)  # room for the compactions the instant may make
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
            if wake[W_NEXT_WAKE] < t and qtail > qhead:
                t = wake[W_NEXT_WAKE]
            if use_lit and lt[1, 1] < t and qtail > qhead:
                t = lt[1, 1]
            if t >= horizon:
                done = True
                break
            # room for this instant's starts (at most the queued jobs, the killed ones — at most the running
            # jobs, each with a heap entry — and the submissions at t) and its time-series row, else grow
            # first (above; nothing of this instant has happened yet)
            k = si
            while k < n and submit[k] == t:
                k += 1
            room = (qtail - qhead) + hn + (k - si)
            if hn + room > ht.shape[0] or an + room > alog.shape[0] or (record_ts and ts_n >= ts.shape[1]):
                break
            # the queue's appends: the submissions at t and, at a capacity change, the killed jobs (at most the
            # running ones, each with a heap entry); compaction works in place, in arrays that hold the size
            # it may reach
            kills = hn if (ci < nc and cap_t[ci] == t) or (pi < npm and pm_t[pi] == t) else 0
            if qtail + (k - si) + kills >= qsize:  # the tail may reach the end (else no compaction: no call)
                qneed = _q_size_for(qjob, qhead, qtail, qsize, (k - si) + kills)
                if qneed > qjob.shape[0]:
                    break
            acc[A_EVENTS] += 1.0
            acc[A_AVAILABLE_CS] += acc[A_ALIVE_CORES] * (t - t_prev)
            acc[A_USED_CS] += acc[A_USED_CORES] * (t - t_prev)
            t_prev = t
            global_wake = False
            new_from = qtail
            # ------------------------------------------------------------- 1. completions (_complete written out)
            freed = False
            nd = 0
            while hn > 0 and ht[0] == t:
                tt = ht[0]
                j = hx[0, 0]
                hn = heap1_pop(ht, hx, hn)
                if status[j] != RUNNING or start[j] + duration[j] != tt:
                    continue  # stale entry of a terminated attempt
                m = on_machine[j]
                status[j] = COMPLETED
                end[j] = t
                k = cur_att[j]
                alog[k, LOG_END] = t
                alog[k, LOG_OUTCOME] = ATT_COMPLETED
                acc[A_COMPLETED_CS] += cores[j] * work[j]
                if use_ck:  # the attempt's recovery and checkpoint writes are not the job's work
                    rest = work[j] - ckd[j] * ck[j, 0]
                    alog[k, LOG_USEFUL] = rest
                    acc[A_WASTED_CS] += cores[j] * (duration[j] - rest)
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
                if not is_dirty[m]:
                    is_dirty[m] = True
                    dirty[nd] = m
                    nd += 1
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
                    acc, qjob, qt, qsize, qhead, qtail, work, ckd, ck, use_ck, qxs,
                )  # fmt: skip
                if moved:  # positions moved: rescan everything
                    freed = True
                    global_wake = True
            # ------------------------------------------------------------- 3. submissions (_append written out
            # while the tail has room)
            while si < n and submit[si] == t:
                if qtail < qsize:
                    qjob[qtail] = si
                    _q_put(qt, qsize, qtail, jcls[si], cores[si], duration[si])
                    _qx_put(x2t, x2r, x2p, si, duration[si], qtail)
                    _qx_put(x4t, x4r, x4p, si, duration[si], qtail)
                    _qx_put(xlt, xlr, xlp, si, -duration[si], qtail)
                    qtail += 1
                else:  # compaction first: positions moved, rescan everything
                    qsize, qhead, qtail, moved = _append(
                        si, qjob, qt, qsize, qhead, qtail, cores, duration, jcls, qxs
                    )
                    freed = True
                    global_wake = True
                si += 1
            # ------------------------------------------------------------- 4. scheduling pass
            # timed admission: wake (rescan the whole queue) when it may have become true. Before the next wake-up
            # time (less a margin for rounding) and with no machine to look at, _wakeups would change nothing
            nw = wake[W_NEXT_WAKE]
            if timed and (wake[W_NEED_EVAL] != 0.0 or t >= nw - (abs(nw) * 1e-9 + 1e-6)):
                f, g, nd = _wakeups(t, adm, any_h2, alive, wake, next_cross, knot_idx, ma4, msize, dirty, is_dirty,
                                    nd, lt, use_lit)  # fmt: skip
                freed = freed or f
                global_wake = global_wake or g
            if use_lit and lt[1, 1] <= t:  # queued class-L jobs reach some machines' bounds now
                nd = _lit_due(lt, msize, t, dirty, is_dirty, nd, stk)
                freed = True
            lo = qhead if (freed or full_rescan) else new_from
            slack = 1e-9 * (abs(t) + 1.0)
            phase = t - _period_index(t, period) * period
            r2 = INF if phase == 0.0 else (period - phase) * (1.0 + 1e-9) + 1e-9
            if pred != PRED_NONE and not full_rescan and not global_wake:
                # old queue entries: only the dirty machines can take them now. Each possibly admissible job is
                # tried on those machines only (lowest index first); nothing when no queued job can pass on any
                # of them (_dirty_any)
                if (
                    nd > 0
                    and new_from > qhead
                    and _dirty_any(
                        dirty,
                        nd,
                        alive,
                        free_c,
                        ma4,
                        msize,
                        cls_lo,
                        cls_hi,
                        use_bound,
                        qt,
                        qxs,
                        r2,
                        t,
                        slack,
                        lt,
                    )
                ):
                    if nd > 1:  # in place: the dirty list itself, no view kept in a variable of the loop
                        dirty[:nd].sort()
                    cu, c2, c4, g4, cu2, cl, gl = _dirty_bounds(
                        dirty, nd, alive, free_c, ma4, msize, cls_lo, cls_hi, use_bound, lt
                    )
                    if not use_bound:
                        g4 = INF
                    pos = _q_first_ias(
                        qt, qsize, qhead, cu, c2, r2, c4, g4 - t + slack, cu2, cl, gl + t + 2.0 * slack, stk, fv, fb, -1,
                        t, DIRTY_BUDGET,
                    )  # fmt: skip
                    # -2: many subtrees pass the class bounds without a job that passes on one machine
                    if pos == -2:
                        pos = _dirty_next(qhead, qt, qsize, qxs, dirty, nd, alive, free_c, ma4, msize, cls_lo, cls_hi,
                                          use_bound, cu, c2, r2, c4, g4 - t + slack, cu2, cl, gl + t + 2.0 * slack, lt, t,
                                          slack, stk, fv, fb)  # fmt: skip
                    while pos >= 0 and pos < new_from:
                        j = qjob[pos]
                        m = -1
                        for x in range(nd):
                            mm = dirty[x]
                            # _can_run written out: the predicate's call only for a job that fits
                            if job_lo[j] <= mm < job_hi[j] and not (
                                not alive[mm] or free_c[mm] < cores[j] or (use_mem and free_m[mm] < mem[j])
                            ):
                                ok = _admit_flat(pred, j, mm, t, duration[j], jflag, period, a_thresh, p90, up_since, mt,
                                                 ms, mn, mk, mtl, mkn, mmax, epoch_s, iv_ptr, iv_end, band, jthresh)  # fmt: skip
                                if ok:
                                    m = mm
                                    break
                        if m >= 0:
                            # ---- start job j on machine m (as in the pass below)
                            qjob[pos] = -1
                            _q_put(qt, qsize, pos, jcls[j], INF, INF)
                            _qx_put(x2t, x2r, x2p, j, INF, -1)
                            _qx_put(x4t, x4r, x4p, j, INF, -1)
                            _qx_put(xlt, xlr, xlp, j, INF, -1)
                            free_c[m] -= cores[j]
                            free_m[m] -= mem[j]
                            _mt_set(mtree, msize, m, free_c[m])
                            start[j] = t
                            if first_start[j] < 0:
                                first_start[j] = t
                            attempts[j] += 1
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
                            alog[an, LOG_USEFUL] = 0.0
                            cur_att[j] = an
                            an += 1
                            acc[A_USED_CORES] += cores[j]
                            cu, c2, c4, g4, cu2, cl, gl = _dirty_bounds(
                                dirty, nd, alive, free_c, ma4, msize, cls_lo, cls_hi, use_bound, lt
                            )
                            if not use_bound:
                                g4 = INF
                            if not _dirty_any(
                                dirty,
                                nd,
                                alive,
                                free_c,
                                ma4,
                                msize,
                                cls_lo,
                                cls_hi,
                                use_bound,
                                qt,
                                qxs,
                                r2,
                                t,
                                slack,
                                lt,
                            ):
                                break  # no queued job can pass on a dirty machine now
                        lo = pos + 1
                        pos = _q_first_ias(
                            qt, qsize, lo, cu, c2, r2, c4, g4 - t + slack, cu2, cl, gl + t + 2.0 * slack, stk, fv, fb, -1,
                            t, DIRTY_BUDGET,
                        )  # fmt: skip
                        if pos == -2:
                            pos = _dirty_next(lo, qt, qsize, qxs, dirty, nd, alive, free_c, ma4, msize, cls_lo, cls_hi,
                                              use_bound, cu, c2, r2, c4, g4 - t + slack, cu2, cl, gl + t + 2.0 * slack, lt,
                                              t, slack, stk, fv, fb)  # fmt: skip
                lo = new_from
            # the pass: from lo, front to back, each possibly fitting job on the lowest-index machine that can run
            # it (jobs that do not fit keep their place)
            # the frontier is built lazily: only once this pass has tried FRONT_AFTER_MISSES H4-class jobs that no
            # machine took (a pass that starts what it visits, e.g. a short queue, never pays its O(M log M) build)
            use_front = (
                use_frontier and use_bound and not full_rescan and lo == qhead and cls_hi[2] > cls_lo[2]
            )
            fn = -1
            misses = 0
            cb[7] = 0.0
            pos = lo
            while True:
                # ---- the next position >= pos the pass should look at
                if full_rescan:
                    while pos < qtail and qjob[pos] < 0:
                        pos += 1
                    if pos >= qtail:
                        break
                elif pos >= qtail:  # past the last queued job (a pass that just started the newest one)
                    break
                elif use_bound:
                    if cb[7] == 0.0:
                        cb[0], cb[1], cb[2], cb[3], cb[4], cb[5], cb[6] = _class_bounds(
                            mtree, ma4, msize, cls_lo, cls_hi, lt, n_machines
                        )
                        cb[7] = 1.0
                    pos = _q_first_ias(
                        qt, qsize, pos, cb[0], cb[1], r2, cb[2], cb[3] - t + slack, cb[4], cb[5],
                        cb[6] + t + 2.0 * slack, stk, fv, fb, fn, t - 2.0 * slack, 0,
                    )  # fmt: skip
                    if pos < 0:
                        break
                else:
                    pos = _qt_first_le(qt[0], qsize, pos, mtree[1])
                    if pos < 0:
                        break
                j = qjob[pos]
                # ---- the lowest-index machine in job j's range that can run it now
                if full_rescan:
                    m = _find_machine(j, t, full_rescan, use_bound, jcls, job_lo, job_hi, cores, mem, use_mem, duration,
                                      mach, msize, pred, adm, stk)  # fmt: skip
                else:
                    cj = cores[j]
                    hi_j = job_hi[j]
                    tg = 0.0
                    by = 0  # 1: H4, t + d < the machine's bound; 2: literal H4, t + d >= its bound L (lt[0]: -L)
                    if use_bound and jcls[j] == CLS_H4:
                        by = 1
                        tg = t + duration[j] - 1e-9 * (abs(t) + duration[j] + 1.0)
                        m = _mt2_first(mtree, ma4, msize, job_lo[j], cj, tg, stk)
                    elif use_bound and jcls[j] == CLS_L:
                        by = 2
                        tg = -(t + duration[j]) - 2e-9 * (abs(t) + duration[j] + 1.0)
                        m = _mt2_first(mtree, lt0, msize, job_lo[j], cj, tg, stk)
                    else:
                        m = _mt_first_ge(mtree, msize, job_lo[j], cj)
                    while m >= 0:
                        if m >= hi_j:
                            m = -1
                            break
                        # _can_run written out (see the dirty pass)
                        if not (not alive[m] or free_c[m] < cj or (use_mem and free_m[m] < mem[j])):
                            if pred == PRED_NONE:
                                break
                            ok = _admit_flat(pred, j, m, t, duration[j], jflag, period, a_thresh, p90, up_since, mt, ms,
                                             mn, mk, mtl, mkn, mmax, epoch_s, iv_ptr, iv_end, band, jthresh)  # fmt: skip
                            if ok:
                                break
                        if m + 1 >= msize:
                            m = -1
                            break
                        if by == 1:
                            m = _mt2_first(mtree, ma4, msize, m + 1, cj, tg, stk)
                        elif by == 2:
                            m = _mt2_first(mtree, lt0, msize, m + 1, cj, tg, stk)
                        else:
                            m = _mt_first_ge(mtree, msize, m + 1, cj)
                if m >= 0:
                    # ---- start job j on machine m
                    qjob[pos] = -1
                    _q_put(qt, qsize, pos, jcls[j], INF, INF)
                    _qx_put(x2t, x2r, x2p, j, INF, -1)
                    _qx_put(x4t, x4r, x4p, j, INF, -1)
                    _qx_put(xlt, xlr, xlp, j, INF, -1)
                    free_c[m] -= cores[j]
                    free_m[m] -= mem[j]
                    _mt_set(mtree, msize, m, free_c[m])
                    start[j] = t
                    if first_start[j] < 0:
                        first_start[j] = t
                    attempts[j] += 1
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
                    alog[an, LOG_USEFUL] = 0.0
                    cur_att[j] = an
                    an += 1
                    acc[A_USED_CORES] += cores[j]
                    cb[7] = 0.0  # the machine trees changed
                    if fn >= 0:
                        _front_drop(front, m, free_c[m], ma4, msize)
                elif use_front and fn < 0 and jcls[j] == CLS_H4:
                    misses += 1
                    if misses >= FRONT_AFTER_MISSES:
                        _front_build(front, alive, free_c, ma4, msize, cls_lo[2], cls_hi[2])
                        fn = front[4][0]
                pos += 1
            if use_lit:
                # literal H4's wake-up times after this instant: anew on every machine after a global wake (or a
                # compaction, which moved the positions), else on the dirty machines (their bound, free cores or
                # the due jobs changed), and lowered for the class-L jobs queued this instant and not started
                tol = 2.0 * slack
                if global_wake:
                    for mm in range(n_machines):
                        _qt_set(lt[1], msize, mm, _lit_wake(mm, t, tol, alive, free_c, lt, msize, qxs[2], cls_lo,
                                                            cls_hi, stk))  # fmt: skip
                else:
                    for x in range(nd):
                        mm = dirty[x]
                        _qt_set(lt[1], msize, mm, _lit_wake(mm, t, tol, alive, free_c, lt, msize, qxs[2], cls_lo,
                                                            cls_hi, stk))  # fmt: skip
                    for p in range(new_from, qtail):
                        j = qjob[p]
                        if j >= 0 and jcls[j] == CLS_L:
                            _lit_lower(j, t, tol, job_lo[j], job_hi[j], cores[j], duration[j], alive, free_c, lt,
                                       msize)  # fmt: skip
            for x in range(nd):
                is_dirty[dirty[x]] = False
            while qhead < qtail and qjob[qhead] < 0:
                qhead += 1
            # ------------------------------------------------------------- invariants (tests), time series
            if check:
                acc[A_VIOLATIONS] += _violations(mach, msize)
            if record_ts:
                ts[0, ts_n] = t  # _record written out (its room is made above)
                ts[1, ts_n] = acc[A_ALIVE_CORES]
                ts[2, ts_n] = acc[A_USED_CORES]
                ts_n += 1
    # ---- close the books at the horizon
    if horizon > t_prev:
        acc[A_AVAILABLE_CS] += acc[A_ALIVE_CORES] * (horizon - t_prev)
        acc[A_USED_CS] += acc[A_USED_CORES] * (horizon - t_prev)
    inflight_cs = 0.0
    for j in range(n):
        if status[j] == RUNNING:
            inflight_cs += cores[j] * (horizon - start[j])
        if use_ck and status[j] != COMPLETED and status[j] != FAILED:
            inflight_cs += cores[j] * ckd[j] * ck[j, 0]  # work saved by killed attempts, not yet delivered
    acc[A_INFLIGHT_CS] = inflight_cs
    return jobs[0], jobs[2], jobs[3], jobs[4], status, acc, ts[:, :ts_n], alog[:an]
