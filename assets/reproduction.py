"""``out_reproduction``: the seeds' headline results next to varcap's (group ``reproduction``).

The asset reads the cached results of the reproduction studies (``repro-*``; simulated by ``varcap
reproduce`` or by materializing the study assets) and the exported sweep inputs, computes one row per
headline and reading (:mod:`studies.reproduction`), and replaces the DuckDB table. A headline whose
scenarios have not run gets a row saying so (``not run: …``); with none run the asset fails.
"""

import time

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from assets.checks import md_table, table_checks
from assets.raw import POOL
from assets.schema import OUT_REPRODUCTION
from assets.sim import study_asset_name
from assets.warehouse import replace_table
from studies import reproduction as repro


class ReproductionConfig(dg.Config):
    profile: str = "full"  # full | quick


@dg.asset(
    group_name="reproduction",
    pool=POOL,
    kinds={"duckdb"},
    deps=["out_sim_inputs", "out_harmony_results", *(study_asset_name(n) for n in repro.studies())],
    code_version="1",
    description="One row per seed headline (and reading): paper value, varcap mean ± 95 % CI over "
    "replicates, acceptance band, within_band, explanation. `varcap reproduce [--quick]`.",
)
def out_reproduction(config: ReproductionConfig, duckdb: DuckDBResource) -> dg.MaterializeResult:
    if config.profile not in repro.PROFILES:
        raise dg.Failure(f"profile must be one of {sorted(repro.PROFILES)}, got {config.profile!r}")
    pr = repro.PROFILES[config.profile]
    t0 = time.perf_counter()
    try:
        df = repro.reproduction_rows(pr, repro.load_profile_runs(pr))
    except repro.MissingRuns as e:
        raise dg.Failure(
            f"{e}; run `varcap reproduce{' --quick' if pr.name == 'quick' else ''}` first"
        ) from e
    with duckdb.get_connection() as conn:
        # rows of the other profile stay (the table holds the latest full and quick results side by side)
        exists = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'out_reproduction'"
        ).fetchall()[0][0]  # fetchall: DuckDB 2 refuses the next query while a result is unfinished
        other = (
            conn.sql("SELECT * FROM out_reproduction WHERE profile <> ?", params=[pr.name]).pl()
            if exists
            else None
        )
        table = (
            df.vstack(other.select(df.columns))
            if other is not None and set(other.columns) == set(df.columns)
            else df
        )
        # a headline whose scenarios have not run has no value: NULL, not NaN (the finiteness range check)
        table = table.with_columns(pl.col(pl.Float64).fill_nan(None))
        replace_table(conn, OUT_REPRODUCTION, table)
    main = df.filter(~df["headline_id"].str.contains("@"))
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": df.height,
            "profile": pr.name,
            "headlines": main.height,
            "within_band": int(main["within_band"].sum()),
            "seconds": round(time.perf_counter() - t0, 2),
            "table": md_table(
                main.select("headline_id", "anchor_value", "varcap_mean", "ci_low", "ci_high", "within_band")
            ),
        }
    )


reproduction_assets = [out_reproduction]
reproduction_checks = table_checks(OUT_REPRODUCTION, out_reproduction, prefixed=True)
