"""Job-trace normalizers: GAIA, Azure VM table, Google Borg 2011 task events -> ``core_jobs`` rows."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from assets.normalize.base import (
    RawFile,
    _num,
    _unparseable,
    empty_rejects,
    read_text_table,
    require_columns,
    split_rejects,
)

JOB_COLUMNS = [
    "workload",
    "job_id",
    "submit_s",
    "duration_s",
    "cores",
    "cpu_request_norm",
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
        ("cores", pl.Float64),
        ("cpu_request_norm", pl.Float64),
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


#: Re-timing rejects arrivals beyond this multiple of the 99th-percentile arrival (GAIA traces: max/p99 ≈ 1.01).
RETIME_OUTLIER_FACTOR = 3.0


def normalize_gaia(
    f: RawFile, workload: str, retime_window_s: float | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """GAIA trace (``arrival_time`` h, ``length`` h, ``cpus``) -> jobs.

    ``retime_window_s`` linearly rescales arrivals from ``[0, max arrival]`` onto
    ``[0, retime_window_s)``, keeping their order (used for Azure-100k, whose arrivals GAIA spread over a
    year, to fit a 30-day window). Durations and cores are kept. Non-finite values are rejected, and when
    re-timing, so is an arrival beyond ``RETIME_OUTLIER_FACTOR`` × the 99th-percentile arrival: one such
    outlier would otherwise set the scale and squeeze every other arrival together.
    """
    df = read_text_table(f)
    require_columns(df, f, ["arrival_time", "length", "cpus"])
    raw_cols = ["arrival_time", "length", "cpus"]
    df = df.with_columns(a=_num("arrival_time"), d=_num("length"), c=_num("cpus"))
    p99 = pl.col("a").filter(pl.col("a").is_finite() & (pl.col("a") >= 0)).quantile(0.99)
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
            (~pl.col("a").is_finite(), "non-finite arrival_time"),
            (~pl.col("d").is_finite(), "non-finite length"),
            (~pl.col("c").is_finite(), "non-finite cpus"),
            *(
                [
                    (
                        pl.col("a") > RETIME_OUTLIER_FACTOR * p99,
                        pl.format(
                            "arrival_time {} h is an outlier (> {} × p99 = {} h); it would distort the re-timing",
                            pl.col("arrival_time"),
                            pl.lit(RETIME_OUTLIER_FACTOR),
                            p99.round(1),
                        ),
                    )
                ]
                if retime_window_s is not None
                else []
            ),
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
        # one unit per column: the trace publishes only fractions of the largest machine, no vCPU count
        pl.lit(None, dtype=pl.Float64).alias("cores"),
        pl.col("cpu_ff").alias("cpu_request_norm"),
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
