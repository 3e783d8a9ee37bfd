"""Seed 003 (scheduling under variable capacity, Zhang & Chien): goodput decline at dynamic range 0.6
(Fig. 8) and termination policies (Fig. 11). Input: ``repro-zhang-chien`` rows (key ``[policy, r]`` with
policy ``fixed``, ``lifo``, ``random``, ``lww``, ``lfd``)."""

from __future__ import annotations

import altair as alt
import polars as pl

from analysis.results import key_part, mean_ci
from analysis.style import HEIGHT, WIDTH, finish

NAMES = {"fixed": "no variation", "lifo": "LIFO", "random": "Random", "lww": "LWW", "lfd": "LFD"}


def frame(res: pl.DataFrame) -> pl.DataFrame:
    """Rows with ``termination`` (the paper's name; ``no variation`` = constant 70 %)."""
    return key_part(res, 0, "term").with_columns(pl.col("term").replace(NAMES).alias("termination"))


def decline(res: pl.DataFrame) -> pl.DataFrame:
    """Per termination policy and replicate: goodput decline (%) against no variation."""
    df = frame(res)
    fixed = df.filter(pl.col("term") == "fixed").select("replicate", pl.col("goodput").alias("fixed_goodput"))
    return (
        df.filter(pl.col("term") != "fixed")
        .join(fixed, on="replicate")
        .with_columns((100 * (1 - pl.col("goodput") / pl.col("fixed_goodput"))).alias("decline_pct"))
    )


def policy_chart(res: pl.DataFrame) -> alt.TopLevelMixin:
    """Fig. 8/11: goodput per termination policy (mean, 95 % CI) next to no variation, and terminations."""
    df = frame(res)
    order = [n for n in NAMES.values() if n in set(df["termination"])]
    g = mean_ci(df, ["termination"], "goodput")
    t = mean_ci(df, ["termination"], "terminations")

    def panel(agg: pl.DataFrame, title: str) -> alt.LayerChart:
        base = alt.Chart(agg.to_pandas()).encode(
            x=alt.X("termination:N", sort=order, title="termination policy")
        )
        return (
            base.mark_bar().encode(
                y=alt.Y("mean:Q", title=title), color=alt.Color("termination:N", sort=order, legend=None)
            )
            + base.mark_errorbar().encode(y=alt.Y("lo:Q", title=title), y2="hi:Q")
        ).properties(width=WIDTH, height=HEIGHT)

    return finish(
        alt.hconcat(panel(g, "goodput (fraction of available core-seconds)"), panel(t, "job terminations")),
        "Termination policies under variable capacity (seed 003, Figs. 8 and 11)",
        "Azure sample, FCFS first-fit on 16-core nodes sized to 80 % of the mean capacity; random walk at 1 "
        "change/hour, dynamic range 0.6 ([0.4, 1.0]), step = range / 4; the policy picks the machines to turn "
        "off. Mean and 95 % CI over replicates.",
    )
