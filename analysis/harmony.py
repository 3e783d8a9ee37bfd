"""Paper 004 (Harmony): task classes (Figs. 10–21), ARIMA demand forecast vs actual (Figs. 22–23), energy
cost of CBS/CBP against the heterogeneity-oblivious baseline (Fig. 29), machines on (Figs. 24–25) and the
cost/delay trade-off over the over-provisioning factor ω (Figs. 32–33).

Inputs are the ``harmony_*`` tables (``varcap sweep harmony``): every function takes polars frames of
them (or a read-only connection, :func:`load`) and returns a frame, a number or an altair chart."""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from analysis.style import HEIGHT, WIDTH, finish

SCHEMES = ("baseline", "cbp", "cbs")
SCHEME_NAMES = {"baseline": "baseline (oblivious)", "cbp": "CBP", "cbs": "CBS"}
GROUPS = ("production", "other", "gratis")
HEADLINE_OMEGA = 1.2  # §9.2: "In our first experiment, we use an over-provisioning factor of 1.2"
TABLES = ("out_harmony_task_classes", "out_harmony_demand", "out_harmony_results", "out_harmony_intervals")


STUDIES = ("harmony", "harmony-quick", "harmony-7d", "harmony-smoke")


def pick_study(con: Any, preferred: str = "harmony") -> str:
    """``preferred`` if ``out_harmony_results`` has rows of it, else the first Harmony study that has rows
    (:data:`STUDIES` order), else ``preferred`` (then :func:`load` says what to run)."""
    have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if "out_harmony_results" not in have:
        return preferred
    ran = {r[0] for r in con.execute("SELECT DISTINCT study FROM out_harmony_results").fetchall()}
    return next((s for s in (preferred, *STUDIES) if s in ran), preferred)


def load(con: Any, study: str = "harmony") -> dict[str, pl.DataFrame]:
    """The four Harmony tables for ``study`` (demand of the study's workload, intervals of its scenarios)
    from a read-only connection. ``LookupError`` names what is missing (run ``varcap sweep harmony``)."""
    have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    missing = [t for t in TABLES if t not in have]
    if missing:
        raise LookupError(f"tables {', '.join(missing)} missing: run `varcap sweep {study}`")
    res = con.sql("SELECT * FROM out_harmony_results WHERE study = ?", params=[study]).pl()
    if res.height == 0:
        raise LookupError(f"out_harmony_results has no rows of study {study!r}: run `varcap sweep {study}`")
    workloads = sorted(set(res["workload"]))
    ids = res["scenario_id"].to_list()
    return {
        "classes": con.sql("SELECT * FROM out_harmony_task_classes ORDER BY class_id").pl(),
        "demand": con.sql(
            "SELECT * FROM out_harmony_demand WHERE list_contains(?, workload) ORDER BY interval, size_cluster",
            params=[workloads],
        ).pl(),
        "results": res,
        "intervals": con.sql(
            "SELECT * FROM out_harmony_intervals WHERE list_contains(?, scenario_id) ORDER BY scenario_id, interval",
            params=[ids],
        ).pl(),
    }


# -------------------------------------------------------------------------------------------- classes
def class_summary(classes: pl.DataFrame) -> pl.DataFrame:
    """Per priority group: size clusters, classes, tasks, smallest/largest class, and how many classes
    have a container smaller than their largest task in both resources (the paper's Figs. 13/17/21)."""
    return (
        classes.with_columns(
            (
                (pl.col("container_cpu") < pl.col("max_cpu")) & (pl.col("container_mem") < pl.col("max_mem"))
            ).alias("_below")
        )
        .group_by("priority_group")
        .agg(
            pl.col("size_cluster").n_unique().alias("size_clusters"),
            pl.len().alias("classes"),
            pl.col("tasks").sum().alias("tasks"),
            pl.col("tasks").min().alias("smallest_class_tasks"),
            pl.col("tasks").max().alias("largest_class_tasks"),
            pl.col("_below").sum().alias("container_below_max"),
        )
        .with_columns(
            pl.col("priority_group").replace_strict({g: i for i, g in enumerate(GROUPS)}).alias("_o")
        )
        .sort("_o")
        .drop("_o")
    )


def classes_chart(classes: pl.DataFrame) -> alt.TopLevelMixin:
    """Figs. 10/14/18 and 13/17/21: class centroids (cpu, memory; area = tasks) and each class's container
    against its largest task (points below the diagonal: the container is smaller)."""
    df = classes.with_columns(pl.col("length").alias("class length")).to_pandas()
    # a size cluster's short and long classes share its centroid: one point per cluster, all its tasks
    clusters = classes.group_by("size_cluster", "priority_group", "centroid_cpu", "centroid_mem").agg(
        pl.col("tasks").sum(),
        pl.col("class_id").min(),
        pl.lit("both").alias("length"),
        pl.col("mean_cpu").mean(),
        pl.col("mean_mem").mean(),
    )
    color = alt.Color("priority_group:N", sort=list(GROUPS), title="priority group")
    cent = (
        alt.Chart(clusters.to_pandas())
        .mark_circle(opacity=0.7)
        .encode(
            x=alt.X("centroid_cpu:Q", title="centroid cpu request (fraction of largest machine)"),
            y=alt.Y("centroid_mem:Q", title="centroid memory request (fraction)"),
            size=alt.Size("tasks:Q", title="tasks", scale=alt.Scale(type="sqrt")),
            color=color,
            tooltip=["class_id", "priority_group", "length", "tasks", "mean_cpu", "mean_mem"],
        )
        .properties(width=WIDTH, height=HEIGHT, title="size clusters")
    )
    hi = float(max(classes["max_cpu"].max() or 0.0, classes["container_cpu"].max() or 0.0, 1e-3))
    diag = (
        alt.Chart(pl.DataFrame({"x": [0.0, hi], "y": [0.0, hi]}).to_pandas())
        .mark_line(color="#999", strokeDash=[4, 3])
        .encode(x="x:Q", y="y:Q")
    )
    cont = (
        alt.Chart(df)
        .mark_point(filled=True)
        .encode(
            x=alt.X("max_cpu:Q", title="largest task cpu request (fraction)"),
            y=alt.Y("container_cpu:Q", title="container cpu (Theorem 1, fraction)"),
            color=color,
            shape=alt.Shape("class length:N", title="class"),
            tooltip=["class_id", "priority_group", "length", "container_cpu", "max_cpu"],
        )
        .properties(width=WIDTH, height=HEIGHT, title="container vs largest task")
    )
    return finish(
        alt.hconcat(cent, diag + cont),
        "Harmony task classes (paper 004 §5.1, Figs. 10–21)",
        "K-means size clusters per priority group of the Borg 2011 task runs (K by the elbow rule), each split "
        "into short and long; containers sized by Theorem 1 (ε = 0.001, |R| = 2, M^k = 100).",
    )


# ------------------------------------------------------------------------------------------- forecast
def forecast_frame(demand: pl.DataFrame) -> pl.DataFrame:
    """Arrivals per control interval and priority group: actual and ARIMA one-step-ahead forecast."""
    return (
        demand.group_by("interval", "t_s", "priority_group")
        .agg(pl.col("arrivals").sum(), pl.col("arrivals_forecast").sum())
        .sort("priority_group", "interval")
        .with_columns((pl.col("t_s") / 3600.0).alias("t_h"))
    )


def forecast_errors(demand: pl.DataFrame) -> pl.DataFrame:
    """Per priority group (and ``all``): intervals, arrivals, mean absolute error of the forecast per
    interval, and the weighted absolute percentage error Σ|forecast − actual| / Σ actual (null if no
    arrivals)."""
    f = forecast_frame(demand)
    total = (
        f.group_by("interval")
        .agg(pl.col("arrivals").sum(), pl.col("arrivals_forecast").sum())
        .with_columns(pl.lit("all").alias("priority_group"))
    )
    both = pl.concat([f.select(total.columns), total.select(total.columns)], how="vertical_relaxed")
    err = (pl.col("arrivals_forecast") - pl.col("arrivals")).abs()
    out = both.group_by("priority_group").agg(
        pl.len().alias("intervals"),
        pl.col("arrivals").sum().alias("arrivals"),
        err.mean().alias("mae_tasks"),
        (err.sum() / pl.col("arrivals").sum()).alias("wape"),
    )
    order = {g: i for i, g in enumerate((*GROUPS, "all"))}
    return (
        out.with_columns(
            pl.when(pl.col("arrivals") > 0).then(pl.col("wape")).otherwise(None).alias("wape"),
            pl.col("priority_group").replace_strict(order, default=len(order)).alias("_o"),
        )
        .sort("_o")
        .drop("_o")
    )


def forecast_chart(demand: pl.DataFrame) -> alt.TopLevelMixin:
    """Fig. 22 with the predictor's view: arrivals per 5-minute interval and priority group, actual vs
    the ARIMA forecast."""
    long = forecast_frame(demand).unpivot(
        ["arrivals", "arrivals_forecast"], index=["t_h", "priority_group"], variable_name="series"
    )
    long = long.with_columns(
        pl.col("series").replace({"arrivals": "actual", "arrivals_forecast": "ARIMA forecast"})
    )
    chart = (
        alt.Chart(long.to_pandas())
        .mark_line(strokeWidth=1.4)
        .encode(
            x=alt.X("t_h:Q", title="time (h)"),
            y=alt.Y("value:Q", title="task arrivals per interval"),
            color=alt.Color("series:N", title=None, sort=["actual", "ARIMA forecast"]),
            strokeDash=alt.StrokeDash("series:N", sort=["actual", "ARIMA forecast"], legend=None),
        )
        .properties(width=WIDTH * 2, height=HEIGHT * 0.6)
        .facet(row=alt.Row("priority_group:N", sort=list(GROUPS), title=None))
        .resolve_scale(y="independent")
    )
    return finish(
        chart,
        "Task arrivals: actual vs ARIMA forecast (paper 004 §5.2, Fig. 22)",
        "Sum over the size classes of each priority group per 5-minute control interval; the forecast of an "
        "interval uses only earlier intervals (trailing-window ARIMA).",
    )


# -------------------------------------------------------------------------------------------- schemes
#: the baseline's type order of the default reading (paper 004 §9: "in decreasing order of energy
#: efficiency (e.g., always turning on HP-DL585-G7 machines first)"); the study's other orders are
#: readings that ``out_reproduction`` reports beside it, not the chapter's figures
DEFAULT_EFFICIENCY = "paper"


def default_reading(results: pl.DataFrame) -> pl.DataFrame:
    """``results`` without the baseline rows of other type-order readings (column ``efficiency``; a
    table without it is returned as it is)."""
    if "efficiency" not in results.columns:
        return results
    return results.filter((pl.col("scheme") != "baseline") | (pl.col("efficiency") == DEFAULT_EFFICIENCY))


def scheme_table(results: pl.DataFrame, omega: float = HEADLINE_OMEGA) -> pl.DataFrame:
    """One row per scheme at ``omega`` (the baseline ignores ω; its default type order,
    :func:`default_reading`): energy, energy cost and its change against the baseline (%), scheduling
    delay, machines on, utilization; schemes in paper order. ValueError unless there is one baseline row."""
    at = default_reading(results).filter((pl.col("omega") - omega).abs() < 1e-9)
    base = at.filter(pl.col("scheme") == "baseline")
    if base.height != 1:
        raise ValueError(f"expected one baseline row at ω = {omega}, found {base.height}")
    cost0 = float(base["energy_cost_usd"][0])
    order = {s: i for i, s in enumerate(SCHEMES)}
    return (
        at.with_columns(
            (100.0 * (pl.col("energy_cost_usd") / cost0 - 1.0)).alias("cost_change_pct"),
            pl.col("scheme").replace_strict(order, default=len(order)).alias("_o"),
        )
        .sort("_o")
        .select(
            "scheme",
            "energy_kwh",
            "energy_cost_usd",
            "cost_change_pct",
            "delay_p50_s_all",
            "delay_p90_s_all",
            "delay_mean_s_all",
            "unscheduled",
            "machines_on_mean",
            "cpu_util",
            "mem_util",
        )
    )


def cost_reduction_pct(results: pl.DataFrame, scheme: str = "cbs", omega: float = HEADLINE_OMEGA) -> float:
    """Reduction in energy cost of ``scheme`` against the baseline at ``omega``, in % (positive: cheaper;
    the paper's headline is CBS at 28 %). ``ValueError`` if either row is missing."""
    t = scheme_table(results, omega).filter(pl.col("scheme") == scheme)
    if t.height != 1:
        raise ValueError(f"no {scheme} row at ω = {omega}")
    return -float(t["cost_change_pct"][0])


def cost_chart(results: pl.DataFrame, omega: float = HEADLINE_OMEGA) -> alt.TopLevelMixin:
    """Fig. 29: energy cost of the three schemes at ``omega``, labelled with the change vs the baseline."""
    t = scheme_table(results, omega).with_columns(
        pl.col("scheme").replace_strict(SCHEME_NAMES, default=pl.col("scheme")).alias("name"),
        pl.when(pl.col("scheme") == "baseline")
        .then(pl.lit(""))
        .otherwise(pl.format("{} %", pl.col("cost_change_pct").round(1)))
        .alias("label"),
    )
    order = [SCHEME_NAMES[s] for s in SCHEMES]
    base = alt.Chart(t.to_pandas()).encode(
        x=alt.X("name:N", sort=order, title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("energy_cost_usd:Q", title="energy cost incl. cooling and switching (USD)"),
    )
    bars = base.mark_bar(width=40).encode(color=alt.Color("name:N", sort=order, legend=None))
    text = base.mark_text(dy=-6).encode(text="label:N")
    return finish(
        (bars + text).properties(width=WIDTH, height=HEIGHT),
        f"Energy cost by scheme at ω = {omega:g} (paper 004 §9.2, Fig. 29)",
        "Borg 2011 sample on Table 2's heterogeneous machines; California price 12.25 ¢/kWh × 1.8 for "
        "cooling, 0.5 ¢ per power-on. Labels: change against the heterogeneity-oblivious baseline.",
    )


def machines_chart(
    intervals: pl.DataFrame, results: pl.DataFrame, omega: float = HEADLINE_OMEGA
) -> alt.TopLevelMixin:
    """Figs. 24–25: machines on over time (all four types) for each scheme at ``omega``."""
    at = default_reading(results).filter((pl.col("omega") - omega).abs() < 1e-9).select("scenario_id", "scheme")
    on = pl.sum_horizontal(*(pl.col(f"machines_on_{m}") for m in range(4)))
    df = (
        intervals.join(at, on="scenario_id")
        .with_columns(on.alias("machines_on"), (pl.col("t_s") / 3600.0).alias("t_h"))
        .with_columns(pl.col("scheme").replace_strict(SCHEME_NAMES, default=pl.col("scheme")).alias("name"))
        .select("t_h", "name", "machines_on")
    )
    order = [SCHEME_NAMES[s] for s in SCHEMES]
    chart = (
        alt.Chart(df.to_pandas())
        .mark_line(strokeWidth=1.5, interpolate="step-after")
        .encode(
            x=alt.X("t_h:Q", title="time (h)"),
            y=alt.Y("machines_on:Q", title="machines on (time-averaged)"),
            color=alt.Color("name:N", sort=order, title="scheme"),
        )
        .properties(width=WIDTH * 2, height=HEIGHT)
    )
    return finish(
        chart,
        f"Machines on per control interval at ω = {omega:g} (paper 004 Figs. 24–25)",
        "CBS and CBP provision the machines the MPC controller chooses per type; the baseline provisions "
        "total capacity at 1/0.8 of the demand without regard to machine type.",
    )


def tradeoff_frame(results: pl.DataFrame) -> pl.DataFrame:
    """Energy cost and mean scheduling delay per scheme and ω, ω ascending (Figs. 32–33's points; the
    baseline of the default type order)."""
    return default_reading(results).select(
        "scheme", "omega", "energy_cost_usd", "delay_mean_s_all", "delay_p90_s_all", "unscheduled"
    ).sort("scheme", "omega")


def tradeoff_chart(results: pl.DataFrame) -> alt.TopLevelMixin:
    """Figs. 32–33: energy cost against mean scheduling delay as ω goes 0.6 → 2.2, CBP and CBS (the
    baseline as one point)."""
    df = tradeoff_frame(results).with_columns(
        pl.col("scheme").replace_strict(SCHEME_NAMES, default=pl.col("scheme")).alias("name")
    )
    order = [SCHEME_NAMES[s] for s in SCHEMES]
    enc = {
        "x": alt.X("delay_mean_s_all:Q", title="mean scheduling delay (s)", scale=alt.Scale(type="symlog")),
        "y": alt.Y("energy_cost_usd:Q", title="energy cost (USD)", scale=alt.Scale(zero=False)),
        "color": alt.Color("name:N", sort=order, title="scheme"),
    }
    base = alt.Chart(df.to_pandas())
    lines = (
        base.transform_filter("datum.scheme != 'baseline'")
        .mark_line(point=True)
        .encode(**enc, order="omega:Q", tooltip=["name", "omega", "energy_cost_usd", "delay_mean_s_all"])
    )
    labels = (
        base.transform_filter("datum.scheme != 'baseline'")
        .mark_text(dx=8, dy=-6, fontSize=9)
        .encode(x=enc["x"], y=enc["y"], color=enc["color"], text=alt.Text("omega:Q", format=".1f"))
    )
    point = (
        base.transform_filter("datum.scheme == 'baseline'")
        .mark_point(size=90, shape="diamond", filled=True)
        .encode(**enc)
    )
    return finish(
        (lines + labels + point).properties(width=WIDTH * 1.6, height=HEIGHT * 1.3),
        "Energy cost vs scheduling delay over ω = 0.6 … 2.2 (paper 004 Figs. 32–33)",
        "Each point is one over-provisioning factor ω (labelled); the baseline, which ignores ω, is the "
        "diamond. Delay axis symmetric-log.",
    )
