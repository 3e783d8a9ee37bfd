"""Generated workloads number their jobs ``<prefix><i>`` (built by polars, not a Python loop)."""

from __future__ import annotations

import polars as pl
import pytest

from sim.workloads.generators import numbered_ids, pareto_workload, synthetic_uniform, zipf_workload


@pytest.mark.parametrize("n", [0, 1, 10, 1001])
def test_numbered_ids_are_the_prefix_and_the_index(n: int) -> None:
    ids = numbered_ids("p1.5-", n)
    assert (
        ids.name == "job_id" and ids.dtype == pl.String and ids.to_list() == [f"p1.5-{i}" for i in range(n)]
    )


def test_generators_keep_their_job_ids() -> None:
    p = pareto_workload(1.5, 3600.0, 4, 8, 86400.0, seed=0)
    assert p["job_id"].to_list() == [f"p1.5-{i}" for i in range(p.height)]
    u = synthetic_uniform(7, 3600.0, 60.0)
    assert u["job_id"].to_list() == [f"u{i}" for i in range(7)]
    z = zipf_workload(1.5, 4, 8, 86400.0, seed=0)
    assert z["job_id"].to_list() == [f"z1.5-{i}" for i in range(z.height)]
