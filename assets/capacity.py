"""Capacity and intervals layers: capacity traces from generators and grid signals, their
characterization, LIFO machine intervals and Kaplan–Meier survival tables (all computation in ``sim``).

Every table is its own asset with the ``out_`` prefix; an op that writes two tables in one transaction is
a multi-asset with one output per table. The tables' former names (``capacity_traces``, …) stay readable
as views (``TableSchema.aliases``, created by :func:`assets.warehouse.write_tables`).
"""

import json
import time
from collections.abc import Iterator
from datetime import datetime

import dagster as dg
import numpy as np
import polars as pl
from dagster_duckdb import DuckDBResource
from pydantic import Field

from assets.checks import table_checks, table_spec
from assets.core import md_table
from assets.raw import POOL
from assets.schema import (
    CAPACITY_CHARACTERIZATION,
    CAPACITY_POINTS,
    CAPACITY_TABLES,
    CAPACITY_TRACES,
    INTERVAL_CONDITIONAL,
    INTERVAL_SURVIVAL,
    MACHINE_INTER_CHANGE,
    MACHINE_INTERVALS,
)
from assets.warehouse import write_tables
from sim.capacity.intervals import (
    BandedIntervalModel,
    IntervalModel,
    characterize,
    extract_intervals,
    interval_inter_change_times,
    on_time_per_machine,
)
from sim.capacity.trace import DAY, HOUR, MEAN_CAPACITY, CapacitySpec, CapacityTrace, month_bounds, to_hourly
from studies.signals import grid_series


class CapacityConfig(dg.Config):
    machines: int = Field(1000, description="platform size of the synthetic and grid-driven traces")
    days: float = Field(30.0, description="length of the synthetic random-walk traces")
    frequencies: list[float] = Field([0.25, 0.5, 1.0, 2.0, 4.0, 8.0], description="changes per hour")
    steps: list[float] = Field([0.15, 0.3, 0.45, 0.6], description="step sizes (fraction of machines)")
    dynamic_range: float = 0.6
    mean: float = MEAN_CAPACITY
    seed: int = 0
    carbon: list[str] = Field(
        grid_series(),
        description="GRID:SOURCE:YYYY-MM months from core_grid_carbon for constant-carbon-budget traces "
        "(default: the grid months the studies read, studies.signals.GRIDS)",
    )
    prices: list[str] = Field(
        ["ERCOT:HB_HUBAVG:2024-04", "CAISO:TH_NP15_GEN-APND:2024-04"],
        description="MARKET:NODE:YYYY-MM months from core_power_price for cost-budget and stranded traces",
    )
    cost_floor: float = 0.2
    stranded_percentile: float = Field(
        10.0, description="intensity percentile below which power is 'stranded'"
    )


def _hourly(conn, sql: str, params: list, start: datetime, end: datetime, what: str) -> np.ndarray:
    """Hourly values over [start, end) by the one gap rule of :func:`sim.capacity.trace.to_hourly` (the
    scenario path's too). dg.Failure if there are none."""
    df = conn.sql(sql, params=params).pl()
    if df.height == 0:
        raise dg.Failure(f"no rows for {what} in {start:%Y-%m}")
    try:
        return to_hourly(df[df.columns[0]], df[df.columns[1]], start, end)
    except ValueError as e:
        raise dg.Failure(f"{what}: {e}") from e


def _series_sql(table: str, value: str, keys: list[str]) -> str:
    where = " AND ".join(f"{k} = ?" for k in keys)
    return f"SELECT ts_utc, {value} FROM {table} WHERE {where} AND ts_utc >= ? AND ts_utc < ? ORDER BY ts_utc"


def build_traces(conn, cfg: CapacityConfig) -> Iterator[tuple[str, str, CapacityTrace]]:
    """Yield ``(trace_id, source, trace)`` for every configured trace (built by :class:`CapacitySpec`)."""
    horizon = cfg.days * DAY
    m, seed = cfg.machines, cfg.seed
    shape = {"dynamic_range": cfg.dynamic_range, "mean": cfg.mean, "seed": seed}
    for f in cfg.frequencies:
        for s in cfg.steps:
            spec = CapacitySpec("random_walk", {"changes_per_hour": f, "step": s, **shape})
            yield f"rw-f{f:g}-s{s:g}-m{m}-d{cfg.days:g}-seed{seed}", "synthetic", spec.build(m, horizon)
    spec = CapacitySpec("random_uniform", {"changes_per_hour": 1.0, **shape})
    yield f"ru-f1-m{m}-d{cfg.days:g}-seed{seed}", "synthetic", spec.build(m, horizon)
    spec = CapacitySpec("risk_aware_walk", {"m_avg": 24, "m_ra": 8, "period_s": 1200.0, "seed": seed})
    yield f"ra-avg24-ra8-p1200-d21-seed{seed}", "synthetic", spec.build(32, 21 * DAY)
    for carbon in cfg.carbon:
        grid, source, month = carbon.split(":")
        start, end = month_bounds(month)
        ci = _hourly(
            conn,
            _series_sql("core_grid_carbon", "gco2_per_kwh", ["grid", "source"]),
            [grid, source, start, end],
            start,
            end,
            f"core_grid_carbon {grid}/{source}",
        )
        label, hours = f"{grid}:{source}:{month}", len(ci) * HOUR
        budget = CapacitySpec("carbon_budget", {"mean": cfg.mean, "floor": 0.0})
        yield (
            f"carbon-{grid}-{source}-{month}-m{m}",
            f"core_grid_carbon {label}",
            budget.build(m, hours, ci, label),
        )
        stranded = CapacitySpec("stranded", {"threshold": float(np.percentile(ci, cfg.stranded_percentile))})
        yield (
            f"stranded-ci-p{cfg.stranded_percentile:g}-{grid}-{source}-{month}-m{m}",
            (f"core_grid_carbon {label}"),
            stranded.build(m, hours, ci, label),
        )
    for prices in cfg.prices:
        market, node, month = prices.split(":")
        start, end = month_bounds(month)
        price = _hourly(
            conn,
            _series_sql("core_power_price", "usd_per_mwh", ["market", "node"]),
            [market, node, start, end],
            start,
            end,
            f"core_power_price {market}/{node}",
        )
        label, hours = f"{market}:{node}:{month}", len(price) * HOUR
        budget = CapacitySpec("cost_budget", {"mean": cfg.mean, "floor": cfg.cost_floor})
        yield (
            f"cost-{market}-{month}-m{m}",
            f"core_power_price {label}",
            budget.build(m, hours, price, label),
        )
        yield (
            f"stranded-price-{market}-{month}-m{m}",
            f"core_power_price {label}",
            CapacitySpec("stranded", {"threshold": 0.0}).build(m, hours, price, label),
        )
    yield from spot_traces(conn, m)


def spot_traces(conn, machines: int) -> Iterator[tuple[str, str, CapacityTrace]]:
    """Each trace of ``core_spot_availability`` (if built) scaled to ``machines``."""
    from sim.capacity.spot import scale

    have = conn.sql(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'core_spot_availability'"
    ).fetchall()
    if not have[0][0]:
        return
    for (trace,) in conn.sql("SELECT DISTINCT trace FROM core_spot_availability ORDER BY 1").fetchall():
        df = conn.sql(
            "SELECT time_s, available, nodes FROM core_spot_availability WHERE trace = ? ORDER BY tick",
            params=[trace],
        ).pl()
        t = df["time_s"].to_numpy()
        gap = float(t[1] - t[0]) if t.size > 1 else 300.0
        alive = scale(df["available"].to_numpy(), int(df["nodes"][0]), machines)
        tr = CapacityTrace(t, alive, machines, float(t[-1] + gap), gap, "spot", {"trace": trace}, None)
        yield f"spot-{trace}-m{machines}", f"core_spot_availability {trace}", tr


def load_traces(conn) -> dict[str, CapacityTrace]:
    """Every trace stored in ``out_capacity_traces`` / ``out_capacity_points`` as :class:`CapacityTrace`."""
    meta = conn.sql(f"SELECT * FROM {CAPACITY_TRACES.name} ORDER BY trace_id").pl()
    pts = conn.sql(f"SELECT * FROM {CAPACITY_POINTS.name} ORDER BY trace_id, time_s").pl()
    out = {}
    for tid, part in pts.group_by("trace_id", maintain_order=True):
        m = meta.filter(pl.col("trace_id") == tid[0]).row(0, named=True)
        out[tid[0]] = CapacityTrace(
            part["time_s"].to_numpy(),
            part["machines_alive"].to_numpy(),
            m["machines"],
            m["horizon_s"],
            m["period_s"],
            m["generator"],
            json.loads(m["params_json"]),
            m["seed"],
        )
    return out


_GRID = ["core_grid_carbon", "core_power_price", "core_spot_availability"]
_TRACES = [CAPACITY_TRACES.name, CAPACITY_POINTS.name]


@dg.multi_asset(
    name="out_capacity_traces",
    pool=POOL,
    specs=[
        table_spec(
            CAPACITY_TRACES,
            "capacity",
            _GRID,
            {"duckdb", "numpy"},
            "Capacity traces: the synthetic random-walk grid (frequencies × steps), random uniform, "
            "risk-aware walk, constant carbon/cost budgets and stranded-power traces from grid data; "
            "one row per trace.",
        ),
        table_spec(
            CAPACITY_POINTS,
            "capacity",
            _GRID,
            {"duckdb", "numpy"},
            "The step functions of the capacity traces (machines alive from each point on); written "
            "in the same transaction as out_capacity_traces.",
        ),
    ],
)
def out_capacity_traces(
    context: dg.AssetExecutionContext, config: CapacityConfig, duckdb: DuckDBResource
) -> Iterator[dg.MaterializeResult]:
    t0 = time.perf_counter()
    meta, points = [], []
    with duckdb.get_connection() as conn:
        for tid, source, tr in build_traces(conn, config):
            meta.append(
                dict(
                    trace_id=tid,
                    generator=tr.generator,
                    machines=tr.machines,
                    horizon_s=tr.horizon_s,
                    period_s=tr.period_s,
                    seed=tr.seed,
                    params_json=json.dumps(tr.params, sort_keys=True),
                    source=source,
                )
            )
            points.append(
                pl.DataFrame({"trace_id": tid, "time_s": tr.time_s, "machines_alive": tr.machines_alive})
            )
        mdf = pl.DataFrame(meta, schema_overrides={"period_s": pl.Float64, "seed": pl.Int64})
        pdf = pl.concat(points)
        write_tables(conn, [(CAPACITY_TRACES, mdf), (CAPACITY_POINTS, pdf)])
    context.log.info(f"{mdf.height} traces, {pdf.height} points")
    seconds = round(time.perf_counter() - t0, 2)
    yield dg.MaterializeResult(
        asset_key=CAPACITY_TRACES.name,
        metadata={
            "dagster/row_count": mdf.height,
            "seconds": seconds,
            "by_generator": md_table(mdf.group_by("generator").len().sort("generator")),
        },
    )
    yield dg.MaterializeResult(
        asset_key=CAPACITY_POINTS.name,
        metadata={"dagster/row_count": pdf.height, "traces": mdf.height, "seconds": seconds},
    )


@dg.asset(
    name=CAPACITY_CHARACTERIZATION.name,
    group_name="capacity",
    pool=POOL,
    kinds={"duckdb"},
    deps=_TRACES,
    code_version="1",
    description="Per trace: mean, CV, min/max, dynamic range, change counts, step sizes, realized "
    "frequency (former name `capacity_characterization`, a view).",
)
def out_capacity_characterization(duckdb: DuckDBResource) -> dg.MaterializeResult:
    rows = []
    with duckdb.get_connection() as conn:
        for tid, tr in load_traces(conn).items():
            iv = extract_intervals(tr)
            done = iv.filter(~pl.col("left_censored") & ~pl.col("right_censored"))
            rows.append(
                {
                    "trace_id": tid,
                    **characterize(tr),
                    "intervals": iv.height,
                    "interval_mean_s": float(done["length_s"].mean()) if done.height else None,
                }
            )
        df = pl.DataFrame(rows, schema_overrides={"interval_mean_s": pl.Float64})
        write_tables(conn, [(CAPACITY_CHARACTERIZATION, df)])
    view = df.select("trace_id", "mean_frac", "cv", "dynamic_range", "realized_changes_per_hour", "intervals")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": df.height,
            "traces": md_table(view.with_columns(pl.col(pl.Float64).round(3))),
        }
    )


@dg.multi_asset(
    name="out_machine_intervals",
    pool=POOL,
    specs=[
        table_spec(
            MACHINE_INTERVALS,
            "intervals",
            _TRACES,
            {"duckdb"},
            "Machine intervals under LIFO termination, per trace.",
        ),
        table_spec(
            MACHINE_INTER_CHANGE,
            "intervals",
            _TRACES,
            {"duckdb"},
            "Per-machine inter-change times (SlackSched's input), per trace; written in the same "
            "transaction as out_machine_intervals.",
        ),
    ],
)
def out_machine_intervals(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource
) -> Iterator[dg.MaterializeResult]:
    t0 = time.perf_counter()
    ivs, gaps = [], []
    with duckdb.get_connection() as conn:
        for tid, tr in load_traces(conn).items():
            iv = extract_intervals(tr)
            ivs.append(iv.with_columns(pl.lit(tid).alias("trace_id")))
            gaps.append(interval_inter_change_times(iv).with_columns(pl.lit(tid).alias("trace_id")))
        iv_all, gap_all = pl.concat(ivs), pl.concat(gaps)
        write_tables(conn, [(MACHINE_INTERVALS, iv_all), (MACHINE_INTER_CHANGE, gap_all)])
    context.log.info(f"{iv_all.height} intervals, {gap_all.height} inter-change times")
    seconds = round(time.perf_counter() - t0, 2)
    yield dg.MaterializeResult(
        asset_key=MACHINE_INTERVALS.name, metadata={"dagster/row_count": iv_all.height, "seconds": seconds}
    )
    yield dg.MaterializeResult(
        asset_key=MACHINE_INTER_CHANGE.name,
        metadata={"dagster/row_count": gap_all.height, "seconds": seconds},
    )


class SurvivalConfig(dg.Config):
    bands: int = Field(10, description="machine-index bands with their own survival curve")
    uptimes_h: list[float] = Field(
        [0, 0.25, 0.5, 1, 2, 4, 8, 12, 24, 48], description="conditional table rows"
    )
    durations_h: list[float] = Field(
        [0.25, 0.5, 1, 2, 4, 8, 12, 24, 48, 72], description="conditional table columns"
    )


@dg.multi_asset(
    name="out_interval_survival",
    pool=POOL,
    specs=[
        table_spec(
            INTERVAL_SURVIVAL,
            "intervals",
            [CAPACITY_TRACES.name, MACHINE_INTERVALS.name],
            {"duckdb", "statsmodels"},
            "Kaplan–Meier survival of interval length (all machines and per index band), per trace.",
        ),
        table_spec(
            INTERVAL_CONDITIONAL,
            "intervals",
            [CAPACITY_TRACES.name, MACHINE_INTERVALS.name],
            {"duckdb", "statsmodels"},
            "The conditional table P(remaining ≥ d | uptime u) with the mean remaining time, per trace; "
            "written in the same transaction as out_interval_survival.",
        ),
    ],
)
def out_interval_survival(
    context: dg.AssetExecutionContext, config: SurvivalConfig, duckdb: DuckDBResource
) -> Iterator[dg.MaterializeResult]:
    t0 = time.perf_counter()
    curves, conds = [], []
    up = np.asarray(config.uptimes_h) * 3600
    du = np.asarray(config.durations_h) * 3600
    with duckdb.get_connection() as conn:
        machines = dict(conn.sql(f"SELECT trace_id, machines FROM {CAPACITY_TRACES.name}").fetchall())
        iv_all = conn.sql(f"SELECT * FROM {MACHINE_INTERVALS.name}").pl()
        for (tid,), iv in iv_all.group_by("trace_id", maintain_order=True):
            usable = iv.filter(~pl.col("left_censored")).height > 0
            model = IntervalModel.from_intervals(iv, include_left_censored=not usable)
            c = model.curve().with_columns(
                pl.lit(tid).alias("trace_id"),
                pl.lit(-1).alias("band"),
                pl.lit(0).alias("machine_lo"),
                pl.lit(machines[tid] - 1).alias("machine_hi"),
            )
            curves.append(c)
            banded = BandedIntervalModel.from_intervals(iv, machines[tid], min(config.bands, machines[tid]))
            for b, m in enumerate(banded.models):
                curves.append(
                    m.curve().with_columns(
                        pl.lit(tid).alias("trace_id"),
                        pl.lit(b).alias("band"),
                        pl.lit(int(banded.edges[b])).alias("machine_lo"),
                        pl.lit(int(banded.edges[b + 1]) - 1).alias("machine_hi"),
                    )
                )
            tab = model.conditional_table(up, du)
            conds.append(
                tab.with_columns(
                    pl.lit(tid).alias("trace_id"),
                    pl.Series("mean_remaining_s", model.mean_remaining(tab["uptime_s"].to_numpy())),
                )
            )
        cdf = pl.concat(curves, how="vertical_relaxed")
        tdf = pl.concat(conds)
        write_tables(conn, [(INTERVAL_SURVIVAL, cdf), (INTERVAL_CONDITIONAL, tdf)])
    seconds = round(time.perf_counter() - t0, 2)
    yield dg.MaterializeResult(
        asset_key=INTERVAL_SURVIVAL.name, metadata={"dagster/row_count": cdf.height, "seconds": seconds}
    )
    yield dg.MaterializeResult(
        asset_key=INTERVAL_CONDITIONAL.name, metadata={"dagster/row_count": tdf.height, "seconds": seconds}
    )


capacity_assets = [
    out_capacity_traces,
    out_capacity_characterization,
    out_machine_intervals,
    out_interval_survival,
]


# ---------------------------------------------------------------------------------------------- checks
@dg.asset_check(
    asset=CAPACITY_POINTS.name,
    additional_deps=[CAPACITY_TRACES.name],
    name="within_bounds_and_steps",
    blocking=True,
    description="0 ≤ machines_alive ≤ machines; synthetic traces change only at period "
    "boundaries and by at most their step size",
)
def capacity_within_bounds(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    problems = []
    with duckdb.get_connection() as conn:
        for tid, tr in load_traces(conn).items():
            if tr.machines_alive.min() < 0 or tr.machines_alive.max() > tr.machines:
                problems.append(f"{tid}: outside [0, {tr.machines}]")
            if tr.period_s:
                ratio = tr.time_s / tr.period_s
                if not np.allclose(ratio, np.round(ratio)):
                    problems.append(f"{tid}: change off a period boundary")
            step = tr.params.get("step")
            if step is not None and tr.generator == "random_walk":
                limit = max(1, round(step * tr.machines))
            elif tr.generator == "risk_aware_walk":
                limit = tr.params["step"]
            else:
                limit = None
            if limit is not None and np.abs(np.diff(tr.machines_alive)).max(initial=0) > limit:
                problems.append(f"{tid}: a step exceeds {limit}")
    return dg.AssetCheckResult(
        passed=not problems,
        description="; ".join(problems[:5]) or "all traces in bounds",
        metadata={"problems": len(problems)},
    )


@dg.asset_check(
    asset=MACHINE_INTERVALS.name,
    additional_deps=_TRACES,
    name="intervals_tile_on_time",
    blocking=True,
    description="per machine, the interval lengths add up to its on-time in the capacity trace",
)
def intervals_tile_on_time(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    worst = 0.0
    with duckdb.get_connection() as conn:
        traces = load_traces(conn)
        sums = conn.sql(
            f"SELECT trace_id, machine, sum(length_s) s FROM {MACHINE_INTERVALS.name} GROUP BY ALL"
        ).pl()
    for tid, tr in traces.items():
        on = on_time_per_machine(tr)
        got = np.zeros(tr.machines)
        part = sums.filter(pl.col("trace_id") == tid)
        got[part["machine"].to_numpy()] = part["s"].to_numpy()
        worst = max(worst, float(np.abs(got - on).max()))
    return dg.AssetCheckResult(
        passed=worst < 1e-6,
        description=f"max |Σ lengths − on-time| = {worst:.3g} s",
        metadata={"max_abs_diff_s": worst},
    )


@dg.asset_check(
    asset=INTERVAL_SURVIVAL.name,
    name="survival_monotone",
    blocking=True,
    description="every survival curve lies in [0, 1] and never increases",
)
def survival_monotone(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as conn:
        bad = conn.sql(
            """SELECT count(*) FROM (
                 SELECT survival - lag(survival) OVER (PARTITION BY trace_id, band ORDER BY time_s) d, survival
                 FROM out_interval_survival) WHERE d > 1e-12 OR survival < 0 OR survival > 1"""
        ).fetchall()[0][0]
    return dg.AssetCheckResult(
        passed=bad == 0, description=f"{bad} violating points", metadata={"violations": bad}
    )


capacity_checks = [
    *(c for s in CAPACITY_TABLES.values() for c in table_checks(s, with_schema=False)),
    capacity_within_bounds,
    intervals_tile_on_time,
    survival_monotone,
]
