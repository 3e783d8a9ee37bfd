"""Reproduction of the seeds' headline results: seed-faithful scenario sets, replicates, headline rows.

Each headline of :data:`HEADLINES` is a claim of a seed paper, the setting it was measured in (quoted by
section in the study docstrings below), and an **acceptance band written down before any varcap number
was looked at**, by one rule per kind of claim:

* a relative change or loss with a magnitude (a termination cut, a goodput loss): the same sign and
  within a factor of two of the paper's value (``[v/2, 2v]``, capped at 100 %) — our data are samples that
  stand in for the papers' traces (see each study), so the order of magnitude and direction are what a
  reproduction can check;
* a goodput difference between two schedulers (percentage points): the paper's value ± 2 pp, the
  thesis' own tolerance for "similar goodput" (§3.3, eq. 3.1: goodput_FF − goodput_S ≤ 2 %);
* a range the paper states itself ("25–45 %", "20–27 %"): that range;
* a qualitative claim ("proportional", "always better"): its plain reading (r ≥ 0.8; a gain > 0);
* a descriptive statistic (a dynamic range, a Table 4.1 cell): within 25 % of the printed value.

Where the text is ambiguous a headline has several **readings** (e.g. a goodput loss in percentage points
or relative to the fixed-capacity goodput); each is reported as its own row (``headline_id`` +
``reading``), the default reading first. Rows outside their band carry an ``explanation`` that names the
cause with the run that isolates it (an explaining reading in the same study).

Replicates: every scenario runs for seeds 0 … R−1 (workload and capacity seeds alike); a headline value is
computed per replicate and reported as mean with a 95 % Student-t interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from studies.scenarios import STUDIES, Scenario

# --------------------------------------------------------------------------------------------- profiles


@dataclass(frozen=True)
class Profile:
    """Sizes of a reproduction run: ``full`` follows the papers; ``quick`` shrinks platforms, horizons
    and replicates so that ``varcap reproduce --quick`` finishes in minutes (not a reproduction)."""

    name: str
    replicates: int
    ch4_freqs: tuple[float, ...]
    ch4_steps: tuple[float, ...]
    borg_days: float
    zipf_machines: int
    zipf_days: float
    zipf_warmup_days: float
    zc_machines: int
    zc_days: float
    ss_days: float
    ra_days: float
    ra_warmup_days: float
    ra_mra: tuple[int, ...]
    gen_alphas: tuple[float, ...] = (1.1, 1.5, 2.0)
    gen_xms: tuple[float, ...] = (300.0, 3600.0)


FULL = Profile(
    "full",
    5,
    (0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
    (0.3, 0.45, 0.6),
    7.0,
    1000,
    30.0,
    30.0,
    1250,
    30.0,
    7.0,
    21.0,
    7.0,
    (8,),  # §5.1's default M_ra; the §5.4 grid {4, 6, 8, 12, 16} is the `riskaware` sweep study
)
# quick keeps the Zipf warm-up as long as the longest job (720 h): without it the window is not in steady
# state and FF never leaves the always-on machines (measured: 0 terminations at 7 + 7 days)
QUICK = Profile(
    "quick", 3, (0.25, 1.0, 8.0), (0.45, 0.6), 3.0, 100, 7.0, 30.0, 250, 7.0, 2.0, 7.0, 2.0, (8,), (1.5,)
)
PROFILES = {"full": FULL, "quick": QUICK}


def _seeds(pr: Profile) -> range:
    return range(pr.replicates)


def _walk(f: float, step: float, seed: int, dr: float = 0.6) -> dict[str, Any]:
    return {"kind": "random_walk", "changes_per_hour": f, "step": step, "dynamic_range": dr, "seed": seed}


# ----------------------------------------------------------------------------------------------- studies


def ch4_scenarios(pr: Profile) -> dict[tuple, Scenario]:
    """Thesis §3.4 and §4.1: FF on Azure and Borg under random-walk capacity, dynamic range 60 %, mean 70 %.

    §3.4: "change frequencies of 0.25, 0.5, 1, 2, 4 and 8 changes/hour and step size values of 0.15, 0.3,
    0.45 and 0.6. Dynamic range is constrained to 60 %"; "we assume a 70 % average available resource
    capacity … we size the workload to approximately 80 % of the average resource capacity"; Azure:
    "1000 machines × 24 cores"; Borg: "200 machines". §4.1: frequency sweep at step 0.15, step sweep at
    1 change/hour; goodput loss is against the fixed-capacity platform of Fig. 2.1a (70 % of the machines
    always on), which we run as the ``constant`` capacity.

    Stand-ins: Azure is the embedded 30-day sample (100,488 VMs; mean 7.4 h, not the thesis' 60 h), on a
    platform sized to the 80 % rule (244 machines: the sample offers 3,343 cores on average). Borg is the
    embedded 2011 sample (15 h of submissions): its (duration, cores) pairs are resampled with Poisson
    arrivals over 7 days onto 200 × 24 cores at the 80 % load, durations unchanged (``borg2011-native``).
    """
    out: dict[tuple, Scenario] = {}
    for r in _seeds(pr):
        for wl, days, machines in (("azure", 30.0, 0), ("borg2011-native", pr.borg_days, 200)):
            out[(wl, "fixed", r)] = Scenario(
                wl, {"kind": "constant", "fraction": 0.7}, machines=machines, horizon_days=days, seed=r
            )
            pts = [(f, 0.15) for f in pr.ch4_freqs] + [(1.0, s) for s in pr.ch4_steps]
            for f, s in dict.fromkeys(pts):
                out[(wl, f, s, r)] = Scenario(
                    wl, _walk(f, s, r), machines=machines, horizon_days=days, seed=r
                )
    return out


ZIPFS = tuple(f"zipf-{s / 10:.1f}" for s in range(11, 19))


def ch6_scenarios(pr: Profile) -> dict[tuple, Scenario]:
    """Thesis §6.2–6.3 (Table 6.2): IAS (A = 0.6) vs FF on Zipf-1.1 … 1.8 and Azure.

    §6.1: "60 % dynamic range, change frequency of 1 change/hour and step size of 0.15"; §3.4: 1000 × 24
    cores; §4.3.1: the Zipf workloads are built "in steady state". We read steady state as a warm-up as long
    as the longest job (720 h): jobs arrive over warm-up + window, metrics cover the 30-day window only.
    Also run: IAS with A = 0.1 (§6.2, "up to 98 %"), and IAS with the survival model pooled over all
    machines (``survival_pool=all``, the model varcap used before; an explaining reading).
    Azure as in :func:`ch4_scenarios` (its trace has no warm-up to offer: window = the 30 days).
    """
    out: dict[tuple, Scenario] = {}
    h = pr.zipf_days + pr.zipf_warmup_days
    for r in _seeds(pr):
        for wl in (*ZIPFS, "azure"):
            kw: dict[str, Any] = (
                {"machines": pr.zipf_machines, "horizon_days": h, "warmup_days": pr.zipf_warmup_days}
                if wl.startswith("zipf")
                else {"horizon_days": 30.0}
            )
            cap = _walk(1.0, 0.15, r)
            out[(wl, "ff", r)] = Scenario(wl, cap, "ff", seed=r, **kw)
            out[(wl, "ias", r)] = Scenario(wl, cap, "ias", {"aggressiveness": "0.6"}, seed=r, **kw)
            if wl in ("zipf-1.5", "azure"):
                out[(wl, "ias-all", r)] = Scenario(
                    wl, cap, "ias", {"aggressiveness": "0.6", "survival_pool": "all"}, seed=r, **kw
                )
                # explaining run: IAS without H1's split of the machines (H2 + H4 on every machine)
                out[(wl, "ias-no-h1", r)] = Scenario(
                    wl, cap, "ias-h2+h4", {"aggressiveness": "0.6"}, seed=r, **kw
                )
            if wl == "zipf-1.5":
                out[(wl, "ias-a0.1", r)] = Scenario(wl, cap, "ias", {"aggressiveness": "0.1"}, seed=r, **kw)
    return out


ZC_MODELS = {  # reading -> (capacity is a pool of cores?, killed jobs fail for good?)
    "pool-fail": (True, True),
    "machines-requeue": (False, False),
    "machines-fail": (False, True),
    "pool-requeue": (True, False),
}


def zc_scenarios(pr: Profile) -> dict[tuple, Scenario]:
    """Seed 003 §4–5: Azure on "1,250 nodes (20,000 cores)" (16 cores each), FCFS first-fit.

    §4.1: range 0.6 = [0.4, 1.0] (mean 0.7), "Stepsize is one-fourth of the dynamic range" (0.15); 1 change
    per hour unless varied. No-variation reference: constant 70 %. §5.3: "When capacity decreases below the
    scheduled workload, to meet the capacity constraint, jobs must be terminated (fail)"; Random: "Select a
    node randomly, terminate the associated job, and free its resources"; LWW: "the job whose termination
    wastes least work (smallest nodes × (t − start time))"; LFD: least (t − start)/runtime; "we repeat until
    the desired (lower) resource level is reached". §4.2: failure rate = |J_failed| / (|J_completed| +
    |J_failed|), so a terminated job is failed, not resubmitted.

    Two choices the text implies and varcap ≤ 0.1 made the other way, each run as a reading
    (:data:`ZC_MODELS`): capacity is a *resource level* (``pool``: one machine holding every core; kills only
    when running jobs exceed it, victims chosen among jobs) rather than machines turned off with all their
    jobs; and killed jobs *fail* (``<rule>-fail``) rather than return to the queue. Default: ``pool-fail``.
    The embedded Azure sample offers ~3,300 cores, so on 1,250 × 16 cores it would load 24 % of the mean
    capacity; we size the platform to the thesis' 80 % rule instead (``machines = 0``), 16-core nodes.
    """
    out: dict[tuple, Scenario] = {}
    for r in _seeds(pr):
        base = {"cores": 16, "horizon_days": pr.zc_days, "seed": r}
        out[("fixed", r)] = Scenario("azure", {"kind": "constant", "fraction": 0.7}, **base)
        for reading, (pool, fail) in ZC_MODELS.items():
            walk = _walk(1.0, 0.15, r)
            cap = {"kind": "pool", "of": walk} if pool else walk
            for term in ("lifo", "random", "lww", "lfd"):
                st = (
                    {"termination": f"{term}-fail"}
                    if fail
                    else ({"termination": term} if term != "lifo" else {})
                )
                out[(reading, term, r)] = Scenario("azure", cap, "ff", st, **base)
    return out


POLS_SS = ("capsched", "slacksched", "slacksched-nodelay", "oracle")


def ss_scenarios(pr: Profile) -> dict[tuple, Scenario]:
    """Seed 002 §4.1–4.2 (Fig. 10): SlackSched vs the CapacityScheduler on one cluster of 64 HVMs.

    §4.1: "we randomly select 64 HVMs for each cluster"; jobs of many tasks arrive as a Poisson process;
    CapacityScheduler = YARN's default, a random matching (§4.2); JCT is per job (last task end − job
    arrival); "reduction in mean JCT (1 − mean JCT with scheme / mean JCT with baseline)", p90 likewise.
    Stand-ins: the HVM pool is varcap's seeded harvest generator (``harvest_trace``: log-normal
    inter-change times, bigram grow/shrink chain, evictions, HVM stability spread 1.0), not Azure's
    traces; the workload is ``harvest-jobs`` (Seismic A: uniform task runtimes, 100–300 tasks per job of
    1–8 cores, load 0.6 of the pool — our assumptions). Also run: SlackSched-NoDelay and the Oracle.
    """
    out: dict[tuple, Scenario] = {}
    for r in _seeds(pr):
        cap = {"kind": "harvest", "pool": 64, "max_cores": 48, "stability_spread": 1.0, "seed": r}
        # quick leaves out waiting SlackSched (its eq. 2 pass over a long queue: ~30 s per 2-day run)
        pols = ("capsched", "slacksched-nodelay", "oracle") if pr.name == "quick" else POLS_SS
        for p in pols:
            out[(p, r)] = Scenario(
                "harvest-jobs", cap, p, machines=64, cores=48, horizon_days=pr.ss_days, seed=r, load=0.6
            )
        # explaining readings: half the load, so that a freed core usually has more than one node to go to;
        # and independent tasks (``harvest-tasks``: log-normal runtimes, median 30 min, seed 002 §2.2) on the
        # same pool at the same load, without jobs of 100–300 tasks arriving at once
        for p in ("capsched", "slacksched-nodelay"):
            out[(p, "load-0.3", r)] = Scenario(
                "harvest-jobs", cap, p, machines=64, cores=48, horizon_days=pr.ss_days, seed=r, load=0.3
            )
            out[(p, "tasks", r)] = Scenario(
                "harvest-tasks", cap, p, machines=64, cores=48, horizon_days=pr.ss_days, seed=r
            )
    return out


def ra_scenarios(pr: Profile) -> dict[tuple, Scenario]:
    """Seed 001 §5.1–5.4: FirstFitAware (``ff``) vs TargetASAP and PackedTargetASAP.

    §5.1: "M_avg = 24 … φ = 1200 s … M_ra = 8 … n_c = 24"; the trace runs three weeks and "the window
    begins at T_begin after one week, so that the first week is a warmup"; goodput is §4's GOODPUT(T) with
    the partial work of running jobs (``goodput_partial``); §5.4 varies M_ra ∈ {4, 6, 8, 12, 16}.
    Workload: §5.3 SyntheticUniform, fully specified by the text — "n = 20000" jobs released regularly over
    the three weeks, cores 1/2/4/8 with probabilities 1/6, 1/3, 1/3, 1/6, lengths uniform in [0, 2 T_avg],
    T_avg such that "the total number of machines required … is around 26" (``seed001-uniform``: cores
    counted; the literal "T_avg = 209664/n hours", which ignores cores and offers 3.5 × that work, is run as
    a second reading, ``seed001-uniform-literal``, at M_ra = 8).
    Why not Borg: §5.2 keeps Borg 2019 jobs shorter than a day and prunes them to 26 machines' work over
    two weeks. The embedded Borg 2011 sample's < 1 day runs have a mean work of 1,529 core-seconds, so that
    load takes ~990,000 jobs over three weeks (seed 001's synthetic traces have 20,000); the Target*
    policies re-plan every pending job on each machine event (§3.4), which at that size does not finish in
    the reproduction's time budget. Seed 001 reports the same ordering on all four workflow types (§6.1).
    """
    out: dict[tuple, Scenario] = {}
    days, warm = pr.ra_days, pr.ra_warmup_days
    for r in _seeds(pr):
        for mra in pr.ra_mra:
            cap = {"kind": "risk_aware_walk", "m_avg": 24, "m_ra": mra, "period_s": 1200.0, "seed": r}
            literal = mra == 8 and pr.name == "full"
            wls = ("seed001-uniform", "seed001-uniform-literal") if literal else ("seed001-uniform",)
            for wl in wls:
                for p in ("ff", "target-asap", "packed-target-asap"):
                    out[(wl, p, mra, r)] = Scenario(
                        wl, cap, p, machines=24 + mra, horizon_days=days, warmup_days=warm, seed=r
                    )
    return out


def grid_scenarios(pr: Profile) -> dict[tuple, Scenario]:
    """Thesis §2.1.2 and §4.2 (Figs. 4.9–4.10): FF on the Azure workload under observed variable capacity.

    §3.4: "observed variable capacity, based on a constant carbon budget, in the MISO, ERCOT, SPP and CAISO
    grids, over the representative month of April 2024"; §4.2: "the Azure workload suffers goodput losses
    between 3.72–30.75 %" against the fixed platform (constant 70 %, as in :func:`ch4_scenarios`).
    Stand-ins: the embedded carbon series (CAISO and ERCOT from Electricity Maps, April 2024; MISO from
    EIA-930, April 2022, the month the sample holds); SPP is not embedded. Trace, workload and LIFO are
    deterministic: the replicates are identical runs (their interval is a point), kept for a uniform table.
    """
    from studies.scenarios import GRIDS

    out: dict[tuple, Scenario] = {}
    for r in _seeds(pr):
        out[("fixed", r)] = Scenario(
            "azure", {"kind": "constant", "fraction": 0.7}, horizon_days=30.0, seed=r
        )
        for g, sig in GRIDS.items():
            cap = {"kind": "carbon_budget", "grid": g, "signal": sig}
            out[(g, r)] = Scenario("azure", cap, "ff", horizon_days=30.0, seed=r)
    return out


GENERIC_POLICIES: dict[str, tuple[str, dict[str, str]]] = {
    "ff": ("ff", {}),
    "ias": ("ias", {}),  # A = 0.6
    "ias-a0.1": ("ias", {"aggressiveness": "0.1"}),
    "ias-a0.9": ("ias", {"aggressiveness": "0.9"}),
    "ias-no-h1": ("ias-h2+h4", {}),  # explaining run: IAS without H1's machine partition
}


def generic_scenarios(pr: Profile) -> dict[tuple, Scenario]:
    """The issue's generic heavy-tailed instance: Pareto durations capped at 72 h, 1/2/4/8 cores, 40 × 24
    cores, 14 days, 1 change/hour, step 0.15 (dynamic range 60 %, mean 70 %), 80 % load, no warm-up.

    The instance does not fix the Pareto shape ``alpha`` nor its minimum ``xm``: we run α ∈ {1.1, 1.5, 2.0}
    and xm ∈ {5 min (the thesis Zipf workloads' unit and P50), 1 h (= the change period)}, each a reading;
    the default reading is α = 1.5, xm = 5 min (the thesis' own IAS workload is Zipf-1.5). The claim tested
    is thesis §6.2: "IAS consistently outperforms the baseline in reducing job terminations, regardless
    of the scheduler's aggressiveness" (A = 0.1, 0.6, 0.9); ``ias-no-h1`` (H2 + H4) isolates H1.
    """
    out: dict[tuple, Scenario] = {}
    for r in _seeds(pr):
        for a in pr.gen_alphas:
            for xm in pr.gen_xms:
                wl = f"pareto-{a:g}-{xm:g}"
                for key, (pol, st) in GENERIC_POLICIES.items():
                    out[(wl, key, r)] = Scenario(
                        wl, _walk(1.0, 0.15, r), pol, st, machines=40, horizon_days=14.0, seed=r
                    )
    return out


STUDY_BUILDERS: dict[str, Callable[[Profile], dict[tuple, Scenario]]] = {
    "repro-grids": grid_scenarios,
    "repro-generic": generic_scenarios,
    "repro-thesis-ch4": ch4_scenarios,
    "repro-thesis-ch6": ch6_scenarios,
    "repro-zhang-chien": zc_scenarios,
    "repro-slacksched": ss_scenarios,
    "repro-riskaware": ra_scenarios,
}


def study_name(base: str, pr: Profile) -> str:
    return base if pr.name == "full" else f"{base}-{pr.name}"


def studies() -> dict[str, Callable[[], list[Scenario]]]:
    """Catalogue entries (name → scenario list builder) for every reproduction study and profile."""
    out: dict[str, Callable[[], list[Scenario]]] = {}
    for pr in PROFILES.values():
        for base, build in STUDY_BUILDERS.items():
            out[study_name(base, pr)] = lambda b=build, p=pr: list(b(p).values())
    return out


# --------------------------------------------------------------------------------------------- headlines
Runs = dict[str, dict[str, Any]]  # scenario id -> run.json row


@dataclass(frozen=True)
class Headline:
    """One paper claim. ``compute(profile, runs)`` returns ``{reading: [value per replicate]}`` (default
    reading first) and may raise :class:`MissingRuns`."""

    id: str
    seed_doc: str
    section: str
    anchor_value: float
    anchor_text: str
    unit: str
    band: tuple[float, float]
    study: str | None
    compute: Callable[[Profile, Runs], dict[str, list[float]]]
    #: evidence for a row outside its band, computed from the runs (may raise MissingRuns)
    explain: Callable[[Profile, Runs], str] | None = field(default=None)


class MissingRuns(LookupError):
    """Some scenarios a headline needs have no run result yet."""


def _m(runs: Runs, sc: Scenario, metric: str) -> float:
    row = runs.get(sc.id)
    if row is None:
        raise MissingRuns(f"scenario {sc.id} ({sc.label()}) has not run")
    return float(row["metrics"][metric])


def _factor2(v: float) -> tuple[float, float]:
    lo, hi = sorted((v / 2, v * 2))
    return (lo, min(hi, 100.0)) if v > 0 else (lo, hi)


def _cut(a: float, b: float) -> float:
    """Percent reduction of ``b`` relative to ``a`` (100 × (a − b) / a; 0 if a = 0)."""
    return 100.0 * (a - b) / a if a else 0.0


# ---- thesis ch4
def _loss(wl: str):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ch4_scenarios(pr)
        f = max(pr.ch4_freqs)
        pp, rel = [], []
        for r in _seeds(pr):
            g0, g = _m(runs, sc[(wl, "fixed", r)], "goodput"), _m(runs, sc[(wl, f, 0.15, r)], "goodput")
            pp.append(100 * (g0 - g))
            rel.append(_cut(g0, g))
        return {"pp": pp, "relative": rel}

    return compute


def _explain_loss(wl: str):
    def evidence(pr: Profile, runs: Runs) -> str:
        sc = ch4_scenarios(pr)
        w = _workload(runs, sc[(wl, max(pr.ch4_freqs), 0.15, 0)])
        d = w["duration_s"].to_numpy() / 3600.0
        trend = []
        for f in pr.ch4_freqs:
            losses = [
                100 * (_m(runs, sc[(wl, "fixed", r)], "goodput") - _m(runs, sc[(wl, f, 0.15, r)], "goodput"))
                for r in _seeds(pr)
            ]
            trend.append(f"{f:g}/h {np.mean(losses):.1f}")
        return (
            f"Evidence ({wl}): job duration mean {d.mean():.2f} h, median {np.median(d) * 60:.0f} min, P95 "
            f"{np.percentile(d, 95):.2f} h; goodput loss (pp, mean of seeds) by change frequency: "
            + ", ".join(trend)
            + "."
        )

    return evidence


def _intervals(sc: Scenario) -> int:
    from sim.generators import random_walk
    from sim.intervals import extract_intervals

    c = sc.capacity
    machines = sc.machines or 244
    tr = random_walk(
        machines, sc.horizon_s, c["changes_per_hour"], c["step"], c["dynamic_range"], seed=c["seed"]
    )
    return extract_intervals(tr).height


def _r_terms_intervals(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    sc = ch4_scenarios(pr)
    per: dict[str, list[float]] = {"min": [], "azure": [], "borg": []}
    for r in _seeds(pr):
        rs = {}
        for wl, key in (("azure", "azure"), ("borg2011-native", "borg")):
            pts = [k for k in sc if k[0] == wl and k[1] != "fixed" and k[-1] == r]
            terms = [_m(runs, sc[k], "terminations") for k in pts]
            ivs = []
            for k in pts:
                s = sc[k]
                if s.machines == 0:  # platform sized by the sweep: take it from the run
                    s = Scenario(
                        s.workload,
                        s.capacity,
                        machines=int(runs[s.id]["machines"]),
                        horizon_days=s.horizon_days,
                        seed=s.seed,
                    )
                ivs.append(_intervals(s))
            rs[key] = float(np.corrcoef(ivs, terms)[0, 1])
        per["azure"].append(rs["azure"])
        per["borg"].append(rs["borg"])
        per["min"].append(min(rs.values()))
    return per


def _zipf_table(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    from sim.workloads import THESIS_TABLE_4_1, zipf_durations

    out = []
    for r in _seeds(pr):
        ok = 0
        for skew, printed in THESIS_TABLE_4_1.items():
            d = zipf_durations(skew, 1_000_000, np.random.default_rng([r, int(skew * 10)])) / 3600.0
            got = (d.mean(), *np.percentile(d, [50, 90, 95]))
            ok += sum(abs(g - p) <= 0.25 * p for g, p in zip(got, printed, strict=True))
        out.append(100.0 * ok / (4 * len(THESIS_TABLE_4_1)))
    return {"cells": out}


def _dynamic_range(grid: str):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        trace = grid_capacity(grid)
        a = trace.machines_alive / trace.machines
        # readings of "dynamic range" (thesis §2.1.2, Fig. 2.2b gives no formula): the whole span of the
        # capacity distribution, its 5–95 % span, and the span relative to the mean (ub − lb)/mean
        return {
            "max-min": [100 * float(a.max() - a.min())],
            "p95-p5": [100 * float(np.percentile(a, 95) - np.percentile(a, 5))],
            "span/mean": [100 * float((a.max() - a.min()) / a.mean())],
        }

    return compute


def grid_capacity(grid: str):
    """The constant-carbon-budget capacity trace of ``grid`` over its April (mean 70 % of 1000 machines),
    from the exported sweep input ``grid_carbon.parquet`` (thesis §2.1.2)."""
    from sim.generators import budget_trace
    from studies.scenarios import GRIDS
    from studies.sweep import inputs_dir

    f = inputs_dir() / "grid_carbon.parquet"
    if not f.is_file():
        raise MissingRuns(f"{f}: sweep input missing; materialize out_sim_inputs (varcap reproduce does)")
    sig = pl.read_parquet(f).filter(pl.col("series") == f"{grid}:{GRIDS[grid]}").sort("hour")
    return budget_trace(sig["gco2_per_kwh"].to_numpy(), 1000, "carbon", label=grid)


# ---- thesis ch6
def _ias_cut(wl: str, key: str = "ias"):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ch6_scenarios(pr)
        alts = [a for a in ("ias-all", "ias-no-h1") if key == "ias" and (wl, a, 0) in sc]
        res: dict[str, list[float]] = {"default": [], **{_READING[a]: [] for a in alts}}
        for r in _seeds(pr):
            ff = _m(runs, sc[(wl, "ff", r)], "terminations")
            res["default"].append(_cut(ff, _m(runs, sc[(wl, key, r)], "terminations")))
            for a in alts:
                res[_READING[a]].append(_cut(ff, _m(runs, sc[(wl, a, r)], "terminations")))
        return res

    return compute


_READING = {"ias-all": "survival_pool=all", "ias-no-h1": "no-h1 (H2+H4)"}


def _ias_goodput(wl: str):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ch6_scenarios(pr)
        res: dict[str, list[float]] = {"default": [], **{v: [] for v in _READING.values()}}
        for r in _seeds(pr):
            ff = _m(runs, sc[(wl, "ff", r)], "goodput")
            res["default"].append(100 * (_m(runs, sc[(wl, "ias", r)], "goodput") - ff))
            for a, name in _READING.items():
                res[name].append(100 * (_m(runs, sc[(wl, a, r)], "goodput") - ff))
        return res

    return compute


# ---- seed 003
def _lww_vs_random(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    sc = zc_scenarios(pr)
    out: dict[str, list[float]] = {k: [] for k in ZC_MODELS}
    for r in _seeds(pr):
        for k in ZC_MODELS:
            rnd = _m(runs, sc[(k, "random", r)], "goodput")
            out[k].append(100 * (_m(runs, sc[(k, "lww", r)], "goodput") - rnd) / rnd if rnd else float("nan"))
    return out


def _range_decline(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    """§5.2 does not name the termination rule; §5.3 introduces LWW and LFD against Random, the rule that
    needs no knowledge, which we read as the one in force before (default); LIFO and LWW are readings."""
    sc = zc_scenarios(pr)
    keys = [
        ("pool-fail", "random"),
        ("pool-fail", "lifo"),
        ("pool-fail", "lww"),
        ("machines-requeue", "lifo"),
    ]
    out: dict[str, list[float]] = {f"{m}:{t}": [] for m, t in keys}
    for r in _seeds(pr):
        g0 = _m(runs, sc[("fixed", r)], "goodput")
        for m, t in keys:
            out[f"{m}:{t}"].append(_cut(g0, _m(runs, sc[(m, t, r)], "goodput")))
    return out


# ---- seed 002
def _jct(runs: Runs, sc: Scenario) -> pl.DataFrame:
    from sim.workloads import group_completion_times

    return group_completion_times(_per_job(runs, sc))


def _jct_pair(runs: Runs, base: Scenario, other: Scenario) -> tuple[np.ndarray, np.ndarray]:
    """Per-job completion times of the jobs completed under both scenarios (base, other)."""
    both = _jct(runs, base).join(_jct(runs, other), on="group", suffix="_s")
    both = both.filter(pl.col("complete") & pl.col("complete_s"))
    return both["jct_s"].to_numpy(), both["jct_s_s"].to_numpy()


def _slack(stat: str):
    """Seed 002 §4.1 defines three aggregates: (a) "mean reduction in JCT (1 − GeometricMean(nJCT))", (b)
    "reduction in mean JCT", (c) "reduction in tail (p90) JCT". Fig. 10's caption quotes (a) as 20–27 % and
    (b) as 25–27 %: the mean headline reports (b) by default and (a) as reading ``geomean-njct``."""
    f = np.mean if stat == "mean" else (lambda x: np.percentile(x, 90))

    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ss_scenarios(pr)
        # the Oracle (never killed: it reads the future capacity) bounds what avoiding kills can gain
        pols = tuple(p for p in ("slacksched", "slacksched-nodelay", "oracle") if (p, 0) in sc)
        res: dict[str, list[float]] = {p: [] for p in pols}
        if stat == "mean":
            res.update({f"{p}:geomean-njct": [] for p in pols})
        for r in _seeds(pr):
            for p in pols:
                if sc[(p, r)].id not in runs and any(sc[(q, r)].id in runs for q in pols if q != p):
                    continue  # this policy's runs are missing but the other's are there: report what ran
                b, s = _jct_pair(runs, sc[("capsched", r)], sc[(p, r)])
                if not b.size:
                    raise MissingRuns(f"no job completed under both capsched and {p} (seed {r})")
                res[p].append(_cut(float(f(b)), float(f(s))))
                if stat == "mean":
                    res[f"{p}:geomean-njct"].append(100.0 * (1.0 - float(np.exp(np.mean(np.log(s / b))))))
            base, other = sc.get(("capsched", "load-0.3", r)), sc.get(("slacksched-nodelay", "load-0.3", r))
            if base is not None and other is not None and base.id in runs and other.id in runs:
                b, s = _jct_pair(runs, base, other)
                if b.size:  # tiny profiles may complete no job under both: nothing to compare
                    res.setdefault("slacksched-nodelay:load-0.3", []).append(_cut(float(f(b)), float(f(s))))
        return res

    return compute


# ---- seed 001
def _target_gain(policy: str):
    def compute(pr: Profile, runs: Runs) -> dict[str, list[float]]:
        sc = ra_scenarios(pr)
        res: dict[str, list[float]] = {"goodput_partial": [], "goodput": []}
        if ("seed001-uniform-literal", "ff", 8, 0) in sc:
            res["literal-tavg"] = []
        for r in _seeds(pr):
            for metric in ("goodput_partial", "goodput"):
                gains = [
                    -_cut(
                        _m(runs, sc[("seed001-uniform", "ff", mra, r)], metric),
                        _m(runs, sc[("seed001-uniform", policy, mra, r)], metric),
                    )
                    for mra in pr.ra_mra
                ]
                res[metric].append(float(np.mean(gains)))
            if (k0 := ("seed001-uniform-literal", "ff", 8, r)) in sc:
                k = k0
                res["literal-tavg"].append(
                    -_cut(
                        _m(runs, sc[k], "goodput_partial"),
                        _m(runs, sc[(k[0], policy, 8, r)], "goodput_partial"),
                    )
                )
        return res

    return compute


# ---- evidence for rows outside their band
_CLASSES = ((3600.0, "≤1 h"), (5 * 3600.0, "1–5 h"), (30 * 3600.0, "5–30 h"), (float("inf"), ">30 h"))


def _per_job(runs: Runs, sc: Scenario) -> pl.DataFrame:
    from sim.paths import home

    row = runs.get(sc.id)
    if row is None or "jobs_path" not in row:
        raise MissingRuns(f"scenario {sc.id} ({sc.label()}) has no per-job table")
    p = row["jobs_path"]
    return pl.read_parquet(p if p.startswith("/") else home() / p)


def _workload(runs: Runs, sc: Scenario) -> pl.DataFrame:
    from studies.scenarios import build_jobs
    from studies.sweep import inputs_dir

    machines = sc.machines or int(runs.get(sc.id, {}).get("machines", 0))
    if not machines:
        raise MissingRuns(f"scenario {sc.id} ({sc.label()}) has no platform size recorded")
    return build_jobs(sc, inputs_dir(), machines).select("job_id", "duration_s", "cores")


def _by_class(out: pl.DataFrame, wl: pl.DataFrame) -> pl.DataFrame:
    """Terminations, jobs and never-started jobs per duration class (whole run, every job)."""
    j = out.join(wl, on="job_id")
    cls = pl.lit(_CLASSES[-1][1])
    for lim, name in reversed(_CLASSES[:-1]):
        cls = pl.when(pl.col("duration_s") <= lim).then(pl.lit(name)).otherwise(cls)
    return (
        j.with_columns(cls.alias("cls"))
        .group_by("cls")
        .agg(
            pl.col("terminations").sum().alias("terms"),
            pl.len().alias("jobs"),
            (pl.col("status") == "never_started").sum().alias("never"),
        )
    )


def _fmt_classes(t: pl.DataFrame, col: str) -> str:
    d = dict(zip(t["cls"].to_list(), t[col].to_list(), strict=True))
    return " / ".join(f"{d.get(name, 0):,}" for _, name in _CLASSES)


def _explain_ias_cut(wl: str):
    def evidence(pr: Profile, runs: Runs) -> str:
        sc = ch6_scenarios(pr)
        w = _workload(runs, sc[(wl, "ff", 0)])
        ff = _by_class(_per_job(runs, sc[(wl, "ff", 0)]), w)
        ias = _by_class(_per_job(runs, sc[(wl, "ias", 0)]), w)
        return (
            f"Evidence ({wl}, seed 0, whole run; job durations {' / '.join(n for _, n in _CLASSES)}): "
            f"terminations FF {_fmt_classes(ff, 'terms')}, IAS {_fmt_classes(ias, 'terms')}; jobs "
            f"{_fmt_classes(ff, 'jobs')}; never started under IAS {_fmt_classes(ias, 'never')}."
        )

    return evidence


def _explain_ias_goodput(wl: str):
    def evidence(pr: Profile, runs: Runs) -> str:
        sc = ch6_scenarios(pr)
        f, i = sc[(wl, "ff", 0)], sc[(wl, "ias", 0)]
        w = _workload(runs, f)
        work = (w["duration_s"] * w["cores"]).to_numpy()
        big = work >= np.percentile(work, 90)
        mf, mi = runs[f.id]["metrics"], runs[i.id]["metrics"]
        text = (
            f"Evidence ({wl}, seed 0): idle fraction FF {mf['idle_fraction']:.3f} vs IAS "
            f"{mi['idle_fraction']:.3f}; jobs never started FF {mf['jobs_not_scheduled']:,} vs IAS "
            f"{mi['jobs_not_scheduled']:,}; the big jobs H1 confines to the always-on machines (duration × cores"
            f" ≥ P90) carry {100 * work[big].sum() / work.sum():.0f} % of the offered work, and the always-on "
            f"machines are 40 % of the platform while the load is 56 % (80 % of the 70 % mean)."
        )
        n = sc.get((wl, "ias-no-h1", 0))
        if n is not None and n.id in runs:
            mn = runs[n.id]["metrics"]
            text += (
                f" Without H1 (H2 + H4 on every machine): idle fraction {mn['idle_fraction']:.3f}, jobs never "
                f"started {mn['jobs_not_scheduled']:,}, terminations {mn['terminations']:,} (FF "
                f"{mf['terminations']:,}, IAS {mi['terminations']:,})."
            )
        return text

    return evidence


def _explain_zipf_table(pr: Profile, runs: Runs) -> str:
    from sim.workloads import THESIS_TABLE_4_1, zipf_durations

    off = []
    for skew, printed in THESIS_TABLE_4_1.items():
        d = zipf_durations(skew, 1_000_000, np.random.default_rng([0, int(skew * 10)])) / 3600.0
        got = (d.mean(), *np.percentile(d, [50, 90, 95]))
        for name, g, p in zip(("mean", "P50", "P90", "P95"), got, printed, strict=True):
            if abs(g - p) > 0.25 * p:
                off.append(f"Zipf-{skew} {name}: varcap {g:.3g} h vs printed {p:.3g} h")
    return "Cells outside 25 %: " + ("; ".join(off) if off else "none") + "."


def _explain_slack(pr: Profile, runs: Runs) -> str:
    sc = ss_scenarios(pr)
    missing = [" ".join(map(str, k[:-1])) + f" seed {k[-1]}" for k, s in sc.items() if s.id not in runs]
    parts = []
    if missing:
        parts.append(f"Not run: {', '.join(missing)}.")
    names = {"capsched": "CapacityScheduler", "slacksched": "SlackSched", "slacksched-nodelay": "NoDelay"}
    names["oracle"] = "Oracle"
    m = {p: runs[sc[(p, 0)].id]["metrics"] for p in names if (p, 0) in sc and sc[(p, 0)].id in runs}
    cuts: dict[str, list[float]] = {"jobs": [], "tasks": []}
    for r in _seeds(pr):
        for wl, key in (("jobs", ()), ("tasks", ("tasks",))):
            a, b = (sc.get((p, *key, r)) for p in ("capsched", "slacksched-nodelay"))
            if a is not None and b is not None and a.id in runs and b.id in runs:
                ta, tb = runs[a.id]["metrics"]["terminations"], runs[b.id]["metrics"]["terminations"]
                if ta:
                    cuts[wl].append(100.0 * (1.0 - tb / ta))
    if cuts["jobs"] and cuts["tasks"]:
        parts.append(
            "Isolating run — NoDelay's termination cut against random matching, mean over seeds: "
            f"{np.mean(cuts['jobs']):.1f} % with jobs of 100–300 tasks arriving together (harvest-jobs), "
            f"{np.mean(cuts['tasks']):.1f} % with independent tasks on the same pool and load (harvest-tasks)."
        )
    half = {p: sc.get((p, "load-0.3", 0)) for p in ("capsched", "slacksched-nodelay")}
    if all(x is not None and x.id in runs for x in half.values()):
        t = {p: runs[x.id]["metrics"]["terminations"] for p, x in half.items()}
        parts.append(
            f"At load 0.3 (seed 0): CapacityScheduler {t['capsched']:,} terminations, NoDelay "
            f"{t['slacksched-nodelay']:,}."
        )
    if "capsched" in m and len(m) > 1:
        parts.append(
            "Evidence (seed 0): "
            + "; ".join(
                f"{names[p]} {x['terminations']:,} terminations, wasted {x['wasted_fraction']:.4f}, "
                f"idle {x['idle_fraction']:.3f} of the core-seconds"
                for p, x in m.items()
            )
            + "."
        )
    return " ".join(parts)


def _explain_target(pr: Profile, runs: Runs) -> str:
    sc = ra_scenarios(pr)
    parts = []
    for wl in ("seed001-uniform", "seed001-uniform-literal"):
        if (wl, "ff", 8, 0) not in sc:
            continue
        vals = []
        for p in ("ff", "target-asap", "packed-target-asap"):
            m = runs[sc[(wl, p, 8, 0)].id]["metrics"]
            vals.append(f"{p} goodput_partial {m['goodput_partial']:.4f}, {m['terminations']:,} terminations")
        parts.append(f"{wl} (M_ra = 8, seed 0): " + "; ".join(vals))
    return "Evidence — " + " | ".join(parts) + "." if parts else ""


GENERIC_DEFAULT = "pareto-1.5-300"


def _generic_cut(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    """Termination cut of IAS vs FF on the generic instance; default α = 1.5, xm = 5 min, A = 0.6."""
    sc = generic_scenarios(pr)
    wls = sorted({k[0] for k in sc}, key=lambda w: (w != GENERIC_DEFAULT, w))
    res: dict[str, list[float]] = {}
    for wl in wls:
        for key in ("ias", "ias-a0.1", "ias-a0.9", "ias-no-h1"):
            name = "default" if (wl, key) == (GENERIC_DEFAULT, "ias") else f"{wl}:{key}"
            res.setdefault(name, [])
    res = {"default": res.pop("default"), **res}
    for r in _seeds(pr):
        for wl in wls:
            ff = _m(runs, sc[(wl, "ff", r)], "terminations")
            for key in ("ias", "ias-a0.1", "ias-a0.9", "ias-no-h1"):
                name = "default" if (wl, key) == (GENERIC_DEFAULT, "ias") else f"{wl}:{key}"
                res[name].append(_cut(ff, _m(runs, sc[(wl, key, r)], "terminations")))
    return res


def _explain_generic(pr: Profile, runs: Runs) -> str:
    sc = generic_scenarios(pr)
    f, i = sc[(GENERIC_DEFAULT, "ff", 0)], sc[(GENERIC_DEFAULT, "ias", 0)]
    w = _workload(runs, f)
    ff, ias = _by_class(_per_job(runs, f), w), _by_class(_per_job(runs, i), w)
    mf, mi = runs[f.id]["metrics"], runs[i.id]["metrics"]
    return (
        f"Evidence ({GENERIC_DEFAULT}, seed 0; durations {' / '.join(n for _, n in _CLASSES)}): terminations "
        f"FF {_fmt_classes(ff, 'terms')}, IAS {_fmt_classes(ias, 'terms')}; jobs {_fmt_classes(ff, 'jobs')}; "
        f"idle fraction FF {mf['idle_fraction']:.3f}, IAS {mi['idle_fraction']:.3f}."
    )


def _table_6_2() -> list[Headline]:
    printed = {
        "1.1": 96.42,
        "1.2": 93.52,
        "1.3": 88.82,
        "1.4": 82.94,
        "1.5": 74.93,
        "1.6": 59.09,
        "1.7": 41.15,
        "1.8": 8.03,
    }
    return [
        Headline(
            f"thesis-6.2-ias-cut-zipf-{s}",
            "000 thesis",
            "§6.3 Table 6.2",
            v,
            f"IAS (A = 60 %) reduces terminations over FF by {v} % on Zipf-{s}",
            "%",
            _factor2(v),
            "repro-thesis-ch6",
            _ias_cut(f"zipf-{s}"),
            _explain_ias_cut(f"zipf-{s}"),
        )
        for s, v in printed.items()
    ]


def _seed004_energy(pr: Profile, runs: Runs) -> dict[str, list[float]]:
    """Seed 004 §9.2: CBS's energy-cost reduction against the baseline, read from the ``harmony`` study's
    cached runs (studies/harmony.py; one run per scheme, so no interval)."""
    from studies.harmony import energy_reduction_readings

    try:
        return energy_reduction_readings()
    except LookupError as e:
        raise MissingRuns(str(e)) from None


HEADLINES: list[Headline] = [
    Headline(
        "thesis-4.1-goodput-loss-azure-8h",
        "000 thesis",
        "§4.1 Fig. 4.1a",
        24.0,
        "As the change frequency increases to 8 changes/hour, the Azure workload experiences a goodput "
        "loss of 24 %",
        "%",
        _factor2(24.0),
        "repro-thesis-ch4",
        _loss("azure"),
        _explain_loss("azure"),
    ),
    Headline(
        "thesis-4.1-goodput-loss-borg-8h",
        "000 thesis",
        "§4.1 Fig. 4.1b",
        19.0,
        "… and the Borg workload experiences a goodput loss of 19 %",
        "%",
        _factor2(19.0),
        "repro-thesis-ch4",
        _loss("borg2011-native"),
        _explain_loss("borg2011-native"),
    ),
    Headline(
        "thesis-4.1-terminations-vs-intervals-r",
        "000 thesis",
        "§4.1 Figs. 4.3–4.4",
        1.0,
        "the number of job terminations is proportional to the number of intervals … in both workloads",
        "Pearson r",
        (0.8, 1.0),
        "repro-thesis-ch4",
        _r_terms_intervals,
    ),
    Headline(
        "thesis-2.1.2-dynamic-range-caiso",
        "000 thesis",
        "§2.1.2 Fig. 2.2b",
        69.4,
        "a dynamic range of … 69.4 % in CAISO",
        "% of machines",
        (69.4 * 0.75, 69.4 * 1.25),
        None,
        _dynamic_range("CAISO"),
    ),
    Headline(
        "thesis-2.1.2-dynamic-range-ercot",
        "000 thesis",
        "§2.1.2 Fig. 2.2b",
        54.5,
        "a dynamic range of … 54.5 % in ERCOT",
        "% of machines",
        (54.5 * 0.75, 54.5 * 1.25),
        None,
        _dynamic_range("ERCOT"),
    ),
    Headline(
        "thesis-2.1.2-dynamic-range-miso",
        "000 thesis",
        "§2.1.2 Fig. 2.2b",
        39.3,
        "a dynamic range of 39.3 % in MISO",
        "% of machines",
        (39.3 * 0.75, 39.3 * 1.25),
        None,
        _dynamic_range("MISO"),
    ),
    *_table_6_2(),
    Headline(
        "thesis-6.2-ias-goodput-zipf-1.5",
        "000 thesis",
        "§6.3 Table 6.2",
        2.02,
        "Gain in goodput over FF: 2.02 % (Zipf-1.5)",
        "pp",
        (0.02, 4.02),
        "repro-thesis-ch6",
        _ias_goodput("zipf-1.5"),
        _explain_ias_goodput("zipf-1.5"),
    ),
    Headline(
        "thesis-6.2-ias-cut-a0.1-zipf-1.5",
        "000 thesis",
        "§6.2 Fig. 6.3",
        98.0,
        "The number of terminations can be further reduced by up to 98 % under lower aggressiveness",
        "%",
        _factor2(98.0),
        "repro-thesis-ch6",
        _ias_cut("zipf-1.5", "ias-a0.1"),
    ),
    Headline(
        "thesis-6.3-ias-cut-azure",
        "000 thesis",
        "§6.3 Table 6.2",
        92.04,
        "In the Azure workload, we can achieve 92 % lower terminations",
        "%",
        _factor2(92.04),
        "repro-thesis-ch6",
        _ias_cut("azure"),
        _explain_ias_cut("azure"),
    ),
    Headline(
        "thesis-6.3-ias-goodput-azure",
        "000 thesis",
        "§6.3 Table 6.2",
        -0.05,
        "while maintaining similar goodput to FF (−0.05 %)",
        "pp",
        (-2.05, 1.95),
        "repro-thesis-ch6",
        _ias_goodput("azure"),
        _explain_ias_goodput("azure"),
    ),
    Headline(
        "thesis-4.1-zipf-table",
        "000 thesis",
        "§4.3.1 Table 4.1",
        100.0,
        "Statistics of job duration in the synthetic workloads (mean, P50, P90, P95 per skew)",
        "% of cells within 25 %",
        (100.0, 100.0),
        None,
        _zipf_table,
        _explain_zipf_table,
    ),
    Headline(
        "seed001-targetasap-goodput-gain",
        "001 risk-aware",
        "§6 (Figs. 1–4), §7",
        10.0,
        "TargetASAP … better than FirstFitAware … in all cases … up to 10 % increase in goodput",
        "%",
        (0.0, 10.0),
        "repro-riskaware",
        _target_gain("target-asap"),
        _explain_target,
    ),
    Headline(
        "seed001-packed-goodput-gain",
        "001 risk-aware",
        "§6 (Figs. 1–4), §7",
        10.0,
        "PackedTargetASAP (slightly better) … up to 10 % increase in goodput",
        "%",
        (0.0, 10.0),
        "repro-riskaware",
        _target_gain("packed-target-asap"),
        _explain_target,
    ),
    Headline(
        "seed002-slacksched-mean-jct-reduction",
        "002 SlackSched",
        "§4.2 Fig. 10",
        26.0,
        "SlackSched reduces mean JCT by 25–27 % (mean reduction in JCT 20–27 %)",
        "%",
        (20.0, 27.0),
        "repro-slacksched",
        _slack("mean"),
        _explain_slack,
    ),
    Headline(
        "seed002-slacksched-p90-jct-reduction",
        "002 SlackSched",
        "§4.2 Fig. 10",
        44.0,
        "… and p90 JCT by 20–44 %",
        "%",
        (20.0, 44.0),
        "repro-slacksched",
        _slack("p90"),
        _explain_slack,
    ),
    Headline(
        "seed003-lww-vs-random-goodput",
        "003 variable capacity",
        "§5.3 Fig. 11",
        44.0,
        "LWW … an average of 44 % improvement over Random [HPC]. For Azure … with smaller benefits",
        "%",
        (0.0, 44.0),
        "repro-zhang-chien",
        _lww_vs_random,
    ),
    Headline(
        "seed003-range-0.6-goodput-decline",
        "003 variable capacity",
        "§5.2 Fig. 8",
        35.0,
        "with the largest range, 0.6: [0.4, 1.0], the goodput has declined by 25–45 %",
        "%",
        (25.0, 45.0),
        "repro-zhang-chien",
        _range_decline,
    ),
]

HEADLINES.append(
    Headline(
        "issue10-generic-ias-cut",
        "000 thesis",
        "§6.2 (issue #10's generic heavy-tailed instance)",
        32.0,
        "IAS consistently outperforms the baseline in reducing job terminations, regardless of the "
        "scheduler's aggressiveness (32 % fewer at A = 90 %, up to 98 % at low A)",
        "%",
        (0.01, 100.0),
        "repro-generic",
        _generic_cut,
        _explain_generic,
    )
)

HEADLINES.append(
    Headline(
        "seed004-cbs-energy-reduction",
        "004 Harmony",
        "§9.2 Fig. 29",
        28.0,
        "CBS incurs the lowest energy costs, corresponding to a 28 percent reduction in energy cost compared "
        "to the baseline algorithm",
        "% reduction",
        _factor2(28.0),
        None,
        _seed004_energy,
    )
)

COLUMNS = (
    "headline_id",
    "reading",
    "seed_doc",
    "section",
    "anchor_value",
    "anchor_text",
    "unit",
    "varcap_mean",
    "ci_low",
    "ci_high",
    "replicates",
    "band_low",
    "band_high",
    "within_band",
    "explanation",
    "profile",
)


def mean_ci(values: list[float]) -> tuple[float, float, float]:
    """Mean and 95 % Student-t interval (the interval is the mean itself for a single value)."""
    from scipy import stats

    x = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if x.size == 0:
        return (float("nan"),) * 3
    m = float(x.mean())
    if x.size < 2:
        return m, m, m
    half = float(stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return m, m - half, m + half


def _explain(
    h: Headline,
    stats_by: dict[str, tuple[float, float, float]],
    explanations: dict[str, str],
    pr: Profile,
    runs: Runs,
) -> str:
    """The recorded cause for ``h``, the evidence computed from the runs, and the other readings' results."""
    parts = [explanations.get(h.id, "Outside the band; no cause established yet.")]
    if h.explain is not None:
        try:
            parts.append(h.explain(pr, runs))
        except (MissingRuns, FileNotFoundError) as e:
            parts.append(f"(evidence not computed: {e})")
    others = [f"{k}: {m:.3g} [{lo:.3g}, {hi:.3g}]" for k, (m, lo, hi) in list(stats_by.items())[1:]]
    if others:
        parts.append("Other readings — " + "; ".join(others) + ".")
    return " ".join(p for p in parts if p)


def reproduction_rows(
    pr: Profile, runs: Runs, explanations: dict[str, str] | None = None, strict: bool = False
) -> pl.DataFrame:
    """One row per headline and reading (see :data:`COLUMNS`). A headline whose scenarios have not all run
    gets one row with no value and ``not run: …`` as explanation (``strict``: raise :class:`MissingRuns`)."""
    explanations = explanations or EXPLANATIONS
    rows = []
    for h in HEADLINES:
        try:
            readings = h.compute(pr, runs)
            missing = ""
        except MissingRuns as e:
            if strict:
                raise
            readings, missing = {"default": []}, f"not run: {e}"
        stats_by = {k: mean_ci(v) for k, v in readings.items()}
        for i, (reading, (m, lo, hi)) in enumerate(stats_by.items()):
            inside = bool(h.band[0] <= m <= h.band[1]) if np.isfinite(m) else False
            note = missing or (_explain(h, stats_by, explanations, pr, runs) if not inside and i == 0 else "")
            rows.append(
                {
                    "headline_id": h.id if i == 0 else f"{h.id}@{reading}",
                    "reading": reading,
                    "seed_doc": h.seed_doc,
                    "section": h.section,
                    "anchor_value": h.anchor_value,
                    "anchor_text": h.anchor_text,
                    "unit": h.unit,
                    "varcap_mean": m,
                    "ci_low": lo,
                    "ci_high": hi,
                    "replicates": len(readings[reading]),
                    "band_low": h.band[0],
                    "band_high": h.band[1],
                    "within_band": inside,
                    "explanation": note,
                    "profile": pr.name,
                }
            )
    # a headline with no value (not run) stores NULL, not NaN: NaN would read as a number in SQL
    stats = ("varcap_mean", "ci_low", "ci_high")
    return (
        pl.DataFrame(rows, infer_schema_length=None)
        .select(COLUMNS)
        .with_columns(pl.col(c).cast(pl.Float64).fill_nan(None) for c in stats)
    )


#: Explanations of rows outside their band: each names the cause and the run that isolates it (filled
#: in from the investigation runs; see the README's reproduction section).
EXPLANATIONS: dict[str, str] = {}
_CUT_TREND = (
    "Direction reproduced, the trend across skews is not: varcap's cut does not fall as the workload gets "
    "lighter-tailed, where the thesis' falls to 8 % at Zipf-1.8. Most of FF's terminations hit jobs longer "
    "than 30 h, which FF restarts from scratch after every kill (thesis §3.2: re-queued at the back) and "
    "which die again at a later drop; IAS's H1 runs every big job on the always-on machines, where nothing "
    "is killed, and H2 removes every termination of jobs up to one period, leaving only the 1–5 h jobs "
    "that H4 admits (evidence below). A falling cut needs FF terminations dominated by jobs IAS cannot "
    "protect; the thesis breaks down only IAS's terminations by duration (Fig. 6.7), not FF's, so the "
    "difference cannot be traced further from its text."
)
EXPLANATIONS.update({f"thesis-6.2-ias-cut-zipf-1.{k}": _CUT_TREND for k in range(1, 9)})
EXPLANATIONS["thesis-6.2-ias-goodput-zipf-1.5"] = (
    "H1 is the cause, and the reading without it isolates it: the same IAS as H2 + H4 on every machine "
    "(no-h1) gains goodput over FF, inside the band. With H1, the big jobs (duration × cores ≥ the "
    "workload's P90, Algorithm 1's longJobThresh, which the text does not fix otherwise) may run only on "
    "the always-on machines, which cannot hold them in steady state, so they queue while the variable "
    "machines idle (evidence below)."
)
EXPLANATIONS["thesis-6.3-ias-goodput-azure"] = (
    "Same mechanism as on Zipf-1.5: H1 queues the big jobs for the always-on machines while variable "
    "machines idle (evidence below). Unlike Zipf-1.5, dropping H1 does not recover the goodput here (no-h1 "
    "reading: fewer terminations and fewer never-started jobs than FF, yet far less completed work); why "
    "was not isolated in this session. The stand-in matters: the embedded Azure sample averages 7.4 h per job "
    "against the thesis' 60.12 h (Table 6.2) and its platform is sized to the 80 % load (244 machines), "
    "so the thesis' −0.05 % cannot be separated from the workload with the embedded data."
)
EXPLANATIONS["thesis-4.1-goodput-loss-borg-8h"] = (
    "Direction reproduced (variable capacity loses goodput against the fixed platform, most at 8 changes/h; "
    "below 4 changes/h the loss is flat within the seeds' spread), magnitude about a third. "
    "The stand-in is the cause we can name: the embedded Borg 2011 sample's jobs are much shorter than the "
    "thesis' Borg 2019 sample (§2.2: mean 1.66 h, median 6 min, P95 4 h), so a kill wastes less work "
    "(evidence below). The thesis' own data are not embedded (data/samples/README.md), so no run isolates "
    "the workload effect further."
)
_SLACK = (
    "Not reproduced: waiting SlackSched is slower than the CapacityScheduler's random matching, NoDelay about "
    "as fast. There is room to gain: the Oracle (never killed, it reads the future capacity) cuts mean JCT by "
    "about 43 % (readings), so kills are costly in this setup. What fails is the choice of node, and the "
    "isolating run below names the cause: our workload reading. Each job submits its 100–300 tasks at once "
    "(our assumption; seed 002 gives no arrival pattern or load), and such a burst fills every node that has "
    "room, stable or not, so ranking the nodes by eq. 1 changes which task lands where but not how full the "
    "unstable nodes get; a full node loses its newest task at any shrink. With independent tasks (seed 002 "
    "§2.2's runtimes) on the same pool at the same load, NoDelay cuts terminations against random matching "
    "as the paper's ranking should; with the bursts it does not, at load 0.6 or 0.3 (evidence below). "
    "Waiting SlackSched avoids about a third of the kills but its waits cost more than the kills they avoid "
    "(a job ends with its last task). The HVM pool is a stand-in (harvest_trace; Azure's HVM traces are not "
    "public), but the same pool gives the ranking its effect once arrivals are not bursts."
)
EXPLANATIONS["seed002-slacksched-mean-jct-reduction"] = _SLACK
EXPLANATIONS["seed002-slacksched-p90-jct-reduction"] = _SLACK
EXPLANATIONS["seed001-packed-goodput-gain"] = (
    "Direction depends on the load, cause not isolated. On the default workload (26 machines' worth of "
    "work, about the mean capacity of 24 ± 8 machines) PackedTargetASAP terminates fewer jobs than "
    "TargetASAP but completes less work than FirstFitAware; on the literal T_avg reading (3.5 × the work, "
    "an overloaded platform) it gains over FirstFitAware like TargetASAP (readings). Seed 001 describes the "
    "packs in one paragraph (§4.5: the target rounded to a multiple of 5, a pack's machines filled one "
    "after the other using D⁺); varcap's reading of that fill order is the first suspect, and no run in "
    "this study isolates it."
)
EXPLANATIONS["thesis-4.1-zipf-table"] = (
    "One cell of 32. The workloads are min(k × 5 min, 720 h) with k ~ Zipf(skew) (sim.workloads), which "
    "matches the other 31 printed cells within 25 %; at skew 1.1 its median is 47.5 h where Table 4.1 "
    "prints 30.75 h. The unit and the cap are the thesis' and the skew is the table's, so no parameter is "
    "left to choose: the printed P50 and the stated distribution disagree."
)
EXPLANATIONS["seed004-cbs-energy-reduction"] = (
    "With the assumed SPECpower figures (sim/harmony/machines.py) the heterogeneity-oblivious baseline already "
    "turns on the most efficient type (R515) first, so the LP has little type choice to win, while Harmony "
    "provisions conservatively (Theorem 1 containers, ω = 1.2, one container per waiting task) and CBS keeps "
    "tasks waiting for containers while capacity idles, so it runs more machines and power cycles. The "
    "harmony study's ω = 0.6 runs isolate it: without over-provisioning the LP's machines cost less than the "
    "baseline's (README, Harmony)."
)


# ------------------------------------------------------------------------------------------------ running
def profile_scenarios(pr: Profile) -> list[Scenario]:
    """Every scenario of the profile's studies, once, most expensive first (long tails and big platforms
    first, so a process pool stays busy to the end)."""
    seen: dict[str, Scenario] = {}
    for build in STUDY_BUILDERS.values():
        for s in build(pr).values():
            seen.setdefault(s.id, s)

    def cost(s: Scenario) -> float:
        heavy = {
            "zipf-1.8": 8,
            "zipf-1.7": 4,
            "zipf-1.6": 2,
            "harvest-jobs": 6,
            "seed001-uniform": 5,
            "seed001-uniform-literal": 5,
        }
        return -(heavy.get(s.workload, 1) * (s.machines or 250) * s.horizon_days)

    return sorted(seen.values(), key=cost)


def _run_one(params: dict[str, Any]) -> tuple[str, float, bool]:
    from studies import sweep

    row = sweep.run_scenario(Scenario.from_params(params))
    return row["scenario_id"], float(row["wall_s"]), bool(row["cache_hit"])


def run_profile(pr: Profile, workers: int = 2, progress: bool = True) -> dict[str, float]:
    """Run every scenario of ``pr`` that has no valid cached result, ``workers`` processes at a time, with a
    progress bar; returns wall seconds per simulated scenario id. Scenarios read the exported sweep
    inputs (``out_sim_inputs``) only."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from tqdm import tqdm

    from studies import sweep

    scs = profile_scenarios(pr)
    todo = [s for s in scs if not sweep.is_cached(s)]
    walls: dict[str, float] = {}
    with tqdm(
        total=len(scs),
        initial=len(scs) - len(todo),
        desc=f"reproduce ({pr.name})",
        unit="scenario",
        disable=not progress,
    ) as bar:
        if workers <= 1:
            for s in todo:
                i, w, _ = _run_one(s.params())
                walls[i] = w
                bar.update(1)
        else:
            # spawn, not fork: the caller may hold threads (Dagster, rich) whose locks a fork would copy
            with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as ex:
                futs = [ex.submit(_run_one, s.params()) for s in todo]
                for f in as_completed(futs):
                    i, w, _ = f.result()
                    walls[i] = w
                    bar.update(1)
    return walls


def load_profile_runs(pr: Profile) -> Runs:
    """The valid cached ``run.json`` rows (current code and input versions) of the profile's scenarios."""
    from studies import sweep

    out: Runs = {}
    for s in profile_scenarios(pr):
        row = sweep.cached_result(s)
        if row is not None:
            out[s.id] = row
    return out


def markdown(df: pl.DataFrame) -> str:
    """``out_reproduction`` rows as a Markdown table (default readings; other readings in the text)."""
    lines = ["| headline | paper | varcap mean [95 % CI] | band | in band |", "|---|---|---|---|---|"]
    for r in df.filter(~pl.col("headline_id").str.contains("@")).iter_rows(named=True):
        val = (
            "not run"
            if r["varcap_mean"] is None or not np.isfinite(r["varcap_mean"])
            else (f"{r['varcap_mean']:.3g} [{r['ci_low']:.3g}, {r['ci_high']:.3g}]")
        )
        lines.append(
            f"| `{r['headline_id']}` ({r['section']}) | {r['anchor_value']:g} {r['unit']} | {val} | "
            f"[{r['band_low']:.3g}, {r['band_high']:.3g}] | {'yes' if r['within_band'] else '**no**'} |"
        )
    return "\n".join(lines)


STUDIES.update(studies())
