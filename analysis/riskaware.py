"""Seed 001 (risk-aware scheduling): goodput of FirstFitAware, TargetASAP and PackedTargetASAP over
replicates as box plots (Figs. 1–4). Input: ``repro-riskaware`` rows (key ``[policy, m_ra, r]``)."""

from __future__ import annotations

import altair as alt
import polars as pl

from analysis.results import key_part
from analysis.style import HEIGHT, finish

POLICY_NAMES = {"ff": "FirstFitAware", "target-asap": "TargetASAP", "packed-target-asap": "PackedTargetASAP"}


def frame(res: pl.DataFrame) -> pl.DataFrame:
    """Rows with ``scheduler`` (the paper's name) and ``m_ra`` (range of machine variation)."""
    df = key_part(res, 1, "m_ra", pl.Int64)
    return df.with_columns(pl.col("policy").replace(POLICY_NAMES).alias("scheduler"))


GOODPUT = {"goodput_partial": "GOODPUT(T) (fraction, incl. running jobs)"}
OTHER_METRICS = {
    "terminations": "job terminations",
    "aborted_volume": "aborted volume (fraction of capacity)",
    "max_stretch": "maximum stretch",
}


def boxplots(res: pl.DataFrame, metrics: dict[str, str] | None = None) -> alt.TopLevelMixin:
    """Figs. 3–4 style: one box per scheduler and M_ra for each metric (``name -> axis title``; default
    GOODPUT(T)), over replicates; metrics side by side."""
    metrics = metrics or GOODPUT
    df = frame(res)
    order = [n for n in POLICY_NAMES.values() if n in set(df["scheduler"])]
    panels = []
    for m, title in metrics.items():
        panels.append(
            alt.Chart(df.select("scheduler", "m_ra", m).to_pandas())
            .mark_boxplot(extent="min-max", size=22)
            .encode(
                x=alt.X("scheduler:N", sort=order, title=None, axis=alt.Axis(labelAngle=-30)),
                y=alt.Y(f"{m}:Q", title=title, scale=alt.Scale(zero=False)),
                color=alt.Color("scheduler:N", sort=order, legend=None),
                column=alt.Column("m_ra:O", title="M_ra (machines)"),
            )
            .properties(width=140, height=HEIGHT)
        )
    return finish(
        alt.hconcat(*panels),
        "Risk-aware schedulers against FirstFitAware (seed 001, Figs. 3–4)",
        "Borg 2011 jobs shorter than a day resampled at seed 001's density; M_avg = 24 machines of 24 cores, "
        "period φ = 1200 s, M_ra machines of variation; three weeks with a one-week warm-up. Boxes over "
        "replicates (seeds of workload and capacity).",
    )
