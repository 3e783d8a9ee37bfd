"""An independent, deliberately naive time-stepped simulator (integer times) used only by tests.

It re-implements the pinned semantics with plain lists and linear scans, sharing no code with the engine.
"""

from __future__ import annotations


def reference(jobs, cap_points, machines, cores, horizon, termination="lifo"):
    """jobs: list of (submit, duration, cores) with integer times. cap_points: dict time -> machines alive.

    Returns (per-job dicts, totals dict)."""
    n = len(jobs)
    st = [dict(first=-1, start=-1, end=-1, attempts=0, terms=0, state="waiting", m=-1) for _ in range(n)]
    alive = [False] * machines
    free = [cores] * machines
    queue: list[int] = []
    completed = wasted = 0.0
    available = 0.0
    n_term = 0
    order = sorted(range(n), key=lambda j: (jobs[j][0], j))
    for t in range(horizon):
        # 1. completions
        for j in range(n):
            if st[j]["state"] == "running" and st[j]["start"] + jobs[j][1] == t:
                st[j]["state"] = "done"
                st[j]["end"] = t
                free[st[j]["m"]] += jobs[j][2]
                completed += jobs[j][2] * jobs[j][1]
        # 2. capacity
        if t in cap_points:
            target = min(cap_points[t], machines)
            on = [m for m in range(machines) if alive[m]]
            if target > len(on):
                need = target - len(on)
                for m in range(machines):
                    if need and not alive[m]:
                        alive[m] = True
                        need -= 1
            elif target < len(on):

                def score(m, t=t):
                    js = [j for j in range(n) if st[j]["state"] == "running" and st[j]["m"] == m]
                    if termination == "lww":
                        return sum(jobs[j][2] * (t - st[j]["start"]) for j in js)
                    if termination == "lfd":
                        return max([(t - st[j]["start"]) / jobs[j][1] for j in js], default=0.0)
                    return 0.0

                ranked = sorted(sorted(on, reverse=True), key=score)  # ties: higher index first
                victims = ranked[: len(on) - target]
                killed = []
                for m in victims:
                    alive[m] = False
                    for j in range(n):
                        if st[j]["state"] == "running" and st[j]["m"] == m:
                            killed.append(j)
                killed.sort(key=lambda j: (st[j]["start"], j))
                for j in killed:
                    free[st[j]["m"]] += jobs[j][2]
                    wasted += jobs[j][2] * (t - st[j]["start"])
                    n_term += 1
                    st[j]["terms"] += 1
                    st[j]["state"] = "waiting"
                    st[j]["m"] = -1
                    queue.append(j)
        # 3. submissions
        for j in order:
            if jobs[j][0] == t:
                queue.append(j)
        # 4. pass
        rest = []
        for j in queue:
            placed = False
            for m in range(machines):
                if alive[m] and free[m] >= jobs[j][2]:
                    free[m] -= jobs[j][2]
                    st[j].update(state="running", start=t, m=m)
                    st[j]["attempts"] += 1
                    if st[j]["first"] < 0:
                        st[j]["first"] = t
                    placed = True
                    break
            if not placed:
                rest.append(j)
        queue = rest
        available += sum(alive) * cores
    inflight = sum(jobs[j][2] * (horizon - st[j]["start"]) for j in range(n) if st[j]["state"] == "running")
    return st, dict(
        completed=completed, wasted=wasted, inflight=inflight, available=available, terminations=n_term
    )


def reference_per_machine(jobs, events, machines, horizon):
    """Per-machine capacity: events maps time -> list of (machine, cores). A shrinking machine kills its
    jobs newest-start-first (ties: later input row) until they fit; killed jobs requeue earliest start
    first, then input row. Returns (per-job dicts, totals)."""
    n = len(jobs)
    st = [dict(first=-1, start=-1, end=-1, attempts=0, terms=0, state="waiting", m=-1) for _ in range(n)]
    cap = [0.0] * machines
    queue: list[int] = []
    completed = wasted = available = 0.0
    n_term = 0
    order = sorted(range(n), key=lambda j: (jobs[j][0], j))

    def used(m):
        return sum(jobs[j][2] for j in range(n) if st[j]["state"] == "running" and st[j]["m"] == m)

    for t in range(horizon):
        for j in range(n):
            if st[j]["state"] == "running" and st[j]["start"] + jobs[j][1] == t:
                st[j].update(state="done", end=t)
                completed += jobs[j][2] * jobs[j][1]
        killed = []
        for m, c in events.get(t, []):
            cap[m] = c
            while used(m) > cap[m] + 1e-9 or (cap[m] == 0 and used(m) > 0):
                on = [j for j in range(n) if st[j]["state"] == "running" and st[j]["m"] == m]
                j = max(on, key=lambda x: (st[x]["start"], x))
                st[j].update(state="waiting", m=-1)
                killed.append(j)
        killed.sort(key=lambda j: (st[j]["start"], j))
        for j in killed:
            wasted += jobs[j][2] * (t - st[j]["start"])
            n_term += 1
            st[j]["terms"] += 1
            queue.append(j)
        for j in order:
            if jobs[j][0] == t:
                queue.append(j)
        rest = []
        for j in queue:
            for m in range(machines):
                if cap[m] > 0 and cap[m] - used(m) >= jobs[j][2]:
                    st[j].update(state="running", start=t, m=m)
                    st[j]["attempts"] += 1
                    if st[j]["first"] < 0:
                        st[j]["first"] = t
                    break
            else:
                rest.append(j)
        queue = rest
        available += sum(cap)
    inflight = sum(jobs[j][2] * (horizon - st[j]["start"]) for j in range(n) if st[j]["state"] == "running")
    return st, dict(
        completed=completed, wasted=wasted, inflight=inflight, available=available, terminations=n_term
    )
