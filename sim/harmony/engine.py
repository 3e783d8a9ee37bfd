"""The task scheduler between control decisions (numba), shared by the baseline, CBP and CBS.

Semantics (pinned; the three schemes differ only where noted):

* Machines are on (active), draining or off. A control decision sets how many machines of each type are
  on. Turning on reactivates draining machines first, then powers on the lowest-index off machines (one
  power cycle each). Turning off picks the active machines with the fewest running tasks; an empty one is
  off at once, a loaded one drains (no new tasks; off when its last task ends) — tasks are never killed
  or migrated, so a decision that cannot be realized at once still costs its energy.
* Tasks wait in one FIFO queue per size class (§5.1), served in priority-group order (production, other,
  gratis). Only the head of a queue is tried ("Harmony will keep the task in the front of the scheduling
  queue until it finds a machine with sufficient resources", §7.3.1); a head that fits nowhere blocks its
  own class only.
* A task fits a machine if the machine is active and its requested cpu and memory fit the free capacity.
  **Baseline** (§9): first fit over active machines, most energy-efficient type first. **CBP** (§7.2):
  weighted round robin over machine types — the types with provisioned containers x^{mk} > 0 are tried in
  increasing order of (running class-k tasks on type m)/x^{mk}, then any other type — first fit within
  a type. **CBS** (§7.3): the task also needs a free container of its class on the machine ("each task is
  scheduled in the first available container such that scheduling the task on the machine does not cause
  machine capacity violation").
* Run-time labels (§5.1): a task starts in its short class; when it has run ``threshold_s`` it becomes
  long ("relabelled and assigned to the right task class"). Under CBS it then counts against a long
  container (containers are logical reservations, §4, so no task moves) and the class keeps its short
  containers for the next short tasks (the short class's M/G/N count, §5.2, is sized for a container held
  min(duration, threshold)): a free long container of its class on its own machine takes it and its short
  container is free; else (``relabel`` 1, "swap", the default) the short container it holds turns long and
  the first free long container of the class on another active machine turns short; only if there is none
  anywhere does its machine's long reservation grow by one and its short container become free. (Freeing
  the short container where the task runs, ``relabel`` 0, "free", promised a container on a machine the
  long task still fills, while the long containers the LP had placed for it idled elsewhere; before that
  the short container itself turned long and the class lost it until the next decision.)
* Event order at equal times: heap events (completions, relabels) before arrivals.

Energy integrals per type (machine-seconds on, resource-unit-seconds used) are accumulated exactly
between events.
"""

from __future__ import annotations

import numpy as np

from sim.engine._jit import cached_njit, compiled, stamp_loop_cache, uncounted

INF = np.inf
heap_push, heap_pop = compiled()["heap_push"], compiled()["heap_pop"]  # the compiled-loop kit's event heap
copy_head, copy_rows = compiled()["copy_head"], compiled()["copy_rows"]  # slice copies: sim.engine.kit
stamp_loop_cache(__file__, "harmony")  # this module's cache files go when it or an engine source changes


@uncounted
def _push(ht, hx, hn, t, c):
    """Push event ``(t, c)`` onto the kit's heap (:mod:`sim.engine.kit`) of ``hn[0]`` entries; the arrays are
    sized by the caller (one completion and one relabel a task at most)."""
    if hn[0] >= ht.shape[0]:
        raise RuntimeError("event heap full")
    hn[0] = heap_push(ht, hx, hn[0], t, c, 0, 0, 0)


@uncounted
def _fits(i, j, mode, cpu, mem, q, used, mcap, state, slots, occ):
    if state[i] != 1:
        return False
    if used[i, 0] + cpu[j] > mcap[i, 0] + 1e-9 or used[i, 1] + mem[j] > mcap[i, 1] + 1e-9:
        return False
    return not (mode == 2 and occ[i, 2 * q[j]] >= slots[i, 2 * q[j]])


@cached_njit
def _scan(
    j,
    mode,
    cpu,
    mem,
    q,
    used,
    mcap,
    state,
    slots,
    occ,
    act_idx,
    act_start,
    act_end,
    eff,
    xw,
    run_qm,
    bfree,
    fs,
    bsl,
):
    M = act_start.shape[0]
    order = np.empty(M, np.int64)
    if mode == 1:
        qq = q[j]
        ratio = np.empty(M)
        for m in range(M):
            ratio[m] = run_qm[qq, m] / xw[qq, m] if xw[qq, m] > 0 else INF
        k = 0
        for m in np.argsort(ratio, kind="mergesort"):
            if ratio[m] < INF:
                order[k] = m
                k += 1
        for m in eff:
            if not xw[qq, m] > 0:
                order[k] = m
                k += 1
    else:
        copy_head(order, eff, eff.size)
    for m in order:
        if mode == 2 and fs[m, 2 * q[j]] <= 0:  # no free container of the class on this type
            continue
        a = act_start[m]
        while a < act_end[m]:
            b = a >> 5
            if ((a & 31) == 0 or a == act_start[m]) and (
                bfree[b, 0] < cpu[j] - 1e-9
                or bfree[b, 1] < mem[j] - 1e-9
                or (mode == 2 and bsl[b, 2 * q[j]] <= 0)
            ):  # no machine of this block of 32 has room (or, CBS, a free container of the class): skip it
                a = min((b + 1) << 5, act_end[m])
                continue
            i = act_idx[a]
            if _fits(i, j, mode, cpu, mem, q, used, mcap, state, slots, occ):
                return i
            a += 1
    return -1


@uncounted
def _free_container(k, act_idx, state, slots, occ, bsl):
    """The first active machine (in active-list order) with a free container of class ``k``, or -1; blocks
    of 32 whose free count ``bsl[b, k]`` is zero are skipped."""
    for b in range(bsl.shape[0]):
        if bsl[b, k] <= 0:
            continue
        for a in range(b << 5, min((b + 1) << 5, act_idx.shape[0])):
            i = act_idx[a]
            if state[i] == 1 and occ[i, k] < slots[i, k]:
                return i
    return -1


@uncounted
def _block_update(i, pos, act_idx, used, mcap, bfree):
    """Recompute the free-capacity upper bound of machine i's block after a placement."""
    b = pos[i] >> 5
    lo, hi = b << 5, min((b + 1) << 5, act_idx.shape[0])
    f0, f1 = 0.0, 0.0
    for a in range(lo, hi):
        k = act_idx[a]
        f0 = max(f0, mcap[k, 0] - used[k, 0])
        f1 = max(f1, mcap[k, 1] - used[k, 1])
    bfree[b, 0], bfree[b, 1] = f0, f1


@uncounted
def _place(
    j,
    i,
    t,
    mode,
    cpu,
    mem,
    dur,
    q,
    thr,
    mtype,
    used,
    nrun,
    tused,
    occ,
    slotc,
    run_qm,
    start,
    mach,
    ht,
    hx,
    hn,
):
    start[j] = t
    mach[j] = i
    used[i, 0] += cpu[j]
    used[i, 1] += mem[j]
    nrun[i] += 1
    m = mtype[i]
    tused[m, 0] += cpu[j]
    tused[m, 1] += mem[j]
    run_qm[q[j], m] += 1
    slotc[j] = 2 * q[j]
    if mode == 2:
        occ[i, 2 * q[j]] += 1
    _push(ht, hx, hn, t + dur[j], 2 * j)
    if dur[j] > thr[q[j]]:
        _push(ht, hx, hn, t + thr[q[j]], 2 * j + 1)


@cached_njit(entry=True)
def run_until(
    t_end,
    mode,
    submit,
    dur,
    cpu,
    mem,
    q,
    thr,
    order,
    qorder,
    qstart,
    mtype,
    mcap,
    state,
    used,
    nrun,
    slots,
    occ,
    act_idx,
    act_start,
    act_end,
    eff,
    xw,
    tused,
    n_on,
    acc_on,
    acc_used,
    start,
    mach,
    slotc,
    run_qm,
    head,
    arrived,
    fresh,
    aptr,
    tnow,
    ht,
    hx,
    hn,
    full_pass,
    relabel,
):
    """Advance the simulation from ``tnow[0]`` to ``t_end``; ``full_pass`` first retries every queue head;
    ``relabel`` (CBS) 0 = a relabelled task's short container is freed where it runs, 1 = swapped with a
    free long container of the class elsewhere (see the module docstring)."""
    Q = qstart.shape[0] - 1
    n = submit.shape[0]
    pos = np.full(state.shape[0], -1, np.int64)
    nb = (act_idx.shape[0] + 31) >> 5
    bfree = np.zeros((max(nb, 1), 2))
    fs = np.zeros((act_start.shape[0], slots.shape[1]), np.int64)  # free containers per type and class
    bsl = np.zeros((max(nb, 1), slots.shape[1]), np.int64)  # free containers per block and class
    for a in range(act_idx.shape[0]):
        pos[act_idx[a]] = a
        for k in range(slots.shape[1]):
            fs[mtype[act_idx[a]], k] += slots[act_idx[a], k] - occ[act_idx[a], k]
            bsl[a >> 5, k] += slots[act_idx[a], k] - occ[act_idx[a], k]
        bfree[a >> 5, 0] = max(bfree[a >> 5, 0], mcap[act_idx[a], 0] - used[act_idx[a], 0])
        bfree[a >> 5, 1] = max(bfree[a >> 5, 1], mcap[act_idx[a], 1] - used[act_idx[a], 1])

    def try_class(qq, i_only, t):
        while head[qq] < arrived[qq]:
            j = qorder[qstart[qq] + head[qq]]
            i = -1
            if fresh[qq]:
                i = _scan(
                    j,
                    mode,
                    cpu,
                    mem,
                    q,
                    used,
                    mcap,
                    state,
                    slots,
                    occ,
                    act_idx,
                    act_start,
                    act_end,
                    eff,
                    xw,
                    run_qm,
                    bfree,
                    fs,
                    bsl,
                )
            elif i_only >= 0 and _fits(i_only, j, mode, cpu, mem, q, used, mcap, state, slots, occ):
                i = i_only
            if i < 0:
                fresh[qq] = False
                return
            _place(
                j,
                i,
                t,
                mode,
                cpu,
                mem,
                dur,
                q,
                thr,
                mtype,
                used,
                nrun,
                tused,
                occ,
                slotc,
                run_qm,
                start,
                mach,
                ht,
                hx,
                hn,
            )
            _block_update(i, pos, act_idx, used, mcap, bfree)
            if mode == 2:
                fs[mtype[i], 2 * q[j]] -= 1
                bsl[pos[i] >> 5, 2 * q[j]] -= 1
            head[qq] += 1
            fresh[qq] = True

    if full_pass:
        for qq in range(Q):
            fresh[qq] = True
            try_class(qq, -1, tnow[0])
    while True:
        ta = submit[order[aptr[0]]] if aptr[0] < n else INF
        th = ht[0] if hn[0] > 0 else INF
        te = min(ta, th)
        if te >= t_end:
            break
        dt = te - tnow[0]
        if dt > 0:
            for m in range(acc_on.shape[0]):
                acc_on[m] += n_on[m] * dt
                acc_used[m, 0] += tused[m, 0] * dt
                acc_used[m, 1] += tused[m, 1] * dt
            tnow[0] = te
        if th <= ta:
            code = hx[0, 0]
            hn[0] = heap_pop(ht, hx, hn[0])
            j = code // 2
            i = mach[j]
            if code % 2 == 1:  # relabel short -> long (§5.1)
                if mode == 2 and slotc[j] == 2 * q[j]:
                    s, lg = 2 * q[j], 2 * q[j] + 1
                    on_i = state[i] == 1 and pos[i] >= 0
                    b_own = -1
                    if occ[i, lg] < slots[i, lg]:
                        b_own = i  # a free long container on its own machine
                    other = -1
                    if b_own < 0 and relabel == 1:
                        other = _free_container(lg, act_idx, state, slots, occ, bsl)
                    slotc[j] = lg
                    occ[i, s] -= 1
                    occ[i, lg] += 1
                    if b_own >= 0:
                        # the task takes its machine's free long container; its short container is free
                        if on_i:
                            fs[mtype[i], lg] -= 1
                            bsl[pos[i] >> 5, lg] -= 1
                            fs[mtype[i], s] += 1
                            bsl[pos[i] >> 5, s] += 1
                            try_class(q[j], i, te)
                    elif other >= 0:
                        # swap (capacity-true): the short container the task holds turns long where the
                        # task runs, and a free long container of the class elsewhere turns short, so the
                        # class keeps its short count and no container is promised on a full machine
                        slots[i, s] -= 1
                        slots[i, lg] += 1
                        slots[other, lg] -= 1
                        slots[other, s] += 1
                        fs[mtype[other], lg] -= 1
                        bsl[pos[other] >> 5, lg] -= 1
                        fs[mtype[other], s] += 1
                        bsl[pos[other] >> 5, s] += 1
                        try_class(q[j], other, te)
                    else:
                        # no free long container of the class on an active machine: the machine's long
                        # reservation grows by one and its short container is free (the M/G/N count
                        # holds a short container for min(duration, threshold))
                        slots[i, lg] += 1
                        if on_i:
                            fs[mtype[i], s] += 1
                            bsl[pos[i] >> 5, s] += 1
                            try_class(q[j], i, te)
                continue
            used[i, 0] -= cpu[j]
            used[i, 1] -= mem[j]
            nrun[i] -= 1
            m = mtype[i]
            tused[m, 0] -= cpu[j]
            tused[m, 1] -= mem[j]
            run_qm[q[j], m] -= 1
            if mode == 2:
                occ[i, slotc[j]] -= 1
            if state[i] == 2 and nrun[i] == 0:
                state[i] = 0
                n_on[m] -= 1
            elif state[i] == 1:
                if mode == 2 and pos[i] >= 0:
                    fs[m, slotc[j]] += 1
                    bsl[pos[i] >> 5, slotc[j]] += 1
                b = pos[i] >> 5
                bfree[b, 0] = max(bfree[b, 0], mcap[i, 0] - used[i, 0])
                bfree[b, 1] = max(bfree[b, 1], mcap[i, 1] - used[i, 1])
                for qq in range(Q):
                    try_class(qq, i, te)
        else:
            j = order[aptr[0]]
            aptr[0] += 1
            qq = q[j]
            arrived[qq] += 1
            if head[qq] == arrived[qq] - 1:
                fresh[qq] = True
                try_class(qq, -1, te)
    dt = t_end - tnow[0]
    if dt > 0:
        for m in range(acc_on.shape[0]):
            acc_on[m] += n_on[m] * dt
            acc_used[m, 0] += tused[m, 0] * dt
            acc_used[m, 1] += tused[m, 1] * dt
        tnow[0] = t_end


@cached_njit(entry=True)
def apply_config(target_on, mtype, type_start, type_end, state, nrun, n_on):
    """Set the number of on machines per type (see module docstring); returns power-ons per type."""
    M = target_on.shape[0]
    ons = np.zeros(M, np.int64)
    for m in range(M):
        a, b = type_start[m], type_end[m]
        active = 0
        for i in range(a, b):
            if state[i] == 1:
                active += 1
        want = target_on[m]
        if want > active:
            for i in range(a, b):  # reactivate draining machines first (most loaded first is not needed)
                if active >= want:
                    break
                if state[i] == 2:
                    state[i] = 1
                    active += 1
            for i in range(a, b):
                if active >= want:
                    break
                if state[i] == 0:
                    state[i] = 1
                    active += 1
                    ons[m] += 1
                    n_on[m] += 1
        elif want < active:
            idx = np.empty(active, np.int64)
            k = 0
            for i in range(a, b):
                if state[i] == 1:
                    idx[k] = i
                    k += 1
            # float keys (exact: counts): numba's stable argsort is then the one compiled for float keys
            # elsewhere, not a second copy for int64 (the same order)
            load = np.empty(active)
            for k in range(active):
                load[k] = nrun[idx[k]]
            for k in np.argsort(load, kind="mergesort")[: active - want]:
                i = idx[k]
                if nrun[i] == 0:
                    state[i] = 0
                    n_on[m] -= 1
                else:
                    state[i] = 2
    return ons


@cached_njit(entry=True)
def active_lists(state, type_start, type_end):
    """Indices of active machines grouped by type (ascending) with per-type [start, end) offsets."""
    M = type_start.shape[0]
    idx = np.empty(state.shape[0], np.int64)
    s = np.empty(M, np.int64)
    e = np.empty(M, np.int64)
    k = 0
    for m in range(M):
        s[m] = k
        for i in range(type_start[m], type_end[m]):
            if state[i] == 1:
                idx[k] = i
                k += 1
        e[m] = k
    return idx[:k], s, e


@cached_njit(entry=True)
def place_containers(first, target, csize, class_order, mcap, state, occ, slots, type_start, type_end):
    """CBS §7.3.2 / Algorithm 1: keep occupied containers, drop free ones, then first-fit the containers
    still missing onto the active type-m machines in two rounds — up to ``first[m, k]`` (⌊x/(2|R|)⌋, the
    share Lemma 1 guarantees) for every class, then up to ``target[m, k]`` — classes in ``class_order``
    within a round. Returns the containers placed per (m, k) including occupied ones."""
    M, K = target.shape
    n = state.shape[0]
    reserved = np.zeros((n, 2))
    for i in range(n):
        for k in range(K):
            slots[i, k] = occ[i, k]
            reserved[i, 0] += occ[i, k] * csize[k, 0]
            reserved[i, 1] += occ[i, k] * csize[k, 1]
    placed = np.zeros((M, K), np.int64)
    for m in range(M):
        for k in range(K):
            for i in range(type_start[m], type_end[m]):
                placed[m, k] += occ[i, k]
        for rnd in range(2):
            for k in class_order:
                need = (first[m, k] if rnd == 0 else target[m, k]) - placed[m, k]
                i = type_start[m]
                while need > 0 and i < type_end[m]:
                    if state[i] == 1:
                        fit = need
                        for r in range(2):
                            if csize[k, r] > 0:
                                f = int(np.floor((mcap[i, r] - reserved[i, r]) / csize[k, r] + 1e-9))
                                if f < fit:
                                    fit = f
                        if fit > 0:
                            slots[i, k] += fit
                            reserved[i, 0] += fit * csize[k, 0]
                            reserved[i, 1] += fit * csize[k, 1]
                            placed[m, k] += fit
                            need -= fit
                    i += 1
    return placed


@cached_njit(entry=True)
def repack_running(
    cand, tgt, csize, class_order, mcap, mtype, type_start, type_end, state, n_on, occ, used, nrun, tused,
    run_qm, cpu, mem, q, slotc, mach,
):  # fmt: skip
    """CBS Algorithm 1, lines 10–11 ("Compute a re-packing configuration on all selected active machines;
    turn on selected machines, perform re-packing using FF, turn off other machines"; §7.3.2: "Container
    reassignment (i.e., migration) is then performed"): after the decision's machines are on
    (:func:`apply_config`), the containers of the running tasks are packed again from scratch by first fit
    on the active machines, largest containers first (``class_order``), each task moving with its container
    (its events are keyed by the task, so it keeps running). A container goes to its own machine type while
    the type holds fewer than ``tgt[m, k]`` (⌈x^{mk}⌉) of its class, else to the first type with planned
    room, else to its own type; on a machine of that type whose container reservations (``csize``) and
    actual use both leave room, else on any active machine with room; only if there is none does it stay
    on the machine it runs on (counted in the second value returned); if such a task's machine has then no
    room for it among the tasks packed there, the decision keeps the old layout (no task moves). A machine
    left empty that the decision turns off is off at once. The free containers are placed afterwards
    (:func:`place_containers`). ``cand``: the running tasks, none elsewhere (a completion at exactly the
    decision time is still pending). Returns (tasks moved, tasks left where they were without room)."""
    M, K = tgt.shape
    n_m = state.shape[0]
    rank = np.empty(K, np.int64)
    for r in range(K):
        rank[class_order[r]] = r
    key = np.empty(cand.shape[0], np.int64)
    for c in range(cand.shape[0]):
        key[c] = rank[slotc[cand[c]]] * n_m + mach[cand[c]]
    cand = cand[np.argsort(key, kind="mergesort")]  # largest containers first, then machine order
    old = mach[cand].copy()
    dest_of = old.copy()
    # the fresh layout: nothing reserved or used anywhere
    reserved = np.zeros((n_m, 2))
    u = np.zeros((n_m, 2))
    have = np.zeros((M, K), np.int64)
    ptr = np.empty((M, K), np.int64)
    for m in range(M):
        for k in range(K):
            ptr[m, k] = type_start[m]
    moved, stuck = 0, 0
    for c in range(cand.shape[0]):
        j = cand[c]
        k = slotc[j]
        i0 = old[c]
        m0 = mtype[i0]
        dest = -1
        for pas in range(2):  # planned types first, then any active machine
            for r in range(M):
                mm = m0 if r == 0 else (r - 1 if r - 1 < m0 else r)
                if pas == 0 and have[mm, k] >= tgt[mm, k]:
                    continue  # no planned room for the class on this type: only in the second pass
                a = ptr[mm, k]
                while a < type_end[mm] and (
                    state[a] != 1
                    or reserved[a, 0] + csize[k, 0] > mcap[a, 0] + 1e-9
                    or reserved[a, 1] + csize[k, 1] > mcap[a, 1] + 1e-9
                ):
                    a += 1
                ptr[mm, k] = a
                for i in range(a, type_end[mm]):
                    if (
                        state[i] == 1
                        and reserved[i, 0] + csize[k, 0] <= mcap[i, 0] + 1e-9
                        and reserved[i, 1] + csize[k, 1] <= mcap[i, 1] + 1e-9
                        and u[i, 0] + cpu[j] <= mcap[i, 0] + 1e-9
                        and u[i, 1] + mem[j] <= mcap[i, 1] + 1e-9
                    ):
                        dest = i
                        break
                if dest >= 0:
                    break
            if dest >= 0:
                break
        if dest < 0:
            dest = i0
            stuck += 1
        dest_of[c] = dest
        reserved[dest, 0] += csize[k, 0]
        reserved[dest, 1] += csize[k, 1]
        u[dest, 0] += cpu[j]
        u[dest, 1] += mem[j]
        have[mtype[dest], k] += 1
        if dest != i0:
            moved += 1
    # a task left where it was may not fit among the tasks packed there: then keep the old layout
    for i in range(n_m):
        if u[i, 0] > mcap[i, 0] + 1e-9 or u[i, 1] > mcap[i, 1] + 1e-9:
            return 0, stuck
    copy_rows(used, u, u.shape[0])
    nrun[:] = 0
    occ[:, :] = 0
    tused[:, :] = 0.0
    run_qm[:, :] = 0
    for c in range(cand.shape[0]):
        j = cand[c]
        i = dest_of[c]
        m1 = mtype[i]
        mach[j] = i
        occ[i, slotc[j]] += 1
        nrun[i] += 1
        tused[m1, 0] += cpu[j]
        tused[m1, 1] += mem[j]
        run_qm[q[j], m1] += 1
    for i in range(n_m):
        if state[i] == 2 and nrun[i] == 0:
            state[i] = 0
            n_on[mtype[i]] -= 1
    return moved, stuck
