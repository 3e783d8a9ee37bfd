"""Is the lineage of every rendered report green? ``python -m pipelines.lineage`` (after ``make run``).

For each report asset (``report_*``) and each of its materialized partitions (a reproduction profile; an
unpartitioned report once), walk every asset upstream of it through Dagster's asset graph and partition
mappings (a profile partition reaches only that profile's study partitions) and check in the instance
(``$DAGSTER_HOME``) that each upstream asset partition has a materialization. Prints one line per report
partition — upstream assets, upstream partitions, missing ones — and exits 1 if a report is not
materialized or anything upstream of one is missing.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import dagster as dg


@dataclass
class ReportLineage:
    """What one report partition stands on: ``upstream`` asset → its partitions (``None``: unpartitioned);
    ``missing``: upstream (asset, partition) pairs with no materialization."""

    report: str
    partition: str | None
    upstream: dict[str, set[str | None]] = field(default_factory=dict)
    missing: list[tuple[str, str | None]] = field(default_factory=list)

    @property
    def partitions(self) -> int:
        return sum(len(v) for v in self.upstream.values())


def _ancestors(graph, key: dg.AssetKey, pk: str | None) -> dict[dg.AssetKey, set[str | None]]:
    """Every (asset, partition) upstream of ``key`` at partition ``pk``, through the partition mappings."""
    out: dict[dg.AssetKey, set[str | None]] = {}
    todo = [(key, pk)]
    seen = {(key, pk)}
    while todo:
        k, p = todo.pop()
        for parent in graph.get_parents_partitions(k, p).parent_partitions:
            item = (parent.asset_key, parent.partition_key)
            if item in seen or not graph.has(parent.asset_key):
                continue
            seen.add(item)
            out.setdefault(parent.asset_key, set()).add(parent.partition_key)
            todo.append(item)
    return out


def report_lineage(
    instance: dg.DagsterInstance, defs: dg.Definitions | None = None
) -> tuple[list[ReportLineage], list[str]]:
    """Per materialized report partition its upstream and what of it is missing, and the report assets
    (or, partitioned, assets with no partition) that were never materialized."""
    if defs is None:
        from pipelines.definitions import defs
    graph = defs.resolve_asset_graph()
    reports = sorted(
        (k for k in graph.get_all_asset_keys() if k.to_user_string().startswith("report_")),
        key=lambda k: k.to_user_string(),
    )
    materialized: dict[dg.AssetKey, set[str] | bool] = {}

    def done(key: dg.AssetKey, pk: str | None) -> bool:
        if key not in materialized:
            materialized[key] = (
                instance.get_materialized_partitions(key)
                if graph.get(key).is_partitioned
                else instance.get_latest_materialization_event(key) is not None
            )
        got = materialized[key]
        return pk in got if isinstance(got, set) else bool(got)

    out, unrendered = [], []
    for key in reports:
        parts = (
            sorted(instance.get_materialized_partitions(key))
            if graph.get(key).is_partitioned
            else ([None] if done(key, None) else [])
        )
        if not parts:
            unrendered.append(key.to_user_string())
        for pk in parts:
            lin = ReportLineage(key.to_user_string(), pk)
            for up, pks in sorted(_ancestors(graph, key, pk).items(), key=lambda t: t[0].to_user_string()):
                name = up.to_user_string()
                lin.upstream[name] = pks
                lin.missing += [(name, p) for p in sorted(pks, key=str) if not done(up, p)]
            out.append(lin)
    return out, unrendered


def main() -> int:
    from pipelines.cli.common import prepare_dagster_home

    prepare_dagster_home()
    lineages, unrendered = report_lineage(dg.DagsterInstance.get())
    bad = bool(unrendered)
    for lin in lineages:
        where = f"{lin.report}[{lin.partition}]" if lin.partition else lin.report
        miss = {}
        for a, _p in lin.missing:
            miss[a] = miss.get(a, 0) + 1
        print(
            f"{where}: {len(lin.upstream)} upstream assets, {lin.partitions} upstream asset partitions, "
            + (
                f"MISSING {sum(miss.values())}: {', '.join(f'{a} ({n})' for a, n in miss.items())}"
                if miss
                else "all materialized"
            )
        )
        bad |= bool(miss)
    if unrendered:
        print(f"never materialized: {', '.join(unrendered)}")
    print("lineage green" if not bad else "lineage NOT green")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
