"""Seed 001 risk-aware schedulers: ``target-stretch``, ``target-asap``, ``packed-target-asap``.

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
  (5) and the pack's machines tried in ascending order before the others.
* Completion: plans already hold the next starts; ``M_use`` and ``S⁺`` are updated.
* Machine added: if ``M_use`` equalled the machines alive before and ``U > 0.95``, ``M_use`` grows and all
  planned-but-not-started jobs are re-allocated in ascending release order, as new arrivals.
* Machine removed: its running jobs are terminated (wasted work as in FF), and they and every planned but
  not started job are re-allocated in ascending release order.

Choices the paper leaves open (parameters here): ``D⁺`` (``search_distance``, 4), the reference window
(``reference_days``, 7), the ``M_use`` floor (``M⁻``). A job that fits on no machine within ``D⁺`` (e.g.
no machine alive) waits in a global list that is retried on every machine event.

Runs in the shared Python event loop (:mod:`sim.loop`); the plans are indexed and compiled: one linked list
of planned jobs per machine (insertion order), ``earliest_start`` is one sort-and-sweep over the machine's
live plan, and assignment, re-allocation and utilization run in numba. The plain version (numpy
``earliest_start`` on Python lists) is kept in ``tests/reference_target.py``; a property test holds this
one to it job for job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from sim.loop import START, Loop
from sim.metrics import RUNNING, EngineOutput
from sim.policies import register
from sim.problem import Problem, RunArtifacts, require_machines_alive

VARIANTS = {"target-stretch": 0, "target-asap": 1, "packed-target-asap": 2}


@dataclass(frozen=True)
class TargetParams:
    search_distance: int = 4
    reference_days: float = 7.0
    grow_above: float = 0.95
    shrink_below: float = 0.8
    pack: int = 5


# ----------------------------------------------------------------------------- compiled plan operations
@njit(cache=True)
def earliest_start(m, t, w, c, cap, head, nxt, ps, pe, cores):
    """Earliest s ≥ t such that machine ``m``'s plan leaves ``c`` cores free over ``[s, s + w)``: the
    candidates are t and the planned ends after t; usage is swept once over the sorted starts and ends."""
    k = 0
    q = head[m]
    while q >= 0:
        if pe[q] > t:
            k += 1
        q = nxt[q]
    if k == 0:
        return t
    ev_t = np.empty(2 * k + 1)
    ev_d = np.empty(2 * k + 1)
    ev_c = np.zeros(2 * k + 1, np.bool_)
    ev_t[0] = t
    ev_d[0] = 0.0
    ev_c[0] = True
    i = 1
    q = head[m]
    while q >= 0:
        if pe[q] > t:
            ev_t[i] = ps[q] if ps[q] > t else t
            ev_d[i] = cores[q]
            i += 1
            ev_t[i] = pe[q]
            ev_d[i] = -cores[q]
            ev_c[i] = True
            i += 1
        q = nxt[q]
    order = np.argsort(ev_t, kind="mergesort")
    bt = np.empty(i)
    bu = np.empty(i)
    bc = np.zeros(i, np.bool_)
    nb = 0
    u = 0.0
    x = 0
    while x < i:
        tt = ev_t[order[x]]
        cand = False
        while x < i and ev_t[order[x]] == tt:
            u += ev_d[order[x]]
            cand = cand or ev_c[order[x]]
            x += 1
        bt[nb] = tt
        bu[nb] = u
        bc[nb] = cand
        nb += 1
    nbad = np.empty(nb, np.int64)
    bad = nb
    for y in range(nb - 1, -1, -1):
        if bu[y] + c > cap + 1e-9:
            bad = y
        nbad[y] = bad
    last = t
    for y in range(nb):
        if bc[y]:
            last = bt[y]
            if nbad[y] == nb or bt[nbad[y]] >= bt[y] + w:
                return bt[y]
    return last


def plan_earliest_start(
    plan: list[tuple[float, float, float]], t: float, w: float, c: float, cap: float
) -> float:
    """:func:`earliest_start` on a plan given as ``(start, end, cores)`` tuples (tests, exploration)."""
    k = len(plan)
    arr = np.asarray(plan, np.float64).reshape(k, 3)
    head = np.array([0 if k else -1], np.int64)
    nxt = np.append(np.arange(1, k), -1).astype(np.int64) if k else np.zeros(0, np.int64)
    return float(
        earliest_start(0, t, w, c, cap, head, nxt, arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy())
    )


@njit(cache=True)
def _link(m, j, head, tail, nxt, prv):
    prv[j] = tail[m]
    nxt[j] = -1
    if tail[m] >= 0:
        nxt[tail[m]] = j
    else:
        head[m] = j
    tail[m] = j


@njit(cache=True)
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


@njit(cache=True)
def _pairwise_sum(a, lo, n):
    """numpy's pairwise summation (so the mean utilization is bit-identical to ``np.mean``)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= 128:
        r = a[lo : lo + 8].copy()
        i = 8
        while i < n - (n % 8):
            for k in range(8):
                r[k] += a[lo + i + k]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += a[lo + i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise_sum(a, lo, n2) + _pairwise_sum(a, lo + n2, n - n2)


@njit(cache=True)
def _utilization(m_use, alive, npend, head, nxt, cores, cap):
    """Mean over machines ``[0, min(M_use, alive))`` of 1 (a planned job waits) or busy cores / cores."""
    n = min(m_use, alive)
    if n <= 0:
        return 0.0
    us = np.empty(n)
    for m in range(n):
        if npend[m] > 0:
            us[m] = 1.0
        else:
            s = 0.0
            q = head[m]
            while q >= 0:
                s += cores[q]
                q = nxt[q]
            us[m] = s / cap
    return _pairwise_sum(us, 0, n) / n


@njit(cache=True)
def _category(wj, t, ref_s, kptr, wsort, cptr, cum):
    k = int(t // ref_s)
    a, b = kptr[k], kptr[k + 1]
    if b == a:
        return 0.5
    total = cum[cptr[k] + (b - a)]
    if total <= 0:
        return 0.5
    shorter = np.searchsorted(wsort[a:b], wj)
    return 1.0 - cum[cptr[k] + shorter] / total


@njit(cache=True)
def _assign(
    j, t, ip, fp, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv, ps, pe, mach, version, npend
):
    """Plan job ``j`` at time ``t`` (module doc); returns its machine. ``ip = [variant, D⁺, pack, M_use,
    alive]``, ``fp = [S⁺, cores per machine, reference seconds]``."""
    variant, d, pack, m_use, alive = ip[0], ip[1], ip[2], ip[3], ip[4]
    s_plus, cap, ref_s = fp[0], fp[1], fp[2]
    cat = _category(w[j], t, ref_s, kptr, wsort, cptr, cum)
    tgt = int(np.floor(cat * m_use)) if cat < 1 else m_use - 1
    if variant == 2:
        tgt = int(np.rint(tgt / pack) * pack)
    tgt = min(max(tgt, 0), max(alive - 1, 0))
    near = np.empty(2 * d + 1 + max(pack, 0), np.int64)
    nn = 0
    plo, phi = 0, 0
    if variant == 2:
        plo, phi = tgt, min(tgt + pack, alive)
        for x in range(plo, phi):
            near[nn] = x
            nn += 1
    lo, hi = max(0, tgt - d), min(alive, tgt + d + 1)
    for dd in range(d + 1):
        for x in (tgt - dd, tgt + dd):
            if dd == 0 and x != tgt - dd:
                continue
            if lo <= x < hi and not (plo <= x < phi):
                near[nn] = x
                nn += 1
            if dd == 0:
                break
    starts = np.empty(nn)
    for k in range(nn):
        starts[k] = earliest_start(near[k], t, w[j], c[j], cap, head, nxt, ps, pe, c)
    stretch_ok = (starts[0] + w[j] - r[j]) / w[j] <= s_plus
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
                pick = 0 if stretch_ok else best
    m = near[pick]
    s = starts[pick]
    _link(m, j, head, tail, nxt, prv)
    ps[j] = s
    pe[j] = s + w[j]
    mach[j] = m
    version[j] += 1
    npend[m] += 1
    return m


@njit(cache=True)
def _unplan(j, pending, head, tail, nxt, prv, mach, version, npend):
    m = mach[j]
    _unlink(m, j, head, tail, nxt, prv)
    if pending:
        npend[m] -= 1
    mach[j] = -1
    version[j] += 1


@njit(cache=True)
def _reallocate(
    t,
    extra,
    waiting,
    status,
    ip,
    fp,
    kptr,
    wsort,
    cptr,
    cum,
    r,
    w,
    c,
    head,
    tail,
    nxt,
    prv,
    ps,
    pe,
    mach,
    version,
    npend,
):
    """Unplan every planned-but-not-started job and plan them, ``extra`` and ``waiting`` again in release
    order; returns the planned jobs (in planning order) and the new waiting list."""
    n_m = head.size
    cnt = 0
    for m in range(n_m):
        q = head[m]
        while q >= 0:
            if status[q] != RUNNING:
                cnt += 1
            q = nxt[q]
    todo = np.empty(cnt + extra.size + waiting.size, np.int64)
    k = 0
    for m in range(n_m):
        q = head[m]
        while q >= 0:
            nq = nxt[q]
            if status[q] != RUNNING:
                todo[k] = q
                k += 1
                _unplan(q, True, head, tail, nxt, prv, mach, version, npend)
            q = nq
    todo[k : k + extra.size] = extra
    todo[k + extra.size :] = waiting
    todo = np.unique(todo)  # release order = engine order (jobs are sorted by submit time)
    if ip[4] == 0:
        return todo[:0], todo
    for q in todo:
        _assign(
            q, t, ip, fp, kptr, wsort, cptr, cum, r, w, c, head, tail, nxt, prv, ps, pe, mach, version, npend
        )
    return todo, todo[:0]


@njit(cache=True)
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


# ------------------------------------------------------------------------------------------- hooks
class _TargetHooks:
    end_tie_by_job = False
    tick_s = float("inf")

    def __init__(self, problem: Problem, p: TargetParams, variant: str) -> None:
        self.p = p
        self.loop = loop = Loop(problem)
        self.r, self.w, self.c, self.n = loop.submit, loop.duration, loop.cores, loop.n
        self.M = problem.platform.machines
        self.cap = float(problem.platform.cores)
        tr = problem.capacity
        self.capacity_times = tr.time_s
        self.cap_n = np.minimum(tr.machines_alive, self.M)
        self.m_minus = max(1, int(self.cap_n.min()))
        self.alive = 0
        self.m_use = self.m_minus
        self.s_plus = 1.0
        n, M = self.n, self.M
        self.head = np.full(M, -1, np.int64)
        self.tail = np.full(M, -1, np.int64)
        self.nxt = np.full(n, -1, np.int64)
        self.prv = np.full(n, -1, np.int64)
        self.ps = np.zeros(n)
        self.pe = np.zeros(n)
        self.mach = np.full(n, -1, np.int64)
        self.version = np.zeros(n, np.int64)
        self.npend = np.zeros(M, np.int64)
        self.waiting = np.zeros(0, np.int64)
        self.variant = VARIANTS[variant]
        self.ref_s = p.reference_days * 86400.0
        self._reference_sets(problem.horizon_s)

    def _reference_sets(self, horizon: float) -> None:
        """Per window k (of ``reference_days``): durations of the jobs released in window k − 1 (k = 0 uses
        its own), sorted, with prefix sums of their areas, for the category ``C_i``."""
        r, w, c, ref = self.r, self.w, self.c, self.ref_s
        ws_all, cum_all, kptr, cptr = [], [], [0], [0]
        for k in range(int(horizon // ref) + 2):
            lo, hi = (max(k - 1, 0) * ref, max(k, 1) * ref)
            a, b = np.searchsorted(r, [lo, hi])
            ws = w[a:b]
            order = np.argsort(ws)
            area = (ws * c[a:b])[order]
            ws_all.append(ws[order])
            cum_all.append(np.concatenate(([0.0], np.cumsum(area))))
            kptr.append(kptr[-1] + ws.size)
            cptr.append(cptr[-1] + ws.size + 1)
        self.kptr = np.asarray(kptr, np.int64)
        self.cptr = np.asarray(cptr, np.int64)
        self.wsort = np.concatenate(ws_all)
        self.cum = np.concatenate(cum_all)

    def _params(self) -> tuple[np.ndarray, np.ndarray]:
        p = self.p
        ip = np.array([self.variant, p.search_distance, p.pack, self.m_use, self.alive], np.int64)
        return ip, np.array([self.s_plus, self.cap, self.ref_s])

    def _plan_args(self) -> tuple:
        return (
            self.kptr, self.wsort, self.cptr, self.cum, self.r, self.w, self.c, self.head, self.tail,
            self.nxt, self.prv, self.ps, self.pe, self.mach, self.version, self.npend,
        )  # fmt: skip

    def _utilization(self) -> float:
        return _utilization(self.m_use, self.alive, self.npend, self.head, self.nxt, self.c, self.cap)

    def _adapt(self) -> None:
        u = self._utilization()
        if u > self.p.grow_above and self.alive > self.m_use:
            self.m_use += 1
        elif u < self.p.shrink_below and self.m_use > self.m_minus:
            self.m_use -= 1
        self.m_use = max(min(self.m_use, max(self.alive, 1)), 1)

    def _assign(self, loop: Loop, j: int, t: float) -> None:
        if self.alive == 0:
            self.waiting = np.append(self.waiting, j)
            return
        ip, fp = self._params()
        _assign(j, t, ip, fp, *self._plan_args())
        loop.push(self.ps[j], START, j, int(self.version[j]))

    def _reallocate(self, loop: Loop, t: float, extra: np.ndarray) -> None:
        ip, fp = self._params()
        done, self.waiting = _reallocate(t, extra, self.waiting, loop.status, ip, fp, *self._plan_args())
        ps, version = self.ps, self.version
        for j in done.tolist():
            loop.push(ps[j], START, j, int(version[j]))

    def _unplan(self, j: int, pending: bool) -> None:
        _unplan(j, pending, self.head, self.tail, self.nxt, self.prv, self.mach, self.version, self.npend)

    # hooks of sim.loop.Loop
    def on_arrival(self, loop: Loop, j: int, t: float) -> None:
        self._assign(loop, j, t)
        self._adapt()

    def on_start(self, loop: Loop, j: int, t: float, tag: int) -> None:
        if tag != self.version[j]:
            return  # re-planned since
        m = int(self.mach[j])
        self.npend[m] -= 1
        loop.start(j, m, t)

    def on_end(self, loop: Loop, j: int, t: float) -> None:
        self._unplan(j, False)
        self.s_plus = max(self.s_plus, (t - self.r[j]) / self.w[j])
        self._adapt()

    def on_capacity(self, loop: Loop, t: float, lo: int, hi: int) -> None:
        for k in range(lo, hi):
            target = int(self.cap_n[k])
            loop.record_capacity(t, target * self.cap)
            if target > self.alive:
                prev_alive = self.alive
                u = self._utilization()
                self.alive = target
                if self.m_use == prev_alive and u > self.p.grow_above:
                    self.m_use = min(self.m_use + 1, self.alive)
                    self._reallocate(loop, t, self.waiting[:0])
                elif self.waiting.size:
                    self._reallocate(loop, t, self.waiting[:0])
            elif target < self.alive:
                killed, parked = [], []
                for jj in _machine_jobs(target, self.alive, self.head, self.nxt).tolist():
                    running = loop.status[jj] == RUNNING
                    if running:
                        loop.kill(jj, t)
                        killed.append(jj)
                    self._unplan(jj, not running)
                    if not running:
                        parked.append(jj)
                if parked:
                    self.waiting = np.concatenate((self.waiting, np.asarray(parked, np.int64)))
                self.alive = target
                self.m_use = max(min(self.m_use, self.alive), 1)
                self._adapt()
                self._reallocate(loop, t, np.asarray(killed, np.int64))

    def on_tick(self, loop: Loop, t: float) -> None:
        pass

    def on_instant_end(self, loop: Loop, t: float) -> None:
        pass

    def run(self) -> EngineOutput:
        return self.loop.run(self)


class Target:
    Params = TargetParams

    def __init__(self, name: str) -> None:
        self.name = name

    def run(self, problem: Problem, params: TargetParams, seed: int) -> RunArtifacts:
        require_machines_alive(problem, self.name)
        return RunArtifacts(_TargetHooks(problem, params, self.name).run(), None)


for _name in VARIANTS:
    register(Target(_name))
