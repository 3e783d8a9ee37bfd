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
