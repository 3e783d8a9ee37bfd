"""A scenario's id is the cache key of its run: the ids of a sample of catalogue scenarios, computed before
``Scenario`` held parsed specs, are pinned (``tests/scenario_ids.json``: one scenario per capacity kind ×
workload family × policy × settings/warm-up/sizing/nested-spec combination of the catalogue, 72 in all), and
so are ``params()`` and ``from_params()``. The parsed views are checked once, at construction."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from sim.capacity.trace import CapacitySpec
from studies.scenarios import Scenario, walk

PINNED = json.loads((Path(__file__).parent / "scenario_ids.json").read_text())


def test_the_sample_covers_the_catalogue_s_shapes() -> None:
    kinds = {e["params"]["capacity"]["kind"] for e in PINNED}
    assert {"random_walk", "risk_aware_walk", "carbon_budget", "harvest", "spot", "pool", "constant"} <= kinds
    assert any("warmup_days" in e["params"] for e in PINNED)
    assert any("sizing" in e["params"] for e in PINNED)
    assert any(e["params"]["settings"] for e in PINNED)


@pytest.mark.parametrize("entry", PINNED, ids=[e["id"] for e in PINNED])
def test_pinned_ids_params_and_round_trip(entry: dict) -> None:
    sc = Scenario.from_params(entry["params"])
    assert sc.id == entry["id"]
    assert sc.params() == entry["params"]
    assert Scenario(**sc.params()) == sc
    again = pickle.loads(pickle.dumps(sc))  # a scenario pickles as its parameters
    assert again == sc and again.id == sc.id and again.capacity_spec == sc.capacity_spec


def test_parsed_views_are_the_fields_parsed_and_stay_out_of_the_id() -> None:
    sc = Scenario("zipf-1.5", walk(4.0, 0.15), "ias", {"aggressiveness": "0.3"}, machines=40)
    assert sc.capacity_spec == CapacitySpec.from_dict(sc.capacity)
    assert sc.workload_spec.name == "zipf-<s>" and sc.workload_values == {"s": 1.5}
    assert sc.policy_params.aggressiveness == 0.3
    assert set(sc.params()) == {"workload", "capacity", "policy", "settings", "machines", "cores",
                                "horizon_days", "seed", "load"}  # fmt: skip
    assert "capacity_spec" not in repr(sc)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"workload": "nope"}, r"^scenario workload: unknown workload 'nope'; workloads: zipf-<s>, "),
        ({"workload": "zipf-x"}, r"^scenario workload: workload 'zipf-x': s='x' is not a float"),
        ({"capacity": {"kind": "nope"}}, r"^scenario capacity: unknown capacity kind 'nope'; capacity kinds: "),
        (
            {"capacity": {"kind": "random_walk", "stepp": 0.1}},
            r"^scenario capacity: capacity kind 'random_walk' has no parameter 'stepp'; parameters: ",
        ),
        (
            {"capacity": {"kind": "pool", "of": {"kind": "random_walk", "f": 1}}},
            r"^scenario capacity: capacity kind 'random_walk' has no parameter 'f'; parameters: ",
        ),
        ({"capacity": {"step": 0.1}}, r"^scenario capacity: capacity spec .* has no 'kind'"),
    ],
)
def test_a_bad_field_is_one_line_naming_it_and_the_choices(kw: dict, message: str) -> None:
    args = {"workload": "zipf-1.5", "capacity": walk(1.0, 0.15), **kw}
    with pytest.raises(ValueError, match=message) as e:
        Scenario(**args)
    assert "\n" not in str(e.value)
