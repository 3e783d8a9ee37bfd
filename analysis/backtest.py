"""Beyond the papers, the deployed rules' backtest: charts and tables of ``out_backtest`` and
``out_backtest_errors`` (written by :mod:`studies.beyond_backtest`). Every number is the study's; these
functions only select and draw. Savings are against run-now; the marginal accounting (SGIP's MOER) is
what every rule optimises, the average accounting is shown where the study had one."""

from __future__ import annotations

import altair as alt
import duckdb
import polars as pl

from analysis.results import has_table
from analysis.style import HEIGHT, WIDTH, finish

SOURCES = {
    "issued": "issued forecast",
    "perfect": "perfect forecast",
    "persistence": "persistence",
    "-": "no forecast",
}
RULES = ("cats", "carbon-aware-sdk", "compute-gardener", "oracle")


def pick(con: duckdb.DuckDBPyConnection, profile: str = "auto") -> str:
    """``profile`` if it has rows; ``auto``: ``full`` when it has rows, else ``quick``; ``""`` when the
    table is missing or empty."""
    if not has_table(con, "out_backtest"):
        return ""
    have = {r[0] for r in con.sql("SELECT DISTINCT profile FROM out_backtest").fetchall()}
    if profile != "auto":
        return profile if profile in have else ""
    return "full" if "full" in have else ("quick" if "quick" in have else "")


def rows(con: duckdb.DuckDBPyConnection, profile: str) -> pl.DataFrame:
    """The profile's rows of ``out_backtest`` (empty when there are none)."""
    if not profile:
        return pl.DataFrame()
    return con.sql("SELECT * FROM out_backtest WHERE profile = ?", params=[profile]).pl()


def errors(con: duckdb.DuckDBPyConnection, profile: str) -> pl.DataFrame:
    """The profile's rows of ``out_backtest_errors``."""
    if not profile or not has_table(con, "out_backtest_errors"):
        return pl.DataFrame()
    return con.sql(
        "SELECT * FROM out_backtest_errors WHERE profile = ? ORDER BY signal, horizon_min", params=[profile]
    ).pl()


def summary(df: pl.DataFrame) -> pl.DataFrame:
    """Per rule, region and level over the whole period: the saving (marginal) with the oracle's, the perfect,
    the issued and the persistence forecast (a rule that reads no forecast: its one run under issued, null
    under the others), ``oracle_share`` of the issued run, deadline
    misses of the issued run, the average-accounting saving (issued) and the CPU seconds of all its runs."""
    a = df.filter((pl.col("month") == "all") & pl.col("policy").is_in(RULES[:-1]))
    key = ["signal", "level", "policy"]

    def at(src: str, col: str, name: str) -> pl.DataFrame:
        s = a.filter(pl.col("forecast").is_in([src, "-"] if src == "issued" else [src]))  # "-": its one run
        return s.select(*key, pl.col(col).alias(name))

    oracle = df.filter((pl.col("month") == "all") & (pl.col("policy") == "oracle")).select(
        "signal", "level", pl.col("saved_pct_marginal").alias("saved_oracle_pct")
    )
    out = (
        at("issued", "saved_pct_marginal", "saved_issued_pct")
        .join(at("perfect", "saved_pct_marginal", "saved_perfect_pct"), on=key, how="left")
        .join(at("persistence", "saved_pct_marginal", "saved_persistence_pct"), on=key, how="left")
        .join(oracle, on=["signal", "level"], how="left")
        .join(at("issued", "oracle_share_marginal", "oracle_share"), on=key, how="left")
        .join(at("issued", "deadline_misses", "deadline_misses"), on=key, how="left")
        .join(at("issued", "saved_pct_average", "saved_issued_average_pct"), on=key, how="left")
        .join(a.group_by(key).agg(pl.col("cpu_s").sum()), on=key, how="left")
    )
    return out.select(
        *key, "saved_oracle_pct", "saved_perfect_pct", "saved_issued_pct", "saved_persistence_pct",
        "oracle_share", "deadline_misses", "saved_issued_average_pct", "cpu_s",
    ).sort(key)  # fmt: skip


def saving_chart(df: pl.DataFrame) -> alt.TopLevelMixin:
    """Saving (marginal, whole period) per rule and forecast source, oracle as a rule, per region × level."""
    a = df.filter((pl.col("month") == "all") & (pl.col("policy") != "run-now")).with_columns(
        pl.col("forecast").replace_strict(SOURCES, default=pl.col("forecast")).alias("forecast")
    )
    c = (
        alt.Chart(a.to_pandas())
        .mark_bar()
        .encode(
            x=alt.X("policy:N", title=None, sort=list(RULES)),
            xOffset=alt.XOffset("forecast:N"),
            y=alt.Y("saved_pct_marginal:Q", title="carbon saved vs run-now (%, marginal)"),
            color=alt.Color("forecast:N", title="forecast"),
            tooltip=[
                "signal",
                "level",
                "policy",
                "forecast",
                alt.Tooltip("saved_pct_marginal:Q", format=".2f"),
            ],
        )
        .properties(width=WIDTH, height=HEIGHT)
        .facet(row=alt.Row("level:N", title=None), column=alt.Column("signal:N", title=None))
    )
    return finish(
        c,
        "Saving per rule and forecast",
        "Carbon saved against starting on arrival, SGIP marginal emissions, over the whole period; signal level "
        "has no capacity limits, platform runs each rule's policy twin on a finite platform.",
    )


def monthly_chart(df: pl.DataFrame, policy: str = "carbon-aware-sdk") -> alt.TopLevelMixin:
    """``policy``'s saving per month with the oracle, the issued and the persistence forecast (signal level)."""
    m = df.filter((pl.col("month") != "all") & (pl.col("level") == "signal"))
    sel = pl.concat(
        [
            m.filter((pl.col("policy") == policy) & (pl.col("forecast") != "perfect")).with_columns(
                pl.col("forecast").alias("run")
            ),
            m.filter(pl.col("policy") == "oracle").with_columns(pl.lit("oracle").alias("run")),
        ]
    )
    c = (
        alt.Chart(sel.to_pandas())
        .mark_line(point=True)
        .encode(
            x=alt.X("month:O", title=None),
            y=alt.Y("saved_pct_marginal:Q", title="carbon saved vs run-now (%, marginal)"),
            color=alt.Color("run:N", title=None, sort=["oracle", "issued", "persistence"]),
            tooltip=["signal", "month", "run", alt.Tooltip("saved_pct_marginal:Q", format=".2f")],
        )
        .properties(width=WIDTH * 1.5, height=HEIGHT)
        .facet(column=alt.Column("signal:N", title=None))
    )
    return finish(
        c, f"{policy}: saving per month", "Oracle vs the issued forecast vs persistence, signal level."
    )


def share_chart(df: pl.DataFrame) -> alt.TopLevelMixin:
    """``oracle_share`` (marginal) per rule × forecast, per region × level."""
    a = df.filter((pl.col("month") == "all") & pl.col("policy").is_in(RULES[:-1]))
    c = (
        alt.Chart(a.to_pandas())
        .mark_point(filled=True, size=70)
        .encode(
            x=alt.X(
                "oracle_share_marginal:Q",
                title="oracle_share (saving ÷ oracle's)",
                scale=alt.Scale(domain=[0, 1]),
            ),
            y=alt.Y("policy:N", title=None),
            color=alt.Color("forecast:N"),
            shape=alt.Shape("level:N"),
            tooltip=[
                "signal",
                "level",
                "policy",
                "forecast",
                alt.Tooltip("oracle_share_marginal:Q", format=".3f"),
            ],
        )
        .properties(width=WIDTH, height=HEIGHT / 2)
        .facet(column=alt.Column("signal:N", title=None))
    )
    return finish(
        c,
        "Share of the clairvoyant saving",
        "Each rule's saving as a share of the oracle's at the same level.",
    )


def misses_chart(df: pl.DataFrame) -> alt.TopLevelMixin:
    """Deadline misses (share of jobs) per rule × forecast, per region × level."""
    a = df.filter((pl.col("month") == "all") & (pl.col("policy") != "run-now")).with_columns(
        (100 * pl.col("deadline_misses") / pl.col("jobs")).alias("missed_pct")
    )
    c = (
        alt.Chart(a.to_pandas())
        .mark_bar()
        .encode(
            x=alt.X("policy:N", title=None, sort=list(RULES)),
            xOffset=alt.XOffset("forecast:N"),
            y=alt.Y("missed_pct:Q", title="jobs past their deadline (%)"),
            color=alt.Color("forecast:N"),
            tooltip=["signal", "level", "policy", "forecast", "deadline_misses"],
        )
        .properties(width=WIDTH, height=HEIGHT)
        .facet(row=alt.Row("level:N", title=None), column=alt.Column("signal:N", title=None))
    )
    return finish(
        c,
        "Deadline misses",
        "CATS is not told the deadline; on a finite platform a held job can also queue past it.",
    )


def error_chart(err: pl.DataFrame) -> alt.TopLevelMixin:
    """The issued forecast's MAPE by horizon per region."""
    c = (
        alt.Chart(err.to_pandas())
        .mark_line(point=True)
        .encode(
            x=alt.X("horizon_min:Q", title="minutes ahead"),
            y=alt.Y("mape_pct:Q", title="MAPE (%)"),
            color=alt.Color("signal:N", title=None),
            tooltip=[
                "signal",
                "horizon_min",
                alt.Tooltip("mae_g:Q", format=".1f"),
                alt.Tooltip("mape_pct:Q", format=".2f"),
            ],
        )
        .properties(width=WIDTH * 1.5, height=HEIGHT)
    )
    return finish(
        c,
        "SGIP's issued forecast: error by horizon",
        "Mean absolute percentage error against the realized MOER.",
    )
