"""Paper 001 (risk-aware scheduling): goodput of FirstFitAware, TargetASAP and PackedTargetASAP over
replicates as box plots (Figs. 1–4). Input: ``repro-riskaware`` rows; fields are read by name (``policy``,
``workload``, the capacity's ``m_ra``), not from the builder's key."""

from __future__ import annotations

import altair as alt
import polars as pl

from analysis.results import json_field
from analysis.style import HEIGHT, finish

POLICY_NAMES = {"ff": "FirstFitAware", "target-asap": "TargetASAP", "packed-target-asap": "PackedTargetASAP"}
#: the study's workloads (studies/riskaware/scenarios.py) as the caption names them
WORKLOAD_NAMES = {
    "synthetic-uniform": "paper 001's SyntheticUniform workload (§5.3: n = 20,000 jobs, cores 1/2/4/8, "
    "lengths uniform in [0, 2 T_avg], ~26 machines of work)",
    "synthetic-uniform-literal": "paper 001's SyntheticUniform workload with the literal T_avg = 209664/n hours",
}
DEFAULT_WORKLOAD = "synthetic-uniform"


def frame(res: pl.DataFrame) -> pl.DataFrame:
    """Rows with ``scheduler`` (the paper's name) and ``m_ra`` (range of machine variation, from the
    capacity's ``m_ra`` field)."""
    df = json_field(res, "capacity_json", "m_ra", "m_ra", pl.Int64)
    return df.with_columns(pl.col("policy").replace(POLICY_NAMES).alias("scheduler"))


GOODPUT = {"goodput_partial": "GOODPUT(T) (fraction, incl. running jobs)"}
OTHER_METRICS = {
    "terminations": "job terminations",
    "aborted_volume": "aborted volume (fraction of capacity)",
    "max_stretch": "maximum stretch",
}


def boxplots(
    res: pl.DataFrame, metrics: dict[str, str] | None = None, workload: str = DEFAULT_WORKLOAD
) -> alt.TopLevelMixin:
    """Figs. 3–4 style: one box per scheduler and M_ra for each metric (``name -> axis title``; default
    GOODPUT(T)), over replicates of ``workload``; metrics side by side. ``ValueError`` if no row has an
    M_ra or ``workload`` has no rows."""
    metrics = metrics or GOODPUT
    df = frame(res).filter(pl.col("workload") == workload)
    if not df.height:
        raise ValueError(f"no runs of workload {workload!r} (have {sorted(set(res['workload']))})")
    if df["m_ra"].null_count():
        raise ValueError("rows without the capacity's m_ra field: not a risk_aware_walk study")
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
        "Risk-aware schedulers against FirstFitAware (paper 001, Figs. 3–4)",
        f"{WORKLOAD_NAMES.get(workload, workload)}; M_avg = 24 machines of 24 cores, period φ = 1200 s, "
        "M_ra machines of variation; three weeks with a one-week warm-up. Boxes over replicates (seeds of "
        "workload and capacity).",
    )
