"""Index structures of the engine: the machine max-tree and the queue min-tree (the completion heap is the
kit's, :mod:`sim.engine.kit`).

Segment trees are flat arrays of ``2 * size`` (leaves at ``size + i``, ``size`` a power of two). All
functions are engine functions (compiled with the kernel).
"""

from __future__ import annotations

import numpy as np

from sim.engine._jit import kernel_fn

INF = np.inf


def pow2(n: int) -> int:
    """Smallest power of two >= max(n, 1)."""
    p = 1
    while p < max(n, 1):
        p *= 2
    return p


# --------------------------------------------------------------------------- machine tree (max of free)
@kernel_fn(counted=False)
def _mt_set(tree, size, i, v):
    k = size + i
    tree[k] = v
    k >>= 1
    while k >= 1:
        a = tree[2 * k]
        b = tree[2 * k + 1]
        tree[k] = a if a > b else b
        k >>= 1


@kernel_fn
def _mt_fix(tree, size, lo, hi):
    """Recompute every ancestor of leaves ``lo..hi`` (inclusive) after their values were written directly
    (``tree[size + i] = v``): the tree :func:`_mt_set` on each would leave, in O(hi - lo + log size)
    instead of O((hi - lo) log size) (a capacity change turning thousands of machines on or off)."""
    a = (size + lo) >> 1
    b = (size + hi) >> 1
    while a >= 1:
        for k in range(a, b + 1):
            x = tree[2 * k]
            y = tree[2 * k + 1]
            tree[k] = x if x > y else y
        a >>= 1
        b >>= 1


@kernel_fn(counted=False)
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


@kernel_fn(counted=False)
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


@kernel_fn(counted=False)
def _mt2_first(tf, ta, size, lo, c, tg, stk):
    """Lowest machine >= lo with free >= c and bound > tg (DFS with pruning on both maxima), or -1. The
    stack's rows by 2-D index (no row views: a view costs reference counting at every call)."""
    stk[0, 0] = 1
    stk[1, 0] = 0
    stk[2, 0] = size
    sp = 1
    while sp > 0:
        sp -= 1
        k = stk[0, sp]
        lft = stk[1, sp]
        r = stk[2, sp]
        if r <= lo or tf[k] < c or ta[k] <= tg:
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


# ------------------------------------------------------------------------------ queue tree (min demand)
@kernel_fn(counted=False, entry=True)
def _qt_set(tree, size, i, v):
    k = size + i
    tree[k] = v
    k >>= 1
    while k >= 1:
        a = tree[2 * k]
        b = tree[2 * k + 1]
        tree[k] = a if a < b else b
        k >>= 1


@kernel_fn(counted=False)
def _qt_prefix_min(tree, size, r):
    """min over leaves [0, r) (+inf if none)."""
    res = INF
    lft = size
    r += size
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


@kernel_fn(counted=False, entry=True)
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
