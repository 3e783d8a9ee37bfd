"""``out_thesis_ias_instances``: ``ias`` and ``ias-general`` against First-Fit per instance of the thesis'
studies ``thesis-ias-observed`` (observed-grid carbon budgets) and ``thesis-ias-generalization`` (the
reproduction's generated instances), computed from the studies' cached runs (:mod:`studies.thesis.ias_table`);
one partition per reproduction profile, like ``out_reproduction_instances``: partition ``quick`` depends on
the ``-quick`` study assets only (``varcap run``), ``full`` on the full ones (``varcap reproduce``).
"""

import dagster as dg
from dagster_duckdb import DuckDBResource

from assets.checks import md_table, table_checks
from assets.raw import POOL
from assets.reproduction import PROFILE_PARTITIONS, _profile, profile_study_deps
from assets.schema import OUT_THESIS_IAS_INSTANCES
from assets.sim import study_deps
from assets.warehouse import replace_profile_rows
from studies.claims import PROFILES
from studies.thesis import ias_table

#: the exported inputs the table's decisive facts read (the studies' jobs and capacity, rebuilt)
_INPUTS = study_deps([s for pr in PROFILES.values() for s in ias_table.scenarios(pr)])


@dg.asset(
    group_name="reproduction",
    pool=POOL,
    kinds={"duckdb"},
    partitions_def=PROFILE_PARTITIONS,
    deps=[*_INPUTS, *profile_study_deps(list(ias_table.STUDIES))],
    code_version="1",
    description="Per instance of thesis-ias-observed (CAISO, ERCOT, MISO carbon budgets) and "
    "thesis-ias-generalization (generated instances): ias and ias-general against First-Fit — terminations, "
    "cut, goodput difference, decisive or why not, whether thesis §6.2's claim holds; from the studies' "
    "cached runs, one partition per profile (studies/thesis/ias_table.py).",
)
def out_thesis_ias_instances(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource
) -> dg.MaterializeResult:
    pr = _profile(context)
    try:
        df, missing = ias_table.instance_table(pr, ias_table.load_runs(pr))
    except (FileNotFoundError, ValueError) as e:
        raise dg.Failure(f"out_thesis_ias_instances ({pr.name}): {e}") from e
    if missing:
        names = ", ".join(ias_table.study_name(s, pr.name) for s in ias_table.STUDIES)
        msg = f"{len(missing)} scenario(s) of {names} have not run; their instances are left out"
        # like out_reproduction_instances: a partition of studies not run yet is empty, not a failure
        context.log.warning(f"{msg} (`varcap {'run' if pr.name == 'quick' else 'reproduce'}` runs them)")
    with duckdb.get_connection() as conn:
        replace_profile_rows(conn, OUT_THESIS_IAS_INSTANCES, df, pr.name)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": df.height,
            "profile": pr.name,
            "missing_scenarios": len(missing),
            "shares": md_table(ias_table.shares(df)),
        }
    )


thesis_assets = [out_thesis_ias_instances]
thesis_checks = [*table_checks(OUT_THESIS_IAS_INSTANCES, out_thesis_ias_instances)]
