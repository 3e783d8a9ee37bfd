"""Spot availability traces: sample, remote download, core normalization, capacity kind,
IAS without a stable floor, and the spot-real study."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from assets.download import Downloader
from assets.normalize.base import BadFileError, RawFile
from assets.raw import collect_files
from assets.sources import DATASETS
from assets.spot import build_spot
from sim.capacity.kinds import capacity_help
from sim.capacity.spot import COMMIT, TRACES, load_trace, matched_walk, raw_url, resolve, trace_stats
from sim.capacity.trace import CapacitySpec
from tests.httpserver import FixtureServer, Route
from tests.test_sim_engine import random_jobs

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "samples"


def test_sample_traces_are_the_upstream_values() -> None:
    """The three 16-node traces: tick counts, range and the share of time at zero the issue quotes."""
    assert {n: load_trace(n).size for n in TRACES} == {
        "us-east-2b_v100_16": 3247,
        "us-west-2a_v100_16": 4736,
        "us-west-2c_v100_16": 4736,
    }
    s = trace_stats("us-west-2a")
    assert s["min"] == 0.0 and s["max"] == 1.0
    assert s["zero_share"] == pytest.approx(0.5536, abs=1e-4)  # "zero machines 55 % of the time"
    assert raw_url(resolve("us-west-2c")) == (
        f"https://raw.githubusercontent.com/skypilot-org/spot-traces/{COMMIT}/"
        "availability/16-node/aws-08-27-2023/us-west-2c_v100_1.json"
    )
    assert "no licence" in (SAMPLE / "spot" / "README.md").read_text()


def test_capacity_kind_spot() -> None:
    spec = CapacitySpec.parse("spot:us-west-2a")
    assert spec.get("trace") == "us-west-2a" and spec.get("offset_ticks") == 0
    tr = spec.build(32, 20 * 86400.0)
    raw = load_trace("us-west-2a")
    assert tr.period_s == 300.0 and tr.time_s[1] == 300.0
    assert np.array_equal(tr.machines_alive[: raw.size], raw * 2)  # 16 nodes → 32 machines
    assert np.array_equal(tr.machines_alive[raw.size : 2 * raw.size][:10], raw[:10] * 2)  # repeats
    assert "spot[:trace=REQUIRED" in capacity_help()
    with pytest.raises(ValueError, match="unknown spot trace 'eu-west-1a'"):
        CapacitySpec.parse("spot:eu-west-1a").build(16, 86400.0)
    walk = matched_walk("us-west-2a", 3, "shape")
    assert walk["mean"] == pytest.approx(0.4312, abs=1e-4) and walk["seed"] == 3
    assert set(matched_walk("us-west-2a")) == {"kind", "changes_per_hour", "mean", "seed"}


def _json(vals: list[int], gap: int = 300) -> bytes:
    return json.dumps({"metadata": {"gap_seconds": gap}, "data": vals}).encode()


def test_core_normalizes_sample_and_json(tmp_path: Path) -> None:
    f = tmp_path / "us-east-2b_v100_16.json"
    f.write_bytes(_json([0, 3, 17, 16, -1], 600))
    df, rej = build_spot([RawFile(f, "spot/x/us-east-2b_v100_16.json")])
    assert df["available"].to_list() == [0, 3, 16] and df["time_s"].to_list() == [0.0, 600.0, 1800.0]
    assert sorted(rej["line"].to_list()) == [3, 5]
    assert "outside [0, 16]" in rej["reason"][0]
    sample = [RawFile(SAMPLE / "spot" / f"{n}.parquet", f"spot/{n}.parquet") for n in TRACES]
    df, rej = build_spot(sample)
    assert df.height == 3247 + 2 * 4736 and rej.height == 0
    bad = tmp_path / "us-west-2a_v100_16.json"
    bad.write_text("<html>")
    with pytest.raises(BadFileError, match="us-west-2a_v100_16.json"):
        build_spot([RawFile(bad, "spot/us-west-2a_v100_16.json")])
    bad.write_bytes(json.dumps({"data": [1]}).encode())
    with pytest.raises(BadFileError, match="metadata.gap_seconds"):
        build_spot([RawFile(bad, "spot/us-west-2a_v100_16.json")])


def test_remote_download_through_the_client(http_server: FixtureServer, tmp_path: Path) -> None:
    """The raw asset's remote mode fetches each trace from <base>/<commit>/<upstream path>."""
    t = TRACES["us-west-2a_v100_16"]
    http_server.add(f"/r/abc123/{t.path}", Route(_json([1, 2, 16]), "application/json"))
    params = {"base_url": http_server.base + "/r/{commit}", "commit": "abc123", "traces": [t.name]}
    dl = Downloader(tmp_path / "cache", progress=False, sleep=lambda s: None, backoff_s=0.01)
    rows = collect_files(DATASETS["spot_availability"], "remote", params, dl)
    assert [r["name"] for r in rows] == ["spot/abc123/us-west-2a_v100_16.json"]
    df, _ = build_spot([RawFile(Path(rows[0]["path"]), rows[0]["name"])])
    assert df["available"].to_list() == [1, 2, 16]
    with pytest.raises(ValueError, match="unknown spot trace 'nope'"):
        collect_files(DATASETS["spot_availability"], "remote", {"traces": ["nope"]}, dl)


def test_ias_no_floor_reading() -> None:
    """On a pool at zero machines part of the time, H1's p90 split sends big jobs to an empty stable pool
    (they never start); ``no_floor=drop-h1`` judges them by H2 + H4 instead."""
    from sim.api import simulate

    rng = np.random.default_rng(0)
    n = 300
    jobs = random_jobs(rng, n, 5 * 86400.0, 3000.0, 60.0, 4)
    cap = CapacitySpec.parse("spot:us-west-2a").build(16, 6 * 86400.0)
    assert cap.machines_alive.min() == 0
    p90 = simulate(jobs, cap, 16, 8.0, 6 * 86400.0, "ias", {"h1_threshold": "p90"})
    drop = simulate(jobs, cap, 16, 8.0, 6 * 86400.0, "ias", {"h1_threshold": "p90", "no_floor": "drop-h1"})
    h24 = simulate(jobs, cap, 16, 8.0, 6 * 86400.0, "ias-h2+h4")
    assert p90.metrics["jobs_not_scheduled"] >= 25  # the big tenth never starts
    assert drop.metrics["jobs_not_scheduled"] < p90.metrics["jobs_not_scheduled"]
    assert drop.metrics == h24.metrics
    with pytest.raises(ValueError, match="no_floor"):
        simulate(jobs, cap, 16, 8.0, 6 * 86400.0, "ias", {"no_floor": "maybe"})


def test_spot_real_study_shape() -> None:
    from studies.catalogue import study

    sc = study("spot-real")
    kinds = {s.capacity["kind"] for s in sc}
    assert kinds == {"spot", "random_walk"}
    ck = [s for s in sc if "checkpoint_interval_s" in s.settings]
    assert {s.settings["checkpoint_interval_s"] for s in ck} == {"300", "900", "1800", "3600", "7200"}
    assert len({s.id for s in sc}) == len(sc) == 252
    # the quick profile (`varcap run`): 7 days, the rate walk, no oracle, three intervals; keys name the runs
    from studies.beyond_preemption import spot_scenarios
    from studies.claims import QUICK

    quick = spot_scenarios(QUICK)
    assert len(study("spot-real-quick")) == len(quick) == 144
    assert {s.horizon_days for s in quick.values()} == {7.0}
    assert ("us-west-2a", "real", "ias h1_threshold=p90 no_floor=drop-h1", 0.0, 2) in quick
    assert {k[3] for k in quick} == {0.0, 300.0, 1800.0, 7200.0}
    assert {k[1] for k in quick} == {"real", "walk-rate"}


def test_spot_traces_feed_the_interval_assets() -> None:
    """``out_capacity_traces`` takes each trace of ``core_spot_availability`` (scaled to the platform), so
    machine intervals and survival are computed over the real intervals."""
    import duckdb
    import polars as pl

    from assets.capacity import spot_traces
    from sim.capacity.intervals import extract_intervals

    con = duckdb.connect()
    assert list(spot_traces(con, 100)) == []  # no table yet: no spot traces
    vals = load_trace("us-west-2c")
    df = pl.DataFrame(
        {
            "trace": "us-west-2c_v100_16",
            "tick": np.arange(vals.size),
            "time_s": np.arange(vals.size) * 300.0,
            "available": vals,
            "nodes": 16,
        }
    )
    con.register("df", df)
    con.execute("CREATE TABLE core_spot_availability AS SELECT * FROM df")
    (tid, source, tr), *_ = list(spot_traces(con, 32))
    assert tid == "spot-us-west-2c_v100_16-m32" and "core_spot_availability" in source
    assert tr.horizon_s == vals.size * 300.0 and np.array_equal(tr.machines_alive, vals * 2)
    iv = extract_intervals(tr)
    assert iv.height > 100 and iv["machine"].max() == 31


def test_samples_found_without_them_under_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``$VARCAP_HOME`` without samples (the fault tests' homes) still reads the committed traces, so the
    study catalogue builds."""
    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    assert load_trace("us-east-2b").size == 3247


def test_spot_kind_reads_the_pipeline_export_else_the_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Without an export the kind reads the embedded sample (noted once); once ``core_spot_availability``
    has exported a trace to ``data/sim/inputs/spot`` it reads that; a scenario pinned to the sample's data
    version refuses other data."""
    import logging

    import polars as pl

    from assets.spot import export_traces
    from sim.capacity import spot
    from sim.paths import spot_dir

    monkeypatch.setenv("VARCAP_HOME", str(tmp_path))
    monkeypatch.delenv("VARCAP_SPOT_DIR", raising=False)
    monkeypatch.setattr(spot, "_NOTED", set())
    assert spot_dir() == tmp_path / "data" / "sim" / "inputs" / "spot"
    sample = load_trace("us-west-2c")
    path, exported = spot.trace_source("us-west-2c")
    assert not exported and path.name == "us-west-2c_v100_16.parquet"
    with caplog.at_level(logging.INFO, logger="sim.capacity.spot"):
        monkeypatch.setattr(spot, "_NOTED", set())
        load_trace("us-west-2c")
        load_trace("us-west-2c")
    notes = [r.getMessage() for r in caplog.records if "embedded sample" in r.getMessage()]
    assert len(notes) == 1 and "core_spot_availability" in notes[0]
    pinned = {"kind": "spot", "trace": "us-west-2c", "data": spot.trace_version("us-west-2c")}
    base = CapacitySpec.from_dict(pinned).build(16, 86400.0)
    # the pipeline's data: two traces exported, one of them with a rejected tick (not exported)
    other = np.minimum(sample + 1, 16)
    rows = pl.DataFrame(
        {
            "trace": ["us-west-2c_v100_16"] * other.size + ["us-west-2a_v100_16"] * 2,
            "tick": [*range(other.size), 0, 2],
            "available": [*other.tolist(), 3, 4],
        }
    )
    rej = pl.DataFrame({"source_file": ["spot/us-west-2a_v100_16.parquet"]})
    assert export_traces(rows, rej) == (["us-west-2c_v100_16"], ["us-west-2a_v100_16"])
    path, exported = spot.trace_source("us-west-2c")
    assert exported and path == spot_dir() / "us-west-2c_v100_16.parquet"
    assert np.array_equal(load_trace("us-west-2c"), other)
    assert not spot.trace_source("us-west-2a")[1]  # the trace with a gap stays on the sample
    assert spot.trace_version("us-west-2c") != pinned["data"]
    with pytest.raises(ValueError, match="pins data"):
        CapacitySpec.from_dict(pinned).build(16, 86400.0)
    unpinned = CapacitySpec.parse("spot:us-west-2c").build(16, 86400.0)
    assert unpinned.machines_alive.sum() > base.machines_alive.sum()
    # the export gone (e.g. a fresh clone): the sample again
    (spot_dir() / "us-west-2c_v100_16.parquet").unlink()
    assert np.array_equal(load_trace("us-west-2c"), sample)


def test_chapter_statistics_use_student_t_and_pair_seeds() -> None:
    """``analysis.spot``: a 95 % interval over three seeds is Student's t (4.30 · sd/√3, not 1.96), kept in
    a fraction's range; checkpoint_pays pairs FF(τ) with IAS seed by seed and says which side it lies on."""
    import polars as pl

    from analysis import spot as sp

    rows = pl.DataFrame(
        {
            "zone": ["z"] * 9,
            "cap": ["real"] * 9,
            "variant": ["ias"] * 3 + ["ff"] * 6,
            "ck_interval_s": [0.0] * 3 + [300.0] * 3 + [900.0] * 3,
            "seed": [0, 1, 2] * 3,
            "goodput": [0.50, 0.60, 0.70, 0.52, 0.625, 0.715, 0.40, 0.49, 0.62],
        }
    )
    t = sp.mean_ci(rows.filter(pl.col("variant") == "ias"), ["zone"], "goodput", sp.FRACTION).row(
        0, named=True
    )
    assert t["mean"] == pytest.approx(0.6) and t["hi"] - t["mean"] == pytest.approx(4.302653 * 0.1 / 3**0.5)
    assert sp.mean_ci(rows, ["zone"], "goodput", (0.0, 0.62))["hi"][0] == 0.62
    pays = {r["ck_interval_s"]: r for r in sp.checkpoint_pays(rows).iter_rows(named=True)}
    assert pays[300.0]["mean"] == pytest.approx(0.02) and pays[300.0]["verdict"] == "pays"
    assert pays[900.0]["mean"] == pytest.approx(-0.0967, abs=1e-4) and pays[900.0]["verdict"] == "loses"
