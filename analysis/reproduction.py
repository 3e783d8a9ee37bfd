"""The reproduction table (``out_reproduction``): every paper headline with the paper's value, varcap's
mean ± 95 % CI and the acceptance band, as a table and as one chart on a common scale."""

from __future__ import annotations

import altair as alt
import duckdb
import polars as pl

from analysis.style import finish


def rows(con: duckdb.DuckDBPyConnection, profile: str | None = None) -> pl.DataFrame:
    """Default-reading rows of ``out_reproduction`` of ``profile`` (None: the profile with the most
    headlines computed, full on a tie)."""
    df = con.sql(
        "SELECT * FROM out_reproduction WHERE headline_id NOT LIKE '%@%' ORDER BY paper, headline_id"
    ).pl()
    if profile is None:
        ran = df.filter(pl.col("varcap_mean").is_not_nan() & pl.col("varcap_mean").is_not_null())
        counts = ran.group_by("profile").len()
        best = sorted(counts.rows(), key=lambda r: (r[1], r[0] == "full"), reverse=True)
        profile = best[0][0] if best else "quick"
    return df.filter(pl.col("profile") == profile)


def normalized(df: pl.DataFrame) -> pl.DataFrame:
    """Positions on the band's scale: band = [0, 1]; ``pos``, ``lo``, ``hi`` (the CI) and ``paper``
    clipped to [−1.5, 2.5]; ``ran`` false for headlines with no value."""
    width = (
        pl.when((pl.col("band_high") - pl.col("band_low")) > 0)
        .then(pl.col("band_high") - pl.col("band_low"))
        .otherwise(1.0)
    )

    flag = pl.col("flag") if "flag" in df.columns else pl.lit("")

    def n(c: str) -> pl.Expr:
        return ((pl.col(c) - pl.col("band_low")) / width).clip(-1.5, 2.5)

    return df.with_columns(
        n("varcap_mean").alias("pos"),
        n("ci_low").alias("lo"),
        n("ci_high").alias("hi"),
        n("anchor_value").alias("paper"),
        (pl.col("varcap_mean").is_not_null() & pl.col("varcap_mean").is_not_nan()).alias("ran"),
        pl.when(pl.col("within_band"))
        .then(pl.lit("in band"))
        .when(
            flag.fill_null("").str.starts_with("degenerate")
            | flag.fill_null("").str.starts_with("not tested")
        )
        .then(pl.lit("degenerate"))
        .otherwise(pl.lit("outside"))
        .alias("verdict"),
    )


def bands_chart(df: pl.DataFrame) -> alt.TopLevelMixin:
    """Each headline on its own band's scale (band = 0…1, shaded): varcap's mean (dot) and CI, the
    paper's value (black tick). Values beyond the axis are clipped to its ends."""
    d = normalized(df).filter(pl.col("ran"))
    order = list(d["headline_id"])
    data = d.select(
        "headline_id", "section", "unit", "anchor_value", "varcap_mean", "pos", "lo", "hi", "paper", "verdict"
    ).to_pandas()
    y = alt.Y("headline_id:N", sort=order, title=None)
    band = alt.Chart(data).mark_rect(color="#d9ead3").encode(y=y, x=alt.datum(0), x2=alt.datum(1))
    ci = (
        alt.Chart(data)
        .mark_rule(strokeWidth=2)
        .encode(
            y=y,
            x="lo:Q",
            x2="hi:Q",
            color=alt.Color(
                "verdict:N",
                title=None,
                scale=alt.Scale(domain=["in band", "outside", "degenerate"], range=["#2a7", "#c33", "#999"]),
            ),
        )
    )
    dot = (
        alt.Chart(data)
        .mark_point(filled=True, size=60)
        .encode(
            y=y,
            x=alt.X(
                "pos:Q",
                title="position relative to the acceptance band (band = 0 … 1)",
                scale=alt.Scale(domain=[-1.5, 2.5]),
            ),
            color="verdict:N",
            tooltip=["headline_id", "section", "anchor_value", "varcap_mean", "unit"],
        )
    )
    tick = alt.Chart(data).mark_tick(color="black", thickness=2).encode(y=y, x="paper:Q")
    return finish(
        (band + ci + dot + tick).properties(width=520, height=max(120, 16 * len(order))),
        "Paper headlines: varcap against the acceptance bands",
        "Each headline on its own scale: the shaded band is the acceptance band written before the runs (0 = low "
        "end, 1 = high end), the dot varcap's mean over replicates with its 95 % CI (inside the value's possible range), the black tick the paper's "
        "value. Headlines not run are left out; values beyond the axis sit at its ends.",
    )


def table(df: pl.DataFrame) -> pl.DataFrame:
    """The table for display: headline, section, paper value, varcap mean and CI, band, verdict."""
    return df.select(
        "headline_id",
        "section",
        pl.format("{} {}", pl.col("anchor_value").round(3), pl.col("unit")).alias("paper"),
        pl.col("varcap_mean").round(3),
        pl.col("ci_low").round(3),
        pl.col("ci_high").round(3),
        pl.format("[{}, {}]", pl.col("band_low").round(3), pl.col("band_high").round(3)).alias("band"),
        "within_band",
        *[c for c in ("verdict", "n_decisive", "n_degenerate") if c in df.columns],
        "flag",
        "replicates",
        "ci_method",
        "explanation",
        "reading_history",
        *[c for c in ("notes",) if c in df.columns],
    )
