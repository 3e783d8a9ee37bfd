"""The dask sweep job, built from one study's definitions: the reconstructable target that
``varcap sweep STUDY --executor dask`` hands to dagster-dask, whose every worker process rebuilds the job
(``dg.build_reconstructable_job("pipelines.dask_sweep", "dask_sweep_job", (study,))``).

Its workers import this module, not :mod:`pipelines.definitions` (every study's scenarios and every
asset), and it teaches dask the size of a Dagster event: dask measures a task's result by walking it as a
tuple, a Dagster record refuses to be iterated, and ``distributed`` then printed a warning line per step
result ("Sizeof calculation for object of type 'list' failed"). As a worker's preload module
(``varcap sweep`` starts its local cluster so) it also ends a worker that closes without tearing its
interpreter down: a worker that has loaded Dagster and the simulator spent seconds of CPU on that, and past
``distributed``'s 4 s it was killed with a warning line."""

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


_register_event_size()  # at import: the workers import this module to rebuild the job


def dask_teardown(worker: Any) -> None:
    """``distributed``'s preload hook, called as a worker closes: end the process at its exit without the
    interpreter's teardown (the worker's results are reported and its files written by then)."""
    atexit.register(_exit_now)  # registered last, so it runs first


def _exit_now() -> None:
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def dask_sweep_job(study: str) -> dg.JobDefinition:
    """Study ``study``'s asset on the dask executor, against resources built now (the current
    ``VARCAP_HOME``/``VARCAP_WAREHOUSE``). Without ``out_sim_results``: dagster-dask cannot submit a step
    that belongs to a pool (its task spec iterates the step's RunOpConcurrency record), so ``varcap sweep``
    materializes it afterwards. KeyError for a study the catalogue does not hold."""
    from dagster_dask import dask_executor

    from assets.sim import study_asset_name
    from pipelines.cli.sweeps import sweep_definitions

    d = sweep_definitions(study)
    job = dg.define_asset_job(
        f"sweep__{study.replace('-', '_')}",
        selection=[study_asset_name(study)],
        executor_def=dask_executor,
        description=f"simulate the scenarios of study {study} on a dask cluster (launch over a partition range)",
    )
    return dg.Definitions(
        assets=d.assets, asset_checks=d.asset_checks, jobs=[job], resources=d.resources
    ).resolve_job_def(job.name)
