"""Raw file -> core table normalizers (pure polars; no Dagster, no DuckDB).

Every normalizer returns ``(good, rejects)``: ``good`` has exactly the columns of its core table schema
(see :mod:`assets.schema`), ``rejects`` has ``table_name, source_file, line, reason, raw_row``. ``line``
is the 1-based line of the row in the upstream CSV (header counted), so a reject can be found in the
original file. A file that cannot be read at all, lacks required columns, or whose rows are mostly bad
raises :class:`BadFileError` naming the file; callers then keep the previous table untouched.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from assets.sources import EIA_BA_TO_GRID, EMAPS_ZONE_TO_GRID

REJECT_COLUMNS = {
    "table_name": pl.Utf8,
    "source_file": pl.Utf8,
    "line": pl.Int64,
    "reason": pl.Utf8,
    "raw_row": pl.Utf8,
}

#: Lifecycle emission factors, gCO2eq/kWh, by EIA fuel code.
#: ``ipcc_ar5``: IPCC AR5 WG3 Annex III medians as used by Electricity Maps' defaults (oil: UK POST;
#: other: Electricity Maps' "unknown"). ``dcrl``: the variant behind HewlettPackard/dc-rl's published
#: ``avg_CI`` (solar 41, other 230), kept so that series can be reproduced and checked exactly.
EMISSION_FACTORS: dict[str, dict[str, float]] = {
    "ipcc_ar5": {"WND": 11, "SUN": 45, "WAT": 24, "OIL": 650, "NG": 490, "COL": 820, "NUC": 12, "OTH": 700},
    "dcrl": {"WND": 11, "SUN": 41, "WAT": 24, "OIL": 650, "NG": 490, "COL": 820, "NUC": 12, "OTH": 230},
}
FUELS = ("WND", "SUN", "WAT", "OIL", "NG", "COL", "NUC", "OTH")


class BadFileError(ValueError):
    """A whole input file is unusable. The message names the file and why."""


@dataclass(frozen=True)
class RawFile:
    """A raw input: the readable path, the name reported in rejects and errors, and its CSV layout."""

    path: Path
    name: str
    has_header: bool = True
    columns: tuple[str, ...] | None = None

    @property
    def first_line(self) -> int:
        """Line number (1-based) of the first data row in the upstream CSV."""
        return 2 if self.has_header else 1


def read_text_table(f: RawFile) -> pl.DataFrame:
    """Read a CSV (optionally gzipped) or parquet file with every column as text, plus ``line``."""
    try:
        if f.path.suffix == ".parquet":
            df = pl.read_parquet(f.path)
            df = df.with_columns(pl.all().cast(pl.Utf8))
        else:
            source: Path | bytes = f.path
            if f.path.suffix == ".gz":
                # polars tolerates a truncated gzip stream; Python's gzip raises on it (EOFError)
                with gzip.open(f.path, "rb") as g:
                    source = g.read()
            df = pl.read_csv(
                source,
                has_header=f.has_header,
                new_columns=list(f.columns) if (f.columns and not f.has_header) else None,
                infer_schema=False,
                encoding="utf8-lossy",
                truncate_ragged_lines=False,
            )
    except Exception as e:  # polars raises several error types for unreadable input
        raise BadFileError(f"{f.name}: cannot read file ({type(e).__name__}: {e})") from e
    return df.with_row_index("line", offset=f.first_line).with_columns(pl.col("line").cast(pl.Int64))


def require_columns(df: pl.DataFrame, f: RawFile, cols: Iterable[str]) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise BadFileError(f"{f.name}: missing columns {missing}; found {df.columns[:12]}")


def _raw_row(cols: Sequence[str]) -> pl.Expr:
    return pl.concat_str([pl.col(c).fill_null("") for c in cols], separator=",")


def split_rejects(
    df: pl.DataFrame,
    f: RawFile,
    table: str,
    checks: Sequence[tuple[pl.Expr, pl.Expr | str]],
    raw_cols: Sequence[str],
    max_bad_fraction: float = 0.5,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Split ``df`` by ``checks`` (``(is_bad, reason)``, first failing reason wins).

    Raises :class:`BadFileError` if more than ``max_bad_fraction`` of a non-empty file is bad, or if
    the file has no rows.
    """
    if df.height == 0:
        raise BadFileError(f"{f.name}: no data rows")
    reason: pl.Expr = pl.lit(None, dtype=pl.Utf8)
    for is_bad, why in reversed(checks):
        why_e = pl.lit(why) if isinstance(why, str) else why
        reason = pl.when(is_bad.fill_null(True)).then(why_e).otherwise(reason)
    df = df.with_columns(_reason=reason)
    bad = df.filter(pl.col("_reason").is_not_null())
    if bad.height > max_bad_fraction * df.height:
        sample = bad.head(3).select("line", "_reason").rows()
        raise BadFileError(
            f"{f.name}: {bad.height} of {df.height} rows are malformed (e.g. line/reason {sample}); "
            "refusing the whole file"
        )
    rejects = bad.select(
        pl.lit(table).alias("table_name"),
        pl.lit(f.name).alias("source_file"),
        pl.col("line"),
        pl.col("_reason").alias("reason"),
        _raw_row(raw_cols).alias("raw_row"),
    )
    return df.filter(pl.col("_reason").is_null()).drop("_reason"), rejects


def empty_rejects() -> pl.DataFrame:
    return pl.DataFrame(schema=REJECT_COLUMNS)


def _num(col: str) -> pl.Expr:
    return pl.col(col).str.strip_chars().cast(pl.Float64, strict=False)


def _unparseable(col: str, parsed: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    return parsed.is_null(), pl.format("unparseable {}: '{}'", pl.lit(col), pl.col(col).fill_null("<empty>"))


# ------------------------------------------------------------------------------------------------ jobs
JOB_COLUMNS = [
    "workload",
    "job_id",
    "submit_s",
    "duration_s",
    "cores",
    "memory_gb",
    "memory_norm",
    "priority",
    "job_class",
    "censored",
    "left_truncated",
    "source_file",
    "line",
]


def _finish_jobs(df: pl.DataFrame) -> pl.DataFrame:
    for c, dt in [
        ("memory_gb", pl.Float64),
        ("memory_norm", pl.Float64),
        ("priority", pl.Int32),
        ("job_class", pl.Utf8),
        ("censored", pl.Boolean),
        ("left_truncated", pl.Boolean),
    ]:
        if c not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=dt).alias(c))
    df = df.with_columns(pl.col("censored").fill_null(False), pl.col("left_truncated").fill_null(False))
    return df.select(JOB_COLUMNS)


def normalize_gaia(
    f: RawFile, workload: str, retime_window_s: float | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """GAIA trace (``arrival_time`` h, ``length`` h, ``cpus``) -> jobs.

    ``retime_window_s`` linearly rescales arrivals from ``[0, max arrival]`` onto
    ``[0, retime_window_s)``, keeping their order (used for Azure-100k, whose arrivals GAIA spread over a
    year, to fit a 30-day window). Durations and cores are kept.
    """
    df = read_text_table(f)
    require_columns(df, f, ["arrival_time", "length", "cpus"])
    raw_cols = ["arrival_time", "length", "cpus"]
    df = df.with_columns(a=_num("arrival_time"), d=_num("length"), c=_num("cpus"))
    good, rej = split_rejects(
        df,
        f,
        "core_jobs",
        [
            _unparseable("arrival_time", pl.col("a")),
            _unparseable("length", pl.col("d")),
            _unparseable("cpus", pl.col("c")),
            (pl.col("a") < 0, "negative arrival_time"),
            (pl.col("d") <= 0, "non-positive length"),
            (pl.col("c") <= 0, "non-positive cpus"),
        ],
        raw_cols,
    )
    submit = pl.col("a") * 3600.0
    if retime_window_s is not None:
        span = float(good["a"].max() or 0.0) * 3600.0
        scale = (retime_window_s - 1.0) / span if span > 0 else 0.0
        submit = submit * scale
    good = good.with_columns(
        pl.lit(workload).alias("workload"),
        pl.format("{}-{}", pl.lit(workload), pl.col("line") - f.first_line).alias("job_id"),
        submit.round(0).alias("submit_s"),
        (pl.col("d") * 3600.0).round(0).clip(lower_bound=1.0).alias("duration_s"),
        pl.col("c").alias("cores"),
        pl.lit(f.name).alias("source_file"),
    )
    return _finish_jobs(good), rej


def _bucket(col: str) -> pl.Expr:
    """Azure bucket labels such as ``'2'`` or ``'>24'`` -> the numeric lower bound."""
    return pl.col(col).str.strip_chars().str.strip_chars_start(">").cast(pl.Float64, strict=False)


def normalize_azure_vmtable(
    f: RawFile, workload: str = "azure", trace_end_s: float = 2_591_400.0, window_s: float | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Azure V2 vmtable -> jobs: submit = created, duration = deleted - created.

    VMs deleted at or after ``trace_end_s`` are right-censored (still alive when the trace ended); VMs
    created at or before 0 are left-truncated. Cores and memory come from the bucket columns (``>24``
    reads as 24). ``window_s`` clips censored durations to the study window.
    """
    df = read_text_table(f)
    need = ["vm_id", "timestamp_vm_created", "timestamp_vm_deleted", "vm_virtual_core_count_bucket"]
    require_columns(df, f, need)
    raw_cols = [c for c in df.columns if c != "line"]
    df = df.with_columns(
        cr=_num("timestamp_vm_created"),
        de=_num("timestamp_vm_deleted"),
        c=_bucket("vm_virtual_core_count_bucket"),
        m=_bucket("vm_memory_gb_bucket") if "vm_memory_gb_bucket" in df.columns else pl.lit(None),
    )
    good, rej = split_rejects(
        df,
        f,
        "core_jobs",
        [
            (pl.col("vm_id").is_null(), "missing vm_id"),
            _unparseable("timestamp_vm_created", pl.col("cr")),
            _unparseable("timestamp_vm_deleted", pl.col("de")),
            _unparseable("vm_virtual_core_count_bucket", pl.col("c")),
            (pl.col("de") <= pl.col("cr"), "deleted at or before created"),
            (pl.col("c") <= 0, "non-positive core count"),
        ],
        raw_cols,
    )
    submit = pl.col("cr").clip(lower_bound=0.0)
    dur = pl.col("de") - submit
    if window_s is not None:
        dur = pl.min_horizontal(dur, pl.lit(window_s) - submit)
    good = good.with_columns(
        pl.lit(workload).alias("workload"),
        pl.format("vm-{}", pl.col("vm_id")).alias("job_id"),
        submit.alias("submit_s"),
        dur.alias("duration_s"),
        pl.col("c").alias("cores"),
        pl.col("m").cast(pl.Float64).alias("memory_gb"),
        (pl.col("vm_category") if "vm_category" in df.columns else pl.lit(None)).alias("job_class"),
        (pl.col("de") >= trace_end_s).alias("censored"),
        (pl.col("cr") <= 0).alias("left_truncated"),
        pl.lit(f.name).alias("source_file"),
    ).filter(pl.col("duration_s") > 0)
    return _finish_jobs(good), rej


# Google 2011 event types
SUBMIT, SCHEDULE, EVICT, FAIL, FINISH, KILL, LOST = 0, 1, 2, 3, 4, 5, 6
TERMINAL = (EVICT, FAIL, FINISH, KILL, LOST)
TRACE_START_US = 600_000_000  # clusterdata-2011-2 starts 600 s after its time origin


def coverage_windows(spans: list[tuple[int, int]], max_gap_us: int = 60_000_000) -> list[tuple[int, int]]:
    """Merge per-shard ``(min_ts, max_ts)`` spans whose gaps are at most ``max_gap_us`` into windows."""
    out: list[list[int]] = []
    for lo, hi in sorted(spans):
        if out and lo - out[-1][1] <= max_gap_us:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(a, b) for a, b in out]


def normalize_borg2011(
    files: Sequence[RawFile], workload: str = "borg2011"
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Google 2011 task_events shards -> one job per task run (SCHEDULE -> EVICT/FAIL/FINISH/KILL/LOST).

    Shards need not be contiguous: their time spans are merged into coverage windows, and a run whose end
    event is missing or lies beyond its window's end is right-censored at that end (a gap between shards
    hides what happened there). Runs scheduled at timestamp 0 (before the trace) are left-truncated at
    0. ``submit_s`` is the task's latest SUBMIT before the run (else the SCHEDULE time), in seconds
    from trace start. CPU and memory requests stay normalized (fraction of the largest machine).
    """
    frames, rejects = [], []
    spans = []
    raw_cols = list(files[0].columns or []) if files else []
    for f in files:
        df = read_text_table(f)
        need = [
            "timestamp_us",
            "job_id",
            "task_index",
            "event_type",
            "priority",
            "cpu_request",
            "memory_request",
        ]
        require_columns(df, f, need)
        df = df.with_columns(
            ts=pl.col("timestamp_us").cast(pl.Int64, strict=False),
            jid=pl.col("job_id").cast(pl.Int64, strict=False),
            tix=pl.col("task_index").cast(pl.Int64, strict=False),
            ev=pl.col("event_type").cast(pl.Int8, strict=False),
            prio=pl.col("priority").cast(pl.Int32, strict=False),
            cpu=_num("cpu_request"),
            mem=_num("memory_request"),
        )
        good, rej = split_rejects(
            df,
            f,
            "core_jobs",
            [
                _unparseable("timestamp_us", pl.col("ts")),
                _unparseable("job_id", pl.col("jid")),
                _unparseable("task_index", pl.col("tix")),
                _unparseable("event_type", pl.col("ev")),
                (~pl.col("ev").is_between(0, 8), pl.format("unknown event_type {}", pl.col("event_type"))),
                (pl.col("ts") < 0, "negative timestamp"),
            ],
            [c for c in df.columns if c in raw_cols] or [c for c in df.columns if c != "line"],
        )
        rejects.append(rej)
        nz = good.filter(pl.col("ts") > 0)["ts"]
        if nz.len():
            spans.append((int(nz.min()), int(nz.max())))
        frames.append(
            good.select("ts", "jid", "tix", "ev", "prio", "cpu", "mem", "line").with_columns(
                pl.lit(f.name).alias("source_file")
            )
        )
    if not frames:
        return _finish_jobs(pl.DataFrame(schema={c: pl.Utf8 for c in JOB_COLUMNS})), empty_rejects()
    windows = coverage_windows(spans)
    ev = pl.concat(frames).filter(pl.col("ev") <= LOST)
    # within a task, order by time; at equal times process SUBMIT, then terminal events, then SCHEDULE
    order = pl.when(pl.col("ev") == SUBMIT).then(0).when(pl.col("ev") == SCHEDULE).then(2).otherwise(1)
    ev = ev.with_columns(_o=order).sort(["jid", "tix", "ts", "_o", "source_file", "line"])
    grp = ["jid", "tix"]
    is_term = pl.col("ev").is_in(TERMINAL)
    ev = ev.with_columns(
        # next terminal / schedule at or after this row (this row excluded for schedules)
        term_ts=pl.when(is_term).then(pl.col("ts")).backward_fill().over(grp),
        term_ev=pl.when(is_term).then(pl.col("ev")).backward_fill().over(grp),
        next_sched=pl.when(pl.col("ev") == SCHEDULE).then(pl.col("ts")).shift(-1).backward_fill().over(grp),
        last_submit=pl.when(pl.col("ev") == SUBMIT).then(pl.col("ts")).forward_fill().over(grp),
        cpu_ff=pl.col("cpu").forward_fill().over(grp),
        mem_ff=pl.col("mem").forward_fill().over(grp),
        prio_ff=pl.col("prio").forward_fill().over(grp),
        attempt=(pl.col("ev") == SCHEDULE).cast(pl.Int32).cum_sum().over(grp),
    )
    runs = ev.filter(pl.col("ev") == SCHEDULE)
    # the next SCHEDULE is looked up after shifting the whole frame; keep it only inside the same task
    win_lo = pl.lit(None, dtype=pl.Int64)
    win_hi = pl.lit(None, dtype=pl.Int64)
    for lo, hi in windows:
        inside = pl.col("ts").is_between(lo, hi) | ((pl.col("ts") == 0) & (lo <= windows[0][0]))
        win_lo = pl.when(inside & win_lo.is_null()).then(pl.lit(lo)).otherwise(win_lo)
        win_hi = pl.when(inside & win_hi.is_null()).then(pl.lit(hi)).otherwise(win_hi)
    runs = runs.with_columns(win_lo=win_lo, win_hi=win_hi)
    superseded = pl.col("next_sched").is_not_null() & (
        pl.col("term_ts").is_null() | (pl.col("next_sched") < pl.col("term_ts"))
    )
    ended = pl.col("term_ts").is_not_null() & (pl.col("term_ts") <= pl.col("win_hi")) & ~superseded
    start_us = pl.max_horizontal(pl.col("ts"), pl.lit(TRACE_START_US))
    end_us = pl.when(ended).then(pl.col("term_ts")).otherwise(pl.col("win_hi"))
    runs = runs.with_columns(
        start_us=start_us,
        end_us=end_us,
        censored=~ended,
        superseded=superseded,
    )
    bad_reason = (
        pl.when(pl.col("win_hi").is_null())
        .then(pl.lit("SCHEDULE outside every shard window"))
        .when(pl.col("cpu_ff").is_null())
        .then(pl.lit("missing cpu_request"))
        .when(pl.col("cpu_ff") <= 0)
        .then(pl.lit("non-positive cpu_request"))
        .when(pl.col("end_us") <= pl.col("start_us"))
        .then(pl.lit("non-positive duration"))
    )
    runs = runs.with_columns(_reason=bad_reason)
    bad = runs.filter(pl.col("_reason").is_not_null())
    rejects.append(
        bad.select(
            pl.lit("core_jobs").alias("table_name"),
            pl.col("source_file"),
            pl.col("line"),
            pl.col("_reason").alias("reason"),
            pl.format("{},{},{},{},1", pl.col("ts"), pl.col("jid"), pl.col("tix"), pl.col("prio")).alias(
                "raw_row"
            ),
        )
    )
    runs = runs.filter(pl.col("_reason").is_null())
    sub_us = (
        pl.when(pl.col("last_submit").is_not_null() & (pl.col("last_submit") >= pl.col("win_lo")))
        .then(pl.max_horizontal(pl.col("last_submit"), pl.lit(TRACE_START_US)))
        .otherwise(pl.col("start_us"))
    )
    jobs = runs.with_columns(
        pl.lit(workload).alias("workload"),
        pl.format("{}.{}.{}", pl.col("jid"), pl.col("tix"), pl.col("attempt")).alias("job_id"),
        ((sub_us - TRACE_START_US) / 1e6).alias("submit_s"),
        ((pl.col("end_us") - pl.col("start_us")) / 1e6).alias("duration_s"),
        pl.col("cpu_ff").alias("cores"),
        pl.col("mem_ff").alias("memory_norm"),
        pl.col("prio_ff").alias("priority"),
        pl.col("term_ev")
        .replace_strict(
            {EVICT: "evict", FAIL: "fail", FINISH: "finish", KILL: "kill", LOST: "lost"}, default=None
        )
        .alias("job_class"),
        (pl.col("ts") == 0).alias("left_truncated"),
    ).with_columns(pl.when(pl.col("censored")).then(None).otherwise(pl.col("job_class")).alias("job_class"))
    return _finish_jobs(jobs), pl.concat(rejects)


# ------------------------------------------------------------------------------------------------ grid
CARBON_COLUMNS = [
    "grid",
    "zone",
    "ts_utc",
    "gco2_per_kwh",
    "gco2_per_kwh_direct",
    "reference_gco2_per_kwh",
    "renewable_pct",
    "low_carbon_pct",
    "source",
    "factor_set",
    "estimated",
    "source_file",
]


def _ts_utc(col: str) -> pl.Expr:
    """Parse ISO-like timestamps with or without an offset into UTC ``Datetime(us, UTC)``."""
    s = pl.col(col).str.strip_chars().str.replace("T", " ")
    # EIA API periods are 'YYYY-MM-DDTHH': complete them to whole timestamps
    s = pl.when(s.str.len_chars() == 13).then(s + ":00:00").otherwise(s)
    with_off = s.str.to_datetime("%Y-%m-%d %H:%M:%S%:z", strict=False, time_zone="UTC")
    naive = s.str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False).dt.replace_time_zone("UTC")
    return pl.coalesce(with_off, naive).dt.cast_time_unit("us")


def normalize_electricitymaps(f: RawFile) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Electricity Maps hourly CSV -> carbon rows. ``gco2_per_kwh`` is the lifecycle (LCA) intensity."""
    df = read_text_table(f)
    lca = "Carbon Intensity gCO₂eq/kWh (LCA)"
    direct = "Carbon Intensity gCO₂eq/kWh (direct)"
    require_columns(df, f, ["Datetime (UTC)", "Zone Id", lca, direct])
    raw_cols = [c for c in df.columns if c != "line"]
    df = df.with_columns(t=_ts_utc("Datetime (UTC)"), ci=_num(lca), cid=_num(direct))
    good, rej = split_rejects(
        df,
        f,
        "core_grid_carbon",
        [
            _unparseable("Datetime (UTC)", pl.col("t")),
            _unparseable(lca, pl.col("ci")),
            (~pl.col("ci").is_between(0, 2000), pl.format("intensity out of [0, 2000]: {}", pl.col("ci"))),
            (pl.col("Zone Id").is_null(), "missing Zone Id"),
        ],
        raw_cols,
    )
    est = (
        pl.col("Data Estimated").str.to_lowercase().is_in(["true", "1"])
        if "Data Estimated" in df.columns
        else pl.lit(False)
    )
    good = good.with_columns(
        pl.col("Zone Id").replace(EMAPS_ZONE_TO_GRID).alias("grid"),
        pl.col("Zone Id").alias("zone"),
        pl.col("t").alias("ts_utc"),
        pl.col("ci").alias("gco2_per_kwh"),
        pl.col("cid").alias("gco2_per_kwh_direct"),
        pl.lit(None, dtype=pl.Float64).alias("reference_gco2_per_kwh"),
        (_num("Renewable Percentage") if "Renewable Percentage" in df.columns else pl.lit(None)).alias(
            "renewable_pct"
        ),
        (_num("Low Carbon Percentage") if "Low Carbon Percentage" in df.columns else pl.lit(None)).alias(
            "low_carbon_pct"
        ),
        pl.lit("electricitymaps").alias("source"),
        pl.lit("electricitymaps_lca").alias("factor_set"),
        est.fill_null(False).alias("estimated"),
        pl.lit(f.name).alias("source_file"),
    )
    return good.select(CARBON_COLUMNS), rej


def intensity_expr(factors: dict[str, float], fuels: Sequence[str] = FUELS) -> pl.Expr:
    """Generation-weighted intensity Σ(MWh_f·EF_f)/Σ MWh_f over wide fuel columns; blanks and negative
    net generation count as 0; null where total generation is not positive."""
    mwh = [pl.col(fu).fill_null(0.0).clip(lower_bound=0.0) for fu in fuels]
    num = pl.sum_horizontal([m * factors[fu] for m, fu in zip(mwh, fuels, strict=True)])
    den = pl.sum_horizontal(mwh)
    return pl.when(den > 0).then(num / den).otherwise(None)


def _eia_wide_to_tables(wide: pl.DataFrame, f: RawFile, factor_set: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """wide (grid, zone, ts_utc, FUELS..., reference) -> (carbon rows, fuel-mix long rows)."""
    present = [fu for fu in FUELS if fu in wide.columns]
    carbon = wide.with_columns(
        intensity_expr(EMISSION_FACTORS[factor_set], present).alias("gco2_per_kwh"),
        pl.lit(None, dtype=pl.Float64).alias("gco2_per_kwh_direct"),
        pl.lit(None, dtype=pl.Float64).alias("renewable_pct"),
        pl.lit(None, dtype=pl.Float64).alias("low_carbon_pct"),
        pl.lit("eia930").alias("source"),
        pl.lit(factor_set).alias("factor_set"),
        pl.lit(False).alias("estimated"),
        pl.lit(f.name).alias("source_file"),
    ).filter(pl.col("gco2_per_kwh").is_not_null())
    mix = (
        wide.unpivot(index=["grid", "ts_utc"], on=present, variable_name="fuel", value_name="mwh")
        .filter(pl.col("mwh").is_not_null())
        .with_columns(pl.lit("eia930").alias("source"), pl.lit(f.name).alias("source_file"))
    )
    return carbon.select(CARBON_COLUMNS), mix.select(FUEL_MIX_COLUMNS)


FUEL_MIX_COLUMNS = ["grid", "ts_utc", "fuel", "mwh", "source", "source_file"]


def normalize_eia_dcrl(
    f: RawFile, factor_set: str = "ipcc_ar5"
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """dc-rl EIA-930 fuel-mix CSV (``timestamp``, fuel MWh columns, ``avg_CI``) -> (carbon, mix, rejects).

    The BA comes from the file name (``EIA930_<BA>_...``). The published ``avg_CI`` is kept in
    ``reference_gco2_per_kwh``.
    """
    df = read_text_table(f)
    require_columns(df, f, ["timestamp", *FUELS])
    ba = Path(f.name).name.split("_")[1] if Path(f.name).name.startswith("EIA930_") else None
    if ba not in EIA_BA_TO_GRID:
        raise BadFileError(f"{f.name}: cannot tell the balancing authority from the file name")
    raw_cols = [c for c in df.columns if c != "line"]
    df = df.with_columns(t=_ts_utc("timestamp"), **{fu + "_n": _num(fu) for fu in FUELS})
    all_blank = pl.all_horizontal([pl.col(fu + "_n").is_null() for fu in FUELS])
    good, rej = split_rejects(
        df,
        f,
        "core_grid_carbon",
        [
            _unparseable("timestamp", pl.col("t")),
            (all_blank, "no fuel value in row"),
        ],
        raw_cols,
    )
    wide = good.select(
        pl.lit(EIA_BA_TO_GRID[ba]).alias("grid"),
        pl.lit(ba).alias("zone"),
        pl.col("t").alias("ts_utc"),
        *[pl.col(fu + "_n").alias(fu) for fu in FUELS],
        (_num("avg_CI") if "avg_CI" in df.columns else pl.lit(None, dtype=pl.Float64)).alias(
            "reference_gco2_per_kwh"
        ),
    )
    carbon, mix = _eia_wide_to_tables(wide, f, factor_set)
    return carbon, mix, rej


def normalize_eia_api_pages(
    pages: Sequence[RawFile], factor_set: str = "ipcc_ar5"
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """EIA API v2 ``fuel-type-data`` JSON pages -> (carbon, mix, rejects). Unknown fuel codes go to OTH."""
    import json

    rows, rejects = [], []
    for f in pages:
        try:
            doc = json.loads(Path(f.path).read_text())
            data = doc["response"]["data"]
        except (ValueError, KeyError, TypeError) as e:
            raise BadFileError(f"{f.name}: not an EIA API v2 response ({e})") from e
        for i, d in enumerate(data, start=1):
            try:
                rows.append((d["period"], d["respondent"], d["fueltype"], float(d["value"]), f.name))
            except (KeyError, TypeError, ValueError) as e:
                rejects.append(("core_grid_carbon", f.name, i, f"bad record: {e}", json.dumps(d)[:500]))
    rej = pl.DataFrame(rejects, schema=REJECT_COLUMNS, orient="row") if rejects else empty_rejects()
    if not rows:
        return pl.DataFrame(schema=dict.fromkeys(CARBON_COLUMNS)), pl.DataFrame(), rej
    long = pl.DataFrame(
        rows, schema=["period", "ba", "fuel", "mwh", "source_file"], orient="row"
    ).with_columns(
        t=_ts_utc("period"),
        fuel=pl.when(pl.col("fuel").is_in(FUELS)).then(pl.col("fuel")).otherwise(pl.lit("OTH")),
    )
    carbons, mixes = [], []
    for (ba,), part in long.group_by(["ba"], maintain_order=True):
        wide = (
            part.pivot(on="fuel", index="t", values="mwh", aggregate_function="sum")
            .rename({"t": "ts_utc"})
            .with_columns(
                pl.lit(EIA_BA_TO_GRID.get(ba, ba)).alias("grid"),
                pl.lit(ba).alias("zone"),
                pl.lit(None, dtype=pl.Float64).alias("reference_gco2_per_kwh"),
            )
        )
        c, m = _eia_wide_to_tables(wide, RawFile(Path(), part["source_file"][0]), factor_set)
        carbons.append(c)
        mixes.append(m)
    return pl.concat(carbons), pl.concat(mixes), rej


def normalize_watttime(f: RawFile, grid: str = "CAISO_NORTH") -> tuple[pl.DataFrame, pl.DataFrame]:
    """WattTime 5-minute file (first column time, second the signal) -> (grid, ts_utc, value)."""
    df = read_text_table(f)
    cols = [c for c in df.columns if c != "line"]
    if len(cols) < 2:
        raise BadFileError(f"{f.name}: expected a time column and a value column, found {cols}")
    tcol, vcol = cols[0], cols[1]
    df = df.with_columns(t=_ts_utc(tcol), v=_num(vcol))
    good, rej = split_rejects(
        df,
        f,
        "core_grid_marginal",
        [
            _unparseable(tcol, pl.col("t")),
            _unparseable(vcol, pl.col("v")),
            (pl.col("v") < 0, "negative value"),
        ],
        cols,
    )
    out = good.select(
        pl.lit(grid).alias("grid"),
        pl.col("t").alias("ts_utc"),
        pl.col("v").alias("moer_value"),
        pl.lit("unstated (WattTime signal; likely marginal gCO2/kWh or lbs/MWh)").alias("unit"),
        pl.lit("watttime").alias("source"),
        pl.lit(f.name).alias("source_file"),
    )
    return out, rej


PRICE_COLUMNS = ["market", "node", "ts_utc", "usd_per_mwh", "market_type", "source_file"]


def normalize_price(f: RawFile) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Hourly price CSV (``Datetime``, ``Price (USD/MWh)``) -> price rows in UTC.

    Market and node come from the file name ``<MARKET>_<NODE>_<TYPE>_<YEAR>_hourly``. Timestamps with an
    offset (ERCOT local time) are converted to UTC; naive ones (CAISO ``INTERVALSTARTTIME_GMT``) are UTC.
    """
    df = read_text_table(f)
    require_columns(df, f, ["Datetime", "Price (USD/MWh)"])
    stem = Path(f.name).name.split(".")[0]
    parts = stem.split("_")
    kinds = [i for i, p in enumerate(parts) if p in ("DAM", "RTM")]
    if len(parts) < 3 or not kinds:
        raise BadFileError(f"{f.name}: file name must look like <MARKET>_<NODE>_<DAM|RTM>_..._hourly")
    market, node, mtype = parts[0], "_".join(parts[1 : kinds[0]]), parts[kinds[0]]
    raw_cols = [c for c in df.columns if c != "line"]
    df = df.with_columns(t=_ts_utc("Datetime"), p=_num("Price (USD/MWh)"))
    good, rej = split_rejects(
        df,
        f,
        "core_power_price",
        [
            _unparseable("Datetime", pl.col("t")),
            _unparseable("Price (USD/MWh)", pl.col("p")),
            (pl.col("p").abs() > 100_000, "price beyond ±100000 USD/MWh"),
        ],
        raw_cols,
    )
    out = good.select(
        pl.lit(market).alias("market"),
        pl.lit(node).alias("node"),
        pl.col("t").alias("ts_utc"),
        pl.col("p").alias("usd_per_mwh"),
        pl.lit(mtype).alias("market_type"),
        pl.lit(f.name).alias("source_file"),
    )
    return out, rej
