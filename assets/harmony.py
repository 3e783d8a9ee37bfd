"""Paper 004 Harmony as assets (group ``harmony``); every computation lives in ``sim.harmony`` and
``studies.harmony``.

* ``out_harmony_task_classes`` — §5.1 classes fitted on the borg2011 rows of ``core_jobs`` (seeded K-means),
  table ``out_harmony_task_classes``, with the elbow scores and a chart of centroids and container sizes;
* ``out_harmony_demand`` — §5.2 per-interval arrivals, ARIMA forecasts and required containers of the study
  workload, table ``out_harmony_demand``, MAPE per class in the metadata;
* ``out_harmony_results`` — the ``harmony`` study (baseline / CBP / CBS at ω = 1.2 and the ω sweep 0.6–2.2),
  tables ``out_harmony_results`` and ``out_harmony_intervals``; energy change of CBP and CBS against the
  baseline and an energy-vs-delay chart (Figs. 32–33) in the metadata. Runs are cached under
  ``data/sim/harmony``.

Harmony results stay in these ``harmony_…`` tables (``out_sim_results`` holds ``sim.simulate`` scenarios).
"""

import base64
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import dagster as dg
import numpy as np
import polars as pl
from dagster_duckdb import DuckDBResource
from pydantic import Field

from assets.checks import table_checks, table_spec
from assets.core import md_table
from assets.raw import POOL
from assets.schema import HARMONY_DEMAND, HARMONY_INTERVALS, HARMONY_RESULTS, HARMONY_TASK_CLASSES
from assets.warehouse import write_tables
from sim.harmony.classify import fit_classes
from sim.harmony.forecast import ForecastConfig
from sim.harmony.run import HarmonyConfig, predict_demand
from studies.harmony import runner as hs

GROUP = "harmony"


class HarmonyClassesConfig(dg.Config):
    seed: int = Field(0, description="K-means seed")
    k_max: int = Field(6, description="largest K tried by the elbow rule")
    elbow: float = Field(0.05, description="stop when K → K+1 gains less than this share of the K = 1 score")


class HarmonyDemandConfig(dg.Config):
    workload: str = Field("borg2011-sample", description="borg2011-sample or borg2011-7d")


class HarmonyRunConfig(dg.Config):
    study: str = Field(
        "harmony",
        description="harmony (sample, ω sweep), harmony-quick (every fourth ω), harmony-7d or harmony-smoke",
    )
    price: str = Field(
        "constant",
        description="constant (12.25 ¢/kWh, §9) or MARKET:NODE:YYYY-MM hourly prices from core_power_price",
    )


def _borg(conn) -> pl.DataFrame:
    df = conn.sql(
        "SELECT submit_s, duration_s, cpu_request_norm AS cores, memory_norm, priority, left_truncated "
        "FROM core_jobs "
        "WHERE workload = 'borg2011' ORDER BY submit_s, job_id"
    ).pl()
    if df.height == 0:
        raise dg.Failure("core_jobs has no borg2011 rows: materialize the ingest job first")
    return hs.borg_frame(df)


def _classes(conn):
    df = conn.sql("SELECT * FROM out_harmony_task_classes").pl()
    if df.height == 0:
        raise dg.Failure("out_harmony_task_classes is empty: materialize it first")
    return hs.classes_from_frame(df)


def _png_md(chart, name: str) -> dg.MetadataValue:
    """Render an altair chart to ``data/sim/harmony/figures/<name>.png`` and embed it in markdown."""
    from analysis.charts import save_png

    path = hs.harmony_dir() / "figures" / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    save_png(chart, path)
    b64 = base64.b64encode(path.read_bytes()).decode()
    return dg.MetadataValue.md(f"![{name}](data:image/png;base64,{b64})\n\n`{path}`")


@dg.asset(
    group_name=GROUP,
    pool=POOL,
    kinds={"duckdb", "python"},
    deps=["core_jobs"],
    code_version="1",
    description="Paper 004 §5.1 task classes of the Borg 2011 sample (K-means per priority group, elbow "
    "rule, short/long split) with Theorem 1 container sizes.",
)
def out_harmony_task_classes(config: HarmonyClassesConfig, duckdb: DuckDBResource) -> dg.MaterializeResult:
    import altair as alt

    t0 = time.perf_counter()
    with duckdb.get_connection() as conn:
        b = _borg(conn)
    tc = fit_classes(
        b["cpu"].to_numpy(),
        b["mem"].to_numpy(),
        b["priority"].to_numpy(),
        b["duration_s"].to_numpy(),
        k_max=config.k_max,
        elbow=config.elbow,
        seed=config.seed,
    )
    df = hs.classes_frame(tc)
    with duckdb.get_connection() as conn:
        write_tables(conn, [(HARMONY_TASK_CLASSES, df)])
    short = df.filter(pl.col("length") == "short")
    base = alt.Chart(short.to_pandas())
    chart = (
        base.mark_circle(opacity=0.8).encode(
            x=alt.X("centroid_cpu:Q", title="cpu request (fraction of largest machine)"),
            y=alt.Y("centroid_mem:Q", title="memory request"),
            size=alt.Size("tasks:Q", scale=alt.Scale(type="log")),
            color="priority_group:N",
        )
        + base.mark_point(shape="square", filled=False).encode(
            x="container_cpu:Q", y="container_mem:Q", color="priority_group:N"
        )
    ).properties(
        title="Task classes: centroids (circles) and Theorem 1 containers (squares)", width=420, height=300
    )
    scores = pl.DataFrame(
        {
            "group": list(tc.scores),
            "K": list(tc.k_per_group),
            "scores": [", ".join(f"{s:.3g}" for s in v) for v in tc.scores.values()],
        }
    )
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": df.height,
            "classes": md_table(
                df.select(
                    "class_id",
                    "priority_group",
                    "length",
                    "centroid_cpu",
                    "centroid_mem",
                    "container_cpu",
                    "container_mem",
                    "threshold_s",
                    "tasks",
                )
            ),
            "k_by_elbow": md_table(scores),
            "chart": _png_md(chart, "out_harmony_task_classes"),
            "seconds": round(time.perf_counter() - t0, 2),
        }
    )


@dg.asset(
    group_name=GROUP,
    pool=POOL,
    kinds={"duckdb", "python"},
    deps=[out_harmony_task_classes],
    code_version="1",
    description="Paper 004 §5.2 per-interval arrivals, one-step ARIMA forecasts (trailing windows only) and "
    "required containers (M/G/N) per class of the study workload; MAPE per class.",
)
def out_harmony_demand(config: HarmonyDemandConfig, duckdb: DuckDBResource) -> dg.MaterializeResult:
    with duckdb.get_connection() as conn:
        b = _borg(conn)
        tc = _classes(conn)
    try:
        jobs, n_iv = hs.workload(b, config.workload)
    except KeyError as e:
        raise dg.Failure(str(e)) from None
    fc = ForecastConfig(refit_every=24 if n_iv <= 288 else 288)
    dem = predict_demand(jobs, tc, n_iv, HarmonyConfig(), fc)
    df = hs.demand_frame(dem, tc).with_columns(pl.lit(config.workload).alias("workload"))
    with duckdb.get_connection() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS out_harmony_demand AS SELECT * FROM df WHERE false")
        old = conn.sql("SELECT * FROM out_harmony_demand WHERE workload <> ?", params=[config.workload]).pl()
        write_tables(
            conn,
            [
                (
                    HARMONY_DEMAND,
                    pl.concat(
                        [old.select(HARMONY_DEMAND.column_names), df.select(HARMONY_DEMAND.column_names)]
                    ),
                )
            ],
        )
    from sim.harmony.classify import GROUPS

    mape = pl.DataFrame(
        {
            "size_cluster": np.arange(tc.n_queues),
            "group": [GROUPS[g] for g in tc.group],
            "arrivals_mape_pct": np.round(dem.mape_arrivals, 1),
            "long_running_mape_pct": np.round(dem.mape_long, 1),
            "arrivals": dem.arrivals.sum(axis=0),
        }
    )
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": df.height,
            "intervals": n_iv,
            "tasks": jobs.height,
            "mape_by_class": md_table(mape),
            "arrivals_mape_pct_weighted": float(
                np.nansum(dem.mape_arrivals * mape["arrivals"].to_numpy()) / mape["arrivals"].sum()
            ),
            "seconds": round(dem.seconds, 2),
        }
    )


def _prices(conn, spec: str, n_iv: int) -> np.ndarray | None:
    if spec == "constant":
        return None
    try:
        market, node, month = spec.split(":")
        y, m = (int(x) for x in month.split("-"))
    except ValueError:
        raise dg.Failure(f"price {spec!r}: expected constant or MARKET:NODE:YYYY-MM") from None
    start = datetime(y, m, 1, tzinfo=UTC)
    df = conn.sql(
        "SELECT usd_per_mwh FROM core_power_price WHERE market = ? AND node = ? AND ts_utc >= ? "
        "ORDER BY ts_utc LIMIT ?",
        params=[market, node, start, n_iv // 12 + 2],
    ).pl()
    if df.height == 0:
        raise dg.Failure(f"core_power_price has no {market}/{node} rows from {month}")
    hourly = np.maximum(df["usd_per_mwh"].to_numpy() / 1000.0, 0.0)  # USD/kWh, negative prices as 0
    return np.resize(np.repeat(hourly, 12), n_iv)


_RESULTS_DEPS = [out_harmony_task_classes.key, out_harmony_demand.key, dg.AssetKey("core_power_price")]
_RESULTS_VERSION = hs.code_version()  # the simulator and study sources the results come from


@dg.multi_asset(
    name="out_harmony_results",
    pool=POOL,
    specs=[
        table_spec(
            HARMONY_RESULTS,
            GROUP,
            _RESULTS_DEPS,
            {"duckdb", "python"},
            "Paper 004 §9: baseline / CBP / CBS (and the ω sweep 0.6–2.2) on the Borg 2011 sample over Table "
            "2's 10,000 machines: energy, cost, delay per priority group, machines on per type.",
            _RESULTS_VERSION,
        ),
        table_spec(
            HARMONY_INTERVALS,
            GROUP,
            _RESULTS_DEPS,
            {"duckdb", "python"},
            "Paper 004 §9 per control interval and scenario: machines on per type, energy, cost, utilization, "
            "queue; written in the same transaction as out_harmony_results.",
            _RESULTS_VERSION,
        ),
    ],
)
def out_harmony_results(
    context: dg.AssetExecutionContext, config: HarmonyRunConfig, duckdb: DuckDBResource
) -> Iterator[dg.MaterializeResult]:
    import altair as alt

    with duckdb.get_connection() as conn:
        b = _borg(conn)
        tc = _classes(conn)
        scs = hs.harmony_scenarios(config.study) if config.study in hs.HARMONY_STUDIES else None
        if scs is None:
            raise dg.Failure(
                f"unknown Harmony study {config.study!r}; studies: {', '.join(hs.HARMONY_STUDIES)}"
            )
        _, n_iv = hs.workload(b, scs[0].workload)
        prices = _prices(conn, config.price, n_iv)

    scs_total = len(scs)
    done = [0]

    def progress(sc, row):
        m = row["metrics"]
        done[0] += 1
        msg = (
            f"{config.study} ({done[0]} simulated of {scs_total}): {sc.workload} {sc.scheme} ω={sc.omega}: "
            f"{m['energy_cost_usd']:.2f} USD, delay p90 {m['delay_p90_s_all']:.1f} s ({row['wall_s']:.1f} s)"
        )
        context.log.info(msg)
        # one line per scenario on stdout too: `varcap sweep harmony` runs this in-process with Dagster's
        # console log at WARNING, and took minutes without a word (the UI keeps it in the compute log)
        print(msg, flush=True)

    rows = hs.run_study(config.study, b, tc, prices, progress=progress)
    res = hs.results_frame(rows)
    ivs = []
    for r in rows:
        iv = pl.read_parquet(hs.harmony_dir() / r["scenario_id"] / "intervals.parquet")
        ivs.append(
            iv.with_columns(pl.lit(r["scenario_id"]).alias("scenario_id")).select(
                HARMONY_INTERVALS.column_names
            )
        )
    intervals = pl.concat(ivs)
    with duckdb.get_connection() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS out_harmony_results AS SELECT * FROM res WHERE false")
        # rows are per (study, scenario): other studies keep theirs, also for a scenario they share with
        # this one (harmony-headline ⊂ harmony); a scenario's intervals are the same in every study
        old = conn.sql("SELECT * FROM out_harmony_results WHERE study <> ?", params=[config.study]).pl()
        keep_ids = set(old["scenario_id"].to_list()) - set(res["scenario_id"].to_list())
        conn.execute(
            "CREATE TABLE IF NOT EXISTS out_harmony_intervals AS SELECT * FROM intervals WHERE false"
        )
        old_iv = (
            conn.sql("SELECT * FROM out_harmony_intervals")
            .pl()
            .filter(pl.col("scenario_id").is_in(list(keep_ids)))
        )
        write_tables(
            conn,
            [
                (
                    HARMONY_RESULTS,
                    pl.concat(
                        [old.select(HARMONY_RESULTS.column_names), res.select(HARMONY_RESULTS.column_names)],
                        how="vertical_relaxed",
                    ),
                ),
                (
                    HARMONY_INTERVALS,
                    pl.concat(
                        [old_iv.select(HARMONY_INTERVALS.column_names), intervals], how="vertical_relaxed"
                    ),
                ),
            ],
        )
    change = {
        f"{s}_{m}_change_pct_vs_baseline": round(hs.energy_change_pct(rows, s, m), 2)
        for s in ("cbp", "cbs")
        for m in ("energy_cost_usd", "energy_kwh")
    }
    sweep = res.filter(pl.col("scheme") != "baseline").to_pandas()
    chart = (
        alt.Chart(sweep)
        .mark_line(point=True)
        .encode(
            x=alt.X("delay_mean_s_all:Q", title="mean scheduling delay (s)", scale=alt.Scale(type="symlog")),
            y=alt.Y("energy_cost_usd:Q", title="energy cost incl. cooling and switching (USD)"),
            color="scheme:N",
            order="omega:Q",
            tooltip=["scheme", "omega", "energy_cost_usd", "delay_mean_s_all"],
        )
        .properties(title="Energy cost vs delay over ω (paper 004 Figs. 32–33)", width=420, height=300)
    )
    show = res.select(
        "scheme",
        "omega",
        "energy_kwh",
        "energy_cost_usd",
        "delay_p50_s_all",
        "delay_p90_s_all",
        "delay_p99_s_all",
        "unscheduled",
        "machines_on_mean",
        "cpu_util",
        "mem_util",
    ).sort("scheme", "omega")
    yield dg.MaterializeResult(
        asset_key=HARMONY_INTERVALS.name,
        metadata={"dagster/row_count": intervals.height, "scenarios": res.height},
    )
    yield dg.MaterializeResult(
        asset_key=HARMONY_RESULTS.name,
        metadata={
            "dagster/row_count": res.height,
            "scenarios": res.height,
            "cache_hits": sum(r["cache_hit"] for r in rows),
            "results": md_table(show.with_columns(pl.col(pl.Float64).round(3))),
            **change,
            "chart": _png_md(chart, f"harmony_energy_delay_{config.study}"),
        },
    )


@dg.asset_check(
    asset=HARMONY_RESULTS.name,
    name="harmony_three_schemes",
    blocking=True,
    description="every study workload has baseline, CBP and CBS rows with energy and delay",
)
def harmony_three_schemes(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as conn:
        df = conn.sql(
            "SELECT workload, study, count(DISTINCT scheme) AS schemes, min(energy_kwh) AS e, "
            "count(delay_p50_s_all) AS d, count(*) AS n FROM out_harmony_results GROUP BY ALL"
        ).pl()
    bad = df.filter((pl.col("schemes") < 3) | (pl.col("e") <= 0) | (pl.col("d") < pl.col("n")))
    return dg.AssetCheckResult(
        passed=df.height > 0 and bad.height == 0, metadata={"by_workload": md_table(df)}
    )


@dg.asset_check(
    asset=out_harmony_task_classes,
    name="harmony_classes_cover_tasks",
    blocking=True,
    description="class counts add up to the borg2011 rows; every priority group has a class",
)
def harmony_classes_cover_tasks(duckdb: DuckDBResource) -> dg.AssetCheckResult:
    with duckdb.get_connection() as conn:
        n = conn.execute("SELECT count(*) FROM core_jobs WHERE workload = 'borg2011'").fetchone()[0]
        got, groups = conn.execute(
            "SELECT sum(tasks), count(DISTINCT priority_group) FROM out_harmony_task_classes"
        ).fetchone()
    return dg.AssetCheckResult(
        passed=int(got) == int(n) and groups >= 1,
        metadata={"rows": int(n), "classified": int(got), "groups": int(groups)},
    )


harmony_assets = [out_harmony_task_classes, out_harmony_demand, out_harmony_results]
harmony_checks = [
    *table_checks(HARMONY_TASK_CLASSES, out_harmony_task_classes, prefixed=True, with_schema=False),
    *table_checks(HARMONY_DEMAND, out_harmony_demand, prefixed=True, with_schema=False),
    *table_checks(HARMONY_RESULTS, HARMONY_RESULTS.name, prefixed=True, with_schema=False),
    *table_checks(HARMONY_INTERVALS, HARMONY_INTERVALS.name, prefixed=True, with_schema=False),
    harmony_three_schemes,
    harmony_classes_cover_tasks,
]
