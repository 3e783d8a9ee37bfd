"""The plain Target* implementation (starting point), kept as the reference the indexed
:mod:`sim.policies.target` is held to: every pending job is re-planned with numpy ``earliest_start`` on each
machine event. Slow (≈200 jobs/s); tests only."""

from __future__ import annotations

import heapq

import numpy as np

from sim.metrics import ATT_COMPLETED, ATT_KILLED, COMPLETED, QUEUED, RUNNING, AttemptLog, EngineOutput
from sim.policies.target import TargetParams
from sim.problem import Problem, _unsort


def earliest_start(plan: list[tuple[float, float, float]], t: float, w: float, c: float, cap: float) -> float:
    """Earliest s ≥ t such that the machine's plan (``(start, end, cores)``) leaves ``c`` cores free over
    ``[s, s + w)``. Usage is a step function that rises at planned starts and falls at ends, so the
    candidates are t and the ends after t, and the window maximum is taken at t or a start inside it."""
    if not plan:
        return t
    arr = np.asarray(plan)
    ps, pe, pc = arr[:, 0], arr[:, 1], arr[:, 2]
    live = pe > t
    ps, pe, pc = ps[live], pe[live], pc[live]
    if ps.size == 0:
        return t
    bps = np.unique(np.concatenate(([t], ps[ps > t], pe)))
    usage = ((ps[None, :] <= bps[:, None]) & (pe[None, :] > bps[:, None])) @ pc
    ok = usage + c <= cap + 1e-9
    cands = np.unique(np.concatenate(([t], pe)))
    for s0 in cands:
        i = np.searchsorted(bps, s0)
        j = np.searchsorted(bps, s0 + w, side="left")
        if ok[i : max(j, i + 1)].all():
            return float(s0)
    return float(cands[-1])


class _Sim:
    def __init__(self, problem: Problem, p: TargetParams, variant: str) -> None:
        self.p, self.variant = p, variant
        o = problem.order
        self.row = o
        self.r = problem.submit_s[o]
        self.w = problem.duration_s[o]
        self.c = problem.cores[o]
        self.n = len(self.r)
        self.M = problem.platform.machines
        self.cap = problem.platform.cores
        self.H = problem.horizon_s
        tr = problem.capacity
        self.cap_t, self.cap_n = tr.time_s, np.minimum(tr.machines_alive, self.M)
        self.m_minus = max(1, int(self.cap_n.min()))
        self.plan: list[list[tuple[float, float, float]]] = [[] for _ in range(self.M)]
        self.jobs_on: list[dict[int, tuple[float, float]]] = [{} for _ in range(self.M)]
        self.alive = 0
        self.m_use = self.m_minus
        self.s_plus = 1.0
        self.first = np.full(self.n, -1.0)
        self.start = np.full(self.n, -1.0)
        self.end = np.full(self.n, -1.0)
        self.att = np.zeros(self.n, np.int64)
        self.terms = np.zeros(self.n, np.int64)
        self.status = np.full(self.n, QUEUED, np.int8)
        self.mach = np.full(self.n, -1, np.int64)
        self.version = np.zeros(self.n, np.int64)  # invalidates stale start/end events after re-planning
        self.waiting: list[int] = []
        self.events: list[tuple[float, int, int, int, int]] = []  # (time, kind, seq, job, version)
        self.seq = 0
        self.completed_cs = self.wasted_cs = self.aborted = 0.0
        self.n_term = 0
        self.log = AttemptLog(self.H)
        self.cur_att = np.full(self.n, -1, np.int64)
        self.cap_steps: list[tuple[float, float]] = []
        # reference sets for categories: per window k, jobs released in window k-1 (k = 0 uses itself)
        self.ref_s = p.reference_days * 86400.0
        self._ref: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    # ------------------------------------------------------------------ categories and targets
    def _category(self, j: int, t: float) -> float:
        k = int(t // self.ref_s)
        if k not in self._ref:
            lo, hi = (max(k - 1, 0) * self.ref_s, max(k, 1) * self.ref_s)
            a, b = np.searchsorted(self.r, [lo, hi])
            ws = self.w[a:b]
            order = np.argsort(ws)
            area = (ws * self.c[a:b])[order]
            # share of area of jobs at least as long as w: 1 − (area of strictly shorter jobs) / total
            self._ref[k] = (ws[order], np.concatenate(([0.0], np.cumsum(area))))
        ws, cum = self._ref[k]
        if ws.size == 0 or cum[-1] <= 0:
            return 0.5
        shorter = np.searchsorted(ws, self.w[j], side="left")
        return float(1.0 - cum[shorter] / cum[-1])

    def _target(self, j: int, t: float) -> int:
        cat = self._category(j, t)
        m = int(np.floor(cat * self.m_use)) if cat < 1 else self.m_use - 1
        if self.variant == "packed-target-asap":
            q = m / self.p.pack
            m = int((np.floor(q) if self.p.pack_floor else round(q)) * self.p.pack)
        return min(max(m, 0), max(self.alive - 1, 0))

    def _near(self, tgt: int) -> list[int]:
        """Alive machines within distance D⁺ of the target, closest first (ties: lower index)."""
        d = self.p.search_distance
        cand = [m for m in range(max(0, tgt - d), min(self.alive, tgt + d + 1))]
        if self.variant == "packed-target-asap":
            pack = [m for m in range(tgt, min(tgt + self.p.pack, self.alive))]
            return pack + sorted((m for m in cand if m not in pack), key=lambda m: (abs(m - tgt), m))
        return sorted(cand, key=lambda m: (abs(m - tgt), m))

    # ------------------------------------------------------------------ planning
    def _assign(self, j: int, t: float) -> None:
        if self.alive == 0:
            self.waiting.append(j)
            return
        tgt = self._target(j, t)
        near = self._near(tgt)
        starts = {m: earliest_start(self.plan[m], t, self.w[j], self.c[j], self.cap) for m in near}
        home = tgt  # packed (§4.5): the pack is the target; the stretch test plans on its earliest start
        if self.variant == "packed-target-asap":
            pack = [m for m in range(tgt, min(tgt + self.p.pack, self.alive))]
            home = min(pack, key=lambda x: (starts[x], x))
        stretch_ok = self.p.stretch_test and (starts[home] + self.w[j] - self.r[j]) / self.w[j] <= self.s_plus
        if self.variant == "target-stretch":
            m = (
                tgt
                if (starts[tgt] <= t or stretch_ok)
                else min(near, key=lambda x: (starts[x], near.index(x)))
            )
        else:
            now = [x for x in near if starts[x] <= t]
            if starts[tgt] <= t:
                m = tgt
            elif now:
                m = now[0]
            elif stretch_ok:
                m = home
            else:
                m = min(near, key=lambda x: (starts[x], near.index(x)))
        s = starts[m]
        self.plan[m].append((s, s + self.w[j], self.c[j]))
        self.jobs_on[m][j] = (s, s + self.w[j])
        self.mach[j] = m
        self.version[j] += 1
        self._push(s, 2, j)

    def _push(self, time: float, kind: int, j: int) -> None:
        heapq.heappush(self.events, (time, kind, self.seq, j, int(self.version[j])))
        self.seq += 1

    def _unplan(self, j: int) -> None:
        m = self.mach[j]
        s, e = self.jobs_on[m].pop(j)
        self.plan[m].remove((s, e, self.c[j]))
        self.mach[j] = -1
        self.version[j] += 1

    def _utilization(self, t: float) -> float:
        us = []
        for m in range(min(self.m_use, self.alive)):
            if any(self.status[j] != RUNNING for j in self.jobs_on[m]):
                us.append(1.0)
            else:
                us.append(sum(self.c[j] for j in self.jobs_on[m]) / self.cap)
        return float(np.mean(us)) if us else 0.0

    def _adapt(self, t: float) -> float:
        u = self._utilization(t)
        if u > self.p.grow_above and self.alive > self.m_use:
            self.m_use += 1
        elif u < self.p.shrink_below and self.m_use > self.m_minus:
            self.m_use -= 1
        self.m_use = max(min(self.m_use, max(self.alive, 1)), 1)
        return u

    def _reallocate(self, t: float, extra: list[int]) -> None:
        pending = [j for m in range(self.M) for j in self.jobs_on[m] if self.status[j] != RUNNING]
        for j in pending:
            self._unplan(j)
        todo = sorted(set(pending) | set(extra) | set(self.waiting), key=lambda j: (self.r[j], j))
        self.waiting = []
        for j in todo:
            self._assign(j, t)

    # ------------------------------------------------------------------ main loop
    def run(self) -> EngineOutput:
        for j in range(self.n):
            heapq.heappush(self.events, (self.r[j], 3, self.seq, j, -1))
            self.seq += 1
        for k, (tc, _nc) in enumerate(zip(self.cap_t, self.cap_n, strict=True)):
            heapq.heappush(self.events, (tc, 1, self.seq, k, -1))
            self.seq += 1
        # kinds at equal time: 0 end, 1 capacity, 2 planned start, 3 arrival (the FF order)
        available, t_prev, busy, used = 0.0, 0.0, 0.0, 0.0
        while self.events and self.events[0][0] < self.H:
            t, kind, _, j, ver = heapq.heappop(self.events)
            available += self.alive * self.cap * (t - t_prev)
            used += busy * (t - t_prev)
            t_prev = t
            if kind == 0:
                if ver != self.version[j] or self.status[j] != RUNNING:
                    continue
                m = self.mach[j]
                self.status[j] = COMPLETED
                self.end[j] = t
                self.log.close(int(self.cur_att[j]), t, ATT_COMPLETED)
                self.completed_cs += self.c[j] * self.w[j]
                busy -= self.c[j]
                self._unplan(j)
                self.s_plus = max(self.s_plus, (t - self.r[j]) / self.w[j])
                self._adapt(t)
            elif kind == 2:
                if ver != self.version[j]:
                    continue
                self.status[j] = RUNNING
                self.start[j] = t
                if self.first[j] < 0:
                    self.first[j] = t
                self.att[j] += 1
                self.cur_att[j] = self.log.open(j, int(self.mach[j]), t)
                busy += self.c[j]
                self._push(t + self.w[j], 0, j)
            elif kind == 1:
                target = int(self.cap_n[j])
                self.cap_steps.append((t, target * self.cap))
                if target > self.alive:
                    prev_alive = self.alive
                    u = self._utilization(t)
                    self.alive = target
                    if self.m_use == prev_alive and u > self.p.grow_above:
                        self.m_use = min(self.m_use + 1, self.alive)
                        self._reallocate(t, [])
                    elif self.waiting:
                        self._reallocate(t, [])
                elif target < self.alive:
                    killed = []
                    for m in range(target, self.alive):
                        for jj, (s, _) in list(self.jobs_on[m].items()):
                            if self.status[jj] == RUNNING:
                                self.wasted_cs += self.c[jj] * (t - s)
                                self.log.close(int(self.cur_att[jj]), t, ATT_KILLED)
                                self.aborted += t - s
                                self.n_term += 1
                                self.terms[jj] += 1
                                self.status[jj] = QUEUED
                                busy -= self.c[jj]
                                killed.append(jj)
                            self._unplan(jj)
                            if jj not in killed:
                                self.waiting.append(jj)
                    self.alive = target
                    self.m_use = max(min(self.m_use, self.alive), 1)
                    self._adapt(t)
                    self._reallocate(t, killed)
            else:
                self._assign(j, t)
                self._adapt(t)
        available += self.alive * self.cap * (self.H - t_prev)
        used += busy * (self.H - t_prev)
        running = self.status == RUNNING
        inflight = float(np.sum(self.c[running] * (self.H - self.start[running])))
        return EngineOutput(
            _unsort(self.row, self.first),
            _unsort(self.row, self.end),
            _unsort(self.row, self.att),
            _unsort(self.row, self.terms),
            _unsort(self.row, self.status),
            self.completed_cs,
            self.wasted_cs,
            inflight,
            available,
            used,
            self.n_term,
            self.aborted,
            0,
            self.seq,
            **self.log.arrays(self.row),
            cap_time_s=np.array([x for x, _ in self.cap_steps], np.float64),
            cap_cores=np.array([v for _, v in self.cap_steps], np.float64),
        )


def run_reference(problem: Problem, params: TargetParams, variant: str) -> EngineOutput:
    return _Sim(problem, params, variant).run()
