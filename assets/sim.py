"""Simulation sweeps as assets: exported inputs, one partitioned asset per study, and the results table.

* ``out_sim_inputs`` exports what scenarios read from the warehouse (workloads, grid carbon signals) to
  ``data/sim/inputs`` so simulations never open DuckDB; its data version is the hash of those files.
* ``out_sim__<study>`` (one per catalogued study) is partitioned by scenario id (static partitions, the
  catalogue order). Its graph has one ``simulate_scenario`` step per scenario (a static fan-out: the
  ``dagster-dask`` executor does not run dynamic mapping), so the run's executor — multiprocess by
  default, dask on a cluster — runs them in parallel; steps outside the run's partition range return at
  once. These steps hold no DuckDB pool. Code version: hash of ``sim/`` + catalogue.
* ``out_sim_results`` (pool ``duckdb_write``) replaces the ``out_sim_results`` table from every
  scenario's ``run.json``; blocking schema/key/range checks.
"""

import hashlib
import json
import time

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from assets.capacity import _key_and_ranges
from assets.core import md_table
from assets.raw import POOL
from assets.schema import OUT_SIM_RESULTS
from assets.warehouse import check_schema, replace_table
from sim.workloads import to_sim_jobs
from studies import sweep
from studies.scenarios import GRIDS, STUDIES, Scenario, all_scenarios, study

CODE_VERSION = sweep.code_version()


@dg.asset(
    group_name="sim",
    pool=POOL,
    kinds={"duckdb", "parquet"},
    deps=["core_jobs", "core_grid_carbon"],
    code_version="1",
    description="Sweep inputs exported from the warehouse to data/sim/inputs (azure and borg2011 jobs on "
    "24-core machines, hourly carbon intensity of the catalogue's grid months), with sha256 versions.",
)
def out_sim_inputs(duckdb: DuckDBResource) -> dg.MaterializeResult:
    out = sweep.inputs_dir()
    out.mkdir(parents=True, exist_ok=True)
    versions: dict[str, str] = {}
    rows: dict[str, int] = {}
    with duckdb.get_connection() as conn:
        for wl in ("azure", "borg2011"):
            df = conn.sql(
                "SELECT * FROM core_jobs WHERE workload = ? ORDER BY submit_s, job_id", params=[wl]
            ).pl()
            if df.height == 0:
                raise dg.Failure(f"core_jobs has no {wl} rows: materialize the ingest job first")
            if wl == "borg2011":
                df = df.filter(~pl.col("censored"))
            jobs, _ = to_sim_jobs(df, 24)
            name = f"workload_{wl}.parquet"
            versions[name] = sweep.write_parquet_atomic(jobs, out / name)
            rows[name] = jobs.height
        series = []
        for grid, spec in GRIDS.items():
            source, month = spec.split(":")
            df = conn.sql(
                "SELECT ts_utc, gco2_per_kwh FROM core_grid_carbon WHERE grid = ? AND source = ? "
                "AND strftime(ts_utc AT TIME ZONE 'UTC', '%Y-%m') = ? ORDER BY ts_utc",
                params=[grid, source, month],
            ).pl()
            if df.height == 0:
                raise dg.Failure(f"core_grid_carbon has no {grid}/{source} rows for {month}")
            series.append(
                df.with_columns(
                    pl.lit(f"{grid}:{spec}").alias("series"), pl.int_range(pl.len()).alias("hour")
                ).select("series", "hour", "ts_utc", "gco2_per_kwh")
            )
        carbon = pl.concat(series)
        versions["grid_carbon.parquet"] = sweep.write_parquet_atomic(carbon, out / "grid_carbon.parquet")
        rows["grid_carbon.parquet"] = carbon.height
    (out / "versions.json").write_text(json.dumps(versions, sort_keys=True, indent=1))
    overall = hashlib.sha256(json.dumps(versions, sort_keys=True).encode()).hexdigest()[:12]
    return dg.MaterializeResult(
        metadata={"files": md_table(pl.DataFrame({"file": list(rows), "rows": list(rows.values())}))},
        data_version=dg.DataVersion(overall),
    )


@dg.op(tags={"kind": "simulation"})
def simulate_scenario(context: dg.OpExecutionContext, params: dict) -> dict:
    """Simulate one scenario (or reuse its cached result) and return its ``run.json`` row; scenarios
    outside the run's partition range return ``{"skipped": id}``."""
    params = dict(params)
    if not params.pop("in_range"):
        return {"skipped": params["id"]}
    params.pop("id")
    sc = Scenario.from_params(params)
    row = sweep.run_scenario(sc)
    m = row["metrics"]
    took = "cache hit" if row["cache_hit"] else f"{row['wall_s']:.1f} s"
    context.log.info(
        f"{sc.id} ({took}): {sc.label()} -> terminations {m['terminations']}, goodput {m['goodput']:.4f}"
    )
    return row


class NoStorageIOManager(dg.ConfigurableIOManager):
    """For sweep outputs whose data lives in data/sim/runs: nothing to store or load."""

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        return None

    def load_input(self, context: dg.InputContext) -> object:
        return None


@dg.op(out=dg.Out(io_manager_key="sim_runs_io"))
def summarize_scenarios(context: dg.OpExecutionContext, rows: list) -> None:
    rows = [r for r in rows if "skipped" not in r]
    hits = sum(r["cache_hit"] for r in rows)
    df = pl.DataFrame(
        {
            "scenario": [r["scenario_id"] for r in rows],
            "policy": [r["params"]["policy"] for r in rows],
            "terminations": [r["metrics"]["terminations"] for r in rows],
            "goodput": [round(r["metrics"]["goodput"], 4) for r in rows],
            "wall_s": [round(r["wall_s"], 2) for r in rows],
        }
    )
    context.add_output_metadata(
        {
            "scenarios": len(rows),
            "cache_hits": hits,
            "sim_seconds": round(sum(r["wall_s"] for r in rows if not r["cache_hit"]), 1),
            "results": md_table(df.head(60)),
        }
    )


def study_asset_name(name: str) -> str:
    return "out_sim__" + name.replace("-", "_")


def sim_study_asset(name: str) -> dg.AssetsDefinition:
    """The study's partitioned asset: a static fan-out with one ``simulate_scenario`` step per scenario, so
    any executor (multiprocess, dask — which cannot run dynamic mapping) runs them in parallel."""
    scs = study(name)
    ids = [s.id for s in scs]
    snake = name.replace("-", "_")

    @dg.op(
        name=f"plan_{snake}",
        ins={"inputs": dg.In(dg.Nothing)},
        out={f"s_{i}": dg.Out(dict) for i in ids},
    )
    def plan(context: dg.OpExecutionContext):
        keys = set(context.partition_keys)
        for sc in scs:
            yield dg.Output({**sc.params(), "id": sc.id, "in_range": sc.id in keys}, output_name=f"s_{sc.id}")

    @dg.graph_asset(
        name=study_asset_name(name),
        group_name="sim",
        partitions_def=dg.StaticPartitionsDefinition(ids),
        backfill_policy=dg.BackfillPolicy.single_run(),
        ins={"inputs": dg.AssetIn("out_sim_inputs", dagster_type=dg.Nothing)},
        code_version=CODE_VERSION,
        kinds={"python", "parquet"},
        description=f"Study `{name}`: one partition per scenario (studies/scenarios.py); per-job tables "
        "and run.json under data/sim/runs/<scenario_id>.",
    )
    def _study(inputs):
        outs = plan(inputs)
        return summarize_scenarios([simulate_scenario.alias(f"sim_{i}")(outs[k]) for k, i in enumerate(ids)])

    return _study


study_assets = [sim_study_asset(n) for n in STUDIES]


@dg.asset(
    group_name="sim",
    pool=POOL,
    kinds={"duckdb"},
    deps=study_assets,
    code_version="1",
    description="One row per simulated scenario: parameters, every metric, code and input versions.",
)
def out_sim_results(duckdb: DuckDBResource) -> dg.MaterializeResult:
    t0 = time.perf_counter()
    known = all_scenarios()
    rows = [r for r in sweep.load_runs() if r["scenario_id"] in known]
    if not rows:
        raise dg.Failure("no scenario results under data/sim/runs: run `varcap sweep STUDY` first")
    df = sweep.results_frame(rows)
    with duckdb.get_connection() as conn:
        replace_table(conn, OUT_SIM_RESULTS, df)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": df.height,
            "seconds": round(time.perf_counter() - t0, 2),
            "by_policy": md_table(df.group_by("policy").len().sort("policy")),
        }
    )


@dg.asset_check(asset=out_sim_results, name="out_sim_results_schema", blocking=True)
def out_sim_results_schema(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as conn:
        o = check_schema(conn, OUT_SIM_RESULTS)
    return dg.AssetCheckResult(passed=o.passed, description=o.description, metadata=o.metadata)


sim_assets = [out_sim_inputs, *study_assets, out_sim_results]
sim_checks = [out_sim_results_schema, *_key_and_ranges(OUT_SIM_RESULTS, out_sim_results)]
