"""Standard Workload Format (SWF) logs: the Parallel Workloads Archive's format, read into varcap's jobs.

An SWF log is plain text: comment lines start with ``;`` (the header's ``; Key: value`` lines among them,
e.g. ``; MaxProcs: 128``), every other line is one job of 18 whitespace-separated numeric fields, ``-1``
meaning unknown. The fields, in order (the format's definition):

 1 job number · 2 submit time (s from the log's start) · 3 wait time (s) · 4 run time (s) · 5 allocated
 processors · 6 average CPU time used (s) · 7 used memory (KB per processor) · 8 requested processors ·
 9 requested time (s) · 10 requested memory (KB per processor) · 11 status (1 completed, 0 failed, 5
 cancelled; other values for partial executions) · 12 user · 13 group · 14 executable · 15 queue ·
 16 partition · 17 preceding job · 18 think time (s)

How a job maps to varcap's jobs (``job_id, submit_s, duration_s, cores, memory_gb, requested_s``, and
where it came from: ``status`` as logged, ``line`` its 1-based line in the log):

* ``cores`` — allocated processors, else requested processors when allocated is unknown;
* ``duration_s`` — the run time (what the job occupied, whatever its status);
* ``memory_gb`` — used memory × processors (NaN when unknown); ``requested_s`` the requested time (NaN
  when unknown);
* cancelled jobs (status 5) are dropped unless ``keep_cancelled`` (and even then only those that ran);
  failed jobs (status 0) are kept unless ``drop_failed`` — they held their processors;
* a job whose run time is 0 is dropped (it never occupied a machine); these counts are in
  :attr:`SwfLog.dropped`.

A line that is not a job (wrong field count, a field that is not a number, a negative submit time, no
known run time or processor count) goes to :attr:`SwfLog.rejects` with its line number, field and reason:
the rest of the log is still read.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

#: the 18 fields of an SWF job line, in order
SWF_FIELDS: tuple[str, ...] = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory_kb",
    "requested_processors",
    "requested_time",
    "requested_memory_kb",
    "status",
    "user_id",
    "group_id",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)
STATUS_FAILED, STATUS_COMPLETED, STATUS_CANCELLED = 0, 1, 5
_HEADER = re.compile(r"^;\s*([A-Za-z][\w ]*?)\s*:\s*(.*?)\s*$")
REJECT_COLUMNS = ("line", "field", "value", "reason")


@dataclass(frozen=True)
class SwfHeader:
    """The header's ``; Key: value`` comments (every key as written, in :attr:`fields`), with the platform
    keys parsed: ``MaxProcs``, ``MaxNodes``, ``UnixStartTime`` (None when absent or not a whole number)."""

    fields: dict[str, str] = field(default_factory=dict)

    def _int(self, key: str) -> int | None:
        v = self.fields.get(key)
        try:
            n = int(v) if v is not None else None
        except ValueError:
            return None
        return n if n is not None and n > 0 else None

    @property
    def max_procs(self) -> int | None:
        return self._int("MaxProcs")

    @property
    def max_nodes(self) -> int | None:
        return self._int("MaxNodes")

    @property
    def unix_start_time(self) -> int | None:
        return self._int("UnixStartTime")

    def platform(self) -> tuple[int, float] | None:
        """``(machines, cores per machine)`` from ``MaxNodes`` and ``MaxProcs`` (one machine of ``MaxProcs``
        cores when only ``MaxProcs`` is given); None without ``MaxProcs``."""
        procs, nodes = self.max_procs, self.max_nodes
        if procs is None:
            return None
        if nodes is None:
            return 1, float(procs)
        return nodes, procs / nodes


@dataclass(frozen=True)
class SwfLog:
    """A read log: its jobs (varcap's job columns), the lines that were not jobs (``line, field, value,
    reason``), the header, and how many jobs each rule dropped (``cancelled``, ``failed``, ``zero_run_time``)."""

    jobs: pl.DataFrame
    rejects: pl.DataFrame
    header: SwfHeader
    dropped: dict[str, int]
    source: str

    def summary(self) -> str:
        """One line: jobs read, dropped by rule, rejected (with the first reject's line and reason)."""
        parts = [f"{self.source}: {self.jobs.height:,} jobs"]
        parts += [f"{n:,} {why.replace('_', ' ')} dropped" for why, n in self.dropped.items() if n]
        if self.rejects.height:
            r = self.rejects.row(0, named=True)
            parts.append(
                f"{self.rejects.height:,} lines rejected (first: line {r['line']}, {r['field']}: {r['reason']})"
            )
        return ", ".join(parts)


def _number(tok: str) -> float | None:
    try:
        v = float(tok)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def parse_swf(
    text: str, source: str = "swf", keep_cancelled: bool = False, drop_failed: bool = False
) -> SwfLog:
    """Parse SWF ``text`` (see the module doc for the mapping); ``source`` names it in :meth:`SwfLog.summary`.
    Never raises on a bad job line: it goes to ``rejects``."""
    header: dict[str, str] = {}
    rows: dict[str, list] = {
        c: [] for c in ("job_id", "submit_s", "duration_s", "cores", "memory_gb", "requested_s", "status", "line")
    }
    rejects: dict[str, list] = {c: [] for c in REJECT_COLUMNS}
    dropped = {"cancelled": 0, "failed": 0, "zero_run_time": 0}

    def reject(line: int, fld: str, value: str, reason: str) -> None:
        for k, v in zip(REJECT_COLUMNS, (line, fld, value, reason), strict=True):
            rejects[k].append(v)

    for ln, raw in enumerate(text.splitlines(), start=1):
        s = raw.strip()
        if not s:
            continue
        if s.startswith(";"):
            m = _HEADER.match(s)
            if m and m.group(1) not in header:
                header[m.group(1)] = m.group(2)
            continue
        toks = s.split()
        if len(toks) != len(SWF_FIELDS):
            reject(ln, "line", s[:60], f"{len(toks)} fields, an SWF job line has {len(SWF_FIELDS)}")
            continue
        vals: list[float] = []
        for name, tok in zip(SWF_FIELDS, toks, strict=True):
            v = _number(tok)
            if v is None:
                reject(ln, name, tok, "not a number")
                break
            vals.append(v)
        else:
            f = dict(zip(SWF_FIELDS, vals, strict=True))
            status = int(f["status"])
            if status == STATUS_CANCELLED and not keep_cancelled:
                dropped["cancelled"] += 1
                continue
            if status == STATUS_FAILED and drop_failed:
                dropped["failed"] += 1
                continue
            if f["submit_time"] < 0:
                reject(ln, "submit_time", toks[1], "unknown or negative (must be ≥ 0 s)")
                continue
            if f["run_time"] < 0:
                reject(ln, "run_time", toks[3], "unknown (-1): the job's length cannot be simulated")
                continue
            if f["run_time"] == 0:
                dropped["zero_run_time"] += 1
                continue
            procs = f["allocated_processors"] if f["allocated_processors"] > 0 else f["requested_processors"]
            if procs <= 0:
                reject(ln, "allocated_processors", toks[4], "unknown, and requested_processors too")
                continue
            mem_kb = f["used_memory_kb"]
            rows["job_id"].append(str(int(f["job_number"])) if f["job_number"] >= 0 else f"line{ln}")
            rows["submit_s"].append(f["submit_time"])
            rows["duration_s"].append(f["run_time"])
            rows["cores"].append(procs)
            rows["memory_gb"].append(mem_kb * procs / 1024**2 if mem_kb >= 0 else math.nan)
            rows["requested_s"].append(f["requested_time"] if f["requested_time"] > 0 else math.nan)
            rows["status"].append(status)
            rows["line"].append(ln)
    jobs = pl.DataFrame(
        rows,
        schema={
            "job_id": pl.String,
            "submit_s": pl.Float64,
            "duration_s": pl.Float64,
            "cores": pl.Float64,
            "memory_gb": pl.Float64,
            "requested_s": pl.Float64,
            "status": pl.Int64,
            "line": pl.Int64,
        },
    )
    rej = pl.DataFrame(
        rejects, schema={"line": pl.Int64, "field": pl.String, "value": pl.String, "reason": pl.String}
    )
    return SwfLog(jobs, rej, SwfHeader(header), dropped, source)


def read_swf(path: str | Path, keep_cancelled: bool = False, drop_failed: bool = False) -> SwfLog:
    """Read an SWF log from ``path`` (``.swf``, or gzip-compressed ``.swf.gz``/``.gz``). ValueError naming the
    file when it cannot be read or holds no job line at all."""
    import gzip

    p = Path(path)
    try:
        data = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        text = data.decode("utf-8", errors="replace")
    except (OSError, EOFError, gzip.BadGzipFile) as e:
        raise ValueError(f"{p}: cannot read the SWF log ({e.__class__.__name__}: {e})") from None
    log = parse_swf(text, str(p), keep_cancelled, drop_failed)
    if log.jobs.height == 0 and not any(log.dropped.values()):
        first = f" (line {log.rejects['line'][0]}: {log.rejects['reason'][0]})" if log.rejects.height else ""
        raise ValueError(f"{p}: no SWF job line{first}")
    return log


def is_swf(path: str | Path) -> bool:
    """Whether ``path`` names an SWF log by its suffix (``.swf``, ``.swf.gz``)."""
    name = Path(path).name.lower()
    return name.endswith(".swf") or name.endswith(".swf.gz")
