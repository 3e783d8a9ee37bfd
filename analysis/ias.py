"""Thesis ch. 6: the Interval-Aware Scheduler against First-Fit — Table 6.2 (terminations cut and goodput
difference per workload), heuristics alone and combined (Figs. 6.1–6.2, on the generic heavy-tailed
instance), and aggressiveness (Fig. 6.3). Inputs: :func:`analysis.results.study_results` rows of
``repro-thesis-ch6`` and ``repro-generic``; the variant is read from each row's policy and settings."""

from __future__ import annotations

import json
from collections.abc import Mapping

import altair as alt
import polars as pl

from analysis.style import HEIGHT, WIDTH, finish

#: IAS settings that make a reading of the text (studies/thesis/scenarios.py), named ``ias-<value>``
_READING_SETTINGS = ("h1_threshold", "h4_reading", "survival_pool")
#: policies that are IAS with a heuristic left out (explaining runs), by variant name
_PARTIAL_IAS = {"ias-h2+h4": "ias-no-h1", "ias-h1": "ias-h1"}


def variant_name(policy: str, settings: Mapping[str, object]) -> str:
    """The study's name of a scheduler run from its policy and settings, by field name: ``ff``, ``ias``
    (A = 0.6, the default), ``ias-a0.1``, ``ias-p90`` / ``ias-literal`` / ``ias-all`` (readings),
    ``ias-no-h1``, ``ias-h1``; anything else ``policy`` with its settings (never a silent mislabel)."""
    if policy == "ff" and not settings:
        return "ff"
    if policy in _PARTIAL_IAS and set(settings) <= {"aggressiveness"}:
        return _PARTIAL_IAS[policy]
    if policy == "ias":
        a = f"{float(settings.get('aggressiveness', 0.6)):g}"  # type: ignore[arg-type]
        rest = {k: v for k, v in settings.items() if k != "aggressiveness"}
        if not rest:
            return "ias" if a == "0.6" else f"ias-a{a}"
        if a == "0.6" and len(rest) == 1 and next(iter(rest)) in _READING_SETTINGS:
            return f"ias-{next(iter(rest.values()))}"
    return " ".join([policy, *(f"{k}={v}" for k, v in sorted(settings.items()))])


def variants(res: pl.DataFrame) -> pl.DataFrame:
    """Add ``variant`` (``ff``, ``ias``, ``ias-a0.1``, …) from the rows' ``policy`` and ``settings_json``
    (by field name, never by the builder key's position)."""
    names = [
        variant_name(p, json.loads(s) if s else {})
        for p, s in zip(res["policy"], res["settings_json"], strict=True)
    ]
    return res.with_columns(pl.Series("variant", names, dtype=pl.Utf8))


def versus_ff(res: pl.DataFrame) -> pl.DataFrame:
    """Per workload, variant and replicate: terminations cut (%) and goodput difference (pp) against FF
    of the same workload and replicate."""
    df = variants(res)
    ff = df.filter(pl.col("variant") == "ff").select(
        "workload",
        "replicate",
        pl.col("terminations").alias("ff_terminations"),
        pl.col("goodput").alias("ff_goodput"),
    )
    return (
        df.filter(pl.col("variant") != "ff")
        .join(ff, on=["workload", "replicate"])
        .with_columns(
            pl.when(pl.col("ff_terminations") > 0)
            .then(100 * (1 - pl.col("terminations") / pl.col("ff_terminations")))
            .alias("terminations_cut_pct"),
            (100 * (pl.col("goodput") - pl.col("ff_goodput"))).alias("goodput_diff_pp"),
        )
    )


def _paper(col: str, values: Mapping[str, float] | None) -> pl.Expr:
    if not values:
        return pl.lit(None, dtype=pl.Float64)
    return pl.col(col).replace_strict(dict(values), default=None, return_dtype=pl.Float64)


def table_6_2(
    res: pl.DataFrame,
    paper_cut: Mapping[str, float] | None = None,
    paper_goodput_pp: Mapping[str, float] | None = None,
) -> pl.DataFrame:
    """Table 6.2 from ``repro-thesis-ch6`` rows: per workload, FF and IAS (A = 0.6) terminations, the cut
    (mean over replicates) next to the thesis' (``paper_cut``: workload → %), and the goodput difference
    next to the thesis' (``paper_goodput_pp``: workload → pp). The report asset passes the thesis'
    values (``studies.thesis.ias``); a workload without one gets null."""
    v = versus_ff(res).filter(pl.col("variant") == "ias")
    out = v.group_by("workload").agg(
        pl.col("ff_terminations").mean().alias("ff_terminations"),
        pl.col("terminations").mean().alias("ias_terminations"),
        pl.col("terminations_cut_pct").mean().alias("cut_pct_mean_of_replicates"),
        pl.col("goodput_diff_pp").mean(),
        pl.len().alias("replicates"),
    )
    # the cut of the mean terminations (a replicate with few FF terminations cannot dominate it)
    out = out.with_columns(
        pl.when(pl.col("ff_terminations") > 0)
        .then(100 * (1 - pl.col("ias_terminations") / pl.col("ff_terminations")))
        .alias("terminations_cut_pct")
    )
    return out.with_columns(
        _paper("workload", paper_cut).alias("paper_cut_pct"),
        _paper("workload", paper_goodput_pp).alias("paper_goodput_pp"),
    ).sort("workload")


def table_6_2_chart(tab: pl.DataFrame) -> alt.TopLevelMixin:
    """Table 6.2 as grouped bars: terminations cut by IAS, varcap next to the thesis, per workload."""
    long = tab.select(
        "workload", pl.col("terminations_cut_pct").alias("varcap"), pl.col("paper_cut_pct").alias("thesis")
    ).unpivot(index="workload", variable_name="source", value_name="cut_pct")
    base = alt.Chart(long.to_pandas()).encode(
        x=alt.X("workload:N", title="workload (Zipf skew; azure)"), xOffset=alt.XOffset("source:N")
    )
    labels = (
        base.mark_text(dy=-6, fontSize=9)
        .encode(y=alt.Y("shown:Q"), text=alt.Text("label:N"), detail="source:N")
        .transform_calculate(
            shown="datum.cut_pct == null ? 0 : clamp(datum.cut_pct, -100, 100)",
            label="datum.cut_pct == null ? 'no FF kills' : format(datum.cut_pct, '.0f')",
        )
    )
    chart = (
        base.mark_bar(clip=True)
        .encode(
            y=alt.Y(
                "cut_pct:Q",
                title="terminations cut by IAS vs FF (%; axis clipped at ±100)",
                scale=alt.Scale(domain=[-100, 100], clamp=True),
            ),
            color=alt.Color(
                "source:N",
                title=None,
                scale=alt.Scale(domain=["thesis", "varcap"], range=["#bbb", "#4c78a8"]),
            ),
            tooltip=["workload", "source", "cut_pct"],
        )
        .properties(width=WIDTH * 1.8, height=HEIGHT)
    ) + labels
    return finish(
        chart,
        "IAS (A = 60 %) against First-Fit: fewer terminations (thesis Table 6.2)",
        "Reduction in job terminations, 1 change/hour, step 0.15, dynamic range 60 %; Zipf workloads with a "
        "warm-up as long as the window; cut of the mean terminations over replicates (labels: the value; a "
        "negative cut means IAS terminated more; 'no FF kills': FF terminated nothing, no cut to compute). "
        "Grey: the thesis' printed values.",
    )


def goodput_chart(tab: pl.DataFrame) -> alt.TopLevelMixin:
    """Goodput difference IAS − FF (pp) per workload, with the ±2 pp 'similar goodput' budget shaded."""
    df = tab.select("workload", "goodput_diff_pp", "paper_goodput_pp").to_pandas()
    band = (
        alt.Chart(pl.DataFrame({"lo": [-2.0], "hi": [2.0]}).to_pandas())
        .mark_rect(opacity=0.15, color="green")
        .encode(y="lo:Q", y2="hi:Q")
    )
    bars = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("workload:N", title="workload"),
            y=alt.Y("goodput_diff_pp:Q", title="goodput IAS − FF (percentage points)"),
        )
    )
    ticks = alt.Chart(df).mark_tick(color="black", thickness=3).encode(x="workload:N", y="paper_goodput_pp:Q")
    return finish(
        (band + bars + ticks).properties(width=WIDTH * 1.8, height=HEIGHT),
        "Goodput cost of IAS (thesis Table 6.2, eq. 3.1)",
        "Goodput of IAS minus goodput of FF; shaded: the thesis' ±2 pp budget for 'similar goodput'; black "
        "ticks: printed values (Zipf-1.5: +2.02 pp, Azure: −0.05 pp).",
    )


GENERIC_LABELS = {
    "ias-a0.1": "IAS A = 0.1",
    "ias": "IAS A = 0.6",
    "ias-a0.9": "IAS A = 0.9",
    "ias-no-h1": "H2 + H4 (no H1)",
}


def generic_chart(res: pl.DataFrame) -> alt.TopLevelMixin:
    """Figs. 6.1–6.3 on the generic Pareto instance: terminations cut and goodput difference against FF
    for IAS at three aggressiveness levels and without H1, per workload reading (mean over replicates)."""
    v = versus_ff(res).with_columns(pl.col("variant").replace(GENERIC_LABELS).alias("scheduler"))
    agg = v.group_by("workload", "scheduler").agg(
        pl.col("terminations_cut_pct").mean(), pl.col("goodput_diff_pp").mean()
    )
    order = list(GENERIC_LABELS.values())
    base = alt.Chart(agg.to_pandas()).encode(
        x=alt.X("scheduler:N", sort=order, title=None),
        color=alt.Color("workload:N", title="Pareto (α-xm s)"),
        xOffset="workload:N",
    )
    cut = (
        base.mark_bar()
        .encode(y=alt.Y("terminations_cut_pct:Q", title="terminations cut vs FF (%)"))
        .properties(width=WIDTH, height=HEIGHT)
    )
    good = (
        base.mark_bar()
        .encode(y=alt.Y("goodput_diff_pp:Q", title="goodput − FF (pp)"))
        .properties(width=WIDTH, height=HEIGHT)
    )
    return finish(
        alt.hconcat(cut, good),
        "Heuristics and aggressiveness on a heavy-tailed instance (thesis Figs. 6.1–6.3)",
        "Pareto job durations (capped at 72 h), 40 × 24 cores, 14 days, 1 change/hour, step 0.15. The thesis: "
        "'IAS consistently outperforms the baseline in reducing job terminations, regardless of the scheduler's "
        "aggressiveness'; H2 + H4 isolates the machine partition H1.",
    )


def observed_chart(summary: pl.DataFrame) -> alt.TopLevelMixin:
    """``ias`` and ``ias-general`` against First-Fit on the observed grids (rows of
    :func:`studies.thesis.observed.summary` of ``out_thesis_ias_instances``): the termination cut (%) per
    grid and workload, mean and 95 % interval over the decisive seeds; a grid without a decisive seed has
    no mark."""
    df = summary.filter(pl.col("n_decisive") > 0).select(
        "grid", "workload", "policy", "termination_cut_pct", "termination_cut_pct_lo", "termination_cut_pct_hi",
        "goodput_diff_pp", "n_decisive",
    )
    base = alt.Chart().encode(
        y=alt.Y("grid:N", title=None),
        yOffset=alt.YOffset("policy:N"),
        color=alt.Color("policy:N", title="policy"),
    )
    rule = base.mark_rule().encode(
        x=alt.X("termination_cut_pct_lo:Q", title="terminations cut vs First-Fit (%)"),
        x2="termination_cut_pct_hi:Q",
    )
    dots = base.mark_point(filled=True, size=60).encode(
        x="termination_cut_pct:Q",
        tooltip=["grid", "workload", "policy", "termination_cut_pct", "goodput_diff_pp", "n_decisive"],
    )
    zero = alt.Chart().mark_rule(strokeDash=[4, 4]).encode(x=alt.datum(0.0))
    return finish(
        (zero + rule + dots)
        .properties(width=WIDTH, height=HEIGHT / 2)
        .facet(row=alt.Row("workload:N", title=None), data=df.to_pandas()),
        "IAS and ias-general under observed grid capacity",
        "Carbon-budget capacity (mean 70 % of the machines, hourly) on the embedded CAISO, ERCOT and MISO months; "
        "heavy-tailed jobs. Cut > 0: fewer terminations than First-Fit. Mean and 95 % interval over the "
        "decisive workload seeds.",
    )
