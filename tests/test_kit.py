"""The compiled-loop kit (:mod:`sim.engine.kit`), run interpreted: the event heap pops as ``heapq`` pops the
same tuples, the pairwise sum is numpy's bit for bit, the attempt log grows without losing rows. (Compiled,
every loop's golden and digest tests hold it: test_golden, test_tloop, test_hloop*, test_harmony.)"""

from __future__ import annotations

import heapq

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.engine import kit

ops = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from([0.0, 1.0, 2.5, 7.0]), st.lists(st.integers(-3, 3), min_size=4, max_size=4)
        ),
        st.just(None),  # a pop
    ),
    max_size=80,
)


@settings(max_examples=150, deadline=None)
@given(width=st.integers(1, 4), seq=ops)
def test_heap_pops_in_heapq_order(width: int, seq: list) -> None:
    ht, hx, hn = np.empty(2), np.empty((2, width), np.int64), 0  # tiny: heap_room grows it
    ref: list[tuple] = []
    for op in seq:
        if op is None:
            if not ref:
                continue
            want = heapq.heappop(ref)
            got = (float(ht[0]), *(int(x) for x in hx[0]))
            hn = kit.heap_pop(ht, hx, hn)
            assert got == want
        else:
            t, keys = op
            ht, hx = kit.heap_room(ht, hx, hn)
            hn = kit.heap_push(ht, hx, hn, t, *keys)
            heapq.heappush(ref, (t, *keys[:width]))
        assert hn == len(ref)
    # drop every other entry in place and re-heapify (Target*'s stale sweep): still heapq's order
    keep = [(float(ht[i]), *(int(x) for x in hx[i])) for i in range(0, hn, 2)]
    for k, e in enumerate(keep):
        ht[k], hx[k] = e[0], e[1:]
    kit.heap_make(ht, hx, len(keep))
    heapq.heapify(keep)
    n = len(keep)
    while n:
        assert (float(ht[0]), *(int(x) for x in hx[0])) == heapq.heappop(keep)
        n = kit.heap_pop(ht, hx, n)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 1500), seed=st.integers(0, 2**32 - 1))
def test_np_sum_is_numpys_pairwise_sum(n: int, seed: int) -> None:
    a = np.random.default_rng(seed).standard_normal(n) * 10.0 ** np.random.default_rng(seed).integers(
        -8, 8, n
    )
    assert kit.np_sum(a) == float(a.sum())


def test_attempt_log_grows_and_keeps_its_rows() -> None:
    cols = [c[:0] for c in kit.log_new(0)]  # empty columns: the first append doubles from nothing
    cols = [np.empty(1, c.dtype) for c in cols]
    nlog, cur = 0, np.full(10, -1, np.int64)
    for j in range(10):
        *cols, nlog = kit.log_open(*cols, nlog, cur, j, j % 3, float(j), 99.0)
    lj, ls, le, lo, lm = (c[:nlog] for c in cols)
    assert nlog == 10 and lj.tolist() == list(range(10)) and ls.tolist() == [float(j) for j in range(10)]
    assert (le == 99.0).all() and (lo == 2).all() and lm.tolist() == [j % 3 for j in range(10)]
    assert cur.tolist() == list(range(10))


@settings(max_examples=80, deadline=None)
@given(
    seq=st.lists(st.tuples(st.sampled_from("sck"), st.integers(0, 5), st.integers(0, 2)), max_size=60),
    seed=st.integers(0, 2**32 - 1),
)
def test_attempt_accounting_is_the_loops(seq: list, seed: int) -> None:
    """The kit's attempt start, completion and kill leave every job array, log row and total as
    ``Loop.start`` / ``Loop.complete`` / ``Loop.kill`` do on the same steps (fractional cores and times:
    the sums' order shows)."""
    import polars as pl

    from sim.capacity.trace import CapacityTrace
    from sim.engine.loop import Loop
    from sim.metrics import RUNNING
    from sim.problem import Platform, Problem

    rng = np.random.default_rng(seed)
    n, horizon = 6, 1000.0
    jobs = pl.DataFrame(
        {
            "job_id": [f"j{i}" for i in range(n)],
            "submit_s": np.zeros(n),
            "duration_s": rng.uniform(1, 50, n),
            "cores": rng.uniform(0.1, 3.0, n),
        }
    )
    trace = CapacityTrace(np.array([0.0]), np.array([3]), 3, horizon)
    loop = Loop(Problem.build(jobs, Platform(3, 4.0), trace, horizon))
    c, d = loop.cores.copy(), loop.duration.copy()
    st_, s, f, e = loop.status.copy(), loop.start_s.copy(), loop.first.copy(), loop.end.copy()
    att, terms, mach, cur = loop.att.copy(), loop.terms.copy(), loop.machine.copy(), loop.cur_att.copy()
    cols = [x[:1] for x in kit.log_new(0)]  # one row: the log grows on the way
    nlog, busy, done, wasted, aborted, nterm = 0, 0.0, 0.0, 0.0, 0.0, 0
    t = 0.0
    for op, j, m in seq:
        t += float(rng.uniform(0.0, 7.0))
        running = loop.status[j] == RUNNING
        if op == "s" and not running and loop.status[j] != 2:
            loop.start(j, m, t)
            *cols, nlog, busy = kit.attempt_start(*cols, nlog, cur, st_, s, f, att, mach, c, j, m, t, horizon, busy)
        elif op == "c" and running:
            loop.complete(j, t)
            done, busy = kit.attempt_complete(cols[2], cols[3], cur, st_, e, c, d, j, t, done, busy)
        elif op == "k" and running:
            loop.kill(j, t)
            wasted, aborted, busy, nterm = kit.attempt_kill(
                cols[2], cols[3], cur, st_, s, terms, mach, c, j, t, wasted, aborted, busy, nterm
            )
    for mine, theirs in ((st_, loop.status), (s, loop.start_s), (f, loop.first), (e, loop.end), (att, loop.att),
                         (terms, loop.terms), (mach, loop.machine), (cur, loop.cur_att)):  # fmt: skip
        assert mine.tolist() == theirs.tolist()
    log = loop.log
    for mine, theirs in zip(cols, (log.job, log.start, log.end, log.outcome, log.machine), strict=True):
        assert mine[:nlog].tolist() == list(theirs)
    assert (busy, done, wasted, aborted, nterm) == (
        loop.busy, loop.completed_cs, loop.wasted_cs, loop.aborted, loop.n_term
    )
