"""The dask sweep job, built from one study's definitions: the reconstructable target that
``varcap sweep STUDY --executor dask`` hands to dagster-dask, whose every worker process rebuilds the job
(``dg.build_reconstructable_job("pipelines.dask_sweep", "dask_sweep_job", (study,))``). Its workers import
this module, not :mod:`pipelines.definitions` (every study's scenarios and every asset); what they need
before a step is :mod:`pipelines.dask_worker`."""

from __future__ import annotations

import dagster as dg

import pipelines.dask_worker  # noqa: F401 — dask sizes Dagster events quietly in every process of the sweep


def dask_sweep_job(study: str, chunks: int | None = None) -> dg.JobDefinition:
    """Study ``study``'s asset on the dask executor, against resources built now (the current
    ``VARCAP_HOME``/``VARCAP_WAREHOUSE``), with ``chunks`` simulation steps (default
    :data:`assets.sim.MAX_CHUNKS`): dagster-dask submits every step, and each step captures its output
    through two ``tail`` and two watcher processes (bench-defer's 40 scenarios on 2 workers: 138 processes
    with 32 slots; measured 2026-12-02). Without ``out_sim_results``: dagster-dask cannot submit a step
    that belongs to a pool (its task spec iterates the step's RunOpConcurrency record), so ``varcap sweep``
    materializes it afterwards. KeyError for a study the catalogue does not hold."""
    from dagster_dask import dask_executor

    from assets.sim import study_asset_name
    from pipelines.cli.sweeps import sweep_definitions

    d = sweep_definitions(study, chunks)
    job = dg.define_asset_job(
        f"sweep__{study.replace('-', '_')}",
        selection=[study_asset_name(study)],
        executor_def=dask_executor,
        description=f"simulate the scenarios of study {study} on a dask cluster (launch over a partition range)",
    )
    return dg.Definitions(
        assets=d.assets, asset_checks=d.asset_checks, jobs=[job], resources=d.resources
    ).resolve_job_def(job.name)
