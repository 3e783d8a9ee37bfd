"""The attempt log: one row per attempt — job (engine index), start, end, outcome, machine, and the job's
own work the attempt delivered or saved (checkpointing only, else 0) — in float64 columns (exact for the
integers), grown by doubling. First-Fit's flat loop (:mod:`sim.engine.ff`) never checkpoints and keeps no
work column."""

from __future__ import annotations

import numpy as np

from sim.engine._jit import kernel_fn
from sim.engine.kit import copy_rows
from sim.metrics import ATT_RUNNING

LOG_JOB, LOG_START, LOG_END, LOG_OUTCOME, LOG_MACHINE, LOG_USEFUL = 0, 1, 2, 3, 4, 5
LOG_COLUMNS = 6


@kernel_fn
def _log_open(alog, an, cur_att, j, m, t, horizon):
    """Append a running attempt of job j on machine m from t (end = horizon until it closes)."""
    if an >= alog.shape[0]:
        grown = np.empty((2 * alog.shape[0] + 16, 6))
        copy_rows(grown, alog, an)
        alog = grown
    alog[an, LOG_JOB] = j
    alog[an, LOG_START] = t
    alog[an, LOG_END] = horizon
    alog[an, LOG_OUTCOME] = ATT_RUNNING
    alog[an, LOG_MACHINE] = m
    alog[an, LOG_USEFUL] = 0.0
    cur_att[j] = an
    return alog, an + 1


@kernel_fn
def _log_close(alog, cur_att, j, t, outcome):
    """Close job j's open attempt at t with ``outcome``."""
    k = cur_att[j]
    alog[k, LOG_END] = t
    alog[k, LOG_OUTCOME] = outcome
