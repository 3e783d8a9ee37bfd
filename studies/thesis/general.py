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
set-up (Zipf 1.1–1.8, 1 change/h, step 0.15) on a small platform instead (``--zipf``: some rows), ``--azure``
the thesis ch. 6 Azure study scenario. ``--keys`` picks policy keys, ``--decisive-only`` skips degenerate
instances, ``--isolate`` adds First-Fit's row and each run's :func:`mechanism` (variable starts, waits and
completed work by job length: what a design choice changed), ``--markdown`` prints that as a Markdown table,
``--open`` the share of variable on-time each risk reading opens to jobs of 1.5–24 h (:func:`open_share`).
docs/ias-general.md reports them.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sim.metrics import ATT_COMPLETED, ATT_KILLED, EngineOutput
from studies.claims import Profile
from studies.generalization import Instance, ias_decisive, ias_facts, instances
from studies.scenarios import Scenario, build_capacity, sized_jobs, walk
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
    sc: Scenario,
    keys: Sequence[str],
    label: str,
    inputs: Path = _NO_INPUTS,
    decisive_only: bool = False,
    isolate: bool = False,
) -> list[dict[str, Any]]:
    """One row per policy key of ``keys`` on ``sc``'s instance (``sc.policy`` is ignored), simulated in
    process (ad-hoc runs: the catalogue studies read their cached runs instead,
    :mod:`studies.thesis.ias_table`): kills, cut, goodput difference (pt), holds, CPU seconds, the
    instance's decisive flag and reason, and the kills' decomposition (:func:`variable_starts`) for
    First-Fit (``ff_var_*``) and the policy (``var_*``). ``decisive_only``: no row (and no policy run) for a
    degenerate instance. ``isolate``: also a row for First-Fit (policy ``ff``) and every run's
    :func:`mechanism` columns."""
    from sim.api import simulate

    machines, jobs = sized_jobs(sc, inputs)
    cap = build_capacity(sc, inputs, machines)
    jobs = jobs.filter(pl.col("cores") <= sc.cores)
    always_on = int(cap.machines_alive.min())

    def one(
        policy: str, settings: dict[str, str]
    ) -> tuple[dict[str, float], float, tuple[int, float], dict[str, float]]:
        t0 = time.process_time()
        r = simulate(jobs, cap, machines, sc.cores, sc.horizon_s, policy, settings, seed=sc.seed)
        cpu = time.process_time() - t0
        out = r.tables.output
        period = float(getattr(cap, "period_s", None) or 3600.0)
        mech = mechanism(out, jobs, cap, always_on, sc.cores, sc.horizon_s, period) if isolate else {}
        return r.metrics, cpu, variable_starts(out, always_on), mech

    ff, ff_cpu, ff_var, ff_mech = one("ff", {})
    facts = ias_facts(jobs, cap, machines, sc.cores, sc.horizon_s, int(ff["terminations"]))
    decisive, reason = ias_decisive(facts)
    if decisive_only and not decisive:
        return []
    rows = []
    for key in ("ff", *keys) if isolate else keys:
        pol, st = arms(key)
        m, cpu, var, mech = (ff, ff_cpu, ff_var, ff_mech) if key == "ff" else one(pol, st)
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
                "ff_cpu_s": ff_cpu, "cpu_s": cpu, **mech,
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


#: the job classes of :func:`mechanism` by duration: up to the change period (H2 protects them on the
#: variable machines), up to a day, up to a week, longer
CLASSES = ("period", "day", "week", "longer")


def _waiting(t: np.ndarray, step: np.ndarray, horizon_s: float) -> tuple[np.ndarray, np.ndarray]:
    """A step function given by changes ``step`` at times ``t``: the distinct times (ascending, below the
    horizon) and the function's value from each to the next (the changes at one time all applied)."""
    o = np.argsort(t, kind="stable")
    ts, vals = t[o], np.cumsum(step[o])
    last = np.r_[ts[1:] != ts[:-1], True]
    ts, vals = ts[last], vals[last]
    keep = ts < horizon_s
    return ts[keep], vals[keep]


def _integral(ts: np.ndarray, vals: np.ndarray, horizon_s: float) -> float:
    """∫₀^horizon of the step function valued ``vals`` from each of ``ts`` (0 before the first)."""
    if ts.size == 0:
        return 0.0
    return float(np.sum(vals * np.diff(np.r_[ts, horizon_s])))


def mechanism(
    out: EngineOutput,
    jobs: pl.DataFrame,
    cap: Any,
    always_on: int,
    cores: float,
    horizon_s: float,
    period_s: float,
) -> dict[str, float]:
    """What a run did with the variable machines (index ≥ ``always_on``, the trace's minimum alive under
    LIFO) and how long its jobs waited, the measures of the isolating runs (``*_kch``: thousand
    core-hours; ``*_kjh``: thousand job-hours), per duration class of :data:`CLASSES` (``period_s``: the
    change period) where so named:

    * ``var_starts_<class>``: attempts started on the variable machines;
    * ``done_kch_<class>``: work of the attempts that completed (goodput's numerator by class);
    * ``wait_kjh_<class>``: time from submission to the first start (to the horizon for a job never
      started);
    * ``done_var_kch``, ``lost_kch``: completed work on the variable machines, work of killed attempts;
    * ``idle_var_queue_kch``: the variable machines' free cores while some job waits (submitted, not
      running, not done), and ``idle_var_long_kch`` while some job longer than ``period_s`` waits: an upper
      bound on what the variable capacity could have run (a waiting job may fit nowhere, or pass nowhere);
    * ``mean_wait_h`` and ``never_started``.

    ``jobs`` are the simulated rows (``submit_s``, ``duration_s``, ``cores``) and ``cap`` the
    machines-alive trace (``time_s``, ``machines_alive``)."""
    sub = jobs["submit_s"].to_numpy()
    dur = jobs["duration_s"].to_numpy()
    c = jobs["cores"].to_numpy()
    aj = np.asarray(out.att_job, np.int64)
    s = np.asarray(out.att_start_s, np.float64)
    e = np.minimum(np.asarray(out.att_end_s, np.float64), horizon_s)
    oc = np.asarray(out.att_outcome)
    var = np.asarray(out.att_machine) >= always_on
    ca, da = c[aj], dur[aj]
    work = ca * (e - s)
    done, killed = oc == ATT_COMPLETED, oc == ATT_KILLED
    edges = (0.0, period_s, 86_400.0, 7 * 86_400.0, np.inf)
    r: dict[str, float] = {}
    fs = np.asarray(out.first_start_s, np.float64)
    wait = np.where(fs >= 0, np.minimum(fs, horizon_s), horizon_s) - sub
    for name, lo, hi in zip(CLASSES, edges[:-1], edges[1:], strict=True):
        in_a, in_j = (da > lo) & (da <= hi), (dur > lo) & (dur <= hi)
        r[f"var_starts_{name}"] = float(np.sum(var & in_a))
        r[f"done_kch_{name}"] = float(np.sum(work[done & in_a])) / 3.6e6
        r[f"wait_kjh_{name}"] = float(np.sum(wait[in_j])) / 3.6e6
    r["done_var_kch"] = float(np.sum(work[done & var])) / 3.6e6
    r["lost_kch"] = float(np.sum(work[killed])) / 3.6e6
    # queue: +1 at submission, −1 at each start, +1 at each kill (the job waits again)
    long_a = da > period_s
    tq = np.r_[sub, s, e[killed]]
    dq = np.r_[np.ones(sub.size), -np.ones(s.size), np.ones(int(killed.sum()))]
    lq = np.r_[dur > period_s, long_a, long_a[killed]].astype(np.float64)
    # the variable machines' free cores: alive variable cores (LIFO: machines ≥ always_on alive last)
    # minus the cores running there
    alive_var = np.maximum(np.asarray(cap.machines_alive, np.int64) - always_on, 0) * float(cores)
    ct = np.asarray(cap.time_s, np.float64)
    tf = np.r_[ct, s[var], e[var]]
    df = np.r_[np.diff(np.r_[0.0, alive_var]), -ca[var], ca[var]]
    t_all = np.r_[tq, tf]
    # one sweep over every change: queue length, long jobs queued, free variable cores
    z_q, z_f = np.zeros(tf.size), np.zeros(tq.size)
    ts, q = _waiting(t_all, np.r_[dq, z_q], horizon_s)
    _, ql = _waiting(t_all, np.r_[dq * lq, z_q], horizon_s)
    _, free = _waiting(t_all, np.r_[z_f, df], horizon_s)
    free = np.maximum(free, 0.0)
    r["idle_var_queue_kch"] = _integral(ts, free * (q > 0.5), horizon_s) / 3.6e6
    r["idle_var_long_kch"] = _integral(ts, free * (ql > 0.5), horizon_s) / 3.6e6
    r["mean_wait_h"] = float(np.mean(wait)) / 3600.0 if wait.size else 0.0
    r["never_started"] = float(np.sum(fs < 0))
    return r


_MECHANISM_COLUMNS = frozenset(
    [f"{m}_{c}" for m in ("var_starts", "done_kch", "wait_kjh") for c in CLASSES]
    + ["done_var_kch", "lost_kch", "idle_var_queue_kch", "idle_var_long_kch", "mean_wait_h", "never_started"]
)


def isolation_table(t: pl.DataFrame) -> pl.DataFrame:
    """The isolating runs of an ``isolate`` table (:func:`run_pair`), one row per (instance, policy key,
    First-Fit's first): kills, cut, goodput against First-Fit and against ``ias`` (pt; null without an
    ``ias`` row), then the :func:`mechanism` measures."""
    ias = t.filter(pl.col("policy") == "ias").select("instance", pl.col("goodput_pt").alias("_ias_gp"))
    out = t.join(ias, on="instance", how="left").with_columns(
        (pl.col("goodput_pt") - pl.col("_ias_gp")).alias("vs_ias_pt")
    )
    cols = ["instance", "policy", "kills", "cut_pct", "goodput_pt", "vs_ias_pt"]
    return out.select(cols + sorted(c for c in t.columns if c in _MECHANISM_COLUMNS))


#: the risk readings :func:`open_share` compares, and the job lengths (h) it asks about
RISKS = ("blind", "own", "median")
OPEN_HOURS = (1.5, 3.0, 6.0, 12.0, 24.0)


def open_share(
    cap: Any, durations_s: np.ndarray, hours: Sequence[float] = OPEN_HOURS
) -> dict[str, list[float]]:
    """Per risk reading of ``ias-general`` (:data:`RISKS`, on its default survival curves): the share (%)
    of the variable machines' on-time at which a job of each of ``hours`` passes the survival test, its
    machine's uptime sampled every 5 minutes of each interval of ``cap`` (``durations_s``: the workload's,
    which set ``blind``'s bar). The admission rule alone, before any queue: what the bar leaves open."""
    from sim.capacity.intervals import extract_intervals
    from sim.policies.ias_general import MEDIAN, blind_survival, machine_models, own_blind_survival

    stable = int(np.asarray(cap.machines_alive).min())
    iv = extract_intervals(cap)
    models, band = machine_models(iv, int(cap.machines), stable, True, float(cap.horizon_s))
    d = np.asarray(hours, np.float64) * 3600.0
    bars = {
        "blind": np.full(d.size, max(MEDIAN, blind_survival(models[1], durations_s))),
        "own": np.maximum(MEDIAN, own_blind_survival(models[1], d)),
        "median": np.full(d.size, MEDIAN),
    }
    var = iv.filter(pl.col("machine") >= stable)
    total, passed = 0, {k: np.zeros(d.size) for k in RISKS}
    for m, length in zip(var["machine"].to_list(), var["length_s"].to_list(), strict=True):
        u = np.arange(0.0, float(length), 300.0)
        total += u.size
        for i, di in enumerate(d):
            p = models[band[m]].p_survive(u, di)
            for k in RISKS:
                passed[k][i] += float(np.sum(p >= bars[k][i]))
    return {k: [100.0 * x / total if total else 0.0 for x in passed[k]] for k in RISKS}


#: the columns of :func:`markdown` (header, column, decimals)
_MARKDOWN = (
    ("kills", "kills", 0), ("cut %", "cut_pct", 1), ("goodput pt", "goodput_pt", 2),
    ("vs ias pt", "vs_ias_pt", 2), ("var. starts P–1 d", "var_starts_day", 0),
    ("wait P–1 d (k job-h)", "wait_kjh_day", 1), ("done P–1 d (k core-h)", "done_kch_day", 1),
    ("done 1–7 d (k core-h)", "done_kch_week", 1), ("lost (k core-h)", "lost_kch", 1),
    ("mean wait h", "mean_wait_h", 2), ("never started", "never_started", 0),
)  # fmt: skip


def markdown(iso: pl.DataFrame) -> str:
    """:func:`isolation_table`'s rows as a Markdown table (the docs' isolating-run tables): per run its kills,
    cut, goodput against First-Fit and ``ias``, and for the jobs longer than the change period P but at most a
    day (``P–1 d``) their starts on the variable machines, their wait and their completed work, then the
    completed work of the jobs of one to seven days, the work lost to kills, the mean wait and the jobs never
    started."""
    head = "| instance | policy | " + " | ".join(h for h, _, _ in _MARKDOWN) + " |"
    lines = [head, "|" + "---|" * (2 + len(_MARKDOWN))]
    for r in iso.iter_rows(named=True):
        cells = [
            "–"
            if r[c] is None
            else f"{r[c]:+.{d}f}"
            if c in ("goodput_pt", "vs_ias_pt")
            else f"{r[c]:,.{d}f}"
            for _, c, d in _MARKDOWN
        ]
        lines.append(f"| {r['instance']} | `{r['policy']}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


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
    decisive_only: bool = False,
    isolate: bool = False,
) -> pl.DataFrame:
    """Per instance of :func:`studies.generalization.instances` (``only``: just those indices, each below
    ``n``, else ValueError) and policy key: the rows of :func:`run_pair` (``decisive_only``, ``isolate``
    as there), with the instance's drawn values."""
    if only is not None and any(not 0 <= i < n for i in only):
        raise ValueError(f"instance indices must lie in [0, {n}) (got {list(only)})")
    rows: list[dict[str, Any]] = []
    for inst in instances(master_seed, n, horizon_days):
        if only is not None and inst.index not in only:
            continue
        extra = _instance_columns(inst)
        pair = run_pair(inst.scenario("ff"), keys, inst.id, decisive_only=decisive_only, isolate=isolate)
        rows += [{**r, **extra} for r in pair]
    return pl.DataFrame(rows)


def _instance_columns(inst: Instance) -> dict[str, Any]:
    r = inst.row()
    return {k: r[k] for k in ("changes_per_hour", "step", "alpha", "min_duration_s", "mix", "load")}


def table62(
    machines: int,
    horizon_days: float,
    seed: int = 0,
    keys: Sequence[str] = MAIN,
    workloads: Sequence[str] = ZIPF,
    decisive_only: bool = False,
    isolate: bool = False,
) -> pl.DataFrame:
    """The thesis' Table 6.2 set-up at a small scale: Zipf 1.1–1.8 (§4.3.1; ``workloads``: those of them),
    the random walk of 1 change/h, step 0.15, dynamic range 60 %, on ``machines`` × 24 cores for
    ``horizon_days``; rows as :func:`run_pair`'s."""
    walk = {"kind": "random_walk", "changes_per_hour": 1.0, "step": 0.15, "dynamic_range": 0.6, "seed": seed}
    rows: list[dict[str, Any]] = []
    for wl in workloads:
        sc = Scenario(wl, walk, machines=machines, horizon_days=horizon_days, seed=seed)
        rows += run_pair(sc, keys, wl, decisive_only=decisive_only, isolate=isolate)
    return pl.DataFrame(rows)


def _open_scenarios(a: argparse.Namespace) -> list[tuple[str, Scenario, Path]]:
    """The (label, scenario, inputs) of ``--open``: the Azure scenario or ``--table62``'s rows."""
    if a.azure:
        from studies.sweep import inputs_dir

        return [
            ("azure s0", Scenario("azure", walk(1.0, 0.15, 0), "ff", seed=0, horizon_days=30.0), inputs_dir())
        ]
    if not a.table62:
        raise SystemExit("--open needs --table62 or --azure")
    wls = tuple(a.zipf.split(",")) if a.zipf else ZIPF
    return [
        (wl, Scenario(wl, walk(1.0, 0.15, 0), machines=a.table62, horizon_days=a.days, seed=0), _NO_INPUTS)
        for wl in wls
    ]


def azure(seed: int = 0, keys: Sequence[str] = MAIN, isolate: bool = False) -> pl.DataFrame:
    """The thesis ch. 6 Azure study scenario (:func:`studies.thesis.scenarios.ch6_scenarios`): the exported
    azure workload as it is, 30 days, the random walk of 1 change/h, step 0.15, replicate ``seed``, on the
    platform the study sizes; rows as :func:`run_pair`'s. FileNotFoundError without the exported workload."""
    from studies.sweep import inputs_dir

    sc = Scenario("azure", walk(1.0, 0.15, seed), "ff", seed=seed, horizon_days=30.0)
    return pl.DataFrame(run_pair(sc, keys, f"azure s{seed}", inputs_dir(), isolate=isolate))


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
    ap.add_argument("--azure", action="store_true", help="the thesis ch. 6 Azure study scenario instead")
    ap.add_argument("--zipf", type=str, help="with --table62: only these workloads, e.g. zipf-1.5,zipf-1.6")
    ap.add_argument(
        "--keys", type=str, help=f"these policy keys only (comma-separated of {', '.join(VARIANTS)})"
    )
    ap.add_argument(
        "--markdown", action="store_true", help="with --isolate: print its table as Markdown only"
    )
    ap.add_argument(
        "--open",
        action="store_true",
        help="with --table62 or --azure: per instance, the share of variable on-time each risk reading opens to "
        "jobs of 1.5-24 h (no simulation)",
    )
    ap.add_argument("--decisive-only", action="store_true", help="skip degenerate instances (First-Fit only)")
    ap.add_argument(
        "--isolate",
        action="store_true",
        help="also First-Fit's row and every run's mechanism measures (variable starts, waits, work by class)",
    )
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
    if a.keys:
        keys = tuple(a.keys.split(","))
        unknown = [k for k in keys if k not in VARIANTS]
        if unknown:
            raise SystemExit(f"unknown policy keys {unknown}; known: {', '.join(VARIANTS)}")
    if a.open:
        for label, sc, inputs in _open_scenarios(a):
            machines, jobs = sized_jobs(sc, inputs)
            cap = build_capacity(sc, inputs, machines)
            share = open_share(cap, jobs.filter(pl.col("cores") <= sc.cores)["duration_s"].to_numpy())
            cells = "; ".join(
                f"{k} " + ", ".join(f"{h:g} h {v:.1f} %" for h, v in zip(OPEN_HOURS, share[k], strict=True))
                for k in RISKS
            )
            print(f"{label}: {cells}")
        return
    if a.azure:
        t = azure(0, keys, a.isolate)
    elif a.table62:
        wls = tuple(a.zipf.split(",")) if a.zipf else ZIPF
        t = table62(
            a.table62, a.days, keys=keys, workloads=wls, decisive_only=a.decisive_only, isolate=a.isolate
        )
    else:
        n, days = (3, 0.25) if a.quick else (a.n, a.days)
        only = [int(x) for x in a.index.split(",")] if a.index else None
        t = generalization_table(a.seed, n, days, keys, only, a.decisive_only, a.isolate)
    if t.is_empty():
        raise SystemExit("no decisive instance")
    if a.out:
        t.write_parquet(a.out)
    if a.isolate and a.markdown:
        print(markdown(isolation_table(t)))
        return
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, fmt_str_lengths=70, float_precision=2):
        main_cols = [c for c in t.columns if c not in _MECHANISM_COLUMNS]
        print(t.select(main_cols).drop("degenerate_reason", "ff_cpu_s", "small_jobs", "outliving_jobs"))
        print(t.filter(pl.col("policy") == keys[0]).select("instance", "decisive", "degenerate_reason"))
        print(shares(t.filter(pl.col("policy") != "ff")))
        if a.isolate:
            print(isolation_table(t))


if __name__ == "__main__":
    main()
