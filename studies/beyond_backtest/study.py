"""The beyond_backtest chapter's study: the deployed carbon-aware rules (CATS, the carbon-aware SDK, Compute
Gardener; :mod:`sim.backtest`) backtested on SGIP's issued forecasts of both regions, once per profile:

* ``quick`` — the embedded sample (2021-06 … 2021-08, both regions);
* ``full`` — the whole period the pinned wheel holds (2019-05 … 2021-08; ``raw_sgip_moer`` in remote mode or
  ``varcap backtest --wheel``).

Per region it runs the default job mix (:func:`sim.backtest.default_jobs`, seed 0; every job's deadline
``submit + PLATFORM_SLACK × duration`` at both levels) at two levels: the
signal level (no capacity limits: every rule × forecast source, marginal and — where Electricity Maps'
CAISO year covers the period — average accounting) and a finite platform (each rule's policy twin in the
capacity-constrained simulator, :func:`sim.backtest.platform_backtest`, on ``PLATFORM_MACHINES`` machines,
slack ``PLATFORM_SLACK``), and the issued forecast's error by horizon. Every number a table holds is
computed here; the chapter only draws them.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import polars as pl

from sim import backtest as bt

PROFILES = {"quick": ("2021-06", "2021-08"), "full": bt.WHEEL_MONTHS}
#: the finite platform: 4 one-core machines for the default mix (one job per 30 min, 70 min mean):
#: about 58 % busy, so holding jobs to their cleanest start makes them queue
PLATFORM_MACHINES = 4
#: the platform runs' deadline: submit + slack × duration
PLATFORM_SLACK = 3.0
SEED = 0


def signal_level(sig: bt.IssuedSignal, jobs: pl.DataFrame) -> pl.DataFrame:
    """Every rule × forecast source at the signal level (:func:`sim.backtest.run_table`), with the average
    accounting where the embedded Electricity Maps CAISO years cover the signal."""
    from sim import paths

    years = sorted({f.rsplit("_", 1)[-1][:4] for f in sig.files})
    average = bt.emaps_average(
        sig, [paths.samples_dir() / "electricitymaps" / f"US-CAL-CISO_{y}_hourly.parquet" for y in years]
    )
    return bt.run_table(sig, jobs, bt.POLICIES, "all", average=average).with_columns(
        pl.lit("signal").alias("level"), pl.lit(None, pl.Int64).alias("machines")
    )


def platform_level(
    sig: bt.IssuedSignal, jobs: pl.DataFrame, machines: int = PLATFORM_MACHINES
) -> pl.DataFrame:
    """Every rule's policy twin × forecast source on ``machines`` machines, per month of arrival and
    ``all``: carbon saved against run-now (First-Fit on arrival) on the same platform, the oracle twin's
    saving, ``oracle_share``, killed work's carbon, deadline misses, mean delay, CPU s (marginal
    accounting: the platform runs are costed with SGIP's MOER over each attempt)."""
    month = (
        pl.from_epoch(pl.col("submit_s").cast(pl.Int64) + int(sig.t0), time_unit="s")
        .dt.strftime("%Y-%m")
        .alias("month")
    )
    j = jobs.select("job_id", "submit_s", "duration_s", pl.lit(1.0).alias("cores"))
    runs: dict[tuple[str, str], tuple[pl.DataFrame, float]] = {}
    for pol in bt.POLICIES:
        for src in bt.forecast_sources(pol):
            t0 = time.process_time()
            r = bt.platform_backtest(sig, j, pol, machines, "issued" if src == "-" else src, PLATFORM_SLACK)
            runs[(pol, src)] = (r.with_columns(month), time.process_time() - t0)

    def agg(df: pl.DataFrame) -> pl.DataFrame:
        parts = [df.group_by("month"), df.with_columns(pl.lit("all").alias("month")).group_by("month")]
        return pl.concat(
            [
                p.agg(
                    pl.len().alias("jobs"),
                    (pl.col("gco2_marginal").sum() / 1000).alias("kg_marginal"),
                    (pl.col("wasted_gco2_marginal").sum() / 1000).alias("wasted_kg_marginal"),
                    pl.col("deadline_miss").sum().alias("deadline_misses"),
                    pl.col("delay_s").mean().alias("mean_delay_s"),
                )
                for p in parts
            ]
        )

    base = agg(runs[("run-now", "-")][0]).select("month", pl.col("kg_marginal").alias("kg_marginal_run_now"))
    best = agg(runs[("oracle", "-")][0]).select("month", pl.col("kg_marginal").alias("kg_marginal_oracle"))
    out = []
    for (pol, src), (r, cpu) in runs.items():
        s = agg(r).join(base, on="month").join(best, on="month")
        out.append(
            s.with_columns(
                (100 * (1 - pl.col("kg_marginal") / pl.col("kg_marginal_run_now"))).alias(
                    "saved_pct_marginal"
                ),
                (100 * (1 - pl.col("kg_marginal_oracle") / pl.col("kg_marginal_run_now"))).alias(
                    "oracle_saved_pct_marginal"
                ),
                pl.lit(pol).alias("policy"),
                pl.lit(src).alias("forecast"),
                pl.lit(sig.name).alias("signal"),
                pl.lit(round(cpu, 3)).alias("cpu_s"),
                pl.lit("platform").alias("level"),
                pl.lit(machines, pl.Int64).alias("machines"),
                pl.lit("marginal").alias("optimises"),
            ).with_columns(
                pl.when(pl.col("oracle_saved_pct_marginal") > 0)
                .then(pl.col("saved_pct_marginal") / pl.col("oracle_saved_pct_marginal"))
                .otherwise(None)
                .alias("oracle_share_marginal")
            )
        )
    return pl.concat(out).sort("policy", "forecast", "month")


def forecast_errors(sig: bt.IssuedSignal) -> pl.DataFrame:
    """The issued forecast's error by horizon against the realized signal: ``horizon_min``, mean absolute
    error (g/kWh), MAPE (%, over realized values > 0), mean error (bias) and the number of pairs."""
    rows = []
    for k in range(bt.HORIZON_STEPS):
        f = sig.forecast[: sig.steps - k - 1, k]
        a = sig.moer[k + 1 :]
        e = f - a
        pos = a > 0
        rows.append(
            (
                sig.name,
                (k + 1) * bt.STEP_S / 60.0,
                float(np.abs(e).mean()),
                float(100 * np.abs(e[pos] / a[pos]).mean()),
                float(e.mean()),
                int(e.size),
            )
        )
    return pl.DataFrame(
        rows, schema=["signal", "horizon_min", "mae_g", "mape_pct", "bias_g", "n"], orient="row"
    )


def run_profile(
    profile: str, files: Callable | None = None, months: tuple[str, str] | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(results, forecast errors) of ``profile`` (:data:`PROFILES`) for both regions, each row tagged with
    ``profile``. ``files``: where the monthly files come from (default :func:`sim.backtest.default_files`).
    ``months`` (first, last) narrows the period (tests). ValueError for an unknown profile, or naming the
    months held when the files lack the period (the full profile needs the wheel)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; profiles: {', '.join(PROFILES)}")
    res, errs = [], []
    for name in bt.SIGNALS:
        first, last = months or PROFILES[profile]
        sig = bt.read_signal(name, bt.month_range(first, last), files or bt.default_files())
        # one deadline at both levels: submit + PLATFORM_SLACK × duration (the simulator's twins take a factor)
        jobs = bt.default_jobs(sig, SEED).with_columns(
            ((PLATFORM_SLACK - 1.0) * pl.col("duration_s")).alias("slack_s")
        )
        sl = signal_level(sig, jobs)
        pf = platform_level(sig, jobs)
        res.append(pl.concat([sl, pf], how="diagonal_relaxed"))
        errs.append(forecast_errors(sig))
    cols = [
        "profile", "signal", "level", "machines", "policy", "forecast", "month", "jobs", "optimises",
        "saved_pct_marginal", "oracle_saved_pct_marginal", "oracle_share_marginal",
        "saved_pct_average", "oracle_saved_pct_average", "oracle_share_average",
        "wasted_kg_marginal", "deadline_misses", "mean_delay_s", "cpu_s",
    ]  # fmt: skip
    table = pl.concat(res, how="diagonal_relaxed").with_columns(pl.lit(profile).alias("profile"))
    table = table.with_columns(pl.lit(None, pl.Float64).alias(c) for c in cols if c not in table.columns)
    return table.select(cols), pl.concat(errs).with_columns(pl.lit(profile).alias("profile"))
