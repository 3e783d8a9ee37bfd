"""``slacksched-heartbeat``: paper 002's SlackSched as implemented in YARN, Algorithm 3 (Appendix A).

Appendix A, "SlackSched for heartbeat-based scheduling": "for the node that sent the heartbeat, if the task
meets a threshold completion probability, we directly schedule the task on that node, otherwise, we look at
the expected completion times offered by all the other nodes and wait for more heartbeats if there are
better nodes." Algorithm 3 ``ScheduleOnNodeUpdate(T, m)``: among the queued tasks that fit node ``m`` now,
those whose eq. 1 completion probability on ``m`` exceeds ``threshold``; the most likely one starts on ``m``;
if none, ``MatchMaker(shortestTask(T), all nodes)`` (Algorithm 1: the eq. 2 argmin node, the task starts if
that node has room now, else it waits).

Modelling choices (the paper leaves them open):

* **Heartbeats** (``heartbeat``). ``interval`` (default): §3.3 runs SlackSched inside YARN, whose
  scheduling is "triggered on heartbeats" (Appendix A): every ``heartbeat_s`` seconds (YARN's default
  NodeManager interval, 1 s) every node taking jobs heartbeats once, in index order (a fixed phase per
  node; the trace's nodes are exchangeable), and only then is anything placed: an arrival or a freed node
  waits for the next heartbeat, and eq. 1's ``e`` grows between heartbeats, so a task declined at one may
  pass the threshold at a later one with no event between. The Acquirer runs at the first heartbeat at or
  after each of its periods. ``event`` (the former reading): every node heartbeats once at every instant
  of the event loop (an arrival, an end, a capacity change) and never between. In both a node keeps
  taking tasks while the rule places one (YARN's multiple assignments per heartbeat).
* **The tasks ``T``** (``scope``). ``job`` (default): §3.1, "SlackSched only affects the third decision [the
  placement] and uses the default orchestrator mechanisms for the first two" (the order of jobs and of
  tasks within a job), so a heartbeat serves jobs first-come first-served: ``T`` is the queued tasks of
  one job (tasks submitted at the same instant form a job; a killed task stays in its job), starting with
  the first job that has a task fitting the node; ``queue``: ``T`` is every queued task, the pseudocode
  read literally (the rule then picks tasks across jobs, shortest first). Both are run and reported.
* **Moving on** (``apps``, scope ``job``). ``move-on`` (default): when a job takes nothing on the
  heartbeat (no task passes the threshold and MatchMaker starts none), the node is offered to the next job
  with a fitting task, in queue order, as YARN's CapacityScheduler offers a node to each application of
  its queue in turn; ``first`` (the former reading): the heartbeat ends with the first such job.
* **The most likely task** is the shortest task of ``T`` that fits: eq. 1 falls with the duration ``d`` on a
  given node, so the highest probability is the shortest feasible task's (ties: earlier input row).
* **MatchMaker** runs for the shortest task of ``T`` and claims nothing (one task per job waits at a time;
  it is asked again at the next start or pass).
* **threshold** (``--set threshold=…``): the paper gives no value. The default 0.7 is the only confidence
  level the paper names (§4.2.1, Fig. 13: "to obtain 70% confidence in completion without preemption");
  a sensitivity sweep over it is reported with the seed-002 study, never tuned to the paper's figures.

Everything else as :mod:`sim.policies.slacksched` (eq. 1/2, rolling window, ``min_samples``: with fewer
samples ``P_c = 1``, so every fitting task passes), the loop options ``nodes``/``acquirer``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.bounds import Bound, bounded
from sim.engine import _qt_first_le
from sim.harvest.cluster import GROW, Cluster
from sim.policies import Dispatched, register
from sim.policies.slacksched import SlackSchedParams, completion_probability, matchmaker
from sim.problem import Problem

#: YARN's NodeManager heartbeat interval (``yarn.resourcemanager.nodemanagers.heartbeat-interval-ms``,
#: 1000 ms by default in yarn-default.xml)
YARN_HEARTBEAT_S = 1.0


@bounded(
    threshold=Bound(0.0, 1.0, "completion probability"),
    heartbeat_s=Bound(0.1, 3600.0, "seconds", step_s=1.0, max_steps=3e6, what="heartbeats"),
)
@dataclass(frozen=True)
class HeartbeatParams(SlackSchedParams):
    threshold: float = 0.7
    scope: str = "job"
    heartbeat: str = "interval"
    heartbeat_s: float = YARN_HEARTBEAT_S
    apps: str = "move-on"

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], not {self.threshold}")
        if self.scope not in ("job", "queue"):
            raise ValueError(f"scope must be 'job' or 'queue', not {self.scope!r}")
        if self.heartbeat not in ("interval", "event"):
            raise ValueError(f"heartbeat must be 'interval' or 'event', not {self.heartbeat!r}")
        if not (0.1 <= self.heartbeat_s <= 3600.0):
            raise ValueError(f"heartbeat_s must be in [0.1, 3600] s, not {self.heartbeat_s}")
        if self.apps not in ("move-on", "first"):
            raise ValueError(f"apps must be 'move-on' or 'first', not {self.apps!r}")


class Heartbeat(Dispatched):
    name = "slacksched-heartbeat"
    description = "SlackSched as YARN runs it (Algorithm 3): the heartbeating node if the task's completion probability clears the threshold"
    label = "SlackSched (Algorithm 3)"
    Params = HeartbeatParams
    warm = True  # its compiled pass (sim.harvest.passes.heartbeat_scan) needs a modelled history
    warm_capacity = "harvest"
    compiled_modules = ("sim.harvest.passes",)

    def python_scan(self, params: HeartbeatParams):
        """Algorithm 3's pass in Python (the reference the compiled pass is tested against): returns the next
        start as ``(queue position, node)`` or ``(-1, -1)``; the heartbeat cursor lives across the calls of
        one pass."""
        state = {"pass": -1, "node": 0}

        def scan(cl: Cluster, t: float, p: int, top: float) -> tuple[int, int]:
            if state["pass"] != cl.pass_no:
                state["pass"], state["node"] = cl.pass_no, 0
            assert cl.dtree is not None
            xs, _ = cl.history.sorted_samples(t)
            modelled = xs.size >= params.min_samples and xs.size > 0
            free = cl.free()
            waits: set[int] = set()  # jobs whose MatchMaker said "wait" in this call (nothing changes in it)
            m = state["node"]
            while m < cl.M:
                if free[m] >= 0 and cl.dtree[1] <= free[m]:
                    r = _qt_first_le(cl.dtree, cl.dsize, 0, float(free[m]))
                    while r >= 0:
                        j = int(cl.drank_job[r])
                        pc = 1.0
                        if modelled:
                            ps = cl.history.p_shrink(cl.last_dir[m : m + 1])
                            e = np.array([t - cl.last_change[m]])
                            pc = float(completion_probability(xs, ps, e, float(cl.duration[j]))[0])
                        if pc > params.threshold:
                            state["node"] = m
                            return int(cl.qpos[j]), m
                        g = int(cl.dgroup[r])
                        if g not in waits:
                            s = int(cl.drank_job[_qt_first_le(cl.dtree, cl.dsize, g, 1e300)])
                            k, a, _ = matchmaker(cl, s, t, modelled)
                            if k >= 0 and a == 0.0:
                                state["node"] = m
                                return int(cl.qpos[s]), k
                            waits.add(g)
                        if params.apps == "first":
                            break
                        r = _qt_first_le(cl.dtree, cl.dsize, int(cl.dnext[r]), float(free[m]))
                m += 1
            state["node"] = m
            return -1, -1

        return scan

    def scan(self, params: HeartbeatParams):
        """The compiled pass (:func:`sim.harvest.passes.heartbeat_scan`), the same choices as :meth:`python_scan`."""
        state = np.array([-1, 0, 0], np.int64)  # pass, heartbeat cursor, call stamp
        cache: dict = {"pass": -1, "xs": None, "seen": None}

        def scan(cl: Cluster, t: float, p: int, top: float) -> tuple[int, int]:
            from sim.harvest.passes import heartbeat_scan, search_table

            assert cl.dtree is not None
            if cl.dtree[1] > top:  # no node has room for any queued task: no heartbeat places one
                return -1, -1
            if cache["pass"] != cl.pass_no:  # the model changes only between passes (capacity, Acquirer)
                xs, cum = cl.history.sorted_samples(t)
                ps2 = cl.history.p_shrink_table()
                if xs is not cache["xs"]:  # the samples changed: index them again
                    cache["table"] = search_table(xs)
                cache.update(
                    {"pass": cl.pass_no, "xs": xs, "cum": cum, "ps2": ps2, "ps_grow": float(ps2[GROW])}
                )
            xs, cum = cache["xs"], cache["cum"]
            ends, cores, count = cl.ends_rows()
            if cache["seen"] is None:
                cache["seen"] = np.zeros(max(cl.n, 1), np.int64)
            q, m = heartbeat_scan(
                cl.dtree,
                cl.dsize,
                cl.drank_job,
                cl.dgroup,
                cl.dnext,
                cl.qpos,
                cl.cores,
                cl.duration,
                cl.cap,
                cl.used,
                cl.accepting(),
                cl.last_change,
                cl.last_dir,
                cache["ps2"],
                cache["ps_grow"],
                xs,
                cum,
                *cache["table"],
                xs.size >= params.min_samples and xs.size > 0,
                ends,
                cores,
                count,
                cl.claimed,
                cl.claim_end,
                cl.claim_cores,
                cl.nclaim,
                params.threshold,
                params.apps == "move-on",
                cache["seen"],
                state,
                cl.pass_no,
                t,
            )
            return int(q), int(m)

        return scan

    def cluster(self, problem: Problem, params: HeartbeatParams, seed: int, compiled: bool = True) -> Cluster:
        """The harvest-VM loop running Algorithm 3, whole compiled (:func:`sim.harvest.loop.run_heartbeat`);
        ``compiled=False``: the Python pass in the Python loop (the reference)."""

        def never(cl: Cluster, j: int, t: float) -> int:  # every decision is the pass's
            raise AssertionError("Algorithm 3 decides in its pass")

        cl = Cluster(
            problem,
            params.cluster(),
            seed,
            never,
            params.window_h * 3600.0,
            scan=self.scan(params) if compiled else self.python_scan(params),
            duration_order=params.scope,
            heartbeat_s=params.heartbeat_s if params.heartbeat == "interval" else None,
        )
        if compiled:  # the whole loop compiled with the same pass (sim.harvest.loop: the same results)

            def compiled_run():
                from sim.harvest.loop import run_heartbeat

                return run_heartbeat(cl, params.min_samples, params.threshold, params.apps == "move-on")

            cl.compiled_run = compiled_run
        return cl

    def declare(self, problem: Problem, params: HeartbeatParams, seed: int) -> Cluster:
        return self.cluster(problem, params, seed)


register(Heartbeat())
