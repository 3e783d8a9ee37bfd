"""The one Python event loop: every policy that places jobs in Python runs here (Target*, SlackSched*,
capsched, per-machine Oracle, FF with the Acquirer, any new Python policy).

One handler per event kind (Vidur's model), events ordered by ``(time, kind, tie)``:

==========  ==  =====================================================================================
``END``      0  an attempt ends (stale if the job was killed or restarted since: skipped)
``CAPACITY`` 1  a batch of capacity-trace rows with the same time (the policy applies them)
``TICK``     2  a periodic tick (``Hooks.tick_s``; the Acquirer)
``START``    3  a start the policy planned for later (Target*'s per-machine plans)
``ARRIVAL``  4  a job is submitted (jobs in submit order, ties in input order)
==========  ==  =====================================================================================

After the last event of an instant the loop calls ``Hooks.on_instant_end(t)`` (the schedule pass of
queue-based policies). The loop owns the accounting shared by every engine — job status, attempts,
terminations, the attempt log, core-second aggregates, the capacity step function — and builds the
:class:`~sim.metrics.EngineOutput`; policies change job state only through :meth:`Loop.start`,
:meth:`Loop.complete` (done by the loop on ``END``) and :meth:`Loop.kill`.
"""

from __future__ import annotations

import heapq
from typing import Protocol

import numpy as np

from sim.checkpoint import Checkpoint, attempt_length, killed_progress
from sim.metrics import ATT_COMPLETED, ATT_KILLED, COMPLETED, QUEUED, RUNNING, AttemptLog, EngineOutput
from sim.problem import Problem, _unsort

END, CAPACITY, TICK, START, ARRIVAL = 0, 1, 2, 3, 4
INF = float("inf")


class Hooks(Protocol):
    """What a Python policy implements (a plain class; unused hooks may be no-ops).

    ``loop``: the :class:`Loop` it was built on (the dispatcher runs ``loop.run(hooks)``);
    ``capacity_times``: sorted times of the capacity-trace rows the policy applies in ``on_capacity``;
    ``tick_s``: tick period (``inf``: none); ``end_tie_by_job``: equal-time ends in job order (else in
    the order their attempts started)."""

    loop: Loop
    capacity_times: np.ndarray
    tick_s: float
    end_tie_by_job: bool

    def on_arrival(self, loop: Loop, j: int, t: float) -> None: ...
    def on_end(self, loop: Loop, j: int, t: float) -> None: ...
    def on_capacity(self, loop: Loop, t: float, lo: int, hi: int) -> None: ...
    def on_tick(self, loop: Loop, t: float) -> None: ...
    def on_start(self, loop: Loop, j: int, t: float, tag: int) -> None: ...
    def on_instant_end(self, loop: Loop, t: float) -> None: ...


class Loop:
    """Jobs in engine order (sorted by submit, ``row`` maps back to input rows) and their accounting."""

    def __init__(self, problem: Problem) -> None:
        o = problem.order
        self.row = o
        # jobs already in submit order (the usual case): the problem's arrays themselves, not copies, when
        # they are writable C arrays (a read-only one would make numba compile every hook a second time)
        self._sorted = problem.submit_ordered

        def pick(a: np.ndarray) -> np.ndarray:
            return a if self._sorted and a.flags.writeable and a.flags.c_contiguous else a[o]

        self.submit = pick(problem.submit_s)
        self.duration = pick(problem.duration_s)
        self.cores = pick(problem.cores)
        self.n = len(o)
        # checkpointing (sim.checkpoint): `duration` is each job's next attempt length, `work` its own
        # the run's settings, or per job (`ck_rows`, engine order; `ck` then only says checkpointing is on)
        self.ck = problem.checkpoint
        self.ck_rows = None if problem.checkpoint_jobs is None else problem.checkpoint_rows()
        if self.ck_rows is not None:
            self.ck = Checkpoint(*self.ck_rows[0])
        self.work = self.duration
        self.ckd = np.zeros(self.n if self.ck else 0, np.int64)  # checkpoints committed
        if self.ck is not None:
            self.duration = np.array(
                [attempt_length(float(w), 0, False, self.ck_of(j)) for j, w in enumerate(self.work)]
            )
        self.horizon = problem.horizon_s
        self.check = problem.check
        self.first = np.full(self.n, -1.0)
        self.start_s = np.full(self.n, -1.0)
        self.end = np.full(self.n, -1.0)
        self.att = np.zeros(self.n, np.int64)
        self.terms = np.zeros(self.n, np.int64)
        self.status = np.full(self.n, QUEUED, np.int8)
        self.machine = np.full(self.n, -1, np.int32)  # int32: machine and attempt-log indices
        self.cur_att = np.full(self.n, -1, np.int32)
        self.log = AttemptLog(self.horizon)
        self.completed_cs = self.wasted_cs = self.aborted = 0.0
        self.available_cs = self.used_cs = 0.0
        self.alive_cores = 0.0  # current capacity (set through record_capacity)
        self.busy = 0.0  # cores of running attempts
        self.n_term = self.events = self.violations = 0
        self.cap_t: list[float] = []
        self.cap_v: list[float] = []
        self.heap: list[tuple[float, int, int, int, int]] = []
        self.seq = 0
        self._end_by_job = False

    # ------------------------------------------------------------------ primitives for policies
    def push(self, t: float, kind: int, j: int, tag: int = 0, tie: int = -1) -> None:
        """Schedule an event (``START``/``END``); equal ``(t, kind)`` run in ``tie`` order (default: push
        order)."""
        if tie < 0:
            tie = self.seq
            self.seq += 1
        heapq.heappush(self.heap, (t, kind, tie, j, tag))

    def drop_stale(self, start_tag: np.ndarray) -> None:
        """Remove stale events from the heap in one sweep: ``END``s of attempts no longer running and
        ``START``s whose tag is not ``start_tag[j]`` (the loop would skip them one by one)."""
        st, att, run = self.status, self.att, RUNNING
        keep = [
            e
            for e in self.heap
            if (e[1] == END and st[e[3]] == run and e[4] == att[e[3]])
            or (e[1] == START and e[4] == start_tag[e[3]])
            or e[1] not in (END, START)
        ]
        heapq.heapify(keep)
        self.heap[:] = keep

    def start(self, j: int, m: int, t: float) -> None:
        """Start an attempt of job ``j`` on machine ``m`` now; its ``END`` is scheduled."""
        self.status[j] = RUNNING
        self.start_s[j] = t
        if self.first[j] < 0:
            self.first[j] = t
        self.att[j] += 1
        self.machine[j] = m
        self.cur_att[j] = self.log.open(j, m, t)
        self.busy += self.cores[j]
        e = t + self.duration[j]
        if self._end_by_job:
            heapq.heappush(self.heap, (e, END, j, j, int(self.att[j])))
        else:
            self.push(e, END, j, int(self.att[j]))

    def ck_of(self, j: int) -> Checkpoint:
        """Job ``j``'s checkpoint settings (engine order; only while checkpointing)."""
        if self.ck_rows is None:
            return self.ck  # type: ignore[return-value]
        return Checkpoint(*self.ck_rows[j])

    def kill(self, j: int, t: float) -> None:
        """Terminate the running attempt of ``j`` (wasted work); the job is queued again."""
        s = self.start_s[j]
        self.log.close(int(self.cur_att[j]), t, ATT_KILLED)
        if self.ck is not None:  # keep the checkpoints the attempt completed; lose the rest
            w = float(self.work[j])
            ck = self.ck_of(j)
            k, _ = killed_progress(t - s, w, int(self.ckd[j]), bool(self.terms[j] > 0), ck)
            self.log.useful[int(self.cur_att[j])] = k * ck.interval_s
            self.wasted_cs += self.cores[j] * ((t - s) - k * ck.interval_s)
            self.ckd[j] += k
            self.duration[j] = attempt_length(w, int(self.ckd[j]), True, ck)
        else:
            self.wasted_cs += self.cores[j] * (t - s)
        self.aborted += t - s
        self.terms[j] += 1
        self.n_term += 1
        self.status[j] = QUEUED
        self.busy -= self.cores[j]
        self.machine[j] = -1

    def complete(self, j: int, t: float) -> None:
        self.status[j] = COMPLETED
        self.end[j] = t
        self.log.close(int(self.cur_att[j]), t, ATT_COMPLETED)
        self.completed_cs += self.cores[j] * self.work[j]
        if self.ck is not None:  # recovery and checkpoint writes of this attempt
            rest = float(self.work[j]) - int(self.ckd[j]) * self.ck_of(j).interval_s
            self.log.useful[int(self.cur_att[j])] = rest
            self.wasted_cs += self.cores[j] * (self.duration[j] - rest)
        self.busy -= self.cores[j]

    def record_capacity(self, t: float, cores: float) -> None:
        """Capacity (alive or allocated cores) from ``t`` on."""
        self.alive_cores = cores
        if not self.cap_v or cores != self.cap_v[-1]:
            self.cap_t.append(t)
            self.cap_v.append(cores)

    # ------------------------------------------------------------------ the loop
    def run(self, hooks: Hooks) -> EngineOutput:
        """Dispatch every event before the horizon to ``hooks``; return the run's output. Hooks with a
        ``compiled_run()`` returning an output (a compiled loop making the same choices) run that instead."""
        fast = getattr(hooks, "compiled_run", None)
        out = fast() if fast is not None else None
        if out is not None:
            return out
        self._end_by_job = hooks.end_tie_by_job
        heap, submit, horizon = self.heap, self.submit, self.horizon
        ct = np.asarray(hooks.capacity_times, np.float64)
        nct, ci, si, n = ct.size, 0, 0, self.n
        tick = hooks.tick_s
        next_tick = tick
        t_prev = 0.0
        cur = None
        while True:
            # the next event: the heap front, the next capacity batch, the next tick, the next arrival
            t, kind = INF, 5
            if heap:
                t, kind = heap[0][0], heap[0][1]
            if ci < nct and (ct[ci] < t or (ct[ci] == t and kind > CAPACITY)):
                t, kind = float(ct[ci]), CAPACITY
            if next_tick < t or (next_tick == t and kind > TICK):
                t, kind = next_tick, TICK
            if si < n and submit[si] < t:
                t, kind = float(submit[si]), ARRIVAL
            if cur is not None and t != cur:
                hooks.on_instant_end(self, cur)
                cur = None
                continue  # the instant-end hook may have scheduled events
            if t >= horizon:
                break
            cur = t
            self.events += 1
            dt = t - t_prev
            if dt:
                self.available_cs += self.alive_cores * dt
                self.used_cs += self.busy * dt
                t_prev = t
            if kind == ARRIVAL:
                si += 1
                hooks.on_arrival(self, si - 1, t)
            elif kind == CAPACITY:
                lo = ci
                while ci < nct and ct[ci] == t:
                    ci += 1
                hooks.on_capacity(self, t, lo, ci)
            elif kind == TICK:
                next_tick += tick
                hooks.on_tick(self, t)
            else:
                _, kind, _, j, tag = heapq.heappop(heap)
                if kind == END:
                    if self.status[j] != RUNNING or tag != self.att[j]:
                        continue
                    self.complete(j, t)
                    hooks.on_end(self, j, t)
                else:
                    hooks.on_start(self, j, t, tag)
        h = horizon
        self.available_cs += self.alive_cores * (h - t_prev)
        self.used_cs += self.busy * (h - t_prev)
        return self.output()

    def output(self) -> EngineOutput:
        run = np.flatnonzero(self.status == RUNNING)
        inflight = float(np.sum(self.cores[run] * (self.horizon - self.start_s[run])))
        if self.ck is not None:  # work saved by killed attempts, not yet delivered
            open_ = self.status != COMPLETED
            tau = self.ck.interval_s if self.ck_rows is None else self.ck_rows[open_, 0]
            inflight += float(np.sum(self.cores[open_] * self.ckd[open_] * tau))
        o = self.row
        un = (lambda a: a) if self._sorted else (lambda a: _unsort(o, a))  # in input order
        return EngineOutput(
            un(self.first),
            un(self.end),
            un(self.att),
            un(self.terms),
            un(self.status),
            self.completed_cs,
            self.wasted_cs,
            inflight,
            self.available_cs,
            self.used_cs,
            self.n_term,
            self.aborted,
            self.violations,
            self.events,
            **self.log.arrays(o, self.ck is not None),
            cap_time_s=np.asarray(self.cap_t, np.float64),
            cap_cores=np.asarray(self.cap_v, np.float64),
        )
