"""Thesis ch. 6, the ``ias-robustness`` grid: does IAS keep §6.2's claim ("consistently outperforms the
baseline in reducing job terminations, regardless of the scheduler's aggressiveness") on heavy-tailed Pareto
instances it was not designed on? Input: :func:`analysis.results.study_results` rows of ``ias-robustness``
(key ``[alpha, xm_s, mix, load, variant, r]``, :func:`studies.thesis.scenarios.robustness_scenarios`)."""

from __future__ import annotations

import altair as alt
import polars as pl

from analysis.results import key_part
from analysis.style import finish

CELL = ["alpha", "xm_s", "mix", "load"]
#: the claim in one cell: fewer terminations than FF and goodput at least FF − 2 pp
GOODPUT_TOLERANCE_PP = 2.0
LABELS = {
    "ias-a0.1": "IAS A = 0.1",
    "ias-a0.6": "IAS A = 0.6",
    "ias-a0.9": "IAS A = 0.9",
    "ias-h1": "H1 alone",
    "ias-no-h1": "IAS without H1",
}


def cells(res: pl.DataFrame) -> pl.DataFrame:
    """Per grid cell, variant and replicate: terminations cut (%) and goodput difference (pp) against FF
    in the same cell and replicate. The cut is null where FF has no termination. Raises ``ValueError``
    if a row's key does not have the grid's six parts."""
    if res.height and (res["key"].list.len() != 6).any():
        raise ValueError("ias-robustness rows need key [alpha, xm_s, mix, load, variant, r]")
    df = key_part(res, 0, "alpha", pl.Float64)
    df = key_part(df, 1, "xm_s", pl.Float64)
    df = key_part(df, 2, "mix")
    df = key_part(df, 3, "load", pl.Float64)
    df = key_part(df, 4, "variant")
    ff = df.filter(pl.col("variant") == "ff").select(
        *CELL,
        "replicate",
        pl.col("terminations").alias("ff_terminations"),
        pl.col("goodput").alias("ff_goodput"),
    )
    return (
        df.filter(pl.col("variant") != "ff")
        .join(ff, on=[*CELL, "replicate"])
        .with_columns(
            pl.when(pl.col("ff_terminations") > 0)
            .then(100 * (1 - pl.col("terminations") / pl.col("ff_terminations")))
            .alias("cut_pct"),
            (100 * (pl.col("goodput") - pl.col("ff_goodput"))).alias("goodput_pp"),
        )
        .select(*CELL, "variant", "replicate", "terminations", "ff_terminations", "cut_pct", "goodput_pp")
    )


def grid(res: pl.DataFrame, variant: str = "ias-a0.6") -> pl.DataFrame:
    """Per cell, for ``variant``: mean cut and goodput difference over the replicates and whether the cell
    holds the claim (mean cut > 0 and mean goodput ≥ FF − :data:`GOODPUT_TOLERANCE_PP`), sorted as the
    grid (α, xm, mix, load)."""
    v = cells(res).filter(pl.col("variant") == variant)
    return (
        v.group_by(CELL)
        .agg(
            pl.col("cut_pct").mean(),
            pl.col("goodput_pp").mean(),
            pl.len().alias("replicates"),
        )
        .with_columns(
            ((pl.col("cut_pct") > 0) & (pl.col("goodput_pp") >= -GOODPUT_TOLERANCE_PP))
            .fill_null(False)
            .alias("holds"),
            pl.format("α {} · xm {} s", pl.col("alpha"), pl.col("xm_s").cast(pl.Int64)).alias("workload"),
            pl.format("{} · load {}", pl.col("mix"), pl.col("load")).alias("setting"),
        )
        .sort(CELL)
    )


def _heat(tab: pl.DataFrame, value: str, title: str, scheme: str, domain_mid: float) -> alt.LayerChart:
    base = alt.Chart(tab.to_pandas()).encode(
        x=alt.X("setting:N", title="core mix · offered load", sort=None),
        y=alt.Y("workload:N", title="Pareto durations", sort=None),
    )
    rect = base.mark_rect(stroke="white").encode(
        color=alt.Color(f"{value}:Q", title=title, scale=alt.Scale(scheme=scheme, domainMid=domain_mid))
    )
    text = base.mark_text(fontSize=10).encode(text=alt.Text("label:N"), color=alt.value("black"))
    return alt.layer(rect, text).properties(width=240, height=160)


def grid_chart(tab: pl.DataFrame, variant_label: str = "IAS A = 0.6") -> alt.TopLevelMixin:
    """Two heat maps of :func:`grid`'s table: the terminations cut and the goodput difference against FF
    per cell; a failing cell's label ends in ✗."""
    mark = pl.when(pl.col("holds")).then(pl.lit("")).otherwise(pl.lit(" ✗"))
    cut = tab.with_columns(pl.format("{}{}", pl.col("cut_pct").round(0).cast(pl.Int64), mark).alias("label"))
    gp = tab.with_columns(pl.format("{}{}", pl.col("goodput_pp").round(1), mark).alias("label"))
    failing = tab.filter(~pl.col("holds")).height
    return finish(
        alt.hconcat(
            _heat(cut, "cut_pct", "terminations cut vs FF (%)", "redblue", 0.0),
            _heat(gp, "goodput_pp", "goodput − FF (pp)", "redblue", -GOODPUT_TOLERANCE_PP),
        ).resolve_scale(color="independent"),
        f"Is IAS robust off the thesis' workloads? {variant_label} against First-Fit "
        f"({tab.height - failing} of {tab.height} cells hold)",
        "The robustness grid: Pareto durations (α, minimum xm, capped at 72 h), light and heavy core mixes, offered "
        "load of the mean capacity, random-walk capacity (1 change/hour, step 0.15, dynamic range 60 %), no "
        "warm-up; mean over the capacity seeds. The thesis (§6.2): “IAS consistently outperforms the baseline "
        "in reducing job terminations, regardless of the scheduler's aggressiveness”. A cell holds with a cut "
        "above 0 and goodput at least FF − 2 pp; ✗ marks a failing cell (its cause: the study's evidence).",
    )
