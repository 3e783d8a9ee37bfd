"""``out_reproduction`` and ``out_study_results``: the papers' headline results next to varcap's (group
``reproduction``), and the reproduction studies' result rows the chapters read, both partitioned by profile.

Both assets have one partition per reproduction profile (``quick``, ``full``). A reproduction study's asset
holds both profiles (its partition keys begin with the profile: ``quick/…``, ``full/…``), and each of its
partitions is upstream of its own profile's partition only (:func:`profile_study_deps`), so after ``varcap
run`` the ``quick`` partitions and everything upstream of them are materialized, and ``varcap reproduce``
materializes the ``full`` ones.

``out_reproduction`` reads the cached results of the reproduction studies (``repro-*``; simulated by ``varcap
reproduce`` or by materializing the study assets) and the exported sweep inputs, computes one row per
headline and reading (:mod:`studies.reproduction`), and replaces the DuckDB table. A headline whose
scenarios have not run gets a row saying so (``not run: …``); with none run the asset fails.
"""

import time
from collections.abc import Callable

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from assets.checks import md_table, table_checks
from assets.raw import POOL
from assets.schema import OUT_REPRODUCTION, OUT_REPRODUCTION_INSTANCES, OUT_STUDY_RESULTS
from assets.sim import study_asset_name, study_partition_keys
from assets.warehouse import other_profile_rows, replace_profile_rows, replace_table
from studies import generalization_claims, sweep
from studies import reproduction as repro

#: one partition per reproduction profile (``quick``: ``varcap run``; ``full``: ``varcap reproduce``)
PROFILE_PARTITIONS = dg.StaticPartitionsDefinition(list(repro.PROFILES))


def profile_study_deps(bases: list[str] | tuple[str, ...]) -> list[dg.AssetDep]:
    """Dependencies of a profile-partitioned asset on the study assets of ``bases`` (reproduction study
    names without profile): each study partition maps to the partition of its profile, so partition
    ``quick`` depends on exactly the quick studies' scenarios."""
    deps = []
    for base in bases:
        mapping = {
            k: pr.name
            for pr in repro.PROFILES.values()
            for k in study_partition_keys(repro.study_name(base, pr))
        }
        asset = study_asset_name(repro.study_name(base, repro.FULL))
        deps.append(dg.AssetDep(asset, partition_mapping=dg.StaticPartitionMapping(mapping)))
    return deps


def results_of(ids: list[str], pr: repro.Profile, warn: Callable[[str], None], what: str) -> pl.DataFrame:
    """``out_study_results`` rows (profile ``pr``) of the cached runs of scenarios ``ids``; a run directory
    that cannot be used is reported through ``warn``. ``dg.Failure`` naming the command if none has run."""
    found, problems = sweep.scan_runs(ids)
    for msg in problems:
        warn(msg)
    if not found:
        raise dg.Failure(
            f"no runs of the {pr.name} {what}: run `varcap {'run' if pr.name == 'quick' else 'reproduce'}` first"
        )
    df = sweep.results_frame(found).with_columns(pl.lit(pr.name).alias("profile"))
    return df.select(OUT_STUDY_RESULTS.column_names)


def _profile(context: dg.AssetExecutionContext) -> repro.Profile:
    """The profile of the partition being materialized (``Failure`` naming the known ones)."""
    name = context.partition_key
    if name not in repro.PROFILES:
        raise dg.Failure(f"profile must be one of {sorted(repro.PROFILES)}, got {name!r}")
    return repro.PROFILES[name]


@dg.asset(
    group_name="reproduction",
    pool=POOL,
    kinds={"duckdb"},
    partitions_def=PROFILE_PARTITIONS,
    deps=["out_sim_inputs", *profile_study_deps(list(repro.study_builders()))],  # + the chapters' studies
    code_version="1",
    description="The reproduction studies' (and the chapters' studies, studies.reproduction.CHAPTER_STUDY_BUILDERS) "
    "rows of out_sim_results for one profile (partition quick or full), read from the runs of exactly that "
    "profile's study partitions: what the chapter reports read.",
)
def out_study_results(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> dg.MaterializeResult:
    pr = _profile(context)
    ids = list(dict.fromkeys(s.id for s in repro.profile_scenarios(pr)))
    df = results_of(ids, pr, context.log.warning, "reproduction studies")
    ran = df.height  # one row per scenario run
    with duckdb.get_connection() as conn:
        other = other_profile_rows(conn, OUT_STUDY_RESULTS.name, pr.name)
        if other is not None and other.height and other.columns == df.columns:
            # DuckDB reads timestamps back in its own zone name (Etc/UTC): the same instants in df's zone
            tz = [pl.col(c).dt.convert_time_zone(t.time_zone) for c, t in df.schema.items()
                  if isinstance(t, pl.Datetime) and t.time_zone]  # fmt: skip
            df = pl.concat([df, other.with_columns(tz)], how="vertical_relaxed")
        replace_table(conn, OUT_STUDY_RESULTS, df)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": df.height,
            "profile": pr.name,
            "scenarios": ran,
            "of_profile": len(ids),
        }
    )


@dg.asset(
    group_name="reproduction",
    pool=POOL,
    kinds={"duckdb"},
    partitions_def=PROFILE_PARTITIONS,
    deps=["out_sim_inputs", "out_harmony_results", *profile_study_deps(list(repro.STUDY_BUILDERS))],
    code_version="1",
    description="One row per paper headline (and reading): paper value, varcap mean ± 95 % CI over "
    "replicates, acceptance band, within_band, explanation; one partition per profile. "
    "`varcap reproduce [--quick]`.",
)
def out_reproduction(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> dg.MaterializeResult:
    pr = _profile(context)
    t0 = time.perf_counter()
    try:
        df = repro.reproduction_rows(pr, repro.load_profile_runs(pr))
    except repro.MissingRuns as e:
        raise dg.Failure(
            f"{e}; run `varcap reproduce{' --quick' if pr.name == 'quick' else ''}` first"
        ) from e
    with duckdb.get_connection() as conn:
        # rows of the other profile stay (the table holds the latest full and quick results side by side)
        other = other_profile_rows(conn, OUT_REPRODUCTION.name, pr.name)
        table = df if other is None else df.vstack(_as_current(other, df))
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
            "not_tested": int((main["verdict"] == "not tested").sum()),
            "seconds": round(time.perf_counter() - t0, 2),
            "table": md_table(
                main.select("headline_id", "anchor_value", "varcap_mean", "ci_low", "ci_high", "within_band")
            ),
        }
    )


def _as_current(other: pl.DataFrame, df: pl.DataFrame) -> pl.DataFrame:
    """Rows another profile wrote before, in ``df``'s columns: headline ids under their current names
    (:func:`studies.provenance.current_id`), a column the older table lacks empty (text), 0 (a count
    ``n_…``) or null."""
    from studies.provenance import current_id

    other = other.with_columns(pl.col("headline_id").map_elements(current_id, return_dtype=pl.Utf8))
    cols = []
    for c, t in df.schema.items():
        if c in other.columns:
            cols.append(pl.col(c).cast(t))
        else:
            # a count the older table did not keep (e.g. n_not_run before budgets): none then
            blank = "" if t == pl.Utf8 else 0 if c.startswith("n_") and t.is_integer() else None
            cols.append(pl.lit(blank, dtype=t).alias(c))
    return other.select(cols)


@dg.asset(
    group_name="reproduction",
    pool=POOL,
    kinds={"duckdb"},
    partitions_def=PROFILE_PARTITIONS,
    deps=["out_sim_inputs", *profile_study_deps(list(generalization_claims.STUDY_BUILDERS))],
    code_version="1",
    description="Per central claim and generated instance: both arms' results, decisive or why not, and "
    "whether the claim holds (studies/generalization_claims/); one partition per profile. The "
    "out_reproduction rows ending in -generalization are the share of decisive instances that hold.",
)
def out_reproduction_instances(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource
) -> dg.MaterializeResult:
    pr = _profile(context)
    df = generalization_claims.instance_table(pr, repro.load_profile_runs(pr))
    with duckdb.get_connection() as conn:
        replace_profile_rows(conn, OUT_REPRODUCTION_INSTANCES, df, pr.name)
    dec = df.filter(pl.col("decisive"))
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": df.height,
            "profile": pr.name,
            "decisive": dec.height,
            "holds": int(dec["holds"].sum()) if dec.height else 0,
        }
    )


reproduction_assets = [out_study_results, out_reproduction, out_reproduction_instances]
reproduction_checks = [
    *table_checks(OUT_STUDY_RESULTS, out_study_results, prefixed=True),
    *table_checks(OUT_REPRODUCTION, out_reproduction, prefixed=True),
    *table_checks(OUT_REPRODUCTION_INSTANCES, out_reproduction_instances, prefixed=True),
]
