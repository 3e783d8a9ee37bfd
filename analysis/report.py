"""Notebook helpers: show a chart (PNG with its figure name when rendering a report, interactive
otherwise), pick the reproduction profile a chapter shows, state a paper claim next to a figure."""

from __future__ import annotations

import os

import altair as alt
import polars as pl

from analysis.style import to_png


def static_charts() -> bool:
    """True when charts must be static images (``VARCAP_STATIC_CHARTS=1``: set by the report assets)."""
    return os.environ.get("VARCAP_STATIC_CHARTS", "") not in ("", "0")


def show(chart: alt.TopLevelMixin, name: str) -> None:
    """Display ``chart``: as a PNG carrying ``varcap_figure = name`` in its output metadata (the report
    asset saves it as ``figures/<chapter>/<name>.png``) when :func:`static_charts`, else as an altair chart
    (an SVG drawn in the kernel by :mod:`analysis.style`'s renderer: no network needed)."""
    from IPython.display import Image, display

    if static_charts():
        display(Image(to_png(chart), retina=True, metadata={"varcap_figure": name}))
    else:
        display(chart)


def claim(source: str, text: str) -> None:
    """Render a paper's claim as a quotation block with its source (Markdown)."""
    from IPython.display import Markdown, display

    display(Markdown(f"> **{source}:** {text}"))


def table(df: pl.DataFrame, decimals: int = 3) -> object:
    """A frame rounded for display (float columns to ``decimals``), as pandas for a plain HTML table."""
    return df.with_columns(pl.col(pl.Float64).round(decimals)).to_pandas()
