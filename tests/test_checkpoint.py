"""Checkpoint/restart: thesis eqs. 4.2–4.3 on hand-computed cases, in both engines."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from sim.api import simulate
from sim.capacity.trace import CapacityTrace
from sim.checkpoint import Checkpoint, attempt_length, killed_progress, n_checkpoints, split_settings
from sim.engine import use_engine
from sim.policies import get_policy, parse_params
from tests.test_sim_engine import random_jobs

# one job of E = 1000 s on 2 cores; its machine turns off at 700 s and back on at 800 s
E, C, TAU, DELTA, R = 1000.0, 2.0, 300.0, 10.0, 50.0
JOBS = pl.DataFrame({"job_id": ["a"], "submit_s": [0.0], "duration_s": [E], "cores": [C]})
CAP = CapacityTrace(np.array([0.0, 700.0, 800.0]), np.array([1, 0, 1]), 1, 2000.0)
SETTINGS = {"checkpoint_interval_s": "300", "checkpoint_overhead_s": "10", "restart_overhead_s": "50"}


def _run(policy: str, engine: str, settings: dict[str, str] | None = SETTINGS) -> tuple[dict, tuple]:
    with use_engine(engine):
        r = simulate(JOBS, CAP, 1, C, 2000.0, policy, settings)
    row = r.jobs.select("first_start_s", "end_s", "attempts", "terminations", "status").row(0)
    return r.metrics, row


def test_eq_4_3_wasted_work_hand_computed() -> None:
    """Checkpoints end at wall 310, 620, 930; the kill at 700 keeps work 600 (t' = 620). The restart at
    800 recovers for R = 50, runs the last 400 s with one checkpoint (at work 900): ends at 1260.
    Eq. 4.3 for the termination: c·(700 − 620 + R) = 260 core-s; with the three checkpoint writes
    (c·3δ = 60, eq. 4.2's tax) the run wastes 320 core-s; goodput is the job's own c·E = 2000."""
    eq43 = C * (700.0 - 620.0 + R)
    assert eq43 == 260.0
    for policy, engine in [
        ("ff", "python"),
        ("ff", "compiled"),
        ("ias-h2", "python"),
        ("target-asap", "python"),
    ]:
        m, row = _run(policy, engine)
        avail = m["available_core_seconds"]
        assert avail == C * (700.0 + 1200.0)
        assert row == (0.0, 1260.0, 2, 1, "completed"), (policy, engine)
        assert m["wasted_fraction"] * avail == pytest.approx(eq43 + C * 3 * DELTA), (policy, engine)
        assert m["goodput"] * avail == pytest.approx(C * E), (policy, engine)
        assert m["goodput"] + m["wasted_fraction"] + m["in_flight_fraction"] + m[
            "idle_fraction"
        ] == pytest.approx(1)


def test_without_checkpoints_the_job_reruns_whole() -> None:
    m, row = _run("ff", "python", None)
    assert row == (0.0, 1800.0, 2, 1, "completed")
    assert m["wasted_fraction"] * m["available_core_seconds"] == pytest.approx(C * 700.0)
    # restart overhead alone (no checkpoints): the rerun pays R and keeps nothing
    m, row = _run("ff", "python", {"restart_overhead_s": "50"})
    assert row == (0.0, 1850.0, 2, 1, "completed")
    assert m["wasted_fraction"] * m["available_core_seconds"] == pytest.approx(C * (700.0 + R))


def test_eq_4_2_uninterrupted_length() -> None:
    """Uninterrupted, a job runs E + nδ with n = ⌈E/τ⌉ − 1: eq. 4.2's E(1 + δ/τ), less at most one δ."""
    ck = Checkpoint(TAU, DELTA, R)
    for e in (1.0, 299.0, 300.0, 301.0, 1000.0, 12345.6):
        wall = attempt_length(e, 0, False, ck)
        assert e * (1 + DELTA / TAU) - DELTA - 1e-9 <= wall <= e * (1 + DELTA / TAU) + 1e-9
    assert n_checkpoints(900.0, 300.0) == 2 and n_checkpoints(901.0, 300.0) == 3
    assert killed_progress(700.0, E, 0, False, ck) == (2, 620.0)
    assert killed_progress(300.0, E, 0, False, ck) == (0, 0.0)  # mid-write: the first is not committed
    assert killed_progress(40.0, E, 2, True, ck) == (0, 0.0)  # still recovering
    # never more checkpoints than levels left below E
    assert killed_progress(10_000.0, E, 2, True, ck)[0] == 1


def test_in_flight_keeps_saved_work() -> None:
    """Killed at 700 and never back: the 600 s saved count as in flight, the rest as wasted."""
    cap = CapacityTrace(np.array([0.0, 700.0]), np.array([1, 0]), 1, 2000.0)
    for engine in ("python", "compiled"):
        with use_engine(engine):
            m = simulate(JOBS, cap, 1, C, 2000.0, "ff", SETTINGS).metrics
        avail = m["available_core_seconds"]
        assert m["in_flight_fraction"] * avail == pytest.approx(C * 600.0)
        assert m["wasted_fraction"] * avail == pytest.approx(C * 100.0)
        assert m["goodput"] == 0.0


def test_settings_any_policy_and_errors() -> None:
    ck, rest = split_settings({"checkpoint_interval_s": "60", "aggressiveness": "0.5"})
    assert ck == Checkpoint(60.0) and rest == {"aggressiveness": "0.5"}
    assert split_settings({"checkpoint_interval_s": "0"})[0] is None
    for pol in ("ff", "ias", "oracle", "target-asap", "slacksched"):
        parse_params(get_policy(pol), {"checkpoint_interval_s": "60"})  # accepted by every policy
    with pytest.raises(ValueError, match="checkpoint_interval_s must be a number"):
        split_settings({"checkpoint_interval_s": "soon"})
    with pytest.raises(ValueError, match="restart_overhead_s must be a finite number"):
        split_settings({"restart_overhead_s": "-1"})
    with pytest.raises(ValueError, match="needs checkpoint_interval_s"):
        Checkpoint(0.0, 5.0)
    assert math.isclose(attempt_length(E, 3, True, Checkpoint(TAU, DELTA, R)), R + 100.0)


def test_engines_agree_with_checkpoints_on_a_walk() -> None:
    """Many jobs on a random walk: compiled kernel and interpreted kernel give the same metrics, and the
    checkpointing run wastes less than the one without."""
    from sim.capacity.generators import random_walk

    cap = random_walk(20, 3 * 86400.0, 4.0, 0.3, seed=3)
    rng = np.random.default_rng(0)
    n = 400
    jobs = random_jobs(rng, n, 2 * 86400.0, 4000.0, 1.0, 8)
    st = {"checkpoint_interval_s": "600", "checkpoint_overhead_s": "30", "restart_overhead_s": "60"}
    out = {}
    for engine in ("python", "compiled"):
        with use_engine(engine):
            out[engine] = simulate(jobs, cap, 20, 8.0, 3 * 86400.0, "ff", st).metrics
    assert out["python"] == out["compiled"]
    with use_engine("compiled"):
        off = simulate(jobs, cap, 20, 8.0, 3 * 86400.0, "ff").metrics
        free = simulate(jobs, cap, 20, 8.0, 3 * 86400.0, "ff", {"checkpoint_interval_s": "600"}).metrics
    assert out["compiled"]["terminations"] > 0
    # free checkpoints only save work; with a 5 % tax (δ/τ) and few kills the tax can cost more
    assert free["wasted_fraction"] < off["wasted_fraction"]
    assert free["goodput"] >= off["goodput"]


def _engine_output(policy: str, engine: str, cap: CapacityTrace = CAP):  # noqa: ANN202
    from sim.api import run_policy
    from sim.checkpoint import split_settings as split
    from sim.problem import Platform, Problem

    ck, rest = split(SETTINGS)
    problem = Problem.build(JOBS, Platform(1, C), cap, 2000.0, checkpoint=ck)
    pol = get_policy(policy)
    with use_engine(engine):
        return run_policy(pol, problem, parse_params(pol, rest), 0).output


@pytest.mark.parametrize(
    ("policy", "engine"), [("ff", "python"), ("ff", "compiled"), ("target-asap", "python")]
)
def test_engine_aggregates_balance(policy: str, engine: str) -> None:
    """The engines' own books: completed c·E, wasted = eq. 4.3 + checkpoint writes, and every occupied
    core-second is completed, wasted or in flight."""
    out = _engine_output(policy, engine)
    assert out.completed_cs == C * E
    assert out.wasted_cs == pytest.approx(C * (700.0 - 620.0 + R) + C * 3 * DELTA)
    assert out.used_cs == pytest.approx(out.completed_cs + out.wasted_cs + out.inflight_cs)
    assert list(out.att_useful_s) == [600.0, 400.0]


def test_kill_during_a_checkpoint_write_keeps_only_the_earlier_one() -> None:
    """Killed at 615, while the second checkpoint (work 600) is being written (610–620): the job keeps
    work 300 (t' = 310); its restart at 800 runs R + 700 + 2δ = 770 s, to 1570."""
    cap = CapacityTrace(np.array([0.0, 615.0, 800.0]), np.array([1, 0, 1]), 1, 2000.0)
    for policy, engine in [("ff", "python"), ("ff", "compiled"), ("target-asap", "python")]:
        with use_engine(engine):
            r = simulate(JOBS, cap, 1, C, 2000.0, policy, SETTINGS)
        assert r.jobs["end_s"][0] == 1570.0, (policy, engine)
        m = r.metrics
        # eq. 4.3: c·(615 − 310 + R), plus the completed writes: one before the kill, two in the restart
        assert m["wasted_fraction"] * m["available_core_seconds"] == pytest.approx(
            C * (615.0 - 310.0 + R) + C * 3 * DELTA
        ), (policy, engine)
        out = _engine_output(policy, engine, cap)
        assert list(out.att_useful_s) == [300.0, 700.0]


@pytest.mark.parametrize(
    ("name", "settings"),
    [("ias", {}), ("ias-h2", {}), ("ias-h2+h4", {}), ("ias", {"h4_reading": "literal"})],
)
def test_ias_with_checkpoints_prunes_like_a_full_rescan(name: str, settings: dict[str, str]) -> None:
    """Checkpoint writes and restarts change an attempt's length and so whether H2 or H4 judges it (a
    3590 s job with 3 writes of 20 s runs 3650 s, over the 3600 s period): the pruned pass must still
    start exactly what the reference full rescan starts (it did not while the H2/H4 classes were fixed
    from the nominal durations)."""
    import dataclasses

    from sim.capacity.generators import random_walk
    from sim.problem import Platform, Problem, run_first_fit

    rng = np.random.default_rng(1)
    n, h = 600, 4 * 86400.0
    jobs = pl.DataFrame(
        {
            "job_id": [str(i) for i in range(n)],
            "submit_s": np.sort(rng.uniform(0, 3 * 86400.0, n)),
            "duration_s": rng.uniform(3000.0, 3700.0, n),  # around the 3600 s period
            "cores": rng.integers(1, 5, n).astype(float),
        }
    )
    problem = Problem.build(
        jobs, Platform(20, 8.0), random_walk(20, h, 1.0, 0.3, seed=2), h, check=True,
        checkpoint=Checkpoint(1000.0, 20.0, 200.0),
    )  # fmt: skip
    pol = get_policy(name)
    adm = pol.admission(problem, parse_params(pol, settings))
    with use_engine("python"):
        a = run_first_fit(problem, "lifo", 0, adm).output
        b = run_first_fit(problem, "lifo", 0, dataclasses.replace(adm, full_rescan=True)).output
    assert a.violations == 0
    assert np.array_equal(a.first_start_s, b.first_start_s) and np.array_equal(a.end_s, b.end_s)


# two jobs of E = 1000 s on 2 cores, one a machine; both machines off at 700 s, back at 800 s
CAP2 = CapacityTrace(np.array([0.0, 700.0, 800.0]), np.array([2, 0, 2]), 2, 2000.0)


def _two_jobs(**cols: list[float | None]) -> pl.DataFrame:
    base = pl.DataFrame({"job_id": ["a", "b"], "submit_s": [0.0, 0.0], "duration_s": [E, E], "cores": [C, C]})
    return base.with_columns(*(pl.Series(k, v, pl.Float64) for k, v in cols.items()))


@pytest.mark.parametrize(
    ("policy", "engine"),
    [("ff", "python"), ("ff", "compiled"), ("ias-h2", "python"), ("target-asap", "python")],
)
def test_per_job_checkpoint_columns_override_the_run_settings(policy: str, engine: str) -> None:
    """Job a checkpoints (τ 300, δ 10, R 50: the case above, ends at 1260, wastes 320 core-s), job b not
    (reruns whole from 800: ends at 1800, wastes c·700 = 1400 core-s). Given as a's columns with b's null
    and no run settings, or as the run's settings with b's columns 0: the same run."""
    want = {"a": (1260.0, 2, "completed"), "b": (1800.0, 2, "completed")}
    per_a = _two_jobs(
        checkpoint_interval_s=[TAU, None], checkpoint_overhead_s=[DELTA, None], restart_overhead_s=[R, None]
    )
    off_b = _two_jobs(
        checkpoint_interval_s=[None, 0.0], checkpoint_overhead_s=[None, 0.0], restart_overhead_s=[None, 0.0]
    )
    runs = []
    for jobs, settings in ((per_a, None), (off_b, SETTINGS)):
        with use_engine(engine):
            r = simulate(jobs, CAP2, 2, C, 2000.0, policy, settings)
        got = {row[0]: row[1:] for row in r.jobs.select("job_id", "end_s", "attempts", "status").iter_rows()}
        assert got == want, (policy, engine, settings)
        avail = r.metrics["available_core_seconds"]
        assert avail == 2 * C * (700.0 + 1200.0)
        assert r.metrics["wasted_fraction"] * avail == pytest.approx(320.0 + 1400.0)
        assert r.metrics["goodput"] * avail == pytest.approx(2 * C * E)
        runs.append(r.metrics)
    assert runs[0] == runs[1]


def test_per_job_columns_equal_to_the_run_settings_give_the_same_run() -> None:
    """Every job carrying the run's values as columns is the same simulation as ``--set`` (compiled FF on a
    spot trace), and columns that switch nothing on leave the checkpoint-free run."""
    from sim.capacity.trace import CapacitySpec

    rng = np.random.default_rng(3)
    n = 400
    jobs = random_jobs(rng, n, 4 * 86400.0, 4000.0, 60.0, 4)
    cap = CapacitySpec.parse("spot:us-west-2a").build(20, 5 * 86400.0)  # empty 55 % of the time
    cols = jobs.with_columns(
        pl.lit(TAU).alias("checkpoint_interval_s"),
        pl.lit(DELTA).alias("checkpoint_overhead_s"),
        pl.lit(R).alias("restart_overhead_s"),
    )
    with use_engine("compiled"):
        by_set = simulate(jobs, cap, 20, 8.0, 5 * 86400.0, "ff", SETTINGS)
        by_col = simulate(cols, cap, 20, 8.0, 5 * 86400.0, "ff")
        plain = simulate(jobs, cap, 20, 8.0, 5 * 86400.0, "ff")
        zero = simulate(
            jobs.with_columns(pl.lit(0.0).alias("restart_overhead_s")), cap, 20, 8.0, 5 * 86400.0, "ff"
        )
    assert by_set.metrics["terminations"] > 0
    assert by_col.metrics == by_set.metrics and by_col.jobs.equals(by_set.jobs)
    assert zero.metrics == plain.metrics and zero.jobs.equals(plain.jobs)
    assert by_set.metrics != plain.metrics


def test_per_job_columns_are_checked_by_row() -> None:
    """The input contract (sim.validate) refuses a negative value; per_job a δ without τ (rows 1-based)."""
    from sim.checkpoint import per_job

    bad = _two_jobs(checkpoint_interval_s=[300.0, -1.0])
    with pytest.raises(ValueError, match="row 2: checkpoint_interval_s"):
        simulate(bad, CAP2, 2, C, 2000.0, "ff")
    with pytest.raises(ValueError, match="row 1: checkpoint_overhead_s needs"):
        simulate(_two_jobs(checkpoint_overhead_s=[10.0, None]), CAP2, 2, C, 2000.0, "ff")
    with pytest.raises(ValueError, match="row 3: restart_overhead_s must be a finite"):
        per_job({"restart_overhead_s": np.array([0.0, np.nan, np.inf])}, 3, None)
    assert per_job({"restart_overhead_s": np.array([np.nan, 0.0])}, 2, None) is None  # nothing on


def test_per_job_columns_in_a_jobs_file_are_checked_by_line(tmp_path) -> None:
    """``varcap simulate``'s input contract names the file, line and column of a bad per-job setting;
    an empty field takes the run's value."""
    from sim.validate import InputError

    f = tmp_path / "jobs.csv"
    f.write_text("job_id,submit_s,duration_s,cores,checkpoint_interval_s\na,0,1000,2,300\nb,0,1000,2,\n")
    r = simulate(str(f), CAP2, 2, C, 2000.0, "ff")
    assert r.jobs.filter(pl.col("job_id") == "b")["end_s"][0] == 1800.0  # b: no checkpoints (run's 0)
    f.write_text("job_id,submit_s,duration_s,cores,checkpoint_interval_s\na,0,1000,2,300\nb,0,1000,2,soon\n")
    with pytest.raises(InputError, match=r"jobs.csv.*line 3.*checkpoint_interval_s"):
        simulate(str(f), CAP2, 2, C, 2000.0, "ff")
