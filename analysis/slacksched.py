"""Paper 002 (SlackSched on harvest VMs): job completion time (JCT) per job of many tasks — CDFs per
scheduler (Fig. 9) and mean / P90 JCT reduction against YARN's CapacityScheduler (Fig. 10). Input:
``repro-slacksched`` rows (key ``[policy, r]``) and their per-task tables (``jobs_path``)."""

from __future__ import annotations

from collections.abc import Mapping

import altair as alt
import numpy as np
import polars as pl

from analysis.results import jobs_table
from analysis.style import HEIGHT, WIDTH, finish

POLICY_NAMES = {
    "capsched": "CapacityScheduler",
    "slacksched": "SlackSched",
    "slacksched-nodelay": "SlackSched-NoDelay",
    "slacksched-heartbeat": "SlackSched (Algorithm 3)",
    "oracle": "Oracle",
}


def job_jct(tasks: pl.DataFrame) -> pl.DataFrame:
    """Per job (task ids ``g<job>-t<task>``): JCT = last task end − job arrival, for jobs whose tasks all
    completed (``complete``). ``ValueError`` if a task id does not have that form."""
    g = tasks.with_columns(pl.col("job_id").str.extract(r"^g(\d+)-t\d+$", 1).cast(pl.Int64).alias("group"))
    if g["group"].null_count():
        raise ValueError("job_jct: task ids must look like g<job>-t<task>")
    return (
        g.group_by("group")
        .agg(
            pl.col("submit_s").min(),
            pl.col("end_s").max().alias("last_end_s"),
            (pl.col("status") == "completed").all().alias("complete"),
        )
        .with_columns((pl.col("last_end_s") - pl.col("submit_s")).alias("jct_s"))
        .sort("group")
    )


def jct_frame(res: pl.DataFrame) -> pl.DataFrame:
    """JCT of every complete job of every run of the main reading (study key ``(policy, replicate)``; the
    explaining readings — Algorithm 3's sweep, 100–300-task jobs, independent tasks — are left out): ``scheduler, replicate, group,
    jct_s``."""
    out = []
    for r in res.iter_rows(named=True):
        if r.get("key") is not None and len(r["key"]) != 2:
            continue
        j = job_jct(jobs_table(r["jobs_path"])).filter(pl.col("complete"))
        out.append(
            j.select("group", "jct_s").with_columns(
                pl.lit(POLICY_NAMES.get(r["policy"], r["policy"])).alias("scheduler"),
                pl.lit(r["replicate"]).alias("replicate"),
            )
        )
    return (
        pl.concat(out)
        if out
        else pl.DataFrame(
            schema={"group": pl.Int64, "jct_s": pl.Float64, "scheduler": pl.Utf8, "replicate": pl.Int64}
        )
    )


def reductions(jct: pl.DataFrame) -> pl.DataFrame:
    """Per scheduler and replicate: reduction (%) of mean and P90 JCT against the CapacityScheduler, over
    the jobs complete under both (as paper 002 compares the same jobs)."""
    base = jct.filter(pl.col("scheduler") == "CapacityScheduler").select(
        "replicate", "group", pl.col("jct_s").alias("base_s")
    )
    both = jct.filter(pl.col("scheduler") != "CapacityScheduler").join(base, on=["replicate", "group"])
    rows = []
    for (sched, rep), g in both.group_by("scheduler", "replicate"):
        b, s = g["base_s"].to_numpy(), g["jct_s"].to_numpy()
        rows.append(
            {
                "scheduler": sched,
                "replicate": rep,
                "jobs": g.height,
                "mean": 100 * (1 - s.mean() / b.mean()),
                "p90": 100 * (1 - np.percentile(s, 90) / np.percentile(b, 90)),
            }
        )
    return pl.DataFrame(rows).sort("scheduler", "replicate")


def cdf_chart(jct: pl.DataFrame, replicate: int = 0) -> alt.TopLevelMixin:
    """Fig. 9 style: CDF of JCT (minutes, log) per scheduler, one replicate."""
    d = jct.filter(pl.col("replicate") == replicate)
    qs = np.linspace(0.01, 0.99, 99)
    rows = [
        {"scheduler": s, "q": float(q), "minutes": float(np.quantile(g["jct_s"].to_numpy(), q)) / 60}
        for (s,), g in d.group_by("scheduler")
        for q in qs
    ]
    chart = (
        alt.Chart(pl.DataFrame(rows).to_pandas())
        .mark_line()
        .encode(
            x=alt.X("minutes:Q", title="job completion time (min, log)", scale=alt.Scale(type="log")),
            y=alt.Y("q:Q", title="fraction of jobs (CDF)", axis=alt.Axis(format="%")),
            color=alt.Color("scheduler:N", title="scheduler", sort=list(POLICY_NAMES.values())),
        )
        .properties(width=WIDTH * 1.6, height=HEIGHT)
    )
    return finish(
        chart,
        "Job completion time on harvest VMs (paper 002, Figs. 9–10)",
        f"Per job of 100–300 tasks (Seismic A-like, uniform task runtimes), 64 synthetic HVMs of up to 48 cores, "
        f"load 0.6; jobs complete under the scheduler; replicate {replicate}.",
    )


def reduction_chart(
    red: pl.DataFrame, bands: Mapping[str, tuple[float, float]] | None = None
) -> alt.TopLevelMixin:
    """Fig. 10: mean and P90 JCT reduction vs the CapacityScheduler per scheduler (points: replicates;
    bars: mean), the paper's ranges shaded: ``bands`` (statistic ``mean``/``p90`` → (low, high) %; the
    report asset passes paper 002's, ``studies.slacksched.claims``; none: no shading)."""
    bands = dict(bands or {})
    long = red.unpivot(
        index=["scheduler", "replicate"],
        on=["mean", "p90"],
        variable_name="statistic",
        value_name="reduction_pct",
    )
    shade = pl.DataFrame(
        {
            "statistic": list(bands),
            "lo": [float(b[0]) for b in bands.values()],
            "hi": [float(b[1]) for b in bands.values()],
        },
        schema={"statistic": pl.Utf8, "lo": pl.Float64, "hi": pl.Float64},
    )
    data = long.join(shade, on="statistic", how="left").to_pandas()
    band = alt.Chart().mark_rect(opacity=0.12, color="green").encode(y="min(lo):Q", y2="min(hi):Q")
    bars = (
        alt.Chart()
        .mark_bar(opacity=0.7)
        .encode(
            x=alt.X("scheduler:N", title=None, sort=list(POLICY_NAMES.values())),
            y=alt.Y("mean(reduction_pct):Q", title="JCT reduction vs CapacityScheduler (%)"),
            color=alt.Color("scheduler:N", legend=None),
        )
    )
    pts = (
        alt.Chart()
        .mark_point(color="black")
        .encode(x=alt.X("scheduler:N", sort=list(POLICY_NAMES.values())), y="reduction_pct:Q")
    )
    chart = (
        alt.layer(*((band,) if bands else ()), bars, pts, data=data)
        .properties(width=WIDTH, height=HEIGHT)
        .facet(
            column=alt.Column(
                "statistic:N",
                title=None,
                header=alt.Header(labelExpr="datum.value == 'mean' ? 'mean JCT' : 'P90 JCT'"),
            )
        )
    )
    shaded = " and ".join(
        f"{lo:g}–{hi:g} % ({'mean' if s == 'mean' else 'P90'})" for s, (lo, hi) in bands.items()
    )
    return finish(
        chart,
        "JCT reduction against the CapacityScheduler (paper 002, Fig. 10)",
        "1 − JCT(scheme) / JCT(CapacityScheduler) over jobs complete under both; bars: mean over replicates, "
        "points: replicates" + (f"; shaded: the paper's {shaded}." if shaded else "."),
    )
