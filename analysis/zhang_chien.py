"""Paper 003 (scheduling under variable capacity, Zhang & Chien): goodput decline at dynamic range 0.6
(Fig. 8) and the paper's termination policies Random, LFD and LWW (§5.3, Fig. 11). Input:
``repro-zhang-chien`` rows; fields are read by name (the settings' ``termination``, the capacity's
``kind``), not from the builder's key."""

from __future__ import annotations

import altair as alt
import polars as pl

from analysis.results import json_field, mean_ci
from analysis.style import HEIGHT, WIDTH, finish

#: the paper's policies (§5.3) and the constant-70 % reference; LIFO is varcap's default, not the paper's
NAMES = {"fixed": "no variation", "lifo": "LIFO", "random": "Random", "lww": "LWW", "lfd": "LFD"}
PAPER_POLICIES = ("Random", "LFD", "LWW")
#: the default reading of the capacity model (studies/zhang_chien/scenarios.py ZC_MODELS)
DEFAULT_READING = "pool-fail"


def frame(res: pl.DataFrame) -> pl.DataFrame:
    """Rows with ``term`` (random, lww, lfd, lifo; ``fixed`` for the constant reference), ``termination``
    (the paper's name), and ``reading`` (``pool``/``machines`` × ``fail``/``requeue``; null for fixed)."""
    df = json_field(res, "settings_json", "termination", "term_setting")
    df = json_field(df, "capacity_json", "kind", "cap_kind")
    fixed = pl.col("cap_kind") == "constant"
    rule = pl.col("term_setting").fill_null("lifo")
    return df.with_columns(
        pl.when(fixed).then(pl.lit("fixed")).otherwise(rule.str.replace(r"-fail$", "")).alias("term"),
        pl.when(fixed)
        .then(pl.lit(None, dtype=pl.Utf8))
        .otherwise(
            pl.when(pl.col("cap_kind") == "pool").then(pl.lit("pool")).otherwise(pl.lit("machines"))
            + pl.when(rule.str.ends_with("-fail")).then(pl.lit("-fail")).otherwise(pl.lit("-requeue"))
        )
        .alias("reading"),
    ).with_columns(pl.col("term").replace(NAMES).alias("termination"))


def paper_frame(res: pl.DataFrame, reading: str = DEFAULT_READING) -> pl.DataFrame:
    """The paper's comparison: the Random, LFD and LWW rows of ``reading`` and the no-variation rows."""
    df = frame(res)
    return df.filter(
        (pl.col("term") == "fixed")
        | ((pl.col("reading") == reading) & pl.col("termination").is_in(PAPER_POLICIES))
    )


def decline(res: pl.DataFrame, reading: str = DEFAULT_READING) -> pl.DataFrame:
    """Per paper policy (Random, LFD, LWW of ``reading``) and replicate: goodput decline (%) against no
    variation."""
    df = paper_frame(res, reading)
    fixed = df.filter(pl.col("term") == "fixed").select("replicate", pl.col("goodput").alias("fixed_goodput"))
    return (
        df.filter(pl.col("term") != "fixed")
        .join(fixed, on="replicate")
        .with_columns((100 * (1 - pl.col("goodput") / pl.col("fixed_goodput"))).alias("decline_pct"))
    )


def policy_chart(res: pl.DataFrame, reading: str = DEFAULT_READING) -> alt.TopLevelMixin:
    """Fig. 8/11: goodput per paper policy (Random, LFD, LWW; mean, 95 % CI) next to no variation, and
    terminations, under the capacity-model ``reading``. ``ValueError`` if none of those policies ran."""
    df = paper_frame(res, reading)
    if not df.filter(pl.col("term") != "fixed").height:
        raise ValueError(f"no Random/LFD/LWW runs of reading {reading!r}")
    order = ["no variation", *PAPER_POLICIES]
    order = [n for n in order if n in set(df["termination"])]
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
        "Termination policies under variable capacity (paper 003, Figs. 8 and 11)",
        "Azure sample, FCFS first-fit on 16-core nodes sized to 80 % of the mean capacity; random walk at 1 "
        "change/hour, dynamic range 0.6 ([0.4, 1.0]), step = range / 4; the paper's policies (§5.3) pick the "
        f"jobs to terminate; capacity-model reading {reading}. No variation: constant 70 %. Mean and 95 % CI "
        "over replicates.",
    )
