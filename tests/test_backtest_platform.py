"""The deployed rules' policy twins inside the capacity-constrained simulator: registered like every policy,
holding each job to the start its rule picks on the SGIP signal (the signal-level code), then First-Fit on a
finite platform; the marginal carbon of the attempts by hand; one-line refusals."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sim import backtest as bt
from sim.policies import entry, get_policy, parse_params

TWINS = ("cats", "carbon-aware-sdk", "compute-gardener", "sgip-oracle")


@pytest.fixture(scope="module")
def june() -> bt.IssuedSignal:
    return bt.load_signal("sgip-pge", "2021-06")


@pytest.fixture(scope="module")
def jobs(june) -> pl.DataFrame:
    j = bt.default_jobs(june, seed=4).filter(pl.col("submit_s") < 6 * 86400)
    return j.select("job_id", "submit_s", "duration_s", pl.lit(1.0).alias("cores"))


def test_twins_are_registered_policies_with_their_facts() -> None:
    for name in TWINS:
        e = entry(name)
        assert e.policy is not None and e.policy.name == name and e.inputs and "SGIP" in e.inputs[0]
    p = parse_params(get_policy("compute-gardener"), {"threshold_g": "150", "months": "2021-07"})
    assert p.threshold_g == 150.0 and p.max_delay_s == 24 * 3600.0  # the tool's documented defaults
    with pytest.raises(ValueError, match=r"unknown signal 'sgip-xyz'; signals: sgip-pge, sgip-sce"):
        parse_params(get_policy("cats"), {"signal": "sgip-xyz"})
    with pytest.raises(ValueError, match=r"source must be one of issued, perfect, persistence"):
        parse_params(get_policy("carbon-aware-sdk"), {"source": "sarimax"})
    with pytest.raises(ValueError, match=r"slack"):
        parse_params(get_policy("sgip-oracle"), {"slack": "0.5"})


@pytest.mark.parametrize(("policy", "rule"), [*zip(TWINS[:3], TWINS[:3], strict=True), ("oracle", "oracle")])
def test_an_ample_platform_starts_each_job_where_its_rule_chose(june, jobs, policy, rule) -> None:
    want = bt.release_steps(
        june, rule, "issued", jobs["submit_s"].to_numpy(), jobs["duration_s"].to_numpy(), 3.0
    )
    r = bt.platform_backtest(june, jobs, policy, machines=30, slack=3.0)
    assert np.allclose(r["start_s"].to_numpy(), want)  # nobody waits for a machine
    assert (r["start_s"] >= r["submit_s"]).all() and r["end_s"].is_not_null().all()
    if rule != "cats":  # the rules that know the deadline meet it when machines are ample
        assert not r["deadline_miss"].any()
    # the marginal carbon of each run, integrated over its exact interval by hand
    for row in r.head(15).iter_rows(named=True):
        t0, t1 = row["start_s"], row["end_s"]
        want_g = sum(  # 1 kW: each 5-minute step's MOER × the seconds of the run inside it
            june.moer[k] * (min(t1, (k + 1) * 300) - max(t0, k * 300)) / 3600.0
            for k in range(int(t0 // 300), int(np.ceil(t1 / 300)))
        )
        assert row["gco2_marginal"] == pytest.approx(want_g, rel=1e-6)


def test_a_small_platform_delays_and_misses_more(june, jobs) -> None:
    ample = bt.platform_backtest(june, jobs, "carbon-aware-sdk", machines=30, slack=3.0)
    small = bt.platform_backtest(june, jobs, "carbon-aware-sdk", machines=1, slack=3.0)
    j = ample.join(small, on="job_id", suffix="_small")
    assert (j["start_s_small"] >= j["start_s"] - 1e-9).all()  # First-Fit never starts a held job early
    assert small["deadline_miss"].sum() > ample["deadline_miss"].sum() == 0
    assert small["delay_s"].mean() > ample["delay_s"].mean()


def test_a_job_past_the_signal_names_its_span(june) -> None:
    with pytest.raises(
        ValueError, match=r"runs past the signal sgip-pge, which spans 30.0 days \(2021-06 … 2021-06\)"
    ):
        bt.release_steps(june, "cats", "issued", np.array([40 * 86400.0]), np.array([600.0]), 3.0)
    with pytest.raises(ValueError, match=r"months are YYYY-MM"):
        bt.load_signal("sgip-pge", "June")
    with pytest.raises(
        ValueError, match=r"SGIP_CAISO_SCE_2020-01.csv.gz: not in .*\(months there: 2021-06 … 2021-08\)"
    ):
        bt.load_signal("sgip-sce", "2020-01")


def test_the_twin_reads_the_signal_it_is_given(june, jobs, monkeypatch) -> None:
    """A signal read from elsewhere (the wheel) is the one the policy twin holds jobs on, not the default
    files': with no files at all the run still works."""
    monkeypatch.setattr(bt, "default_files", lambda: (_ for _ in ()).throw(AssertionError("read files")))
    other = bt.IssuedSignal(june.name, june.t0, june.moer[::-1].copy(), june.forecast, ("x_2020-02.csv.gz",))
    r = bt.platform_backtest(other, jobs.head(20), "compute-gardener", machines=30)
    want = bt.release_steps(
        other,
        "compute-gardener",
        "issued",
        jobs["submit_s"].to_numpy()[:20],
        jobs["duration_s"].to_numpy()[:20],
        3.0,
    )
    assert np.allclose(r["start_s"].to_numpy(), want)
