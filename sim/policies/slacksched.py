"""Paper 002's SlackSched scheduler: ``slacksched`` (with delayed scheduling) and ``slacksched-nodelay``.

Runs in the harvest-VM loop (:mod:`sim.harvest.cluster`) on per-machine capacity; a machines-alive trace is viewed
per machine (machine i has its cores while i < alive, so a LIFO turn-off is a shrink to 0).

* **Completion probability** (eq. 1): ``P_c(x, e, d) = 1 − P_s(x) · (1 − S(e + d) / S(e))`` where ``S`` is
  the empirical survival function of the inter-change times observed on allocated nodes in the last
  ``window_h`` hours (rolling), ``e`` the time since the node's last change (or allocation), ``d`` the job's
  duration and ``P_s(x)`` the bigram probability that the next change is a shrink given the last change's
  direction (all history, Laplace prior). Choices: with fewer than ``min_samples`` inter-change times in
  the window there is no model yet and ``P_c = 1``; a node older than every sample (``S(e) = 0``) is
  treated as one that will not change during the job.
* **Worst-case expected completion time** (eq. 2): ``E = a + p·d + (1 − p)·(w + E₀)``, with ``a`` the time
  until the node has the job's cores if its running jobs end as planned and its size holds (``inf`` if the
  node is smaller than the job), ``e' = e + a``, ``p = P_c(x, e', d)``, ``w = E[X − e' | e' < X ≤ e' + d]``
  (empirical; ``d/2`` if no sample falls there) and ``E₀ = E_wc(g, 0, 0, d)``. Eq. 2 defines ``E₀``
  recursively (a restart lands on a fresh node); we use the recursion's fixed point
  ``E₀ = d + w₀ (1 − p₀) / p₀`` (``p₀`` floored at 1e-9 so costs stay finite and comparable).
* ``slacksched``: the job goes to the node with the smallest ``E`` (ties: lower index) if that node has room
  now; otherwise it waits and the choice is recomputed at the next instant (Algorithm 1; non-work-
  conserving). ``slacksched-nodelay``: among nodes with room now, the highest ``P_c`` (ties: lower index).
* **Queue-aware ``a``**: the schedule pass visits the queue front to back; a job that waits for
  node ``m`` *claims* its cores there until its planned end (``t + a + d``), so every job behind it in the
  same pass computes ``a`` on ``m`` with those cores taken (running jobs' ends and the claims merged by
  end). Without it a burst's tasks all computed the same small ``a`` for the same few stable nodes and all
  waited for them while other nodes idled. Claims last one pass (the next instant recomputes them).
  ``reserve`` (default false) also makes claimed cores unavailable to jobs that would fit the free cores
  now (YARN-style node reservation); by default a job fitting the free cores now has ``a = 0``, as
  Algorithm 1's ``feasible(t, n*)`` (resources free now).
* Options of the loop: ``nodes`` (cluster size out of the trace's pool; 0 = all) and ``acquirer``
  (Algorithm 2 every ``acquirer_period_h`` hours, releasing ``acquirer_fraction`` of the nodes).
Algorithm 3 (YARN's heartbeat variant) is :mod:`sim.policies.slacksched_heartbeat`. Not modelled: runtime
misestimates (durations are exact).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.bounds import Bound, bounded
from sim.harvest.cluster import GROW, INF, Cluster, ClusterOptions
from sim.policies import Dispatched, register
from sim.problem import Problem


@bounded(window_h=Bound(0.0, 1e6, "hours", lo_open=True), min_samples=Bound(0, 1e9, "samples"))
@dataclass(frozen=True)
class SlackSchedParams(ClusterOptions):
    window_h: float = 24.0
    min_samples: int = 30
    reserve: bool = False


def _survival(xs: np.ndarray, t: np.ndarray) -> np.ndarray:
    return (xs.size - np.searchsorted(xs, t, side="right")) / xs.size


def completion_probability(xs: np.ndarray, p_shrink: np.ndarray, e: np.ndarray, d: float) -> np.ndarray:
    """Eq. 1 for nodes with elapsed times ``e`` given sorted inter-change samples ``xs``."""
    se, sed = _survival(xs, e), _survival(xs, e + d)
    change = np.where(se > 0, 1.0 - sed / np.where(se > 0, se, 1.0), 0.0)
    return 1.0 - p_shrink * change


def expected_waste(xs: np.ndarray, cum: np.ndarray, e: np.ndarray, d: float) -> np.ndarray:
    """``E[X − e | e < X ≤ e + d]`` from sorted samples and their prefix sums (``d/2`` where none)."""
    lo = np.searchsorted(xs, e, side="right")
    hi = np.searchsorted(xs, e + d, side="right")
    cnt = hi - lo
    return np.where(cnt > 0, (cum[hi] - cum[lo]) / np.maximum(cnt, 1) - e, d / 2.0)


def expected_completion(
    xs: np.ndarray, cum: np.ndarray, ps: np.ndarray, ps_grow: float, a: np.ndarray, e: np.ndarray, d: float
) -> np.ndarray:
    """Eq. 2 per node: waiting ``a``, elapsed ``e``, shrink probabilities ``ps``; ``inf`` where ``a`` is."""
    fin = np.isfinite(a)
    e2 = e + np.where(fin, a, 0.0)
    p = completion_probability(xs, ps, e2, d)
    w = expected_waste(xs, cum, e2, d)
    p0 = float(completion_probability(xs, np.array([ps_grow]), np.array([0.0]), d)[0])
    w0 = float(expected_waste(xs, cum, np.array([0.0]), d)[0])
    e0 = d + w0 * (1.0 - p0) / max(p0, 1e-9)  # finite even if a fresh node never completes the job
    return np.where(fin, np.where(fin, a, 0.0) + p * d + (1.0 - p) * (w + e0), INF)


def matchmaker(cl: Cluster, j: int, t: float, modelled: bool) -> tuple[int, float, float]:
    """Algorithm 1's choice for job ``j``: the node taking jobs with the smallest eq. 2 cost (first on ties),
    its wait ``a`` (0: room now, less the cores claimed in this pass if ``cl.reserve``) and cost; ``(-1, inf, inf)`` if no
    node takes jobs. ``modelled``: enough inter-change samples for eq. 1 (else the cost is ``a + d``)."""
    c, d = float(cl.cores[j]), float(cl.duration[j])
    free = cl.free()
    nodes = np.flatnonzero(free >= 0)
    if nodes.size == 0:
        return -1, INF, INF
    xs, cum = cl.history.sorted_samples(t)
    eff = free[nodes] - cl.claimed[nodes] if cl.reserve else free[nodes]
    a = np.where(eff >= c, 0.0, INF)
    for k in np.flatnonzero((eff < c) & (cl.cap[nodes] >= c)):
        a[k] = cl.next_avail(int(nodes[k]), c, t)
    if not modelled:
        cost = np.where(np.isfinite(a), a + d, INF)
    else:
        ps = cl.history.p_shrink(cl.last_dir[nodes])
        ps_grow = float(cl.history.p_shrink(np.array([GROW]))[0])
        cost = expected_completion(xs, cum, ps, ps_grow, a, t - cl.last_change[nodes], d)
    k = int(np.argmin(cost))
    return int(nodes[k]), float(a[k]), float(cost[k])


#: queued jobs from which the fast pass pays for its per-call set-up (sorting and merging the nodes' rows);
#: below it the plain pass runs (the two make the same choices, so the switch changes no result)
FAST_MIN_QUEUE = 16


class SlackSched(Dispatched):
    Params = SlackSchedParams

    warm = True  # its compiled loop (sim.harvest.loop) and passes (sim.harvest.passes)
    warm_capacity = "harvest"

    def __init__(self, name: str, delay: bool) -> None:
        self.name, self.delay = name, delay
        # its warm-up compiles the harvest loop (harvest_run: one signature for every harvest policy) and,
        # on a modelled history, the schedule passes
        self.compiled_modules = ("sim.harvest.passes",) if delay else ("sim.harvest.loop",)
        if delay:
            self.description = (
                "SlackSched: each task to the node of least worst-case expected completion time (eq. 2), "
                "waiting while that node has no room"
            )
            self.label = "SlackSched"
        else:
            self.description = "SlackSched without waiting: the least-cost node among those with room now"
            self.label = "SlackSched-NoDelay"

    def placement(self, params: SlackSchedParams):
        def place(cl: Cluster, j: int, t: float) -> int:
            c, d = float(cl.cores[j]), float(cl.duration[j])
            free = cl.free()
            nodes = np.flatnonzero(free >= 0)
            if nodes.size == 0 or (not self.delay and free[nodes].max() < c):
                return -1  # no node could take it now, whatever the model says
            xs, cum = cl.history.sorted_samples(t)
            modelled = xs.size >= params.min_samples
            if not self.delay:
                if not modelled:
                    return int(nodes[np.argmax(free[nodes] >= c)])
                ps = cl.history.p_shrink(cl.last_dir)
                from sim.harvest.passes import most_likely_to_complete

                return int(most_likely_to_complete(free, c, d, t - cl.last_change, ps, xs, cum))
            k, a, cost = matchmaker(cl, j, t, modelled)
            if k >= 0 and a == 0.0:
                return k
            if k >= 0 and np.isfinite(cost):  # waits for that node: claims its cores there
                cl.claim(k, c, t + a + d)
            return -1

        return place

    def scan(self, params: SlackSchedParams, fast: bool = True):
        """The compiled pass: the waiting variant's :func:`sim.harvest.passes.cost_scan_fast` from ``FAST_MIN_QUEUE``
        queued jobs (with fewer, ``reserve`` or ``fast=False``, :func:`sim.harvest.passes.cost_scan`: the same
        choices); NoDelay's :func:`sim.harvest.passes.nodelay_scan` (the choices of its placement)."""
        cache: dict = {"pass": -1, "xs": None}
        if not self.delay:

            def scan_nodelay(cl: Cluster, t: float, p: int, top: float) -> tuple[int, int]:
                from sim.harvest.passes import nodelay_scan

                if cl._qtree[1] > top:  # no queued job fits any node now
                    return -1, -1
                if cache["pass"] != cl.pass_no:  # the model changes only between passes
                    xs, cum = cl.history.sorted_samples(t)
                    if xs is not cache["xs"]:  # a new change was recorded (or the window moved)
                        cache.update({"xs": xs, "cum": cum, "ps2": cl.history.p_shrink_table()})
                    cache["pass"] = cl.pass_no
                xs = cache["xs"]
                return nodelay_scan(
                    cl._qtree, cl._qsize, p, top, cl._qjob, cl.cores, cl.duration, cl.cap, cl.used,
                    cl.accepting(), cl.last_change, cl.last_dir, cache["ps2"], xs, cache["cum"],
                    xs.size >= params.min_samples, t,
                )  # fmt: skip

            return scan_nodelay

        def scan(cl: Cluster, t: float, p: int, top: float) -> tuple[int, int]:
            from sim.harvest.passes import cost_scan, cost_scan_fast, search_table

            if cl._qtree[1] > top:  # no queued job fits any node now: none starts (claims change nothing)
                return -1, -1
            if cache["pass"] != cl.pass_no:  # the model changes only between passes (capacity, Acquirer)
                xs, cum = cl.history.sorted_samples(t)
                ps2 = cl.history.p_shrink_table()
                if fast and xs is not cache["xs"]:  # the samples changed: index them again
                    cache["table"] = search_table(xs)
                cache.update(
                    {"pass": cl.pass_no, "xs": xs, "cum": cum, "ps2": ps2, "ps_grow": float(ps2[GROW])}
                )
            xs, cum, ps_grow = cache["xs"], cache["cum"], cache["ps_grow"]
            ends, cores, count = cl.ends_rows()
            modelled = xs.size >= params.min_samples and xs.size > 0
            if fast and not cl.reserve and cl._qlen >= FAST_MIN_QUEUE:
                start, x0, inv_h = cache["table"]
                while True:
                    p, m = cost_scan_fast(
                        cl._qtree, cl._qsize, p, cl._qjob, cl.cores, cl.duration, cl.cap, cl.used,
                        cl.accepting(), cl.last_change, cl.last_dir, cache["ps2"], ps_grow, xs, cum, start,
                        x0, inv_h, modelled, ends, cores, count, cl.claimed, cl.claim_end, cl.claim_cores,
                        cl.nclaim, t,
                    )  # fmt: skip
                    if m != -2:
                        cl._claims = cl._claims or bool(cl.nclaim.any())
                        return p, m
                    cl.grow_claims()
            while True:
                p, m = cost_scan(
                    cl._qtree,
                    cl._qsize,
                    p,
                    cl._qjob,
                    cl.cores,
                    cl.duration,
                    cl.cap,
                    cl.used,
                    cl.accepting(),
                    cl.last_change,
                    cl.last_dir,
                    cache["ps2"],
                    ps_grow,
                    xs,
                    cum,
                    modelled,
                    ends,
                    cores,
                    count,
                    cl.claimed,
                    cl.claim_end,
                    cl.claim_cores,
                    cl.nclaim,
                    cl.reserve,
                    t,
                )
                if m != -2:
                    cl._claims = cl._claims or bool(cl.nclaim.any())
                    return p, m
                cl.grow_claims()  # a node's claim row was full: the job at p is decided again

        return scan

    def declare(self, problem: Problem, params: SlackSchedParams, seed: int) -> Cluster:
        cl = self._cluster(problem, params, seed)
        if not self.delay:  # NoDelay's whole loop compiled (sim.harvest.loop: the same results)

            def compiled_run():
                from sim.harvest.loop import run_nodelay

                return run_nodelay(cl, params.min_samples)

            cl.compiled_run = compiled_run
        else:  # the waiting pass's whole loop compiled too (sim.harvest.loop, the same results)

            def compiled_run_waiting():
                from sim.harvest.loop import run_waiting

                return run_waiting(cl, params.min_samples, FAST_MIN_QUEUE)

            cl.compiled_run = compiled_run_waiting
        return cl

    def _cluster(self, problem: Problem, params: SlackSchedParams, seed: int) -> Cluster:
        return Cluster(
            problem,
            params.cluster(),
            seed,
            self.placement(params),
            params.window_h * 3600.0,
            scan=self.scan(params),
            queue_aware=self.delay,
            reserve=params.reserve,
        )


register(SlackSched("slacksched", delay=True))
register(SlackSched("slacksched-nodelay", delay=False))
