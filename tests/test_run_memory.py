"""The Borg-scale memory cuts change no decision: jobs already in submit order reach the kernel
as the problem's own arrays (no reordered copies) and give the same per-job results as the same jobs in
another row order, which takes the copying path."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import sim.problem as problem_mod
from sim import random_walk, simulate
from sim.engine import use_engine
from sim.problem import Platform, Problem, in_submit_order, run_first_fit
from tests.test_sim_engine import frame


def _jobs(n: int = 300, seed: int = 3) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    sub = np.sort(rng.uniform(0, 20_000, n))
    return frame([(s, float(d), float(c)) for s, d, c in zip(sub, rng.exponential(900, n) + 1,
                                                            rng.integers(1, 5, n), strict=True)])  # fmt: skip


def test_in_submit_order() -> None:
    assert in_submit_order(np.arange(5)) and in_submit_order(np.arange(0))
    assert not in_submit_order(np.array([1, 0, 2])) and not in_submit_order(np.array([1, 2]))


def test_sorted_jobs_reach_the_kernel_uncopied(monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = _jobs()
    cap = random_walk(6, 30_000.0, seed=1, changes_per_hour=2.0, step=0.3)
    prob = Problem.build(jobs, Platform(6, 4.0), cap, 30_000.0)
    prob = Problem(**{**prob.__dict__, "submit_s": prob.submit_s.copy()})  # a writable array, as parquet's
    seen = {}
    real = problem_mod.run_kernel

    def spy(submit, *a, **k):  # noqa: ANN001, ANN002, ANN003
        seen["submit"] = submit
        return real(submit, *a, **k)

    monkeypatch.setattr(problem_mod, "run_kernel", spy)
    run_first_fit(prob, "lifo", 0)
    assert seen["submit"] is prob.submit_s
    shuffled = Problem(**{**prob.__dict__, "sort_order": prob.order[::-1].copy()})  # not the input order
    run_first_fit(shuffled, "lifo", 0)
    assert seen["submit"] is not prob.submit_s


@pytest.mark.parametrize("policy", ["ff", "ias", "oracle"])
@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_row_order_changes_no_result(policy: str, engine: str) -> None:
    jobs = _jobs()
    perm = np.random.default_rng(0).permutation(jobs.height)
    cap = random_walk(6, 30_000.0, seed=1, changes_per_hour=2.0, step=0.3)
    with use_engine(engine):
        a = simulate(jobs, cap, 6, 4.0, 30_000.0, policy, seed=0)
        b = simulate(jobs[perm], cap, 6, 4.0, 30_000.0, policy, seed=0)
    assert a.events == b.events  # same schedule; means summed in another row order differ in the last digit
    assert a.metrics == pytest.approx(b.metrics, rel=1e-12, nan_ok=True)
    assert a.jobs.equals(b.jobs.sort("job_id", maintain_order=True).join(
        a.jobs.select("job_id"), on="job_id", how="right").select(a.jobs.columns))  # fmt: skip
