"""Simulation sweeps as assets: exported inputs, one partitioned asset per study, and the results table.

* ``out_sim_inputs`` (workloads) and ``out_sim_grid_signals`` (grid carbon signals), one step, export what
  scenarios read from the warehouse to ``data/sim/inputs`` so simulations never open DuckDB; each one's
  data version is the hash of its files. A study asset depends on those its scenarios read
  (:func:`scenario_deps`).
* ``out_sim__<study>`` (one per catalogued study; a profiled study's quick and full profiles share one,
  its keys beginning with the profile, ``quick/…`` and ``full/…``) is partitioned by scenario (static
  partitions, the catalogue order). Its graph has one ``simulate_scenario`` step per scenario (a static fan-out: the
  ``dagster-dask`` executor does not run dynamic mapping), so the run's executor — multiprocess by
  default, dask on a cluster — runs them in parallel; steps outside the run's partition range return at
  once. These steps hold no DuckDB pool. Code version: hash of ``sim/`` + catalogue.
* ``out_sim_results`` (pool ``duckdb_write``) replaces the ``out_sim_results`` table from every
  scenario's ``run.json``; blocking schema/key/range checks.
"""

import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from assets.checks import POOL, md_table, table_checks
from assets.schema import OUT_SIM_RESULTS
from assets.warehouse import replace_table
from sim.tables import read_core_jobs
from sim.workloads.generators import to_sim_jobs
from studies import budget, catalogue, sweep
from studies.catalogue import STUDIES, STUDY_FILES, all_scenarios, study, study_asset
from studies.keys import full_keys, shared
from studies.scenarios import Scenario
from studies.signals import GRIDS, SIGNAL_INPUTS

CODE_VERSION = sweep.code_version()


#: the exported inputs' assets: the workloads (from ``core_jobs``) and the grid signals (from
#: ``core_grid_carbon``), one asset each so a study that reads no grid signal has no carbon data upstream
SIM_INPUTS, GRID_SIGNALS = "out_sim_inputs", "out_sim_grid_signals"
SIM_INPUT_ASSETS = (SIM_INPUTS, GRID_SIGNALS)
#: the exported files of the grid-signal asset (the others are the workload asset's)
SIGNAL_FILES = frozenset(f for f, _ in SIGNAL_INPUTS.values())


@dg.multi_asset(
    name="out_sim_inputs",
    pool=POOL,
    can_subset=True,
    specs=[
        dg.AssetSpec(
            SIM_INPUTS,
            group_name="sim",
            kinds={"duckdb", "parquet"},
            deps=["core_jobs", "core_swf_jobs"],
            code_version="1",
            description="Sweep workloads exported from the warehouse to data/sim/inputs (azure and borg2011 "
            "jobs on 24-core machines, the SWF log's jobs of core_swf_jobs), with sha256 versions.",
        ),
        dg.AssetSpec(
            GRID_SIGNALS,
            group_name="sim",
            kinds={"duckdb", "parquet"},
            deps=["core_grid_carbon"],
            code_version="1",
            description="Sweep grid signals exported from the warehouse to data/sim/inputs (hourly carbon "
            "intensity of the catalogue's grid months), with sha256 versions.",
        ),
    ],
)
def out_sim_inputs(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource
) -> Iterator[dg.MaterializeResult]:
    """Export the selected inputs (workloads, grid signals); ``versions.json`` keeps the other's entries."""
    selected = {k.to_user_string() for k in context.selected_asset_keys}
    out = sweep.inputs_dir()
    out.mkdir(parents=True, exist_ok=True)
    try:
        versions = sweep.input_versions(out)
    except sweep.SweepInputsError:  # unreadable: written afresh below
        versions = {}
    made: dict[str, dict[str, int]] = {}
    with duckdb.get_connection() as conn:
        if SIM_INPUTS in selected:
            made[SIM_INPUTS] = _export_workloads(conn, out, versions)
        if GRID_SIGNALS in selected:
            made[GRID_SIGNALS] = _export_grid_signals(conn, out, versions)
    sweep.write_json_atomic(versions, out / "versions.json", sort_keys=True, indent=1)
    for key, rows in made.items():
        mine = {f: versions[f] for f in rows}
        yield dg.MaterializeResult(
            asset_key=key,
            metadata={"files": md_table(pl.DataFrame({"file": list(rows), "rows": list(rows.values())}))},
            data_version=dg.DataVersion(
                hashlib.sha256(json.dumps(mine, sort_keys=True).encode()).hexdigest()[:12]
            ),
        )


def _export_workloads(conn, out: Path, versions: dict[str, str]) -> dict[str, int]:  # noqa: ANN001
    """Write the template workloads to ``out`` (their sha256 into ``versions``); file → rows."""
    rows = {}
    for wl in ("azure", "borg2011"):
        df = read_core_jobs(conn, wl)
        if df.height == 0:
            raise dg.Failure(f"core_jobs has no {wl} rows: materialize the ingest job first")
        # right-censored runs are kept at their observed length (a lower bound of their duration):
        # borg2011's are 45 % of its runs and 91 % of its observed core-time, and every one of them is
        # cut at the sample's end (5.57 h), so a Kaplan–Meier estimate has no mass to say how long
        # they would run past it; dropping them left a 0.46 h mean job (with them: 2.02 h; the thesis'
        # Borg 2019 sample, §2.2: 1.66 h)
        jobs, _ = to_sim_jobs(df, 24)
        name = f"workload_{wl}.parquet"
        versions[name] = sweep.write_parquet_atomic(jobs, out / name)
        rows[name] = jobs.height
    from assets.swf import WORKLOAD, export_swf

    swf = export_swf(conn, out)  # None on a warehouse from before core_swf_jobs: the swf workloads need it
    if swf is not None:
        versions[f"workload_{WORKLOAD}.parquet"], rows[f"workload_{WORKLOAD}.parquet"] = swf
    return rows


def _export_grid_signals(conn, out: Path, versions: dict[str, str]) -> dict[str, int]:  # noqa: ANN001
    """Write the catalogue's grid months' carbon intensity to ``out`` (its sha256 into ``versions``)."""
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
    name = SIGNAL_INPUTS["carbon"][0]
    versions[name] = sweep.write_parquet_atomic(carbon, out / name)
    return {name: carbon.height}


MAX_CHUNKS = 32  # static step slots per study; a run uses as many as its `chunks` config asks for
#: executors that submit every step of the plan up front (dagster-dask) instead of skipping a step whose
#: optional input was not yielded: the plan gives their unused slots an empty chunk, which returns before it
#: simulates anything. Every other executor (the UI's ``multi_or_in_process_executor``, ``multiprocess``,
#: ``in_process``, ``execute_in_process``'s) skips the unused slots without starting a process.
RUNS_EVERY_STEP = ("dask",)

#: What a scenario's simulation reads, as the assets that write it: its exported input files
#: (:func:`studies.sweep.input_files`: workloads from :data:`SIM_INPUTS`, grid signals from
#: :data:`GRID_SIGNALS`) and, for a ``spot`` capacity (nested ones included), the traces
#: ``core_spot_availability`` exports. Nothing else: capacity traces and IAS's interval model are built in
#: the scenario's process from its parameters (the code ``out_capacity_traces`` and the interval assets
#: share, which the scenario's code version covers), so a study's upstream is the data it reads and a
#: chapter's lineage is its own (chapter 6's has no carbon or spot asset).
SPOT_ASSET = "core_spot_availability"


def _capacity_kinds(capacity: dict) -> list[str]:
    """The capacity kinds of a catalogue capacity dict, nested specs (a pool's ``of``) included."""
    kinds = [str(capacity.get("kind", ""))]
    for v in capacity.values():
        if isinstance(v, dict):
            kinds += _capacity_kinds(v)
    return kinds


def scenario_deps(sc: Scenario) -> list[str]:
    """The assets that write what ``sc``'s simulation reads (see above)."""
    deps = [GRID_SIGNALS if f in SIGNAL_FILES else SIM_INPUTS for f in sweep.input_files(sc)]
    if "spot" in _capacity_kinds(sc.capacity):
        deps.append(SPOT_ASSET)
    return list(dict.fromkeys(deps))


def study_deps(scenarios: list[Scenario]) -> list[str]:
    """The assets the ``scenarios``' simulations read (:func:`scenario_deps`), in a fixed order."""
    found = {d for sc in scenarios for d in scenario_deps(sc)}
    return [d for d in (SIM_INPUTS, GRID_SIGNALS, SPOT_ASSET) if d in found]


#: a plan step logs each scenario it simulates up to this many (each log line is an event the instance
#: stores); beyond, one line per twentieth of them (each partition's metadata holds its own figures)
LOG_EACH_UP_TO = 50


class PlanConfig(dg.Config):
    """How a sweep run spreads its scenarios over steps."""

    chunks: int = 0  # scenarios to simulate are dealt into this many steps; 0 = this machine's CPU count
    local_workers: int = 0  # > 0: simulate them inside the plan step on this many warm processes instead


#: run tag asking a plan step whose ``local_workers`` is 0 for that many local workers (the UI's
#: ``study__<study>`` jobs carry it: a partitioned job's run config is per partition, its tags per run)
LOCAL_WORKERS_TAG = "varcap/local_workers"


def local_workers(config: PlanConfig, tags: dict[str, str]) -> int:
    """The plan step's local workers: its config's, else the run's :data:`LOCAL_WORKERS_TAG` (0 when
    neither asks; ValueError naming the tag for one that is not a whole number)."""
    if config.local_workers > 0:
        return config.local_workers
    raw = tags.get(LOCAL_WORKERS_TAG, "0")
    try:
        return max(0, int(raw))
    except ValueError:
        raise ValueError(f"run tag {LOCAL_WORKERS_TAG}={raw!r}: give a whole number of processes") from None


def _chunks(todo: list[Scenario], n: int) -> list[list[Scenario]]:
    """Deal ``todo`` round-robin into at most ``n`` non-empty chunks (catalogue order inside a chunk)."""
    n = max(1, min(n, len(todo), MAX_CHUNKS))
    return [c for c in (todo[k::n] for k in range(n)) if c]


@dg.op(name="simulate_chunk", tags={"kind": "simulation"}, out=dg.Out(dg.Nothing))
def simulate_chunk(context: dg.OpExecutionContext, params: list) -> None:
    """Simulate each scenario of a chunk in this process, one after the other (warm after the first).
    A scenario that fails does not stop the others (they are cached); the step then fails naming it. An
    empty chunk (an unused slot on an executor that runs every step) returns at once."""
    if not params:
        return
    failed = []
    for p in params:
        sc = Scenario.from_params(p)
        try:
            row = sweep.run_scenario(sc)
        except Exception as e:
            context.log.error(f"{sc.id} {sc.label()}: {type(e).__name__}: {e}")
            failed.append(f"{sc.id} {sc.label()}: {type(e).__name__}: {e}")
            continue
        m = row["metrics"]
        took = "cache hit" if row["cache_hit"] else f"{row['wall_s']:.1f} s"
        context.log.info(
            f"{sc.id} ({took}): {sc.label()} -> terminations {m['terminations']}, goodput {m['goodput']:.4f}"
        )
    if failed:
        raise dg.Failure(
            f"{len(failed)} of {len(params)} scenarios failed (the others are cached):\n" + "\n".join(failed)
        )


class NoStorageIOManager(dg.ConfigurableIOManager):
    """For sweep outputs whose data lives in data/sim/runs: nothing to store or load."""

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        return None

    def load_input(self, context: dg.InputContext) -> object:
        return None


def run_resources() -> dict[str, object]:
    """Every resource the assets use, built now (so they honour the current ``VARCAP_HOME`` /
    ``VARCAP_WAREHOUSE``): the warehouse, the downloader and the sweep outputs' IO manager."""
    from assets.resources import default_resources

    return {**default_resources(), "sim_runs_io": NoStorageIOManager()}


def partition_metadata(row: dict, key: str, full_key: str | None = None) -> dict[str, object]:
    """One scenario's settings and results as the metadata of its partition (``full_key``: the key with
    the words every scenario of the study shares, :func:`studies.keys.full_keys`)."""
    p, m = row["params"], row["metrics"]
    return {
        "scenario": dg.MetadataValue.text(key),
        **({"scenario_full": dg.MetadataValue.text(full_key)} if full_key else {}),
        "scenario_id": dg.MetadataValue.text(row["scenario_id"]),
        "policy": p["policy"],
        "settings": dg.MetadataValue.json(p["settings"]),
        "workload": p["workload"],
        "capacity": dg.MetadataValue.json(p["capacity"]),
        "machines": int(row["machines"]),
        "cores_per_machine": float(p["cores"]),
        "horizon_days": float(p["horizon_days"]),
        "seed": int(p["seed"]),
        "jobs": int(m["jobs"]),
        "terminations": int(m["terminations"]),
        "goodput": float(m["goodput"]),
        "wasted_fraction": float(m["wasted_fraction"]),
        "latency_p50_s": float(m["latency_p50_s"]),
        "mean_stretch": float(m["mean_stretch"]),
        "sim_wall_s": round(float(row["wall_s"]), 4),  # a small scenario takes milliseconds
        "cache_hit": bool(row.get("cache_hit", False)),
        "per_job_table": dg.MetadataValue.path(row.get("jobs_path", "")),
    }


@dataclass(frozen=True)
class StudyPart:
    """Where a catalogue study lives among the study assets: its asset, the asset's plan step, and the
    study's partition keys in catalogue order (``keys[scenario_id]``). A profiled study's two profiles
    (``<base>-quick`` and ``<base>``) share the asset ``out_sim__<base>``: profile is the first segment of
    the partition key (``quick/…``, ``full/…``), so each profile's keys are one contiguous range."""

    asset: str
    plan: str
    keys: dict[str, str]

    @property
    def partition_keys(self) -> list[str]:
        return list(self.keys.values())


class _Parts(dict[str, StudyPart]):
    """Catalogue study name → :class:`StudyPart`, filled as the study assets are built and, for a study
    whose asset was not built in this process, from the catalogue on first look-up (KeyError for a name
    the catalogue does not hold)."""

    def __missing__(self, name: str) -> StudyPart:
        if name not in STUDIES:
            raise KeyError(name)
        snake = study_asset(name)[0].replace("-", "_")
        part = StudyPart("out_sim__" + snake, f"plan_{snake}", catalogue.partition_keys(name))
        self[name] = part
        return part


#: catalogue study name → where it lives (:class:`_Parts`)
STUDY_PARTS: dict[str, StudyPart] = _Parts()


def plan_config(study_name: str, config: dict) -> dict:
    """The ``ops`` run config giving the plan step of study ``study_name``'s asset ``config``
    (:class:`PlanConfig`'s fields)."""
    part = STUDY_PARTS[study_name]
    return {part.asset: {"ops": {part.plan: {"config": config}}}}


def study_asset_name(name: str) -> str:
    """The asset of catalogue study ``name`` (a profiled study's base asset for either profile)."""
    return catalogue.asset_name(name)


def study_partition_keys(name: str) -> list[str]:
    """Partition keys of catalogue study ``name`` in its asset (catalogue order)."""
    return STUDY_PARTS[name].partition_keys


def asset_studies() -> dict[str, list[tuple[str, str]]]:
    """Study asset base → its catalogue studies as ``(partition-key prefix, study name)``
    (:func:`studies.catalogue.study_asset`): a profiled study's base holds both profiles."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for name in STUDIES:
        base, prefix = study_asset(name)
        groups.setdefault(base, []).append((prefix, name))
    return groups


def sim_study_asset(
    base: str, members: list[tuple[str, str]] | None = None, max_chunks: int = MAX_CHUNKS
) -> dg.AssetsDefinition:
    """The asset of study ``base`` (or of the profiled studies ``members``: ``(key prefix, study name)``),
    one partition per scenario and profile (readable keys from :func:`studies.sweep.partition_keys`,
    mapped to the stable scenario ids).

    A run over a partition range plans in one step: cached scenarios (and those outside the range) are
    left out, the others are dealt into ``chunks`` ``simulate_chunk`` steps that each simulate their
    scenarios one after the other in one warm process (a static fan-out of ``MAX_CHUNKS`` optional slots,
    so the dask executor runs it too; unused slots are skipped without starting a process). The summary
    step records each partition's own settings and metrics as its metadata. ``max_chunks``: fewer slots,
    for an executor that runs every step (:data:`RUNS_EVERY_STEP`: each slot is a step there, with its own
    captured output)."""
    members = members or [("", base)]
    name = base
    snake = base.replace("-", "_")
    asset = "out_sim__" + snake
    by_key: dict[str, Scenario] = {}
    full: dict[str, str] = {}  # partition key → the scenario's full key in its study
    all_scs: dict[str, Scenario] = {}
    common = None
    for prefix, member in members:
        scs = study(member)
        keys = catalogue.partition_keys(member)
        STUDY_PARTS.setdefault(member, StudyPart(asset, f"plan_{snake}", keys))  # as __missing__ would
        by_key.update({keys[s.id]: s for s in scs})
        full.update({keys[i]: k for i, k in full_keys(scs).items()})
        all_scs.update({s.id: s for s in scs})
        if prefix in ("", "full/"):
            common = shared(scs)
    scs = list(all_scs.values())
    profiles = ", ".join(p.rstrip("/") for p, _ in members if p)
    slots = max(1, min(len(scs), max_chunks, MAX_CHUNKS))
    upstream = study_deps(scs)

    @dg.op(
        name=f"plan_{snake}",
        ins={"inputs": dg.In(dg.Nothing)},
        out={
            "ready": dg.Out(dg.Nothing),
            **{f"chunk_{k}": dg.Out(list, is_required=False) for k in range(slots)},
        },
    )
    def plan(context: dg.OpExecutionContext, config: PlanConfig):
        # a scenario of both profiles has two partitions: simulated once
        wanted = list({by_key[k].id: by_key[k] for k in context.partition_keys}.values())
        budget_s = sweep.scenario_timeout_s()
        todo = [sc for sc in wanted if not sweep.is_cached(sc)]
        skipped = [sc for sc in todo if budget.over_budget(sc, budget_s) is not None]
        if skipped:  # ran past this budget before, under this code and these inputs: not tried again
            context.log.warning(
                f"{name}: {len(skipped)} scenarios ran past the {budget_s:g} s budget before and are not run "
                f"again (a larger VARCAP_SCENARIO_TIMEOUT_S tries them): {', '.join(s.id for s in skipped[:10])}"
            )
            todo = [sc for sc in todo if sc not in skipped]
        workers = local_workers(config, context.run.tags)
        if workers > 0 and todo:
            over: list[str] = []
            done: list[str] = []
            step = max(1, len(todo) // 20)

            def log(sc: Scenario, row: dict | None, err: str | None) -> None:
                if budget.is_timeout(err):
                    budget.record(sc, budget_s)
                    over.append(sc.id)
                    context.log.warning(f"{err}: recorded as not run (over budget)")
                elif err:
                    context.log.error(err)
                else:
                    done.append(sc.id)
                    m = row["metrics"]
                    line = (
                        f"{sc.id} ({row['wall_s']:.1f} s): {sc.label()} -> terminations "
                        f"{m['terminations']}, goodput {m['goodput']:.4f}"
                    )
                    if len(todo) <= LOG_EACH_UP_TO:
                        context.log.info(line)
                    elif len(done) % step == 0 or len(done) == len(todo):
                        context.log.info(f"{name}: {len(done)} of {len(todo)} simulated (last: {line})")

            context.log.info(f"{name}: simulating {len(todo)} scenarios on {workers} processes")
            failed = [e for e in sweep.run_many(todo, workers, log, budget_s) if not budget.is_timeout(e)]
            if failed:
                raise dg.Failure(
                    f"{len(failed)} of {len(todo)} scenarios failed (the others are cached):\n"
                    + "\n".join(failed)
                )
            todo = []
        chunks = _chunks(todo, min(config.chunks or os.cpu_count() or 1, slots))
        context.log.info(
            f"{name}: {len(wanted)} scenarios in range, {len(wanted) - len(todo)} cached, {len(todo)} to "
            f"simulate in {len(chunks)} steps"
        )
        yield dg.Output(None, output_name="ready")
        for k, chunk in enumerate(chunks):
            yield dg.Output([sc.params() for sc in chunk], output_name=f"chunk_{k}")
        if context.job_def.executor_def.name in RUNS_EVERY_STEP:
            for k in range(len(chunks), slots):  # e.g. dask runs every step: give the unused ones nothing
                yield dg.Output([], output_name=f"chunk_{k}")

    @dg.op(
        name=f"summarize_{snake}",
        ins={"after": dg.In(dg.Nothing)},
        out=dg.Out(io_manager_key="sim_runs_io"),
    )
    def summarize(context: dg.AssetExecutionContext) -> None:
        # results are read back from run.json (verified like a cache hit), not passed between steps: the
        # same on every executor
        record = context.instance.get_run_record_by_id(context.run_id)
        started = record.start_time if record and record.start_time else 0.0
        rows, missing, over = [], [], 0
        for pk in context.partition_keys:
            row = sweep.cached_result(by_key[pk])
            if row is None and (b := budget.over_budget(by_key[pk])) is not None:
                over += 1  # recorded, with no result: the reproduction reports it as not run
                context.add_asset_metadata(
                    {"not_run": f"over the {b:g} s scenario budget", "scenario_id": by_key[pk].id},
                    partition_key=pk,
                )
                continue
            if row is None:
                missing.append(pk)
                continue
            fresh = datetime.fromisoformat(row["finished_at"]).timestamp() >= started
            rows.append({**row, "cache_hit": not fresh})
            meta = partition_metadata(rows[-1], pk, full[pk])
            context.add_asset_metadata(meta, partition_key=pk)
        if missing:
            raise dg.Failure(f"{len(missing)} scenarios have no valid result: {', '.join(missing[:10])}")
        context.add_output_metadata(
            {
                "scenarios": len(rows),
                "over_budget": over,
                "cache_hits": sum(r["cache_hit"] for r in rows),
                "sim_seconds": round(sum(r["wall_s"] for r in rows if not r["cache_hit"]), 1),
            }
        )

    @dg.graph_asset(
        name=study_asset_name(name),
        group_name="sim",
        partitions_def=dg.StaticPartitionsDefinition(list(by_key)),
        backfill_policy=dg.BackfillPolicy.single_run(),
        ins={d: dg.AssetIn(d, dagster_type=dg.Nothing) for d in upstream},
        code_version=CODE_VERSION,
        kinds={"python", "parquet"},
        tags={"varcap/study": name, **({"varcap/study_file": "yes"} if name in STUDY_FILES else {})},
        description=(
            f"Study `{name}` from the study file {STUDY_FILES[name].path}: {STUDY_FILES[name].description} "
            if name in STUDY_FILES
            else f"Study `{name}`: "
        )
        + (
            f"both profiles ({profiles}) of a reproduction study: one partition per profile and scenario, keyed "
            "`profile/policy/workload/capacity/platform`"
            if profiles
            else "one partition per scenario, keyed `policy/workload/capacity/platform`"
        )
        + " by what differs between them"
        + (f" (every scenario: {common})" if common else "")
        + "; each partition's metadata holds its full key, settings and metrics. "
        "Per-job tables and run.json under data/sim/runs/<scenario_id>.",
    )
    def _study(**reads):
        outs = plan(list(reads.values())) if reads else plan()
        sims = [simulate_chunk.alias(f"sim_chunk_{k}")(outs[k + 1]) for k in range(slots)]
        return summarize([outs[0], *sims])

    return _study


#: study asset base → its asset, built on first use (:func:`study_asset_def`): a process that runs one study
#: (``varcap sweep``) builds that study's scenarios and asset only, not the whole catalogue's
_STUDY_ASSETS: dict[str, dg.AssetsDefinition] = {}


def study_asset_def(name: str, max_chunks: int = MAX_CHUNKS) -> dg.AssetsDefinition:
    """The asset of catalogue study ``name`` (a profiled study's base asset, both profiles), built once per
    process; with ``max_chunks`` below :data:`MAX_CHUNKS`, built anew with that many step slots
    (:func:`sim_study_asset`). KeyError for a name the catalogue does not hold."""
    base = study_asset(name)[0]
    kept = max_chunks >= MAX_CHUNKS
    if kept and base in _STUDY_ASSETS:
        return _STUDY_ASSETS[base]
    members = asset_studies().get(base)
    if members is None:
        raise KeyError(f"unknown study {name!r}")
    asset = sim_study_asset(base, members, max_chunks)
    if kept:
        _STUDY_ASSETS[base] = asset
    return asset


def all_study_assets() -> list[dg.AssetsDefinition]:
    """The asset of every catalogue study (each built once per process), in catalogue order."""
    return [study_asset_def(members[0][1]) for members in asset_studies().values()]


#: Rebuild the results table whenever a study's partitions were materialized (from the CLI or the UI),
#: once no study run is still in progress.
RESULTS_AUTOMATION = (
    dg.AutomationCondition.any_deps_updated().since(
        dg.AutomationCondition.newly_requested() | dg.AutomationCondition.newly_updated()
    )
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~dg.AutomationCondition.in_progress()
).with_label("after study runs")


class ResultsConfig(dg.Config):
    """Which rows of ``out_sim_results`` a run rebuilds."""

    # empty: the whole table from every run directory of a catalogue scenario; else only these catalogue
    # studies' rows (``varcap sweep``), the table's other rows kept as they are
    studies: list[str] = []


def _results_rows(conn, studies: list[str]) -> tuple[pl.DataFrame, list[str]]:  # noqa: ANN001
    """The rows of ``out_sim_results`` to write (:class:`ResultsConfig`) and one message per unreadable run
    directory; the whole table when ``studies`` is empty, the table does not exist yet or its columns are
    not this code's. Failure when no row at all is found."""
    kept = None
    if studies:
        kept = other_rows(conn, OUT_SIM_RESULTS.name, ids := {s.id for n in studies for s in study(n)})
    if kept is not None and set(kept.columns) == set(OUT_SIM_RESULTS.column_names):
        rows, problems = sweep.scan_runs(sorted(ids))
    else:  # the whole table
        kept = None
        known = all_scenarios()
        found, problems = sweep.scan_runs()
        rows = [r for r in found if r["scenario_id"] in known]
    if not rows and (kept is None or kept.height == 0):
        raise dg.Failure("no scenario results under data/sim/runs: run `varcap sweep STUDY` first")
    if not rows:
        return kept, problems  # type: ignore[return-value]
    df = sweep.results_frame(rows)
    if kept is not None and kept.height:
        # a column all null in the fresh rows (no carbon signal) takes the table's type
        df = df.with_columns(pl.col(c).cast(kept.schema[c]) for c in df.columns if df.schema[c] == pl.Null)
        df = pl.concat([kept.select(df.columns).cast(df.schema), df])  # type: ignore[arg-type]
    return df, problems


def other_rows(conn, table: str, ids: set[str]) -> pl.DataFrame | None:  # noqa: ANN001
    """The rows of ``table`` whose ``scenario_id`` is not in ``ids``, or None when the table does not
    exist yet."""
    exists = conn.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]
    ).fetchall()[0][0]  # fetchall: DuckDB refuses the next query while a result is unfinished
    if not exists:
        return None
    return conn.sql(f"SELECT * FROM {table}").pl().filter(~pl.col("scenario_id").is_in(list(ids)))


def results_asset(keys: list[str] | None = None) -> dg.AssetsDefinition:
    """The ``out_sim_results`` asset, downstream of the study assets ``keys`` (default: every catalogue
    study's, :func:`asset_studies`; only their keys, the study assets need not be built)."""
    deps = keys if keys is not None else ["out_sim__" + b.replace("-", "_") for b in asset_studies()]

    @dg.asset(
        name="out_sim_results",
        group_name="sim",
        pool=POOL,
        kinds={"duckdb"},
        deps=deps,
        code_version="2",
        automation_condition=RESULTS_AUTOMATION,
        description="One row per simulated scenario: parameters, every metric, code and input versions. "
        "Rebuilt automatically after a study's partitions materialize (UI backfill or `varcap sweep`, which "
        "rebuilds its study's rows only); a run directory that cannot be read is reported by path and "
        "skipped.",
    )
    def out_sim_results(
        context: dg.AssetExecutionContext, config: ResultsConfig, duckdb: DuckDBResource
    ) -> dg.MaterializeResult:
        t0 = time.perf_counter()
        with duckdb.get_connection() as conn:
            df, problems = _results_rows(conn, config.studies)
            for msg in problems:
                context.log.warning(msg)
            replace_table(conn, OUT_SIM_RESULTS, df)
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": df.height,
                "seconds": round(time.perf_counter() - t0, 2),
                "skipped_run_dirs": dg.MetadataValue.md("\n".join(f"* `{m}`" for m in problems) or "none"),
                "by_policy": md_table(df.group_by("policy").len().sort("policy")),
            }
        )

    return out_sim_results


sim_checks = table_checks(OUT_SIM_RESULTS, "out_sim_results", prefixed=True)


def __getattr__(name: str) -> object:
    """``study_assets``, ``out_sim_results`` and ``sim_assets`` (every study's asset, the results table,
    and both with the exported inputs), built on first use: importing this module builds no study."""
    if name == "study_assets":
        value: object = all_study_assets()
    elif name == "out_sim_results":
        value = results_asset()
    elif name == "sim_assets":
        value = [out_sim_inputs, *all_study_assets(), __getattr__("out_sim_results")]
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
