"""Seed 002's isolating variant (studies.slacksched.isolate): NoDelay's rule with the truth for eq. 1."""

from __future__ import annotations

import numpy as np
import polars as pl

from sim.capacity.trace import MachineCapacityTrace
from studies.slacksched.isolate import informed_nodelay


def _cap(rows: list[tuple[float, int, float]], machines: int, horizon: float) -> MachineCapacityTrace:
    t, m, c = (np.array(x, float) for x in zip(*rows, strict=True))
    return MachineCapacityTrace(t, m.astype(int), c, machines, horizon)


def test_informed_nodelay_takes_the_node_where_the_task_survives() -> None:
    """Nodes 0 and 1 have room; node 0 shrinks under the task before it ends, node 1 does not: the task goes
    to node 1 and is never killed (the lowest index that survives, not the lowest index)."""
    horizon = 20_000.0
    rows = [(0.0, 0, 48.0), (0.0, 1, 48.0), (1_000.0, 0, 4.0), (9_000.0, 0, 48.0)]
    jobs = pl.DataFrame({"job_id": ["A"], "submit_s": [0.0], "duration_s": [3_600.0], "cores": [8.0]})
    table, terms = informed_nodelay(jobs, _cap(rows, 2, horizon), 2, 48.0, horizon, seed=0)
    row = table.row(0, named=True)
    assert terms == 0 and row["first_start_s"] == 0.0 and row["terminations"] == 0


def test_informed_nodelay_never_waits_when_a_node_has_room() -> None:
    """Both nodes shrink under the task: it still starts at once (NoDelay's rule), on a node drawn at random,
    and is killed; it never waits for a safe node (that is the Oracle's rule)."""
    horizon = 20_000.0
    rows = [(0.0, 0, 48.0), (0.0, 1, 48.0), (1_000.0, 0, 4.0), (1_000.0, 1, 4.0)]
    rows += [(2_000.0, 0, 48.0), (2_000.0, 1, 48.0)]
    jobs = pl.DataFrame({"job_id": ["A"], "submit_s": [0.0], "duration_s": [3_600.0], "cores": [8.0]})
    table, terms = informed_nodelay(jobs, _cap(rows, 2, horizon), 2, 48.0, horizon, seed=0)
    assert table.row(0, named=True)["first_start_s"] == 0.0 and terms == 1


def test_the_study_runs_the_calibrated_trace_by_default_and_the_former_as_a_reading() -> None:
    import pytest

    from studies.claims import FULL, QUICK
    from studies.slacksched.claims import waste_share
    from studies.slacksched.scenarios import HB_THRESHOLDS, POLS_SS, hvm_capacity, ss_scenarios

    full = ss_scenarios(FULL)
    for p in POLS_SS:
        assert full[(p, 0)].capacity["kind"] == "harvest_regimes"
        assert full[(p, "former-trace", 0)].capacity == {**hvm_capacity(0, "former-trace")}
        assert full[(p, "former-trace", 0)].capacity["kind"] == "harvest"
    assert full[("slacksched-heartbeat", "event-first", 0)].settings == {"heartbeat": "event", "apps": "first"}
    assert {k[1] for k in full if str(k[1]).startswith("threshold-")} == {
        f"threshold-{t:g}" for t in HB_THRESHOLDS
    }
    # the threshold sweep and the other readings belong to the full profile: the quick smoke test runs each
    # policy's default on the calibrated trace, the same scenarios as the full profile's but for the horizon
    sc = ss_scenarios(QUICK)
    assert set(sc) == {(p, r) for p in POLS_SS for r in range(QUICK.replicates)}
    assert all(s.capacity["kind"] == "harvest_regimes" for s in sc.values())
    with pytest.raises(ValueError, match="calibrated"):
        hvm_capacity(0, "azure")
    # §4.2's waste: work lost over work done (completed + lost), not over the available core-seconds
    assert waste_share({"metrics": {"wasted_fraction": 0.1, "goodput": 0.3}}) == pytest.approx(25.0)
