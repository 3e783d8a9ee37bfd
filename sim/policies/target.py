"""Paper 001 risk-aware schedulers: ``target-stretch``, ``target-asap``, ``packed-target-asap``.

Machines are ordered by risk (index 0 safest; capacity drops turn off the highest index, as in FF). Unlike
First-Fit there is one planned queue per machine: a job assigned to a machine gets an exact planned start
(the earliest time its cores fit under the machine's plan) and end (durations are known).

* ``M_use`` (usable machines) starts at ``M⁻`` (the trace's minimum). After every event the utilization
  ``U`` of machines ``[0, M_use)`` is computed (``u(m) = 1`` if a planned job has not started yet, else
  busy cores / cores); ``U > 0.95`` and ``M_alive > M_use`` grows ``M_use`` by one, ``U < 0.8``
  shrinks it by one (never below ``M⁻``, never above ``M_alive``; running jobs are not interrupted).
* Category ``C_i = Σ_{k∈J', w_k ≥ w_i} w_k c_k / Σ_{k∈J'} w_k c_k`` over a reference set ``J'``: the jobs
  released in the previous ``reference_days`` (the first window uses its own jobs). Target machine
  ``⌊C_i · M_use⌋`` (0-based) if ``C_i < 1``, else ``M_use − 1``: long jobs go to safe machines.
* ``S⁺`` is the maximum stretch ``(end − release) / length`` of completed jobs so far (1 initially).
* Arrival — ``target-stretch``: plan on the target if the job starts now or its planned stretch ≤ S⁺,
  else on the machine within distance ``D⁺`` with the earliest planned start. ``target-asap``: start now on
  the target if possible, else now on the closest machine within ``D⁺`` (ties: the safer, lower index),
  else on the target if its planned stretch ≤ S⁺, else at the earliest start within ``D⁺``.
  ``packed-target-asap``: as target-asap, with the target rounded to the nearest multiple of ``pack``
  (5) and the pack's machines tried in ascending order before the others; the pack is the target (§4.5),
  so the S⁺ test and the plan on the target use the pack machine with the earliest start (ties: the lower
  index), not the pack's first machine (which left the others idle while jobs waited:).
* Completion: plans already hold the next starts; ``M_use`` and ``S⁺`` are updated.
* Machine added: if ``M_use`` equalled the machines alive before and ``U > 0.95``, ``M_use`` grows and all
  planned-but-not-started jobs are re-allocated in ascending release order, as new arrivals.
* Machine removed: its running jobs are terminated (wasted work as in FF), and they and every planned but
  not started job are re-allocated in ascending release order.

Choices the paper leaves open (parameters here): ``D⁺`` (``search_distance``, 4), the reference window
(``reference_days``, 7), the ``M_use`` floor (``M⁻``). Isolating readings, each switching one of the paper's
rules (the defaults) off: ``stretch_test`` false (no planned stretch passes the S⁺ test) and ``pack_floor``
(the packed target rounded down to a multiple of ``pack``; §4.5 rounds to the nearest, so each pack sits up
to two machines above the targets it serves and pack 0 serves targets 0–2 only). A job that fits on no machine within ``D⁺`` (e.g.
no machine alive) waits in a global list that is retried on every machine event.

Runs in the shared event loop (:mod:`sim.engine.loop`), on the fast path (below) without checkpointing as one
compiled loop (:func:`target_run`, the same results bit for bit); the plans are indexed and compiled: one linked list
of planned jobs per machine (insertion order) and its usage as a sorted step function updated per planned
job (all machines' step functions in one pool, each row grown on its own), ``earliest_start`` a forward
scan of that step function from t; assignment, re-allocation and utilization run in numba (a machine
turned off has its plan dropped whole, not job by job). The default
fast path (``_TargetHooks(..., fast=True)``) does the same with less work, all of it exact:

* an assignment computes the target's earliest start, then asks the other near machines only whether the
  job fits now (:func:`starts_now`: the scan's first candidate); every near machine's earliest start is
  computed only when the rule needs the best of them (no machine now, stretch above ``S⁺``);
* within one re-allocation (t fixed, plans only grow) each machine keeps up to ``HINTS`` hints ``(c, w,
  a)``: every candidate start before breakpoint a fails for any job of at least c cores and w seconds. A
  scan that failed at candidates whose longest room was g (each met an overfull breakpoint less than g
  later) leaves the hint ``(c, min(w, g + margin), a)``: a longer job at least as large fails there too.
  The target's scan resumes at the best hint, and so does each near machine's when the rule needs every
  earliest start (a hint is a fact about the machine's plan, whichever job left it); each near machine's
  last breakpoint ≤ t is kept until its plan changes;
* only each machine's first pending job (smallest start, then job) needs a valid ``START`` event: the
  earliest pending start of all is always one of them, so events run in the order a push per re-planned
  job gives; after a start the machine's next pending job gets its event if it has none;
* a job's category is computed once per reference window.

``fast=False`` is the plain compiled path (every earliest start, a push per re-planned job); the plain
Python version (numpy ``earliest_start`` on lists) is ``tests/reference_target.py``. Property tests hold
the three equal job for job (``tests/test_target_fast.py``, ``tests/test_policies.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.bounds import Bound, bounded
from sim.engine._jit import cached_njit, compiled, stamp_loop_cache, uncounted
from sim.engine.loop import START, Loop
from sim.metrics import RUNNING, EngineOutput
from sim.policies import Dispatched, register
from sim.problem import Problem, require_machines_alive

# the compiled-loop kit (sim.engine.kit): event heap, pairwise sum, attempt log; this module's cache files go
# when it or an engine source changes (numba's own check reads only this file)
_KIT = compiled()
stamp_loop_cache(__file__, "target")
heap_room, heap_push, heap_pop, heap_make = (
    _KIT[f] for f in ("heap_room", "heap_push", "heap_pop", "heap_make")
)
pairwise_sum, log_new, copy_head = _KIT["pairwise_sum"], _KIT["log_new"], _KIT["copy_head"]
attempt_start, attempt_complete, attempt_kill = (
    _KIT[f] for f in ("attempt_start", "attempt_complete", "attempt_kill")
)

VARIANTS = {"target-stretch": 0, "target-asap": 1, "packed-target-asap": 2}


@bounded(
    search_distance=Bound(0, 1e6, "machines"),
    reference_days=Bound(
        0.0, 1e6, "days", lo_open=True, step_s=86400.0, max_steps=1e5, what="reference windows"
    ),
    grow_above=Bound(0.0, 1.0, "of the cores in use"),
    shrink_below=Bound(0.0, 1.0, "of the cores in use"),
    pack=Bound(1, 1e6, "machines"),
)
@dataclass(frozen=True)
class TargetParams:
    search_distance: int = 4
    reference_days: float = 7.0
    grow_above: float = 0.95
    shrink_below: float = 0.8
    pack: int = 5
    #: isolating readings (defaults: the paper's rules). ``stretch_test`` off: the S⁺ test never passes, so a
    #: job that starts nowhere now is planned at the earliest start within D⁺, never on the target by S⁺;
    #: ``pack_floor``: packed-target-asap rounds the target down to a multiple of ``pack``, not to the nearest
    stretch_test: bool = True
    pack_floor: bool = False


# ----------------------------------------------------------------------------- compiled plan operations
# A machine's plan as a step function in a pool shared by all machines: machine m's row is the segment
# ``[poff[m], poff[m] + pcap[m])`` of the 1-D arrays, of which ``plen[m]`` breakpoints are in use: times
# ``pt`` (sorted, where planned jobs start or end), ``pu`` the cores in use from each breakpoint to the next,
# ``pn`` how many job starts/ends sit there and ``pk`` how many of them are ends. Rows grow one by one
# (``_Profiles``), so a machine with thousands of planned jobs does not widen the others' rows. The compiled
# functions take the pool as one tuple ``P``; callers keep two free breakpoints per job they may add.
@uncounted
def _bp_insert(P, m, i, x):
    """Insert breakpoint ``x`` at index ``i`` of machine ``m`` (usage continues from the one before)."""
    pt, pu, pn, pk, plen, poff, pcap = P
    n = plen[m]
    o = poff[m]
    for y in range(o + n, o + i, -1):
        pt[y] = pt[y - 1]
        pu[y] = pu[y - 1]
        pn[y] = pn[y - 1]
        pk[y] = pk[y - 1]
    pt[o + i] = x
    pu[o + i] = pu[o + i - 1] if i > 0 else 0.0
    pn[o + i] = 0
    pk[o + i] = 0
    plen[m] = n + 1


@uncounted
def _bp_delete(P, m, i):
    pt, pu, pn, pk, plen, poff, pcap = P
    n = plen[m]
    o = poff[m]
    for y in range(o + i, o + n - 1):
        pt[y] = pt[y + 1]
        pu[y] = pu[y + 1]
        pn[y] = pn[y + 1]
        pk[y] = pk[y + 1]
    plen[m] = n - 1


@uncounted(entry=True)
def _profile_add(P, m, s, e, c):
    """Add a planned job ``[s, e)`` using ``c`` cores to machine ``m``'s step function."""
    pt, pu, pn, pk, plen, poff, pcap = P
    o = poff[m]
    i = np.searchsorted(pt[o : o + plen[m]], s)
    if i == plen[m] or pt[o + i] != s:
        _bp_insert(P, m, i, s)
    pn[o + i] += 1
    k = i + np.searchsorted(pt[o + i : o + plen[m]], e)
    if k == plen[m] or pt[o + k] != e:
        _bp_insert(P, m, k, e)
    pn[o + k] += 1
    pk[o + k] += 1
    for y in range(o + i, o + k):
        pu[y] += c


@uncounted
def _profile_remove(P, m, s, e, c):
    pt, pu, pn, pk, plen, poff, pcap = P
    o = poff[m]
    i = np.searchsorted(pt[o : o + plen[m]], s)
    k = i + np.searchsorted(pt[o + i : o + plen[m]], e)
    for y in range(o + i, o + k):
        pu[y] -= c
    pn[o + k] -= 1
    pk[o + k] -= 1
    if pn[o + k] == 0:
        _bp_delete(P, m, k)
    pn[o + i] -= 1
    if pn[o + i] == 0:
        _bp_delete(P, m, i)


@uncounted
def _window_end(t_, u_, n, y, s, w, c, lim):
    """The first breakpoint from ``y`` that ends the window ``[s, s + w)`` for a job of ``c`` cores: ``n``
    or one at or after ``s + w`` (the job fits), else the overfull breakpoint inside the window."""
    z = y
    while z < n and t_[z] < s + w and u_[z] + c <= lim:
        z += 1
    return z


@uncounted(entry=True)
def earliest_start(m, t, w, c, cap, P):
    """Earliest s ≥ t such that machine ``m``'s plan leaves ``c`` cores free over ``[s, s + w)``. The
    candidates are t and the planned ends after t (usage only falls there); a candidate whose window meets
    an overfull breakpoint b rules out every candidate up to b, so the scan resumes after b."""
    n = P[4][m]
    o = P[5][m]
    t_, u_, k_ = P[0][o : o + n], P[1][o : o + n], P[3][o : o + n]
    lim = cap + 1e-9
    i = np.searchsorted(t_, t, side="right") - 1  # last breakpoint ≤ t
    s0 = t
    val = u_[i] if i >= 0 else 0.0
    y = i + 1
    last = t
    while True:
        if val + c <= lim:
            z = _window_end(t_, u_, n, y, s0, w, c, lim)
            if z == n or t_[z] >= s0 + w:
                return s0
            y = z + 1
        while y < n and k_[y] == 0:
            y += 1
        if y >= n:
            return last
        s0 = t_[y]
        last = s0
        val = u_[y]
        y += 1


@uncounted(entry=True)
def starts_now(m, t, w, c, cap, P):
    """Whether :func:`earliest_start` returns ``t`` (a job fits now), from its first candidate alone: if
    that fails the scan moves to a later end, so the answer is no, unless no end follows (only then the
    full scan is asked)."""
    o = P[5][m]
    return _starts_now_at(m, t, w, c, cap, P, np.searchsorted(P[0][o : o + P[4][m]], t, side="right") - 1)


@uncounted
def _starts_now_at(m, t, w, c, cap, P, i):
    """:func:`starts_now` given ``i``, the last breakpoint ≤ t (−1 if none)."""
    n = P[4][m]
    o = P[5][m]
    t_, u_, k_ = P[0][o : o + n], P[1][o : o + n], P[3][o : o + n]
    lim = cap + 1e-9
    val = u_[i] if i >= 0 else 0.0
    y = i + 1
    if val + c <= lim:
        z = _window_end(t_, u_, n, y, t, w, c, lim)
        if z == n or t_[z] >= t + w:
            return True
        y = z + 1
    for x in range(n - 1, y - 1, -1):  # the last breakpoint is an end: usually one step
        if k_[x] != 0:
            return False
    return earliest_start(m, t, w, c, cap, P) <= t


@uncounted(entry=True)
def _scan(m, t, w, c, cap, P, a):
    """:func:`earliest_start` from t (``a`` < 0), or knowing that every candidate before breakpoint ``a``
    fails: the scan then resumes at the first end from ``a``. Returns (start, index of its end or −1 for t,
    ok, g); ok is False when the scan runs out of ends (the caller then asks :func:`earliest_start`). ``g``
    is the longest room the failed candidates had: each failed at an overfull breakpoint b less than g
    after it (−1 if none had room), so they fail for every job at least as large that is longer than g."""
    n = P[4][m]
    o = P[5][m]
    t_, u_, k_ = P[0][o : o + n], P[1][o : o + n], P[3][o : o + n]
    lim = cap + 1e-9
    s0 = t
    idx = -1
    g = -1.0
    if a < 0:
        i = np.searchsorted(t_, t, side="right") - 1
        val = u_[i] if i >= 0 else 0.0
        y = i + 1
    else:
        val = np.inf  # go straight to the next end
        y = a
    while True:
        if val + c <= lim:
            z = _window_end(t_, u_, n, y, s0, w, c, lim)
            if z == n or t_[z] >= s0 + w:
                return s0, idx, True, g
            g = max(g, t_[z] - s0)
            y = z + 1
        while y < n and k_[y] == 0:
            y += 1
        if y >= n:
            return t, -1, False, g
        s0 = t_[y]
        idx = y
        val = u_[y]
        y += 1


HINTS = 16  # per machine, within one re-allocation
HINT_MARGIN_S = 2e-6  # ≫ the rounding of a time sum (ulp of 1e6 s: 1.2e-10 s)


class _Profiles:
    """The step-function pool (``P``) and its growth: a machine whose row is full moves to the pool's end
    with twice the room; when the pool has no room left it is rebuilt compactly, 1.5 times the rows' total."""

    def __init__(self, machines: int, size: int = 32) -> None:
        self.pcap = np.full(machines, size, np.int64)
        self.poff = np.arange(machines, dtype=np.int64) * size
        self.plen = np.zeros(machines, np.int64)
        self._alloc(machines * size)
        self.end = machines * size

    def _alloc(self, size: int) -> None:
        self.pt, self.pu = np.zeros(size), np.zeros(size)
        self.pn, self.pk = np.zeros(size, np.int32), np.zeros(size, np.int32)

    @property
    def P(self) -> tuple:
        return self.pt, self.pu, self.pn, self.pk, self.plen, self.poff, self.pcap

    def fit(self, need: int = 2) -> bool:
        """Give every row at least ``need`` free breakpoints; True if the pool's arrays were replaced."""
        full = np.flatnonzero(self.plen + need > self.pcap)
        if full.size == 0:
            return False
        caps = self.pcap.copy()
        for m in full.tolist():
            while caps[m] < self.plen[m] + need:
                caps[m] *= 2
        grow = int(caps[full].sum())
        if self.end + grow <= self.pt.size:  # room at the pool's end: move the full rows there
            for m in full.tolist():
                self._move(m, self, self.end, int(caps[m]))
                self.end += int(caps[m])
            return False
        old = (self.pt, self.pu, self.pn, self.pk, self.poff.copy())
        total = int(caps.sum())
        self._alloc(total + total // 2)
        offs = np.concatenate(([0], np.cumsum(caps)[:-1]))
        src = _Rows(*old)
        for m in range(caps.size):
            self._move(m, src, int(offs[m]), int(caps[m]))
        self.end = total
        return True

    def _move(self, m: int, src: _Profiles | _Rows, off: int, cap: int) -> None:
        n, o = int(self.plen[m]), int(src.poff[m])
        for a, b in ((self.pt, src.pt), (self.pu, src.pu), (self.pn, src.pn), (self.pk, src.pk)):
            a[off : off + n] = b[o : o + n]
        self.poff[m] = off
        self.pcap[m] = cap


class _Rows:
    """The arrays of a pool being replaced (the source of :meth:`_Profiles.fit`'s copies)."""

    def __init__(self, pt, pu, pn, pk, poff) -> None:  # noqa: ANN001
        self.pt, self.pu, self.pn, self.pk, self.poff = pt, pu, pn, pk, poff


def _plan_profile(plan: list[tuple[float, float, float]], t: float) -> tuple:
    prof = _Profiles(1)
    P = prof.P
    for s, e, k in plan:
        if e > t:  # what a plan holds at a query: every planned job ends after now
            if prof.fit():
                P = prof.P
            _profile_add(P, 0, float(s), float(e), float(k))
    return P


def plan_earliest_start(
    plan: list[tuple[float, float, float]], t: float, w: float, c: float, cap: float
) -> float:
    """:func:`earliest_start` on a plan given as ``(start, end, cores)`` tuples (tests, exploration)."""
    return float(earliest_start(0, t, w, c, cap, _plan_profile(plan, t)))


def plan_scan(
    plan: list[tuple[float, float, float]], t: float, w: float, c: float, cap: float
) -> tuple[float, float, bool, float]:
    """:func:`_scan` from t on a plan of ``(start, end, cores)`` tuples (tests): start, the time of the
    breakpoint it found (−inf for t), ok, and g (the failed candidates' longest room)."""
    P = _plan_profile(plan, t)
    s, idx, ok, g = _scan(0, t, w, c, cap, P, -1)
    return float(s), float(P[0][P[5][0] + idx]) if idx >= 0 else -np.inf, bool(ok), float(g)


def plan_starts_now(plan: list[tuple[float, float, float]], t: float, w: float, c: float, cap: float) -> bool:
    """:func:`starts_now` on a plan given as ``(start, end, cores)`` tuples (tests)."""
    return bool(starts_now(0, t, w, c, cap, _plan_profile(plan, t)))


@uncounted
def _link(m, j, head, tail, nxt, prv):
    prv[j] = tail[m]
    nxt[j] = -1
    if tail[m] >= 0:
        nxt[tail[m]] = j
    else:
        head[m] = j
    tail[m] = j


@uncounted
def _unlink(m, j, head, tail, nxt, prv):
    a = prv[j]
    b = nxt[j]
    if a >= 0:
        nxt[a] = b
    else:
        head[m] = b
    if b >= 0:
        prv[b] = a
    else:
        tail[m] = a
    prv[j] = -1
    nxt[j] = -1


@cached_njit
def _utilization(m_use, alive, npend, head, nxt, cores, cap, ubusy, udirty):
    """Mean over machines ``[0, min(M_use, alive))`` of 1 (a planned job waits) or busy cores / cores
    (a machine's sum is kept in ``ubusy`` until its plan changes, ``udirty``)."""
    n = min(m_use, alive)
    if n <= 0:
        return 0.0
    us = np.empty(n)
    for m in range(n):
        if npend[m] > 0:
            us[m] = 1.0
        else:
            if udirty[m]:
                s = 0.0
                q = head[m]
                while q >= 0:
                    s += cores[q]
                    q = nxt[q]
                ubusy[m] = s
                udirty[m] = False
            us[m] = ubusy[m] / cap
    return pairwise_sum(us, 0, n) / n


@uncounted
def _category(wj, t, ref_s, kptr, wsort, cptr, cum):
    k = int(t // ref_s)
    a, b = kptr[k, 0], kptr[k, 1]
    if b == a:
        return 0.5
    total = cum[cptr[k] + (b - a)]
    if total <= 0:
        return 0.5
    shorter = np.searchsorted(wsort[a:b], wj)
    return 1.0 - cum[cptr[k] + shorter] / total


@uncounted
def _near_size(ist):
    """Room for the near machines of one assignment: 2 D⁺ + 1 plus a pack."""
    return 2 * ist[1] + 1 + max(ist[2], 0)


@uncounted
def _hinted_start(m0, t, wj, cj, cap, P, hint, hn, use_h):
    """Machine ``m0``'s earliest start for a job of ``cj`` cores and ``wj`` seconds; with ``use_h`` (one
    re-allocation) the scan resumes at the best of m0's hints and leaves one (see :func:`_assign`)."""
    a = -1
    wa = 0.0
    if use_h:
        for h in range(hn[m0]):
            if hint[m0, h, 0] <= cj and hint[m0, h, 1] <= wj and hint[m0, h, 2] > a:
                a = int(hint[m0, h, 2])
                wa = hint[m0, h, 1]
    s_, idx, ok, g = _scan(m0, t, wj, cj, cap, P, a)
    if not ok:
        s_ = earliest_start(m0, t, wj, cj, cap, P)
    elif use_h and idx > a:
        # candidates before a fail for jobs the used hint covers; those from a to idx for jobs at least
        # as large that are at least as long as this one or longer than g (a margin over rounding)
        wn = max(wa, min(wj, g + HINT_MARGIN_S))
        h = hn[m0]
        for x in range(hn[m0]):  # one the new hint makes useless, else the one that skips least
            if hint[m0, x, 0] >= cj and hint[m0, x, 1] >= wn and hint[m0, x, 2] <= idx:
                h = x
                break
        if h == HINTS:
            h = 0
            for x in range(1, HINTS):
                if hint[m0, x, 2] < hint[m0, h, 2]:
                    h = x
        elif h == hn[m0]:
            hn[m0] += 1
        hint[m0, h, 0] = cj
        hint[m0, h, 1] = wn
        hint[m0, h, 2] = idx
    return s_


# the plan state every compiled step takes, in this order (``_TargetHooks.state``):
# ist = [variant, D⁺, pack, M_use, alive, M⁻, fast (1: lazy starts of the near machines), S⁺ test (1: on),
# pack rounding (1: down)]; fst = [S⁺, cores per machine, reference s, grow, shrink]
@uncounted
def _assign(
    j, t, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv, ps, mach, version, npend,
    P, ubusy, udirty, catk, catv, hint, hn, nowi, use_h, near, starts,
):  # fmt: skip
    """Plan job ``j`` at time ``t`` (module doc); returns its machine. ``use_h`` (within one
    re-allocation, where plans only grow): ``hint[m, h] = (c, w, a)`` says every candidate before breakpoint
    a of machine m fails for any job of at least c cores and w seconds; ``nowi[m]`` caches machine m's last
    breakpoint ≤ t (−2: not known) until its plan changes. ``near``/``starts``: scratch of ``_near_size``."""
    variant, d, pack, m_use, alive = ist[0], ist[1], ist[2], ist[3], ist[4]
    s_plus, cap, ref_s = fst[0], fst[1], fst[2]
    if not ist[7]:  # the S⁺ test off (an isolating reading): no planned stretch passes it
        s_plus = -np.inf
    k = int(t // ref_s)
    if catk[j] == k:  # the category of j in reference window k, computed once
        cat = catv[j]
    else:
        cat = _category(w[j], t, ref_s, kptr, wsort, cptr, cum)
        catk[j] = k
        catv[j] = cat
    tgt = int(np.floor(cat * m_use)) if cat < 1 else m_use - 1
    if variant == 2:
        tgt = int(np.floor(tgt / pack) * pack) if ist[8] else int(np.rint(tgt / pack) * pack)
    tgt = min(max(tgt, 0), max(alive - 1, 0))
    nn = 0
    plo, phi = 0, 0
    home = 0  # near index of the machine the stretch test plans on: the target, or for packs (§4.5) the
    npk = 0  # pack machine (near[:npk]) with the earliest start, ties to the lower index
    if variant == 2:
        plo, phi = tgt, min(tgt + pack, alive)
        npk = phi - plo
        for x in range(plo, phi):
            near[nn] = x
            nn += 1
    lo, hi = max(0, tgt - d), min(alive, tgt + d + 1)
    for dd in range(d + 1):
        for x in (tgt - dd, tgt + dd):
            if lo <= x < hi and not (plo <= x < phi):
                near[nn] = x
                nn += 1
            if dd == 0:
                break
    if ist[6]:  # lazy: the target's start, then "fits now?" per machine; every start only if needed
        m0 = near[0]
        s_ = _hinted_start(m0, t, w[j], c[j], cap, P, hint, hn, use_h)
        starts[0] = s_
        stretch_ok = (starts[0] + w[j] - r[j]) / w[j] <= s_plus
        pick = -1
        known = 1  # starts[:known] hold earliest starts
        if starts[0] <= t or (variant == 0 and stretch_ok):
            pick = 0
        elif variant != 0:
            for k in range(1, nn):
                m2 = near[k]
                if not use_h:
                    now = starts_now(m2, t, w[j], c[j], cap, P)
                else:
                    if nowi[m2] < -1:
                        o2 = P[5][m2]
                        nowi[m2] = np.searchsorted(P[0][o2 : o2 + P[4][m2]], t, side="right") - 1
                    now = _starts_now_at(m2, t, w[j], c[j], cap, P, nowi[m2])
                if now:
                    pick = k
                    starts[k] = t
                    break
            if pick < 0 and npk > 1:  # packed: the pack is the target (its earliest-starting machine)
                for k in range(1, npk):
                    starts[k] = _hinted_start(near[k], t, w[j], c[j], cap, P, hint, hn, use_h)
                    if starts[k] < starts[home]:
                        home = k
                known = npk
                stretch_ok = (starts[home] + w[j] - r[j]) / w[j] <= s_plus
            if pick < 0 and stretch_ok:
                pick = home
        if pick < 0:  # the best of the near machines; in a re-allocation their scans use the hints too
            for k in range(known, nn):
                if use_h:
                    starts[k] = _hinted_start(near[k], t, w[j], c[j], cap, P, hint, hn, True)
                else:
                    starts[k] = earliest_start(near[k], t, w[j], c[j], cap, P)
            pick = 0
            for k in range(1, nn):
                if starts[k] < starts[pick]:
                    pick = k
    else:  # plain: every machine's earliest start
        for k in range(nn):
            starts[k] = earliest_start(near[k], t, w[j], c[j], cap, P)
        for k in range(1, npk):
            if starts[k] < starts[home]:
                home = k
        stretch_ok = (starts[home] + w[j] - r[j]) / w[j] <= s_plus
        best = 0
        for k in range(1, nn):
            if starts[k] < starts[best]:
                best = k
        if variant == 0:
            pick = 0 if (starts[0] <= t or stretch_ok) else best
        else:
            pick = -1
            if starts[0] <= t:
                pick = 0
            else:
                for k in range(nn):
                    if starts[k] <= t:
                        pick = k
                        break
                if pick < 0:
                    pick = home if stretch_ok else best
    m = near[pick]
    s = starts[pick]
    if use_h and hn[m] > 0:  # the plan changes from breakpoint i0 on: hints past it no longer hold
        i0 = np.searchsorted(P[0][P[5][m] : P[5][m] + P[4][m]], s)
        h = 0
        while h < hn[m]:
            if hint[m, h, 2] > i0:
                hn[m] -= 1
                hint[m, h, 0] = hint[m, hn[m], 0]
                hint[m, h, 1] = hint[m, hn[m], 1]
                hint[m, h, 2] = hint[m, hn[m], 2]
            else:
                h += 1
    nowi[m] = -2
    _link(m, j, head, tail, nxt, prv)
    udirty[m] = True
    ps[j] = s
    _profile_add(P, m, s, s + w[j], c[j])
    mach[j] = m
    version[j] += 1
    npend[m] += 1
    return m


@uncounted
def _unplan(
    j, pending, head, tail, nxt, prv, ps, w, c, mach, version, npend, P, udirty
):  # fmt: skip
    m = mach[j]
    _unlink(m, j, head, tail, nxt, prv)
    udirty[m] = True
    _profile_remove(P, m, ps[j], ps[j] + w[j], c[j])
    if pending:
        npend[m] -= 1
    mach[j] = -1
    version[j] += 1


@cached_njit
def _adapt(ist, fst, npend, head, nxt, c, ubusy, udirty):
    """Grow or shrink ``M_use`` by the utilization of the usable machines."""
    m_use, alive, m_minus = ist[3], ist[4], ist[5]
    u = _utilization(m_use, alive, npend, head, nxt, c, fst[1], ubusy, udirty)
    if u > fst[3] and alive > m_use:
        m_use += 1
    elif u < fst[4] and m_use > m_minus:
        m_use -= 1
    ist[3] = max(min(m_use, max(alive, 1)), 1)


@cached_njit(entry=True)
def _machines_added(target, ist, fst, nwait, npend, head, nxt, c, ubusy, udirty):
    """Machines added (``target`` alive, more than before): if ``M_use`` equalled the machines alive before
    and ``U > grow_above``, ``M_use`` grows by one. Returns whether the planned-but-not-started jobs are
    re-allocated: ``M_use`` grew, or ``nwait`` jobs wait for a machine. The one rule both loops apply."""
    alive = ist[4]
    u = _utilization(ist[3], alive, npend, head, nxt, c, fst[1], ubusy, udirty)
    ist[4] = target
    if ist[3] == alive and u > fst[3]:
        ist[3] = min(ist[3] + 1, target)
        return True
    return nwait > 0


@cached_njit(entry=True)
def _machines_removed(target, ist, fst, npend, head, nxt, c, ubusy, udirty):
    """Machines removed (``target`` alive), their plans dropped and running jobs killed: ``M_alive`` is
    ``target``, ``M_use`` at most that (at least 1), then adapted (the caller re-allocates). The one rule
    both loops apply."""
    ist[4] = target
    ist[3] = max(min(ist[3], target), 1)
    _adapt(ist, fst, npend, head, nxt, c, ubusy, udirty)


@cached_njit(entry=True)
def _on_arrival(
    j, t, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv, ps, mach, version, npend,
    P, ubusy, udirty, catk, catv,
):  # fmt: skip
    """Plan an arriving job (−1: no machine alive, it waits) and adapt ``M_use``."""
    m = -1
    if ist[4] > 0:
        m = _assign(
            j, t, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv, ps, mach, version,
            npend, P, ubusy, udirty, catk, catv, np.zeros((1, HINTS, 3)),
            np.zeros(1, np.int64), np.full(head.size, -2, np.int64), False, np.empty(_near_size(ist), np.int64),
            np.empty(_near_size(ist)),
        )  # fmt: skip
    _adapt(ist, fst, npend, head, nxt, c, ubusy, udirty)
    return m


@cached_njit(entry=True)
def _on_end(
    j, t, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv, ps, mach, version, npend,
    P, ubusy, udirty, catk, catv,
):  # fmt: skip
    _unplan(
        j, False, head, tail, nxt, prv, ps, w, c, mach, version, npend, P, udirty
    )  # fmt: skip
    fst[0] = max(fst[0], (t - r[j]) / w[j])
    _adapt(ist, fst, npend, head, nxt, c, ubusy, udirty)


@cached_njit(entry=True)
def _unplan_pending(
    extra, waiting, status, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv, ps, mach,
    version, npend, P, ubusy, udirty, catk, catv,
):  # fmt: skip
    """Unplan every planned-but-not-started job; return them with ``extra`` and ``waiting`` in release
    order (= engine order: jobs are sorted by submit time), and the unplanned jobs with the machine, start
    and version each had (for :func:`_settle`)."""
    n_m = head.size
    cnt = 0
    for m in range(n_m):
        q = head[m]
        while q >= 0:
            if status[q] != RUNNING:
                cnt += 1
            q = nxt[q]
    todo = np.empty(cnt + extra.size + waiting.size, np.int64)
    old_m = np.empty(cnt, np.int32)
    old_s = np.empty(cnt)
    old_v = np.empty(cnt, np.int32)
    k = 0
    for m in range(n_m):
        q = head[m]
        had = q >= 0
        while q >= 0:
            nq = nxt[q]
            if status[q] != RUNNING:
                todo[k] = q
                old_m[k] = m
                old_s[k] = ps[q]
                old_v[k] = version[q]
                k += 1
                _unlink(m, q, head, tail, nxt, prv)
                npend[m] -= 1
                mach[q] = -1
                version[q] += 1
            q = nq
        if had:  # the step function again, from the running jobs only
            udirty[m] = True
            P[4][m] = 0
            q = head[m]
            while q >= 0:
                _profile_add(P, m, ps[q], ps[q] + w[q], c[q])
                q = nxt[q]
    copy_head(todo[k:], extra, extra.size)
    copy_head(todo[k + extra.size :], waiting, waiting.size)
    return np.unique(todo), todo[:cnt].copy(), old_m, old_s, old_v


@cached_njit(entry=True)
def _assign_from(
    todo, i, t, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv, ps, mach, version,
    npend, P, ubusy, udirty, catk, catv,
):  # fmt: skip
    """Plan ``todo[i:]`` in order; stops early (returning the next index) when a machine's profile has no
    room left for two more breakpoints."""
    plen, pcap = P[4], P[6]
    hint = np.zeros((head.size, HINTS, 3))
    hn = np.zeros(head.size, np.int64)
    nowi = np.full(head.size, -2, np.int64)
    near = np.empty(_near_size(ist), np.int64)
    starts = np.empty(_near_size(ist))
    while i < todo.size:
        m = _assign(
            todo[i], t, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv, ps, mach,
            version, npend, P, ubusy, udirty, catk, catv, hint, hn, nowi, True, near, starts,
        )  # fmt: skip
        i += 1
        if plen[m] + 2 > pcap[m]:
            break
    return i


@cached_njit(entry=True)
def _settle(todo, old_j, old_m, old_s, old_v, mach, ps, version):
    """After a re-allocation: a job planned again at its old machine and start (``old_*[k]`` for job
    ``old_j[k]``) gets its old version back (its START event stays valid); returns the others, in ``todo``
    order (ascending)."""
    out = np.empty(todo.size, np.int64)
    # float keys (exact: job indices): the same comparisons, so the same permutation, from numba's argsort
    # compiled for float keys elsewhere instead of a copy for int64
    by_job = np.argsort(old_j.astype(np.float64))
    k = 0
    x = 0
    for j in todo:
        while x < by_job.size and old_j[by_job[x]] < j:
            x += 1
        if x < by_job.size and old_j[by_job[x]] == j:
            y = by_job[x]
            if mach[j] == old_m[y] and ps[j] == old_s[y]:
                version[j] = old_v[y]
                continue
        out[k] = j
        k += 1
    return out[:k]


@uncounted(entry=True)
def _min_pending(m, status, head, nxt, ps):
    """Machine ``m``'s planned-but-not-started job with the smallest (start, job), −1 if none."""
    best = -1
    q = head[m]
    while q >= 0:
        if status[q] != RUNNING and (best < 0 or ps[q] < ps[best] or (ps[q] == ps[best] and q < best)):
            best = q
        q = nxt[q]
    return best


@cached_njit(entry=True)
def _heads_to_push(status, head, nxt, ps, version, evv):
    """Per machine, its first pending job if it has no valid START event yet (marked as pushed)."""
    out = np.empty(head.size, np.int64)
    k = 0
    for m in range(head.size):
        q = _min_pending(m, status, head, nxt, ps)
        if q >= 0 and evv[q] != version[q]:
            evv[q] = version[q]
            out[k] = q
            k += 1
    return out[:k]


@cached_njit(entry=True)
def _drop_machines(lo, hi, status, head, tail, nxt, prv, mach, version, npend, P, udirty):
    """Unplan every job on machines ``[lo, hi)`` (turned off); returns them machine by machine in insertion
    order. Their plans empty, so the step functions are cleared at once, not breakpoint by breakpoint."""
    out = _machine_jobs(lo, hi, head, nxt)
    for j in out:
        m = mach[j]
        _unlink(m, j, head, tail, nxt, prv)
        if status[j] != RUNNING:
            npend[m] -= 1
        mach[j] = -1
        version[j] += 1
    for m in range(lo, hi):
        P[4][m] = 0
        udirty[m] = True
    return out


@cached_njit
def _machine_jobs(lo, hi, head, nxt):
    """Jobs planned on machines ``[lo, hi)``, machine by machine in insertion order."""
    n = 0
    for m in range(lo, hi):
        q = head[m]
        while q >= 0:
            n += 1
            q = nxt[q]
    out = np.empty(n, np.int64)
    n = 0
    for m in range(lo, hi):
        q = head[m]
        while q >= 0:
            out[n] = q
            n += 1
            q = nxt[q]
    return out


# ------------------------------------------------------------------------- the whole loop, compiled
# :meth:`sim.engine.loop.Loop.run` with the hooks below, in one numba function: the Python loop spent
# about half its time in the interpreter around the compiled plan operations. The same choices with the same
# float arithmetic in the same order: an array heap keyed as the Python loop's ``(time, kind, tie, job,
# tag)`` tuples (an END's tie is its push sequence number, a START's its job), stale events skipped by
# version and swept at the same moments, the step-function pool grown to the same layout, the plan
# operations above called as the hooks call them (``tests/test_tloop.py``: every EngineOutput field equal).
# Event codes of sim.engine.loop as literals (numba reads module globals as constants); an attempt's start,
# completion and kill are the kit's (sim.engine.kit.attempt_*).
_END, _CAPACITY, _ARRIVAL = 0, 1, 4
#: run the compiled loop where it applies (tests set it False to run the Python loop on the same input)
COMPILED_LOOP = True


@cached_njit
def _drop_stale(ht, hx, hn, status, att, version):
    """:meth:`sim.engine.loop.Loop.drop_stale`: keep ``_END``s of running attempts and ``START``s whose tag is the
    job's version, then heapify; returns the new size. (Keys are unique up to equal entries, so the order
    events pop in does not depend on the heap's layout.)"""
    k = 0
    for i in range(hn):
        kind, j, tag = hx[i, 0], hx[i, 2], hx[i, 3]
        keep = True
        if kind == _END:
            keep = status[j] == RUNNING and tag == att[j]
        elif kind == START:
            keep = tag == version[j]
        if keep:
            ht[k] = ht[i]
            for col in range(hx.shape[1]):  # a row copied element by element: sim.engine.kit.copy_head
                hx[k, col] = hx[i, col]
            k += 1
    heap_make(ht, hx, k)
    return k


@uncounted(entry=True)
def _move(m, plen, poff, pcap, dt, du, dn, dk, st, su, sn, sk, so, off, cap):
    """:meth:`sim.policies.target._Profiles._move`: machine ``m``'s row from offset ``so`` of the source
    arrays to ``off`` of the destination, with room ``cap``."""
    n = plen[m]
    for y in range(n):
        dt[off + y] = st[so + y]
        du[off + y] = su[so + y]
        dn[off + y] = sn[so + y]
        dk[off + y] = sk[so + y]
    poff[m] = off
    pcap[m] = cap


@cached_njit
def _fit(pt, pu, pn, pk, plen, poff, pcap, pend):
    """:meth:`sim.policies.target._Profiles.fit` with ``need`` 2, to the same layout: returns the (maybe
    replaced) arrays and the pool's new end."""
    need = 2
    M = plen.size
    nfull = 0
    for m in range(M):
        if plen[m] + need > pcap[m]:
            nfull += 1
    if nfull == 0:
        return pt, pu, pn, pk, pend
    caps = pcap.copy()
    grow = 0
    for m in range(M):
        if plen[m] + need > pcap[m]:
            while caps[m] < plen[m] + need:
                caps[m] *= 2
            grow += caps[m]
    if pend + grow <= pt.size:  # room at the pool's end: move the full rows there
        for m in range(M):
            if plen[m] + need > pcap[m]:
                _move(m, plen, poff, pcap, pt, pu, pn, pk, pt, pu, pn, pk, poff[m], pend, caps[m])
                pend += caps[m]
        return pt, pu, pn, pk, pend
    total = 0
    for m in range(M):
        total += caps[m]
    size = total + total // 2
    nt, nu = np.zeros(size), np.zeros(size)
    nn, nk = np.zeros(size, np.int32), np.zeros(size, np.int32)
    off = 0
    for m in range(M):
        _move(m, plen, poff, pcap, nt, nu, nn, nk, pt, pu, pn, pk, poff[m], off, caps[m])
        off += caps[m]
    return nt, nu, nn, nk, total


# nogil: a sweep worker's watchdog thread can end a scenario over its timeout; entry: Python calls it
@cached_njit(nogil=True, entry=True)
def target_run(
    horizon, ct, cap_n, stale_slack, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail,
    nxt, prv, ps, mach, version, npend, pt, pu, pn, pk, plen, poff, pcap, pend, ubusy, udirty, catk, catv,
    evv, waiting, first, start_s, end, att, terms, status, machine, cur_att, acc, cnt,
):  # fmt: skip
    """:meth:`sim.engine.loop.Loop.run` with :class:`sim.policies.target._TargetHooks`' hooks (fast path, no
    checkpointing) from the hooks' state: fills the per-job arrays (engine order) in place, ``acc`` with
    (completed, wasted, available, used core-s, aborted s) and ``cnt`` with (terminations, events); returns
    the attempt log's (job, start, end, outcome, machine) and the capacity step function's (times, cores),
    each trimmed (views)."""
    n = r.size
    nct = ct.size
    cap = fst[1]
    # the event heap: times and (kind, tie, job, tag)
    ht = np.empty(1024)
    hx = np.empty((1024, 4), np.int64)
    hn = 0
    seq = 0  # Loop.push's sequence number (ENDs)
    # the waiting list (jobs no machine could take)
    wbuf = np.empty(max(16, waiting.size), np.int64)
    copy_head(wbuf, waiting, waiting.size)
    nw = waiting.size
    # attempt log
    log_job, log_start, log_end, log_out, log_m = log_new(n)
    nlog = 0
    # capacity step function
    cap_t = np.empty(1024)
    cap_v = np.empty(1024)
    ncap = 0
    # an arrival's scratch (_on_arrival's, allocated once: no hints outside a re-allocation)
    a_hint = np.zeros((1, HINTS, 3))
    a_hn = np.zeros(1, np.int64)
    a_nowi = np.full(head.size, -2, np.int64)
    a_near = np.empty(_near_size(ist), np.int64)
    a_starts = np.empty(_near_size(ist))
    no_jobs = np.empty(0, np.int64)
    completed_cs = wasted_cs = available_cs = used_cs = aborted = 0.0
    alive_cores = busy = 0.0
    n_term = events = 0
    nrun = 0  # running jobs
    ci = 0
    si = 0
    t_prev = 0.0
    while True:
        t = np.inf
        kind = 5
        if hn > 0:
            t = ht[0]
            kind = hx[0, 0]
        if ci < nct and (ct[ci] < t or (ct[ci] == t and kind > _CAPACITY)):
            t = ct[ci]
            kind = _CAPACITY
        if si < n and r[si] < t:
            t = r[si]
            kind = _ARRIVAL
        if t >= horizon:
            break
        events += 1
        dt = t - t_prev
        if dt != 0:
            available_cs += alive_cores * dt
            used_cs += busy * dt
            t_prev = t
        if kind == _ARRIVAL:
            # ---------------------------------------------------------------- on_arrival
            j = si
            si += 1
            m = -1
            if ist[4] > 0:
                P = (pt, pu, pn, pk, plen, poff, pcap)
                m = _assign(
                    j, t, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv, ps, mach, version,
                    npend, P, ubusy, udirty, catk, catv, a_hint, a_hn, a_nowi, False, a_near, a_starts,
                )  # fmt: skip
            _adapt(ist, fst, npend, head, nxt, c, ubusy, udirty)
            if m >= 0:
                v = version[j]
                evv[j] = v
                ht, hx = heap_room(ht, hx, hn)
                hn = heap_push(ht, hx, hn, ps[j], START, j, j, v)
                if plen[m] + 2 > pcap[m]:
                    pt, pu, pn, pk, pend = _fit(pt, pu, pn, pk, plen, poff, pcap, pend)
            else:
                if nw == wbuf.size:
                    wb2 = np.empty(2 * nw, np.int64)
                    copy_head(wb2, wbuf, nw)
                    wbuf = wb2
                wbuf[nw] = j
                nw += 1
        elif kind == _CAPACITY:
            # ---------------------------------------------------------------- on_capacity
            lo = ci
            while ci < nct and ct[ci] == t:
                ci += 1
            for k in range(lo, ci):
                target = cap_n[k]
                cores_now = target * cap
                alive_cores = cores_now
                if ncap == 0 or cores_now != cap_v[ncap - 1]:
                    if ncap == cap_t.size:
                        cap_t = np.concatenate((cap_t, np.empty(ncap)))
                        cap_v = np.concatenate((cap_v, np.empty(ncap)))
                    cap_t[ncap] = t
                    cap_v[ncap] = cores_now
                    ncap += 1
                alive = ist[4]
                realloc = False
                extra = no_jobs
                if target > alive:
                    realloc = _machines_added(target, ist, fst, nw, npend, head, nxt, c, ubusy, udirty)
                elif target < alive:
                    P = (pt, pu, pn, pk, plen, poff, pcap)
                    gone = _drop_machines(
                        target, alive, status, head, tail, nxt, prv, mach, version, npend, P, udirty
                    )
                    nk = 0
                    for jj in gone:
                        if status[jj] == RUNNING:
                            nk += 1
                    extra = np.empty(nk, np.int64)
                    nk = 0
                    for jj in gone:
                        if status[jj] == RUNNING:
                            extra[nk] = jj
                            nk += 1
                        else:
                            if nw == wbuf.size:
                                wb2 = np.empty(2 * nw, np.int64)
                                copy_head(wb2, wbuf, nw)
                                wbuf = wb2
                            wbuf[nw] = jj
                            nw += 1
                    for jj in extra:
                        wasted_cs, aborted, busy, n_term = attempt_kill(
                            log_end, log_out, cur_att, status, start_s, terms, machine, c, jj, t, wasted_cs,
                            aborted, busy, n_term,
                        )  # fmt: skip
                        nrun -= 1
                    _machines_removed(target, ist, fst, npend, head, nxt, c, ubusy, udirty)
                    realloc = True
                if not realloc:
                    continue
                # ------------------------------------------------------------ _reallocate(t, extra)
                P = (pt, pu, pn, pk, plen, poff, pcap)
                todo, old_j, old_m, old_s, old_v = _unplan_pending(
                    extra, wbuf[:nw], status, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv,
                    ps, mach, version, npend, P, ubusy, udirty, catk, catv,
                )  # fmt: skip
                nw = 0
                if ist[4] == 0:
                    if todo.size > wbuf.size:
                        wbuf = np.empty(todo.size, np.int64)
                    copy_head(wbuf, todo, todo.size)
                    nw = todo.size
                    continue
                i = 0
                while i < todo.size:
                    pt, pu, pn, pk, pend = _fit(pt, pu, pn, pk, plen, poff, pcap, pend)
                    P = (pt, pu, pn, pk, plen, poff, pcap)
                    i = _assign_from(
                        todo, i, t, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv, ps, mach,
                        version, npend, P, ubusy, udirty, catk, catv,
                    )  # fmt: skip
                pt, pu, pn, pk, pend = _fit(pt, pu, pn, pk, plen, poff, pcap, pend)
                _settle(todo, old_j, old_m, old_s, old_v, mach, ps, version)
                moved = _heads_to_push(status, head, nxt, ps, version, evv)
                for jj in moved:
                    ht, hx = heap_room(ht, hx, hn)
                    hn = heap_push(ht, hx, hn, ps[jj], START, jj, jj, version[jj])
                live = nrun
                for m in range(npend.size):
                    live += npend[m]
                if hn > 2 * live + stale_slack:
                    hn = _drop_stale(ht, hx, hn, status, att, version)
        else:
            kind = hx[0, 0]
            j = hx[0, 2]
            tag = hx[0, 3]
            hn = heap_pop(ht, hx, hn)
            if kind == _END:
                if status[j] != RUNNING or tag != att[j]:
                    continue
                completed_cs, busy = attempt_complete(
                    log_end, log_out, cur_att, status, end, c, w, j, t, completed_cs, busy
                )
                nrun -= 1
                P = (pt, pu, pn, pk, plen, poff, pcap)
                _on_end(
                    j, t, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv, ps, mach, version,
                    npend, P, ubusy, udirty, catk, catv,
                )  # fmt: skip
            else:
                # ------------------------------------------------------------ on_start
                if tag != version[j]:
                    continue  # re-planned since
                m = mach[j]
                npend[m] -= 1
                log_job, log_start, log_end, log_out, log_m, nlog, busy = attempt_start(
                    log_job, log_start, log_end, log_out, log_m, nlog, cur_att, status, start_s, first, att,
                    machine, c, j, m, t, horizon, busy,
                )  # fmt: skip
                nrun += 1
                ht, hx = heap_room(ht, hx, hn)
                hn = heap_push(ht, hx, hn, t + w[j], _END, seq, j, att[j])
                seq += 1
                q = _min_pending(m, status, head, nxt, ps)
                if q >= 0 and evv[q] != version[q]:
                    v = version[q]
                    evv[q] = v
                    ht, hx = heap_room(ht, hx, hn)
                    hn = heap_push(ht, hx, hn, ps[q], START, q, q, v)
    available_cs += alive_cores * (horizon - t_prev)
    used_cs += busy * (horizon - t_prev)
    acc[0], acc[1], acc[2], acc[3], acc[4] = completed_cs, wasted_cs, available_cs, used_cs, aborted
    cnt[0], cnt[1] = n_term, events
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


# ------------------------------------------------------------------------------------------- hooks
class _TargetHooks:
    end_tie_by_job = False
    tick_s = float("inf")
    stale_slack = 4096  # stale events tolerated in the heap before a sweep

    def __init__(self, problem: Problem, p: TargetParams, variant: str, fast: bool = True) -> None:
        self.p = p
        self.fast = fast
        self.loop = loop = Loop(problem)
        self.r, self.w, self.c, self.n = loop.submit, loop.duration, loop.cores, loop.n
        M = self.M = problem.platform.machines
        self.cap = float(problem.platform.cores)
        tr = problem.capacity
        self.capacity_times = tr.time_s
        self.cap_n = np.minimum(tr.machines_alive, M)
        m_minus = max(1, int(self.cap_n.min()))
        n = self.n
        self.ist = np.array(
            [
                VARIANTS[variant],
                min(p.search_distance, M),  # a distance beyond the platform reaches no further machine
                p.pack,
                m_minus,
                0,
                m_minus,
                int(fast),
                int(p.stretch_test),
                int(p.pack_floor),
            ],
            np.int64,
        )
        self.ref_s = p.reference_days * 86400.0
        self.fst = np.array([1.0, self.cap, self.ref_s, p.grow_above, p.shrink_below])
        self.head = np.full(M, -1, np.int64)
        self.tail = np.full(M, -1, np.int64)
        # per job: int32 where the values allow it (job and machine indices, versions): 600k jobs × 8 arrays
        self.nxt = np.full(n, -1, np.int32)
        self.prv = np.full(n, -1, np.int32)
        self.ps = np.zeros(n)
        self.mach = np.full(n, -1, np.int32)
        self.version = np.zeros(n, np.int32)
        self.npend = np.zeros(M, np.int64)
        self.ubusy = np.zeros(M)
        self.udirty = np.ones(M, np.bool_)
        self.waiting = np.zeros(0, np.int64)
        self.evv = np.full(n, -1, np.int32)  # version of the last START event pushed per job
        self.catk = np.full(n, -1, np.int32)  # category of job j in reference window catk[j]: catv[j]
        self.catv = np.zeros(n)
        self.profiles = _Profiles(M)
        self._reference_sets(problem.horizon_s)
        self._state()

    def _state(self) -> None:
        self.state = (
            self.ist, self.fst, self.kptr, self.wsort, self.cptr, self.cum, self.r, self.w, self.c,
            self.head, self.tail, self.nxt, self.prv, self.ps, self.mach, self.version,
            self.npend, self.profiles.P, self.ubusy, self.udirty, self.catk, self.catv,
        )  # fmt: skip

    def _room(self) -> None:
        """Give every machine's step function room for one more planned job."""
        if self.profiles.fit():
            self._state()

    def _reference_sets(self, horizon: float) -> None:
        """Per window k (of ``reference_days``): durations of the jobs released in window k − 1 (k = 0 uses
        its own), sorted, with prefix sums of their areas, for the category ``C_i``: ``wsort[kptr[k, 0]:
        kptr[k, 1]]``, ``cum[cptr[k]:]``. Windows 0 and 1 share their set (stored once)."""
        r, w, c, ref = self.r, self.w, self.c, self.ref_s
        ws_all, cum_all, kptr, cptr = [], [], [], []
        seen: dict[tuple[int, int], int] = {}
        nk, nc = 0, 0
        for k in range(int(horizon // ref) + 2):
            lo, hi = (max(k - 1, 0) * ref, max(k, 1) * ref)
            a, b = (int(x) for x in np.searchsorted(r, [lo, hi]))
            if (a, b) in seen:
                kk = seen[(a, b)]
                kptr.append(kptr[kk])
                cptr.append(cptr[kk])
                continue
            seen[(a, b)] = k
            ws = w[a:b]
            order = np.argsort(ws)
            area = (ws * c[a:b])[order]
            ws_all.append(ws[order])
            cum_all.append(np.concatenate(([0.0], np.cumsum(area))))
            kptr.append((nk, nk + ws.size))
            cptr.append(nc)
            nk, nc = nk + ws.size, nc + ws.size + 1
        self.kptr = np.asarray(kptr, np.int64).reshape(-1, 2)
        self.cptr = np.asarray(cptr, np.int64)
        self.wsort = np.concatenate(ws_all)
        self.cum = np.concatenate(cum_all)

    @property
    def alive(self) -> int:
        return int(self.ist[4])

    def _reallocate(self, loop: Loop, t: float, extra: np.ndarray) -> None:
        todo, *old = _unplan_pending(extra, self.waiting, loop.status, *self.state)
        self.waiting = todo[:0]
        if self.alive == 0:
            self.waiting = todo
            return
        i = 0
        while i < todo.size:
            self._room()
            i = _assign_from(todo, i, t, *self.state)
        self._room()  # the last job may have filled its machine's row: an arrival there would write past it
        # a job planned again at its old machine and start keeps its START event (and version); the others
        # get a new one. Equal-time STARTs run in job order, which is the order a full re-push gives.
        moved = _settle(todo, *old, self.mach, self.ps, self.version)
        ps, version, push = self.ps, self.version, loop.push
        if self.fast:  # only each machine's first pending job needs a valid START event (module doc)
            moved = _heads_to_push(loop.status, self.head, self.nxt, ps, version, self.evv)
        for j in moved.tolist():
            push(ps[j], START, j, int(version[j]), j)
        live = int(self.npend.sum()) + int(np.count_nonzero(loop.status == RUNNING))
        if len(loop.heap) > 2 * live + self.stale_slack:
            loop.drop_stale(self.version)

    # hooks of sim.engine.loop.Loop
    def on_arrival(self, loop: Loop, j: int, t: float) -> None:
        m = _on_arrival(j, t, *self.state)
        if m >= 0:
            v = self.evv[j] = self.version[j]
            loop.push(self.ps[j], START, j, int(v), j)
            if self.profiles.plen[m] + 2 > self.profiles.pcap[m]:
                self._room()  # every machine keeps room for one more planned job
        else:
            self.waiting = np.append(self.waiting, j)

    def on_start(self, loop: Loop, j: int, t: float, tag: int) -> None:
        if tag != self.version[j]:
            return  # re-planned since
        m = int(self.mach[j])
        self.npend[m] -= 1
        loop.start(j, m, t)
        if self.fast:
            q = _min_pending(m, loop.status, self.head, self.nxt, self.ps)
            if q >= 0 and self.evv[q] != self.version[q]:
                v = self.evv[q] = self.version[q]
                loop.push(self.ps[q], START, q, int(v), q)

    def on_end(self, loop: Loop, j: int, t: float) -> None:
        _on_end(j, t, *self.state)

    def on_capacity(self, loop: Loop, t: float, lo: int, hi: int) -> None:
        ist = self.ist
        for k in range(lo, hi):
            target = int(self.cap_n[k])
            loop.record_capacity(t, target * self.cap)
            alive = int(ist[4])
            if target > alive:
                if _machines_added(
                    target, ist, self.fst, self.waiting.size, self.npend, self.head, self.nxt, self.c,
                    self.ubusy, self.udirty,
                ):  # fmt: skip
                    self._reallocate(loop, t, self.waiting[:0])
            elif target < alive:
                gone = _drop_machines(
                    target, alive, loop.status, self.head, self.tail, self.nxt, self.prv, self.mach,
                    self.version, self.npend, self.profiles.P, self.udirty,
                )  # fmt: skip
                run = loop.status[gone] == RUNNING
                killed = gone[run]
                for jj in killed.tolist():
                    loop.kill(jj, t)
                if killed.size < gone.size:
                    self.waiting = np.concatenate((self.waiting, gone[~run]))
                _machines_removed(
                    target, ist, self.fst, self.npend, self.head, self.nxt, self.c, self.ubusy, self.udirty
                )
                self._reallocate(loop, t, killed)

    def on_tick(self, loop: Loop, t: float) -> None:
        pass

    def on_instant_end(self, loop: Loop, t: float) -> None:
        pass

    def compiled_run(self) -> EngineOutput | None:
        """The whole run in one compiled loop (:func:`target_run`: the same results as the Python loop, bit
        for bit), None where it does not apply (disabled, the plain path ``fast=False``, checkpointing, a run
        already started): ``Loop.run`` then runs the Python loop."""
        loop = self.loop
        if (
            not COMPILED_LOOP
            or not self.fast
            or loop.ck is not None
            or loop.events
            or loop.heap
            or loop.log.job
        ):
            return None
        acc = np.zeros(5)
        cnt = np.zeros(2, np.int64)
        pr = self.profiles
        f64 = np.float64
        (lj, ls, le, lo, lm, ct, cv) = target_run(
            float(loop.horizon), np.ascontiguousarray(self.capacity_times, f64),
            np.ascontiguousarray(self.cap_n, np.int64), int(self.stale_slack),
            self.ist, self.fst, self.kptr, self.wsort, self.cptr, self.cum, self.r, self.w, self.c, self.head,
            self.tail, self.nxt, self.prv, self.ps, self.mach, self.version, self.npend, pr.pt, pr.pu, pr.pn,
            pr.pk, pr.plen, pr.poff, pr.pcap, int(pr.end), self.ubusy, self.udirty, self.catk, self.catv,
            self.evv, np.ascontiguousarray(self.waiting, np.int64), loop.first, loop.start_s, loop.end,
            loop.att, loop.terms, loop.status, loop.machine, loop.cur_att, acc, cnt,
        )  # fmt: skip
        loop.completed_cs, loop.wasted_cs, loop.available_cs, loop.used_cs, loop.aborted = map(float, acc)
        loop.n_term, loop.events = map(int, cnt)
        log = loop.log
        log.job, log.start, log.end, log.outcome, log.machine = lj, ls, le, lo, lm  # type: ignore[assignment]
        loop.cap_t, loop.cap_v = ct.tolist(), cv.tolist()
        loop.alive_cores = float(cv[-1]) if cv.size else 0.0
        return loop.output()

    def run(self) -> EngineOutput:
        return self.loop.run(self)


class Target(Dispatched):
    Params = TargetParams

    def __init__(self, name: str) -> None:
        self.name = name
        self.description, self.label = _FACTS[name]
        self.warm = name == "target-asap"  # its compiled loop serves all three variants
        self.compiled_modules = ("sim.policies.target",) if self.warm else ()

    def declare(self, problem: Problem, params: TargetParams, seed: int) -> _TargetHooks:
        require_machines_alive(problem, self.name)
        return _TargetHooks(problem, params, self.name)


#: each variant's one-line description and chart label
_FACTS = {
    "target-stretch": (
        "risk-aware plan per machine: a job on its risk target if it starts now or stretches ≤ S⁺, else the "
        "earliest start within D⁺",
        "TargetStretch",
    ),
    "target-asap": (
        "risk-aware plan per machine: start now on the target or the closest machine within D⁺, else plan by "
        "stretch",
        "TargetASAP",
    ),
    "packed-target-asap": (
        "target-asap with the target rounded to a pack of `pack` machines",
        "PackedTargetASAP",
    ),
}
for _name in VARIANTS:
    register(Target(_name))
