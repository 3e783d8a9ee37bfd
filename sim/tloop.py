"""The event loop of the Target* policies, compiled: one numba function runs the whole run.

:class:`sim.loop.Loop` with :class:`sim.policies.target._TargetHooks` spent about half its time in the
interpreter around the compiled plan operations (issue #30). :func:`target_run` runs the same loop over
array state — an array event heap keyed ``(time, kind, tie, job, tag)`` as the Python loop's tuples
(``END``: a push sequence number, ``START``: the job), the hooks' plans, the step-function pool (grown as
:meth:`sim.policies.target._Profiles.fit` grows it, to the same layout), the waiting list, the loop's
accounting, the attempt log and the capacity step function — calling the same compiled plan operations
in the same order: every scalar, per-job array, attempt-log row, capacity step and the event count are
bit-identical to the Python loop (``tests/test_tloop.py``), stale events swept at the same moments.

It serves the three variants on the default fast path (``_TargetHooks(fast=True)``) without
checkpointing; for anything else :func:`run_target` returns None and the Python loop runs. Imported on
first use (numba).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from sim.policies.target import (
    HINTS,
    _adapt,
    _assign,
    _assign_from,
    _drop_machines,
    _heads_to_push,
    _min_pending,
    _near_size,
    _on_end,
    _settle,
    _unplan_pending,
    _utilization,
)

if TYPE_CHECKING:
    from sim.metrics import EngineOutput
    from sim.policies.target import _TargetHooks

HERE = Path(__file__).resolve()
#: the sources of the functions :func:`target_run` calls (numba's cache checks only this file's)
SOURCES = (HERE, HERE.parent / "policies" / "target.py")


def _invalidate_stale_cache() -> None:
    """Delete this module's numba cache files if a source it compiles in changed since they were written
    (:data:`SOURCES`; as :func:`sim.hloop._invalidate_stale_cache` does), and stamp."""
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in SOURCES)).hexdigest()
    env = os.environ.get("NUMBA_CACHE_DIR")
    d = HERE.parent / "__pycache__"
    if env:  # numba's sub-directory for a source directory (numba.core.caching._CacheLocator)
        d = Path(env) / f"{d.parent.name}_{hashlib.sha1(str(d.parent).encode()).hexdigest()}"  # noqa: S324
    stamp = d / "varcap_tloop.sha256"
    with contextlib.suppress(OSError):
        if stamp.read_text() == digest:
            return
    if d.is_dir():
        for f in d.iterdir():
            if f.suffix in (".nbi", ".nbc") and f.name.split(".")[0] == "tloop":
                f.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # a read-only tree: numba caches elsewhere, nothing to stamp
        d.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)


_invalidate_stale_cache()

#: use the compiled loop where it applies (tests set it False to run the Python loop on the same input)
ENABLED = True

INF = np.inf
# the codes of sim.metrics and sim.loop (literal here: numba reads module globals as constants)
QUEUED, RUNNING, COMPLETED = 0, 1, 2
ATT_COMPLETED, ATT_KILLED, ATT_RUNNING = 0, 1, 2
END, CAPACITY, START, ARRIVAL = 0, 1, 3, 4


@njit(cache=True)
def _less(ht, hx, i, k):
    """Heap order of entries ``i`` and ``k``: ``(time, kind, tie, job, tag)``, the Python loop's tuples."""
    if ht[i] != ht[k]:
        return ht[i] < ht[k]
    for x in range(4):
        if hx[i, x] != hx[k, x]:
            return hx[i, x] < hx[k, x]
    return False


@njit(cache=True)
def _swap(ht, hx, i, k):
    ht[i], ht[k] = ht[k], ht[i]
    for x in range(4):
        hx[i, x], hx[k, x] = hx[k, x], hx[i, x]


@njit(cache=True)
def _sift_down(ht, hx, i, n):
    while True:
        lft = 2 * i + 1
        if lft >= n:
            return
        k = lft
        if lft + 1 < n and _less(ht, hx, lft + 1, lft):
            k = lft + 1
        if _less(ht, hx, k, i):
            _swap(ht, hx, k, i)
            i = k
        else:
            return


@njit(cache=True)
def _push(ht, hx, hn, t, kind, tie, j, tag):
    """Push ``(t, kind, tie, j, tag)`` onto a heap of ``hn`` entries; returns the (maybe grown) arrays."""
    if hn == ht.size:
        ht2 = np.empty(2 * hn + 16)
        hx2 = np.empty((2 * hn + 16, 4), np.int64)
        ht2[:hn] = ht[:hn]
        hx2[:hn] = hx[:hn]
        ht, hx = ht2, hx2
    ht[hn] = t
    hx[hn, 0] = kind
    hx[hn, 1] = tie
    hx[hn, 2] = j
    hx[hn, 3] = tag
    i = hn
    while i > 0:
        par = (i - 1) >> 1
        if _less(ht, hx, i, par):
            _swap(ht, hx, i, par)
            i = par
        else:
            break
    return ht, hx


@njit(cache=True)
def _pop(ht, hx, hn):
    """Remove the front of a heap of ``hn`` entries (its values read by the caller first)."""
    last = hn - 1
    ht[0] = ht[last]
    hx[0] = hx[last]
    _sift_down(ht, hx, 0, last)


@njit(cache=True)
def _drop_stale(ht, hx, hn, status, att, version):
    """:meth:`sim.loop.Loop.drop_stale`: keep ``END``s of running attempts and ``START``s whose tag is the
    job's version, then heapify; returns the new size. (Keys are unique up to equal entries, so the order
    events pop in does not depend on the heap's layout.)"""
    k = 0
    for i in range(hn):
        kind, j, tag = hx[i, 0], hx[i, 2], hx[i, 3]
        keep = True
        if kind == END:
            keep = status[j] == RUNNING and tag == att[j]
        elif kind == START:
            keep = tag == version[j]
        if keep:
            ht[k] = ht[i]
            hx[k] = hx[i]
            k += 1
    for i in range(k // 2 - 1, -1, -1):
        _sift_down(ht, hx, i, k)
    return k


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def target_run(
    horizon, ct, cap_n, grow_above, stale_slack, ist, fst, kptr, wsort, cptr, cum, r, w, c, head, tail,
    nxt, prv, ps, mach, version, npend, pt, pu, pn, pk, plen, poff, pcap, pend, ubusy, udirty, catk, catv,
    evv, waiting, first, start_s, end, att, terms, status, machine, cur_att, acc, cnt,
):  # fmt: skip
    """:meth:`sim.loop.Loop.run` with :class:`sim.policies.target._TargetHooks`' hooks (fast path, no
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
    wbuf[: waiting.size] = waiting
    nw = waiting.size
    # attempt log
    lcap = max(1024, n + n // 4)
    log_job = np.empty(lcap, np.int32)
    log_start = np.empty(lcap)
    log_end = np.empty(lcap)
    log_out = np.empty(lcap, np.int8)
    log_m = np.empty(lcap, np.int32)
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
        t = INF
        kind = 5
        if hn > 0:
            t = ht[0]
            kind = hx[0, 0]
        if ci < nct and (ct[ci] < t or (ct[ci] == t and kind > CAPACITY)):
            t = ct[ci]
            kind = CAPACITY
        if si < n and r[si] < t:
            t = r[si]
            kind = ARRIVAL
        if t >= horizon:
            break
        events += 1
        dt = t - t_prev
        if dt != 0:
            available_cs += alive_cores * dt
            used_cs += busy * dt
            t_prev = t
        if kind == ARRIVAL:
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
                ht, hx = _push(ht, hx, hn, ps[j], START, j, j, v)
                hn += 1
                if plen[m] + 2 > pcap[m]:
                    pt, pu, pn, pk, pend = _fit(pt, pu, pn, pk, plen, poff, pcap, pend)
            else:
                if nw == wbuf.size:
                    wb2 = np.empty(2 * nw, np.int64)
                    wb2[:nw] = wbuf[:nw]
                    wbuf = wb2
                wbuf[nw] = j
                nw += 1
        elif kind == CAPACITY:
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
                    u = _utilization(ist[3], ist[4], npend, head, nxt, c, cap, ubusy, udirty)
                    ist[4] = target
                    if ist[3] == alive and u > grow_above:
                        ist[3] = min(ist[3] + 1, target)
                        realloc = True
                    elif nw:
                        realloc = True
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
                                wb2[:nw] = wbuf[:nw]
                                wbuf = wb2
                            wbuf[nw] = jj
                            nw += 1
                    for jj in extra:  # Loop.kill
                        s0 = start_s[jj]
                        log_end[cur_att[jj]] = t
                        log_out[cur_att[jj]] = ATT_KILLED
                        wasted_cs += c[jj] * (t - s0)
                        aborted += t - s0
                        terms[jj] += 1
                        n_term += 1
                        status[jj] = QUEUED
                        busy -= c[jj]
                        machine[jj] = -1
                        nrun -= 1
                    ist[4] = target
                    ist[3] = max(min(ist[3], target), 1)
                    _adapt(ist, fst, npend, head, nxt, c, ubusy, udirty)
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
                    wbuf[: todo.size] = todo
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
                    ht, hx = _push(ht, hx, hn, ps[jj], START, jj, jj, version[jj])
                    hn += 1
                live = nrun
                for m in range(npend.size):
                    live += npend[m]
                if hn > 2 * live + stale_slack:
                    hn = _drop_stale(ht, hx, hn, status, att, version)
        else:
            kind = hx[0, 0]
            j = hx[0, 2]
            tag = hx[0, 3]
            _pop(ht, hx, hn)
            hn -= 1
            if kind == END:
                if status[j] != RUNNING or tag != att[j]:
                    continue
                # Loop.complete
                status[j] = COMPLETED
                end[j] = t
                log_end[cur_att[j]] = t
                log_out[cur_att[j]] = ATT_COMPLETED
                completed_cs += c[j] * w[j]
                busy -= c[j]
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
                # Loop.start
                status[j] = RUNNING
                start_s[j] = t
                if first[j] < 0:
                    first[j] = t
                att[j] += 1
                machine[j] = m
                if nlog == log_job.size:
                    k2 = 2 * nlog
                    log_job = np.concatenate((log_job, np.empty(k2 - nlog, np.int32)))
                    log_start = np.concatenate((log_start, np.empty(k2 - nlog)))
                    log_end = np.concatenate((log_end, np.empty(k2 - nlog)))
                    log_out = np.concatenate((log_out, np.empty(k2 - nlog, np.int8)))
                    log_m = np.concatenate((log_m, np.empty(k2 - nlog, np.int32)))
                log_job[nlog] = j
                log_start[nlog] = t
                log_end[nlog] = horizon
                log_out[nlog] = ATT_RUNNING
                log_m[nlog] = m
                cur_att[j] = nlog
                nlog += 1
                busy += c[j]
                nrun += 1
                ht, hx = _push(ht, hx, hn, t + w[j], END, seq, j, att[j])
                hn += 1
                seq += 1
                q = _min_pending(m, status, head, nxt, ps)
                if q >= 0 and evv[q] != version[q]:
                    v = version[q]
                    evv[q] = v
                    ht, hx = _push(ht, hx, hn, ps[q], START, q, q, v)
                    hn += 1
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


def run_target(h: _TargetHooks) -> EngineOutput | None:
    """Run ``h`` (fresh Target* hooks) with :func:`target_run`; None where the compiled loop does not apply
    (disabled, the plain path ``fast=False``, checkpointing, a run already started): the Python loop runs
    then."""
    loop = h.loop
    if not ENABLED or not h.fast or loop.ck is not None or loop.events or loop.heap or loop.log.job:
        return None
    acc = np.zeros(5)
    cnt = np.zeros(2, np.int64)
    pr = h.profiles
    f64 = np.float64
    (lj, ls, le, lo, lm, ct, cv) = target_run(
        float(loop.horizon), np.ascontiguousarray(h.capacity_times, f64), np.ascontiguousarray(h.cap_n, np.int64),
        float(h.p.grow_above), int(h.stale_slack), h.ist, h.fst, h.kptr, h.wsort, h.cptr, h.cum, h.r, h.w, h.c,
        h.head, h.tail, h.nxt, h.prv, h.ps, h.mach, h.version, h.npend, pr.pt, pr.pu, pr.pn, pr.pk, pr.plen,
        pr.poff, pr.pcap, int(pr.end), h.ubusy, h.udirty, h.catk, h.catv, h.evv,
        np.ascontiguousarray(h.waiting, np.int64), loop.first, loop.start_s, loop.end, loop.att, loop.terms,
        loop.status, loop.machine, loop.cur_att, acc, cnt,
    )  # fmt: skip
    loop.completed_cs, loop.wasted_cs, loop.available_cs, loop.used_cs, loop.aborted = map(float, acc)
    loop.n_term, loop.events = map(int, cnt)
    log = loop.log
    log.job, log.start, log.end, log.outcome, log.machine = lj, ls, le, lo, lm  # type: ignore[assignment]
    loop.cap_t, loop.cap_v = ct.tolist(), cv.tolist()
    loop.alive_cores = float(cv[-1]) if cv.size else 0.0
    return loop.output()
