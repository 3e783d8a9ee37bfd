"""What every paper's claims are built from: reproduction profiles, the :class:`Headline` record, the
acceptance-band rules, and helpers that read metrics and per-job tables out of cached runs.

The paper packages (:mod:`studies.thesis`, :mod:`studies.riskaware`, :mod:`studies.slacksched`,
:mod:`studies.zhang_chien`, :mod:`studies.harmony`) import this module; :mod:`studies.reproduction` puts
their headlines into one table. No paper's claim is written here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
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


def seeds(pr: Profile) -> range:
    """The replicate seeds of a profile: 0 … R−1 (workload and capacity seeds alike)."""
    return range(pr.replicates)


def walk(f: float, step: float, seed: int, dr: float = 0.6) -> dict[str, Any]:
    """A random-walk capacity spec (``f`` changes per hour, ``step``, dynamic range ``dr``)."""
    return {"kind": "random_walk", "changes_per_hour": f, "step": step, "dynamic_range": dr, "seed": seed}


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


def metric(runs: Runs, sc: Scenario, name: str) -> float:
    """Metric ``name`` of scenario ``sc``'s run; :class:`MissingRuns` if it has not run."""
    row = runs.get(sc.id)
    if row is None:
        raise MissingRuns(f"scenario {sc.id} ({sc.label()}) has not run")
    return float(row["metrics"][name])


def factor2(v: float) -> tuple[float, float]:
    """The band of a relative change with a magnitude: same sign, within a factor of two (capped at 100 %)."""
    lo, hi = sorted((v / 2, v * 2))
    return (lo, min(hi, 100.0)) if v > 0 else (lo, hi)


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
