"""What a dask worker of a varcap sweep needs before it runs a step: its preload module (``varcap sweep``
starts its local cluster with ``preload=["pipelines.dask_worker"]``; start your own cluster's workers with
``--preload pipelines.dask_worker``). It imports only Dagster and dask.

* dask measures a task's result by walking it as a tuple; a Dagster event holds records that refuse to be
  iterated, and ``distributed`` printed a warning line per step result ("Sizeof calculation for object of
  type 'list' failed"). Here an event is sized by itself.
* A worker that has loaded Dagster and the simulator spent seconds of CPU tearing its interpreter down, and
  past ``distributed``'s 4 s it was killed with a warning line: a closing worker ends at its exit without
  that teardown."""

from __future__ import annotations

import atexit
import logging
import os
import sys
from typing import Any

import dagster as dg


def _register_event_size() -> None:
    """Size a :class:`dagster.DagsterEvent` by itself (``sys.getsizeof``), not by iterating its fields."""
    from dask.sizeof import sizeof

    @sizeof.register(dg.DagsterEvent)
    def _event(e: dg.DagsterEvent) -> int:
        return sys.getsizeof(e)


_register_event_size()  # at import: the preload, and every module that builds a dask sweep job


def dask_teardown(worker: Any) -> None:
    """``distributed``'s preload hook, called as a worker closes: end the process at its exit without the
    interpreter's teardown (the worker's results are reported and its files written by then)."""
    atexit.register(_exit_now)  # registered last, so it runs first


def _exit_now() -> None:
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
