"""``out_thesis_ias_instances``: ``ias`` and ``ias-general`` against First-Fit per instance of the thesis'
two catalogue studies beyond its own set-ups — the observed-grid platforms (:mod:`studies.thesis.observed`,
``thesis-ias-observed``) and the generated instances (:mod:`studies.thesis.general`,
``thesis-ias-generalization``) — computed from their cached runs (the ``run.json`` rows the sweep writes),
never simulated here.

Per instance and policy: both runs' terminations, the cut (%, :func:`studies.thesis.general.cut_pct`; null
when First-Fit terminates nothing), the goodput difference (pp), whether the claim holds
(:func:`studies.thesis.general.holds`: cut > 0 and goodput ≥ First-Fit's − 2 pp) and whether the instance is
*decisive*: :func:`studies.generalization.ias_decisive` on :func:`studies.generalization.ias_facts` of the
instance's jobs and capacity, rebuilt from the exported sweep inputs and split by H1 as ``ias`` with its
defaults does — the facts :func:`studies.thesis.general.run_pair` computes for an ad-hoc run. An arm with no
result because it ran past the scenario budget (:mod:`studies.budget`) gives a row ``not run: …`` without
the policy's values; an arm that simply has not run is reported as missing, and its row left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from studies.claims import PROFILES, Profile, Runs
from studies.generalization import IASFacts, ias_decisive, ias_facts
from studies.scenarios import Scenario
from studies.thesis import general, observed
from studies.thesis.general import MAIN, cut_pct, holds

#: the studies of the table (base names), in table order
STUDIES = (observed.STUDY, general.STUDY)

#: the table's columns and types (``assets.schema.OUT_THESIS_IAS_INSTANCES`` documents them)
SCHEMA: dict[str, Any] = {
    "study": pl.String,
    "instance": pl.String,
    "grid": pl.String,
    "workload": pl.String,
    "seed": pl.Int64,
    "machines": pl.Int64,
    "jobs": pl.Int64,
    "policy": pl.String,
    "ff_terminations": pl.Int64,
    "terminations": pl.Int64,
    "termination_cut_pct": pl.Float64,
    "ff_goodput_pct": pl.Float64,
    "goodput_diff_pp": pl.Float64,
    "holds": pl.Boolean,
    "decisive": pl.Boolean,
    "degenerate_reason": pl.String,
    "small_jobs": pl.Int64,
    "outliving_jobs": pl.Int64,
    "ff_wall_s": pl.Float64,
    "wall_s": pl.Float64,
    "profile": pl.String,
}

#: facts of an instance: (First-Fit's scenario, machines, First-Fit's terminations, inputs) → IASFacts
FactsFn = Callable[[Scenario, int, int, Path], IASFacts]


@dataclass(frozen=True)
class Unit:
    """One instance of a study: First-Fit's scenario and the compared policies' (key → scenario)."""

    study: str
    instance: str
    grid: str | None
    ff: Scenario
    arms: dict[str, Scenario]


def study_name(base: str, profile: str) -> str:
    """The catalogue name of study ``base`` in ``profile`` (``<base>`` for full, ``<base>-quick``)."""
    return base if profile == "full" else f"{base}-{profile}"


def units(study: str, pr: Profile) -> Iterator[Unit]:
    """The instances of ``study`` (a base of :data:`STUDIES`) in profile ``pr``. KeyError for another."""
    if study == observed.STUDY:
        sc = observed.study_scenarios(pr)
        for grid, wl, r in dict.fromkeys((k[0], k[1], k[3]) for k in sc):
            yield Unit(study, f"{grid} {wl} s{r}", grid, sc[(grid, wl, "ff", r)],
                       {k: sc[(grid, wl, k, r)] for k in MAIN})  # fmt: skip
    elif study == general.STUDY:
        sc = general.study_scenarios(pr)
        for inst in general.study_instances(pr):
            yield Unit(study, inst.id, None, sc[("ff", inst.index)], {k: sc[(k, inst.index)] for k in MAIN})
    else:
        raise KeyError(f"unknown study {study!r}; the table's studies: {', '.join(STUDIES)}")


def scenarios(pr: Profile, studies: tuple[str, ...] = STUDIES) -> list[Scenario]:
    """Every scenario of ``studies`` in ``pr``, once."""
    out = {s.id: s for st in studies for u in units(st, pr) for s in (u.ff, *u.arms.values())}
    return list(out.values())


def load_runs(pr: Profile, studies: tuple[str, ...] = STUDIES) -> Runs:
    """The valid cached ``run.json`` rows (current code and input versions) of ``studies``' scenarios."""
    from studies import sweep

    return {s.id: row for s in scenarios(pr, studies) if (row := sweep.cached_result(s)) is not None}


def instance_facts(ff: Scenario, machines: int, ff_terminations: int, inputs: Path) -> IASFacts:
    """:func:`studies.generalization.ias_facts` of ``ff``'s instance on ``machines`` machines (jobs and
    capacity rebuilt from the exported ``inputs``; FileNotFoundError naming a missing one)."""
    from studies.scenarios import build_capacity, build_jobs

    jobs = build_jobs(ff, inputs, machines).filter(pl.col("cores") <= ff.cores)
    cap = build_capacity(ff, inputs, machines)
    return ias_facts(jobs, cap, machines, ff.cores, ff.horizon_s, ff_terminations)


def _over_budget(sc: Scenario, inputs: Path) -> float | None:
    from studies import budget

    return budget.over_budget(sc, inputs=inputs)


def unit_rows(
    u: Unit, runs: Runs, inputs: Path, profile: str, facts: FactsFn = instance_facts
) -> tuple[list[dict[str, Any]], list[Scenario]]:
    """The rows of one instance (one per compared policy) and the scenarios it lacks (not run, not over
    the budget: their rows are left out)."""
    from studies.budget import not_run_reason

    base = {"study": u.study, "instance": u.instance, "grid": u.grid, "workload": u.ff.workload,
            "seed": u.ff.seed, "profile": profile}  # fmt: skip
    ff_run = runs.get(u.ff.id)
    if ff_run is None:
        over = _over_budget(u.ff, inputs)
        if over is None:
            return [], [u.ff, *(s for s in u.arms.values() if s.id not in runs)]
        why = f"{not_run_reason(over)} (First-Fit)"
        return [{**base, "machines": u.ff.machines or None, "policy": k, "decisive": False,
                 "degenerate_reason": why} for k in u.arms], []  # fmt: skip
    ffm, machines = ff_run["metrics"], int(ff_run["machines"])
    ff_kills = int(ffm["terminations"])
    f = facts(u.ff, machines, ff_kills, inputs)
    decisive, reason = ias_decisive(f)
    known = {**base, "machines": machines, "jobs": int(ffm["jobs"]), "ff_terminations": ff_kills,
             "ff_goodput_pct": 100.0 * float(ffm["goodput"]), "small_jobs": f.small_jobs,
             "outliving_jobs": f.outliving_jobs, "ff_wall_s": float(ff_run["wall_s"])}  # fmt: skip
    rows: list[dict[str, Any]] = []
    missing: list[Scenario] = []
    for key, sc in u.arms.items():
        run = runs.get(sc.id)
        if run is None:
            over = _over_budget(sc, inputs)
            if over is None:
                missing.append(sc)
            else:
                rows.append(
                    {**known, "policy": key, "decisive": False, "degenerate_reason": not_run_reason(over)}
                )
            continue
        m = run["metrics"]
        kills = int(m["terminations"])
        c = cut_pct(ff_kills, kills)
        gp = 100.0 * (float(m["goodput"]) - float(ffm["goodput"]))
        rows.append({**known, "policy": key, "terminations": kills,
                     "termination_cut_pct": c if ff_kills else None, "goodput_diff_pp": gp,
                     "holds": holds(c, gp), "decisive": decisive, "degenerate_reason": reason,
                     "wall_s": float(run["wall_s"])})  # fmt: skip
    return rows, missing


def instance_table(
    pr: Profile,
    runs: Runs,
    inputs: Path | None = None,
    studies: tuple[str, ...] = STUDIES,
    facts: FactsFn = instance_facts,
) -> tuple[pl.DataFrame, list[Scenario]]:
    """The rows of ``studies`` in profile ``pr`` from ``runs`` (scenario id → ``run.json`` row), in
    :data:`SCHEMA`'s columns, and the scenarios that have not run (their instances' rows left out).
    ``inputs``: the exported sweep inputs (default ``data/sim/inputs``)."""
    if inputs is None:
        from studies.sweep import inputs_dir

        inputs = inputs_dir()
    rows: list[dict[str, Any]] = []
    missing: list[Scenario] = []
    for st in studies:
        for u in units(st, pr):
            r, m = unit_rows(u, runs, inputs, pr.name, facts)
            rows += r
            missing += m
    return pl.DataFrame([{c: r.get(c) for c in SCHEMA} for r in rows], schema=SCHEMA), missing


def shares(table: pl.DataFrame) -> pl.DataFrame:
    """Per study and policy of ``table``: decisive, degenerate and not-run instances, the decisive ones that
    hold and their share (%, null without a decisive instance)."""
    not_run = pl.col("degenerate_reason").str.starts_with("not run: ")
    return (
        table.group_by("study", "policy", maintain_order=True)
        .agg(
            pl.col("decisive").sum().alias("n_decisive"),
            (~pl.col("decisive") & ~not_run).sum().alias("n_degenerate"),
            not_run.sum().alias("n_not_run"),
            (pl.col("holds") & pl.col("decisive")).sum().alias("n_hold"),
        )
        .with_columns(
            pl.when(pl.col("n_decisive") > 0)
            .then(100.0 * pl.col("n_hold") / pl.col("n_decisive"))
            .alias("hold_pct")
        )
    )


def print_study(study: str, profile: str) -> pl.DataFrame:
    """Print ``study``'s rows in ``profile`` from the cached runs and the ``varcap sweep`` that simulates
    the runs it lacks; return the rows. SystemExit with one line when an input is missing."""
    pr = PROFILES[profile]
    name = study_name(study, profile)
    try:
        t, missing = instance_table(pr, load_runs(pr, (study,)), studies=(study,))
    except (FileNotFoundError, ValueError) as e:
        raise SystemExit(f"{name}: {e}") from None
    if missing:
        print(f"{len(missing)} run(s) of {name} have not run: `varcap sweep {name}` simulates them")
    if t.height:
        with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, fmt_str_lengths=60, float_precision=2):
            print(t.select("instance", "policy", "machines", "jobs", "ff_terminations", "terminations",
                           "termination_cut_pct", "goodput_diff_pp", "holds", "decisive"))  # fmt: skip
            print(shares(t))
    return t


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m studies.thesis.ias_table", description=__doc__.split("\n")[0])
    ap.add_argument("study", choices=STUDIES)
    ap.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    ap.add_argument("--out", type=Path, help="write the per-instance table here (parquet)")
    a = ap.parse_args(argv)
    t = print_study(a.study, a.profile)
    if t.height and a.study == observed.STUDY:
        with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, float_precision=2):
            print(observed.summary(t).drop("degenerate_reason"))
    if a.out:
        t.write_parquet(a.out)


if __name__ == "__main__":
    main()
