"""The ``beyond_preemption`` chapter as a report asset: partitioned by profile, each partition
standing on its own profile's ``spot-real`` study partitions, which ``varcap run`` (quick) and ``varcap
reproduce`` (full) materialize."""

from __future__ import annotations

import dagster as dg

from studies import catalogue
from studies.catalogue import study


def test_report_partitions_stand_on_their_profile_of_spot_real() -> None:
    from assets.reports import CHAPTERS
    from pipelines.definitions import defs
    from pipelines.lineage import _ancestors

    (ch,) = [c for c in CHAPTERS if c.name == "beyond_preemption"]
    assert ch.profiled and ch.studies == ("spot-real",)
    graph = defs.resolve_asset_graph()
    key = dg.AssetKey("report_beyond_preemption")
    for profile, mine, other in (
        ("quick", "spot-real-quick", "spot-real"),
        ("full", "spot-real", "spot-real-quick"),
    ):
        up = {k.to_user_string(): v for k, v in _ancestors(graph, key, profile).items()}
        # one asset holds both profiles; the profile's partition reaches only its own partitions
        assert up["out_sim__spot_real"] == set(catalogue.partition_keys(mine).values()), profile
        assert not set(catalogue.partition_keys(other).values()) & up["out_sim__spot_real"]
        # its own studies' runs, not the table of every study's (tests/test_report_lineage.py)
        assert "out_study_results" not in up and "out_sim_results" not in up
        assert {"core_spot_availability", "out_study_scenarios"} <= set(up)


def test_varcap_run_and_reproduce_materialize_spot_real() -> None:
    """``varcap run``'s quick studies and ``varcap reproduce``'s full ones include spot-real; its rows are
    in ``out_study_results`` (``profile_scenarios``) and its keys in ``out_study_scenarios``."""
    from assets.reports import study_membership
    from pipelines.cli.run import quick_studies
    from studies import reproduction as repro

    assert "spot-real-quick" in quick_studies()
    assert "spot-real" in repro.profile_studies(repro.FULL)
    quick = {s.id for s in study("spot-real-quick")}
    assert quick <= {s.id for s in repro.profile_scenarios(repro.QUICK)}
    m = study_membership([repro.QUICK])
    spot = m.filter(m["base_study"] == "spot-real")
    assert set(spot["scenario_id"]) == quick and set(spot["replicate"]) == {0, 1, 2}
