"""The engine's queue compacts in place (sim.engine.queue._q_compact) inside arrays grown beforehand
(_q_room to _q_size_for's size): through appends, starts and compactions its positions and trees equal
a queue rebuilt from scratch, and the appends of an instant reach exactly the size room was made for."""

from __future__ import annotations

import numpy as np
import pytest

from sim.engine import _jit
from sim.engine.kernel import _append
from sim.engine.queue import (
    CLS_H2,
    CLS_H4,
    CLS_L,
    CLS_U,
    CLS_U2,
    _q_put,
    _q_room,
    _q_size_for,
    _qx_new,
)

INF = np.inf


def _trees(
    qjob: np.ndarray, started: dict[int, int], size: int, jcls: np.ndarray, cores: np.ndarray, dur: np.ndarray
) -> np.ndarray:
    """The queue's 8 min-trees over ``size`` positions built from scratch: job ``qjob[p]`` at each queued
    position p, and each job of ``started`` (position: job) emptied as a start empties it."""
    qt = np.full((8, 2 * size), INF)
    for p, j in enumerate(qjob[:size]):
        if j >= 0:
            _q_put(qt, size, p, jcls[j], cores[j], dur[j])
    for p, j in started.items():
        _q_put(qt, size, p, jcls[j], INF, INF)
    return qt


@pytest.mark.parametrize("seed", range(6))
def test_queue_compacts_in_place_like_a_rebuilt_queue(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 3000
    jcls = rng.choice(np.array([CLS_U, CLS_H2, CLS_H4, CLS_U2, CLS_L], np.int8), n)
    cores = rng.choice(np.array([0.5, 1.0, 2.0, 4.0]), n)
    dur = rng.uniform(1.0, 100.0, n).round(1)
    qxs = tuple(_qx_new(jcls, cores, False, c) for c in (CLS_H2, CLS_H4, CLS_L))
    qsize = 16
    qjob = np.full(qsize, -1, np.int64)
    qt = np.full((8, 2 * qsize), INF)
    qhead = qtail = 0
    live: list[int] = []  # the queued jobs in queue order
    started: dict[int, int] = {}  # position: job, of the jobs started since the last compaction
    nxt = 0
    compactions = grown_beyond = 0
    while nxt < n:
        # an instant: some starts, then up to `extra` appends in arrays with room made for them before
        for j in list(live):
            if rng.random() < 0.5:
                p = int(np.flatnonzero(qjob[:qtail] == j)[0])
                qjob[p] = -1
                _q_put(qt, qsize, p, jcls[j], INF, INF)
                live.remove(j)
                started[p] = j
        while qhead < qtail and qjob[qhead] < 0:
            qhead += 1
        extra = int(rng.choice([0, 1, 3, 40, 200]))
        need = _q_size_for(qjob, qhead, qtail, qsize, extra)
        qjob, qt = _q_room(qjob, qt, qsize, need)
        arrays = (qjob, qt)
        grown_beyond += qjob.shape[0] > qsize
        count = min(extra, n - nxt)
        for _ in range(count):
            qsize, qhead, qtail, moved = _append(nxt, qjob, qt, qsize, qhead, qtail, cores, dur, jcls, qxs)
            compactions += moved
            if moved:
                started = {}
            live.append(nxt)
            nxt += 1
            assert qsize <= need and qjob is arrays[0] and qt is arrays[1]
            if not moved and rng.random() < 0.9:
                continue
            # positions in queue order, the trees as if built afresh over the queue's size
            assert [int(j) for j in qjob[qhead:qtail] if j >= 0] == live
            want = _trees(qjob, started, qsize, jcls, cores, dur)
            assert np.array_equal(qt[:, 2 : 2 * qsize], want[:, 2:]), (nxt, qsize)
        if count == extra:  # the room made is the size the compactions reached, no more (memory as before)
            assert qsize == need, (qsize, need)
    assert compactions > 8 and grown_beyond > 1, (compactions, grown_beyond)


def test_queue_room_keeps_the_queue() -> None:
    qjob = np.array([-1, 5, 7, -1], np.int64)
    qt = np.arange(16.0).reshape(2, 8)
    same = _q_room(qjob, qt, 4, 4)
    assert same[0] is qjob and same[1] is qt
    nq, nt = _q_room(qjob, qt, 4, 16)
    assert nq.tolist() == [-1, 5, 7, -1] + [-1] * 12 and nt.shape == (2, 32)
    assert np.array_equal(nt[:, :8], qt) and np.all(nt[:, 8:] == INF)
    # the size the appends reach: 12 live jobs in 16 positions take 4 more without compacting; the fifth
    # compacts 16 live ones into 64 positions (2 × 16 + 16 > 32); 4 live at the end: one append compacts them
    # into 32 (2 × 4 + 16 > 16); after that compaction 48 more fill the 64 positions, one more compacts 64
    # live jobs into 256
    full = np.r_[np.arange(12), np.full(4, -1)].astype(np.int64)
    assert [_q_size_for(full, 0, 12, 16, k) for k in (0, 4, 5, 52, 53, 100)] == [16, 16, 64, 64, 256, 256]
    holes = np.r_[np.full(12, -1), np.arange(4)].astype(np.int64)
    assert _q_size_for(holes, 0, 16, 16, 1) == 32
    # the in-place compaction allocates nothing: compiled uncounted (see sim.engine._jit.kernel_fn)
    disp = _jit.compiled()
    for name in ("_q_compact", "_q_size_for"):
        assert disp[name].targetoptions["_nrt"] is False, name
