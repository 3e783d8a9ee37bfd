"""Admission rules of the compiled engine: which (job, machine, t) the scheduling pass may use.

A rule is a predicate code (``PRED_*``) with its row in :data:`RULES`, which tells the kernel what the rule
needs without the kernel knowing the rule: ``bound`` — the kind of per-machine time bound the pass prunes
with (a job needs ``t + duration < bound``: ``BOUND_SURVIVAL``, recomputed when a machine's uptime crosses
a knot of its survival curve, or ``BOUND_INTERVAL_END``, the end of the machine's current interval, set when
it turns on) — and ``timed`` — whether admission can become true with time alone (the kernel then runs
:func:`_wakeups` each instant and wakes at the next time it may). A new compiled policy adds its predicate
to :func:`_admit` and a row to :data:`RULES`; the kernel does not change.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.engine._jit import kernel_fn
from sim.engine.queue import CLS_H2, CLS_H4, CLS_L, CLS_U, CLS_U2, N_CLASSES, _qx_pmin, _qxl_longest
from sim.engine.trees import _mt_range_max, _mt_set, _qt_set

INF = np.inf

PRED_NONE, PRED_IAS, PRED_ORACLE = 0, 1, 2
H2_FLAG, H3_FLAG, H4_FLAG = 1, 2, 4
H4_LITERAL_FLAG = 8  # H4 as Algorithm 5 prints it: admit iff S(u+d)/S(u) < a_thresh (class L, see _al_bound)
# H2 as a further condition on the machines of a survival band other than 0 (ias-general: band 0 holds the
# always-on machines, where no change can end a job); the job's other rules (H4) still decide, so the H4
# class's pruning bound stays a necessary condition
H2_BANDED_FLAG = 16
BOUND_NONE, BOUND_SURVIVAL, BOUND_INTERVAL_END = 0, 1, 2


@dataclass(frozen=True)
class Rule:
    """What the kernel needs to know about an admission predicate."""

    bound: int = BOUND_NONE
    timed: bool = False


RULES: dict[int, Rule] = {
    PRED_NONE: Rule(),
    PRED_IAS: Rule(BOUND_SURVIVAL, timed=True),
    PRED_ORACLE: Rule(BOUND_INTERVAL_END),
}

# wake-up state of timed rules (one float64 array): last model epoch, last H2 period boundary, whether
# every machine needs a first look, the earliest knot crossing, the next wake-up time
W_EPOCH, W_BOUNDARY, W_NEED_EVAL, W_MIN_CROSS, W_NEXT_WAKE = 0, 1, 2, 3, 4


@kernel_fn
def _period_index(t, period):
    """k with ``k·period ≤ t < (k+1)·period`` in floating point: ``floor(t / period)`` corrected by one where
    rounding disagrees (a boundary ``k·period`` whose quotient rounds just below k), so the next boundary
    ``(k+1)·period`` is always strictly after t and a wake-up there advances time."""
    k = np.floor(t / period)
    if (k + 1.0) * period <= t:
        k += 1.0
    elif k * period > t:
        k -= 1.0
    return k


@kernel_fn(counted=False)
def _surv(times, surv, n, x):
    """S(x) of a step-function survival curve with n knots."""
    if n == 0:
        return 1.0
    k = np.searchsorted(times[:n], x, side="right") - 1
    if k < 0:
        return 1.0
    return surv[k]


@kernel_fn(counted=False)
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


@kernel_fn(counted=False)
def _admit(pred, j, m, t, duration, adm):
    """Whether policy ``pred`` admits job j on machine m at t. ``adm`` bundles the admission inputs:
    (jflag, period, a_thresh, p90, up_since, mt, ms, mn, mk, mtl, mkn, mmax, epoch_s, iv_ptr, iv_end, band,
    jthresh); survival models are indexed [epoch, band of machine m]. See :func:`_admit_flat`."""
    (jflag, period, a_thresh, p90, up_since, mt, ms, mn, mk, mtl, mkn, mmax, epoch_s, iv_ptr, iv_end, band,
     jthresh) = adm  # fmt: skip
    return _admit_flat(
        pred, j, m, t, duration[j], jflag, period, a_thresh, p90, up_since, mt, ms, mn, mk, mtl, mkn, mmax, epoch_s,
        iv_ptr, iv_end, band, jthresh,
    )  # fmt: skip


@kernel_fn(counted=False)
def _admit_flat(
    pred, j, m, t, d, jflag, period, a_thresh, p90, up_since, mt, ms, mn, mk, mtl, mkn, mmax, epoch_s, iv_ptr,
    iv_end, band, jthresh,
):  # fmt: skip
    """:func:`_admit` for job j of duration d, on the admission inputs one by one: it calls nothing and takes
    no view (the kernel's pass calls it for each machine it offers a job; a call that unpacks the bundle or
    slices the survival curves counts references to every array it touches, see :mod:`sim.engine.ff`).
    S(x) is :func:`_surv` and the mean remaining :func:`_mean_remaining`, their searches written out (the
    index of ``np.searchsorted(..., side="right")``). H4 admits where S(u+d)/S(u) ≥ ``jthresh[j]``, the job's
    own bar (``a_thresh``, the machines' pruning bound's, where no job has one of its own: ``jthresh`` empty)."""
    if pred == PRED_ORACLE:
        # the machine's current interval must outlast the job (future capacity is known)
        lo = iv_ptr[m]
        hi = iv_ptr[m + 1]
        a = lo
        b = hi
        while a < b:
            mid = (a + b) >> 1
            if iv_end[mid] <= t:
                a = mid + 1
            else:
                b = mid
        if a >= hi:
            return False
        return t + d <= iv_end[a]
    f = jflag[j]
    if f == 0:
        return True
    if ((f & H2_FLAG) != 0 or ((f & H2_BANDED_FLAG) != 0 and band[m] != 0)) and d <= period:
        pk = np.floor(t / period)  # _period_index written out
        if (pk + 1.0) * period <= t:
            pk += 1.0
        elif pk * period > t:
            pk -= 1.0
        phase = t - pk * period
        if (f & H2_FLAG) != 0:
            return (period - phase) > d or phase == 0.0
        if not ((period - phase) > d or phase == 0.0):
            return False
    e = 0
    if epoch_s > 0:
        e = int(t // epoch_s)
        if e >= mn.shape[0]:
            e = mn.shape[0] - 1
    u = t - up_since[m]
    bm = band[m]
    n = mn[e, bm]
    if (f & H3_FLAG) != 0 and d > p90:
        mr = 0.0
        if u < mmax[e, bm]:
            su = 1.0  # S(u)
            a = 0
            b = n
            while a < b:
                mid = (a + b) >> 1
                if mt[e, bm, mid] <= u:
                    a = mid + 1
                else:
                    b = mid
            if a > 0:
                su = ms[e, bm, a - 1]
            if su > 0.0:
                nk = mkn[e, bm]
                a = 0
                b = nk
                while a < b:
                    mid = (a + b) >> 1
                    if mk[e, bm, mid] <= u:
                        a = mid + 1
                    else:
                        b = mid
                k = a - 1
                if k < 0:
                    k = 0
                if k > nk - 2:
                    k = nk - 2
                mr = (mtl[e, bm, k + 1] + su * (mk[e, bm, k + 1] - u)) / su
        if mr < d:
            return False
    if (f & (H4_FLAG | H4_LITERAL_FLAG)) != 0:
        su = 1.0  # S(u)
        sd = 1.0  # S(u + d)
        x = u
        for w in range(2):
            a = 0
            b = n
            while a < b:
                mid = (a + b) >> 1
                if mt[e, bm, mid] <= x:
                    a = mid + 1
                else:
                    b = mid
            s = ms[e, bm, a - 1] if a > 0 else 1.0
            if w == 0:
                su = s
                x = u + d
            else:
                sd = s
        if (f & H4_FLAG) != 0:
            if su <= 0.0:
                return False
            if sd / su < (a_thresh if jthresh.shape[0] == 0 else jthresh[j]):
                return False
        if (f & H4_LITERAL_FLAG) != 0 and (su <= 0.0 or sd / su >= a_thresh):
            return False
    return True


@kernel_fn(counted=False)
def _can_run(pred, j, m, t, cores, mem, use_mem, duration, alive, free_c, free_m, adm):
    """Machine m is on, has the job's cores (and memory) free, and the policy admits the job there."""
    if not alive[m] or free_c[m] < cores[j] or (use_mem and free_m[m] < mem[j]):
        return False
    return pred == PRED_NONE or _admit(pred, j, m, t, duration, adm)


@kernel_fn(counted=False)
def _a4_bound(times, surv, n, k, up, theta):
    """Absolute time bound for H4 on a machine up since ``up`` whose uptime has passed k knots:
    a job of duration d is admissible iff t + d < bound."""
    su = 1.0 if k == 0 else surv[k - 1]
    if su <= 0.0:
        return -INF
    target = theta * su
    # the first knot with surv < target (surv is non-increasing): np.searchsorted(-surv[:n], -target,
    # side="right") without negating a copy of the curve at every call
    kk = 0
    hi = n
    while kk < hi:
        mid = (kk + hi) >> 1
        if surv[mid] >= target:
            kk = mid + 1
        else:
            hi = mid
    if kk < n:
        return up + times[kk]
    return INF


@kernel_fn(counted=False)
def _al_bound(times, surv, n, k, up, a):
    """Literal H4's bound L on a machine up since ``up`` whose uptime has passed k knots: a job of duration
    d passes ``S(u+d)/S(u) < a`` iff t + d ≥ L (the first knot where the ratio, as :func:`_admit` computes
    it, falls below a; +inf: never, as when S(u) = 0). L only grows as the uptime passes knots."""
    su = 1.0 if k == 0 else surv[k - 1]
    if su <= 0.0:
        return INF
    kk = 0
    hi = n
    while kk < hi:
        mid = (kk + hi) >> 1
        if surv[mid] / su >= a:
            kk = mid + 1
        else:
            hi = mid
    if kk < n:
        return up + times[kk]
    return INF


@kernel_fn(counted=False)
def _lit_wake(m, t, tol, alive, free_c, lt, msize, qxl, cls_lo, cls_hi, stk):
    """Literal H4's wake-up time of machine m: the earliest time after t at which a queued class-L job that
    fits its free cores reaches its bound (t + d = L), i.e. L − the longest such job shorter than L − t;
    t + tol for a job due within the rounding (one more look); +inf if none or m is off or outside the
    class's range. Earlier than needed is safe (the wake-up finds nothing); never later while the
    machine's bound, free cores and the queue stay as they are."""
    if not alive[m] or m < cls_lo[CLS_L] or m >= cls_hi[CLS_L]:
        return INF
    L = -lt[0, msize + m]
    if L == INF:
        return INF
    d = _qxl_longest(qxl, free_c[m], L - t + tol, stk)
    if d == -INF:
        return INF
    w = L - d
    return w if w > t else t + tol


@kernel_fn(counted=False)
def _lit_lower(j, t, tol, lo, hi, c, d, alive, free_c, lt, msize):
    """Class-L job j (cores c, duration d, machines [lo, hi)) stays queued after this instant's pass: lower
    the wake-up time of each machine of its range where it fits to when it reaches the machine's bound
    (t + tol for a job due within the rounding; none for one due before)."""
    for m in range(lo, hi):
        if not alive[m] or free_c[m] < c:
            continue
        w = -lt[0, msize + m] - d
        if w <= t:
            if w <= t - tol:
                continue
            w = t + tol
        if w < lt[1, msize + m]:
            _qt_set(lt[1], msize, m, w)


@kernel_fn(counted=False)
def _lit_due(lt, msize, t, dirty, is_dirty, nd, stk):
    """Mark dirty every machine whose literal-H4 wake-up time is at or before t (a queued class-L job may
    pass there now; the end of the instant sets the dirty machines' times again); returns the dirty count."""
    tree = lt[1]
    stack_n = stk[0]
    stack_n[0] = 1
    sp = 1
    while sp > 0:
        sp -= 1
        k = stack_n[sp]
        if tree[k] > t:
            continue
        if k >= msize:
            m = k - msize
            if not is_dirty[m]:
                is_dirty[m] = True
                dirty[nd] = m
                nd += 1
            continue
        stack_n[sp] = 2 * k + 1
        sp += 1
        stack_n[sp] = 2 * k
        sp += 1
    return nd


@kernel_fn(counted=False)
def _bound_at_up(bound, m, t, ma4, msize, adm):
    """A machine turned on at t: set its time bound if the rule's bound is known then (interval end)."""
    if bound == BOUND_INTERVAL_END:
        iv_ptr = adm[13]
        iv_end = adm[14]
        lo_ = iv_ptr[m]
        hi_ = iv_ptr[m + 1]
        kk = lo_ + np.searchsorted(iv_end[lo_:hi_], t, side="right")
        _mt_set(ma4, msize, m, iv_end[kk] if kk < hi_ else -INF)


@kernel_fn(inline=True)
def _rmax(tree, msize, lo, hi, nm):
    """max over machines [lo, hi) of a machine tree: its root when the range holds all nm machines (the
    leaves past them hold no more than any machine: -1 or -inf)."""
    if lo == 0 and hi >= nm:
        return tree[1]
    return _mt_range_max(tree, msize, lo, hi)


@kernel_fn(counted=False)
def _class_bounds(mtree, ma4, msize, cls_lo, cls_hi, lt, nm):
    """Best free cores per pruning class over its machine range, the best time bound (class H4) and the
    least literal bound, negated (class L); ``nm``: the machines. A class with the range of the one before
    reuses its free cores."""
    cu = _rmax(mtree, msize, cls_lo[0], cls_hi[0], nm)
    c2 = _rmax(mtree, msize, cls_lo[1], cls_hi[1], nm)
    if cls_lo[2] == cls_lo[1] and cls_hi[2] == cls_hi[1]:
        c4 = c2
    else:
        c4 = _rmax(mtree, msize, cls_lo[2], cls_hi[2], nm)
    cu2 = _rmax(mtree, msize, cls_lo[3], cls_hi[3], nm)
    cl = -INF
    gl = -INF
    if cls_hi[CLS_L] > cls_lo[CLS_L]:
        if cls_lo[CLS_L] == cls_lo[1] and cls_hi[CLS_L] == cls_hi[1]:
            cl = c2
        else:
            cl = _rmax(mtree, msize, cls_lo[CLS_L], cls_hi[CLS_L], nm)
        gl = _rmax(lt[0], msize, cls_lo[CLS_L], cls_hi[CLS_L], nm)
    return cu, c2, c4, _rmax(ma4, msize, cls_lo[2], cls_hi[2], nm), cu2, cl, gl


@kernel_fn(counted=False)
def _dirty_bounds(dm, nd, alive, free_c, ma4, msize, cls_lo, cls_hi, use_bound, lt):
    """Per-class best free cores (and best time bound, class L's least bound negated) over the dirty
    machines only."""
    cu = -INF
    c2 = -INF
    c4 = -INF
    g4 = -INF
    cu2 = -INF
    cl = -INF
    gl = -INF
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
            if use_bound and ma4[msize + m] > g4:
                g4 = ma4[msize + m]
        if cls_lo[3] <= m < cls_hi[3] and f > cu2:
            cu2 = f
        if cls_lo[CLS_L] <= m < cls_hi[CLS_L]:
            if f > cl:
                cl = f
            if lt[0, msize + m] > gl:
                gl = lt[0, msize + m]
    return cu, c2, c4, g4, cu2, cl, gl


@kernel_fn(counted=False)
def _dirty_any(dm, nd, alive, free_c, ma4, msize, cls_lo, cls_hi, use_bound, qt, qxs, r2, t, slack, lt):
    """Whether some queued job may be admitted on some dirty machine (conservative: False means none can,
    so the dirty pass would start nothing). Each machine is paired with its own free cores and time bound;
    H2-, H4- and L-class jobs are asked by cores and duration together (``qxs``: their
    :func:`~sim.engine.queue._qx_new`; H4 and L with twice the pass's rounding slack), classes U and U2 by
    their trees' roots as the pass tests them. The indexes are unpacked once and asked by
    :func:`~sim.engine.queue._qx_pmin`, which calls nothing."""
    x2t, x2r, x2s, x2p = qxs[0]
    x4t, x4r, x4s, x4p = qxs[1]
    xlt, xlr, xls, xlp = qxs[2]
    for x in range(nd):
        m = dm[x]
        if not alive[m]:
            continue
        f = free_c[m]
        if cls_lo[0] <= m < cls_hi[0] and qt[0, 1] <= f:
            return True
        if (
            cls_lo[1] <= m < cls_hi[1]
            and qt[1, 1] <= f
            and qt[2, 1] < r2
            and _qx_pmin(x2t, x2s, f) * (1.0 - 2e-9) < r2
        ):
            return True
        if cls_lo[3] <= m < cls_hi[3] and qt[5, 1] <= f:
            return True
        if cls_lo[2] <= m < cls_hi[2]:
            g = ma4[msize + m] - t + 2.0 * slack if use_bound else INF
            if _qx_pmin(x4t, x4s, f) * (1.0 - 2e-9) < g:
                return True
        if cls_lo[CLS_L] <= m < cls_hi[CLS_L] and _qx_pmin(xlt, xls, f) <= lt[0, msize + m] + t + 2.0 * slack:
            return True
    return False


@kernel_fn(inline=True)
def _mark_dirty(m, dirty, is_dirty, nd):
    """Add machine m to the dirty list (machines whose state improved this instant); returns the count."""
    if not is_dirty[m]:
        is_dirty[m] = True
        dirty[nd] = m
        nd += 1
    return nd


@kernel_fn(counted=False)
def _wakeups(t, adm, any_h2, alive, wake, next_cross, knot_idx, ma4, msize, dirty, is_dirty, nd, lt, use_lit):
    """Timed rules (IAS): admission may become true at a period boundary (H2), at a model epoch change, or
    when a machine's uptime crosses a knot of its survival curve (S(u) drops, so S(u+d)/S(u) and the mean
    remaining can rise). Updates the machines' bounds (``use_lit``: also literal H4's, ``lt[0]`` negated)
    and the wake-up state; returns (freed, global wake, dirty count). Literal H4's own wake-ups (a job
    reaching a machine's bound) are :func:`_lit_wake`'s."""
    period = adm[1]
    a_thresh = adm[2]
    up_since = adm[4]
    mt = adm[5]
    ms = adm[6]
    mn = adm[7]
    epoch_s = adm[12]
    band = adm[15]
    freed = False
    global_wake = False
    e = 0
    if epoch_s > 0:
        e = int(t // epoch_s)
        if e >= mn.shape[0]:
            e = mn.shape[0] - 1
    if e != wake[W_EPOCH]:
        wake[W_EPOCH] = e
        freed = True
        global_wake = True
        wake[W_NEED_EVAL] = 1.0
        for mm in range(alive.shape[0]):
            knot_idx[mm] = 0
            next_cross[mm] = np.inf
    if any_h2:
        b = _period_index(t, period) * period
        if b != wake[W_BOUNDARY]:
            wake[W_BOUNDARY] = b
            freed = True
            global_wake = True
    # the per-machine loop runs only when some crossing is due or a machine needs a first look
    if wake[W_NEED_EVAL] != 0.0 or t >= wake[W_MIN_CROSS]:
        wake[W_NEED_EVAL] = 0.0
        min_cross = 1e300
        for mm in range(alive.shape[0]):
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
                    nd = _mark_dirty(mm, dirty, is_dirty, nd)
                _mt_set(ma4, msize, mm, _a4_bound(mt[e, bm], ms[e, bm], kn, k, up_since[mm], a_thresh))
                if use_lit:
                    _mt_set(lt[0], msize, mm, -_al_bound(mt[e, bm], ms[e, bm], kn, k, up_since[mm], a_thresh))
                nc = up_since[mm] + mt[e, bm, k] if k < kn else 1e300
                # rounding can put the crossing at or before t (u = t - up_since rounded down): look again
                # at the next representable time, never at t itself
                next_cross[mm] = nc if nc > t else np.nextafter(t, np.inf)
            if next_cross[mm] < min_cross:
                min_cross = next_cross[mm]
        wake[W_MIN_CROSS] = min_cross
    next_wake = wake[W_MIN_CROSS]
    if any_h2:
        nb = (_period_index(t, period) + 1.0) * period
        if nb < next_wake:
            next_wake = nb
    if epoch_s > 0:
        ne = (_period_index(t, epoch_s) + 1.0) * epoch_s
        if ne < next_wake:
            next_wake = ne
    wake[W_NEXT_WAKE] = next_wake
    return freed, global_wake, nd


def _arr(x: object, dtype: type) -> np.ndarray:
    """A C-contiguous, writable array (a read-only one, e.g. from polars, would make numba compile the
    kernel a second time for its own type)."""
    return np.require(x, dtype, ["C_CONTIGUOUS", "WRITEABLE"])


@dataclass
class Admission:
    """Per-(job, machine) admission rules for the scheduling pass (engine index order).

    ``pred``: the predicate (a key of :data:`RULES`); ``job_lo/job_hi``: allowed machine index range per job;
    ``jflag``: H2/H3/H4 bits per job; ``models``: survival models per epoch (``epoch_s`` > 0: model
    ``floor(t / epoch_s)`` applies at t), each either one ``IntervalModel`` (every machine) or a sequence of
    them, one per machine band, with ``band_of_machine`` (length = machines) saying which band's model
    applies on each machine; ``iv_ptr/iv_end``: per-machine sorted interval ends (CSR) for the Oracle.
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
    frontier: bool = True  # prune H4-class jobs of full passes by the cores/bound frontier (False: tests)
    band_of_machine: np.ndarray | None = None  # band index per machine (None: band 0 everywhere)
    #: H4's bar per job (None: ``a_thresh`` for every job); each at least ``a_thresh``, which the machines'
    #: pruning bounds are computed with (so a bound stays a necessary condition)
    job_thresh: np.ndarray | None = None

    @property
    def rule(self) -> Rule:
        """The predicate's row of :data:`RULES` (ValueError for an unknown predicate)."""
        if self.pred not in RULES:
            raise ValueError(f"unknown admission predicate {self.pred!r}; known: {sorted(RULES)}")
        return RULES[self.pred]

    def model_grid(self) -> list[list]:
        """``models`` as [epoch][band]; raises ValueError if epochs have different band counts."""
        grid = [list(m) if isinstance(m, (list, tuple)) else [m] for m in (self.models or [])]
        if grid and len({len(g) for g in grid}) != 1:
            raise ValueError("every epoch needs the same number of band models")
        return grid

    def bands(self, machines: int, n_bands: int) -> np.ndarray:
        """Band index per machine, checked (ValueError naming the expected shape and range)."""
        if self.band_of_machine is None:
            return np.zeros(machines, np.int64)
        b = _arr(self.band_of_machine, np.int64)
        if b.shape != (machines,) or (b.size and (b.min() < 0 or b.max() >= n_bands)):
            raise ValueError(f"band_of_machine needs {machines} band indices in [0, {n_bands})")
        return b

    def job_ranges(self, n: int, machines: int) -> tuple[np.ndarray, np.ndarray]:
        """Allowed machine range [lo, hi) per job."""
        lo = np.zeros(n, np.int64) if self.job_lo is None else _arr(self.job_lo, np.int64)
        hi = np.full(n, machines, np.int64) if self.job_hi is None else _arr(self.job_hi, np.int64)
        return lo, hi

    def inputs(self, machines: int) -> tuple:
        """The tuple :func:`_admit` reads (``up_since`` is the kernel's own array, filled in there):
        (jflag, period, a_thresh, p90, up_since, mt, ms, mn, mk, mtl, mkn, mmax, epoch_s, iv_ptr, iv_end,
        band) with jflag left for the caller."""
        grid = self.model_grid()
        e = max(len(grid), 1)
        nb = len(grid[0]) if grid else 1
        # each distinct model once, then its row copied into every (epoch, band) cell that holds it
        # (IAS-forecast's grid: 226 curves over 720 × 161 cells; filled cell by cell, 0.55 CPU s a run)
        models: list = []
        slot: dict[int, int] = {}
        cell = np.zeros((e, nb), np.int64)
        for i, g in enumerate(grid):
            for b, m in enumerate(g):
                if id(m) not in slot:
                    slot[id(m)] = len(models)
                    models.append(m)
                cell[i, b] = slot[id(m)]
        u = max(len(models), 1)
        width = max([len(m.times) for m in models] + [1])
        ut, us = np.zeros((u, width)), np.zeros((u, width))
        un, ukn = np.zeros(u, np.int64), np.zeros(u, np.int64)
        uk, utl = np.zeros((u, width + 2)), np.zeros((u, width + 2))
        umax = np.zeros(u)
        for r, m in enumerate(models):
            k = len(m.times)
            ut[r, :k], us[r, :k], un[r] = m.times, m.surv, k
            knots, tail = m._tail_area()
            uk[r, : len(knots)], utl[r, : len(tail)], ukn[r] = knots, tail, len(knots)
            umax[r] = m.max_time
        mt, ms, mn, mk, mtl, mkn, mmax = (a[cell] for a in (ut, us, un, uk, utl, ukn, umax))
        ptr = np.zeros(machines + 1, np.int64) if self.iv_ptr is None else _arr(self.iv_ptr, np.int64)
        end = np.zeros(1) if self.iv_end is None else _arr(self.iv_end, np.float64)
        return (
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
        )

    def thresholds(self, n: int) -> np.ndarray:
        """H4's bar per job: ``job_thresh``, or an empty array when every job's bar is ``a_thresh`` (no
        8 bytes a job for the runs without per-job bars). Raises ValueError for a ``job_thresh`` of another
        length or with a bar below ``a_thresh`` (the pruning bound would cut admissible starts)."""
        if self.job_thresh is None:
            return np.zeros(0)
        th = _arr(self.job_thresh, np.float64)
        if th.shape != (n,):
            raise ValueError(f"job_thresh needs {n} values (got shape {th.shape})")
        if th.size and not float(th.min()) >= float(self.a_thresh):
            raise ValueError(f"every job_thresh must be at least a_thresh ({self.a_thresh:g})")
        return th

    def flags(self, n: int) -> np.ndarray:
        """H2/H3/H4 bits per job (zeros if none)."""
        return np.zeros(n, np.int8) if self.jflag is None else _arr(self.jflag, np.int8)

    def classes(self, duration: np.ndarray, machines: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pruning class per job (engine order) and each class's machine range (min lo, max hi). Jobs
        without a time-dependent rule whose range starts above machine 0 (IAS-H1's small jobs) form class
        U2 when the others (H1's big jobs) end at or below that start, so each keeps a tight range."""
        n = len(duration)
        cls = np.zeros(n, np.int8)
        if self.rule.bound == BOUND_INTERVAL_END:
            cls[:] = CLS_H4  # pruned by the machines' interval ends, like H4's bound
        elif self.rule.bound == BOUND_SURVIVAL and self.jflag is not None:
            f = np.asarray(self.jflag)
            h2 = ((f & H2_FLAG) != 0) & (duration <= self.period_s)
            h4 = ((f & H4_FLAG) != 0) & ~h2
            lit = ((f & H4_LITERAL_FLAG) != 0) & ~h2 & ~h4
            cls[h2] = CLS_H2
            cls[h4] = CLS_H4
            cls[lit] = CLS_L
        lo = np.zeros(n, np.int64) if self.job_lo is None else np.asarray(self.job_lo, np.int64)
        hi = np.full(n, machines, np.int64) if self.job_hi is None else np.asarray(self.job_hi, np.int64)
        u = cls == CLS_U
        upper = u & (lo > 0)
        if upper.any() and (u & ~upper).any() and hi[u & ~upper].max() <= lo[upper].min():
            cls[upper] = CLS_U2
        clo = np.zeros(N_CLASSES, np.int64)
        chi = np.zeros(N_CLASSES, np.int64)
        for c in range(N_CLASSES):
            sel = cls == c
            if sel.any():
                clo[c], chi[c] = lo[sel].min(), hi[sel].max()
        return cls, clo, chi
