"""The compiled-loop kit: the pieces every compiled event loop is built from, written once.

* An array event heap: times in ``ht`` (float64), each entry's key columns in the rows of ``hx`` (int64,
  one to four columns), ordered as the Python loops' tuples ``(time, key…)`` — the engine's
  ``(time, job)``, the harvest loop's ``(time, job, attempt)``, Target*'s ``(time, kind, tie, job, tag)``,
  Harmony's ``(time, code)``. Pops follow that total order, so any two heaps holding the same entries pop
  them in the same order (equal entries are indistinguishable).
* numpy's pairwise summation (:func:`np_sum`), so a compiled loop's sums are ``ndarray.sum``'s bit for bit.
* The attempt log's append in the typed columns of the compiled loops (job, start, end, outcome, machine).
* An attempt's start, completion and kill with the loop's accounting (:func:`attempt_start`,
  :func:`attempt_complete`, :func:`attempt_kill`): :class:`sim.engine.loop.Loop`'s ``start``, ``complete``
  and ``kill`` without checkpointing (the compiled loops do not checkpoint), the same arithmetic in the same
  order, written once for every compiled loop.

All are engine functions (:func:`sim.engine._jit.kernel_fn`): plain Python here, compiled by
:func:`sim.engine._jit.compiled` with the engine; the other compiled loops call the compiled ones
(``compiled()["heap_push"]``). Callers read the front (``ht[0]``, ``hx[0]``) before :func:`heap_pop`.
"""

from __future__ import annotations

import numpy as np

from sim.engine._jit import kernel_fn

PW_BLOCKSIZE = 128  # numpy's pairwise-summation block
# sim.metrics' codes (literals: numba reads module globals as constants)
QUEUED, RUNNING, COMPLETED = 0, 1, 2
ATT_COMPLETED, ATT_KILLED, ATT_RUNNING = 0, 1, 2


# ------------------------------------------------------------------------------------------ event heap
@kernel_fn
def heap_less(ht, hx, i, k):
    """Heap order of entries ``i`` and ``k``: time, then the key columns in turn."""
    if ht[i] != ht[k]:
        return ht[i] < ht[k]
    for x in range(hx.shape[1]):
        if hx[i, x] != hx[k, x]:
            return hx[i, x] < hx[k, x]
    return False


@kernel_fn
def heap_swap(ht, hx, i, k):
    """Swap entries ``i`` and ``k``."""
    ht[i], ht[k] = ht[k], ht[i]
    for x in range(hx.shape[1]):
        hx[i, x], hx[k, x] = hx[k, x], hx[i, x]


@kernel_fn
def heap_sift_down(ht, hx, i, n):
    """Move entry ``i`` of a heap of ``n`` entries down to its place."""
    while True:
        lft = 2 * i + 1
        if lft >= n:
            return
        k = lft
        if lft + 1 < n and heap_less(ht, hx, lft + 1, lft):
            k = lft + 1
        if heap_less(ht, hx, k, i):
            heap_swap(ht, hx, k, i)
            i = k
        else:
            return


# Copies between arrays are written element by element: numba compiles an array assigned to a slice
# (``dst[:n] = src[:n]``) with a shape-mismatch check whose message is formatted from the shapes (string
# code: 8.6 CPU s of a cold ``varcap warm`` for its six signatures, and its code linked into every caller's
# module; measured 2026-12-03). These copies never mismatch: the destination is a larger buffer.


@kernel_fn(counted=False)
def copy_head(dst, src, n):
    """``dst[:n] = src[:n]`` for 1-D arrays."""
    for i in range(n):
        dst[i] = src[i]


@kernel_fn(counted=False)
def copy_rows(dst, src, n):
    """``dst[:n] = src[:n]`` for 2-D arrays: the first ``n`` rows, every column of ``src``."""
    for i in range(n):
        for k in range(src.shape[1]):
            dst[i, k] = src[i, k]


@kernel_fn(counted=False)
def copy_cols(dst, src, n):
    """``dst[:, :n] = src[:, :n]`` for 2-D arrays: the first ``n`` columns, every row of ``src``."""
    for r in range(src.shape[0]):
        for i in range(n):
            dst[r, i] = src[r, i]


@kernel_fn
def heap_room(ht, hx, hn):
    """The heap's arrays with room for one more entry than ``hn``: the same ones, or copies grown to
    ``2 hn + 16`` rows when full."""
    if hn < ht.shape[0]:
        return ht, hx
    ht2 = np.empty(2 * hn + 16)
    hx2 = np.empty((2 * hn + 16, hx.shape[1]), np.int64)
    copy_head(ht2, ht, hn)
    copy_rows(hx2, hx, hn)
    return ht2, hx2


@kernel_fn
def heap_push(ht, hx, hn, t, k0, k1, k2, k3):
    """Push ``(t, k0, k1, …)`` (the first ``hx.shape[1]`` keys; the rest are ignored) onto a heap of ``hn``
    entries, room checked by the caller (:func:`heap_room`); returns the new size."""
    w = hx.shape[1]
    ht[hn] = t
    hx[hn, 0] = k0
    if w > 1:
        hx[hn, 1] = k1
    if w > 2:
        hx[hn, 2] = k2
    if w > 3:
        hx[hn, 3] = k3
    i = hn
    while i > 0:
        par = (i - 1) >> 1
        if heap_less(ht, hx, i, par):
            heap_swap(ht, hx, i, par)
            i = par
        else:
            break
    return hn + 1


@kernel_fn
def heap_pop(ht, hx, hn):
    """Remove the front of a heap of ``hn`` entries (its values read by the caller first); returns the new
    size."""
    last = hn - 1
    ht[0] = ht[last]
    for x in range(hx.shape[1]):
        hx[0, x] = hx[last, x]
    heap_sift_down(ht, hx, 0, last)
    return last


@kernel_fn(counted=False)
def heap1_push(ht, hx, hn, t, j):
    """:func:`~sim.engine.kit.heap_push` of ``(t, j)`` on a heap of one key column (the same order), with
    no call inside; room checked by the caller. Returns the new size."""
    ht[hn] = t
    hx[hn, 0] = j
    i = hn
    while i > 0:
        par = (i - 1) >> 1
        less = ht[i] < ht[par] if ht[i] != ht[par] else hx[i, 0] < hx[par, 0]
        if not less:
            break
        ht[i], ht[par] = ht[par], ht[i]
        hx[i, 0], hx[par, 0] = hx[par, 0], hx[i, 0]
        i = par
    return hn + 1


@kernel_fn(counted=False)
def heap1_pop(ht, hx, hn):
    """:func:`~sim.engine.kit.heap_pop` on a heap of one key column (the same order), with no call
    inside. Returns the new size."""
    last = hn - 1
    ht[0] = ht[last]
    hx[0, 0] = hx[last, 0]
    i = 0
    while True:
        lft = 2 * i + 1
        if lft >= last:
            break
        k = lft
        r = lft + 1
        if r < last:
            if ht[r] != ht[lft]:
                if ht[r] < ht[lft]:
                    k = r
            elif hx[r, 0] < hx[lft, 0]:
                k = r
        less = ht[k] < ht[i] if ht[k] != ht[i] else hx[k, 0] < hx[i, 0]
        if not less:
            break
        ht[i], ht[k] = ht[k], ht[i]
        hx[i, 0], hx[k, 0] = hx[k, 0], hx[i, 0]
        i = k
    return last


@kernel_fn
def heap_make(ht, hx, n):
    """Order the first ``n`` entries as a heap (after entries were dropped in place)."""
    for i in range(n // 2 - 1, -1, -1):
        heap_sift_down(ht, hx, i, n)


# ------------------------------------------------------------------------------------ pairwise sum
@kernel_fn
def block_sum(a, lo, n):
    """numpy's ``pairwise_sum`` of ``a[lo : lo + n]`` for ``n ≤ 128``: sequential below 8, else 8 accumulators."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - (n % 8):
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@kernel_fn
def pairwise_sum(a, lo, n):
    """numpy's ``pairwise_sum`` of ``a[lo : lo + n]`` (blocks of ≤ 128, halves above, rounded to multiples
    of 8), without recursion (numba's cache does not hold recursive functions safely): a post-order walk
    with explicit stacks, adding each split's two halves as numpy does."""
    if n <= PW_BLOCKSIZE:
        return block_sum(a, lo, n)
    f_lo = np.empty(128, np.int64)
    f_n = np.empty(128, np.int64)
    f_st = np.empty(128, np.int64)
    vals = np.empty(128)
    nf, nv = 1, 0
    f_lo[0], f_n[0], f_st[0] = lo, n, 0
    while nf:
        nf -= 1
        flo, fn, st = f_lo[nf], f_n[nf], f_st[nf]
        if fn <= PW_BLOCKSIZE:
            vals[nv] = block_sum(a, flo, fn)
            nv += 1
        elif st == 1:
            nv -= 1
            vals[nv - 1] = vals[nv - 1] + vals[nv]
        else:
            n2 = fn // 2
            n2 -= n2 % 8
            f_lo[nf], f_n[nf], f_st[nf] = flo, fn, 1
            f_lo[nf + 1], f_n[nf + 1], f_st[nf + 1] = flo + n2, fn - n2, 0
            f_lo[nf + 2], f_n[nf + 2], f_st[nf + 2] = flo, n2, 0
            nf += 3
    return vals[0]


@kernel_fn
def np_sum(a):
    """``float(a.sum())`` of a contiguous float64 vector, bit for bit (numpy's pairwise sum of all of it)."""
    return pairwise_sum(a, 0, a.size)


# ------------------------------------------------------------------------------------- attempt log
@kernel_fn
def log_open(lj, ls, le, lo, lm, nlog, cur_att, j, m, t, horizon):
    """Append a running attempt of job ``j`` on machine ``m`` from ``t`` (end = ``horizon`` until it closes)
    to the typed log columns (job, start, end, outcome, machine) of ``nlog`` rows, doubling them when full;
    ``cur_att[j]`` is the row. Returns the (maybe grown) columns and the new row count."""
    if nlog == lj.size:
        k2 = 2 * nlog
        lj = np.concatenate((lj, np.empty(k2 - nlog, np.int32)))
        ls = np.concatenate((ls, np.empty(k2 - nlog)))
        le = np.concatenate((le, np.empty(k2 - nlog)))
        lo = np.concatenate((lo, np.empty(k2 - nlog, np.int8)))
        lm = np.concatenate((lm, np.empty(k2 - nlog, np.int32)))
    lj[nlog] = j
    ls[nlog] = t
    le[nlog] = horizon
    lo[nlog] = ATT_RUNNING
    lm[nlog] = m
    cur_att[j] = nlog
    return lj, ls, le, lo, lm, nlog + 1


@kernel_fn
def log_new(n):
    """Empty typed log columns with room for ``max(1024, 1.25 n)`` attempts."""
    lcap = max(1024, n + n // 4)
    return (
        np.empty(lcap, np.int32),
        np.empty(lcap),
        np.empty(lcap),
        np.empty(lcap, np.int8),
        np.empty(lcap, np.int32),
    )


# -------------------------------------------------------------------------- an attempt's accounting
@kernel_fn(inline=True)
def attempt_start(lj, ls, le, lo, lm, nlog, cur_att, status, start_s, first, att, machine, cores, j, m, t,
                  horizon, busy):  # fmt: skip
    """:meth:`sim.engine.loop.Loop.start` but the ``END`` push (each loop keys its heap its own way): job
    ``j`` runs on machine ``m`` from ``t``, its attempt appended to the log (:func:`log_open`). Returns the
    (maybe grown) log columns, the new row count and the cores busy."""
    status[j] = RUNNING
    start_s[j] = t
    if first[j] < 0:
        first[j] = t
    att[j] += 1
    machine[j] = m
    lj, ls, le, lo, lm, nlog = log_open(lj, ls, le, lo, lm, nlog, cur_att, j, m, t, horizon)
    return lj, ls, le, lo, lm, nlog, busy + cores[j]


@kernel_fn(inline=True)
def attempt_complete(le, lo, cur_att, status, end, cores, duration, j, t, completed_cs, busy):
    """:meth:`sim.engine.loop.Loop.complete` without checkpointing: job ``j``'s attempt ends at ``t``
    completed. Returns the completed core-seconds and the cores busy."""
    status[j] = COMPLETED
    end[j] = t
    le[cur_att[j]] = t
    lo[cur_att[j]] = ATT_COMPLETED
    return completed_cs + cores[j] * duration[j], busy - cores[j]


@kernel_fn(inline=True)
def attempt_kill(le, lo, cur_att, status, start_s, terms, machine, cores, j, t, wasted_cs, aborted, busy,
                 n_term):  # fmt: skip
    """:meth:`sim.engine.loop.Loop.kill` without checkpointing: job ``j``'s running attempt ends at ``t``
    killed (its log row closed), its work wasted, the job queued again (the caller requeues it). Returns
    the wasted core-seconds, the aborted seconds, the cores busy and the terminations."""
    s0 = start_s[j]
    le[cur_att[j]] = t
    lo[cur_att[j]] = ATT_KILLED
    terms[j] += 1
    status[j] = QUEUED
    machine[j] = -1
    return wasted_cs + cores[j] * (t - s0), aborted + (t - s0), busy - cores[j], n_term + 1
