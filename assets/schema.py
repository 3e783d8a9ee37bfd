"""Core table schemas: columns with units and meanings, keys and value ranges.

One source of truth: the DDL that :func:`assets.warehouse.replace_table` issues, the blocking schema/key
asset checks, the range checks and the README's table documentation all come from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sim.energy import CARBON_METRICS
from sim.metrics import METRICS


@dataclass(frozen=True)
class Col:
    name: str
    sql_type: str
    unit: str
    doc: str
    nullable: bool = True


@dataclass(frozen=True)
class Range:
    """A row-level rule: ``violation`` is SQL true for a bad row."""

    name: str
    violation: str


@dataclass(frozen=True)
class TableSchema:
    name: str
    doc: str
    columns: tuple[Col, ...]
    key: tuple[str, ...]
    ranges: tuple[Range, ...] = field(default_factory=tuple)
    hourly_series: tuple[str, ...] | None = None  # group columns whose ts_utc should be hourly
    #: former names of the table, kept as read-only views over it (compatibility after a rename)
    aliases: tuple[str, ...] = ()

    def ddl(self) -> str:
        cols = ", ".join(f'"{c.name}" {c.sql_type}{"" if c.nullable else " NOT NULL"}' for c in self.columns)
        return f"CREATE OR REPLACE TABLE {self.name} ({cols})"

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column_docs(self) -> dict[str, str]:
        """Per column: its meaning and unit, as the UI's Columns section and DuckDB comments show them."""
        return {c.name: c.doc if c.unit in ("-", "") else f"{c.doc} [{c.unit}]" for c in self.columns}

    def dagster_metadata(self) -> dict[str, object]:
        """Definition metadata for the asset that writes this table: ``dagster/column_schema`` (the UI's
        Columns section) and ``dagster/table_name``."""
        import dagster as dg

        docs = self.column_docs()
        cols = [
            dg.TableColumn(
                c.name,
                c.sql_type,
                description=docs[c.name],
                constraints=dg.TableColumnConstraints(nullable=c.nullable),
            )
            for c in self.columns
        ]
        return {
            "dagster/column_schema": dg.TableSchema(columns=cols),
            "dagster/table_name": f"warehouse.main.{self.name}",
            "table_doc": dg.MetadataValue.md(f"{self.doc}\n\nKey: `({', '.join(self.key)})`"),
        }

    def comments(self) -> dict[str | None, str]:
        """``COMMENT ON`` texts: the table's (key None) and each column's."""
        return {None: self.doc, **self.column_docs()}

    def markdown(self) -> str:
        rows = [f"### `{self.name}`", "", self.doc, "", f"Key: `({', '.join(self.key)})`", ""]
        if self.aliases:
            old = ", ".join(f"`{a}`" for a in self.aliases)
            rows += [f"Former name {old}: still readable, as a view over this table.", ""]
        rows += ["| column | type | unit | meaning |", "|---|---|---|---|"]
        rows += [f"| `{c.name}` | {c.sql_type} | {c.unit} | {c.doc} |" for c in self.columns]
        return "\n".join(rows)


TS = "TIMESTAMP WITH TIME ZONE"
#: an hourly grid or price stamp outside [2000-01-01, now + 2 days] (day-ahead prices run one day ahead)
TS_OUT_OF_RANGE = "ts_utc < TIMESTAMPTZ '2000-01-01 00:00:00+00' OR ts_utc > now() + INTERVAL 2 DAY"

#: How far below zero an EIA-930 fuel's net generation may go before it is refused (MWh in one hour).
#: Net generation is output minus the plants' own use; at night a solar fleet draws station power and
#: EIA-930 reports it slightly negative. Down to this bound the value is kept as reported (it is net
#: generation; every intensity counts it as 0); below it, the hour is a misreport and blocks the table
#: (-5000 MWh of gas used to pass). WAT and OTH (pumped storage, batteries) may go lower.
#: A chosen bound, not a fitted one: well above a fleet's station use, far below a real misreport.
NEGATIVE_GENERATION_TOLERANCE_MWH = 100.0

CORE_JOBS = TableSchema(
    "core_jobs",
    "One row per job (a VM, a GAIA job, or one run of a Borg task). Seconds from the workload's own "
    "time origin.",
    (
        Col("workload", "VARCHAR", "-", "azure, borg2011, pai, mustang", False),
        Col("job_id", "VARCHAR", "-", "unique within the workload", False),
        Col("submit_s", "DOUBLE", "s", "arrival time from the workload's origin", False),
        Col("duration_s", "DOUBLE", "s", "run time (observed up to the censoring point if censored)", False),
        Col("cores", "DOUBLE", "vCPU", "CPU request; null for borg2011 (see cpu_request_norm)"),
        Col(
            "cpu_request_norm",
            "DOUBLE",
            "fraction",
            "CPU request as a fraction of the largest machine (borg2011, which publishes no vCPU); null "
            "otherwise",
        ),
        Col("memory_gb", "DOUBLE", "GB", "memory request (Azure bucket lower bound); null if unknown"),
        Col("memory_norm", "DOUBLE", "fraction", "normalized memory request (borg2011)"),
        Col("priority", "INTEGER", "-", "scheduler priority (borg2011 0-11)"),
        Col(
            "job_class",
            "VARCHAR",
            "-",
            "Azure VM category, or borg2011 end event (finish/fail/kill/evict/lost)",
        ),
        Col("censored", "BOOLEAN", "-", "true when the end is unknown (right-censored)", False),
        Col("left_truncated", "BOOLEAN", "-", "true when it started before the trace", False),
        Col("source_file", "VARCHAR", "-", "raw file the row came from", False),
        Col("line", "BIGINT", "-", "1-based line in that file (borg2011: the SCHEDULE event)", False),
    ),
    ("workload", "job_id"),
    (
        Range("duration_positive", "duration_s <= 0"),
        Range("cores_positive", "cores <= 0"),
        Range("submit_nonnegative", "submit_s < 0"),
        Range("duration_plausible", "duration_s > 1e9"),
        Range("submit_plausible", "submit_s > 1e9"),
        Range("cores_plausible", "cores > 100000"),
        Range("one_cpu_unit", "(cores IS NULL) = (cpu_request_norm IS NULL)"),
        Range("cpu_request_norm_in_range", "cpu_request_norm <= 0 OR cpu_request_norm > 1"),
        Range("memory_in_range", "memory_gb < 0 OR memory_gb > 1e6 OR memory_norm < 0 OR memory_norm > 1"),
        Range("priority_in_range", "priority < 0 OR priority > 11"),
        Range("line_positive", "line < 1"),
    ),
)

CORE_GRID_CARBON = TableSchema(
    "core_grid_carbon",
    "Hourly grid carbon intensity. Electricity Maps rows carry its lifecycle (LCA) intensity; EIA rows "
    "are computed from the fuel mix with the lifecycle emission factors named in `factor_set`.",
    (
        Col("grid", "VARCHAR", "-", "CAISO, ERCOT, MISO, SPP, PJM, NYISO, DE-LU, GB", False),
        Col("zone", "VARCHAR", "-", "upstream zone / balancing-authority code", False),
        Col("ts_utc", TS, "UTC", "start of the hour", False),
        Col("gco2_per_kwh", "DOUBLE", "gCO2eq/kWh", "lifecycle carbon intensity", False),
        Col("gco2_per_kwh_direct", "DOUBLE", "gCO2eq/kWh", "direct (combustion) intensity, if given"),
        Col(
            "reference_gco2_per_kwh", "DOUBLE", "gCO2eq/kWh", "intensity published with the raw file, if any"
        ),
        Col("renewable_pct", "DOUBLE", "%", "renewable share (Electricity Maps)"),
        Col("low_carbon_pct", "DOUBLE", "%", "low-carbon share (Electricity Maps)"),
        Col("source", "VARCHAR", "-", "electricitymaps or eia930", False),
        Col("factor_set", "VARCHAR", "-", "emission-factor set used", False),
        Col("estimated", "BOOLEAN", "-", "upstream marks the value as estimated", False),
        Col("source_file", "VARCHAR", "-", "raw file", False),
    ),
    ("grid", "source", "ts_utc"),
    (
        Range("ts_in_range", TS_OUT_OF_RANGE),
        Range("intensity_in_range", "gco2_per_kwh < 0 OR gco2_per_kwh > 2000"),
        Range("direct_in_range", "gco2_per_kwh_direct < 0 OR gco2_per_kwh_direct > 2000"),
        Range("reference_in_range", "reference_gco2_per_kwh < 0 OR reference_gco2_per_kwh > 2000"),
        Range("renewable_pct_in_range", "renewable_pct < 0 OR renewable_pct > 100"),
        Range("low_carbon_pct_in_range", "low_carbon_pct < 0 OR low_carbon_pct > 100"),
    ),
    hourly_series=("grid", "source"),
)

CORE_GRID_FUEL_MIX = TableSchema(
    "core_grid_fuel_mix",
    "Hourly net generation by fuel, long format (EIA-930 fuel codes).",
    (
        Col("grid", "VARCHAR", "-", "grid name", False),
        Col("ts_utc", TS, "UTC", "start of the hour", False),
        Col("fuel", "VARCHAR", "-", "WND SUN WAT OIL NG COL NUC OTH", False),
        # below -NEGATIVE_GENERATION_TOLERANCE_MWH only for WAT and OTH: range generation_nonnegative
        Col(
            "mwh",
            "DOUBLE",
            "MWh",
            f"net generation in the hour (may be negative: down to -{NEGATIVE_GENERATION_TOLERANCE_MWH:g} MWh "
            "as reported, e.g. solar at night; lower only for WAT and OTH)",
            False,
        ),
        Col("source", "VARCHAR", "-", "eia930", False),
        Col("source_file", "VARCHAR", "-", "raw file", False),
    ),
    ("grid", "source", "ts_utc", "fuel"),
    (
        Range("ts_in_range", TS_OUT_OF_RANGE),
        Range("mwh_plausible", "abs(mwh) > 1e6"),
        Range(
            "generation_nonnegative",
            f"mwh < -{NEGATIVE_GENERATION_TOLERANCE_MWH:g} AND fuel NOT IN ('WAT', 'OTH')",
        ),
    ),
)

CORE_POWER_PRICE = TableSchema(
    "core_power_price",
    "Hourly electricity prices at a market node.",
    (
        Col("market", "VARCHAR", "-", "ERCOT, CAISO", False),
        Col("node", "VARCHAR", "-", "settlement point / pricing node", False),
        Col("ts_utc", TS, "UTC", "interval start", False),
        Col("usd_per_mwh", "DOUBLE", "USD/MWh", "price (may be negative)", False),
        Col("market_type", "VARCHAR", "-", "DAM (day-ahead) or RTM", False),
        Col("source_file", "VARCHAR", "-", "raw file", False),
    ),
    ("market", "node", "market_type", "ts_utc"),
    (Range("ts_in_range", TS_OUT_OF_RANGE), Range("price_plausible", "abs(usd_per_mwh) > 100000")),
    hourly_series=("market", "node", "market_type"),
)

CORE_GRID_MARGINAL = TableSchema(
    "core_grid_marginal",
    "Marginal-emissions style signals (WattTime), kept with the unit the upstream states.",
    (
        Col("grid", "VARCHAR", "-", "WattTime region", False),
        Col("ts_utc", TS, "UTC", "interval start (naive upstream stamps read as UTC)", False),
        Col("moer_value", "DOUBLE", "see unit", "signal value", False),
        Col("unit", "VARCHAR", "-", "unit as far as known", False),
        Col("source", "VARCHAR", "-", "watttime", False),
        Col("source_file", "VARCHAR", "-", "raw file", False),
    ),
    ("grid", "ts_utc"),
    (
        Range("ts_in_range", TS_OUT_OF_RANGE),
        Range("value_nonnegative", "moer_value < 0"),
        Range("value_plausible", "moer_value > 100000"),
    ),
)

CORE_REJECTS = TableSchema(
    "core_rejects",
    "Malformed input rows, with the reason and the raw text; nothing is silently dropped.",
    (
        Col("table_name", "VARCHAR", "-", "core table the row was meant for", False),
        Col("source_file", "VARCHAR", "-", "raw file", False),
        Col("line", "BIGINT", "-", "1-based line in the upstream CSV (header counted)", False),
        Col("reason", "VARCHAR", "-", "why it was rejected", False),
        Col("raw_row", "VARCHAR", "-", "the raw fields, comma-joined"),
    ),
    ("table_name", "source_file", "line"),
    (Range("line_positive", "line < 1"),),
)

RAW_FILES = TableSchema(
    "raw_files",
    "Every raw input file the warehouse was built from: where it came from and its checksum.",
    (
        Col("dataset", "VARCHAR", "-", "raw dataset key", False),
        Col("source", "VARCHAR", "-", "sample, remote, or local (a user's file copied into the raw cache)", False),
        Col("path", "VARCHAR", "-", "local path of the immutable file", False),
        Col("name", "VARCHAR", "-", "file name reported in rejects and errors", False),
        Col("url", "VARCHAR", "-", "upstream URL (remote) or null"),
        Col("bytes", "BIGINT", "bytes", "file size", False),
        Col("sha256", "VARCHAR", "-", "sha256 of the file", False),
        Col("has_header", "BOOLEAN", "-", "upstream CSV has a header row", False),
        Col("registered_at", TS, "UTC", "when the raw asset recorded it", False),
    ),
    ("dataset", "path"),
    (
        Range("bytes_nonnegative", "bytes < 0"),
        Range("sha256_hex", "NOT regexp_full_match(sha256, '[0-9a-f]{64}')"),
        Range("source_known", "source NOT IN ('sample', 'remote', 'local')"),
    ),
)

CORE_SPOT_AVAILABILITY = TableSchema(
    "core_spot_availability",
    "Public spot-instance availability traces (skypilot-org/spot-traces): instances of a pool "
    "available at each tick.",
    (
        Col("trace", "VARCHAR", "-", "varcap trace name, e.g. us-west-2a_v100_16", False),
        Col("tick", "BIGINT", "-", "tick index from the trace's start", False),
        Col("time_s", "DOUBLE", "s", "tick × the trace's gap", False),
        Col("available", "BIGINT", "instances", "instances available at the tick", False),
        Col("nodes", "BIGINT", "instances", "instances requested (the pool's size)", False),
        Col("source_file", "VARCHAR", "-", "raw file", False),
    ),
    ("trace", "tick"),
    (
        Range("available_in_pool", "available < 0 OR available > nodes"),
        Range("time_nonnegative", "time_s < 0"),
    ),
)

CORE_SWF_JOBS = TableSchema(
    "core_swf_jobs",
    "One row per job of the Standard Workload Format (SWF) log that `raw_swf_log` registered (the "
    "Parallel Workloads Archive's format; mapping in sim/workloads/swf.py): cancelled jobs dropped unless "
    "kept by the asset's config, zero-length runs dropped. Seconds from the log's start.",
    (
        Col("workload", "VARCHAR", "-", "swf", False),
        Col("job_id", "VARCHAR", "-", "the log's job number", False),
        Col("submit_s", "DOUBLE", "s", "submit time from the log's start", False),
        Col("duration_s", "DOUBLE", "s", "run time", False),
        Col("cores", "DOUBLE", "processors", "allocated processors (requested when allocated is -1)", False),
        Col("memory_gb", "DOUBLE", "GB", "used memory × processors; null when the log gives -1"),
        Col("requested_s", "DOUBLE", "s", "requested time; null when the log gives -1"),
        Col("status", "INTEGER", "-", "SWF status: 1 completed, 0 failed, 5 cancelled, …", False),
        Col("source_file", "VARCHAR", "-", "raw file the row came from", False),
        Col("line", "BIGINT", "-", "1-based line in that file", False),
    ),
    ("workload", "job_id"),
    (
        Range("duration_positive", "duration_s <= 0"),
        Range("cores_positive", "cores <= 0"),
        Range("submit_nonnegative", "submit_s < 0"),
        Range("memory_nonnegative", "memory_gb < 0"),
        Range("requested_positive", "requested_s <= 0"),
        Range("line_positive", "line < 1"),
    ),
)

CORE_SWF_REJECTS = TableSchema(
    "core_swf_rejects",
    "Lines of the SWF log that are not jobs, with the field at fault (written with `core_swf_jobs` in "
    "one transaction; the same lines are in `core_rejects`).",
    (
        Col("source_file", "VARCHAR", "-", "raw file", False),
        Col("line", "BIGINT", "-", "1-based line in the log", False),
        Col("field", "VARCHAR", "-", "SWF field at fault (`line` for a wrong field count)", False),
        Col("value", "VARCHAR", "-", "the field's text as written"),
        Col("reason", "VARCHAR", "-", "why the line is not a job", False),
    ),
    ("source_file", "line"),
    (Range("line_positive", "line < 1"),),
)

CORE_TABLES = {
    s.name: s
    for s in (
        CORE_JOBS,
        CORE_GRID_CARBON,
        CORE_GRID_FUEL_MIX,
        CORE_POWER_PRICE,
        CORE_GRID_MARGINAL,
        CORE_SPOT_AVAILABILITY,
        CORE_SWF_JOBS,
        CORE_SWF_REJECTS,
    )
}
CORE_BUILDS = TableSchema(
    "core_builds",
    "Per core table, the raw files its current version was built from (written in the transaction that "
    "swaps the table in). `raw_files` lists what the raw assets registered last; after a failed core "
    "rebuild the two differ, and this table says which files the core table really holds.",
    (
        Col("table_name", "VARCHAR", "-", "core table", False),
        Col("dataset", "VARCHAR", "-", "raw dataset key", False),
        Col("name", "VARCHAR", "-", "raw file name (as in `source_file`)", False),
        Col("sha256", "VARCHAR", "-", "sha256 of the file when the table was built", False),
        Col("built_at", TS, "UTC", "when the table was swapped in", False),
    ),
    ("table_name", "dataset", "name"),
)

ALL_TABLES = {
    **CORE_TABLES,
    CORE_REJECTS.name: CORE_REJECTS,
    RAW_FILES.name: RAW_FILES,
    CORE_BUILDS.name: CORE_BUILDS,
}


# ------------------------------------------------------------------------------- capacity / intervals
CAPACITY_TRACES = TableSchema(
    "out_capacity_traces",
    "One row per capacity trace: how it was generated.",
    (
        Col("trace_id", "VARCHAR", "-", "stable id, e.g. rw-f1-s0.15-m1000-d30-seed0", False),
        Col(
            "generator",
            "VARCHAR",
            "-",
            "random_walk, random_uniform, risk_aware_walk, carbon_budget, …",
            False,
        ),
        Col("machines", "INTEGER", "machines", "platform size", False),
        Col("horizon_s", "DOUBLE", "s", "trace length", False),
        Col("period_s", "DOUBLE", "s", "change period (null if irregular)"),
        Col("seed", "BIGINT", "-", "generator seed (null if deterministic)"),
        Col("params_json", "VARCHAR", "-", "generator parameters", False),
        Col("source", "VARCHAR", "-", "synthetic or the core table/series it came from", False),
    ),
    ("trace_id",),
    (Range("positive_size", "machines <= 0 OR horizon_s <= 0"),),
    aliases=("capacity_traces",),
)

CAPACITY_POINTS = TableSchema(
    "out_capacity_points",
    "Capacity step functions: machines alive from time_s until the next point of the same trace.",
    (
        Col("trace_id", "VARCHAR", "-", "trace", False),
        Col("time_s", "DOUBLE", "s", "from the trace start", False),
        Col("machines_alive", "INTEGER", "machines", "machines on (LIFO: indices 0…n−1)", False),
    ),
    ("trace_id", "time_s"),
    (Range("nonnegative", "machines_alive < 0 OR time_s < 0"),),
    aliases=("capacity_points",),
)

CAPACITY_CHARACTERIZATION = TableSchema(
    "out_capacity_characterization",
    "Per trace: level, variability, steps and realized change frequency (fractions of machines).",
    (
        Col("trace_id", "VARCHAR", "-", "trace", False),
        Col("mean_frac", "DOUBLE", "fraction", "time-weighted mean machines alive / machines", False),
        Col("cv", "DOUBLE", "-", "coefficient of variation of machines alive"),
        Col("min_frac", "DOUBLE", "fraction", "minimum", False),
        Col("max_frac", "DOUBLE", "fraction", "maximum", False),
        Col("dynamic_range", "DOUBLE", "fraction", "max − min", False),
        Col("change_count", "BIGINT", "-", "number of changes", False),
        Col("up_count", "BIGINT", "-", "increases", False),
        Col("down_count", "BIGINT", "-", "decreases", False),
        Col("step_mean_frac", "DOUBLE", "fraction", "mean |step| of changes", False),
        Col("step_p50_frac", "DOUBLE", "fraction", "median |step|", False),
        Col("step_max_frac", "DOUBLE", "fraction", "largest |step|", False),
        Col("realized_changes_per_hour", "DOUBLE", "1/h", "changes per hour", False),
        Col("intervals", "BIGINT", "-", "machine intervals under LIFO"),
        Col("interval_mean_s", "DOUBLE", "s", "mean length of complete intervals"),
    ),
    ("trace_id",),
    aliases=("capacity_characterization",),
)

MACHINE_INTERVALS = TableSchema(
    "out_machine_intervals",
    "Maximal on-periods of each machine under LIFO termination.",
    (
        Col("trace_id", "VARCHAR", "-", "trace", False),
        Col("machine", "INTEGER", "-", "machine index (0 = safest)", False),
        Col("start_s", "DOUBLE", "s", "interval start", False),
        Col("end_s", "DOUBLE", "s", "interval end (horizon if right-censored)", False),
        Col("length_s", "DOUBLE", "s", "end − start", False),
        Col("left_censored", "BOOLEAN", "-", "already on at time 0 (true start unknown)", False),
        Col("right_censored", "BOOLEAN", "-", "still on at the horizon", False),
    ),
    ("trace_id", "machine", "start_s"),
    (Range("positive_length", "length_s <= 0 OR end_s <> start_s + length_s"),),
    aliases=("machine_intervals",),
)

MACHINE_INTER_CHANGE = TableSchema(
    "out_machine_inter_change_times",
    "Time between consecutive on/off changes of the same machine (SlackSched's input).",
    (
        Col("trace_id", "VARCHAR", "-", "trace", False),
        Col("machine", "INTEGER", "-", "machine index", False),
        Col("time_s", "DOUBLE", "s", "time of the later change", False),
        Col("gap_s", "DOUBLE", "s", "time since the machine's previous change", False),
    ),
    ("trace_id", "machine", "time_s"),
    (Range("positive_gap", "gap_s <= 0"),),
    aliases=("machine_inter_change_times",),
)

INTERVAL_SURVIVAL = TableSchema(
    "out_interval_survival",
    "Kaplan–Meier survival of interval length per trace (band −1: all machines; else machine-index band).",
    (
        Col("trace_id", "VARCHAR", "-", "trace", False),
        Col("band", "INTEGER", "-", "−1 = all machines, else band index", False),
        Col("machine_lo", "INTEGER", "-", "first machine of the band", False),
        Col("machine_hi", "INTEGER", "-", "last machine of the band", False),
        Col("time_s", "DOUBLE", "s", "interval length", False),
        Col("survival", "DOUBLE", "probability", "S(time_s) = P(length > time_s)", False),
    ),
    ("trace_id", "band", "time_s"),
    (Range("probability", "survival < 0 OR survival > 1"),),
    aliases=("interval_survival",),
)

INTERVAL_CONDITIONAL = TableSchema(
    "out_interval_conditional",
    "P(an interval with uptime u lasts d more seconds) on a grid, per trace (all machines).",
    (
        Col("trace_id", "VARCHAR", "-", "trace", False),
        Col("uptime_s", "DOUBLE", "s", "time the interval has already lasted", False),
        Col("duration_s", "DOUBLE", "s", "further time needed", False),
        Col("p_survive", "DOUBLE", "probability", "S(u + d) / S(u)", False),
        Col("mean_remaining_s", "DOUBLE", "s", "E[remaining | uptime] (restricted mean)", False),
    ),
    ("trace_id", "uptime_s", "duration_s"),
    (Range("probability", "p_survive < 0 OR p_survive > 1"),),
    aliases=("interval_conditional",),
)

CAPACITY_TABLES = {
    s.name: s
    for s in (
        CAPACITY_TRACES,
        CAPACITY_POINTS,
        CAPACITY_CHARACTERIZATION,
        MACHINE_INTERVALS,
        MACHINE_INTER_CHANGE,
        INTERVAL_SURVIVAL,
        INTERVAL_CONDITIONAL,
    )
}
ALL_TABLES.update(CAPACITY_TABLES)


# ------------------------------------------------------------------------------- simulation sweeps
OUT_SIM_RESULTS = TableSchema(
    "out_sim_results",
    "One row per simulated scenario (`varcap sweep`): its parameters, every metric, and the versions it "
    "was computed from. Per-job outcomes are in `jobs_path` (parquet).",
    (
        Col("scenario_id", "VARCHAR", "-", "hash of the scenario parameters (studies/scenarios.py)", False),
        Col("workload", "VARCHAR", "-", "azure, borg2011, zipf-1.5, harvest-tasks, …", False),
        Col("capacity_kind", "VARCHAR", "-", "random_walk, carbon_budget, harvest, …", False),
        Col("capacity_json", "VARCHAR", "-", "capacity parameters", False),
        Col("policy", "VARCHAR", "-", "registered policy name", False),
        Col("settings_json", "VARCHAR", "-", "policy parameters (`--set`)", False),
        Col("machines", "BIGINT", "machines", "platform size used (resolved if sized to the load)", False),
        Col("cores", "DOUBLE", "cores", "cores per machine", False),
        Col("horizon_s", "DOUBLE", "s", "simulated time", False),
        Col("seed", "BIGINT", "-", "scenario seed", False),
        # the metric columns: one per entry of sim.metrics.METRICS (the one list of metrics)
        *(Col(m.name, "BIGINT" if m.kind is int else "DOUBLE", m.unit, m.description) for m in METRICS),
        *(Col(m.name, "DOUBLE", m.unit, m.description) for m in CARBON_METRICS),  # sim/energy.py
        Col("wall_s", "DOUBLE", "s", "simulation wall time of the run that produced the row", False),
        Col("code_version", "VARCHAR", "-", "hash of the simulator and catalogue sources", False),
        Col("inputs_version", "VARCHAR", "-", "data version of out_sim_inputs used", False),
        Col("jobs_path", "VARCHAR", "-", "per-job table, relative to the project home", False),
        Col("finished_at", TS, "-", "when the simulation finished", False),
    ),
    ("scenario_id",),
    (
        Range(
            "fractions_sum_to_one",
            "abs(goodput + wasted_fraction + in_flight_fraction + idle_fraction - 1) > 1e-6",
        ),
    ),
)
OUT_STUDY_RESULTS = TableSchema(
    "out_study_results",
    "The reproduction studies' rows of `out_sim_results`, per profile (asset partition `quick` or `full`): "
    "what the chapter reports read, rebuilt from exactly that profile's study partitions (`varcap run`: "
    "quick; `varcap reproduce` then `varcap reports`: full).",
    (
        Col("profile", "VARCHAR", "-", "reproduction profile: quick or full", False),
        *OUT_SIM_RESULTS.columns,
    ),
    ("profile", "scenario_id"),
    OUT_SIM_RESULTS.ranges,
)
SIM_TABLES = {OUT_SIM_RESULTS.name: OUT_SIM_RESULTS, OUT_STUDY_RESULTS.name: OUT_STUDY_RESULTS}
ALL_TABLES.update(SIM_TABLES)

OUT_REPRODUCTION = TableSchema(
    "out_reproduction",
    "One row per paper headline result and reading (`varcap reproduce`): the paper's value and claim, "
    "varcap's mean over replicates with a 95 % interval inside the value's possible range (`ci_method`), the acceptance band "
    "(rules in `studies/claims.py`, anchors and bands in `studies/<paper>/`; written before the runs unless `reading_history` "
    "says when it changed), for rows outside the band the run that explains it, and the commit and time of the code that "
    "computed the row. Alternative readings of an ambiguous text have `headline_id` `<id>@<reading>`.",
    (
        Col(
            "headline_id",
            "VARCHAR",
            "-",
            "fixed id naming the paper and section, e.g. thesis-6.2-ias-cut-zipf-1.5 (former names: "
            "studies/provenance.py)",
            False,
        ),
        Col("reading", "VARCHAR", "-", "which reading of the text (default first)", False),
        Col("paper", "VARCHAR", "-", "the paper (000 thesis … 004 Harmony)", False),
        Col("section", "VARCHAR", "-", "section / figure / table of the claim", False),
        Col("anchor_value", "DOUBLE", "unit", "the paper's number", False),
        Col("anchor_text", "VARCHAR", "-", "the paper's words", False),
        Col("unit", "VARCHAR", "-", "unit of anchor, mean and band", False),
        Col("varcap_mean", "DOUBLE", "unit", "varcap's mean over replicates"),
        Col("ci_low", "DOUBLE", "unit", "95 % CI lower bound (method: ci_method)"),
        Col("ci_high", "DOUBLE", "unit", "95 % CI upper bound"),
        Col(
            "replicates",
            "BIGINT",
            "runs",
            "values behind the mean: decisive replicates (or, for a share, replicates with a decisive unit)",
            False,
        ),
        Col("band_low", "DOUBLE", "unit", "acceptance band, lower end", False),
        Col("band_high", "DOUBLE", "unit", "acceptance band, upper end", False),
        Col("within_band", "BOOLEAN", "-", "mean inside the band and no flag", False),
        Col(
            "explanation",
            "VARCHAR",
            "-",
            "for a row outside its band: the cause and the run showing it",
            False,
        ),
        Col(
            "profile",
            "VARCHAR",
            "-",
            "full (the papers' sizes) or quick (a smoke test, not a reproduction)",
            False,
        ),
        Col(
            "ci_method",
            "VARCHAR",
            "-",
            "how the interval was computed inside the value's possible range: student-t, t on log(b − x) "
            "(a cut ≤ 100 %: on what remains), t on logit (two bounds, e.g. r), bootstrap (a value on a "
            "bound), single replicate; empty if not run",
            False,
        ),
        Col(
            "flag",
            "VARCHAR",
            "-",
            "why a row whose mean lies in the band is still not in band (an interval that includes no effect "
            "where the paper claims one; one run, which has no interval) and the degenerate runs left out, "
            "with their reasons ('not tested: …' when every run is degenerate)",
            False,
        ),
        Col(
            "reading_history",
            "VARCHAR",
            "-",
            "when (commit) and why the anchor, band or default reading changed, and whether after its "
            "values were seen; empty: as first written",
            False,
        ),
        Col(
            "n_decisive",
            "BIGINT",
            "runs",
            "runs where the policy under test faced the decision the claim is about (replicates, or "
            "cell/instance runs of a share); the only ones the mean, interval and band test count",
            False,
        ),
        Col("n_degenerate", "BIGINT", "runs", "runs left out as degenerate (reasons in flag)", False),
        Col(
            "n_not_run",
            "BIGINT",
            "runs",
            "units (instances) left out because a scenario ran past the time budget "
            "(VARCAP_SCENARIO_TIMEOUT_S; studies/budget.py): neither decisive nor degenerate",
            False,
        ),
        Col(
            "verdict",
            "VARCHAR",
            "-",
            "in band, out of band, effect not shown (mean in band, interval not clear of no effect), "
            "not tested (every run degenerate) or not run",
            False,
        ),
        Col(
            "notes",
            "VARCHAR",
            "-",
            "computed notes shown whatever the verdict (Table 6.2: the cut per 30-day month, its drift, "
            "the steady-state window)",
            False,
        ),
        Col(
            "code_commit",
            "VARCHAR",
            "-",
            "git commit of the code that computed the row (+dirty: with uncommitted changes; empty: unknown)",
            False,
        ),
        Col("computed_at_utc", "VARCHAR", "-", "when the row was computed, ISO 8601 UTC", False),
    ),
    ("headline_id", "profile"),
)
ALL_TABLES[OUT_REPRODUCTION.name] = OUT_REPRODUCTION

OUT_REPRODUCTION_INSTANCES = TableSchema(
    "out_reproduction_instances",
    "The generalization rows' instances (`varcap reproduce`; studies/generalization_claims/): per central "
    "claim and generated instance (drawn from one master seed, no study built around it) both arms' results, "
    "whether the pair is decisive (the policy faced the decision the claim is about) and whether the claim "
    "holds there. The `-generalization` rows of out_reproduction are the share of decisive instances that hold.",
    (
        Col("claim", "VARCHAR", "-", "headline_id of the generalization row", False),
        Col("instance", "VARCHAR", "-", "gen<master seed>-<index>", False),
        Col("machines", "BIGINT", "machines", "platform size", False),
        Col(
            "changes_per_hour",
            "DOUBLE",
            "1/h",
            "random walk's change rate (not used by the harvest model)",
            False,
        ),
        Col("step", "DOUBLE", "fraction", "random walk's step (not used by the harvest model)", False),
        Col("alpha", "DOUBLE", "-", "Pareto shape of the durations (not used by the harvest model)", False),
        Col(
            "min_duration_s", "DOUBLE", "s", "Pareto minimum duration (not used by the harvest model)", False
        ),
        Col("mix", "VARCHAR", "-", "core mix, light or heavy (not used by the harvest model)", False),
        Col("load", "DOUBLE", "fraction", "offered load of the mean capacity", False),
        Col("horizon_days", "DOUBLE", "days", "simulated horizon", False),
        Col(
            "baseline_terminations", "DOUBLE", "kills", "the baseline's terminations; null if not run (over budget)"
        ),
        Col("policy_terminations", "DOUBLE", "kills", "the policy's terminations; null if not run (over budget)"),
        Col("termination_cut_pct", "DOUBLE", "%", "100 × (baseline − policy) / baseline; null if baseline 0"),
        Col(
            "goodput_pp",
            "DOUBLE",
            "pp",
            "policy − baseline goodput (goodput_partial for TargetASAP); null if not run (over budget)",
        ),
        Col(
            "baseline_mean_jct_s", "DOUBLE", "s", "SlackSched: random matching's mean JCT (jobs done in both)"
        ),
        Col("policy_mean_jct_s", "DOUBLE", "s", "SlackSched: SlackSched's mean JCT (jobs done in both)"),
        Col("decisive", "BOOLEAN", "-", "the policy faced the decision the claim is about", False),
        Col("degenerate_reason", "VARCHAR", "-", "why not decisive (empty when decisive)", False),
        Col("holds", "BOOLEAN", "-", "the claim holds on this instance (null when degenerate)"),
        Col("profile", "VARCHAR", "-", "full or quick", False),
    ),
    ("claim", "instance", "profile"),
)
ALL_TABLES[OUT_REPRODUCTION_INSTANCES.name] = OUT_REPRODUCTION_INSTANCES

OUT_THESIS_IAS_INSTANCES = TableSchema(
    "out_thesis_ias_instances",
    "Thesis ch. 6 beyond its set-ups (studies/thesis/ias_table.py): `ias` (the thesis' algorithm) and "
    "`ias-general` (varcap's extension) against First-Fit per instance of thesis-ias-observed (CAISO, ERCOT, "
    "MISO carbon-budget capacity) and thesis-ias-generalization (the reproduction's generated instances), "
    "from the studies' cached runs; one partition per profile. The claim (§6.2) holds on an instance when "
    "the cut is > 0 and goodput ≥ First-Fit's − 2 pp; only decisive instances count.",
    (
        Col("study", "VARCHAR", "-", "thesis-ias-observed or thesis-ias-generalization (base name)", False),
        Col("instance", "VARCHAR", "-", "<grid> <workload> s<seed> (observed) or gen<master seed>-<index>", False),
        Col("grid", "VARCHAR", "-", "balancing authority of the carbon budget (null: generated instance)"),
        Col("workload", "VARCHAR", "-", "workload name (sim/workloads/registry.py)", False),
        Col("seed", "BIGINT", "-", "workload seed", False),
        Col("machines", "BIGINT", "machines", "platform size"),
        Col("jobs", "BIGINT", "jobs", "jobs of the instance (First-Fit's run)"),
        Col("policy", "VARCHAR", "-", "ias or ias-general", False),
        Col("ff_terminations", "BIGINT", "kills", "First-Fit's terminations"),
        Col("terminations", "BIGINT", "kills", "the policy's terminations (null: not run)"),
        Col(
            "termination_cut_pct",
            "DOUBLE",
            "%",
            "100 × (First-Fit − policy) / First-Fit terminations; null when First-Fit terminates nothing",
        ),
        Col("ff_goodput_pct", "DOUBLE", "%", "First-Fit's goodput"),
        Col("goodput_diff_pp", "DOUBLE", "pp", "policy − First-Fit goodput"),
        Col("holds", "BOOLEAN", "-", "cut > 0 and goodput ≥ First-Fit's − 2 pp (null: not run)"),
        Col(
            "decisive",
            "BOOLEAN",
            "-",
            "IAS faces the decision the claim is about (studies.generalization.ias_decisive): some job not "
            "big under H1, some such job longer than the change period, First-Fit terminates something",
            False,
        ),
        Col("degenerate_reason", "VARCHAR", "-", "why not decisive, or `not run: …` (empty when decisive)", False),
        Col("small_jobs", "BIGINT", "jobs", "jobs not big under IAS's H1 (defaults)"),
        Col("outliving_jobs", "BIGINT", "jobs", "small jobs longer than the time between two capacity changes"),
        Col("ff_wall_s", "DOUBLE", "s", "First-Fit run's wall time (as the sweep recorded it)"),
        Col("wall_s", "DOUBLE", "s", "the policy run's wall time (as the sweep recorded it)"),
        Col("profile", "VARCHAR", "-", "full or quick", False),
    ),
    ("study", "instance", "policy", "profile"),
    (
        Range("cut_at_most_100", "termination_cut_pct > 100"),
        Range("goodput_diff_in_range", "abs(goodput_diff_pp) > 100"),
        Range("decisive_has_no_reason", "decisive AND degenerate_reason <> ''"),
        Range("degenerate_has_a_reason", "NOT decisive AND degenerate_reason = ''"),
        Range("cut_only_with_ff_kills", "(termination_cut_pct IS NULL) <> (ff_terminations IS NULL OR ff_terminations = 0 OR terminations IS NULL)"),
    ),
)
ALL_TABLES[OUT_THESIS_IAS_INSTANCES.name] = OUT_THESIS_IAS_INSTANCES

# ------------------------------------------------------------------------------------- harmony (paper 004)
_H_GROUP = Col("priority_group", "VARCHAR", "-", "production (9–11), other (2–8), gratis (0–1)", False)
HARMONY_TASK_CLASSES = TableSchema(
    "out_harmony_task_classes",
    "Paper 004 §5.1 task classes: K-means size clusters per priority group (K by the elbow rule), each "
    "split into short/long by a K = 2 K-means on log duration; member statistics and the Theorem 1 "
    "container size (ε = 0.001, |R| = 2, M^k = 100). cpu and memory are fractions of the largest machine.",
    (
        Col("class_id", "BIGINT", "-", "2 × size_cluster + (1 if long)", False),
        Col("size_cluster", "BIGINT", "-", "queue class, production clusters first", False),
        _H_GROUP,
        Col("length", "VARCHAR", "-", "short or long", False),
        Col("centroid_cpu", "DOUBLE", "fraction", "K-means centroid (cpu request)", False),
        Col("centroid_mem", "DOUBLE", "fraction", "K-means centroid (memory request)", False),
        Col("mean_cpu", "DOUBLE", "fraction", "member mean cpu request μ", False),
        Col("mean_mem", "DOUBLE", "fraction", "member mean memory request μ", False),
        Col("std_cpu", "DOUBLE", "fraction", "member standard deviation σ", False),
        Col("std_mem", "DOUBLE", "fraction", "member standard deviation σ", False),
        Col("max_cpu", "DOUBLE", "fraction", "largest member request", False),
        Col("max_mem", "DOUBLE", "fraction", "largest member request", False),
        Col("container_cpu", "DOUBLE", "fraction", "Theorem 1 container size μ + βσ (≤ max)", False),
        Col("container_mem", "DOUBLE", "fraction", "Theorem 1 container size μ + βσ (≤ max)", False),
        Col("threshold_s", "DOUBLE", "s", "short/long split (null: no long tasks)"),
        Col("duration_mean_s", "DOUBLE", "s", "mean member duration (censored runs as observed)", False),
        Col("duration_cv2", "DOUBLE", "-", "squared coefficient of variation of duration", False),
        Col("tasks", "BIGINT", "tasks", "members", False),
    ),
    ("class_id",),
    (
        Range(
            "container_covers_mean", "container_cpu < mean_cpu - 1e-12 OR container_mem < mean_mem - 1e-12"
        ),
        Range("tasks_nonnegative", "tasks < 0"),
    ),
    aliases=("harmony_task_classes",),
)
HARMONY_DEMAND = TableSchema(
    "out_harmony_demand",
    "Paper 004 §5.2 demand per 5-minute control interval and size class of the study workload: observed "
    "and forecast arrivals (ARIMA on a trailing window; a forecast reads only earlier intervals), "
    "long-running tasks, and the containers required (short: M/G/N eq. 1–2 for the group's target delay; "
    "long: the forecast count).",
    (
        Col("workload", "VARCHAR", "-", "borg2011-sample or borg2011-7d", False),
        Col("interval", "BIGINT", "-", "control interval index", False),
        Col("t_s", "DOUBLE", "s", "interval start", False),
        Col("size_cluster", "BIGINT", "-", "queue class", False),
        _H_GROUP,
        Col("arrivals", "DOUBLE", "tasks", "arrivals in the interval", False),
        Col("arrivals_forecast", "DOUBLE", "tasks", "one-step-ahead forecast", False),
        Col("long_running", "DOUBLE", "tasks", "tasks past their short/long threshold at the start", False),
        Col("long_running_forecast", "DOUBLE", "tasks", "one-step-ahead forecast", False),
        Col("containers_short", "DOUBLE", "containers", "M/G/N containers for the target delay", False),
        Col("containers_long", "DOUBLE", "containers", "containers for long-running tasks", False),
    ),
    ("workload", "interval", "size_cluster"),
    (Range("forecasts_nonnegative", "arrivals_forecast < 0 OR long_running_forecast < 0"),),
    aliases=("harmony_demand",),
)
HARMONY_RESULTS = TableSchema(
    "out_harmony_results",
    "Paper 004 §9: one row per Harmony scenario (workload × scheme baseline/cbp/cbs × over-provisioning ω): "
    "energy (eq. 6, SPECpower-based idle/peak power, see sim/harmony/machines.py), energy cost incl. "
    "cooling (× 1.8) and switching (0.5 ¢ per power-on), scheduling delay percentiles per priority group "
    "(tasks still waiting at the end count with their wait so far), utilization.",
    (
        Col("scenario_id", "VARCHAR", "-", "hash of the scenario parameters", False),
        Col("study", "VARCHAR", "-", "harmony, harmony-quick, harmony-7d, harmony-headline, harmony-smoke", False),
        Col("workload", "VARCHAR", "-", "borg2011-sample or borg2011-7d", False),
        Col("scheme", "VARCHAR", "-", "baseline, cbp, cbs", False),
        Col("omega", "DOUBLE", "-", "over-provisioning factor ω (unused by the baseline)", False),
        Col("machine_fraction", "DOUBLE", "-", "fraction of Table 2's 10,000 machines", False),
        Col("seed", "BIGINT", "-", "seed", False),
        Col("efficiency", "VARCHAR", "-", "baseline type-order reading: paper, cpu, capacity"),
        Col("tasks", "DOUBLE", "tasks", "tasks simulated", False),
        Col("unscheduled", "DOUBLE", "tasks", "tasks still waiting at the end", False),
        Col("tasks_steady", "DOUBLE", "tasks", "tasks submitted after the warm-up (3,600 s)"),
        Col(
            "unscheduled_steady",
            "DOUBLE",
            "tasks",
            "tasks submitted after the warm-up and over an interval before the end, still waiting at the end",
        ),
        Col("energy_kwh", "DOUBLE", "kWh", "server energy (without cooling)", False),
        Col("energy_cost_usd", "DOUBLE", "USD", "energy × price × 1.8 + switching", False),
        Col("switching_usd", "DOUBLE", "USD", "power-ons × 0.5 ¢", False),
        Col("cpu_util", "DOUBLE", "fraction", "mean over intervals of used / on cpu", False),
        Col("mem_util", "DOUBLE", "fraction", "mean over intervals of used / on memory", False),
        Col("machines_on_mean", "DOUBLE", "machines", "mean machines on", False),
        *(
            Col(f"delay_{s}_s_{g}", "DOUBLE", "s", f"scheduling delay {s} ({g})")
            for g in ("all", "production", "other", "gratis", "steady")
            for s in ("p50", "p90", "p99", "mean")
        ),
        Col("wall_s", "DOUBLE", "s", "simulation wall time", False),
        Col("lp_seconds", "DOUBLE", "s", "time in DCP-RELAX", False),
    ),
    ("study", "scenario_id"),  # a scenario may belong to two studies (harmony-headline ⊂ harmony)
    (Range("energy_positive", "energy_kwh <= 0 OR energy_cost_usd <= 0"),),
    aliases=("harmony_results",),
)
HARMONY_INTERVALS = TableSchema(
    "out_harmony_intervals",
    "Paper 004 §9 per control interval and scenario: machines on per type (time-averaged, Table 2 order "
    "R210, R515, DL385, DL585), energy and cost, utilization, queue and containers.",
    (
        Col("scenario_id", "VARCHAR", "-", "scenario", False),
        Col("interval", "BIGINT", "-", "control interval", False),
        Col("t_s", "DOUBLE", "s", "interval start", False),
        Col("energy_kwh", "DOUBLE", "kWh", "server energy", False),
        Col("energy_cost_usd", "DOUBLE", "USD", "incl. cooling and switching", False),
        Col("power_ons", "BIGINT", "machines", "machines powered on at the decision", False),
        Col("cpu_util", "DOUBLE", "fraction", "used / on cpu", False),
        Col("mem_util", "DOUBLE", "fraction", "used / on memory", False),
        Col("queued", "BIGINT", "tasks", "waiting at the end of the interval", False),
        Col("running", "BIGINT", "tasks", "running at the end of the interval", False),
        Col("containers_placed", "DOUBLE", "containers", "CBS containers on machines", False),
        *(
            Col(f"machines_on_{m}", "DOUBLE", "machines", f"type {m} machines on (mean)", False)
            for m in range(4)
        ),
    ),
    ("scenario_id", "interval"),
    aliases=("harmony_intervals",),
)
HARMONY_TABLES = {
    s.name: s for s in (HARMONY_TASK_CLASSES, HARMONY_DEMAND, HARMONY_RESULTS, HARMONY_INTERVALS)
}
ALL_TABLES.update(HARMONY_TABLES)

# ---------------------------------------------------------------------------------- grid forecasts
GRID_FORECAST = TableSchema(
    "core_grid_forecast",
    "As-of forecasts of grid signals: per grid, method and issue instant, the value forecast "
    "for each target interval. Every method but `oracle` reads only values whose interval had ended by "
    "`issued_at` (sim/forecast.py); `issued` rows are a real issued archive (WattTime CAISO_NORTH).",
    (
        Col("grid", "VARCHAR", "-", "grid (core_grid_carbon) or WattTime region", False),
        Col("method", "VARCHAR", "-", "oracle, persist24, profile7d, sarimax, issued", False),
        Col("issued_at", TS, "UTC", "when the forecast was issued", False),
        Col("target_ts", TS, "UTC", "start of the interval forecast", False),
        Col(
            "horizon_h",
            "DOUBLE",
            "h",
            "target_ts − issued_at + interval length (1 = the interval starting now)",
            False,
        ),
        Col("value", "DOUBLE", "see unit", "forecast value", False),
        Col("unit", "VARCHAR", "-", "gCO2eq/kWh (lifecycle) or the upstream's unit", False),
    ),
    ("grid", "method", "issued_at", "target_ts"),
    (
        Range("target_not_before_issue", "target_ts < issued_at"),
        Range("value_in_range", "value < 0 OR value > 100000"),
    ),
)
ALL_TABLES[GRID_FORECAST.name] = GRID_FORECAST

# ------------------------------------------------------------------------- marginal signals (SGIP)
MARGINAL_SIGNAL = TableSchema(
    "core_marginal_signal",
    "Marginal operating emissions rates (MOER) as realized, every 5 minutes: SGIP's signal for CAISO's "
    "PG&E and SCE areas (kg CO2/kWh upstream, stored as g/kWh). A marginal signal: the emissions of the "
    "generator that follows a change in load, not the grid's average intensity (core_grid_carbon).",
    (
        Col("grid", "VARCHAR", "-", "signal name: sgip-pge, sgip-sce", False),
        Col("ts_utc", TS, "UTC", "start of the 5-minute interval", False),
        Col("gco2_per_kwh_marginal", "DOUBLE", "gCO2/kWh", "marginal operating emissions rate", False),
        Col("source", "VARCHAR", "-", "sgip", False),
        Col("source_file", "VARCHAR", "-", "raw file (a wheel member: <wheel>:<member>)", False),
    ),
    ("grid", "ts_utc"),
    (
        Range("ts_in_range", TS_OUT_OF_RANGE),
        Range("value_in_range", "gco2_per_kwh_marginal < 0 OR gco2_per_kwh_marginal > 5000"),
    ),
)
MARGINAL_FORECAST = TableSchema(
    "core_marginal_forecast",
    "Marginal-emissions forecasts as they were issued: SGIP's 36 forecasts (5 min … 3 h ahead) issued at "
    "every 5-minute step (the issue time is the vintage), in g/kWh.",
    (
        Col("grid", "VARCHAR", "-", "signal name: sgip-pge, sgip-sce", False),
        Col("issued_at", TS, "UTC", "when the forecast was issued (its vintage)", False),
        Col("target_ts", TS, "UTC", "start of the 5-minute interval forecast", False),
        Col("horizon_min", "DOUBLE", "min", "target_ts − issued_at (5 … 180)", False),
        Col("gco2_per_kwh_marginal", "DOUBLE", "gCO2/kWh", "forecast marginal emissions rate", False),
        Col("source_file", "VARCHAR", "-", "raw file (a wheel member: <wheel>:<member>)", False),
    ),
    ("grid", "issued_at", "target_ts"),
    (
        Range("target_after_issue", "target_ts <= issued_at"),
        Range("horizon_in_range", "horizon_min < 5 OR horizon_min > 180"),
        Range("value_in_range", "gco2_per_kwh_marginal < 0 OR gco2_per_kwh_marginal > 5000"),
    ),
)
ALL_TABLES[MARGINAL_SIGNAL.name] = MARGINAL_SIGNAL
ALL_TABLES[MARGINAL_FORECAST.name] = MARGINAL_FORECAST

# ------------------------------------------------------------------- deployed rules' backtest (SGIP)
OUT_BACKTEST = TableSchema(
    "out_backtest",
    "The deployed carbon-aware rules backtested on SGIP's issued forecasts (studies/beyond_backtest), per "
    "profile, signal, level (signal: no capacity limits; platform: the policy twin in the simulator), rule, "
    "forecast source and month of arrival (and `all`). Savings are against run-now; `*_marginal` uses SGIP's "
    "MOER (what every rule optimises), `*_average` CAISO's average intensity (null where none covers the "
    "period or at platform level).",
    (
        Col("profile", "VARCHAR", "-", "quick (the embedded sample) or full (the wheel's whole period)", False),
        Col("signal", "VARCHAR", "-", "sgip-pge, sgip-sce", False),
        Col("level", "VARCHAR", "-", "signal or platform", False),
        Col("machines", "BIGINT", "machines", "platform size (null at signal level)"),
        Col("policy", "VARCHAR", "-", "run-now, cats, carbon-aware-sdk, compute-gardener, oracle", False),
        Col("forecast", "VARCHAR", "-", "issued, perfect, persistence; - for rules that read none", False),
        Col("month", "VARCHAR", "-", "YYYY-MM of arrival, or all", False),
        Col("jobs", "BIGINT", "jobs", "jobs arriving in the month", False),
        Col("optimises", "VARCHAR", "-", "the signal the rule optimises (marginal)", False),
        Col("saved_pct_marginal", "DOUBLE", "%", "carbon saved against run-now, marginal accounting"),
        Col("oracle_saved_pct_marginal", "DOUBLE", "%", "the oracle's saving, marginal accounting"),
        Col("oracle_share_marginal", "DOUBLE", "fraction", "saving ÷ the oracle's (null: oracle saves nothing)"),
        Col("saved_pct_average", "DOUBLE", "%", "carbon saved against run-now, average accounting"),
        Col("oracle_saved_pct_average", "DOUBLE", "%", "the average-clairvoyant oracle's saving"),
        Col("oracle_share_average", "DOUBLE", "fraction", "saving ÷ that oracle's, average accounting"),
        Col("wasted_kg_marginal", "DOUBLE", "kgCO2", "marginal carbon of killed attempts (platform level)"),
        Col("deadline_misses", "BIGINT", "jobs", "jobs started after (signal) / completed after their deadline"),
        Col("mean_delay_s", "DOUBLE", "s", "mean wait from arrival to start", False),
        Col("cpu_s", "DOUBLE", "s", "process CPU seconds of the backtest (the row's rule and source)", False),
    ),
    ("profile", "signal", "level", "policy", "forecast", "month"),
    (Range("share_in_range", "oracle_share_marginal > 1.000001 AND level = 'signal'"),),
)
OUT_BACKTEST_ERRORS = TableSchema(
    "out_backtest_errors",
    "SGIP's issued marginal-emissions forecasts against the realized signal, by horizon, per profile.",
    (
        Col("profile", "VARCHAR", "-", "quick or full", False),
        Col("signal", "VARCHAR", "-", "sgip-pge, sgip-sce", False),
        Col("horizon_min", "DOUBLE", "min", "minutes ahead of the issue (5 … 180)", False),
        Col("mae_g", "DOUBLE", "gCO2/kWh", "mean absolute error", False),
        Col("mape_pct", "DOUBLE", "%", "mean absolute percentage error (realized > 0)", False),
        Col("bias_g", "DOUBLE", "gCO2/kWh", "mean error (forecast − realized)", False),
        Col("n", "BIGINT", "pairs", "forecast/realized pairs", False),
    ),
    ("profile", "signal", "horizon_min"),
)
ALL_TABLES[OUT_BACKTEST.name] = OUT_BACKTEST
ALL_TABLES[OUT_BACKTEST_ERRORS.name] = OUT_BACKTEST_ERRORS
