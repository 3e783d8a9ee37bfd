"""``ias`` and ``ias-general`` against First-Fit off the thesis' instances, and the isolating runs of
``ias-general``'s design choices.

The claim tested is paper 000 §6.2's, read as in the IAS robustness grid: a policy *holds* on an instance
when it terminates fewer jobs than First-Fit (cut > 0) and its goodput is at least First-Fit's − 2 pt.
Instances come from :mod:`studies.generalization` (one master seed); each is simulated in process by
:func:`sim.api.simulate` with First-Fit, ``ias`` (its defaults, the thesis' algorithm) and ``ias-general``
(varcap's extension) and, for the isolating runs, ``ias-general`` with one design choice reverted
(:data:`VARIANTS`). Whether an instance is *decisive* (IAS faces the decision the claim is about) is
:func:`studies.generalization.ias_decisive`'s answer; degenerate instances are reported with the reason
and left out of the share.

The catalogue study :data:`STUDY` (``thesis-ias-generalization[-quick]``, :func:`study_scenarios`) runs
First-Fit, ``ias`` and ``ias-general`` on the reproduction profile's generated instances — the instances
and the First-Fit and ``ias`` runs of the reproduction's generalization rows (``repro-generalization``),
so only ``ias-general`` is simulated for it; its table is ``out_thesis_ias_instances``
(:mod:`studies.thesis.ias_table`).

``python -m studies.thesis.ias_table thesis-ias-generalization --profile quick|full`` prints that study's
table from its cached runs (or the ``varcap sweep`` that simulates them). Ad hoc, simulated in process by :func:`run_pair`:
``python -m studies.thesis.general [--quick] [--seed S] [--n N] [--days D] [--index I,J]`` prints the
per-instance table and the shares (with the isolating runs unless ``--main-only``; ``--index``: those
instances only) and each run's kills as starts on the variable machines × the share of them killed; ``--table62`` runs the thesis' Table 6.2
set-up (Zipf 1.1–1.8, 1 change/h, step 0.15) on a small platform instead.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sim.metrics import ATT_KILLED, EngineOutput
from studies.claims import Profile
from studies.generalization import Instance, ias_decisive, ias_facts, instances
from studies.scenarios import Scenario, build_capacity, sized_jobs
from studies.thesis.scenarios import ZIPFS as ZIPF

#: the policies compared with First-Fit: key → (policy, settings). The ``ias-general:*`` keys are the
#: isolating runs: ``ias-general`` with one design choice reverted (see :mod:`sim.policies.ias_general`).
VARIANTS: dict[str, tuple[str, dict[str, str]]] = {
    "ias": ("ias", {}),
    "ias-general": ("ias-general", {}),
    "ias-general:placement=h1": ("ias-general", {"placement": "h1"}),
    "ias-general:risk=median": ("ias-general", {"risk": "median"}),
    "ias-general:risk=own": ("ias-general", {"risk": "own"}),
    "ias-general:risk=fixed(A=0.6)": ("ias-general", {"risk": "fixed", "aggressiveness": "0.6"}),
    "ias-general:risk=fixed(A=0.1)": ("ias-general", {"risk": "fixed", "aggressiveness": "0.1"}),
    "ias-general:survival=pooled": ("ias-general", {"survival": "pooled"}),
    "ias-general:h2=off": ("ias-general", {"h2": "off"}),
    "ias-general:h2=on": ("ias-general", {"h2": "on"}),
}
MAIN = ("ias", "ias-general")
#: the catalogue study (base name; ``-quick`` for the quick profile) of First-Fit, ``ias`` and ``ias-general``
#: on the reproduction profile's generated instances
STUDY = "thesis-ias-generalization"
GOODPUT_TOLERANCE_PT = 2.0
_NO_INPUTS = Path("/nonexistent")  # generated workloads and walks read no exported input


def cut_pct(ff_kills: float, kills: float) -> float:
    """Termination cut against First-Fit (%): 0 when neither terminates, −inf when only the policy does."""
    if ff_kills == 0:
        return 0.0 if kills == 0 else float("-inf")
    return 100.0 * (ff_kills - kills) / ff_kills


def holds(cut: float, goodput_pt: float) -> bool:
    """The claim on one instance: cut > 0 and goodput ≥ First-Fit's − 2 pt."""
    return cut > 0 and goodput_pt >= -GOODPUT_TOLERANCE_PT


def run_pair(
    sc: Scenario, keys: Sequence[str], label: str, inputs: Path = _NO_INPUTS
) -> list[dict[str, Any]]:
    """One row per policy key of ``keys`` on ``sc``'s instance (``sc.policy`` is ignored), simulated in
    process (ad-hoc runs: the catalogue studies read their cached runs instead,
    :mod:`studies.thesis.ias_table`): kills, cut, goodput difference (pt), holds, CPU seconds, the
    instance's decisive flag and reason, and the kills' decomposition (:func:`variable_starts`) for
    First-Fit (``ff_var_*``) and the policy (``var_*``)."""
    from sim.api import simulate

    machines, jobs = sized_jobs(sc, inputs)
    cap = build_capacity(sc, inputs, machines)
    jobs = jobs.filter(pl.col("cores") <= sc.cores)
    always_on = int(cap.machines_alive.min())

    def one(policy: str, settings: dict[str, str]) -> tuple[dict[str, float], float, tuple[int, float]]:
        t0 = time.process_time()
        r = simulate(jobs, cap, machines, sc.cores, sc.horizon_s, policy, settings, seed=sc.seed)
        cpu = time.process_time() - t0
        return r.metrics, cpu, variable_starts(r.tables.output, always_on)

    ff, ff_cpu, ff_var = one("ff", {})
    facts = ias_facts(jobs, cap, machines, sc.cores, sc.horizon_s, int(ff["terminations"]))
    decisive, reason = ias_decisive(facts)
    rows = []
    for key in keys:
        pol, st = VARIANTS[key]
        m, cpu, var = one(pol, st)
        c = cut_pct(ff["terminations"], m["terminations"])
        gp = 100.0 * (m["goodput"] - ff["goodput"])
        rows.append(
            {
                "instance": label, "policy": key, "machines": machines, "jobs": jobs.height,
                "ff_kills": int(ff["terminations"]), "kills": int(m["terminations"]), "cut_pct": c,
                "ff_goodput_pct": 100.0 * ff["goodput"], "goodput_pt": gp, "holds": holds(c, gp),
                "decisive": decisive, "degenerate_reason": reason, "small_jobs": facts.small_jobs,
                "outliving_jobs": facts.outliving_jobs, "ff_var_starts": ff_var[0],
                "var_starts": var[0], "ff_var_kill_pct": ff_var[1], "var_kill_pct": var[1],
                "ff_cpu_s": ff_cpu, "cpu_s": cpu,
            }
        )  # fmt: skip
    return rows


def variable_starts(out: EngineOutput, always_on: int) -> tuple[int, float]:
    """Attempts started on the variable machines (index ≥ ``always_on``, the trace's minimum alive: under
    LIFO only they turn off) and the share of them killed (%; 0 without such an attempt). Under LIFO every
    kill is one of them, so kills = starts × share / 100: a policy cuts kills only if it lowers the share
    more than it raises the starts (a refused long job that waits for an always-on machine leaves a
    variable slot to shorter jobs, which start more often)."""
    on_var = np.asarray(out.att_machine) >= always_on
    n = int(on_var.sum())
    killed = int((np.asarray(out.att_outcome)[on_var] == ATT_KILLED).sum())
    return n, 100.0 * killed / n if n else 0.0


def arms(key: str) -> tuple[str, dict[str, str]]:
    """Policy and settings of a policy key: ``ff`` (First-Fit) or a key of :data:`VARIANTS`."""
    return ("ff", {}) if key == "ff" else VARIANTS[key]


def study_instances(pr: Profile) -> list[Instance]:
    """The reproduction profile's generated instances (``Profile.gen_master_seed``, ``gen_instances``,
    ``gen_days``): the ones the reproduction's generalization rows draw."""
    return instances(pr.gen_master_seed, pr.gen_instances, pr.gen_days)


def study_scenarios(pr: Profile) -> dict[tuple, Scenario]:
    """:data:`STUDY`: ``(policy key, instance index) → Scenario`` (the instance last, as every study's
    replicate) for First-Fit and :data:`MAIN` on
    :func:`study_instances`. First-Fit's and ``ias``' scenarios are the reproduction's generalization arms
    (same instance, ``ias`` at its default A = 0.6: same ids), so the study adds only ``ias-general``."""
    return {
        (key, inst.index): inst.scenario(*arms(key)) for inst in study_instances(pr) for key in ("ff", *MAIN)
    }


def generalization_table(
    master_seed: int,
    n: int,
    horizon_days: float,
    keys: Sequence[str] = tuple(VARIANTS),
    only: Sequence[int] | None = None,
) -> pl.DataFrame:
    """Per instance of :func:`studies.generalization.instances` (``only``: just those indices, each below
    ``n``, else ValueError) and policy key: the rows of :func:`run_pair`, with the instance's drawn values."""
    if only is not None and any(not 0 <= i < n for i in only):
        raise ValueError(f"instance indices must lie in [0, {n}) (got {list(only)})")
    rows: list[dict[str, Any]] = []
    for inst in instances(master_seed, n, horizon_days):
        if only is not None and inst.index not in only:
            continue
        extra = _instance_columns(inst)
        rows += [{**r, **extra} for r in run_pair(inst.scenario("ff"), keys, inst.id)]
    return pl.DataFrame(rows)


def _instance_columns(inst: Instance) -> dict[str, Any]:
    r = inst.row()
    return {k: r[k] for k in ("changes_per_hour", "step", "alpha", "min_duration_s", "mix", "load")}


def table62(machines: int, horizon_days: float, seed: int = 0, keys: Sequence[str] = MAIN) -> pl.DataFrame:
    """The thesis' Table 6.2 set-up at a small scale: Zipf 1.1–1.8 (§4.3.1), the random walk of 1
    change/h, step 0.15, dynamic range 60 %, on ``machines`` × 24 cores for ``horizon_days``."""
    walk = {"kind": "random_walk", "changes_per_hour": 1.0, "step": 0.15, "dynamic_range": 0.6, "seed": seed}
    rows: list[dict[str, Any]] = []
    for wl in ZIPF:
        sc = Scenario(wl, walk, machines=machines, horizon_days=horizon_days, seed=seed)
        rows += run_pair(sc, keys, wl)
    return pl.DataFrame(rows)


def shares(table: pl.DataFrame) -> pl.DataFrame:
    """Per policy key: decisive and degenerate instances and the share (%) of decisive ones that hold; and
    the share of the instances where First-Fit terminates something (``ias-general`` faces its decision
    there even when IAS's H1 makes the instance degenerate for ``ias``)."""
    return (
        table.group_by("policy", maintain_order=True)
        .agg(
            pl.col("decisive").sum().alias("n_decisive"),
            (~pl.col("decisive")).sum().alias("n_degenerate"),
            (pl.col("holds") & pl.col("decisive")).sum().alias("n_hold"),
            (pl.col("ff_kills") > 0).sum().alias("n_ff_kills"),
            (pl.col("holds") & (pl.col("ff_kills") > 0)).sum().alias("n_hold_ff_kills"),
        )
        .with_columns(
            (100.0 * pl.col("n_hold") / pl.col("n_decisive")).alias("hold_pct_decisive"),
            (100.0 * pl.col("n_hold_ff_kills") / pl.col("n_ff_kills")).alias("hold_pct_ff_kills"),
        )
    )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m studies.thesis.general", description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=2026, help="master seed of the instances")
    ap.add_argument("--n", type=int, default=16, help="number of instances")
    ap.add_argument("--days", type=float, default=3.0, help="horizon of each instance (days)")
    ap.add_argument(
        "--quick", action="store_true", help="3 instances of half a day, ias and ias-general only"
    )
    ap.add_argument(
        "--index", type=str, help="only these instance indices (comma-separated, each below --n), e.g. 0,20"
    )
    ap.add_argument("--main-only", action="store_true", help="ias and ias-general only (no isolating runs)")
    ap.add_argument("--table62", type=int, default=0, metavar="MACHINES", help="Table 6.2 set-up instead")
    ap.add_argument("--out", type=Path, help="write the per-instance table here (parquet)")
    ap.add_argument(
        "--profile",
        choices=("quick", "full"),
        help=f"print the catalogue study {STUDY}[-quick] from its cached runs instead (simulates nothing)",
    )
    a = ap.parse_args(argv)
    if a.profile:  # read by studies.thesis.ias_table, which imports this module
        raise SystemExit(f"python -m studies.thesis.ias_table {STUDY} --profile {a.profile}")
    keys = MAIN if (a.quick or a.main_only) else tuple(VARIANTS)
    if a.table62:
        t = table62(a.table62, a.days, keys=keys)
    else:
        n, days = (3, 0.25) if a.quick else (a.n, a.days)
        only = [int(x) for x in a.index.split(",")] if a.index else None
        t = generalization_table(a.seed, n, days, keys, only)
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, fmt_str_lengths=70, float_precision=2):
        print(t.drop("degenerate_reason", "ff_cpu_s", "small_jobs", "outliving_jobs"))
        print(t.filter(pl.col("policy") == keys[0]).select("instance", "decisive", "degenerate_reason"))
        print(shares(t))
    if a.out:
        t.write_parquet(a.out)


if __name__ == "__main__":
    main()
