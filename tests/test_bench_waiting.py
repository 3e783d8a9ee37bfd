"""The waiting-SlackSched benchmark's queue figures (:func:`sim.bench.waiting.queue_profile`)."""

from __future__ import annotations

import numpy as np

from sim.bench.waiting import queue_profile


def test_queue_profile_by_hand() -> None:
    """Three jobs (submitted at 0, 1, 2; started at 1, 5, 5; the second killed at 7 and never restarted) over
    10 s: the queue is 1, 1, 2, 0, 1 on [0,1), [1,2), [2,5), [5,7), [7,10); the passes at 0, 1, 2, 3 (a
    capacity step), 4 (an end), 5 and 7 see 1, 2, 2, 2, 2, 2, 1 queued jobs."""
    submit = np.array([0.0, 1.0, 2.0])
    start = np.array([1.0, 5.0, 5.0])
    end = np.array([4.0, 7.0, 10.0])
    killed = np.array([False, True, False])
    mean, parts, instants = queue_profile(submit, start, end, killed, np.array([3.0]), 10.0, 2)
    assert mean == 1.1
    assert parts.tolist() == [1.6, 0.6]
    assert instants == 12.0


def test_queue_profile_matches_a_direct_count() -> None:
    """On random attempts the time average equals a fine-grid count of the queued jobs (submitted, not yet
    started, or killed and not restarted)."""
    rng = np.random.default_rng(1)
    n, horizon = 40, 100.0
    submit = np.sort(rng.integers(0, 50, n)).astype(float)
    start = submit + rng.integers(0, 30, n)
    end = start + rng.integers(1, 20, n)
    killed = rng.random(n) < 0.3
    restart = end + rng.integers(0, 10, n)  # a killed job's second attempt
    att_start = np.concatenate((start, restart[killed]))
    att_end = np.concatenate((end, restart[killed] + 5.0))
    att_killed = np.concatenate((killed, np.zeros(int(killed.sum()), bool)))
    mean, parts, _ = queue_profile(submit, att_start, att_end, att_killed, np.empty(0), horizon, 4)
    grid = np.arange(0.0, horizon, 0.5) + 0.25  # no event falls on a grid point
    queued = np.array(
        [np.sum((submit <= x) & (start > x)) + np.sum(killed & (end <= x) & (restart > x)) for x in grid]
    )
    assert np.isclose(mean, np.mean(queued))
    assert np.allclose(parts, queued.reshape(4, -1).mean(axis=1))
