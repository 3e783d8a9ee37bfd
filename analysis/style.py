"""Chart finishing shared by every study module: a title with a caption (the subtitle), no cut-off legend
or axis labels, and offline rendering to PNG/SVG (vl-convert bundles Vega: no network).

Importing it switches altair's notebook renderer to ``svg`` (vl-convert): a chart displayed in a notebook
is an SVG drawn in the kernel, so it shows with no network in JupyterLab, in ``jupyter nbconvert
--execute`` output, in a notebook reopened untrusted and on the report pages (altair's default renderer
loads vega@6 from a CDN: "Error loading script" offline). Tooltips are lost; ``VARCAP_ALTAIR_RENDERER``
(e.g. ``jupyter``) picks another renderer."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import altair as alt

#: altair's renderer for charts displayed in notebooks (see the module docstring)
RENDERER = os.environ.get("VARCAP_ALTAIR_RENDERER", "svg")
alt.renderers.enable(RENDERER)

WIDTH = 300
HEIGHT = 200


def finish(chart: alt.TopLevelMixin, title: str, caption: str, wrap: int = 120) -> alt.TopLevelMixin:
    """``chart`` with ``title`` and ``caption`` (wrapped as the subtitle) and label limits lifted (long
    legend entries such as trace ids are shown whole). Call last: the result is a top-level chart."""
    return (
        chart.properties(
            title=alt.TitleParams(
                title,
                subtitle=textwrap.wrap(caption, wrap),
                anchor="start",
                fontSize=14,
                subtitleFontSize=11,
                subtitleColor="#444",
            )
        )
        .configure_legend(labelLimit=0, titleLimit=0)
        .configure_axis(labelLimit=0, titleLimit=0)
        .configure_header(labelLimit=0, titleLimit=0)
    )


def to_png(chart: alt.TopLevelMixin, scale: float = 2.0) -> bytes:
    """PNG bytes of ``chart`` (vl-convert, offline)."""
    import vl_convert as vlc

    return vlc.vegalite_to_png(chart.to_json(), scale=scale)


def to_svg(chart: alt.TopLevelMixin) -> str:
    """SVG text of ``chart`` (vl-convert, offline)."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(chart.to_json())


def save_png(chart: alt.TopLevelMixin, path: str | Path, scale: float = 2.0) -> Path:
    """Write ``chart`` as PNG to ``path`` (parents created)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(to_png(chart, scale))
    return p
