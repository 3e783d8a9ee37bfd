"""The harvest-VM trace model calibrated to seed 002 §2.1 (sim.capacity.generators.harvest_regime_trace)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from sim.capacity.generators import HVM_PAPER, harvest_regime_trace, harvest_statistics, harvest_trace
from sim.capacity.kinds import get_kind

DAYS = 30 * 86400.0


def _stats(seeds: tuple[int, ...] = (0, 1), **kw: float) -> dict[str, float]:
    rows = [harvest_statistics(harvest_regime_trace(64, DAYS, seed=s, **kw)) for s in seeds]
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}


def test_defaults_meet_the_papers_statistics() -> None:
    """64 HVMs over 30 days (§4.1's pool): C2's inter-change shares 16 / 40 / 84 % within 1 min / 10 min /
    1 h to ±3.5 points; mean and p95 inside C1–C6's 26–224 min and 1.2–11.2 h; the median HVM at most about
    one change an hour (≤ 1.1: a median of a 64-HVM sample), the 10 % most active HVMs' busiest hour
    holding tens of changes (≥ 10); mean change size inside Fig. 1a's 5–13 cores."""
    s = _stats()
    for k in ("within_1min", "within_10min", "within_1h"):
        assert s[k] == pytest.approx(HVM_PAPER[k], abs=0.035), k
    for k in ("mean_gap_min", "p95_gap_h", "change_cores"):
        lo, hi = HVM_PAPER[k]
        assert lo <= s[k] <= hi, k
    assert s["stable50_rate_h"] <= 1.1
    assert s["worst10_peak_hour"] >= HVM_PAPER["worst10_peak_hour"]


def test_the_former_stand_in_misses_them() -> None:
    """What the calibration fixes: the log-normal stand-in at the study's spread puts > 60 % of its gaps
    within 10 min and > 90 % within an hour, its median HVM changes more than once an hour."""
    s = harvest_statistics(harvest_trace(64, DAYS, stability_spread=1.0, seed=0))
    assert s["within_10min"] > 0.55 and s["within_1h"] > 0.9 and s["stable50_rate_h"] > 1.0


def test_node_spread_moves_diversity_not_the_pooled_rate() -> None:
    """More diverse is not more active: the pooled change rate stays within 10 % from identical HVMs to a
    spread of 1.5, while the spread between HVMs' rates grows (their coefficient of variation at least
    doubles). The former stand-in's spread raised the pooled rate (by more than a third)."""
    seeds = (0, 1, 2)
    flat, wide = _stats(seeds, node_spread=0.0), _stats(seeds, node_spread=1.5)
    assert wide["changes_per_hvm_hour"] == pytest.approx(flat["changes_per_hvm_hour"], rel=0.10)

    def cv(spread: float) -> float:
        tr = harvest_regime_trace(64, DAYS, seed=0, node_spread=spread)
        n = np.bincount(tr.machine, minlength=64).astype(float)
        return float(n.std() / n.mean())

    assert cv(1.5) >= 2 * cv(0.0)
    old0 = harvest_statistics(harvest_trace(64, DAYS, seed=0))["changes_per_hvm_hour"]
    old2 = harvest_statistics(harvest_trace(64, DAYS, stability_spread=1.5, seed=0))["changes_per_hvm_hour"]
    assert old2 > 1.33 * old0


def test_regimes_and_sizes_are_separate_axes() -> None:
    """Change sizes move the mean magnitude and leave the gaps' shares (±3 points); without bursts
    (burst_hours tiny) no HVM's busiest hour holds tens of changes, with them the 10 % most active do."""
    small, large = _stats(mean_change_cores=5.0), _stats(mean_change_cores=13.0)
    assert large["change_cores"] > small["change_cores"] + 3.0
    for k in ("within_1min", "within_10min", "within_1h"):
        assert large[k] == pytest.approx(small[k], abs=0.03), k
    calm = _stats(burst_hours=0.01)
    assert calm["worst10_peak_hour"] < 10.0 <= _stats()["worst10_peak_hour"]


def test_trace_is_bounded_seeded_and_checked() -> None:
    a = harvest_regime_trace(8, 5 * 86400.0, seed=3)
    b = harvest_regime_trace(8, 5 * 86400.0, seed=3)
    assert a.frame().equals(b.frame())
    assert not a.frame().equals(harvest_regime_trace(8, 5 * 86400.0, seed=4).frame())
    nz = a.cores[a.cores > 0]
    assert nz.min() >= 2 and a.cores.max() <= 48 and a.time_s.max() < 5 * 86400.0
    with pytest.raises(ValueError, match="burst_hours"):
        harvest_regime_trace(8, 86400.0, burst_hours=0.0)
    with pytest.raises(ValueError, match="clump_prob"):
        harvest_regime_trace(8, 86400.0, clump_prob=1.0)


def test_the_capacity_kind_builds_the_calibrated_defaults() -> None:
    """The ``harvest_regimes`` kind's defaults are the generator's (one calibration, not two)."""
    gen = inspect.signature(harvest_regime_trace).parameters
    for name, p in get_kind("harvest_regimes").params.items():
        if name not in ("pool", "seed"):
            assert p.default == gen[name].default, name
