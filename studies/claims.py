"""What every paper's claims are built from: reproduction profiles, the :class:`Headline` record, the
acceptance-band rules, and helpers that read metrics and per-job tables out of cached runs.

The paper packages (:mod:`studies.thesis`, :mod:`studies.riskaware`, :mod:`studies.slacksched`,
:mod:`studies.zhang_chien`, :mod:`studies.harmony`) import this module; :mod:`studies.reproduction` puts
their headlines into one table. No paper's claim is written here.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import polars as pl

from studies.scenarios import Scenario

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
    # ias-robustness: Pareto α, offered loads (of the mean capacity), platform and horizon
    rob_alphas: tuple[float, ...] = (1.1, 1.5, 2.0, 2.5)
    rob_loads: tuple[float, ...] = (0.5, 0.7, 0.9)
    rob_machines: int = 40
    rob_days: float = 14.0
    #: ch. 6 workloads that also run Algorithm 5 as printed (``ias-literal``); None = every workload. At full
    #: size that reading refuses the safe placements and keeps a long queue (Zipf-1.8, 1000 machines: over
    #: 8 CPU min a run against 41–270 s for the default), so both profiles run it where §6.3 prints IAS's
    #: goodput (Zipf-1.5, Azure); the quick profile, a smoke test, ran it on every workload until 2026-12-02
    ch6_literal_workloads: tuple[str, ...] | None = None
    #: generalization rows (:mod:`studies.generalization_claims`): instances drawn from one master seed,
    #: how many, and their horizon (days)
    gen_master_seed: int = 0
    gen_instances: int = 24
    gen_days: float = 7.0
    #: Algorithm 3's thresholds swept in paper 002's study (``slacksched-heartbeat``, beside its default 0.7);
    #: None = :data:`studies.slacksched.scenarios.HB_THRESHOLDS`. A reading, not a headline: the quick
    #: profile (a smoke test) leaves the sweep to the full profile
    ss_hb_thresholds: tuple[float, ...] | None = None
    #: paper 002's other readings (the former HVM stand-in ``former-trace``, Algorithm 3's ``scope-queue`` and
    #: :data:`studies.slacksched.scenarios.HB_READINGS`, the 100–300-task ``burst`` jobs and independent
    #: ``tasks``): False leaves them to the full profile, the quick profile's SlackSched study then runs
    #: each policy's default only
    ss_readings: bool = True


#: where §6.3 prints IAS's goodput: both profiles run Algorithm 5 as printed there
CH6_LITERAL_WORKLOADS = ("zipf-1.5", "azure")

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
    ch6_literal_workloads=CH6_LITERAL_WORKLOADS,
)
# quick keeps the Zipf warm-up as long as the longest job (720 h): without it the window is not in steady
# state and FF never leaves the always-on machines (measured: 0 terminations at 7 + 7 days)
QUICK = Profile(
    "quick",
    3,
    (0.25, 1.0, 8.0),
    (0.45, 0.6),
    3.0,
    100,
    7.0,
    30.0,
    250,
    7.0,
    2.0,
    7.0,
    2.0,
    (8,),
    (1.5,),
    # a smoke test of the grid: one tail of the full profile's four (the grid is a reading of the full
    # profile; at (1.5, 2.5) it was 288 of the 771 quick scenarios, 30.6 of their 169 s of simulation in a
    # clean `make run`; measured 2026-12-04)
    rob_alphas=(1.5,),
    rob_loads=(0.5, 0.9),
    rob_machines=20,
    rob_days=7.0,
    gen_instances=4,
    # a reading, and the full profile's choice: the quick profile ran it on all nine workloads (27 of its
    # 120 ch. 6 scenarios, 6.9 of their 26 s of simulation; measured 2026-12-02)
    ch6_literal_workloads=CH6_LITERAL_WORKLOADS,
    # a smoke test: waiting SlackSched's queue on the generated harvest instances at loads 0.78-0.87 grows
    # with the horizon (measured 2026-12-02: 1,541 and 448 s of `make run`'s 3,389 s of scenario time at
    # 2 days; 21 and 5 CPU s at half a day); the full profile keeps 7 days
    # (a quarter day, tried 2026-12-04, left the IAS claim no decisive instance of the four and TargetASAP's
    # one of three: the smoke test no longer faced the decisions, so half a day stays)
    gen_days=0.5,
    # the threshold sweep is a reading of the full profile: at 0.8-0.9 Algorithm 3 queues most tasks and
    # its six quick scenarios took 158 of the 456 s of `make run`'s scenario time (measured 2026-12-02)
    ss_hb_thresholds=(),
    # the other readings too: on the quick profile's 2 days they were 39 of its 54 SlackSched scenarios and
    # 73 of their 87 s of simulation (the former stand-in's heartbeat runs alone 31 s; measured 2026-12-02); a smoke
    # test needs each policy's default run only
    ss_readings=False,
)
PROFILES = {"full": FULL, "quick": QUICK}


def per_profile(
    build: Callable[[Profile], dict[tuple, Scenario]],
) -> Callable[[Profile], Mapping[tuple, Scenario]]:
    """``build`` run once per profile in a process: later calls return the same read-only mapping. For a
    study builder the claims read many times (the quick reproduction table built the ch. 6 study 173 times
    and took 21.3 CPU s, 14.9 with it built once; measured 2026-12-02); a profile is frozen, and so are the
    scenarios: no caller can change them for the next."""
    cache: dict[Profile, Mapping[tuple, Scenario]] = {}

    @functools.wraps(build)
    def once(pr: Profile) -> Mapping[tuple, Scenario]:
        if pr not in cache:
            cache[pr] = MappingProxyType(build(pr))
        return cache[pr]

    return once


def seeds(pr: Profile) -> range:
    """The replicate seeds of a profile: 0 … R−1 (workload and capacity seeds alike)."""
    return range(pr.replicates)


# --------------------------------------------------------------------------------------------- headlines
Runs = dict[str, dict[str, Any]]  # scenario id -> run.json row


@dataclass(frozen=True)
class Headline:
    """One paper claim. ``compute(profile, runs)`` returns ``{reading: [value per replicate]}`` (default
    reading first) and may raise :class:`MissingRuns`.

    ``bounds``: the possible range of one replicate's value (a cut ≤ 100 %, a Pearson r in [−1, 1]); the
    95 % interval never leaves it (:func:`studies.reproduction.mean_ci`). ``null``: where the paper claims
    an effect, the value of no effect; the row is in its band only if the interval excludes it.
    ``degenerate(profile, runs)``: one reason per run the claim counts ("" for a *decisive* run, one where
    the policy under test faced the decision the claim is about; else why not, e.g. no terminations in
    either arm). With ``per_replicate`` (the default) the runs are the replicates, in seed order, and the
    values of a degenerate replicate are left out of every reading; otherwise ``compute`` already counts
    decisive runs only (a share over cells or instances) and the reasons only count them. A dict gives
    each reading its own reasons (readings of other policies or workloads; ``"*"``: every reading not
    named; a reading it does not name counts every run). Degenerate runs
    never count toward the band; a row whose runs are all degenerate is "not tested".
    ``reading_history``: when and why the default reading changed, if it did."""

    id: str
    paper: str
    section: str
    anchor_value: float
    anchor_text: str
    unit: str
    band: tuple[float, float]
    study: str | None
    compute: Callable[[Profile, Runs], dict[str, list[float]]]
    #: evidence for a row outside its band, computed from the runs (may raise MissingRuns)
    explain: Callable[[Profile, Runs], str] | None = field(default=None)
    bounds: tuple[float, float] = (-math.inf, math.inf)
    null: float | None = None
    degenerate: Callable[[Profile, Runs], list[str] | dict[str, list[str]]] | None = None
    per_replicate: bool = True
    reading_history: str = ""
    #: computed notes shown on the row whatever its verdict (e.g. the cut per month and its drift)
    notes: Callable[[Profile, Runs], str] | None = None


#: ``reading_history`` of rows that gained null 0 after results had been seen
NULL_HISTORY = (
    "Null 0 added 2026-11-27, after results had been seen: every row whose paper claims a gain, a cut, a "
    "loss or a decline must have its 95 % interval on the claimed side of no effect; the band is unchanged."
)

#: possible ranges of a replicate's value (:attr:`Headline.bounds`)
CUT_BOUNDS = (-math.inf, 100.0)  # a percent reduction: at most 100 % (nothing left), any increase
GAIN_BOUNDS = (-100.0, math.inf)  # a percent gain of a non-negative quantity: at least −100 %
PP_BOUNDS = (-100.0, 100.0)  # a difference of two fractions, in percentage points
SHARE_BOUNDS = (0.0, 100.0)  # a percentage of a whole
R_BOUNDS = (-1.0, 1.0)  # a Pearson or Spearman correlation


class MissingRuns(LookupError):
    """Some scenarios a headline needs have no run result yet."""


def metric(runs: Runs, sc: Scenario, name: str) -> float:
    """Metric ``name`` of scenario ``sc``'s run; :class:`MissingRuns` if it has not run."""
    row = runs.get(sc.id)
    if row is None:
        raise MissingRuns(f"scenario {sc.id} ({sc.label()}) has not run")
    return float(row["metrics"][name])


def factor2(v: float) -> tuple[float, float]:
    """The band of a percent change with a magnitude: same sign, within a factor of two — of the change
    itself when it is at most 50 %, else of what remains (100 − v): a cut of 96 % leaves 4 %, and a
    factor of two on 96 % ([48, 100]) would accept a scheduler that leaves 13 times as much. The rule
    applies to whichever of the change and the remainder is the smaller (the two meet at 50 %)."""
    if v > 50.0:
        rest = 100.0 - v
        return (100.0 - 2.0 * rest, 100.0 - rest / 2.0)
    lo, hi = sorted((v / 2, v * 2))
    return (lo, min(hi, 100.0)) if v > 0 else (lo, hi)


def spearman_critical(n: int, alpha: float = 0.05) -> float:
    """The one-sided critical value of Spearman's rho for ``n`` untied points at level ``alpha``: the
    largest ``c`` with P(rho ≤ −c) ≤ ``alpha`` under no association (exact permutation distribution; n ≤ 9).
    A falling trend is distinguishable from none when rho ≤ −c."""
    import itertools

    import numpy as np

    if not 3 <= n <= 9:
        raise ValueError(f"exact Spearman critical values for 3 ≤ n ≤ 9, got {n}")
    ranks = np.arange(n, dtype=float)
    perms = np.array(list(itertools.permutations(range(n))), dtype=float)
    d2 = ((perms - ranks) ** 2).sum(axis=1)
    rho = np.sort(1.0 - 6.0 * d2 / (n * (n * n - 1)))
    # P(rho <= r) for each attained r (ascending); the smallest |r| whose tail is still <= alpha
    values, counts = np.unique(rho, return_counts=True)
    tail = np.cumsum(counts) / rho.size
    ok = values[tail <= alpha + 1e-12]
    return float(-ok.max())


def spearman(x: list[float], y: list[float]) -> float:
    """Spearman's rank correlation of ``x`` and ``y`` (average ranks for ties; nan if either is constant).
    numpy only: the Definitions import this module, and scipy.stats loads only where it is used."""
    import numpy as np

    def ranks(v: list[float]) -> np.ndarray:
        a = np.asarray(v, dtype=float)
        r = np.empty(a.size)
        r[np.argsort(a, kind="mergesort")] = np.arange(a.size, dtype=float)
        for val in np.unique(a):
            tie = a == val
            r[tie] = r[tie].mean()
        return r

    rx, ry = ranks(x), ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def no_terminations(
    pairs: Callable[[Profile], list[tuple[Scenario, Scenario]]],
) -> Callable[[Profile, Runs], list[str]]:
    """A :attr:`Headline.degenerate` check, one reason per replicate (``pairs(profile)``, one pair per
    replicate): a replicate whose two arms both ran without a single termination compares two identical
    runs."""

    def check(pr: Profile, runs: Runs) -> list[str]:
        return [
            "no terminations in either arm"
            if metric(runs, a, "terminations") == 0 and metric(runs, b, "terminations") == 0
            else ""
            for a, b in pairs(pr)
        ]

    return check


def baseline_terminates(
    baseline: Callable[[Profile], list[Scenario]], what: str
) -> Callable[[Profile, Runs], list[str]]:
    """A :attr:`Headline.degenerate` check, one reason per replicate: the baseline's run (``baseline(profile)``,
    one scenario per replicate) terminated nothing, so there was no kill for the policy under test to avoid
    (``what`` names the baseline in the reason)."""

    def check(pr: Profile, runs: Runs) -> list[str]:
        return [
            f"{what} terminates nothing: no kill to avoid" if metric(runs, b, "terminations") == 0 else ""
            for b in baseline(pr)
        ]

    return check


def either(*checks: Callable[[Profile, Runs], list[str]]) -> Callable[[Profile, Runs], list[str]]:
    """Degenerate when any of ``checks`` says so (reasons joined), per replicate."""

    def check(pr: Profile, runs: Runs) -> list[str]:
        per = [c(pr, runs) for c in checks]
        return ["; ".join(r for r in rs if r) for rs in zip(*per, strict=True)]

    return check


def within25(v: float) -> tuple[float, float]:
    """The band of a descriptive statistic: within 25 % of the printed value."""
    return (v * 0.75, v * 1.25)


def cut(a: float, b: float) -> float:
    """Percent reduction of ``b`` relative to ``a`` (100 × (a − b) / a; 0 if a = 0)."""
    return 100.0 * (a - b) / a if a else 0.0


def per_job(runs: Runs, sc: Scenario) -> pl.DataFrame:
    """The per-job table of ``sc``'s run; :class:`MissingRuns` if it has none."""
    from sim.paths import home

    row = runs.get(sc.id)
    if row is None or "jobs_path" not in row:
        raise MissingRuns(f"scenario {sc.id} ({sc.label()}) has no per-job table")
    p = row["jobs_path"]
    return pl.read_parquet(p if p.startswith("/") else home() / p)


def workload(runs: Runs, sc: Scenario) -> pl.DataFrame:
    """``job_id, duration_s, cores`` of the workload ``sc`` ran (rebuilt from the sweep inputs)."""
    from studies.scenarios import build_jobs
    from studies.sweep import inputs_dir

    machines = sc.machines or int(runs.get(sc.id, {}).get("machines", 0))
    if not machines:
        raise MissingRuns(f"scenario {sc.id} ({sc.label()}) has no platform size recorded")
    return build_jobs(sc, inputs_dir(), machines).select("job_id", "duration_s", "cores")
