"""The ``harmony`` asset group materializes on a small warehouse and its checks pass."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import numpy as np
import polars as pl
import pytest

from assets.harmony import harmony_assets, harmony_checks
from assets.resources import default_resources
from assets.schema import CORE_JOBS
from assets.warehouse import write_tables


def _core_jobs(n: int = 1500, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "workload": ["borg2011"] * n,
            "job_id": [f"j{i}" for i in range(n)],
            "submit_s": np.sort(rng.uniform(1, 2 * 3600, n)),
            "duration_s": rng.exponential(600, n) + 1,
            "cores": [None] * n,  # borg2011 publishes no vCPU: the request is cpu_request_norm
            "cpu_request_norm": rng.uniform(0.005, 0.3, n),
            "memory_gb": [None] * n,
            "memory_norm": rng.uniform(0.005, 0.2, n),
            "priority": rng.choice([0, 2, 9], n),
            "job_class": ["finish"] * n,
            "censored": [False] * n,
            "left_truncated": [False] * n,
            "source_file": ["synthetic"] * n,
            "line": np.arange(1, n + 1),  # 1-based (core_jobs rule line_positive)
        }
    )


def _results_meta(res: dg.ExecuteInProcessResult) -> dict:
    """Metadata of the out_harmony_results table's materialization (its op also writes the intervals)."""
    (m,) = [
        m
        for m in res.asset_materializations_for_node("out_harmony_results")
        if m.asset_key.to_user_string() == "out_harmony_results"
    ]
    return m.metadata


@pytest.mark.slow  # ~30 s on 2 busy cores: K-means, ARIMA fits and three simulations (numba compiled once)
def test_harmony_group_materializes(warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    with duckdb.connect(str(warehouse)) as con:
        write_tables(con, [(CORE_JOBS, _core_jobs())])
    res = dg.materialize(
        [*harmony_assets, *harmony_checks],
        resources=default_resources(),
        run_config={
            "ops": {
                "out_harmony_task_classes": {"config": {"k_max": 3}},
                "out_harmony_results": {"config": {"study": "harmony-smoke"}},
            }
        },
        raise_on_error=False,
    )
    assert res.success
    checks = res.get_asset_check_evaluations()
    assert checks and all(c.passed for c in checks), [c.check_name for c in checks if not c.passed]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        r = con.sql(
            "SELECT scheme, energy_kwh, delay_p90_s_all FROM out_harmony_results ORDER BY scheme"
        ).pl()
        assert r["scheme"].to_list() == ["baseline", "cbp", "cbs"]
        assert (r["energy_kwh"] > 0).all()
        n_iv = con.execute("SELECT count(DISTINCT interval) FROM out_harmony_intervals").fetchone()[0]
        assert n_iv == 23  # 2 h of submissions -> the window ends at the last submit (< 7200 s)
    meta = _results_meta(res)
    assert {
        m.asset_key.to_user_string() for m in res.asset_materializations_for_node("out_harmony_results")
    } == {
        "out_harmony_results",
        "out_harmony_intervals",
    }
    assert "cbs_energy_cost_usd_change_pct_vs_baseline" in meta
    # a second materialization reuses the cached runs
    res2 = dg.materialize(
        [*harmony_assets, *harmony_checks],
        resources=default_resources(),
        run_config={"ops": {"out_harmony_results": {"config": {"study": "harmony-smoke"}}}},
        selection=["out_harmony_results", "out_harmony_intervals"],
    )
    assert _results_meta(res2)["cache_hits"].value == 3
    # a study sharing those scenarios (as harmony-headline shares harmony's) adds its rows, keeps the others'
    import studies.harmony.runner as hs

    orig = hs.harmony_scenarios
    monkeypatch.setattr(hs, "HARMONY_STUDIES", (*hs.HARMONY_STUDIES, "smoke-copy"))
    monkeypatch.setattr(
        hs, "harmony_scenarios", lambda n="harmony": orig("harmony-smoke" if n == "smoke-copy" else n)
    )
    res3 = dg.materialize(
        [*harmony_assets, *harmony_checks],
        resources=default_resources(),
        run_config={"ops": {"out_harmony_results": {"config": {"study": "smoke-copy"}}}},
        selection=["out_harmony_results", "out_harmony_intervals"],
    )
    assert all(c.passed for c in res3.get_asset_check_evaluations())
    with duckdb.connect(str(warehouse), read_only=True) as con:
        by = dict(con.execute("SELECT study, count(*) FROM out_harmony_results GROUP BY study").fetchall())
        assert by == {"harmony-smoke": 3, "smoke-copy": 3}
        dup = con.execute(
            "SELECT count(*) FROM (SELECT scenario_id, interval FROM out_harmony_intervals GROUP BY ALL HAVING count(*) > 1)"
        ).fetchone()[0]
        assert dup == 0
