"""The engine's queue: positions in append order, min-trees over positions, compaction that grows.

Row 0 of the tree array holds the cores of class-U jobs (no time-dependent rule), rows 1/2 the cores and
durations of H2-class jobs, rows 3/4 those of H4-class jobs (and every Oracle job), row 5 the cores of
class-U2 jobs (no time-dependent rule, a machine range of their own: IAS-H1's small jobs, kept apart from
its big jobs so that a free variable machine does not make every queued big job look runnable), rows 6/7
the cores and negated durations of class-L jobs (H4 as Algorithm 5 prints it: admitted once ``t + d``
reaches the machine's bound, so a subtree's longest job is the one to ask about); a started or empty
position holds +inf. The queue starts small and is compacted when its tail reaches the end: live entries
move to the front and the size doubles until it holds twice the live count (so memory follows the longest
queue, not the number of jobs). Compaction works in place (:func:`_q_compact`); the arrays grow beforehand
(:func:`_q_room`), the kernel's between instants, so that no array is replaced inside an instant.
"""

from __future__ import annotations

import numpy as np

from sim.engine._jit import kernel_fn
from sim.engine.kit import copy_cols, copy_head
from sim.engine.trees import _qt_prefix_min

INF = np.inf
CLS_U, CLS_H2, CLS_H4, CLS_U2, CLS_L = 0, 1, 2, 3, 4
N_CLASSES = 5
QUEUE_MIN_SIZE = 1024  # initial positions (a power of two)
NOT_QUEUED = 2**31 - 1  # the (cores, duration) index's position of a job not in the queue (int32)


@kernel_fn(counted=False)
def _q_put(qt, size, pos, cls, c, d):
    """Set position pos of the class-``cls`` trees to cores c and duration d (inf, inf: empty). Calls
    nothing and takes no row view (the kernel's pass calls it at every start: see :mod:`sim.engine.ff`)."""
    rc = 3
    rd = 4
    dv = d
    if cls == CLS_U:
        rc = 0
        rd = -1
    elif cls == CLS_H2:
        rc = 1
        rd = 2
    elif cls == CLS_U2:
        rc = 5
        rd = -1
    elif cls == CLS_L:
        rc = 6
        rd = 7
        dv = -d
    for x in range(2):
        r = rc if x == 0 else rd
        if r < 0:
            break
        v = c if x == 0 else dv
        k = size + pos  # trees._qt_set on row r
        qt[r, k] = v
        k >>= 1
        while k >= 1:
            a = qt[r, 2 * k]
            b = qt[r, 2 * k + 1]
            qt[r, k] = a if a < b else b
            k >>= 1


@kernel_fn
def _qx_new(jcls, cores, on, cls):
    """The class-``cls`` jobs (H2, H4 or L) in cores order (``on``: else none): (tree, rank, sorted cores,
    position tree). Both trees are min-trees over that order; a leaf holds the job's duration (tree) and
    queue position (position tree, int32) while it is queued, +inf (NOT_QUEUED) otherwise (class L: the
    negated duration, see :func:`_qxl_any` and :func:`_qxl_longest`). :func:`_qx_any`
    answers "some queued job of the class has cores ≤ c and duration < g" exactly and :func:`_qx_lowest`
    finds the lowest position of such a job, where the queue's position trees pair the least cores and the least
    duration of different jobs. ``rank[j]``: job j's place in that order (-1: another class); no ranks at
    all when the class has no job (First-Fit: 12 bytes a job less; :func:`_qx_has`)."""
    n = jcls.shape[0]
    m = 0
    if on:
        for j in range(n):
            if jcls[j] == cls:
                m += 1
    rank = np.full(n if m > 0 else 0, -1, np.int32)
    idx = np.empty(m, np.int64)
    w = 0
    if on:
        for j in range(n):
            if jcls[j] == cls:
                idx[w] = j
                w += 1
    sc = np.empty(m)
    for i in range(m):
        sc[i] = cores[idx[i]]
    order = np.argsort(sc, kind="mergesort")
    sc = sc[order]
    for i in range(m):
        rank[idx[order[i]]] = i
    size = 1
    while size < m:
        size *= 2
    return np.full(2 * size, INF), rank, sc, np.full(2 * size, NOT_QUEUED, np.int32)


@kernel_fn(inline=True)
def _qx_has(qx, j):
    """Whether job j is in the cores-ordered index ``qx`` of :func:`_qx_new`."""
    rank = qx[1]
    return rank.shape[0] > 0 and rank[j] >= 0


@kernel_fn(counted=False)
def _qx_set(qx, j, d, p):
    """Job j's leaves of the cores-ordered trees of :func:`_qx_new` (its duration d and queue position p
    while queued; +inf, -1: not)."""
    tree, rank, sc, ptree = qx
    if rank.shape[0] > 0 and rank[j] >= 0:
        _qx_tree_set(tree, tree.shape[0] >> 1, rank[j], d)
        _qx_tree_set(ptree, tree.shape[0] >> 1, rank[j], p if p >= 0 else NOT_QUEUED)


@kernel_fn(counted=False)
def _qx_put(tree, rank, ptree, j, d, p):
    """:func:`_qx_set` on the index's arrays (``tree, rank, ptree`` of :func:`_qx_new`), with no call inside
    (the kernel's pass calls it at every submission and start: see :mod:`sim.engine.ff`)."""
    if rank.shape[0] == 0 or rank[j] < 0:
        return
    size = tree.shape[0] >> 1
    pv = p if p >= 0 else NOT_QUEUED
    for x in range(2):  # _qx_tree_set on the duration tree, then on the position tree
        k = size + rank[j]
        if x == 0:
            tree[k] = d
        else:
            ptree[k] = pv
        k >>= 1
        while k >= 1:
            if x == 0:
                a = tree[2 * k]
                b = tree[2 * k + 1]
                mn = a if a < b else b
                if tree[k] == mn:
                    break
                tree[k] = mn
            else:
                pa = ptree[2 * k]
                pb = ptree[2 * k + 1]
                pm = pa if pa < pb else pb
                if ptree[k] == pm:
                    break
                ptree[k] = pm
            k >>= 1


@kernel_fn(counted=False)
def _qx_tree_set(tree, size, i, v):
    """Set leaf i of a min-tree to v, mending its ancestors only as far as their minimum changes."""
    k = size + i
    tree[k] = v
    k >>= 1
    while k >= 1:
        a = tree[2 * k]
        b = tree[2 * k + 1]
        m = a if a < b else b
        if tree[k] == m:
            break
        tree[k] = m
        k >>= 1


@kernel_fn(counted=False)
def _qx_moved(qx, qjob, n):
    """The queue was compacted (live jobs at positions [0, n), in their old order): their new positions in
    the position tree. Positions only fall and keep their order, so each node's least position is the same
    job's, lowered: each live job's leaf and its ancestors are mended (the others hold +inf)."""
    tree, rank, sc, ptree = qx
    size = tree.shape[0] >> 1
    if sc.shape[0] == 0:
        return
    for p in range(n):
        r = rank[qjob[p]]
        if r >= 0:
            k = size + r
            ptree[k] = p
            k >>= 1
            while k >= 1:
                a = ptree[2 * k]
                b = ptree[2 * k + 1]
                ptree[k] = a if a < b else b
                k >>= 1


@kernel_fn(counted=False)
def _qx_pmin(tree, sc, c):
    """The least key among the queued jobs with cores ≤ c of a cores-ordered index (its ``tree`` and sorted
    cores ``sc``, :func:`_qx_new`): ``np.searchsorted(sc, c, side="right")`` and the tree's prefix minimum
    written out, no call inside (:func:`~sim.engine.admission._dirty_any` asks it for each dirty machine)."""
    a = 0
    b = sc.shape[0]
    while a < b:
        mid = (a + b) >> 1
        if sc[mid] <= c:
            a = mid + 1
        else:
            b = mid
    res = INF  # trees._qt_prefix_min(tree, size, a)
    size = tree.shape[0] >> 1
    lft = size
    r = a + size
    while lft < r:
        if lft & 1:
            if tree[lft] < res:
                res = tree[lft]
            lft += 1
        if r & 1:
            r -= 1
            if tree[r] < res:
                res = tree[r]
        lft >>= 1
        r >>= 1
    return res


@kernel_fn(counted=False)
def _qx_any(qx, c, g):
    """Whether some queued job of ``qx``'s class has cores ≤ c and duration·(1 − 2e-9) < g."""
    tree, rank, sc, ptree = qx
    return _qx_pmin(tree, sc, c) * (1.0 - 2e-9) < g


@kernel_fn(counted=False)
def _qxl_any(qx, c, g):
    """Class L (keys = negated durations): whether some queued job has cores ≤ c and −duration ≤ g."""
    tree, rank, sc, ptree = qx
    return _qx_pmin(tree, sc, c) <= g


@kernel_fn(counted=False)
def _qxl_longest(qx, c, x, stk):
    """Class L: the longest duration d < x of a queued job with cores ≤ c (-inf if none). Descends only
    into subtrees that hold a job at least x long (one the pass would admit now if it fits, so few)."""
    tree, rank, sc, ptree = qx
    size = tree.shape[0] >> 1
    k = np.searchsorted(sc, c, side="right")
    if k == 0:
        return -INF
    lim = -x  # keys above lim are durations below x
    best = INF  # the least key above lim so far
    stack_n = stk[0]
    stack_l = stk[1]
    stack_r = stk[2]
    stack_n[0] = 1
    stack_l[0] = 0
    stack_r[0] = size
    sp = 1
    while sp > 0:
        sp -= 1
        nd = stack_n[sp]
        lft = stack_l[sp]
        r = stack_r[sp]
        v = tree[nd]
        if lft >= k or v >= best:
            continue
        if v > lim and r <= k:  # the whole subtree is in the cores prefix and its least key is above lim
            best = v
            continue
        if nd >= size:
            continue  # a leaf at or below lim
        mid = (lft + r) >> 1
        stack_n[sp] = 2 * nd + 1
        stack_l[sp] = mid
        stack_r[sp] = r
        sp += 1
        stack_n[sp] = 2 * nd
        stack_l[sp] = lft
        stack_r[sp] = mid
        sp += 1
    return -best


@kernel_fn(counted=False)
def _qx_lowest(qx, c, g, lo, dmax, best, cap, stk):
    """The lowest queue position >= lo (and below ``best``, -1: no limit) of a queued job of the class with
    cores ≤ c, duration·(1 − 2e-9) < g and duration < dmax, or ``best`` if none; -2 if more than ``cap``
    such jobs (at any position) were met first (the caller then searches otherwise). Visits only subtrees
    holding such a job below the best position found so far (the nearer subtree first)."""
    return _qx_lowest_by(qx, c, g, lo, dmax, best, cap, stk, 1.0 - 2e-9)


@kernel_fn(inline=True)
def _qx_lowest_by(qx, c, g, lo, dmax, best, cap, stk, f):
    """:func:`_qx_lowest` with the key scaled by ``f`` before the test against g (1: the key itself, as
    class L's negated durations need)."""
    tree, rank, sc, ptree = qx
    size = tree.shape[0] >> 1
    k = np.searchsorted(sc, c, side="right")
    if k == 0 or _qt_prefix_min(tree, size, k) * f >= g:
        return best
    stack_n = stk[0]
    stack_l = stk[1]
    stack_r = stk[2]
    stack_n[0] = 1
    stack_l[0] = 0
    stack_r[0] = size
    sp = 1
    met = 0
    while sp > 0:
        sp -= 1
        nd = stack_n[sp]
        lft = stack_l[sp]
        r = stack_r[sp]
        if lft >= k or tree[nd] * f >= g or (best >= 0 and ptree[nd] >= best):
            continue
        if nd >= size:
            met += 1
            if met > cap:
                return -2
            p = ptree[nd]
            if p >= lo and tree[nd] < dmax:
                best = p
            continue
        mid = (lft + r) >> 1
        if ptree[2 * nd] <= ptree[2 * nd + 1]:  # the child nearer the queue's head is popped first
            stack_n[sp] = 2 * nd + 1
            stack_l[sp] = mid
            stack_r[sp] = r
            sp += 1
            stack_n[sp] = 2 * nd
            stack_l[sp] = lft
            stack_r[sp] = mid
        else:
            stack_n[sp] = 2 * nd
            stack_l[sp] = lft
            stack_r[sp] = mid
            sp += 1
            stack_n[sp] = 2 * nd + 1
            stack_l[sp] = mid
            stack_r[sp] = r
        sp += 1
    return best


@kernel_fn(counted=False)
def _q_compact(qjob, qt, qhead, qtail, qsize, cores, duration, jcls):
    """Move the live queue entries to the front, in place, and rebuild the trees (all ``qt.shape[0]`` rows)
    at a size doubled from ``qsize`` until it holds twice the live count (plus 16); returns (new size, live
    count). The arrays must hold that size (:func:`_q_size_for`, :func:`_q_room`): the queue's positions and
    trees use only the first ``size`` and ``2 * size`` entries of ``qjob`` and each row of ``qt``, so the
    arrays may be larger. Allocates nothing (the kernel calls it inside an instant)."""
    live = 0
    for p in range(qhead, qtail):
        if qjob[p] >= 0:
            live += 1
    newsize = qsize
    while newsize < 2 * live + 16:
        newsize *= 2
    w = 0
    for p in range(qhead, qtail):  # w <= p: each entry moves to the front or stays
        j = qjob[p]
        if j >= 0:
            qjob[w] = j
            w += 1
    for p in range(w, newsize):
        qjob[p] = -1
    rows = qt.shape[0]
    for r in range(rows):
        for k in range(2 * newsize):
            qt[r, k] = INF
    for p in range(w):
        j = qjob[p]
        c = jcls[j]
        if c == CLS_U:
            qt[0, newsize + p] = cores[j]
        elif c == CLS_H2:
            qt[1, newsize + p] = cores[j]
            qt[2, newsize + p] = duration[j]
        elif c == CLS_U2:
            qt[5, newsize + p] = cores[j]
        elif c == CLS_L:
            qt[6, newsize + p] = cores[j]
            qt[7, newsize + p] = -duration[j]
        else:
            qt[3, newsize + p] = cores[j]
            qt[4, newsize + p] = duration[j]
    for r in range(rows):
        for k in range(newsize - 1, 0, -1):
            a = qt[r, 2 * k]
            b = qt[r, 2 * k + 1]
            qt[r, k] = a if a < b else b
    return newsize, w


@kernel_fn(counted=False)
def _q_size_for(qjob, qhead, qtail, qsize, extra):
    """The largest size the queue reaches while ``extra`` more jobs are appended with no start between
    them: what :func:`_q_room` must make room for before those appends. Each compaction (at the append that
    finds the tail at the end) sizes the queue by the live count then, so this follows them; fewer appends
    reach no larger size. ``qsize`` when the tail does not reach the end."""
    if qtail + extra <= qsize:
        return qsize
    live = 0
    for p in range(qhead, qtail):
        if qjob[p] >= 0:
            live += 1
    size = qsize
    tail = qtail
    left = extra
    while tail + left > size:  # the append after the size - tail that fill the arrays compacts
        live += size - tail
        left -= size - tail
        while size < 2 * live + 16:
            size *= 2
        tail = live
    return size


@kernel_fn
def _q_room(qjob, qt, qsize, need):
    """The queue's arrays with room for a queue of ``need`` positions: ``qjob`` and ``qt`` themselves if they
    have it, else larger copies of their first ``qsize`` and ``2 * qsize`` entries (the queue unchanged)."""
    if qjob.shape[0] >= need:
        return qjob, qt
    nq = np.full(need, -1, np.int64)
    copy_head(nq, qjob, qsize)
    nt = np.full((qt.shape[0], 2 * need), INF)
    copy_cols(nt, qt, 2 * qsize)
    return nq, nt


@kernel_fn(counted=False)
def _front_best(fv, fb, fn, c):
    """The best time bound among the frontier's machines with at least ``c`` free cores (-inf if none)."""
    lo = 0
    hi = fn
    while lo < hi:  # fv is descending: the machines with fv >= c are a prefix
        mid = (lo + hi) >> 1
        if fv[mid] >= c:
            lo = mid + 1
        else:
            hi = mid
    return fb[lo - 1] if lo > 0 else -INF


@kernel_fn
def _front_build(front, alive, free_c, ma4, msize, lo, hi):
    """The H4-class frontier over the alive machines of [lo, hi): ``front`` = (fv, fb, fm, fpos, fk): their
    free cores in descending order (fv), the machine at each place (fm) and each machine's place (fpos, -1
    if none), the best time bound of the first i + 1 (fb), their count (fk[0]). A job of c cores can be
    placed by the bound only on a machine with free ≥ c, so its duration must be below
    ``_front_best(c) − t``: one machine's bound and free cores, where the class bounds of :func:`_q_first_ias`
    take the best of each, often over different machines."""
    fv, fb, fm, fpos, fk = front
    n = 0
    for m in range(lo, hi):
        fpos[m] = -1
        if alive[m]:
            fm[n] = m
            fv[n] = -free_c[m]
            n += 1
    order = np.argsort(fv[:n], kind="mergesort")
    ms = fm[:n][order]
    for i in range(n):
        m = ms[i]
        fm[i] = m
        fv[i] = free_c[m]
        fpos[m] = i
        b = ma4[msize + m]
        fb[i] = b if i == 0 or b > fb[i - 1] else fb[i - 1]
    fk[0] = n


@kernel_fn(counted=False)
def _front_drop(front, m, v, ma4, msize):
    """Machine m's free cores fell to ``v`` (a start): move it down the frontier and mend the running
    bests from its old place on (only as far as they change)."""
    fv, fb, fm, fpos, fk = front
    i = fpos[m]
    if i < 0:
        return
    n = fk[0]
    first = i
    while i + 1 < n and fv[i + 1] > v:
        mm = fm[i + 1]
        fm[i] = mm
        fv[i] = fv[i + 1]
        fpos[mm] = i
        i += 1
    fm[i] = m
    fv[i] = v
    fpos[m] = i
    for k in range(first, n):
        b = ma4[msize + fm[k]]
        nb = b if k == 0 or b > fb[k - 1] else fb[k - 1]
        if k > i and nb == fb[k]:
            break
        fb[k] = nb


@kernel_fn(counted=False)
def _q_node_ok(qt, k, cu, c2, r2, c4, g4, cu2, cl, gl, use_l, fv, fb, fn, toff):
    """Whether node k of the queue trees may hold an admissible job (:func:`_q_first_ias`'s test), with
    :func:`_front_best` written out: it calls nothing (an inlined test copied its arrays at every node)."""
    if qt[0, k] <= cu or (qt[1, k] <= c2 and qt[2, k] < r2):
        return True
    if qt[3, k] <= c4 and qt[4, k] < g4:
        if fn < 0:
            return True
        c = qt[3, k]
        lo = 0
        hi = fn
        while lo < hi:  # _front_best(fv, fb, fn, c)
            mid = (lo + hi) >> 1
            if fv[mid] >= c:
                lo = mid + 1
            else:
                hi = mid
        if qt[4, k] * (1.0 - 2e-9) < (fb[lo - 1] if lo > 0 else -INF) - toff:
            return True
    return qt[5, k] <= cu2 or (use_l and qt[6, k] <= cl and qt[7, k] <= gl)


@kernel_fn(counted=False)
def _q_first_ias(qt, size, lo, cu, c2, r2, c4, g4, cu2, cl, gl, stk, fv, fb, fn, toff, budget):
    """Lowest position >= lo whose subtree may hold an admissible job (conservative), or -1; -2 if more
    than ``budget`` nodes (> 0; else no limit) were visited first.

    A class-U job needs cores <= cu; an H2-class job cores <= c2 and duration < r2; an H4-class job
    cores <= c4 and duration < g4 (g4 = best machine bound − t) and, if ``fn`` ≥ 0, by the frontier (fv, fb)
    of :func:`_front_build`, duration·(1 − 2e-9) < :func:`_front_best` (its cores) − toff (toff = t − twice
    the pass's rounding slack), tested on a subtree's least cores and least duration; a class-U2 job
    cores <= cu2; a class-L job cores <= cl and −duration <= gl (gl = t − the least machine bound, plus
    the slack)."""
    use_l = cl > -INF  # class L's rows are read only when it may pass (text runs never touch them)
    if lo < size and _q_node_ok(qt, size + lo, cu, c2, r2, c4, g4, cu2, cl, gl, use_l, fv, fb, fn, toff):
        # lo itself may hold one (the pass's usual case: the job just queued), so every subtree on its path
        # does (a node's least cores and duration are at most its leaves'): the search would return lo
        return lo
    stk[0, 0] = 1  # the DFS stack's rows (node, left, right) by 2-D index: no row views
    stk[1, 0] = 0
    stk[2, 0] = size
    sp = 1
    visits = 0
    while sp > 0:
        sp -= 1
        k = stk[0, sp]
        lft = stk[1, sp]
        r = stk[2, sp]
        if r <= lo:
            continue
        visits += 1
        if budget > 0 and visits > budget:
            return -2
        if not _q_node_ok(qt, k, cu, c2, r2, c4, g4, cu2, cl, gl, use_l, fv, fb, fn, toff):
            continue
        if k >= size:
            return k - size
        mid = (lft + r) >> 1
        stk[0, sp] = 2 * k + 1
        stk[1, sp] = mid
        stk[2, sp] = r
        sp += 1
        stk[0, sp] = 2 * k
        stk[1, sp] = lft
        stk[2, sp] = mid
        sp += 1
    return -1
