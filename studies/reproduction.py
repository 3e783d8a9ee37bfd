"""Reproduction of the five papers' headline results: their headlines as one table, replicates, running a
profile.

Each headline of :data:`HEADLINES` is a claim of one of the papers, the setting it was measured in (quoted by
section in the docstrings of its paper's scenario builders), and an **acceptance band**, by one rule per
kind of claim — written down before any varcap number was looked at, except where the headline's
``reading_history`` says when and why it changed after (``varcap docs`` lists both in docs/reproduction.md):

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

Where things are: each paper is a package listed in :data:`studies.papers.PAPERS`, holding its scenario sets
(``STUDY_BUILDERS``), its headlines (``HEADLINES``: anchor, band, compute and evidence functions — the only
copy of each paper number), the causes of its rows outside their band (``EXPLANATIONS``) and what its
notebooks' charts show of the paper (``FIGURES``). :mod:`studies.claims` holds what they share (profiles,
:class:`Headline`, band rules); this module puts the papers into one table, runs profiles and loads runs.

Replicates: every scenario runs for seeds 0 … R−1 (workload and capacity seeds alike); a headline value is
computed per replicate and reported as the mean with a 95 % interval that stays inside the value's
possible range (:attr:`Headline.bounds`; :func:`mean_ci` says how, ``ci_method`` records it). Where the
paper claims an effect (:attr:`Headline.null`) a row is in band only if the interval excludes no effect;
a degenerate comparison (:attr:`Headline.degenerate`, e.g. no terminations in either arm) is flagged and
never in band; ``reading_history`` records when and why an anchor, band or default reading changed.
Every row carries the commit and time of the code that computed it (``code_commit``, ``computed_at_utc``:
:func:`studies.provenance.run_stamp`); headline ids renamed since a warehouse was written are read under
their current names by :func:`studies.provenance.current_id`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

from studies.claims import FULL, PROFILES, QUICK, Headline, MissingRuns, Profile, Runs
from studies.papers import PAPERS
from studies.scenarios import Scenario

__all__ = [
    "CHAPTER_STUDY_BUILDERS",
    "COLUMNS",
    "EXPLANATIONS",
    "FIGURES",
    "FULL",
    "HEADLINES",
    "PROFILES",
    "QUICK",
    "STUDY_BUILDERS",
    "Headline",
    "MissingRuns",
    "Profile",
    "Runs",
    "load_profile_runs",
    "markdown",
    "value_text",
    "mean_ci",
    "mean_ci_method",
    "profile_scenarios",
    "profile_studies",
    "reproduction_rows",
    "studies",
    "study_builders",
    "study_name",
]

#: The papers' profiled studies (the reproduction studies), in registry order (:data:`studies.papers.PAPERS`).
STUDY_BUILDERS: dict[str, Callable[[Profile], dict[tuple, Scenario]]] = {
    base: build for p in PAPERS if not p.beyond for base, build in p.study_builders.items()
}

#: Studies of the chapters beyond the papers (no headline reads them): like the reproduction studies, one
#: per profile (``<base>[-quick]``), materialized by ``varcap run`` (quick) and ``varcap reproduce`` (full),
#: their rows in ``out_study_results`` and their keys in ``out_study_scenarios``.
CHAPTER_STUDY_BUILDERS: dict[str, Callable[[Profile], dict[tuple, Scenario]]] = {
    base: build for p in PAPERS if p.beyond for base, build in p.study_builders.items()
}


def study_builders() -> dict[str, Callable[[Profile], dict[tuple, Scenario]]]:
    """Every profiled study: the papers' (:data:`STUDY_BUILDERS`) and the chapters' (:data:`CHAPTER_STUDY_BUILDERS`)."""
    return {**STUDY_BUILDERS, **CHAPTER_STUDY_BUILDERS}


#: Every headline in table order (the rows of ``out_reproduction`` and of ``varcap reproduce``'s table):
#: each paper's rows together, in registry order.
HEADLINES: list[Headline] = [h for p in PAPERS for h in p.headlines]

#: Explanations of rows outside their band: each names the cause and the run that isolates it (kept next
#: to its headline in the paper's package; see the README's reproduction section).
EXPLANATIONS: dict[str, str] = {k: v for p in PAPERS for k, v in p.explanations.items()}

#: Per report chapter (notebook name), the paper's numbers its charts show next to varcap's, as the
#: report asset injects them (``paper = …``): the papers' own constants, never a second copy.
FIGURES: dict[str, dict[str, Any]] = {k: v for p in PAPERS for k, v in p.figures.items()}


def study_name(base: str, pr: Profile) -> str:
    return base if pr.name == "full" else f"{base}-{pr.name}"


def studies() -> dict[str, Callable[[], list[Scenario]]]:
    """Catalogue entries (name → scenario list builder) for every reproduction study and profile."""
    out: dict[str, Callable[[], list[Scenario]]] = {}
    for pr in PROFILES.values():
        for base, build in study_builders().items():
            out[study_name(base, pr)] = lambda b=build, p=pr: list(b(p).values())
    return out


COLUMNS = (
    "headline_id",
    "reading",
    "paper",
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
    "ci_method",
    "flag",
    "reading_history",
    "n_decisive",
    "n_degenerate",
    "n_not_run",
    "verdict",
    "notes",
    "code_commit",
    "computed_at_utc",
)


def mean_ci(
    values: list[float], bounds: tuple[float, float] = (-math.inf, math.inf)
) -> tuple[float, float, float]:
    """Mean and 95 % interval of ``values`` inside ``bounds`` (see :func:`mean_ci_method`)."""
    m, lo, hi, _ = mean_ci_method(values, bounds)
    return m, lo, hi


def mean_ci_method(
    values: list[float], bounds: tuple[float, float] = (-math.inf, math.inf)
) -> tuple[float, float, float, str]:
    """Mean, 95 % interval and how it was computed, never leaving ``bounds`` (the possible range of one
    value; the mean of values in it lies in it too):

    * ``student-t``: unbounded values — the mean ± t₀.₉₇₅ · s/√n;
    * ``t on log(b − x)`` / ``t on log(x − a)`` / ``t on logit``: one or two finite bounds and every value
      strictly inside — the Student-t interval of the transformed values, transformed back (a cut ≤ 100 %
      is thus judged on what remains, 100 − cut); widened to include the mean if the back-transform left
      it outside;
    * ``bootstrap``: some value on a bound (a cut of exactly 100 %, r = 1), where the transform is
      infinite — the 2.5–97.5 percentiles of 10,000 resampled means (seed 0);
    * ``single replicate``: the mean itself."""
    from scipy import stats

    x = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if x.size == 0:
        return (float("nan"),) * 3 + ("",)
    m = float(x.mean())
    if x.size < 2:
        return m, m, m, "single replicate"
    a, b = bounds
    t = float(stats.t.ppf(0.975, x.size - 1))

    def t_interval(y: np.ndarray) -> tuple[float, float]:
        half = t * float(y.std(ddof=1)) / math.sqrt(y.size)
        return float(y.mean()) - half, float(y.mean()) + half

    if not (np.isfinite(a) or np.isfinite(b)):
        lo, hi = t_interval(x)
        return m, lo, hi, "student-t"
    if np.all(x > a) and np.all(x < b):
        if np.isfinite(a) and np.isfinite(b):
            ylo, yhi = t_interval(np.log((x - a) / (b - x)))
            lo, hi = (a + (b - a) / (1.0 + math.exp(-y)) for y in (ylo, yhi))
            method = "t on logit"
        elif np.isfinite(b):
            ylo, yhi = t_interval(np.log(b - x))
            lo, hi = b - math.exp(min(yhi, 700.0)), b - math.exp(ylo)
            method = "t on log(b − x)"
        else:
            ylo, yhi = t_interval(np.log(x - a))
            lo, hi = a + math.exp(ylo), a + math.exp(min(yhi, 700.0))
            method = "t on log(x − a)"
        return m, min(lo, m), max(hi, m), method
    rng = np.random.default_rng(0)
    means = x[rng.integers(0, x.size, size=(10_000, x.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return m, float(min(lo, m)), float(max(hi, m)), "bootstrap"


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


Decided = dict[str, tuple[int, int, str, int]]  # reading -> (decisive, degenerate, why, not run: over budget)

#: the start of a unit's reason when it has no result because it ran past the scenario budget
#: (:func:`studies.budget.not_run_reason`): neither decisive nor degenerate, counted in ``n_not_run``
NOT_RUN = "not run: "


def _summary(reasons: list[str], shares: bool) -> tuple[int, int, str, int]:
    skipped = [w for w in reasons if w.startswith(NOT_RUN)]
    bad = [w for w in reasons if w and not w.startswith(NOT_RUN)]
    counts: dict[str, int] = {}
    for w in bad:
        key = w.split(": ", 1)[1] if shares and ": " in w else w
        counts[key] = counts.get(key, 0) + 1
    why = "; ".join(f"{w} ({c})" for w, c in sorted(counts.items(), key=lambda x: -x[1])[:3])
    if skipped:
        why = "; ".join(x for x in (why, f"{len(skipped)} not run ({skipped[0][len(NOT_RUN):]}), left out") if x)
    return len(reasons) - len(bad) - len(skipped), len(bad), why, len(skipped)


def _decided(
    h: Headline, pr: Profile, runs: Runs, readings: dict[str, list[float]]
) -> tuple[dict[str, list[float]], Decided]:
    """``readings`` with the degenerate replicates' values left out (:attr:`Headline.degenerate`: one
    list of reasons for every reading, or one per reading), and per reading the numbers of decisive and
    degenerate runs with a note on the degenerate ones. A reading without reasons counts all its runs."""
    counted: Decided = {k: (len(v), 0, "", 0) for k, v in readings.items()}
    if h.degenerate is None:
        return readings, counted
    try:
        got = h.degenerate(pr, runs)
    except (MissingRuns, FileNotFoundError) as e:
        return readings, {
            **counted,
            "default": (len(readings.get("default", [])), 0, f"decisiveness not checked: {e}", 0),
        }
    if isinstance(got, dict):  # "*": every reading not named
        by = {k: got.get(k, got.get("*", [])) for k in readings if k in got or "*" in got}
    elif h.per_replicate:
        by = {k: got for k, v in readings.items() if len(v) == len(got)}
    else:  # shares over decisive units: every reading counts the same units
        by = {k: got for k in readings}
    out = dict(readings)
    for k, reasons in by.items():
        if h.per_replicate and len(readings[k]) == len(reasons):
            out[k] = [x for x, w in zip(readings[k], reasons, strict=True) if not w]
        counted[k] = _summary(reasons, not h.per_replicate)
    return out, counted


def _notes(h: Headline, pr: Profile, runs: Runs) -> str:
    if h.notes is None:
        return ""
    try:
        return h.notes(pr, runs)
    except (MissingRuns, FileNotFoundError) as e:
        return f"(notes not computed: {e})"


def _verdict(inside: bool, ran: bool, n_decisive: int, flag: str) -> str:
    if not ran:
        return "not tested" if flag.startswith("not tested") else "not run"
    if inside:
        return "in band"
    if flag.startswith("the 95 % interval") or flag.startswith("one run"):
        return "effect not shown"
    return "out of band"


def reproduction_rows(
    pr: Profile,
    runs: Runs,
    explanations: dict[str, str] | None = None,
    strict: bool = False,
    stamp: tuple[str, str] | None = None,
) -> pl.DataFrame:
    """One row per headline and reading (see :data:`COLUMNS`). A headline whose scenarios have not all run
    gets one row with no value and ``not run: …`` as explanation (``strict``: raise :class:`MissingRuns`).

    Only decisive runs count (:attr:`Headline.degenerate`): the mean, interval and band test are over
    them, ``n_decisive`` and ``n_degenerate`` count them, and a row whose runs are all degenerate is "not
    tested" (no value). Where the paper claims an effect (:attr:`Headline.null`) the interval must lie on
    the claimed side of no effect; one run has no interval, so it cannot show an effect.

    ``stamp``: ``(code_commit, computed_at_utc)`` of every row (default :func:`studies.provenance.run_stamp`)."""
    from studies.provenance import run_stamp

    explanations = explanations or EXPLANATIONS
    commit, at = stamp if stamp is not None else run_stamp()
    rows = []
    for h in HEADLINES:
        try:
            readings = h.compute(pr, runs)
            missing = ""
        except MissingRuns as e:
            if strict:
                raise
            readings, missing = {"default": []}, f"not run: {e}"
        counted: Decided = {k: (len(v), 0, "", 0) for k, v in readings.items()}
        if not missing:
            readings, counted = _decided(h, pr, runs, readings)
        with_method = {k: mean_ci_method(v, h.bounds) for k, v in readings.items()}
        stats_by = {k: (m, lo, hi) for k, (m, lo, hi, _) in with_method.items()}
        for i, (reading, (m, lo, hi)) in enumerate(stats_by.items()):
            n_dec, n_deg, why, n_skip = counted[reading]
            base_flag = ""
            if n_deg and not n_dec:
                base_flag = f"not tested: every one of the {n_deg} runs is degenerate — {why}"
            elif n_deg:
                base_flag = f"{n_deg} of {n_deg + n_dec} runs degenerate, left out — {why}"
            elif why:
                base_flag = why
            ran = bool(np.isfinite(m))
            inside = bool(h.band[0] <= m <= h.band[1]) if ran else False
            row_flag = base_flag
            n_vals = int(np.isfinite(np.asarray(readings[reading], dtype=float)).sum())
            single = with_method[reading][3] == "single replicate"
            if inside and h.null is not None:
                side = np.sign(h.anchor_value - h.null)
                if single:
                    inside = False
                    row_flag = "; ".join(
                        x
                        for x in ("one run: no interval, so the paper's effect cannot be shown", row_flag)
                        if x
                    )
                elif (side > 0 and not lo > h.null) or (side < 0 and not hi < h.null):
                    inside = False
                    row_flag = "; ".join(
                        x
                        for x in (
                            f"the 95 % interval includes no effect ({h.null:g} {h.unit}) or lies on its other "
                            "side: the paper's effect is not shown",
                            row_flag,
                        )
                        if x
                    )
            verdict = "not run" if missing else _verdict(inside, ran, n_dec, row_flag)
            if not ran and not missing and (n_deg and not n_dec):
                verdict = "not tested"
            note = missing or (
                _explain(h, stats_by, explanations, pr, runs) if not inside and i == 0 and ran else ""
            )
            rows.append(
                {
                    "headline_id": h.id if i == 0 else f"{h.id}@{reading}",
                    "reading": reading,
                    "paper": h.paper,
                    "section": h.section,
                    "anchor_value": h.anchor_value,
                    "anchor_text": h.anchor_text,
                    "unit": h.unit,
                    "varcap_mean": m,
                    "ci_low": float("nan") if single else lo,
                    "ci_high": float("nan") if single else hi,
                    "replicates": n_vals,
                    "band_low": h.band[0],
                    "band_high": h.band[1],
                    "within_band": inside,
                    "explanation": note,
                    "profile": pr.name,
                    "ci_method": with_method[reading][3],
                    "flag": row_flag,
                    "reading_history": h.reading_history if i == 0 else "",
                    "n_decisive": n_dec,
                    "n_degenerate": n_deg,
                    "n_not_run": n_skip,
                    "verdict": verdict,
                    "notes": _notes(h, pr, runs) if i == 0 and not missing else "",
                    "code_commit": commit,
                    "computed_at_utc": at,
                }
            )
    # a headline with no value (not run) stores NULL, not NaN: NaN would read as a number in SQL
    stats = ("varcap_mean", "ci_low", "ci_high")
    return (
        pl.DataFrame(rows, infer_schema_length=None)
        .select(COLUMNS)
        .with_columns(pl.col(c).cast(pl.Float64).fill_nan(None) for c in stats)
    )


# ------------------------------------------------------------------------------------------------ running
def profile_studies(pr: Profile) -> list[str]:
    """The catalogue names of the profile's studies (``repro-<paper>[-quick]``, and the chapters' studies of
    :data:`CHAPTER_STUDY_BUILDERS`): what ``varcap reproduce``
    materializes, one ``out_sim__<study>`` asset each (``pipelines.cli.sweeps.materialize_studies``)."""
    return [study_name(base, pr) for base in study_builders()]


def profile_scenarios(pr: Profile) -> list[Scenario]:
    """Every scenario of the profile's studies, once, most expensive first (long tails and big platforms
    first, so a process pool stays busy to the end: :func:`studies.sweep.expected_cost`)."""
    from studies import sweep

    seen: dict[str, Scenario] = {}
    for build in study_builders().values():
        for s in build(pr).values():
            seen.setdefault(s.id, s)
    return sorted(seen.values(), key=lambda s: -sweep.expected_cost(s))


def _run_one(params: dict[str, Any]) -> tuple[str, float, bool]:
    from studies import sweep

    row = sweep.run_scenario(Scenario.from_params(params))
    return row["scenario_id"], float(row["wall_s"]), bool(row["cache_hit"])


def load_profile_runs(pr: Profile) -> Runs:
    """The valid cached ``run.json`` rows (current code and input versions) of the profile's scenarios."""
    from studies import sweep

    out: Runs = {}
    for s in profile_scenarios(pr):
        row = sweep.cached_result(s)
        if row is not None:
            out[s.id] = row
    return out


def value_text(r: dict[str, Any]) -> str:
    """An ``out_reproduction`` row's value as printed: ``mean [lo, hi] (n = k)``, ``mean (n = 1)`` without
    an interval, "not tested" when every run is degenerate, else "not run"."""
    m = r.get("varcap_mean")
    if m is None or not np.isfinite(m):
        return "not tested" if r.get("verdict") == "not tested" else "not run"
    n = r.get("replicates")
    lo, hi = r.get("ci_low"), r.get("ci_high")
    ns = f" (n = {n})" if n is not None else ""
    one_run = n is not None and int(n) < 2  # a table written before one-run rows had no interval
    if one_run or lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
        return f"{m:.3g}{ns}"
    return f"{m:.3g} [{lo:.3g}, {hi:.3g}]{ns}"


def verdict_text(r: dict[str, Any]) -> str:
    """An ``out_reproduction`` row's verdict (rows written before the ``verdict`` column: from
    ``within_band``)."""
    v = r.get("verdict")
    if v:
        return str(v)
    return "in band" if r["within_band"] else "out of band"


def markdown(df: pl.DataFrame) -> str:
    """``out_reproduction`` rows as a Markdown table (default readings; other readings in the text)."""
    lines = ["| headline | paper | varcap mean [95 % CI] (n) | band | verdict |", "|---|---|---|---|---|"]
    for r in df.filter(~pl.col("headline_id").str.contains("@")).iter_rows(named=True):
        v = verdict_text(r)
        lines.append(
            f"| `{r['headline_id']}` ({r['section']}) | {r['anchor_value']:g} {r['unit']} | {value_text(r)} | "
            f"[{r['band_low']:.3g}, {r['band_high']:.3g}] | {v if v == 'in band' else f'**{v}**'} |"
        )
    return "\n".join(lines)
