"""Standard Workload Format logs in: the reader's mapping field by field, rejects with line numbers, the
header's platform, and ``varcap simulate --jobs LOG.swf``."""

from __future__ import annotations

import gzip
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.workloads.swf import SWF_FIELDS, parse_swf, read_swf

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "samples" / "swf" / "example.swf"


def line(**kw: float) -> str:
    """One SWF job line: every field -1 but those given (and a completed status)."""
    f = dict.fromkeys(SWF_FIELDS, -1)
    f["status"] = 1
    f.update(kw)
    return " ".join(str(f[k]) for k in SWF_FIELDS)


def one(text: str, **kw):
    return parse_swf(text, "t.swf", **kw)


def test_the_sample_reads_as_documented() -> None:
    log = read_swf(SAMPLE)
    assert log.header.platform() == (4, 8.0) and log.header.unix_start_time == 1700000000
    assert log.dropped == {"cancelled": 2, "failed": 0, "zero_run_time": 0}
    assert log.rejects.height == 0
    assert log.jobs["job_id"].to_list() == ["1", "2", "3", "5", "6", "8", "9", "10", "11", "12"]
    j6 = log.jobs.row(4, named=True)  # allocated -1: the requested processors
    assert (j6["job_id"], j6["cores"], j6["duration_s"], j6["submit_s"]) == ("6", 2.0, 300.0, 1200.0)


def test_each_field_maps_to_its_column() -> None:
    j = one(
        line(
            job_number=7,
            submit_time=30,
            run_time=100,
            allocated_processors=3,
            used_memory_kb=2048,
            requested_processors=9,
            requested_time=400,
        )
    ).jobs.row(0, named=True)
    assert j == {
        "job_id": "7",
        "submit_s": 30.0,
        "duration_s": 100.0,
        "cores": 3.0,
        "memory_gb": 2048 * 3 / 1024**2,
        "requested_s": 400.0,
        "status": 1,
        "line": 1,
    }
    unknown = one(line(job_number=1, submit_time=0, run_time=5, requested_processors=2)).jobs.row(
        0, named=True
    )
    assert unknown["cores"] == 2.0 and math.isnan(unknown["memory_gb"]) and math.isnan(unknown["requested_s"])


def test_status_rules_cancelled_failed_and_zero_run_time() -> None:
    text = "\n".join(
        [
            line(job_number=1, submit_time=0, run_time=10, allocated_processors=1, status=5),
            line(job_number=2, submit_time=0, run_time=10, allocated_processors=1, status=0),
            line(job_number=3, submit_time=0, run_time=0, allocated_processors=1),
        ]
    )
    assert one(text).jobs["job_id"].to_list() == ["2"]
    assert one(text).dropped == {"cancelled": 1, "failed": 0, "zero_run_time": 1}
    assert one(text, keep_cancelled=True).jobs["job_id"].to_list() == ["1", "2"]
    assert one(text, drop_failed=True).dropped["failed"] == 1


@pytest.mark.parametrize(
    ("text", "ln", "field", "reason"),
    [
        ("1 2 3", 1, "line", "3 fields"),
        (
            line(job_number=1, run_time=5, allocated_processors=1).replace(" 5 ", " 5x ", 1),
            1,
            "run_time",
            "not a number",
        ),
        (line(job_number=1, submit_time=0, allocated_processors=1), 1, "run_time", "unknown"),
        (line(job_number=1, submit_time=0, run_time=5), 1, "allocated_processors", "unknown"),
        (
            "; c\n\n" + line(job_number=1, run_time=5, allocated_processors=1),
            3,
            "submit_time",
            "unknown or negative",
        ),
    ],
)
def test_a_bad_line_is_rejected_with_its_number_field_and_reason(text, ln, field, reason) -> None:
    log = one(text + "\n" + line(job_number=9, submit_time=0, run_time=1, allocated_processors=1))
    r = log.rejects.row(0, named=True)
    assert (r["line"], r["field"]) == (ln, field) and reason in r["reason"]
    assert log.jobs["job_id"].to_list() == ["9"]  # the rest of the log is still read
    assert f"line {ln}, {field}" in log.summary()


def test_header_platform_and_unreadable_files(tmp_path) -> None:
    assert one("; MaxProcs: 64\n").header.platform() == (1, 64.0)
    assert one("; MaxNodes: 8\n").header.platform() is None
    assert one("; MaxProcs: -1\n; MaxNodes: 2\n").header.platform() is None
    gz = tmp_path / "a.swf.gz"
    gz.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    assert read_swf(gz).jobs.height == read_swf(SAMPLE).jobs.height
    empty = tmp_path / "e.swf"
    empty.write_text("; only a comment\n1 2\n")
    with pytest.raises(ValueError, match=r"e\.swf: no SWF job line \(line 2: 2 fields"):
        read_swf(empty)
    with pytest.raises(ValueError, match=r"missing\.swf: cannot read the SWF log"):
        read_swf(tmp_path / "missing.swf")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 10**6),
            st.integers(-1, 10**5),
            st.integers(-1, 64),
            st.integers(-1, 64),
            st.sampled_from([0, 1, 5]),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_every_job_read_is_simulable_and_every_line_is_accounted_for(rows) -> None:
    text = "\n".join(
        line(
            job_number=i,
            submit_time=s,
            run_time=r,
            allocated_processors=a,
            requested_processors=q,
            status=stt,
        )
        for i, (s, r, a, q, stt) in enumerate(rows)
    )
    log = one(text)
    assert log.jobs.height + log.rejects.height + sum(log.dropped.values()) == len(rows)
    if log.jobs.height:
        assert (log.jobs["duration_s"] > 0).all() and (log.jobs["cores"] > 0).all()
        assert (log.jobs["submit_s"] >= 0).all()


def _varcap(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "VARCAP_HOME": str(cwd)},
        timeout=120,
    )


def test_varcap_simulate_takes_an_swf_log_and_its_platform(tmp_path) -> None:
    out = tmp_path / "m.json"
    r = _varcap(
        "simulate",
        "--jobs",
        str(SAMPLE),
        "--capacity",
        "random_walk:changes_per_hour=1,step=0.15",
        "--horizon-s",
        "86400",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "4 machines × 8 cores" in r.stdout and "2 cancelled dropped" in r.stdout
    assert "1 jobs need more than 8 cores" in r.stdout
    import json

    assert json.loads(out.read_text())["jobs"] == 9


def test_varcap_simulate_without_a_platform_is_one_line(tmp_path) -> None:
    csv = tmp_path / "j.csv"
    csv.write_text("job_id,submit_s,duration_s,cores\n1,0,10,1\n")
    r = _varcap(
        "simulate",
        "--jobs",
        str(csv),
        "--capacity",
        "random_walk:changes_per_hour=1,step=0.15",
        "--horizon-s",
        "100",
        cwd=tmp_path,
    )
    assert r.returncode == 2
    assert (
        r.stderr.strip()
        == "varcap: error: --machines and --cores required (the jobs are not an SWF log to take the platform from)"
    )
