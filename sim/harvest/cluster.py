"""A harvest-VM cluster simulator for per-machine capacity (paper 002): pluggable placement and the Acquirer.

The compiled engine (:mod:`sim.engine`) runs First-Fit and the interval policies. SlackSched, the
per-machine Oracle and anything with the Acquirer need state the kernel does not keep (per-node change
history, a pool of HVMs larger than the cluster), so they run in this plain Python event loop — the
semantics and the test oracle of :func:`sim.harvest.loop.harvest_run`, which runs the same loop compiled for
every harvest policy but checkpointing (``Cluster.compiled_run``). With
``placement="ff"`` and no Acquirer it reproduces the compiled engine's per-machine semantics exactly (a
test holds it to that):

* at each instant ``t``: (1) jobs ending at ``t`` complete; (2) capacity events at ``t`` apply in machine
  order; a node shrinking below its running jobs' demand kills them "in increasing order of their start
  time" (paper 002 §4.1, "Extensions to the simulator": oldest start first, ties: earlier input row) until
  they fit (``kill_order="newest"`` reverses it: the compiled engine's per-machine order, for the test that
  holds FF to it); killed jobs join the back of the queue, earlier start first, then input row;
  (2b) the Acquirer acts if ``t`` is one of its ticks; (3) jobs submitted at ``t`` join the queue in input
  order; (4) one pass over the queue front to back asks the placement for a node (or "wait").
* **Pool and cluster.** The capacity trace describes a *pool* of HVMs (one per machine index, their harvested
  cores over time). The cluster holds ``nodes`` of them (default: all). Only allocated nodes run jobs, count
  towards available core-seconds and feed the change history.
* **Change history** (what SlackSched's prediction engine sees): every capacity change of an allocated node
  records its inter-change time (since that node's previous change or its allocation) and its direction
  (growth, or shrink incl. eviction to 0). A freshly allocated node counts as "last change = growth at
  allocation" (paper 002 Table 1).
* **Acquirer** (paper 002 §3.2, Algorithm 2): every ``acquirer_period_s`` it sorts allocated nodes by time
  since their last change, marks the most recently changed ``⌊fraction × nodes⌋`` for graceful
  decommissioning (no new jobs; deallocated when their last job ends or is killed) and first allocates as
  many replacements, chosen uniformly at random (seeded) among pool HVMs that are not allocated and have
  cores now (the paper's *Random* allocator). No scaling policy: the job load is the given trace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sim.bounds import Bound, bounded
from sim.capacity.trace import CapacityTrace, MachineCapacityTrace
from sim.engine import _qt_first_le, _qt_set
from sim.engine.loop import Loop
from sim.metrics import EngineOutput
from sim.problem import Problem, RunArtifacts

GROW, SHRINK = 0, 1
INF = float("inf")


@dataclass(frozen=True)
class ClusterConfig:
    """Pool/cluster options shared by every placement in this loop."""

    nodes: int = 0  # allocated nodes; 0 = every machine of the trace
    acquirer: bool = False
    acquirer_period_s: float = 3600.0
    acquirer_fraction: float = 0.1
    kill_order: str = "oldest"  # paper 002 §4.1; "newest": the compiled engine's order

    def __post_init__(self) -> None:
        if self.nodes < 0 or not (0.0 <= self.acquirer_fraction <= 1.0) or self.acquirer_period_s <= 0:
            raise ValueError("nodes must be ≥ 0, acquirer_fraction in [0, 1], acquirer_period_s > 0")
        if self.kill_order not in ("oldest", "newest"):
            raise ValueError(f"kill_order must be 'oldest' or 'newest', not {self.kill_order!r}")


@bounded(
    nodes=Bound(0, 1e5, "harvest VMs"),
    acquirer_period_h=Bound(0.0, 1e6, "hours", lo_open=True, step_s=3600.0, what="acquirer rounds"),
    acquirer_fraction=Bound(0.0, 1.0, "of the pool"),
)
@dataclass(frozen=True)
class ClusterOptions:
    """Policy parameters (``--set``) that select the harvest-VM loop's pool/Acquirer options."""

    nodes: int = 0
    acquirer: bool = False
    acquirer_period_h: float = 1.0
    acquirer_fraction: float = 0.1

    def cluster(self) -> ClusterConfig:
        return ClusterConfig(
            self.nodes, self.acquirer, self.acquirer_period_h * 3600.0, self.acquirer_fraction
        )

    def uses_loop(self) -> bool:
        return bool(self.nodes or self.acquirer)


def machine_trace(cap: CapacityTrace | MachineCapacityTrace, cores: float) -> MachineCapacityTrace:
    """Per-machine view of a machines-alive trace: machine ``i`` has ``cores`` while ``i < alive(t)``, else 0
    (the LIFO platform of the thesis). A per-machine trace is returned unchanged."""
    if isinstance(cap, MachineCapacityTrace):
        return cap
    tt, mm, cc = [], [], []
    prev = 0
    ch = cap.changes()
    for t, n in zip(ch.time_s, ch.machines_alive, strict=True):
        n = int(n)
        lo, hi = sorted((prev, n))
        if t == 0:
            lo, hi = 0, cap.machines  # every machine gets a first event at time 0
        for m in range(lo, hi):
            tt.append(t)
            mm.append(m)
            cc.append(cores if m < n else 0.0)
        prev = n
    return MachineCapacityTrace(
        np.array(tt), np.array(mm), np.array(cc), cap.machines, cap.horizon_s, "lifo-view"
    )


def _build_min(tree: np.ndarray, size: int) -> None:
    """Fill the inner nodes of a min-tree from its leaves ``tree[size:2·size]``."""
    lo = size // 2
    while lo >= 1:
        tree[lo : 2 * lo] = np.minimum(tree[2 * lo : 4 * lo : 2], tree[2 * lo + 1 : 4 * lo : 2])
        lo //= 2


class ChangeHistory:
    """Inter-change times of the last ``window_s`` (rolling) and bigram shrink counts (all history)."""

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self._t: list[float] = []  # time each inter-change time was observed (non-decreasing)
        self._x: list[float] = []  # the inter-change times; the window is self._x[self._head:]
        self._head = 0
        self.bigram = np.ones((2, 2))  # Laplace prior: counts[prev_dir, next_dir]
        self._cache: tuple[np.ndarray, np.ndarray] | None = None

    def add(self, t: float, inter: float, prev_dir: int, new_dir: int) -> None:
        self._t.append(t)
        self._x.append(inter)
        self.bigram[prev_dir, new_dir] += 1
        self._cache = None

    def p_shrink(self, last_dir: np.ndarray) -> np.ndarray:
        """P(next change is a shrink | last change direction)."""
        return self.p_shrink_table()[last_dir]

    def p_shrink_table(self) -> np.ndarray:
        """P(next change is a shrink | last change grew), … | shrank): the bigram's two rows."""
        b = self.bigram
        return b[:, SHRINK] / b.sum(axis=1)

    def sorted_samples(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Inter-change times observed in ``(t − window_s, t]``, sorted, with prefix sums (index 0 = 0)."""
        h, ts, cut = self._head, self._t, t - self.window_s
        while h < len(ts) and ts[h] <= cut:
            h += 1
        if h != self._head:
            self._cache = None
            if h > 4096 and 2 * h > len(ts):  # drop the expired prefix now and then
                del self._t[:h], self._x[:h]
                h = 0
            self._head = h
        if self._cache is None:
            xs = np.sort(np.array(self._x[h:], dtype=np.float64))
            self._cache = (xs, np.concatenate(([0.0], np.cumsum(xs))))
        return self._cache


class Cluster:
    """Harvest-VM state and the hooks of :class:`sim.engine.loop.Loop`; placements read the attributes documented
    here (``cores``, ``duration``, ``cap``, ``used``, ``allocated``, ``decom``, ``last_change``,
    ``last_dir``, ``history``, ``free()``, ``next_avail()``, ``min_future_cap()``).

    The schedule pass visits the queue front to back but asks the placement only about jobs that fit on
    some node now (a queue min-tree finds them): every placement returns "wait" for the others, so the
    choices are those of asking about every queued job (``full_pass=True`` does that; a test compares).
    A placement may also come with a compiled ``scan(cl, t, p, top) -> (position, node)`` that does the pass's
    search from queue position ``p`` itself (first job that starts, ``(-1, -1)`` if none); the loop then
    calls it once per start instead of the placement once per job (same choices; a test compares)."""

    end_tie_by_job = True

    def __init__(
        self,
        problem: Problem,
        cfg: ClusterConfig,
        seed: int,
        placement: Callable[[Cluster, int, float], int],
        history_window_s: float = 86400.0,
        full_pass: bool = False,
        scan: Callable[[Cluster, float, int, float], tuple[int, int]] | None = None,
        queue_aware: bool = False,
        duration_order: str | None = None,
        reserve: bool = False,
        heartbeat_s: float | None = None,
    ) -> None:
        if problem.memory_gb is not None:
            raise ValueError("the harvest-VM loop models cores only; drop memory_gb from the platform")
        if problem.record_ts:
            raise ValueError("time series recording is not available in the harvest-VM loop")
        tr = machine_trace(problem.capacity, problem.platform.cores)
        self.trace = tr
        self.loop = loop = Loop(problem)
        self.row, self.cores, self.duration, self.n = loop.row, loop.cores, loop.duration, loop.n
        self.M = tr.machines
        self.horizon = problem.horizon_s
        self.placement = placement
        self.cfg = cfg
        self.full_pass = full_pass
        self.scan = scan
        self.queue_aware = queue_aware
        self.reserve = reserve
        self.pass_no = 0  # schedule passes so far (a pass-scoped state can key on it)
        #: a compiled run of this loop (sim.harvest.loop; None: not available), tried first by Loop.run
        self.compiled_run: Callable[[], EngineOutput | None] | None = None
        # claims of the jobs that chose to wait in this pass (queue-aware placements): per node, sorted ends
        # (t + a + d) and cores, their count and total
        self.claimed = np.zeros(self.M)
        self.claim_end = np.zeros((self.M, 4))
        self.claim_cores = np.zeros((self.M, 4))
        self.nclaim = np.zeros(self.M, np.int64)
        self._claims = False
        # running jobs' planned ends per node, padded rows (for compiled placements; refreshed lazily)
        self._e2 = np.zeros((self.M, 4))
        self._c2 = np.zeros((self.M, 4))
        self._j2 = np.zeros((self.M, 4), np.int64)
        self._n2 = np.zeros(self.M, np.int64)
        self._rows = False  # kept up to date at every start/end once a compiled placement asked for them
        self.rng = np.random.default_rng(seed)
        self.cap = np.zeros(self.M)  # current harvested cores of every pool HVM
        self.used = np.zeros(self.M)
        self.allocated = np.zeros(self.M, bool)
        self.decom = np.zeros(self.M, bool)
        self.last_change = np.zeros(self.M)
        self.last_dir = np.full(self.M, GROW, np.int64)
        self.running: list[dict[int, float]] = [{} for _ in range(self.M)]  # node -> {job: end}
        self._ends: list[tuple[np.ndarray, np.ndarray] | None] = [None] * self.M  # next_avail cache
        self.history = ChangeHistory(history_window_s)
        nodes = cfg.nodes or self.M
        if nodes > self.M:
            raise ValueError(f"nodes={nodes} exceeds the {self.M} HVMs of the capacity trace")
        init = (
            np.arange(self.M) if nodes == self.M else np.sort(self.rng.choice(self.M, nodes, replace=False))
        )
        self.allocated[init] = True
        self.status, self.start = loop.status, loop.start_s
        self.acquisitions = 0
        self.capacity_times = tr.time_s
        self.tick_s = cfg.acquirer_period_s if cfg.acquirer else INF
        # heartbeat scheduling (YARN): the pass runs only at heartbeat instants, every ``heartbeat_s``; the
        # Acquirer then runs at the first heartbeat at or after each of its periods
        self.heartbeat_s = heartbeat_s
        self._beat = False
        self._next_acq = self.tick_s
        if heartbeat_s is not None:
            if not (np.isfinite(heartbeat_s) and heartbeat_s > 0):
                raise ValueError(f"heartbeat interval must be finite and > 0 s (got {heartbeat_s:g})")
            self.tick_s = float(heartbeat_s)
        self._cap_dirty = True  # allocation, decommissioning or a node's cores changed in this instant
        self._accept = np.zeros(self.M, bool)
        # the queue: positions in FIFO order, a min-tree of the cores of the jobs still queued there
        self._qsize = 1024
        self._qtree = np.full(2 * self._qsize, INF)
        self._qjob = np.full(self._qsize, -1, np.int64)
        self._qtail = 0
        self._qlen = 0
        self.qpos = np.full(self.n, -1, np.int64)  # queue position of each queued job
        # optional second index of the queue: a min-tree of queued jobs' cores in (duration, row) order
        self.dtree: np.ndarray | None = None
        if duration_order is not None:  # "queue": (duration, row); "job": (submit, duration, row)
            if duration_order not in ("queue", "job"):
                raise ValueError(f"duration_order must be 'queue' or 'job', not {duration_order!r}")
            self.dsize = 1
            while self.dsize < max(self.n, 1):
                self.dsize *= 2
            by_job = duration_order == "job"
            sub = loop.submit if by_job else np.zeros(self.n)
            self.drank_job = np.lexsort((self.row, self.duration, sub)).astype(np.int64)
            self.drank = np.empty(self.n, np.int64)
            self.drank[self.drank_job] = np.arange(self.n)
            # first rank of each rank's submit group (all 0 for "queue": one group)
            s_sorted = sub[self.drank_job]
            new = np.concatenate(([True], s_sorted[1:] != s_sorted[:-1])) if self.n else np.zeros(0, bool)
            self.dgroup = np.maximum.accumulate(np.where(new, np.arange(self.n), 0)).astype(np.int64)
            # first rank of the next group after each rank's (n after the last group)
            starts = np.flatnonzero(new)
            self.dnext = np.append(starts[1:], self.n).astype(np.int64)[np.cumsum(new) - 1]
            self.dtree = np.full(2 * self.dsize, INF)
        # per-machine future capacity (for the oracle): event times and cores per machine
        order = np.lexsort((tr.time_s, tr.machine))
        self.fut_ptr = np.concatenate(([0], np.cumsum(np.bincount(tr.machine, minlength=self.M))))
        self.fut_t = tr.time_s[order]
        self.fut_c = tr.cores[order]

    # ------------------------------------------------------------------ helpers for placements
    def accepting(self) -> np.ndarray:
        """Nodes taking new jobs (allocated, not decommissioning, cores > 0), refreshed if stale."""
        if self._cap_dirty:
            self._accept = self.allocated & ~self.decom & (self.cap > 0)
        return self._accept

    def free(self) -> np.ndarray:
        """Free cores per node; −1 where a node takes no new jobs (not allocated, decommissioning)."""
        if self._cap_dirty:
            self._accept = self.allocated & ~self.decom & (self.cap > 0)
        return np.where(self._accept, self.cap - self.used, -1.0)

    def next_avail(self, m: int, c: float, t: float) -> float:
        """Seconds until node ``m`` has ``c`` free cores if its capacity holds and its jobs end as planned
        (``inf`` if it never will at its current size). Cores claimed in this pass by earlier waiting jobs
        (:meth:`claim`) are taken until those jobs' planned ends; they count against room now only if
        ``reserve`` (else a job fitting the free cores now has ``a = 0``, as Algorithm 1's ``feasible``)."""
        now = self.cap[m] - self.used[m]
        free = now - self.claimed[m]
        if free >= c or (not self.reserve and now >= c):  # not free + claimed: that can round up to c
            return 0.0
        if self.cap[m] < c:
            return INF
        ends, cores, freed = self._node_ends(m)
        k = int(self.nclaim[m])
        if k:  # merge the claims in (running first on equal ends), then the same search
            ends = np.concatenate((ends, self.claim_end[m, :k]))
            order = np.argsort(ends, kind="stable")
            ends = ends[order]
            freed = np.cumsum(np.concatenate((cores, self.claim_cores[m, :k]))[order])
        k = int(np.searchsorted(freed, c - free - 1e-9, side="left"))
        return float(ends[k] - t) if k < ends.size else INF

    def claim(self, m: int, c: float, end: float) -> None:
        """A job that waits for node ``m`` in this pass claims ``c`` cores there until ``end`` (its planned
        end if it starts when the node frees): later jobs of the pass see them taken."""
        k = int(self.nclaim[m])
        if k == self.claim_end.shape[1]:
            self.claim_end = np.concatenate((self.claim_end, np.zeros_like(self.claim_end)), axis=1)
            self.claim_cores = np.concatenate((self.claim_cores, np.zeros_like(self.claim_cores)), axis=1)
        i = int(np.searchsorted(self.claim_end[m, :k], end, side="right"))
        self.claim_end[m, i + 1 : k + 1] = self.claim_end[m, i:k].copy()
        self.claim_cores[m, i + 1 : k + 1] = self.claim_cores[m, i:k].copy()
        self.claim_end[m, i], self.claim_cores[m, i] = end, c
        self.nclaim[m] = k + 1
        self.claimed[m] += c
        self._claims = True

    def _reset_claims(self) -> None:
        if self._claims:
            self.claimed[:] = 0.0
            self.nclaim[:] = 0
            self._claims = False

    def grow_claims(self) -> None:
        """Double the claim rows (a compiled pass asks when a node's row is full)."""
        self.claim_end = np.concatenate((self.claim_end, np.zeros_like(self.claim_end)), axis=1)
        self.claim_cores = np.concatenate((self.claim_cores, np.zeros_like(self.claim_cores)), axis=1)

    def top_free(self) -> float:
        """Most free cores of a node taking jobs (less the cores claimed there in this pass if ``reserve``)."""
        fr = self.free()
        return float(np.where(fr >= 0, fr - self.claimed if self.reserve else fr, -INF).max())

    def _node_ends(self, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Planned ends of node ``m``'s running jobs, sorted (stable), their cores, and the cores cumulated."""
        cached = self._ends[m]
        if cached is None:
            js = list(self.running[m])
            ends = np.fromiter((self.running[m][j] for j in js), float, len(js))
            order = np.argsort(ends, kind="stable")
            cores = self.cores[js][order].astype(np.float64)
            cached = self._ends[m] = (ends[order], cores, np.cumsum(cores))
        return cached

    def ends_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_node_ends` of every node as padded rows ``(ends, cores, count)`` (node ``m``'s in row
        ``m``, first ``count[m]`` entries): built at the first call, then kept up to date at every start
        and end (a start goes after the equal ends, as the stable sort of :meth:`_node_ends`)."""
        if not self._rows:
            self._rows = True
            for m in range(self.M):
                js = list(self.running[m])
                ends = np.fromiter((self.running[m][j] for j in js), float, len(js))
                order = np.argsort(ends, kind="stable")
                k = ends.size
                while k > self._e2.shape[1]:
                    self._grow_rows()
                self._e2[m, :k], self._c2[m, :k] = ends[order], self.cores[js][order]
                self._j2[m, :k], self._n2[m] = np.asarray(js, np.int64)[order], k
        return self._e2, self._c2, self._n2

    def _grow_rows(self) -> None:
        self._e2 = np.concatenate((self._e2, np.zeros_like(self._e2)), axis=1)
        self._c2 = np.concatenate((self._c2, np.zeros_like(self._c2)), axis=1)
        self._j2 = np.concatenate((self._j2, np.zeros_like(self._j2)), axis=1)

    def _row_insert(self, m: int, j: int, end: float) -> None:
        k = int(self._n2[m])
        if k == self._e2.shape[1]:
            self._grow_rows()
        e2, c2, j2 = self._e2[m], self._c2[m], self._j2[m]
        i = int(np.searchsorted(e2[:k], end, side="right"))
        e2[i + 1 : k + 1], c2[i + 1 : k + 1], j2[i + 1 : k + 1] = e2[i:k], c2[i:k], j2[i:k]
        e2[i], c2[i], j2[i] = end, self.cores[j], j
        self._n2[m] = k + 1

    def _row_delete(self, m: int, j: int) -> None:
        k = int(self._n2[m])
        e2, c2, j2 = self._e2[m], self._c2[m], self._j2[m]
        i = int(np.flatnonzero(j2[:k] == j)[0])
        e2[i : k - 1], c2[i : k - 1], j2[i : k - 1] = e2[i + 1 : k], c2[i + 1 : k], j2[i + 1 : k]
        self._n2[m] = k - 1

    def min_future_cap(self, m: int, t: float, d: float) -> float:
        """Smallest capacity node ``m`` will have over ``[t, t + d)`` (looks into the trace: oracle only)."""
        lo, hi = self.fut_ptr[m], self.fut_ptr[m + 1]
        ts = self.fut_t[lo:hi]
        a, b = np.searchsorted(ts, [t, t + d], side="left")
        fut = self.fut_c[lo:hi][a:b]
        return min(self.cap[m], float(fut.min())) if fut.size else self.cap[m]

    # ------------------------------------------------------------------ queue
    def _enqueue(self, j: int) -> None:
        if self._qtail == self._qsize:
            live = self._qjob[: self._qtail]
            live = live[self._qtree[self._qsize : self._qsize + self._qtail] < INF]
            size = self._qsize
            while size < 2 * live.size + 1024:
                size *= 2
            self._qsize = size
            self._qtree = np.full(2 * size, INF)
            self._qjob = np.full(size, -1, np.int64)
            self._qjob[: live.size] = live
            self._qtree[size : size + live.size] = self.cores[live]
            self.qpos[live] = np.arange(live.size)
            _build_min(self._qtree, size)
            self._qtail = live.size
        p = self._qtail
        self._qjob[p] = j
        self.qpos[j] = p
        _qt_set(self._qtree, self._qsize, p, float(self.cores[j]))
        if self.dtree is not None:
            _qt_set(self.dtree, self.dsize, int(self.drank[j]), float(self.cores[j]))
        self._qtail += 1
        self._qlen += 1

    def _dequeue(self, p: int) -> None:
        """Take the job at queue position ``p`` off the queue (it starts)."""
        j = int(self._qjob[p])
        _qt_set(self._qtree, self._qsize, p, INF)
        self.qpos[j] = -1
        if self.dtree is not None:
            _qt_set(self.dtree, self.dsize, int(self.drank[j]), INF)
        self._qlen -= 1

    # ------------------------------------------------------------------ state changes
    def _start(self, j: int, m: int, t: float) -> None:
        self.loop.start(j, m, t)
        self.running[m][j] = t + self.duration[j]
        self._ends[m] = None
        if self._rows:
            self._row_insert(m, j, t + self.duration[j])
        self.used[m] += self.cores[j]

    def _detach(self, j: int) -> int:
        """Take job ``j`` off its node (exact reset to 0 when the node empties); return the node."""
        m = int(self.loop.machine[j])
        del self.running[m][j]
        self._ends[m] = None
        if self._rows:
            self._row_delete(m, j)
        self.used[m] -= self.cores[j]
        if not self.running[m]:
            self.used[m] = 0.0
        return m

    def _kill(self, j: int, t: float) -> None:
        self._detach(j)
        self.loop.kill(j, t)

    def _deallocate_if_idle(self, m: int) -> None:
        if self.decom[m] and not self.running[m]:
            self.decom[m] = False
            self.allocated[m] = False
            self._cap_dirty = True

    def _allocate(self, m: int, t: float) -> None:
        self.allocated[m] = True
        self.last_change[m] = t
        self.last_dir[m] = GROW
        self.acquisitions += 1
        self._cap_dirty = True

    # ------------------------------------------------------------------ hooks
    def on_arrival(self, loop: Loop, j: int, t: float) -> None:
        self._enqueue(j)

    def on_end(self, loop: Loop, j: int, t: float) -> None:
        m = int(loop.machine[j])
        self._detach(j)
        loop.machine[j] = -1
        self._deallocate_if_idle(m)

    def on_start(self, loop: Loop, j: int, t: float, tag: int) -> None:  # no planned starts here
        raise AssertionError("the harvest-VM loop plans no starts")

    def on_capacity(self, loop: Loop, t: float, lo: int, hi: int) -> None:
        tr = self.trace
        killed: list[int] = []
        pick = min if self.cfg.kill_order == "oldest" else max
        self._cap_dirty = True
        for pi in range(lo, hi):
            m, newc = int(tr.machine[pi]), float(tr.cores[pi])
            old = self.cap[m]
            if newc == old:
                continue
            self.cap[m] = newc
            if not self.allocated[m]:
                continue
            d = SHRINK if newc < old else GROW
            if t > self.last_change[m]:  # not the node's appearance at its allocation instant
                self.history.add(t, t - self.last_change[m], int(self.last_dir[m]), d)
            self.last_change[m], self.last_dir[m] = t, d
            while self.running[m] and (self.used[m] > newc + 1e-9 or newc <= 0.0):
                victim = pick(self.running[m], key=lambda j: (self.start[j], self.row[j]))
                self._kill(victim, t)
                killed.append(victim)
            self._deallocate_if_idle(m)
        if killed:
            killed.sort(key=lambda j: (self.start[j], self.row[j]))
            for j in killed:
                self._enqueue(j)

    def on_tick(self, loop: Loop, t: float) -> None:
        """A heartbeat (with ``heartbeat_s``: the pass runs at this instant's end; the Acquirer at the first
        heartbeat at or after its period) or, without, the Acquirer's period."""
        if self.heartbeat_s is None:
            self._acquire(t)
            return
        self._beat = True
        if t >= self._next_acq:
            self._next_acq += self.cfg.acquirer_period_s
            self._acquire(t)

    def _acquire(self, t: float) -> None:
        """Algorithm 2: request replacements first, then gracefully decommission the most recently changed."""
        live = np.flatnonzero(self.allocated & ~self.decom)
        k = int(np.floor(self.cfg.acquirer_fraction * live.size))
        if k == 0:
            return
        since = t - self.last_change[live]
        victims = live[np.lexsort((-live, since))][:k]  # most recently changed first; ties: higher index
        cand = np.flatnonzero(~self.allocated & (self.cap > 0))
        new = self.rng.choice(cand, min(k, cand.size), replace=False) if cand.size else []
        for m in np.sort(np.asarray(new, dtype=np.int64)):
            self._allocate(int(m), t)
        for m in victims:
            self.decom[m] = True
            self._cap_dirty = True
            self._deallocate_if_idle(int(m))

    def _placement_scan(self, t: float, p: int, top: float) -> tuple[int, int]:
        """The pass's search in Python: from queue position ``p`` on (jobs needing ≤ ``top`` cores), the first
        job the placement gives a node, as ``(position, node)``, or ``(-1, -1)``. A queue-aware placement is
        asked about every queued job (a waiting job's claim matters to the jobs behind it) as long as some
        job behind could still start: one needing at most :meth:`top_free` cores."""
        if self.queue_aware and not self.full_pass:
            while _qt_first_le(self._qtree, self._qsize, p, self.top_free()) >= 0:
                p = _qt_first_le(self._qtree, self._qsize, p, 1e300)
                m = self.placement(self, int(self._qjob[p]), t)
                if m >= 0:
                    return p, m
                p += 1
            return -1, -1
        p = _qt_first_le(self._qtree, self._qsize, p, top)
        while p >= 0:
            m = self.placement(self, int(self._qjob[p]), t)
            if m >= 0:
                return p, m
            p = _qt_first_le(self._qtree, self._qsize, p + 1, top)
        return -1, -1

    def on_instant_end(self, loop: Loop, t: float) -> None:
        """One pass over the queue front to back (with ``heartbeat_s``: only at a heartbeat instant); then the
        capacity step and the invariant check."""
        beat = self.heartbeat_s is None or self._beat
        self._beat = False
        if self._qlen and beat:
            from sim.harvest.passes import max_free  # free().max(), compiled

            self.pass_no += 1
            self._reset_claims()
            top = 1e300 if self.full_pass else max_free(self.cap, self.used, self.accepting())
            scan = self.scan if self.scan is not None and not self.full_pass else Cluster._placement_scan
            # no queued job fits a node now: no placement would be asked (every scan returns (-1, -1))
            p, m = scan(self, t, 0, top) if self._qtree[1] <= top else (-1, -1)
            while p >= 0:
                self._start(int(self._qjob[p]), m, t)
                self._dequeue(p)
                if not self.full_pass:
                    top = max_free(self.cap, self.used, self.accepting())
                p, m = scan(self, t, p + 1, top)
        if self._cap_dirty:
            loop.record_capacity(t, float(self.cap[self.allocated].sum()))
            self._accept = self.allocated & ~self.decom & (self.cap > 0)
            self._cap_dirty = False
        if loop.check:
            over = (self.used > self.cap + 1e-9) | ((self.used > 0) & ~self.allocated)
            loop.violations += int(over.sum())

    def run(self) -> EngineOutput:
        return self.loop.run(self)


# ---------------------------------------------------------------------- placements
def place_first_fit(cl: Cluster, j: int, t: float) -> int:
    """Lowest-index allocated node with room now."""
    ok = np.flatnonzero(cl.free() >= cl.cores[j])
    return int(ok[0]) if ok.size else -1


def place_oracle(cl: Cluster, j: int, t: float) -> int:
    """Lowest-index node with room now whose capacity (read from the future trace) stays ≥ its current use
    plus the job's cores until the job would end. Such a job is never killed, whatever the kill order: at any
    time the node's use is at most what its latest-started running job checked against (every job running
    then was running when that one started), so its capacity never falls below its use."""
    c, d = cl.cores[j], cl.duration[j]
    for m in np.flatnonzero(cl.free() >= c):
        if cl.min_future_cap(int(m), t, d) >= cl.used[m] + c - 1e-9:
            return int(m)
    return -1


def scan_oracle(cl: Cluster, t: float, p: int, top: float) -> tuple[int, int]:
    """The compiled pass of :func:`place_oracle` (``Cluster``'s ``scan``)."""
    from sim.harvest.passes import oracle_scan

    return oracle_scan(
        cl._qtree,
        cl._qsize,
        p,
        top,
        cl._qjob,
        cl.cores,
        cl.duration,
        cl.free(),
        cl.used,
        cl.cap,
        cl.fut_ptr,
        cl.fut_t,
        cl.fut_c,
        t,
    )


def run_cluster(
    problem: Problem,
    placement: Callable[[Cluster, int, float], int],
    cfg: ClusterConfig,
    seed: int,
    history_window_s: float = 86400.0,
) -> RunArtifacts:
    """Run the harvest-VM loop. Raises ValueError on memory platforms or ``nodes`` above the pool size."""
    if problem.record_ts:
        raise ValueError("time series recording is not available in the harvest-VM loop")
    return RunArtifacts(Cluster(problem, cfg, seed, placement, history_window_s).run(), None)
