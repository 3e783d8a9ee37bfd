"""analysis/: pure functions on tiny frames (statistics exact, charts carry titles, units and captions and
render offline), and the fixed chart defects (no stacked bars, readable small values, colour from 0)."""

from __future__ import annotations

import json

import duckdb
import polars as pl
import pytest

from analysis import capacity, ias, reproduction, slacksched, variable_capacity, zhang_chien
from analysis.charts import policy_comparison, sweep_grid
from analysis.results import coverage, mean_ci, pick_profile, study_results
from analysis.style import finish, to_png
from studies.reproduction import FIGURES


def _png_ok(chart) -> None:
    png = to_png(chart, scale=1)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000


def _spec(chart) -> dict:
    return chart.to_dict()


def _res(keys: list[list], **cols) -> pl.DataFrame:
    """A frame shaped like study_results: key (list of strings), replicate and metric columns."""
    return pl.DataFrame(
        {
            "key": [[str(k) for k in key] for key in keys],
            "replicate": [int(key[-1]) for key in keys],
            **cols,
        }
    )


def test_finish_adds_caption_and_lifts_label_limits() -> None:
    import altair as alt

    c = alt.Chart(pl.DataFrame({"x": [1, 2], "y": [3, 4]}).to_pandas()).mark_line().encode(x="x:Q", y="y:Q")
    d = _spec(finish(c, "T", "a caption " * 30))
    assert d["title"]["text"] == "T" and len(d["title"]["subtitle"]) >= 2
    assert d["config"]["legend"]["labelLimit"] == 0 and d["config"]["axis"]["labelLimit"] == 0


def test_policy_comparison_averages_instead_of_stacking() -> None:
    df = pl.DataFrame(
        {
            "workload": ["azure"] * 4,
            "policy": ["ff", "ff", "ias", "ias"],
            "terminations": [10, 20, 1, 3],
            "goodput": [0.0718, 0.0714, 0.07, 0.06],
        }
    )
    d = _spec(policy_comparison(df))
    rows = next(iter(d["datasets"].values()))
    ff = [r for r in rows if r["policy"] == "ff"]
    assert len(ff) == 1  # one bar per policy: the two ff rows are not stacked
    assert ff[0]["goodput"] == pytest.approx(0.0716) and ff[0]["terminations"] == 15
    assert ff[0]["goodput_max"] == pytest.approx(0.0718) and ff[0]["runs"] == 2
    _png_ok(policy_comparison(df))
    two = pl.concat([df, df.with_columns(pl.lit("borg").alias("workload"))])
    _png_ok(policy_comparison(two))


def test_sweep_grid_shows_small_values_and_colour_starts_at_zero() -> None:
    df = pl.DataFrame(
        {
            "workload": ["azure"] * 4,
            "policy": ["ff"] * 4,
            "changes_per_hour": [1.0, 1.0, 8.0, 8.0],
            "step": [0.15, 0.6, 0.15, 0.6],
            "wasted_fraction": [0.003, 0.0042, 0.01, 0.02],
        }
    )
    d = json.dumps(_spec(sweep_grid(df)))
    assert '".3~r"' in d  # 0.003 renders as "0.003", not "0.00"
    assert '"domainMin": 0' in d
    _png_ok(sweep_grid(df))


def test_mean_ci() -> None:
    df = pl.DataFrame({"g": ["a", "a", "a", "b"], "v": [1.0, 2.0, 3.0, 5.0]})
    out = mean_ci(df, ["g"], "v")
    a = out.filter(pl.col("g") == "a").row(0, named=True)
    assert a["mean"] == 2.0 and a["n"] == 3
    assert a["hi"] - a["mean"] == pytest.approx(1.96 * 1.0 / 3**0.5)
    b = out.filter(pl.col("g") == "b").row(0, named=True)
    assert b["lo"] == b["hi"] == 5.0  # one replicate: the interval is the mean


def test_results_tables_profile_pick_and_join() -> None:
    con = duckdb.connect()
    assert coverage(con, ["s"]) == {}
    with pytest.raises(LookupError, match="varcap run"):
        study_results(con, "s", "quick")
    con.sql(
        "CREATE TABLE out_study_scenarios AS SELECT * FROM (VALUES "
        "('s-quick', 's', 'quick', 'a', '[\"x\", 1.0, 0]', 0), ('s', 's', 'full', 'b', '[\"x\", 1.0, 0]', 0),"
        "('s', 's', 'full', 'c', '[\"x\", 2.0, 0]', 0)) t(study, base_study, profile, scenario_id, key_json, replicate)"
    )
    con.sql(
        "CREATE TABLE out_study_results AS SELECT * FROM (VALUES ('quick', 'a', 0.5), ('full', 'b', 0.6), "
        "('quick', 'c', 0.7)) t(profile, scenario_id, goodput)"
    )
    # a row of another profile does not count: c ran in quick only
    assert coverage(con, ["s"]) == {"quick": 1.0, "full": 0.5}
    assert pick_profile(con, ["s"]) == "quick"  # full incomplete
    con.sql("INSERT INTO out_study_results VALUES ('full', 'c', 0.7)")
    assert pick_profile(con, ["s"]) == "full"
    assert pick_profile(con, ["s"], "quick") == "quick"
    with pytest.raises(ValueError, match="unknown profile"):
        pick_profile(con, ["s"], "huge")
    r = study_results(con, "s", "full")
    assert r.height == 2 and r["key"].to_list() == [["x", "1.0", "0"], ["x", "2.0", "0"]]


def test_ch4_frame_and_charts() -> None:
    keys, good, terms, caps = [], [], [], []
    for wl in ("azure", "borg2011-native"):
        for r in (0, 1):
            keys.append([wl, "fixed", r])
            caps.append(json.dumps({"kind": "constant", "fraction": 0.7}))
            good.append(0.8)
            terms.append(0)
            for f, s in ((1.0, 0.15), (8.0, 0.15), (1.0, 0.6)):
                keys.append([wl, f, s, r])
                caps.append(json.dumps({"kind": "random_walk", "changes_per_hour": f, "step": s, "seed": r}))
                good.append(0.7 - 0.01 * f - r * 0.01)
                terms.append(int(10 * f))
    n = len(keys)
    res = _res(
        keys,
        capacity_json=caps,
        workload=[k[0] for k in keys],
        goodput=good,
        terminations=terms,
        latency_p50_s=[60.0] * n,
        latency_p90_s=[600.0] * n,
        latency_p99_s=[6000.0] * n,
    )
    df = variable_capacity.ch4_frame(res)
    assert df.filter(pl.col("fixed")).height == 4 and df.filter(pl.col("fixed"))["step"].null_count() == 4
    assert set(df["workload_name"]) == {"Azure", "Borg"}
    ch = variable_capacity.metric_vs(df, "goodput", "changes_per_hour", "goodput (fraction)", "T", "C")
    data = next(iter(_spec(ch)["datasets"].values()))
    az8 = [d for d in data if d["workload_name"] == "Azure" and d["x"] == 8.0][0]
    assert az8["mean"] == pytest.approx(0.7 - 0.08 - 0.005) and az8["fixed_mean"] == pytest.approx(0.8)
    assert "log scale" in json.dumps(_spec(ch))
    _png_ok(ch)
    _png_ok(variable_capacity.latency_vs(df, "step"))


def test_table_6_2_cut_and_goodput() -> None:
    keys = [["zipf-1.5", "ff", 0], ["zipf-1.5", "ias", 0], ["zipf-1.5", "ff", 1], ["zipf-1.5", "ias", 1]]
    res = _res(
        keys,
        workload=["zipf-1.5"] * 4,
        policy=[k[1] for k in keys],
        settings_json=["{}", '{"aggressiveness": "0.6"}'] * 2,
        terminations=[100, 25, 200, 100],
        goodput=[0.5, 0.52, 0.5, 0.5],
    )
    tab = ias.table_6_2(res, **FIGURES["ch6_ias"])  # the thesis' values, as the report asset passes them
    row = tab.row(0, named=True)
    assert row["terminations_cut_pct"] == pytest.approx(100 * (1 - 62.5 / 150))  # cut of the means
    assert row["cut_pct_mean_of_replicates"] == pytest.approx((75 + 50) / 2)
    assert row["goodput_diff_pp"] == pytest.approx(1.0)
    assert row["paper_cut_pct"] == 74.93 and row["paper_goodput_pp"] == 2.02
    _png_ok(ias.table_6_2_chart(tab))
    _png_ok(ias.goodput_chart(tab))


def test_slacksched_jct_and_reduction() -> None:
    tasks = pl.DataFrame(
        {
            "job_id": ["g0-t0", "g0-t1", "g1-t0"],
            "submit_s": [0.0, 0.0, 10.0],
            "end_s": [50.0, 100.0, 30.0],
            "status": ["completed", "completed", "requeued"],
        }
    )
    j = slacksched.job_jct(tasks)
    assert j.filter(pl.col("group") == 0)["jct_s"][0] == 100.0
    assert not j.filter(pl.col("group") == 1)["complete"][0]
    with pytest.raises(ValueError, match="g<job>-t<task>"):
        slacksched.job_jct(tasks.with_columns(pl.lit("x").alias("job_id")))
    jct = pl.DataFrame(
        {
            "group": [0, 1, 0, 1],
            "jct_s": [100.0, 200.0, 50.0, 150.0],
            "scheduler": ["CapacityScheduler"] * 2 + ["SlackSched"] * 2,
            "replicate": [0] * 4,
        }
    )
    red = slacksched.reductions(jct).row(0, named=True)
    assert red["mean"] == pytest.approx(100 * (1 - 100 / 150))
    _png_ok(slacksched.cdf_chart(jct))
    _png_ok(slacksched.reduction_chart(slacksched.reductions(jct), **FIGURES["slacksched"]))


def _study_res(build, profile_name: str = "quick") -> pl.DataFrame:
    """A frame shaped like study_results for every scenario of a real study builder (so a change of the
    builder's key shape cannot hide from the analyses); goodput falls with the scenario's hash."""
    from studies import reproduction as repro

    rows = []
    for i, (key, sc) in enumerate(build(repro.PROFILES[profile_name]).items()):
        p = sc.params()
        rows.append(
            {
                "key": [str(k) for k in key],
                "replicate": int(key[-1]),
                "scenario_id": sc.id,
                "workload": p["workload"],
                "policy": p["policy"],
                "capacity_json": json.dumps(p["capacity"], sort_keys=True),
                "settings_json": json.dumps(p["settings"], sort_keys=True),
                "goodput": 0.5 + 0.01 * (i % 7),
                "goodput_partial": 0.5 + 0.01 * (i % 5),
                "terminations": float(i % 11),
                "aborted_volume": 0.01,
                "max_stretch": 2.0,
            }
        )
    return pl.DataFrame(rows)


def _texts(spec: object) -> list[str]:
    """Every string in a chart spec (titles, subtitles, data values)."""
    if isinstance(spec, dict):
        return [t for v in spec.values() for t in _texts(v)]
    if isinstance(spec, list):
        return [t for v in spec for t in _texts(v)]
    return [spec] if isinstance(spec, str) else []


def _data_values(spec: dict, field: str) -> set:
    out = set()
    for rows in spec.get("datasets", {}).values():
        out |= {r.get(field) for r in rows if field in r}
    return out


def test_zhang_chien_decline() -> None:
    def row(cap: dict, settings: dict, goodput: float, terms: int, r: int = 0) -> dict:
        return {
            "key": ["x", str(r)],
            "replicate": r,
            "capacity_json": json.dumps(cap),
            "settings_json": json.dumps(settings),
            "goodput": goodput,
            "terminations": terms,
        }

    pool = {"kind": "pool", "of": {"kind": "random_walk"}}
    res = pl.DataFrame(
        [
            row({"kind": "constant", "fraction": 0.7}, {}, 0.8, 0),
            row(pool, {"termination": "lifo-fail"}, 0.6, 5),
            row(pool, {"termination": "random-fail"}, 0.4, 9),
            row(pool, {"termination": "lww-fail"}, 0.7, 3),
            row(pool, {"termination": "lfd-fail"}, 0.6, 4),
            row({"kind": "random_walk"}, {"termination": "lww"}, 0.1, 30),  # machines-requeue: not shown
        ]
    )
    d = zhang_chien.decline(res)
    assert dict(zip(d["termination"], d["decline_pct"], strict=True)) == pytest.approx(
        {"Random": 50.0, "LWW": 12.5, "LFD": 25.0}
    )
    f = zhang_chien.frame(res)
    assert f["reading"].to_list() == [
        None,
        "pool-fail",
        "pool-fail",
        "pool-fail",
        "pool-fail",
        "machines-requeue",
    ]
    _png_ok(zhang_chien.policy_chart(res))


def _scrambled(res: pl.DataFrame) -> pl.DataFrame:
    """The same rows with one more element at the front of the builder key: an analysis that reads a key
    position gets another field (the replicate stays last, as study_results gives it)."""
    return res.with_columns(pl.concat_list(pl.lit("extra"), pl.col("key")).alias("key"))


@pytest.mark.parametrize("profile_name", ["quick", "full"])
def test_ch6_variants_are_read_by_name_on_the_real_studies(profile_name: str) -> None:
    """Every ch. 6 and generic-instance run gets the builder's variant name from its policy and settings,
    whatever the key's shape (a position read fails on the shifted keys)."""
    from studies.thesis import ZIPFS, ch6_scenarios, generic_scenarios

    for build in (ch6_scenarios, generic_scenarios):
        res = _study_res(build, profile_name)
        want = [k[1] for k in res["key"]]  # the builders' variant names, [workload, variant, r]
        assert ias.variants(_scrambled(res))["variant"].to_list() == want
    tab = ias.table_6_2(_scrambled(_study_res(ch6_scenarios, profile_name)))
    assert set(tab["workload"]) == {*ZIPFS, "azure"}


@pytest.mark.parametrize("profile_name", ["quick", "full"])
def test_ch4_and_grid_fields_are_read_by_name_on_the_real_studies(profile_name: str) -> None:
    from studies.thesis import ch4_scenarios, grid_scenarios

    res = _study_res(ch4_scenarios, profile_name)
    df = variable_capacity.ch4_frame(_scrambled(res))
    for key, row in zip(res["key"], df.iter_rows(named=True), strict=True):
        if key[1] == "fixed":
            assert row["fixed"] and row["changes_per_hour"] is None and row["step"] is None
        else:
            assert not row["fixed"]
            assert (row["changes_per_hour"], row["step"]) == (float(key[1]), float(key[2]))
    g = variable_capacity.grid_frame(_scrambled(_study_res(grid_scenarios, profile_name)))
    assert g["grid"].to_list() == [k[0] for k in _study_res(grid_scenarios, profile_name)["key"]]
    assert None not in set(g["grid"]) and "fixed" in set(g["grid"])


def test_zhang_chien_chart_shows_the_papers_policies_on_the_real_study() -> None:
    """Seed 003 §5.3 compares Random, LFD and LWW (Fig. 11) against no variation: no model-variant or LIFO
    category, no null one, whatever the builder's key looks like."""
    from studies.zhang_chien.scenarios import zc_scenarios

    res = _study_res(zc_scenarios)
    spec = _spec(zhang_chien.policy_chart(res))
    cats = _data_values(spec, "termination")
    assert cats == {"no variation", "Random", "LFD", "LWW"}, cats
    assert None not in _data_values(spec, "mean")
    d = zhang_chien.decline(res)
    assert set(d["termination"]) == {"Random", "LFD", "LWW"} and set(d["reading"]) == {"pool-fail"}


def test_riskaware_boxplots_facet_by_m_ra_and_name_the_study_workload() -> None:
    """Seed 001's box plots: one facet per M_ra the study runs (never "null"), a caption naming the
    workload the study runs (SyntheticUniform) and no other, the paper's three schedulers."""
    from analysis import riskaware
    from studies import reproduction as repro
    from studies.riskaware.scenarios import ra_scenarios

    for name in ("quick", "full"):
        res = _study_res(ra_scenarios, name)
        spec = _spec(riskaware.boxplots(res))
        facets = _data_values(spec, "m_ra")
        assert facets == set(repro.PROFILES[name].ra_mra), facets
        assert None not in facets and "null" not in {str(f) for f in facets}
        assert _data_values(spec, "scheduler") == {"FirstFitAware", "TargetASAP", "PackedTargetASAP"}
        text = " ".join(_texts(spec.get("title", {})))
        assert "SyntheticUniform" in text
        for wl in ("Borg", "Azure", "Alibaba", "PAI", "Mustang"):
            assert wl not in text, f"caption names {wl}, which the study does not run"
    _png_ok(riskaware.boxplots(res))
    with pytest.raises(ValueError, match="no runs"):
        riskaware.boxplots(res, workload="borg2011")


def test_reproduction_positions_on_the_band_scale() -> None:
    df = pl.DataFrame(
        {
            "headline_id": ["a", "b", "c"],
            "section": ["s"] * 3,
            "unit": ["%"] * 3,
            "anchor_value": [20.0, 1.0, 5.0],
            "varcap_mean": [15.0, 100.0, float("nan")],
            "ci_low": [10.0, 90.0, float("nan")],
            "ci_high": [20.0, 110.0, float("nan")],
            "band_low": [10.0, 0.0, 0.0],
            "band_high": [30.0, 2.0, 10.0],
            "within_band": [True, False, False],
        }
    )
    n = reproduction.normalized(df)
    assert n["pos"].to_list()[:2] == [0.25, 2.5]  # b is clipped to the axis end
    assert n["ran"].to_list() == [True, True, False]
    _png_ok(reproduction.bands_chart(df))


def test_capacity_distribution_is_time_weighted() -> None:
    pts = pl.DataFrame({"trace_id": ["carbon-X-s-m"] * 2, "time_s": [0.0, 3600.0], "machines_alive": [10, 5]})
    d = capacity.capacity_distribution(pts, {"carbon-X-s-m": 10}, {"carbon-X-s-m": 4 * 3600.0})
    shares = dict(zip(d["capacity"], d["share"], strict=True))
    assert shares == pytest.approx({0.95: 0.25, 0.5: 0.75})  # 1 h at full, 3 h at half
    assert set(d["grid"]) == {"X"}
    _png_ok(capacity.capacity_histogram(d))


def test_workload_table_pairs_varcap_with_paper() -> None:
    stats = pl.DataFrame(
        {
            "workload": ["azure", "zipf-1.5"],
            "source": ["core_jobs", "sim.workloads.generators.zipf_workload"],
            "jobs": [10, 20],
            **{f"duration_{s}_h": [1.0, 2.0] for s in ("mean", "p50", "p90", "p95")},
            **{f"paper_duration_{s}_h": [60.0, 11.73] for s in ("mean", "p50", "p90", "p95")},
        }
    )
    t = capacity.workload_table(stats)
    assert set(t["workload"]) == {"azure"} and t.height == 4
    z = variable_capacity.zipf_table(stats)
    assert z["workload"].to_list() == ["zipf-1.5"]
    _png_ok(variable_capacity.zipf_scatter(stats))
