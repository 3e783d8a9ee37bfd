"""A process hands out a workload it built again only to a scenario that would build the same jobs
(``studies.scenarios.build_jobs``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

from studies import scenarios as S
from studies.scenarios import Scenario, build_jobs, walk

HARVEST = {"kind": "harvest", "pool": 64, "max_cores": 48, "stability_spread": 1.0, "seed": 3}


@pytest.fixture(autouse=True)
def _empty_cache():
    S._BUILT.clear()
    yield
    S._BUILT.clear()


def _fresh(sc: Scenario, machines: int):
    S._BUILT.clear()
    return build_jobs(sc, Path("."), machines)


def test_policies_on_one_instance_share_its_jobs_and_get_the_same_frame() -> None:
    ff = Scenario("zipf-1.5", walk(2.0, 0.1, seed=1), "ff", machines=8, horizon_days=2.0, seed=4)
    ias = Scenario(
        "zipf-1.5", walk(4.0, 0.2, seed=9), "ias", {"aggressiveness": "0.6"}, 8, horizon_days=2.0, seed=4
    )
    a = build_jobs(ff, Path("."), 8)
    b = build_jobs(ias, Path("."), 8)  # other capacity and settings: zipf reads neither
    assert len(S._BUILT) == 1
    assert_frame_equal(a, b)
    assert_frame_equal(b, _fresh(ias, 8))
    a.insert_column(0, a["cores"].alias("scratch"))  # a caller's frame is its own
    assert "scratch" not in build_jobs(ff, Path("."), 8).columns


@pytest.mark.parametrize(
    "change",
    [
        {"seed": 5},
        {"load": 0.6},
        {"horizon_days": 3.0},
        {"workload": "zipf-1.6"},
    ],
)
def test_anything_the_jobs_depend_on_builds_them_again(change: dict) -> None:
    base = dict(workload="zipf-1.5", capacity=walk(2.0, 0.1, seed=1), machines=8, horizon_days=2.0, seed=4)
    one = Scenario(**base)
    other = Scenario(**{**base, **change})
    build_jobs(one, Path("."), 8)
    got = build_jobs(other, Path("."), 8)
    assert_frame_equal(got, _fresh(other, 8))
    assert not build_jobs(one, Path("."), 9).equals(build_jobs(one, Path("."), 8))  # the platform too


def test_a_builder_that_reads_the_settings_is_not_shared_across_them() -> None:
    a = Scenario("harvest-tasks", HARVEST, "slacksched", {"nodes": "32"}, 64, 48, 0.5)
    b = Scenario("harvest-tasks", HARVEST, "slacksched", {"nodes": "16"}, 64, 48, 0.5)
    ja, jb = build_jobs(a, Path("."), 64), build_jobs(b, Path("."), 64)
    assert ja.height != jb.height  # nodes sizes the offered work
    assert_frame_equal(jb, _fresh(b, 64))
    S._BUILT.clear()
    build_jobs(a, Path("."), 64)
    assert_frame_equal(build_jobs(a, Path("."), 64), _fresh(a, 64))


def test_the_process_keeps_a_bounded_number_of_workloads() -> None:
    for seed in range(S.BUILT_KEEP + 3):
        build_jobs(
            Scenario("zipf-1.5", walk(2.0, 0.1), machines=4, horizon_days=1.0, seed=seed), Path("."), 4
        )
    assert len(S._BUILT) == S.BUILT_KEEP


def test_the_process_keeps_at_most_a_budget_of_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    small = Scenario("zipf-1.5", walk(2.0, 0.1), machines=4, horizon_days=1.0, seed=1)
    n = build_jobs(small, Path("."), 4).height
    monkeypatch.setattr(S, "BUILT_ROWS", n)
    build_jobs(Scenario("zipf-1.5", walk(2.0, 0.1), machines=4, horizon_days=1.0, seed=2), Path("."), 4)
    assert len(S._BUILT) == 1 and sum(j.height for v in S._BUILT.values() for *_, j in v) <= n
    S._BUILT.clear()
    monkeypatch.setattr(S, "BUILT_ROWS", n - 1)
    assert build_jobs(small, Path("."), 4).height == n and not S._BUILT  # larger than the budget: not kept
