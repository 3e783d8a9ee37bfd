"""The discrete-event engine: First-Fit family under variable capacity, compiled with numba.

Semantics (pinned; see the README "Simulator semantics" section):

* Machines ``0..M-1`` (lower index = safer), each with ``machine_cores`` cores (and optionally
  ``machine_mem_gb``). The capacity trace gives the number of machines alive; which machines turn off on a
  drop is the termination policy's choice (``lifo``: highest alive index; ``random``; ``lww``: least
  wasted work; ``lfd``: least fraction done). On a rise, the lowest-index off machines turn on.
* Time runs over ``[0, horizon)``; nothing happens at or after the horizon. At each instant ``t``:
  1. jobs ending at ``t`` complete and free their cores;
  2. a capacity change at ``t`` takes effect; jobs on machines turning off are terminated (wasted work
     ``cores * (t - start)``) and appended to the back of the queue, earlier start first, then input order;
  3. jobs submitted at ``t`` are appended (input order);
  4. one pass walks the queue front to back and starts each job on the lowest-index alive machine with
     enough free cores (and memory); jobs that do not fit keep their place (no head-of-line blocking).
* A restarted job runs its full duration again.

Speed: a max segment tree over machines finds the first machine with ``free >= c`` in O(log M); a min
segment tree over queue positions finds the next queued job whose demand is at most the largest free
block in O(log Q). A pass therefore costs O((placements + 1) log) instead of a queue rescan, and a pass
after an instant that freed nothing only looks at the jobs appended in that instant (nothing older can
fit, since free capacity only shrank).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from sim.metrics import ATT_COMPLETED, ATT_KILLED, ATT_RUNNING, COMPLETED, FAILED, QUEUED, RUNNING

INF = np.inf

# ``<rule>-fail``: the victim is chosen by ``<rule>`` but a killed job fails for good instead of going back
# to the queue (seed 003 §4.2: a job is either completed or failed)
TERMINATION_CODES = {
    "lifo": 0,
    "random": 1,
    "lww": 2,
    "lfd": 3,
    "lifo-fail": 4,
    "random-fail": 5,
    "lww-fail": 6,
    "lfd-fail": 7,
}


# --------------------------------------------------------------------------- machine tree (max of free)
@njit(cache=True)
def _mt_set(tree, size, i, v):
    k = size + i
    tree[k] = v
    k >>= 1
    while k >= 1:
        a = tree[2 * k]
        b = tree[2 * k + 1]
        tree[k] = a if a > b else b
        k >>= 1


@njit(cache=True)
def _mt_first_ge(tree, size, lo, c):
    """Lowest leaf index >= lo whose value >= c, or -1."""
    if tree[1] < c:
        return -1
    # iterative descent with a lower bound: walk up from lo's leaf, then down
    k = size + lo
    if tree[k] >= c:
        return lo
    # climb until we are a left child whose right sibling has a candidate
    while k > 1:
        if (k & 1) == 0 and tree[k + 1] >= c:
            k = k + 1
            break
        k >>= 1
    if k == 1:
        return -1
    while k < size:
        k = 2 * k if tree[2 * k] >= c else 2 * k + 1
    return k - size


# ------------------------------------------------------------------------------ queue tree (min demand)
@njit(cache=True)
def _qt_set(tree, size, i, v):
    k = size + i
    tree[k] = v
    k >>= 1
    while k >= 1:
        a = tree[2 * k]
        b = tree[2 * k + 1]
        tree[k] = a if a < b else b
        k >>= 1


@njit(cache=True)
def _qt_first_le(tree, size, lo, x):
    """Lowest position >= lo whose demand <= x, or -1."""
    if lo >= size or tree[1] > x:
        return -1
    k = size + lo
    if tree[k] <= x:
        return lo
    while k > 1:
        if (k & 1) == 0 and tree[k + 1] <= x:
            k = k + 1
            break
        k >>= 1
    if k == 1:
        return -1
    while k < size:
        k = 2 * k if tree[2 * k] <= x else 2 * k + 1
    return k - size


# ------------------------------------------------------------------------------------ completion heap
@njit(cache=True)
def _heap_push(ht, hj, n, t, j):
    i = n
    ht[i] = t
    hj[i] = j
    while i > 0:
        p = (i - 1) >> 1
        if ht[p] > ht[i] or (ht[p] == ht[i] and hj[p] > hj[i]):
            ht[p], ht[i] = ht[i], ht[p]
            hj[p], hj[i] = hj[i], hj[p]
            i = p
        else:
            break
    return n + 1


@njit(cache=True)
def _heap_pop(ht, hj, n):
    t = ht[0]
    j = hj[0]
    n -= 1
    ht[0] = ht[n]
    hj[0] = hj[n]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        r = left + 1
        m = left
        if r < n and (ht[r] < ht[left] or (ht[r] == ht[left] and hj[r] < hj[left])):
            m = r
        if ht[m] < ht[i] or (ht[m] == ht[i] and hj[m] < hj[i]):
            ht[m], ht[i] = ht[i], ht[m]
            hj[m], hj[i] = hj[i], hj[m]
            i = m
        else:
            break
    return t, j, n


# ------------------------------------------------------------------------------ admission predicates
PRED_NONE, PRED_IAS, PRED_ORACLE = 0, 1, 2
H2_FLAG, H3_FLAG, H4_FLAG = 1, 2, 4


@njit(cache=True)
def _surv(times, surv, n, x):
    """S(x) of a step-function survival curve with n knots."""
    if n == 0:
        return 1.0
    k = np.searchsorted(times[:n], x, side="right") - 1
    if k < 0:
        return 1.0
    return surv[k]


@njit(cache=True)
def _mean_remaining(times, surv, n, knots, tail, nk, maxt, u):
    """E[remaining | uptime u], restricted to maxt (same formula as IntervalModel.mean_remaining)."""
    if u >= maxt:
        return 0.0
    su = _surv(times, surv, n, u)
    if su <= 0.0:
        return 0.0
    k = np.searchsorted(knots[:nk], u, side="right") - 1
    if k < 0:
        k = 0
    if k > nk - 2:
        k = nk - 2
    area = tail[k + 1] + su * (knots[k + 1] - u)
    return area / su


@njit(cache=True)
def _admit(pred, j, m, t, duration, adm):
    """Whether policy ``pred`` admits job j on machine m at t. ``adm`` bundles the admission inputs:
    (jflag, period, a_thresh, p90, up_since, mt, ms, mn, mk, mtl, mkn, mmax, epoch_s, iv_ptr, iv_end, band);
    survival models are indexed [epoch, band of machine m]."""
    jflag, period, a_thresh, p90, up_since, mt, ms, mn, mk, mtl, mkn, mmax, epoch_s, iv_ptr, iv_end, band = (
        adm
    )
    if pred == PRED_ORACLE:
        # the machine's current interval must outlast the job (future capacity is known)
        lo = iv_ptr[m]
        hi = iv_ptr[m + 1]
        k = lo + np.searchsorted(iv_end[lo:hi], t, side="right")
        if k >= hi:
            return False
        return t + duration[j] <= iv_end[k]
    f = jflag[j]
    if f == 0:
        return True
    d = duration[j]
    if (f & H2_FLAG) != 0 and d <= period:
        phase = t - np.floor(t / period) * period
        return (period - phase) > d or phase == 0.0
    e = 0
    if epoch_s > 0:
        e = int(t // epoch_s)
        if e >= mn.shape[0]:
            e = mn.shape[0] - 1
    u = t - up_since[m]
    b = band[m]
    if (
        (f & H3_FLAG) != 0
        and d > p90
        and _mean_remaining(mt[e, b], ms[e, b], mn[e, b], mk[e, b], mtl[e, b], mkn[e, b], mmax[e, b], u) < d
    ):
        return False
    if (f & H4_FLAG) != 0:
        su = _surv(mt[e, b], ms[e, b], mn[e, b], u)
        if su <= 0.0:
            return False
        if _surv(mt[e, b], ms[e, b], mn[e, b], u + d) / su < a_thresh:
            return False
    return True


@njit(cache=True)
def _can_run(pred, j, m, t, cores, mem, use_mem, duration, alive, free_c, free_m, adm):
    """Machine m is on, has the job's cores (and memory) free, and the policy admits the job there."""
    if not alive[m] or free_c[m] < cores[j] or (use_mem and free_m[m] < mem[j]):
        return False
    return pred == PRED_NONE or _admit(pred, j, m, t, duration, adm)


@njit(cache=True)
def _victim_score(term_policy, t, st, c, d):
    """Per-machine mode: the job with the smallest score is killed first (see the shrink branch)."""
    if term_policy == 1:
        return np.random.random()
    if term_policy == 2:
        return c * (t - st)
    if term_policy == 3:
        return (t - st) / d
    return -st


@njit(cache=True)
def _class_bounds(mtree, ma4, msize, cls_lo, cls_hi):
    """Best free cores per pruning class over its machine range, and the best H4/oracle bound."""
    cu = _mt_range_max(mtree, msize, cls_lo[0], cls_hi[0])
    c2 = _mt_range_max(mtree, msize, cls_lo[1], cls_hi[1])
    c4 = _mt_range_max(mtree, msize, cls_lo[2], cls_hi[2])
    return cu, c2, c4, _mt_range_max(ma4, msize, cls_lo[2], cls_hi[2])


# --------------------------------------------------------- queue class trees (IAS pruning), rows:
# 0 min cores of class-U jobs, 1/2 min cores/duration of H2-class jobs, 3/4 min cores/duration of H4-class
CLS_U, CLS_H2, CLS_H4 = 0, 1, 2


@njit(cache=True)
def _q_put(qt, size, pos, cls, c, d):
    if cls == CLS_U:
        _qt_set(qt[0], size, pos, c)
    elif cls == CLS_H2:
        _qt_set(qt[1], size, pos, c)
        _qt_set(qt[2], size, pos, d)
    else:
        _qt_set(qt[3], size, pos, c)
        _qt_set(qt[4], size, pos, d)


@njit(cache=True)
def _q_compact(qjob, qhead, qtail, qsize, cores, duration, jcls):
    """Copy live queue entries to the front of fresh (possibly larger) arrays; rebuild the trees."""
    live = 0
    for p in range(qhead, qtail):
        if qjob[p] >= 0:
            live += 1
    newsize = qsize
    while newsize < 2 * live + 16:
        newsize *= 2
    nq = np.full(newsize, -1, np.int64)
    nt = np.full((5, 2 * newsize), INF)
    w = 0
    for p in range(qhead, qtail):
        j = qjob[p]
        if j >= 0:
            nq[w] = j
            c = jcls[j]
            if c == CLS_U:
                nt[0, newsize + w] = cores[j]
            elif c == CLS_H2:
                nt[1, newsize + w] = cores[j]
                nt[2, newsize + w] = duration[j]
            else:
                nt[3, newsize + w] = cores[j]
                nt[4, newsize + w] = duration[j]
            w += 1
    for r in range(5):
        for k in range(newsize - 1, 0, -1):
            a = nt[r, 2 * k]
            b = nt[r, 2 * k + 1]
            nt[r, k] = a if a < b else b
    return nq, nt, newsize, w


@njit(cache=True)
def _q_first_ias(qt, size, lo, cu, c2, r2, c4, g4, stk):
    """Lowest position >= lo whose subtree may hold an admissible job (conservative), or -1.

    A class-U job needs cores <= cu; an H2-class job cores <= c2 and duration < r2; an H4-class job
    cores <= c4 and duration < g4 (g4 = best machine bound − t)."""
    stack_n = stk[0]
    stack_l = stk[1]
    stack_r = stk[2]
    stack_n[0] = 1
    stack_l[0] = 0
    stack_r[0] = size
    sp = 1
    while sp > 0:
        sp -= 1
        k = stack_n[sp]
        lft = stack_l[sp]
        r = stack_r[sp]
        if r <= lo:
            continue
        ok = qt[0, k] <= cu or (qt[1, k] <= c2 and qt[2, k] < r2) or (qt[3, k] <= c4 and qt[4, k] < g4)
        if not ok:
            continue
        if k >= size:
            return k - size
        mid = (lft + r) >> 1
        stack_n[sp] = 2 * k + 1
        stack_l[sp] = mid
        stack_r[sp] = r
        sp += 1
        stack_n[sp] = 2 * k
        stack_l[sp] = lft
        stack_r[sp] = mid
        sp += 1
    return -1


@njit(cache=True)
def _mt_range_max(tree, size, lft, r):
    """max over leaves [lft, r)."""
    res = -INF
    lft += size
    r += size
    while lft < r:
        if lft & 1:
            if tree[lft] > res:
                res = tree[lft]
            lft += 1
        if r & 1:
            r -= 1
            if tree[r] > res:
                res = tree[r]
        lft >>= 1
        r >>= 1
    return res


@njit(cache=True)
def _mt2_first(tf, ta, size, lo, c, tg, stk):
    """Lowest machine >= lo with free >= c and A4 bound > tg (DFS with pruning on both maxima), or -1."""
    stack_n = stk[0]
    stack_l = stk[1]
    stack_r = stk[2]
    stack_n[0] = 1
    stack_l[0] = 0
    stack_r[0] = size
    sp = 1
    while sp > 0:
        sp -= 1
        k = stack_n[sp]
        lft = stack_l[sp]
        r = stack_r[sp]
        if r <= lo or tf[k] < c or ta[k] <= tg:
            continue
        if k >= size:
            return k - size
        mid = (lft + r) >> 1
        stack_n[sp] = 2 * k + 1
        stack_l[sp] = mid
        stack_r[sp] = r
        sp += 1
        stack_n[sp] = 2 * k
        stack_l[sp] = lft
        stack_r[sp] = mid
        sp += 1
    return -1


@njit(cache=True)
def _a4_bound(times, surv, n, k, up, theta):
    """Absolute time bound for H4 on a machine up since ``up`` whose uptime has passed k knots:
    a job of duration d is admissible iff t + d < bound."""
    su = 1.0 if k == 0 else surv[k - 1]
    if su <= 0.0:
        return -INF
    target = theta * su
    kk = np.searchsorted(-surv[:n], -target, side="right")
    if kk < n:
        return up + times[kk]
    return INF


@njit(cache=True)
def _dirty_bounds(dm, nd, alive, free_c, ma4, msize, cls_lo, cls_hi, ias):
    """Per-class best free cores (and best H4 bound) over the dirty machines only."""
    cu = -INF
    c2 = -INF
    c4 = -INF
    g4 = -INF
    for x in range(nd):
        m = dm[x]
        if not alive[m]:
            continue
        f = free_c[m]
        if cls_lo[0] <= m < cls_hi[0] and f > cu:
            cu = f
        if cls_lo[1] <= m < cls_hi[1] and f > c2:
            c2 = f
        if cls_lo[2] <= m < cls_hi[2]:
            if f > c4:
                c4 = f
            if ias and ma4[msize + m] > g4:
                g4 = ma4[msize + m]
    return cu, c2, c4, g4


@njit(cache=True)
def _start_job(
    j,
    m,
    t,
    pos,
    qjob,
    qt,
    qsize,
    jcls,
    cores,
    mem,
    duration,
    free_c,
    free_m,
    mtree,
    msize,
    start,
    first_start,
    attempts,
    status,
    on_machine,
    prv,
    nxt,
    head,
    ht,
    hj,
    hn,
    hcap,
    alog,
    an,
    cur_att,
    horizon,
):
    """Start queued job j (queue position pos) on machine m at t and open its attempt-log row; returns the
    (possibly grown) heap and attempt log."""
    qjob[pos] = -1
    _q_put(qt, qsize, pos, jcls[j], INF, INF)
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
    if hn >= hcap:
        hcap *= 2
        ht2 = np.empty(hcap)
        hj2 = np.empty(hcap, np.int64)
        ht2[:hn] = ht[:hn]
        hj2[:hn] = hj[:hn]
        ht, hj = ht2, hj2
    hn = _heap_push(ht, hj, hn, t + duration[j], j)
    alog, an = _log_open(alog, an, cur_att, j, m, t, horizon)
    return hn, hcap, ht, hj, alog, an


# ------------------------------------------------------------------------------------ attempt log
# one row per attempt: job (engine index), start, end, outcome, machine (float64 columns, exact for ints)
LOG_JOB, LOG_START, LOG_END, LOG_OUTCOME, LOG_MACHINE = 0, 1, 2, 3, 4


@njit(cache=True)
def _log_open(alog, an, cur_att, j, m, t, horizon):
    """Append a running attempt of job j on machine m from t (end = horizon until it closes)."""
    if an >= alog.shape[0]:
        grown = np.empty((2 * alog.shape[0] + 16, 5))
        grown[:an] = alog[:an]
        alog = grown
    alog[an, LOG_JOB] = j
    alog[an, LOG_START] = t
    alog[an, LOG_END] = horizon
    alog[an, LOG_OUTCOME] = ATT_RUNNING
    alog[an, LOG_MACHINE] = m
    cur_att[j] = an
    return alog, an + 1


@njit(cache=True)
def _log_close(alog, cur_att, j, t, outcome):
    k = cur_att[j]
    alog[k, LOG_END] = t
    alog[k, LOG_OUTCOME] = outcome


def _pow2(n: int) -> int:
    p = 1
    while p < max(n, 1):
        p *= 2
    return p


@njit(cache=True)
def _kernel(
    row,
    submit,
    duration,
    cores,
    mem,
    use_mem,
    cap_t,
    cap_n,
    n_machines,
    msize,
    machine_cores,
    machine_mem,
    horizon,
    term_policy,
    seed,
    qsize0,
    record_ts,
    check,
    pred,
    job_lo,
    job_hi,
    jflag,
    period,
    a_thresh,
    p90,
    mt,
    ms,
    mn,
    mk,
    mtl,
    mkn,
    mmax,
    epoch_s,
    iv_ptr,
    iv_end,
    band,
    full_rescan,
    jcls,
    cls_lo,
    cls_hi,
    pm_t,
    pm_m,
    pm_c,
):
    n = submit.shape[0]
    mcap = np.zeros(n_machines)  # cores each machine has while on (count mode: machine_cores)
    pi = 0
    npm = pm_t.shape[0]
    ias = pred == PRED_IAS
    use_a4 = ias or pred == PRED_ORACLE  # a per-machine time bound (H4 or the oracle's interval end)
    stk = np.empty((3, 128), np.int64)  # DFS stacks for the pruned searches (depth <= 2 log2 size)
    ma4 = np.full(2 * msize, -INF)  # max over machines of the H4 bound (IAS only)
    up_since = np.zeros(n_machines)
    # admission inputs, bundled once for _admit / _can_run
    adm = (
        jflag,
        period,
        a_thresh,
        p90,
        up_since,
        mt,
        ms,
        mn,
        mk,
        mtl,
        mkn,
        mmax,
        epoch_s,
        iv_ptr,
        iv_end,
        band,
    )
    # IAS wake-ups: a refused job can only become admissible when capacity is freed, at a period boundary
    # (H2), at a model epoch change, or when some machine's uptime crosses a knot of the survival curve
    # (S(u) drops, so S(u+d)/S(u) and the mean remaining can rise). next_cross[m] is that next crossing.
    any_h2 = False
    for jj in range(n):
        if (jflag[jj] & H2_FLAG) != 0:
            any_h2 = True
            break
    next_cross = np.full(n_machines, np.inf)
    knot_idx = np.zeros(n_machines, np.int64)
    last_epoch = 0
    last_boundary = -1.0
    need_eval = True
    min_cross = 1e300
    next_wake = INF  # IAS: the next time a refused job may become admissible (an event of its own)
    # machines whose state improved since the last pass (IAS/Oracle): a job refused then can only be
    # admitted now on one of them, unless a global wake (boundary, epoch, queue compaction) happened
    dirty = np.empty(n_machines, np.int64)
    is_dirty = np.zeros(n_machines, np.bool_)
    np.random.seed(seed)
    # ---- per-job state
    first_start = np.full(n, -1.0)
    start = np.full(n, -1.0)
    end = np.full(n, -1.0)
    attempts = np.zeros(n, np.int64)
    terms = np.zeros(n, np.int64)
    status = np.zeros(n, np.int8)
    on_machine = np.full(n, -1, np.int64)
    nxt = np.full(n, -1, np.int64)
    prv = np.full(n, -1, np.int64)
    # ---- machines
    alive = np.zeros(n_machines, np.bool_)
    free_c = np.zeros(n_machines)
    free_m = np.full(n_machines, machine_mem)
    head = np.full(n_machines, -1, np.int64)
    mtree = np.full(2 * msize, -1.0)
    n_alive = 0
    # ---- queue (positions are append order; tree over positions holds demand or +inf)
    qsize = qsize0
    qjob = np.full(qsize, -1, np.int64)
    qt = np.full((5, 2 * qsize), INF)
    qhead = 0
    qtail = 0
    # ---- completion heap (one live entry per running job, stale entries skipped)
    hcap = n + 16
    ht = np.empty(hcap)
    hj = np.empty(hcap, np.int64)
    hn = 0
    # ---- accounting
    completed_cs = 0.0
    wasted_cs = 0.0
    available_cs = 0.0
    used_cs = 0.0
    used_cores = 0.0
    alive_cores = 0.0
    n_term = 0
    aborted_time = 0.0
    violations = 0
    events = 0
    ts_cap = 1024
    ts_t = np.empty(ts_cap)
    ts_alive = np.empty(ts_cap)
    ts_used = np.empty(ts_cap)
    ts_n = 0
    killed = np.empty(n, np.int64)
    alog = np.empty((n + 16, 5))
    an = 0
    cur_att = np.full(n, -1, np.int64)

    si = 0
    ci = 0
    nc = cap_t.shape[0]
    t_prev = 0.0
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
        if next_wake < t and qtail > qhead:
            t = next_wake
        if t >= horizon:
            break
        events += 1
        available_cs += alive_cores * (t - t_prev)
        used_cs += used_cores * (t - t_prev)
        t_prev = t
        freed = False
        global_wake = False
        nd = 0
        new_from = qtail
        # ------------------------------------------------------------- 1. completions
        while hn > 0 and ht[0] == t:
            tt, j, hn = _heap_pop(ht, hj, hn)
            if status[j] != RUNNING or start[j] + duration[j] != tt:
                continue  # stale entry of a terminated attempt
            m = on_machine[j]
            status[j] = COMPLETED
            end[j] = t
            _log_close(alog, cur_att, j, t, ATT_COMPLETED)
            completed_cs += cores[j] * duration[j]
            free_c[m] += cores[j]
            free_m[m] += mem[j]
            used_cores -= cores[j]
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
        nk = 0
        if ci < nc and cap_t[ci] == t:
            target = cap_n[ci]
            ci += 1
            if target > n_machines:
                target = n_machines
            if target < 0:
                target = 0
            if target > n_alive:
                m = 0
                while n_alive < target and m < n_machines:
                    if not alive[m]:
                        alive[m] = True
                        up_since[m] = t
                        knot_idx[m] = 0
                        next_cross[m] = np.inf
                        need_eval = True
                        if pred == PRED_ORACLE:
                            lo_ = iv_ptr[m]
                            hi_ = iv_ptr[m + 1]
                            kk = lo_ + np.searchsorted(iv_end[lo_:hi_], t, side="right")
                            _mt_set(ma4, msize, m, iv_end[kk] if kk < hi_ else -INF)
                        if not is_dirty[m]:
                            is_dirty[m] = True
                            dirty[nd] = m
                            nd += 1
                        n_alive += 1
                        mcap[m] = machine_cores
                        free_c[m] = machine_cores if head[m] < 0 else free_c[m]
                        alive_cores += machine_cores
                        _mt_set(mtree, msize, m, free_c[m])
                    m += 1
                freed = True
            elif target < n_alive:
                k = n_alive - target
                # choose k victims among alive machines
                cand = np.empty(n_alive, np.int64)
                score = np.empty(n_alive)
                nc_ = 0
                for m in range(n_machines - 1, -1, -1):  # high index first: ties go to high index
                    if alive[m]:
                        cand[nc_] = m
                        s = 0.0
                        if term_policy % 4 == 2:  # lww: work lost if turned off
                            j = head[m]
                            while j >= 0:
                                s += cores[j] * (t - start[j])
                                j = nxt[j]
                        elif term_policy % 4 == 3:  # lfd: the most-advanced job's fraction done
                            j = head[m]
                            while j >= 0:
                                f = (t - start[j]) / duration[j]
                                if f > s:
                                    s = f
                                j = nxt[j]
                        elif term_policy % 4 == 1:
                            s = np.random.random()
                        score[nc_] = s
                        nc_ += 1
                order = np.arange(nc_) if term_policy % 4 == 0 else np.argsort(score[:nc_], kind="mergesort")
                for r in range(k):
                    m = cand[order[r]]
                    alive[m] = False
                    n_alive -= 1
                    alive_cores -= mcap[m]
                    j = head[m]
                    while j >= 0:
                        killed[nk] = j
                        nk += 1
                        j = nxt[j]
                    head[m] = -1
                    _mt_set(mtree, msize, m, -1.0)
                    if ias or pred == PRED_ORACLE:
                        _mt_set(ma4, msize, m, -INF)
        # per-machine capacity mode (harvest VMs): a machine's cores change; a machine shrinking below its
        # running jobs' demand kills jobs newest-start-first (ties: later input row) until they fit
        while pi < npm and pm_t[pi] == t:
            m = pm_m[pi]
            newc = pm_c[pi]
            pi += 1
            old = mcap[m]
            if newc > old:
                if old <= 0.0:
                    alive[m] = True
                    up_since[m] = t
                    n_alive += 1
                free_c[m] += newc - old
                alive_cores += newc - old
                mcap[m] = newc
                freed = True
                if not is_dirty[m]:
                    is_dirty[m] = True
                    dirty[nd] = m
                    nd += 1
                _mt_set(mtree, msize, m, free_c[m])
            elif newc < old:
                free_c[m] -= old - newc
                alive_cores -= old - newc
                mcap[m] = newc
                while head[m] >= 0 and (free_c[m] < -1e-9 or newc <= 0.0):
                    # victim: lifo newest start first (ties: later input row); random; lww the least
                    # cores × (t − start); lfd the least (t − start) / duration (ties: the lifo order)
                    best = head[m]
                    bs = _victim_score(term_policy % 4, t, start[best], cores[best], duration[best])
                    jj = nxt[best]
                    while jj >= 0:
                        sj = _victim_score(term_policy % 4, t, start[jj], cores[jj], duration[jj])
                        if sj < bs or (
                            sj == bs
                            and (
                                start[jj] > start[best] or (start[jj] == start[best] and row[jj] > row[best])
                            )
                        ):
                            best, bs = jj, sj
                        jj = nxt[jj]
                    free_c[m] += cores[best]
                    free_m[m] += mem[best]
                    if prv[best] >= 0:
                        nxt[prv[best]] = nxt[best]
                    else:
                        head[m] = nxt[best]
                    if nxt[best] >= 0:
                        prv[nxt[best]] = prv[best]
                    killed[nk] = best
                    nk += 1
                if free_c[m] > 1e-9:  # a kill can leave more room than the last pass saw
                    freed = True
                    if not is_dirty[m]:
                        is_dirty[m] = True
                        dirty[nd] = m
                        nd += 1
                if newc <= 0.0:
                    alive[m] = False
                    n_alive -= 1
                    _mt_set(mtree, msize, m, -1.0)
                else:
                    _mt_set(mtree, msize, m, free_c[m])
        # terminate killed jobs: earlier start first, then input order
        if nk > 0:
            ks = killed[:nk].copy()
            keys = np.empty(nk)
            for r in range(nk):
                keys[r] = start[ks[r]]
            # stable sort by input row, then by start
            rk = np.empty(nk, np.int64)
            for r in range(nk):
                rk[r] = row[ks[r]]
            ks = ks[np.argsort(rk, kind="mergesort")]
            for r in range(nk):
                keys[r] = start[ks[r]]
            ks = ks[np.argsort(keys, kind="mergesort")]
            for r in range(nk):
                j = ks[r]
                used_cores -= cores[j]
                wasted_cs += cores[j] * (t - start[j])
                _log_close(alog, cur_att, j, t, ATT_KILLED)
                aborted_time += t - start[j]
                n_term += 1
                terms[j] += 1
                on_machine[j] = -1
                nxt[j] = -1
                prv[j] = -1
                if term_policy >= 4:  # the job fails for good
                    status[j] = FAILED
                    continue
                status[j] = QUEUED
                # append to queue
                if qtail >= qsize:
                    qjob, qt, qsize, qtail = _q_compact(qjob, qhead, qtail, qsize, cores, duration, jcls)
                    qhead = 0
                    freed = True  # positions moved: rescan everything
                    global_wake = True
                qjob[qtail] = j
                _q_put(qt, qsize, qtail, jcls[j], cores[j], duration[j])
                qtail += 1
            for m in range(n_machines):
                if head[m] < 0:
                    free_c[m] = mcap[m]
                    free_m[m] = machine_mem
                _mt_set(mtree, msize, m, free_c[m] if alive[m] else -1.0)
        # ------------------------------------------------------------- 3. submissions
        while si < n and submit[si] == t:
            if qtail >= qsize:
                qjob, qt, qsize, qtail = _q_compact(qjob, qhead, qtail, qsize, cores, duration, jcls)
                qhead = 0
                freed = True
                global_wake = True
            qjob[qtail] = si
            _q_put(qt, qsize, qtail, jcls[si], cores[si], duration[si])
            qtail += 1
            si += 1
        # ------------------------------------------------------------- 4. scheduling pass
        # IAS admission depends on time: wake (rescan the whole queue) when it may have become true
        if pred == PRED_IAS:
            e = 0
            if epoch_s > 0:
                e = int(t // epoch_s)
                if e >= mn.shape[0]:
                    e = mn.shape[0] - 1
            if e != last_epoch:
                last_epoch = e
                freed = True
                global_wake = True
                need_eval = True
                for mm in range(n_machines):
                    knot_idx[mm] = 0
                    next_cross[mm] = np.inf
            if any_h2:
                b = np.floor(t / period) * period
                if b != last_boundary:
                    last_boundary = b
                    freed = True
                    global_wake = True
            # the per-machine loop runs only when some crossing is due or a machine needs a first look
            if need_eval or t >= min_cross:
                need_eval = False
                min_cross = 1e300
                for mm in range(n_machines):
                    if not alive[mm]:
                        continue
                    if next_cross[mm] == np.inf or t >= next_cross[mm]:
                        u = t - up_since[mm]
                        bm = band[mm]
                        kn = mn[e, bm]
                        k = np.searchsorted(mt[e, bm, :kn], u, side="right")
                        if k != knot_idx[mm]:
                            knot_idx[mm] = k
                            freed = True
                            if not is_dirty[mm]:
                                is_dirty[mm] = True
                                dirty[nd] = mm
                                nd += 1
                        _mt_set(
                            ma4, msize, mm, _a4_bound(mt[e, bm], ms[e, bm], kn, k, up_since[mm], a_thresh)
                        )
                        next_cross[mm] = up_since[mm] + mt[e, bm, k] if k < kn else 1e300
                    if next_cross[mm] < min_cross:
                        min_cross = next_cross[mm]
            next_wake = min_cross
            if any_h2:
                nb = (np.floor(t / period) + 1.0) * period
                if nb < next_wake:
                    next_wake = nb
            if epoch_s > 0:
                ne = (np.floor(t / epoch_s) + 1.0) * epoch_s
                if ne < next_wake:
                    next_wake = ne
        lo = qhead if (freed or full_rescan) else new_from
        slack = 1e-9 * (abs(t) + 1.0)
        phase = t - np.floor(t / period) * period
        r2 = INF if phase == 0.0 else (period - phase) * (1.0 + 1e-9) + 1e-9
        if pred != PRED_NONE and not full_rescan and not global_wake:
            # old queue entries: only the dirty machines can take them now
            if nd > 0:
                dm = dirty[:nd]
                if nd > 1:
                    dm.sort()
                cu, c2, c4, g4 = _dirty_bounds(dm, nd, alive, free_c, ma4, msize, cls_lo, cls_hi, use_a4)
                if not use_a4:
                    g4 = INF
                pos = _q_first_ias(qt, qsize, qhead, cu, c2, r2, c4, g4 - t + slack, stk)
                while pos >= 0 and pos < new_from:
                    j = qjob[pos]
                    m = -1
                    for x in range(nd):
                        mm = dm[x]
                        if job_lo[j] <= mm < job_hi[j] and _can_run(
                            pred, j, mm, t, cores, mem, use_mem, duration, alive, free_c, free_m, adm
                        ):
                            m = mm
                            break
                    if m >= 0:
                        hn, hcap, ht, hj, alog, an = _start_job(
                            j, m, t, pos, qjob, qt, qsize, jcls, cores, mem, duration, free_c, free_m, mtree,
                            msize, start, first_start, attempts, status, on_machine, prv, nxt, head, ht, hj, hn,
                            hcap, alog, an, cur_att, horizon,
                        )  # fmt: skip
                        used_cores += cores[j]
                        cu, c2, c4, g4 = _dirty_bounds(
                            dm, nd, alive, free_c, ma4, msize, cls_lo, cls_hi, use_a4
                        )
                        if not use_a4:
                            g4 = INF
                    pos = _q_first_ias(qt, qsize, pos + 1, cu, c2, r2, c4, g4 - t + slack, stk)
            lo = new_from
        if full_rescan:
            # reference path (tests): visit every queued job, scan machines linearly, no pruning
            pos = lo
            while pos < qtail and qjob[pos] < 0:
                pos += 1
            if pos >= qtail:
                pos = -1
        elif use_a4:
            cu, c2, c4, g4 = _class_bounds(mtree, ma4, msize, cls_lo, cls_hi)
            pos = _q_first_ias(qt, qsize, lo, cu, c2, r2, c4, g4 - t + slack, stk)
        else:
            pos = _qt_first_le(qt[0], qsize, lo, mtree[1])
        while pos >= 0:
            j = qjob[pos]
            if full_rescan:
                m = job_lo[j]
                while m < job_hi[j] and not _can_run(
                    pred, j, m, t, cores, mem, use_mem, duration, alive, free_c, free_m, adm
                ):
                    m += 1
                if m >= job_hi[j]:
                    m = -1
            else:
                if use_a4 and jcls[j] == CLS_H4:
                    tg = t + duration[j] - 1e-9 * (abs(t) + duration[j] + 1.0)
                    m = _mt2_first(mtree, ma4, msize, job_lo[j], cores[j], tg, stk)
                else:
                    m = _mt_first_ge(mtree, msize, job_lo[j], cores[j])
                while m >= 0:
                    if m >= job_hi[j]:
                        m = -1
                        break
                    if _can_run(pred, j, m, t, cores, mem, use_mem, duration, alive, free_c, free_m, adm):
                        break
                    if m + 1 >= msize:
                        m = -1
                    elif use_a4 and jcls[j] == CLS_H4:
                        m = _mt2_first(mtree, ma4, msize, m + 1, cores[j], tg, stk)
                    else:
                        m = _mt_first_ge(mtree, msize, m + 1, cores[j])
            if m >= 0:
                hn, hcap, ht, hj, alog, an = _start_job(
                    j, m, t, pos, qjob, qt, qsize, jcls, cores, mem, duration, free_c, free_m, mtree, msize,
                    start, first_start, attempts, status, on_machine, prv, nxt, head, ht, hj, hn, hcap,
                    alog, an, cur_att, horizon,
                )  # fmt: skip
                used_cores += cores[j]
            if full_rescan:
                pos += 1
                while pos < qtail and qjob[pos] < 0:
                    pos += 1
                if pos >= qtail:
                    pos = -1
            elif use_a4:
                cu, c2, c4, g4 = _class_bounds(mtree, ma4, msize, cls_lo, cls_hi)
                pos = _q_first_ias(qt, qsize, pos + 1, cu, c2, r2, c4, g4 - t + slack, stk)
            else:
                pos = _qt_first_le(qt[0], qsize, pos + 1, mtree[1])
        for x in range(nd):
            is_dirty[dirty[x]] = False
        while qhead < qtail and qjob[qhead] < 0:
            qhead += 1
        # ------------------------------------------------------------- invariants (tests)
        if check:
            for m in range(n_machines):
                if free_c[m] < -1e-9 or free_m[m] < -1e-9:
                    violations += 1
                if not alive[m] and head[m] >= 0:
                    violations += 1
                if alive[m] and mtree[msize + m] != free_c[m]:
                    violations += 1
        if record_ts:
            if ts_n >= ts_cap:
                ts_cap *= 2
                a1 = np.empty(ts_cap)
                a2 = np.empty(ts_cap)
                a3 = np.empty(ts_cap)
                a1[:ts_n] = ts_t[:ts_n]
                a2[:ts_n] = ts_alive[:ts_n]
                a3[:ts_n] = ts_used[:ts_n]
                ts_t, ts_alive, ts_used = a1, a2, a3
            ts_t[ts_n] = t
            ts_alive[ts_n] = alive_cores
            ts_used[ts_n] = used_cores
            ts_n += 1
    # ---- close the books at the horizon
    if horizon > t_prev:
        available_cs += alive_cores * (horizon - t_prev)
        used_cs += used_cores * (horizon - t_prev)
    inflight_cs = 0.0
    for j in range(n):
        if status[j] == RUNNING:
            inflight_cs += cores[j] * (horizon - start[j])
    scalars = np.array(
        [
            completed_cs,
            wasted_cs,
            inflight_cs,
            available_cs,
            used_cs,
            float(n_term),
            aborted_time,
            float(violations),
            float(events),
        ]
    )
    return (
        first_start,
        end,
        attempts,
        terms,
        status,
        scalars,
        ts_t[:ts_n],
        ts_alive[:ts_n],
        ts_used[:ts_n],
        alog[:an],
    )


@dataclass
class Admission:
    """Per-(job, machine) admission rules for the scheduling pass (engine index order).

    ``job_lo/job_hi``: allowed machine index range per job; ``jflag``: H2/H3/H4 bits per job; ``models``:
    survival models per epoch (``epoch_s`` > 0: model ``floor(t / epoch_s)`` applies at t), each either one
    ``IntervalModel`` (every machine) or a sequence of them, one per machine band, with ``band_of_machine``
    (length = machines) saying which band's model applies on each machine; ``iv_ptr/iv_end``: per-machine
    sorted interval ends (CSR) for the Oracle.
    """

    pred: int = PRED_NONE
    job_lo: np.ndarray | None = None
    job_hi: np.ndarray | None = None
    jflag: np.ndarray | None = None
    period_s: float = 3600.0
    a_thresh: float = 0.0
    p90_s: float = np.inf
    models: list | None = None  # per epoch: an IntervalModel, or a sequence of them (one per band)
    epoch_s: float = 0.0
    iv_ptr: np.ndarray | None = None
    iv_end: np.ndarray | None = None
    full_rescan: bool = False  # tests: naive reference pass (visit everything, no pruning) every instant
    band_of_machine: np.ndarray | None = None  # band index per machine (None: band 0 everywhere)

    def model_grid(self) -> list[list]:
        """``models`` as [epoch][band]; raises ValueError if epochs have different band counts."""
        grid = [list(m) if isinstance(m, (list, tuple)) else [m] for m in (self.models or [])]
        if grid and len({len(g) for g in grid}) != 1:
            raise ValueError("every epoch needs the same number of band models")
        return grid

    def bands(self, machines: int, n_bands: int) -> np.ndarray:
        if self.band_of_machine is None:
            return np.zeros(machines, np.int64)
        b = np.ascontiguousarray(self.band_of_machine, np.int64)
        if b.shape != (machines,) or (b.size and (b.min() < 0 or b.max() >= n_bands)):
            raise ValueError(f"band_of_machine needs {machines} band indices in [0, {n_bands})")
        return b

    def arrays(self, n: int, machines: int) -> tuple:
        lo = np.zeros(n, np.int64) if self.job_lo is None else np.ascontiguousarray(self.job_lo, np.int64)
        hi = (
            np.full(n, machines, np.int64)
            if self.job_hi is None
            else np.ascontiguousarray(self.job_hi, np.int64)
        )
        fl = np.zeros(n, np.int8) if self.jflag is None else np.ascontiguousarray(self.jflag, np.int8)
        grid = self.model_grid()
        e = max(len(grid), 1)
        nb = len(grid[0]) if grid else 1
        width = max([len(m.times) for g in grid for m in g] + [1])
        mt = np.zeros((e, nb, width))
        ms = np.zeros((e, nb, width))
        mn = np.zeros((e, nb), np.int64)
        mk = np.zeros((e, nb, width + 2))
        mtl = np.zeros((e, nb, width + 2))
        mkn = np.zeros((e, nb), np.int64)
        mmax = np.zeros((e, nb))
        for i, g in enumerate(grid):
            for b, m in enumerate(g):
                k = len(m.times)
                mt[i, b, :k], ms[i, b, :k], mn[i, b] = m.times, m.surv, k
                knots, tail = m._tail_area()
                mk[i, b, : len(knots)], mtl[i, b, : len(tail)], mkn[i, b] = knots, tail, len(knots)
                mmax[i, b] = m.max_time
        ptr = (
            np.zeros(machines + 1, np.int64)
            if self.iv_ptr is None
            else np.ascontiguousarray(self.iv_ptr, np.int64)
        )
        end = np.zeros(1) if self.iv_end is None else np.ascontiguousarray(self.iv_end, np.float64)
        return (
            int(self.pred),
            lo,
            hi,
            fl,
            float(self.period_s),
            float(self.a_thresh),
            float(self.p90_s),
            mt,
            ms,
            mn,
            mk,
            mtl,
            mkn,
            mmax,
            float(self.epoch_s),
            ptr,
            end,
            self.bands(machines, nb),
            bool(self.full_rescan),
        )

    def classes(self, duration: np.ndarray, machines: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pruning class per job (engine order) and each class's machine range (min lo, max hi)."""
        n = len(duration)
        cls = np.zeros(n, np.int8)
        if self.pred == PRED_ORACLE:
            cls[:] = CLS_H4  # pruned by the machines' interval ends, like H4's bound
        elif self.pred == PRED_IAS and self.jflag is not None:
            f = np.asarray(self.jflag)
            h2 = ((f & H2_FLAG) != 0) & (duration <= self.period_s)
            h4 = ((f & H4_FLAG) != 0) & ~h2
            cls[h2] = CLS_H2
            cls[h4] = CLS_H4
        lo = np.zeros(n, np.int64) if self.job_lo is None else np.asarray(self.job_lo, np.int64)
        hi = np.full(n, machines, np.int64) if self.job_hi is None else np.asarray(self.job_hi, np.int64)
        clo = np.zeros(3, np.int64)
        chi = np.zeros(3, np.int64)
        for c in range(3):
            sel = cls == c
            if sel.any():
                clo[c], chi[c] = lo[sel].min(), hi[sel].max()
        return cls, clo, chi


def run_kernel(
    submit: np.ndarray,
    duration: np.ndarray,
    cores: np.ndarray,
    mem: np.ndarray | None,
    cap_t: np.ndarray,
    cap_n: np.ndarray,
    n_machines: int,
    machine_cores: float,
    machine_mem_gb: float,
    horizon_s: float,
    termination: str = "lifo",
    seed: int = 0,
    record_ts: bool = False,
    check: bool = False,
    row: np.ndarray | None = None,
    admission: Admission | None = None,
    machine_events: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple:
    """Run the compiled engine on jobs sorted by submit time (ties in input order). See module doc."""
    if termination not in TERMINATION_CODES:
        raise ValueError(
            f"unknown termination policy {termination!r}; choose from {sorted(TERMINATION_CODES)}"
        )
    n = len(submit)
    adm = admission or Admission()
    use_mem = mem is not None
    mem_arr = np.ascontiguousarray(mem if use_mem else np.zeros(n), dtype=np.float64)
    return _kernel(
        np.ascontiguousarray(row if row is not None else np.arange(n), dtype=np.int64),
        np.ascontiguousarray(submit, dtype=np.float64),
        np.ascontiguousarray(duration, dtype=np.float64),
        np.ascontiguousarray(cores, dtype=np.float64),
        mem_arr,
        use_mem,
        np.ascontiguousarray(cap_t, dtype=np.float64),
        np.ascontiguousarray(cap_n, dtype=np.int64),
        int(n_machines),
        _pow2(int(n_machines)),
        float(machine_cores),
        float(machine_mem_gb if use_mem else 0.0),
        float(horizon_s),
        TERMINATION_CODES[termination],
        int(seed),
        _pow2(max(2 * n, 64)),
        bool(record_ts),
        bool(check),
        *adm.arrays(n, int(n_machines)),
        *adm.classes(np.asarray(duration, dtype=np.float64), int(n_machines)),
        *_machine_event_arrays(machine_events),
    )


def _machine_event_arrays(ev: tuple | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if ev is None:
        return np.zeros(0), np.zeros(0, np.int64), np.zeros(0)
    t, m, c = (np.asarray(x) for x in ev)
    order = np.lexsort((m, t))  # time, then machine index
    return (
        np.ascontiguousarray(t[order], np.float64),
        np.ascontiguousarray(m[order], np.int64),
        np.ascontiguousarray(c[order], np.float64),
    )
