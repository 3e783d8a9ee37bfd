"""Partition keys: a study's keys leave out the words every scenario shares (said once, in the study
asset's description) and stay unique; the full key is each partition's metadata."""

from __future__ import annotations

from studies.catalogue import STUDIES, study
from studies.keys import full_keys, partition_keys, shared
from studies.scenarios import Scenario, walk


def test_every_study_keys_what_differs_and_nothing_is_lost() -> None:
    for name in STUDIES:
        scs = study(name)
        keys, full, common = partition_keys(scs), full_keys(scs), shared(scs)
        assert len(set(keys.values())) == len(scs), name
        for sc in scs:
            k, f = keys[sc.id], full[sc.id]
            assert len(k) <= len(f), (k, f)
            head = k.split("/")
            assert head[0].split()[0] == sc.policy and head[1] == sc.workload, k
            # the key's words and the shared words are the full key's words
            words = lambda t: set(t.replace("/", " ").split())  # noqa: E731
            if "#" not in k:
                assert words(k) | words(common) == words(f), (k, common, f)


def test_smoke_keys_and_a_shared_platform() -> None:
    scs = study("smoke")
    assert list(partition_keys(scs).values()) == [
        "ff/zipf-1.5/rw f=1",
        "ias/zipf-1.5/rw f=1",
        "ff/zipf-1.5/rw f=4",
        "ias/zipf-1.5/rw f=4",
    ]
    assert shared(scs) == "step=0.15 40m 3d"
    assert full_keys(scs)[scs[3].id] == "ias/zipf-1.5/rw f=4 step=0.15/40m 3d"


def test_a_word_only_some_scenarios_hold_is_kept_and_nested_specs_read() -> None:
    a = Scenario("azure", walk(1.0, 0.15), "ff", machines=10)
    b = Scenario("azure", walk(1.0, 0.15), "ff", machines=10, seed=1)
    pool = Scenario("azure", {"kind": "pool", "of": walk(2.0, 0.15)}, "ff", machines=10)
    keys = partition_keys([a, b, pool])
    assert keys[a.id] == "ff/azure/rw f=1 step=0.15"
    assert keys[b.id] == "ff/azure/rw f=1 step=0.15/seed=1"
    assert keys[pool.id] == "ff/azure/pool of=rw(f=2 step=0.15)"
    assert shared([a, b, pool]) == "10m"
