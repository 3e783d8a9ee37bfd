""": the dirty pass's (cores, duration) index over queued H2/H4/L-class jobs
(sim.engine.queue._qx_new): its answers equal a scan of the queued jobs, through appends, starts and a
compaction (every position moved)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.engine.queue import (
    CLS_H2,
    CLS_H4,
    CLS_L,
    CLS_U,
    _qx_any,
    _qx_lowest,
    _qx_lowest_by,
    _qx_moved,
    _qx_new,
    _qx_set,
    _qxl_any,
    _qxl_longest,
)

INF = np.inf
SHRINK = 1.0 - 2e-9


def _scan(queued, cls, jcls, cores, dur, c, g, lo, dmax):
    """Lowest position >= lo of a queued class-``cls`` job with cores <= c, dur·SHRINK < g, dur < dmax."""
    best = -1
    for j, p in queued.items():
        if jcls[j] == cls and cores[j] <= c and dur[j] * SHRINK < g and dur[j] < dmax and p >= lo:
            best = p if best < 0 or p < best else best
    return best


def _any(queued, cls, jcls, cores, dur, c, g):
    return any(jcls[j] == cls and cores[j] <= c and dur[j] * SHRINK < g for j in queued)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_index_answers_like_a_scan(data) -> None:
    """_qx_any and _qx_lowest (with a loose cap: never gives up) equal the scan after every change."""
    n = data.draw(st.integers(1, 30))
    jcls = np.array(
        data.draw(st.lists(st.sampled_from([CLS_U, CLS_H2, CLS_H4]), min_size=n, max_size=n)), np.int8
    )
    cores = np.array(data.draw(st.lists(st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0]), min_size=n, max_size=n)))
    dur = np.array(data.draw(st.lists(st.integers(1, 50), min_size=n, max_size=n)), float)
    qxs = {cls: _qx_new(jcls, cores, True, cls) for cls in (CLS_H2, CLS_H4)}
    stk = np.empty((3, 4096), np.int64)
    queued: dict[int, int] = {}
    qjob = np.full(2 * n + 2, -1, np.int64)
    tail = 0
    for _ in range(data.draw(st.integers(1, 3 * n))):
        op = data.draw(st.sampled_from(["append", "start", "compact"]))
        if op == "append":
            j = data.draw(st.integers(0, n - 1))
            if j in queued or tail >= len(qjob):
                continue
            queued[j] = tail
            qjob[tail] = j
            for qx in qxs.values():
                _qx_set(qx, j, dur[j], tail)
            tail += 1
        elif op == "start" and queued:
            j = data.draw(st.sampled_from(sorted(queued)))
            qjob[queued.pop(j)] = -1
            for qx in qxs.values():
                _qx_set(qx, j, INF, -1)
        elif op == "compact":
            live = [qjob[p] for p in range(tail) if qjob[p] >= 0]
            qjob[:] = -1
            qjob[: len(live)] = live
            tail = len(live)
            queued = {int(j): p for p, j in enumerate(live)}
            for qx in qxs.values():
                _qx_moved(qx, qjob, tail)
        c = data.draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0]))
        g = float(data.draw(st.integers(0, 55)))
        lo = data.draw(st.integers(0, max(tail, 1)))
        dmax = data.draw(st.sampled_from([INF, float(data.draw(st.integers(0, 55)))]))
        for cls, qx in qxs.items():
            assert _qx_any(qx, c, g) == _any(queued, cls, jcls, cores, dur, c, g)
            assert _qx_lowest(qx, c, g, lo, dmax, -1, 10**6, stk) == _scan(
                queued, cls, jcls, cores, dur, c, g, lo, dmax
            )
            # with a limit: below it, or the limit itself
            want = _scan(queued, cls, jcls, cores, dur, c, g, lo, dmax)
            lim = data.draw(st.integers(0, max(tail, 1)))
            got = _qx_lowest(qx, c, g, lo, dmax, lim, 10**6, stk)
            assert got == (want if 0 <= want < lim else lim)


def test_index_gives_up_past_the_cap() -> None:
    """More matching jobs met (here at positions below lo, nearest the head first) than ``cap``: -2 (the
    dirty pass then searches the position trees), never a wrong position."""
    n = 64
    jcls = np.full(n, CLS_H4, np.int8)
    cores = np.ones(n)
    dur = np.full(n, 5.0)
    qx = _qx_new(jcls, cores, True, CLS_H4)
    for j in range(n):
        _qx_set(qx, j, dur[j], j)
    stk = np.empty((3, 4096), np.int64)
    assert _qx_lowest(qx, 1.0, 10.0, n, INF, -1, 8, stk) == -2
    assert _qx_lowest(qx, 1.0, 10.0, n, INF, -1, 10**6, stk) == -1
    assert _qx_lowest(qx, 1.0, 10.0, 5, INF, -1, 8, stk) == 5


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_literal_index_answers_like_a_scan(data) -> None:
    """Class L's index keys each queued job by its negated duration: _qxl_any (some job with cores <= c and
    -duration <= g), _qxl_longest (the longest duration < x among jobs with cores <= c, which times the
    literal wake-ups) and _qx_lowest_by with an unscaled key equal the scan after appends and starts."""
    n = data.draw(st.integers(1, 30))
    jcls = np.array(data.draw(st.lists(st.sampled_from([CLS_U, CLS_L]), min_size=n, max_size=n)), np.int8)
    cores = np.array(data.draw(st.lists(st.sampled_from([0.25, 0.5, 1.0, 2.0, 4.0]), min_size=n, max_size=n)))
    dur = np.array(data.draw(st.lists(st.integers(1, 50), min_size=n, max_size=n)), float)
    qx = _qx_new(jcls, cores, True, CLS_L)
    stk = np.empty((3, 4096), np.int64)
    queued: dict[int, int] = {}
    tail = 0
    for _ in range(data.draw(st.integers(1, 3 * n))):
        j = data.draw(st.integers(0, n - 1))
        if j in queued:
            del queued[j]
            _qx_set(qx, j, INF, -1)
        else:
            queued[j] = tail
            _qx_set(qx, j, -dur[j], tail)
            tail += 1
        mine = [k for k in queued if jcls[k] == CLS_L]
        c = data.draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0]))
        g = -float(data.draw(st.integers(0, 55)))
        x = float(data.draw(st.integers(0, 55)))
        assert _qxl_any(qx, c, g) == any(cores[k] <= c and -dur[k] <= g for k in mine)
        below = [dur[k] for k in mine if cores[k] <= c and dur[k] < x]
        assert _qxl_longest(qx, c, x, stk) == (max(below) if below else -INF)
        lows = [queued[k] for k in mine if cores[k] <= c and -dur[k] < g]
        assert _qx_lowest_by(qx, c, g, 0, INF, -1, 10**6, stk, 1.0) == (min(lows) if lows else -1)
