"""Beyond the papers, real preemption: the ``spot-real`` study's rows — waste on real spot
availability traces against matched random walks, IAS on pools without a stable floor, and the
checkpoint-interval trade-off — with mean ± 95 % CI over seeds (Student's t: three seeds).

Rows are the study's rows of ``out_study_results`` for one profile (``spot-real`` or ``spot-real-quick``),
each with the study builder's key ``[zone, capacity, variant, τ, seed]`` (``out_study_scenarios``)."""

from __future__ import annotations

import math

import altair as alt
import duckdb
import polars as pl

from analysis.results import study_results
from analysis.style import HEIGHT, WIDTH, finish

STUDY = "spot-real"
FRACTION = (0.0, 1.0)  # goodput and wasted fraction: shares of the available core-seconds
CAP_NAMES = {"real": "real trace", "walk-rate": "walk (mean, rate)", "walk-shape": "walk (mean, rate, step)"}


def spot_rows(con: duckdb.DuckDBPyConnection, profile: str) -> pl.DataFrame:
    """The study's rows in ``profile`` with ``zone``, ``cap`` (real, walk-rate, walk-shape), ``variant``
    (policy and its non-checkpoint settings), ``ck_interval_s`` (0: off) from their keys. Empty if the
    study has not run; ``LookupError`` if the results tables are missing."""
    df = study_results(con, STUDY, profile)
    if df.height == 0:
        return df.with_columns(
            pl.lit(None, pl.Utf8).alias("zone"),
            pl.lit(None, pl.Utf8).alias("cap"),
            pl.lit(None, pl.Utf8).alias("variant"),
            pl.lit(None, pl.Float64).alias("ck_interval_s"),
        )
    k = pl.col("key")
    return df.with_columns(
        k.list.get(0).alias("zone"),
        k.list.get(1).alias("cap"),
        k.list.get(2).alias("variant"),
        k.list.get(3).cast(pl.Float64).alias("ck_interval_s"),
    )


def mean_ci(
    df: pl.DataFrame, by: list[str], value: str, bounds: tuple[float, float] = (-math.inf, math.inf)
) -> pl.DataFrame:
    """Mean of ``value`` per ``by`` over seeds with a Student-t 95 % interval (``lo``/``hi``; the mean for
    one seed) kept inside the value's possible range ``bounds``, ``sd`` and ``n``."""
    from scipy.special import stdtrit  # Student t's quantile, as scipy.stats.t.ppf (0.3 s to import, not 0.8)

    g = df.group_by(by).agg(
        pl.col(value).mean().alias("mean"),
        pl.col(value).std().fill_null(0.0).alias("sd"),
        pl.len().alias("n"),
    )
    q = [float(stdtrit(n - 1, 0.975)) if n > 1 else 0.0 for n in g["n"]]
    half = pl.Series("q", q) * g["sd"] / g["n"].cast(pl.Float64).sqrt()
    lo, hi = (pl.col("mean") - half).clip(*bounds), (pl.col("mean") + half).clip(*bounds)
    return g.with_columns(lo.alias("lo"), hi.alias("hi")).sort(by)


def platform(rows: pl.DataFrame) -> str:
    """The rows' platform and horizon for captions (``16 × 8 cores, 14 days, 3 seeds``)."""
    if rows.height == 0:
        return "no runs"
    days = rows["horizon_s"].max() / 86400.0
    return (
        f"{rows['workload'][0]} on {rows['machines'].max()} × {rows['cores'].max():g} cores, {days:g} days, "
        f"{rows['seed'].n_unique()} seeds"
    )


def waste_table(rows: pl.DataFrame, variants: tuple[str, ...] = ("ff",)) -> pl.DataFrame:
    """Wasted fraction, mean ± 95 % CI over seeds, per zone × capacity × variant, checkpointing off."""
    off = rows.filter((pl.col("ck_interval_s") == 0) & pl.col("variant").is_in(list(variants)))
    return mean_ci(off, ["zone", "cap", "variant"], "wasted_fraction", FRACTION)


def understatement(rows: pl.DataFrame) -> pl.DataFrame:
    """Per zone and walk reading: FF's wasted fraction on the real trace over that on the matched walk
    (seed-paired mean of the ratio)."""
    ff = rows.filter((pl.col("ck_interval_s") == 0) & (pl.col("variant") == "ff"))
    real = ff.filter(pl.col("cap") == "real").select("zone", "seed", pl.col("wasted_fraction").alias("real"))
    walk = ff.filter(pl.col("cap") != "real").select("zone", "seed", "cap", "wasted_fraction")
    j = walk.join(real, on=["zone", "seed"]).with_columns(
        (pl.col("real") / pl.col("wasted_fraction")).alias("x")
    )
    return mean_ci(j, ["zone", "cap"], "x", (0.0, math.inf))


def policy_table(rows: pl.DataFrame, metric: str = "goodput") -> pl.DataFrame:
    """``metric`` mean ± CI per capacity × variant × checkpointing (1800 s or off), over zones and seeds."""
    sel = rows.filter(pl.col("ck_interval_s").is_in([0.0, 1800.0])).with_columns(
        pl.when(pl.col("ck_interval_s") > 0).then(pl.lit("on")).otherwise(pl.lit("off")).alias("checkpoint")
    )
    return mean_ci(sel, ["cap", "variant", "checkpoint"], metric, FRACTION)


def interval_table(rows: pl.DataFrame, metric: str = "goodput") -> pl.DataFrame:
    """FF on the real traces at each checkpoint interval (0 = off), mean ± CI over seeds, per zone; and
    IAS without checkpoints as ``variant`` ``ias`` at interval 0."""
    real = rows.filter(pl.col("cap") == "real")
    ff = real.filter(pl.col("variant") == "ff")
    ias = real.filter((pl.col("variant") == "ias") & (pl.col("ck_interval_s") == 0))
    return mean_ci(pl.concat([ff, ias]), ["zone", "variant", "ck_interval_s"], metric, FRACTION)


def checkpoint_pays(rows: pl.DataFrame, metric: str = "goodput") -> pl.DataFrame:
    """Per zone and checkpoint interval τ: First-Fit with checkpoints every τ minus IAS without checkpoints,
    seed by seed on the real trace (same jobs), mean ± 95 % CI (t); ``verdict`` ``pays`` if the interval
    lies above 0, ``loses`` if below, else ``no difference shown``."""
    real = rows.filter(pl.col("cap") == "real")
    ff = real.filter((pl.col("variant") == "ff") & (pl.col("ck_interval_s") > 0)).select(
        "zone", "seed", "ck_interval_s", pl.col(metric).alias("ff")
    )
    ias = real.filter((pl.col("variant") == "ias") & (pl.col("ck_interval_s") == 0)).select(
        "zone", "seed", pl.col(metric).alias("ias")
    )
    d = ff.join(ias, on=["zone", "seed"]).with_columns((pl.col("ff") - pl.col("ias")).alias("diff"))
    return mean_ci(d, ["zone", "ck_interval_s"], "diff").with_columns(
        pl.when(pl.col("lo") > 0)
        .then(pl.lit("pays"))
        .when(pl.col("hi") < 0)
        .then(pl.lit("loses"))
        .otherwise(pl.lit("no difference shown"))
        .alias("verdict")
    )


def waste_chart(t: pl.DataFrame, where: str = "") -> alt.TopLevelMixin:
    """Bars of FF's wasted fraction per zone and capacity, with 95 % CIs."""
    d = t.with_columns(pl.col("cap").replace_strict(CAP_NAMES).alias("capacity"))
    src = alt.Chart(d.to_pandas())
    base = src.encode(
        x=alt.X("capacity:N", title=None, sort=list(CAP_NAMES.values())),
        color=alt.Color("capacity:N", sort=list(CAP_NAMES.values())),
    )
    title = "wasted fraction of available core-s"
    bars = base.mark_bar().encode(y=alt.Y("mean:Q", title=title))
    err = src.mark_errorbar(color="black", thickness=1.5).encode(
        x=alt.X("capacity:N", sort=list(CAP_NAMES.values())), y=alt.Y("lo:Q", title=title), y2="hi:Q"
    )
    chart = (
        (bars + err)
        .properties(width=WIDTH // 4, height=HEIGHT)
        .facet(column=alt.Column("zone:N", title=None))
    )
    return finish(
        chart,
        "First-Fit's wasted work: real spot traces vs matched random walks",
        f"{where}; 80 % of each trace's mean capacity offered; mean ± 95 % CI (t) over seeds. Walks match "
        "the trace's mean and change rate (thesis step 0.15, range 0.6), or also its mean "
        "step and the widest symmetric range.",
    )


def interval_chart(t: pl.DataFrame, metric: str = "goodput", where: str = "") -> alt.TopLevelMixin:
    """FF's ``metric`` against checkpoint interval (log x) per zone, IAS without checkpoints as a rule."""
    ff = t.filter((pl.col("variant") == "ff") & (pl.col("ck_interval_s") > 0))
    ias = t.filter(pl.col("variant") == "ias")
    off = t.filter((pl.col("variant") == "ff") & (pl.col("ck_interval_s") == 0))
    x = alt.X("ck_interval_s:Q", scale=alt.Scale(type="log"), title="checkpoint interval τ (s)")
    line = alt.Chart(ff.to_pandas()).mark_line(point=True).encode(x=x, y=alt.Y("mean:Q", title=metric))
    band = alt.Chart(ff.to_pandas()).mark_errorbar().encode(x=x, y=alt.Y("lo:Q", title=metric), y2="hi:Q")
    r_ias = alt.Chart(ias.to_pandas()).mark_rule(strokeDash=[6, 3], color="firebrick").encode(y="mean:Q")
    r_off = alt.Chart(off.to_pandas()).mark_rule(strokeDash=[2, 2], color="gray").encode(y="mean:Q")
    chart = alt.hconcat(
        *[
            alt.layer(
                line.transform_filter(alt.datum.zone == z),
                band.transform_filter(alt.datum.zone == z),
                r_ias.transform_filter(alt.datum.zone == z),
                r_off.transform_filter(alt.datum.zone == z),
            ).properties(width=WIDTH // 3, height=HEIGHT, title=z)
            for z in sorted(set(t["zone"].drop_nulls()))
        ]
    )
    return finish(
        chart,
        f"Checkpoint interval against {metric} on the real spot traces",
        f"{where}. First-Fit with checkpoints every τ s (δ = 30 s a checkpoint, R = 60 s recovery), mean ± "
        "95 % CI (t) over seeds; red dashed: IAS without checkpoints; grey dotted: First-Fit without.",
    )


def checkpoint_chart(t: pl.DataFrame, metric: str = "goodput", where: str = "") -> alt.TopLevelMixin:
    """``metric`` with checkpointing off and on (τ = 1800 s) for FF and IAS per capacity, 95 % CIs
    (:func:`policy_table` over zones and seeds)."""
    d = t.filter(pl.col("variant").is_in(["ff", "ias"])).with_columns(
        pl.col("cap").replace_strict(CAP_NAMES, default=pl.col("cap")).alias("capacity")
    )
    src = alt.Chart(d.to_pandas())
    base = src.encode(
        x=alt.X("checkpoint:N", title=None, sort=["off", "on"]),
        color=alt.Color("checkpoint:N", sort=["off", "on"]),
    )
    bars = base.mark_bar().encode(y=alt.Y("mean:Q", title=metric))
    err = src.mark_errorbar(color="black", thickness=1.5).encode(
        x=alt.X("checkpoint:N", sort=["off", "on"]), y=alt.Y("lo:Q", title=metric), y2="hi:Q"
    )
    chart = (
        (bars + err)
        .properties(width=WIDTH // 8, height=HEIGHT)
        .facet(column=alt.Column("variant:N", title=None), row=alt.Row("capacity:N", title=None))
    )
    return finish(
        chart,
        f"Checkpointing off and on (τ = 1800 s): {metric} of First-Fit and IAS",
        f"{where}. δ = 30 s a checkpoint, R = 60 s recovery; mean ± 95 % CI (t) over zones × seeds. With "
        "checkpointing, goodput counts only the jobs' own work.",
    )


def trace_frame(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """``core_spot_availability`` as fractions of each pool (``day``, ``fraction``): the ticks where the
    value changes and each trace's last (a step line drawn from them is the whole trace); empty if not built."""
    from analysis.results import has_table

    if not has_table(con, "core_spot_availability"):
        return pl.DataFrame(schema={"trace": pl.Utf8, "day": pl.Float64, "fraction": pl.Float64})
    return con.sql(
        "SELECT trace, day, fraction FROM (SELECT trace, tick, time_s / 86400.0 AS day, available, "
        "available::DOUBLE / nodes AS fraction, lag(available) OVER w AS prev, lead(tick) OVER w AS next "
        "FROM core_spot_availability WINDOW w AS (PARTITION BY trace ORDER BY tick)) "
        "WHERE prev IS NULL OR available <> prev OR next IS NULL ORDER BY trace, day"
    ).pl()


def trace_chart(t: pl.DataFrame) -> alt.TopLevelMixin:
    """Each pool's available fraction over time (step lines), one row per trace."""
    chart = (
        alt.Chart(t.to_pandas())
        .mark_line(interpolate="step-after", strokeWidth=0.8)
        .encode(
            x=alt.X("day:Q", title="day from 2023-08-27"),
            y=alt.Y("fraction:Q", title="instances available / 16"),
        )
        .properties(width=WIDTH, height=HEIGHT // 3)
        .facet(row=alt.Row("trace:N", title=None))
    )
    return finish(
        chart,
        "Public AWS spot availability: three 16-node V100 pools",
        "skypilot-org/spot-traces (NSDI'24), 300 s ticks; the pools hold zero instances 37–56 % of the time, "
        "so no machine is ever stable (the lower bound IAS's H1 builds on is 0).",
    )
