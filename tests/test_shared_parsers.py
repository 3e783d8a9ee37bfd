"""One parser per concept: the capacity spec (CLI text, catalogue dicts, capacity assets), one
``read_core_jobs`` query, constants defined once."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest

from pipelines.cli import load_capacity_arg, main
from sim.capacity.generators import (
    budget_trace,
    harvest_trace,
    random_uniform,
    random_walk,
    risk_aware_walk,
    stranded_trace,
)
from sim.capacity.trace import (
    DAY,
    MEAN_CAPACITY,
    SPEC_KINDS,
    CapacitySpec,
    CapacityTrace,
    MachineCapacityTrace,
)
from sim.tables import read_core_jobs


def _same(a: CapacityTrace | MachineCapacityTrace, b: CapacityTrace | MachineCapacityTrace) -> None:
    assert type(a) is type(b)
    assert (a.machines, a.horizon_s, a.generator, a.params, a.seed) == (
        b.machines,
        b.horizon_s,
        b.generator,
        b.params,
        b.seed,
    )
    for name in ("time_s", "machines_alive", "machine", "cores"):
        if hasattr(a, name):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_parse_converts_types_and_accepts_dashes() -> None:
    s = CapacitySpec.parse("random-walk:changes_per_hour=4,step=0.3,seed=2")
    assert s.kind == "random_walk"
    assert s.params == {"changes_per_hour": 4.0, "step": 0.3, "seed": 2}
    assert isinstance(s.params["seed"], int)
    assert s.get("dynamic_range") == 0.6 and s.get("mean") == MEAN_CAPACITY
    assert CapacitySpec.parse("constant").params == {}
    assert CapacitySpec.parse("risk_aware_walk:m_avg=24,m_ra=8,period_s=1200").get("m_avg") == 24


def test_parse_falls_back_to_a_file(tmp_path) -> None:
    f = tmp_path / "cap.csv"
    assert CapacitySpec.parse(str(f)) == CapacitySpec("file", {"path": str(f)})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("random-walk:stepp=0.3", "no parameter 'stepp'"),
        ("random-walk:step=big", "step='big' is not a float"),
        ("random-walk:seed=1.5", "is not a int"),
        ("random-walk:step", "expected key=value"),
        ("risk-aware-walk:m_avg=24", "needs m_ra, period_s"),
    ],
)
def test_parse_errors_name_the_part(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CapacitySpec.parse(text)


def test_from_dict_rejects_unknown_kinds_and_parameters() -> None:
    with pytest.raises(ValueError, match="unknown capacity kind 'sine'"):
        CapacitySpec.from_dict({"kind": "sine"})
    with pytest.raises(ValueError, match="has no parameter 'steps'"):
        CapacitySpec.from_dict({"kind": "random_walk", "steps": 0.1})
    d = {"kind": "random_walk", "changes_per_hour": 2.0, "step": 0.15, "seed": 3}
    assert CapacitySpec.from_dict(d).to_dict() == d


def test_build_is_the_generators() -> None:
    """The spec adds no behaviour of its own: each kind builds exactly its generator's trace."""
    h = 3 * DAY
    cases = [
        ("random_walk:changes_per_hour=4,step=0.3,seed=5", random_walk(50, h, 4.0, 0.3, seed=5)),
        ("random-uniform:changes_per_hour=2,dynamic_range=0.4", random_uniform(50, h, 2.0, 0.4)),
        ("constant:fraction=0.5", CapacityTrace.constant(50, h, 25)),
        ("constant", CapacityTrace.constant(50, h, 35)),
        ("risk-aware-walk:m_avg=24,m_ra=8,period_s=1200,seed=1", risk_aware_walk(24, 8, 1200.0, h, 1)),
        (
            "harvest:pool=6,max_cores=16,stability_spread=1,seed=2",
            harvest_trace(6, h, 16, stability_spread=1.0, seed=2),
        ),
    ]
    for text, expected in cases:
        _same(CapacitySpec.parse(text).build(50, h), expected)


def test_signal_kinds_repeat_the_signal_over_the_horizon() -> None:
    sig = np.random.default_rng(0).uniform(50, 500, 48)
    h = 5 * DAY + 1800.0  # cut to whole hours: 120 of them
    tiled = np.tile(sig, 3)[:120]
    carbon = CapacitySpec("carbon_budget", {"grid": "CAISO", "signal": "x"}).build(20, h, sig)
    _same(carbon, budget_trace(tiled, 20, "carbon", label="CAISO"))
    cost = CapacitySpec("cost_budget", {"floor": 0.2}).build(20, h, sig, "ERCOT")
    _same(cost, budget_trace(tiled, 20, "cost", MEAN_CAPACITY, 0.2, label="ERCOT"))
    _same(CapacitySpec("stranded", {"threshold": 100.0}).build(20, h, sig), stranded_trace(tiled, 20, 100.0))
    with pytest.raises(ValueError, match="needs an hourly signal"):
        CapacitySpec("stranded", {"threshold": 1.0}).build(20, h)


def test_every_catalogue_capacity_is_a_valid_spec() -> None:
    from studies.catalogue import all_scenarios

    # a "pool" (seed 003's resource level, studies.scenarios.build_capacity) wraps a spec of its own
    caps = [sc.capacity.get("of", sc.capacity) for sc in all_scenarios().values()]
    kinds = {CapacitySpec.from_dict(c).kind for c in caps}
    assert kinds <= set(SPEC_KINDS)
    assert {"random_walk", "constant", "carbon_budget", "harvest", "risk_aware_walk"} <= kinds


def test_cli_capacity_goes_through_the_spec(tmp_path) -> None:
    _same(load_capacity_arg("random-walk:step=0.3,seed=4", 40, DAY), random_walk(40, DAY, step=0.3, seed=4))
    f = tmp_path / "cap.csv"
    pl.DataFrame({"time_s": [0.0, 600.0], "machines_alive": [3, 5]}).write_csv(f)
    tr = load_capacity_arg(str(f), 8, 3600.0)
    assert tr.machines == 8 and list(tr.machines_alive) == [3, 5]
    with pytest.raises(SystemExit, match="--capacity: .*needs m_ra"):
        load_capacity_arg("risk-aware-walk:m_avg=3", 8, 3600.0)
    with pytest.raises(SystemExit, match="built from a grid signal"):
        load_capacity_arg("stranded:threshold=0", 8, 3600.0)


def test_cli_simulates_a_constant_capacity(tmp_path, capsys) -> None:
    jobs = tmp_path / "jobs.csv"
    pl.DataFrame(
        {"job_id": [0, 1], "submit_s": [0.0, 5.0], "duration_s": [60.0, 90.0], "cores": [1.0, 2.0]}
    ).write_csv(jobs)
    out = tmp_path / "m.json"
    args = ["simulate", "--jobs", str(jobs), "--capacity", "constant:fraction=0.5", "--machines", "2"]
    assert main([*args, "--cores", "4", "--horizon-s", "600", "--out", str(out)]) == 0
    assert '"completed": 2' in out.read_text()


def test_read_core_jobs_is_parameterized_and_ordered() -> None:
    con = duckdb.connect()
    con.sql(
        "CREATE TABLE core_jobs AS SELECT * FROM (VALUES ('a''b', 2, 5.0), ('a''b', 1, 5.0), ('a''b', 3, 1.0),"
        " ('c', 9, 0.0)) t(workload, job_id, submit_s)"
    )
    df = read_core_jobs(con, "a'b")  # a quote in the name: fine as a parameter, broke the f-string SQL
    assert df["job_id"].to_list() == [3, 1, 2]
    assert read_core_jobs(con, "x' OR '1'='1").height == 0
