"""The one Dagster ``Definitions`` of varcap (``dagster dev -m pipelines.definitions``)."""

from __future__ import annotations

import os

import dagster as dg

from assets.capacity import capacity_assets, capacity_checks
from assets.core import core_assets, core_checks
from assets.forecast import forecast_assets, forecast_checks
from assets.harmony import harmony_assets, harmony_checks
from assets.raw import raw_assets, raw_checks
from assets.reports import reports_assets, reports_checks
from assets.reproduction import reproduction_assets, reproduction_checks
from assets.schema import ALL_TABLES
from assets.sgip import backtest_assets, backtest_checks, sgip_assets, sgip_checks
from assets.sim import LOCAL_WORKERS_TAG, STUDY_PARTS, run_resources, sim_assets, sim_checks, study_asset_name
from assets.spot import spot_assets, spot_checks
from assets.swf import swf_assets, swf_checks
from assets.thesis import thesis_assets, thesis_checks
from pipelines.guard import dead_runs_sensor
from studies.catalogue import STUDIES


def _with_columns(spec: dg.AssetSpec) -> dg.AssetSpec:
    """The data dictionary (assets/schema.py) on every asset that writes a table: the UI's Columns section
    (``dagster/column_schema``) and ``dagster/table_name``."""
    table = ALL_TABLES.get(spec.key.to_user_string())
    return spec.merge_attributes(metadata=table.dagster_metadata()) if table else spec


ALL_ASSETS = dg.map_asset_specs(
    _with_columns,
    [
        *raw_assets,
        *core_assets,
        *forecast_assets,
        *spot_assets,
        *sgip_assets,
        *backtest_assets,
        *swf_assets,
        *capacity_assets,
        *sim_assets,
        *reproduction_assets,
        *thesis_assets,
        *reports_assets,
        *harmony_assets,
    ],
)
ALL_CHECKS = [
    *raw_checks,
    *core_checks,
    *forecast_checks,
    *spot_checks,
    *sgip_checks,
    *backtest_checks,
    *swf_checks,
    *capacity_checks,
    *sim_checks,
    *reproduction_checks,
    *thesis_checks,
    *reports_checks,
    *harmony_checks,
]

ingest_job = dg.define_asset_job(
    "ingest",
    selection=dg.AssetSelection.groups("raw", "core"),
    description="raw -> core: register or download inputs, normalize them into DuckDB",
)

capacity_job = dg.define_asset_job(
    "capacity",
    selection=dg.AssetSelection.groups("capacity", "intervals"),
    description="capacity traces, characterization, machine intervals and survival tables",
)


def _sweep_job(
    study: str, executor: dg.ExecutorDefinition, results: bool = True
) -> dg.UnresolvedAssetJobDefinition:
    """The study's partitions, then (``results``) ``out_sim_results`` in the same run."""
    then = " then rebuild out_sim_results in the same run" if results else ""
    return dg.define_asset_job(
        f"sweep__{study.replace('-', '_')}",
        selection=[study_asset_name(study), *(["out_sim_results"] if results else [])],
        executor_def=executor,
        description=f"simulate the scenarios of study {study} (launch over a partition range){then}",
    )


SWEEP_JOBS = {name: _sweep_job(name, dg.multiprocess_executor) for name in STUDIES}


def _study_job(study: str) -> dg.UnresolvedAssetJobDefinition:
    """``study__<study>``: the whole study in one run, launched from the UI's launchpad as ``varcap sweep``
    runs it (no backfill, so no wait for the backfill daemon's 30-s tick). The run's tags cover every
    partition of the study and ask for this machine's cores as local workers
    (:data:`assets.sim.LOCAL_WORKERS_TAG`): the plan step simulates the uncached scenarios on warm
    processes in the run's own process, then the run rebuilds ``out_sim_results``. A job of its own: its
    range tags would clash with the partition a backfill of ``sweep__<study>`` gives each run."""
    keys = STUDY_PARTS[study].partition_keys
    return dg.define_asset_job(
        f"study__{study.replace('-', '_')}",
        selection=[study_asset_name(study), "out_sim_results"],
        executor_def=dg.in_process_executor,
        tags={
            "dagster/asset_partition_range_start": keys[0],
            "dagster/asset_partition_range_end": keys[-1],
            "varcap/study": study,
            LOCAL_WORKERS_TAG: str(os.cpu_count() or 1),
        },
        description=f"simulate every scenario of study {study} in one run (as `varcap sweep {study}`), "
        "then rebuild out_sim_results",
    )


STUDY_JOBS = {name: _study_job(name) for name in STUDIES}


def resources() -> dict[str, object]:
    """Every resource, built now (:func:`assets.sim.run_resources`)."""
    return run_resources()


#: evaluates automation conditions (out_sim_results after a study's partitions materialize from the UI);
#: running by default, so `dagster dev` needs no switch in the Automation page
automation_sensor = dg.AutomationConditionSensorDefinition(
    "varcap_automation",
    target=dg.AssetSelection.assets("out_sim_results"),
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
)

defs = dg.Definitions(
    assets=ALL_ASSETS,
    asset_checks=ALL_CHECKS,
    jobs=[ingest_job, capacity_job, *SWEEP_JOBS.values(), *STUDY_JOBS.values()],
    sensors=[automation_sensor, dead_runs_sensor()],
    resources=resources(),
)


def with_current_resources(job: dg.UnresolvedAssetJobDefinition) -> dg.JobDefinition:
    """``job`` resolved against resources built now, so it honours the current ``VARCAP_HOME`` /
    ``VARCAP_WAREHOUSE`` (``defs`` built its resources when this module was imported)."""
    return dg.Definitions(
        assets=ALL_ASSETS, asset_checks=ALL_CHECKS, jobs=[job], resources=resources()
    ).resolve_job_def(job.name)


def sweep_job(study: str, executor: str = "multiprocess") -> dg.JobDefinition:
    """The sweep job of ``study`` on the ``multiprocess`` or ``dask`` executor (a reconstructable target:
    ``dg.build_reconstructable_job("pipelines.definitions", "sweep_job", (study, executor))``).
    ``varcap sweep`` targets :func:`pipelines.dask_sweep.dask_sweep_job` instead, the same job built from
    the study's definitions alone, so its workers do not import this module."""
    if executor == "multiprocess":
        return defs.resolve_job_def(SWEEP_JOBS[study].name)
    if executor == "dask":
        from dagster_dask import dask_executor

        import pipelines.dask_worker  # noqa: F401 — dask sizes Dagster events quietly

        # without out_sim_results: dagster-dask cannot submit a step that belongs to a pool (its task
        # spec iterates the step's RunOpConcurrency record); `varcap sweep` materializes it afterwards
        return with_current_resources(_sweep_job(study, dask_executor, results=False))
    raise ValueError(f"executor must be multiprocess or dask, got {executor!r}")


def ui_asset_job(study: str) -> dg.JobDefinition:
    """The study's asset on the executor the UI launches materializations with (Dagster's default,
    ``multi_or_in_process_executor``), as a reconstructable target
    (``dg.build_reconstructable_job("pipelines.definitions", "ui_asset_job", (study,))``)."""
    return with_current_resources(
        dg.define_asset_job(
            f"ui_materialize__{study.replace('-', '_')}",
            selection=[study_asset_name(study)],
            executor_def=dg.multi_or_in_process_executor,
        )
    )
