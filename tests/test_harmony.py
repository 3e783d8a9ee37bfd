"""Harmony (seed 004): classification, forecasting, queueing, DCP-RELAX, placement and the scheduler."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from statsmodels.tsa.arima.model import ARIMA

from sim.harmony.classify import fit_classes, kmeans_labels, priority_group
from sim.harmony.engine import place_containers
from sim.harmony.forecast import ForecastConfig, fit_ar, one_step_forecasts
from sim.harmony.lp import DCPRelax
from sim.harmony.machines import TABLE2, MachineType, efficiency_order
from sim.harmony.provision import baseline_machines, lemma1_bound, round_up
from sim.harmony.queueing import (
    containers_for_delay,
    erlang_c,
    mgn_wait,
    simulate_fcfs,
    theorem1_beta,
)
from sim.harmony.run import HarmonyConfig, predict_demand, simulate_harmony


def _tasks(n: int, seed: int, horizon_s: float = 3600.0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    big = rng.random(n) < 0.2
    return pl.DataFrame(
        {
            "submit_s": np.sort(rng.uniform(0, horizon_s, n)),
            "duration_s": np.where(rng.random(n) < 0.8, rng.exponential(120, n), rng.exponential(3000, n))
            + 1,
            "cpu": np.where(big, rng.uniform(0.2, 0.5, n), rng.uniform(0.005, 0.05, n)),
            "mem": np.where(big, rng.uniform(0.05, 0.3, n), rng.uniform(0.005, 0.05, n)),
            "priority": rng.choice([0, 1, 2, 4, 9, 10], n),
        }
    )


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    """Equal metric dicts, nan equal to nan (an empty steady window has no delay percentiles)."""
    return a.keys() == b.keys() and all(a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]) for k in a)


@pytest.fixture(scope="module")
def small():
    jobs = _tasks(1200, 1)
    tc = fit_classes(
        jobs["cpu"].to_numpy(),
        jobs["mem"].to_numpy(),
        jobs["priority"].to_numpy(),
        jobs["duration_s"].to_numpy(),
        k_max=3,
        seed=0,
    )
    return jobs, tc


# ------------------------------------------------------------------------------------------ §5.1 classes
@pytest.mark.parametrize("threads", [2, 4])
def test_kmeans_centroids_do_not_depend_on_the_threads_allowed(threads):
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(c, 0.3, (20_000, 2)) for c in ((0, 0), (3, 1), (1, 4))])
    with threadpool_limits(limits=1):
        one = kmeans_labels(x, 3, seed=0)
    with threadpool_limits(limits=threads):  # a machine with more cores: the same sums, in the same order
        many = kmeans_labels(x, 3, seed=0)
    assert np.array_equal(one[1], many[1]) and one[2] == many[2]


def test_kmeans_labels_deterministic_by_seed(small):
    jobs, tc = small
    x = np.column_stack([jobs["cpu"].to_numpy(), jobs["mem"].to_numpy()])
    a = kmeans_labels(x, 4, seed=3)
    b = kmeans_labels(x, 4, seed=3)
    assert np.array_equal(a[0], b[0]) and np.allclose(a[1], b[1])
    tc2 = fit_classes(
        jobs["cpu"].to_numpy(),
        jobs["mem"].to_numpy(),
        jobs["priority"].to_numpy(),
        jobs["duration_s"].to_numpy(),
        k_max=3,
        seed=0,
    )
    assert np.allclose(tc.centroid, tc2.centroid) and np.array_equal(tc.count, tc2.count)
    q = tc.size_cluster(jobs["cpu"].to_numpy(), jobs["mem"].to_numpy(), jobs["priority"].to_numpy())
    q2 = tc2.size_cluster(jobs["cpu"].to_numpy(), jobs["mem"].to_numpy(), jobs["priority"].to_numpy())
    assert np.array_equal(q, q2)


def test_classes_respect_priority_groups_and_split(small):
    jobs, tc = small
    assert priority_group(np.array([0, 1, 2, 8, 9, 11])).tolist() == [2, 2, 1, 1, 0, 0]
    q = tc.size_cluster(jobs["cpu"].to_numpy(), jobs["mem"].to_numpy(), jobs["priority"].to_numpy())
    assert (tc.group[q] == priority_group(jobs["priority"].to_numpy())).all()
    assert tc.count.sum() == jobs.height
    # run-time labels: short until the threshold, long after
    lab = tc.label(np.array([0, 0]), np.array([0.0, tc.threshold_s[0] + 1]))
    assert lab.tolist() == [0, 1]
    finite = np.isfinite(tc.threshold_s)
    assert finite.any()
    long_mean, short_mean = tc.dur_mean_s[1::2][finite], tc.dur_mean_s[0::2][finite]
    assert (long_mean[long_mean > 0] > short_mean[long_mean > 0]).all()


# ------------------------------------------------------------------------------------------ §5.2 forecast
def test_no_forecast_reads_a_future_interval():
    rng = np.random.default_rng(0)
    y = rng.poisson(50, (40, 2)).astype(float)
    cfg = ForecastConfig(order=2, window=20, refit_every=15, min_train=8)
    f = one_step_forecasts(y, cfg)
    for t in (0, 12, 39):
        z = y.copy()
        z[t:] = rng.poisson(500, z[t:].shape)  # rewrite interval t and everything after it
        g = one_step_forecasts(z, cfg)
        assert np.array_equal(f[: t + 1], g[: t + 1]), t


def test_demand_forecast_ignores_future_tasks(small):
    jobs, tc = small
    cfg = HarmonyConfig()
    d1 = predict_demand(jobs, tc, 12, cfg, ForecastConfig(window=12, refit_every=12, min_train=4))
    cut = 6 * 300.0
    later = jobs.filter(pl.col("submit_s") >= cut).with_columns(pl.col("duration_s") * 3, pl.col("cpu") * 0.5)
    jobs2 = pl.concat([jobs.filter(pl.col("submit_s") < cut), later])
    d2 = predict_demand(jobs2, tc, 12, cfg, ForecastConfig(window=12, refit_every=12, min_train=4))
    # the decision at interval 6 (time 1800 s) may use intervals 0–5 only
    assert np.array_equal(d1.containers[:7], d2.containers[:7])


def test_ar_step_matches_statsmodels_forecast():
    y = np.random.default_rng(2).poisson(80, 120).astype(float)
    mu, phi = fit_ar(y, 2)
    res = ARIMA(y, order=(2, 0, 0), trend="c").fit(method="burg")
    ours = mu + phi @ (y[::-1][:2] - mu)
    assert ours == pytest.approx(float(res.forecast(1)[0]), rel=1e-9)


def test_ar_fit_of_a_window_seen_before_is_the_kept_one():
    """The same window (same values, another array) is fitted once per process; another window is not
    confused with it, and the kept coefficients cannot be changed by a caller."""
    from sim.harmony import forecast as fc

    y = np.random.default_rng(5).poisson(40, 96).astype(float)
    first = fc.fit_ar(y, 2)
    assert fc.fit_ar(y.copy(), 2) is first
    assert fc.fit_ar(y[::-1].copy(), 2) is not first
    assert fc.fit_ar(y, 2)[0] == fc._fit_ar(y, 2)[0]
    with pytest.raises(ValueError):
        first[1][0] = 0.0


# ------------------------------------------------------------------------------------------ §5.2 M/G/N
@pytest.mark.parametrize(("lam", "mu", "n"), [(4.0, 1.0, 5), (9.0, 0.5, 20), (1.5, 1.0, 2)])
def test_mgn_wait_matches_mmn_simulation(lam, mu, n):
    rng = np.random.default_rng(7)
    m = 200_000
    arr = np.cumsum(rng.exponential(1 / lam, m))
    waits = simulate_fcfs(arr, rng.exponential(1 / mu, m), n)[10_000:]
    batches = waits[: len(waits) // 50 * 50].reshape(50, -1).mean(axis=1)  # batch means for the error
    se = batches.std(ddof=1) / np.sqrt(len(batches))
    model = mgn_wait(lam, mu, n, cv2=1.0)
    assert abs(waits.mean() - model) < 4 * se + 1e-3, (waits.mean(), model, se)


def test_erlang_c_and_sizing():
    assert erlang_c(1, 0.5) == pytest.approx(0.5)  # M/M/1: P(wait) = ρ
    assert erlang_c(3, 3.5) == 1.0
    n = containers_for_delay(10.0, 0.1, 1.0, 5.0, 10**6)  # offered load 100
    assert n > 100 and mgn_wait(10.0, 0.1, n, 1.0) <= 5.0 < mgn_wait(10.0, 0.1, n - 1, 1.0)
    assert containers_for_delay(0.0, 1.0, 1.0, 1.0, 100) == 0


def test_theorem1_multiplier_example():
    # §7.3.1: "if we want to achieve ε = 0.01 for M^k = 100, |R| = 2 ... container size μ + 1.1σ"
    assert theorem1_beta(0.01, 2, 100) == pytest.approx(1.1, abs=0.06)
    assert theorem1_beta(0.001, 2, 100) > theorem1_beta(0.01, 2, 100)


# ------------------------------------------------------------------------------------------ §7.1 LP
def _random_lp(rng, M, K, W=1, omega=1.2):
    cap = rng.uniform(0.1, 1.0, (M, 2))
    csize = rng.uniform(0.01, 0.6, (K, 2))
    lp = DCPRelax(
        cap,
        rng.integers(1, 30, M),
        rng.uniform(20, 300, M),
        np.column_stack([rng.uniform(10, 300, M), np.zeros(M)]),
        csize,
        omega,
        W,
        unserved_usd=rng.uniform(0.05, 2.0, K),
    )
    return lp, rng.integers(0, 25, (W, K)).astype(float), rng.integers(0, 10, M).astype(float)


@pytest.mark.parametrize("seed", range(25))
def test_lp_solution_satisfies_every_constraint(seed):
    rng = np.random.default_rng(seed)
    M, K, W = int(rng.integers(1, 5)), int(rng.integers(1, 6)), int(rng.integers(1, 4))
    lp, d, z0 = _random_lp(rng, M, K, W, omega=float(rng.uniform(0.6, 2.2)))
    s = lp.solve(d, rng.uniform(0.05, 0.3, W), z0)
    tol = 1e-6
    assert (s.z >= -tol).all() and (s.z <= lp.avail + tol).all()
    assert (s.x >= -tol).all() and (s.unserved >= -tol).all()
    for w in range(W):
        load = np.einsum("mk,kr->mr", s.x[w] * lp.omega[None, :], lp.csize)
        assert (load <= s.z[w][:, None] * lp.cap + tol).all()  # capacity per resource (14)
        assert (s.x[w][~lp.psi] <= tol).all()  # schedulability ψ
        assert (s.x[w].sum(axis=0) + s.unserved[w] >= d[w] - tol).all()  # demand served or paid for
        prev = z0 if w == 0 else s.z[w - 1]
        assert np.allclose(s.z[w] - prev, s.on[w] - s.off[w], atol=tol)  # state equation (10)


def _brute_force_cost(lp, d, price, z0, steps=200):
    """Grid search over how the demand of one class splits over two machine types (or is left out):
    z follows in closed form from the capacity constraint, so the grid covers the whole LP."""
    assert lp.M == 2 and lp.K == 1 and lp.W == 1
    kwh = lp.interval_s / 3600 / 1000 * (1 + lp.cooling) * price
    per = (lp.slope_w * lp.csize[0][None, :] / lp.cap).sum(axis=1)
    best = np.inf
    n = d[0, 0]
    for a, b in itertools.product(np.linspace(0, n, steps + 1), repeat=2):
        if a + b > n + 1e-12 or (a > 0 and not lp.psi[0, 0]) or (b > 0 and not lp.psi[1, 0]):
            continue
        x = np.array([a, b])
        z = np.max(lp.omega[0] * x[:, None] * lp.csize[0][None, :] / lp.cap, axis=1)
        if (z > lp.avail + 1e-12).any():
            continue
        cost = kwh * (z @ lp.idle_w + x @ per) + lp.switch_usd * np.maximum(z - z0, 0).sum()
        cost += lp.unserved_usd[0] * (n - a - b)
        best = min(best, cost)
    return best


@pytest.mark.parametrize("seed", range(8))
def test_lp_matches_brute_force_on_tiny_instances(seed):
    rng = np.random.default_rng(100 + seed)
    lp, d, z0 = _random_lp(rng, 2, 1)
    d[:] = rng.integers(1, 11)
    s = lp.solve(d, 0.12, z0)
    bf = _brute_force_cost(lp, d, 0.12, z0)
    assert s.cost_usd <= bf + 1e-9  # the LP optimum is never worse than any grid point
    assert bf - s.cost_usd <= 0.01 * abs(bf) + 1e-6  # and the fine grid gets within 1 %


# ---------------------------------------------------------------------------------- §7.2–7.3, §9 rounding
def test_cbs_first_fit_meets_lemma_1():
    rng = np.random.default_rng(5)
    types = TABLE2
    cap = np.array([[t.cpu, t.mem] for t in types])
    for _ in range(10):
        K = 4
        csize = rng.uniform(0.01, 0.3, (K, 2))
        lp = DCPRelax(
            cap,
            np.array([t.count for t in types]),
            np.array([t.idle_w for t in types]),
            np.array([t.slope_w for t in types]),
            csize,
            1.0,
        )
        s = lp.solve(rng.integers(0, 400, K).astype(float), 0.12, np.zeros(4))
        z = round_up(s.z[0]) + 1  # Lemma 1: ⌈z*⌉ + 1 machines of each type
        counts = z.astype(np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        n = int(counts.sum())
        mtype = np.repeat(np.arange(4), counts)
        placed = place_containers(
            lemma1_bound(s.x[0]),
            round_up(s.x[0]),
            csize,
            np.argsort(-csize.max(axis=1)).astype(np.int64),
            cap[mtype],
            np.ones(n, np.int64),
            np.zeros((n, K), np.int64),
            np.zeros((n, K), np.int64),
            starts,
            np.cumsum(counts).astype(np.int64),
        )
        assert (placed >= lemma1_bound(s.x[0])).all()


def test_baseline_fills_most_efficient_type_first_at_80_percent():
    cap = np.array([[t.cpu, t.mem] for t in TABLE2])
    order = efficiency_order(TABLE2)
    avail = np.array([t.count for t in TABLE2])
    got = baseline_machines(np.array([100.0, 50.0]), cap, avail, order)
    first = order[0]
    assert (
        got[first] > 0 and (got[[m for m in range(4) if m != first]] == 0).all() or got[first] == avail[first]
    )
    provided = got @ cap
    assert (np.array([100.0, 50.0]) / provided <= 0.8 + 1e-9).all()
    assert (baseline_machines(np.zeros(2), cap, avail, order) == 0).all()


# ---------------------------------------------------------------------------------------------- engine
@pytest.mark.parametrize("scheme", ["baseline", "cbp", "cbs"])
def test_simulation_never_overfills_a_machine(small, scheme):
    jobs, tc = small
    types = (MachineType("a", 0.25, 0.5, 30, 70, 170), MachineType("b", 1.0, 1.0, 10, 300, 680))
    cfg = HarmonyConfig(scheme=scheme, types=types)
    dem = predict_demand(jobs, tc, 12, cfg, ForecastConfig(window=12, refit_every=12, min_train=4))
    r = simulate_harmony(jobs, tc, dem, cfg)
    t = r.tasks.filter(pl.col("scheduled"))
    assert (t["start_s"] >= t["submit_s"]).all() and (r.tasks["delay_s"] >= 0).all()
    cap = {i: (0.25, 0.5) if i < 30 else (1.0, 1.0) for i in range(40)}
    for (m,), g in t.group_by("machine"):
        ev = sorted(
            [(s, 1, c, mm) for s, c, mm in zip(g["start_s"], g["cpu"], g["mem"], strict=True)]
            + [(e, -1, c, mm) for e, c, mm in zip(g["end_s"], g["cpu"], g["mem"], strict=True)],
            key=lambda e: (e[0], e[1]),
        )
        u = np.zeros(2)
        for _, sign, c, mm in ev:
            u += sign * np.array([c, mm])
            assert (u <= np.array(cap[m]) + 1e-9).all()
    assert r.metrics["energy_kwh"] > 0 and r.intervals.height == 12
    r2 = simulate_harmony(jobs, tc, dem, cfg)
    assert _same(r2.metrics, r.metrics)  # deterministic


def test_fifo_per_class_and_priority_order():
    # one machine of capacity 1: a production task waits behind nothing, gratis tasks queue FIFO
    types = (MachineType("one", 1.0, 1.0, 1, 100, 200),)
    jobs = pl.DataFrame(
        {
            "submit_s": [0.0, 1.0, 2.0, 3.0],
            "duration_s": [100.0, 10.0, 10.0, 10.0],
            "cpu": [0.9, 0.5, 0.5, 0.05],
            "mem": [0.1, 0.1, 0.1, 0.1],
            "priority": [0, 0, 0, 10],
        }
    )
    tc = fit_classes(
        jobs["cpu"].to_numpy(),
        jobs["mem"].to_numpy(),
        jobs["priority"].to_numpy(),
        jobs["duration_s"].to_numpy(),
        k_max=1,
        seed=0,
    )
    cfg = HarmonyConfig(scheme="baseline", types=types, interval_s=300.0)
    dem = predict_demand(jobs, tc, 1, cfg)
    # interval 0 starts with no demand, so the baseline turns nothing on: every task waits to the horizon
    r = simulate_harmony(jobs, tc, dem, cfg)
    assert r.metrics["unscheduled"] == 4
    dem2 = predict_demand(jobs, tc, 2, cfg)
    jobs2 = jobs.with_columns(pl.col("submit_s") - 0.0)
    r = simulate_harmony(jobs2, tc, dem2, cfg)
    st = r.tasks["start_s"].to_list()
    # at 300 s: demand 1.95 cpu -> one machine; head of the gratis queue (0.9) first, the 0.05 production
    # task fits beside it; the 0.5 tasks wait for the 0.9 to end (FIFO: the second waits for the first)
    assert st[0] == 300.0 and st[3] == 300.0
    assert st[1] == 400.0 and st[2] == 400.0


# ------------------------------------------------------------------------------ : Harmony model
def test_short_class_service_time_is_time_held_in_a_short_container(small):
    jobs, tc = small
    cpu, mem, pr = (jobs[c].to_numpy() for c in ("cpu", "mem", "priority"))
    dur = jobs["duration_s"].to_numpy()
    q = tc.size_cluster(cpu, mem, pr)
    checked = 0
    for qi in range(tc.n_queues):
        d = dur[q == qi]
        thr = tc.threshold_s[qi]
        if d.size < 2 or not np.isfinite(thr) or not (d > thr).any():
            continue
        held = np.minimum(d, thr)  # a long task holds its short container until it is relabelled
        mean, cv2 = tc.short_hold_s(qi)
        assert mean == pytest.approx(held.mean(), rel=1e-9)
        assert cv2 == pytest.approx(held.var() / held.mean() ** 2, rel=1e-6, abs=1e-9)
        assert mean > tc.dur_mean_s[2 * qi]  # more than the short members' mean alone
        checked += 1
    assert checked > 0
    cfg = HarmonyConfig()
    fc = ForecastConfig(window=12, refit_every=12, min_train=4)
    dem = predict_demand(jobs, tc, 12, cfg, fc)
    for qi in range(tc.n_queues):
        mean, cv2 = tc.short_hold_s(qi)
        target = cfg.target_delay_s[int(tc.group[qi])]
        for t in (6, 11):
            lam = dem.arrivals_fc[t, qi] / cfg.interval_s
            want = containers_for_delay(lam, 1.0 / mean, cv2, target, 10**7) if mean > 0 else 0
            assert dem.containers[t, 2 * qi] == want


def test_cbs_and_cbp_provision_the_same_machines(small):
    """§9.2: "both CBS and CBP provision the same number of machines as indicated by the MPC algorithm":
    the demand is the workload's, not a scheme's own queue."""
    jobs, tc = small
    types = (MachineType("a", 0.25, 0.5, 30, 70, 170), MachineType("b", 1.0, 1.0, 10, 300, 680))
    fc = ForecastConfig(window=12, refit_every=12, min_train=4)
    dem = predict_demand(jobs, tc, 12, HarmonyConfig(types=types), fc)
    runs = {s: simulate_harmony(jobs, tc, dem, HarmonyConfig(scheme=s, types=types)) for s in ("cbp", "cbs")}
    cols = [f"target_{m}" for m in range(2)]
    assert runs["cbp"].intervals.select(cols).equals(runs["cbs"].intervals.select(cols))
    assert runs["cbs"].intervals["queued"].sum() != runs["cbp"].intervals["queued"].sum()  # queues differ
    assert runs["cbs"].intervals.select(cols).to_numpy().sum() > 0


def test_results_do_not_depend_on_row_order(small):
    jobs, _ = small
    types = (MachineType("a", 0.25, 0.5, 30, 70, 170), MachineType("b", 1.0, 1.0, 10, 300, 680))
    out = []
    for perm in (None, 3):
        j = jobs if perm is None else jobs.sample(fraction=1.0, shuffle=True, seed=perm)
        cols = [j[c].to_numpy() for c in ("cpu", "mem", "priority", "duration_s")]
        # fit on a sample: its rows must not follow the input order
        tc = fit_classes(*cols, k_max=3, seed=0, fit_sample=400)
        fc = ForecastConfig(window=12, refit_every=12, min_train=4)
        cfg = HarmonyConfig(scheme="cbs", types=types)
        r = simulate_harmony(j, tc, predict_demand(j, tc, 12, cfg, fc), cfg)
        out.append((tc.threshold_s.tolist(), r.metrics))
    assert out[0][0] == out[1][0] and _same(out[0][1], out[1][1])


def test_power_figures_against_the_papers_statements():
    """The figures of TABLE2 against §9/§9.2: the DL585 G7 is the most efficient per CPU unit (holds); a
    0.2-CPU container is cheapest on the DL385 G7 (§9; fails with these figures, whole machine or marginal
    watts — documented in sim.harmony.machines). Figures that change either outcome fail here."""
    from sim.harmony.machines import paper_statements

    got = paper_statements(TABLE2)
    assert got["cpu_order"][0] == "HP DL585 G7" and got["most_efficient_per_cpu_holds"]
    assert got["capacity_order"][0] == "Dell PowerEdge R515" and not got["most_efficient_capacity_holds"]
    # whole-machine power of a 0.2-CPU container: idle + slope × 0.2/C, only on types with C ≥ 0.2
    assert got["container_w_whole"]["HP DL385 G7"] == pytest.approx(131 + (345 - 131) * 0.4)
    assert "Dell PowerEdge R210" not in got["container_w_whole"]
    assert got["container_w_marginal"]["Dell PowerEdge R515"] == pytest.approx((174 - 72) * 0.8)
    assert (got["cheapest_whole"], got["cheapest_marginal"]) == ("Dell PowerEdge R515", "HP DL585 G7")
    assert not got["container_whole_holds"] and not got["container_marginal_holds"]
    # eq. 6's memory slope: 1.25 W per GB installed (estimate, HP DDR3 brief), not 0
    assert [t.slope_w[1] for t in TABLE2] == [5.0, 40.0, 20.0, 80.0]
    # the checks can go either way: a list built to satisfy both statements passes both
    ok = (
        MachineType("Dell PowerEdge R210", 4 / 48, 4 / 64, 1, 40, 110),
        MachineType("Dell PowerEdge R515", 12 / 48, 32 / 64, 1, 150, 250),
        MachineType("HP DL385 G7", 24 / 48, 16 / 64, 1, 100, 300),
        MachineType("HP DL585 G7", 1.0, 1.0, 1, 200, 400),
    )
    chk = paper_statements(ok)
    assert chk["most_efficient_capacity_holds"] and chk["most_efficient_per_cpu_holds"]
    assert chk["container_whole_holds"] and chk["cheapest_whole"] == "HP DL385 G7"


def test_baseline_type_order_readings():
    """§9's example puts the DL585 G7 first; §9.2's account makes the R210 next ("paper", the default)."""
    from sim.harmony.machines import ORDERS, type_order

    names = {r: [TABLE2[m].name for m in type_order(TABLE2, r)] for r in ORDERS}
    assert names["paper"][:2] == ["HP DL585 G7", "Dell PowerEdge R210"]
    assert names["cpu"][0] == "HP DL585 G7" and names["cpu"][-1] == "Dell PowerEdge R210"
    assert names["capacity"][0] == "Dell PowerEdge R515"
    assert all(sorted(v) == sorted(t.name for t in TABLE2) for v in names.values())
    assert HarmonyConfig().efficiency == "paper"
    other = (MachineType("x", 0.5, 1.0, 1, 10, 400), MachineType("y", 1.0, 1.0, 1, 10, 300))
    assert type_order(other, "paper").tolist() == [1, 0]  # no Table 2 names: per CPU watts
    with pytest.raises(ValueError, match="type order"):
        type_order(TABLE2, "memory")


def test_efficiency_reading_orders_the_baseline_by_cpu_watts(small):
    """``efficiency="cpu"`` (peak W per CPU unit) turns on the type that is cheaper per CPU first, where the
    default measure (per mean of cpu and memory capacity) picks the other; invalid readings are refused."""
    jobs, tc = small
    # a: 0.25 cpu / 1.0 mem at 200 W: 800 W per CPU, 320 W per mean capacity; b: 1.0 / 0.25 at 600 W:
    # 600 W per CPU, 960 W per mean capacity — the two measures disagree on which type is first
    types = (MachineType("a", 0.25, 1.0, 30, 70, 200), MachineType("b", 1.0, 0.25, 10, 300, 600))
    fc = ForecastConfig(window=12, refit_every=12, min_train=4)
    on = {}
    for reading in ("capacity", "cpu"):
        cfg = HarmonyConfig(scheme="baseline", types=types, efficiency=reading)
        r = simulate_harmony(jobs, tc, predict_demand(jobs, tc, 12, cfg, fc), cfg)
        on[reading] = r.intervals.select("target_0", "target_1").to_numpy().sum(axis=0)
    assert on["capacity"][0] > 0 and on["cpu"][1] > 0
    assert on["capacity"][0] > on["cpu"][0] and on["cpu"][1] > on["capacity"][1]
    with pytest.raises(ValueError, match="efficiency"):
        HarmonyConfig(efficiency="memory")


# ---------------------------------------------------------------------- CBS relabelling (§5.1, §7.3)
def _one_class(threshold_s: float):
    """One gratis size cluster split at ``threshold_s``; both containers 0.1 × 0.1 (σ = 0)."""
    from sim.harmony.classify import TaskClasses

    two = np.full((2, 2), 0.1)
    return TaskClasses(
        group=np.array([2]),
        centroid=np.array([[0.1, 0.1]]),
        threshold_s=np.array([threshold_s]),
        mean=two,
        std=np.zeros((2, 2)),
        max=two,
        dur_mean_s=np.array([10.0, 250.0]),
        dur_cv2=np.zeros(2),
        count=np.array([1, 1]),
        k_per_group=(0, 0, 1),
        scores={},
    )


def test_cbs_relabel_frees_the_short_container_at_once():
    """§5.1: a task "initially assumed to be short" is "relabelled and assigned to the right task class" once
    it outlives the split; the M/G/N count holds a short container for min(duration, threshold). So when the
    long task relabels at 100 s, the short task waiting behind it takes the freed short container then — not
    at the next decision (300 s), which is what happened when the container itself turned long."""
    from sim.harmony.run import Demand

    tc = _one_class(100.0)
    jobs = pl.DataFrame(
        {
            "submit_s": [0.0, 1.0],
            "duration_s": [250.0, 10.0],  # the first is long (relabels at 100 s), the second short
            "cpu": [0.1, 0.1],
            "mem": [0.1, 0.1],
            "priority": [0, 0],
        }
    )
    z = np.zeros((2, 1))
    dem = Demand(z, z, z, z, np.array([[1.0, 1.0], [1.0, 1.0]]), np.zeros(1), np.zeros(1), 0.0)
    types = (MachineType("one", 1.0, 1.0, 2, 100, 200),)
    r = simulate_harmony(jobs, tc, dem, HarmonyConfig(scheme="cbs", types=types))
    assert r.tasks["start_s"].to_list() == [0.0, 100.0]
    assert r.metrics["unscheduled"] == 0


def _two_machines_one_container_each():
    """One gratis cluster (containers 0.6 × 0.6, so one a machine) split at 100 s, one short and one long
    container demanded, two 1 × 1 machines: first fit puts the short container on machine 0 and the long
    one on machine 1."""
    from sim.harmony.classify import TaskClasses
    from sim.harmony.run import Demand

    six = np.full((2, 2), 0.6)
    tc = TaskClasses(
        group=np.array([2]), centroid=np.array([[0.6, 0.6]]), threshold_s=np.array([100.0]), mean=six,
        std=np.zeros((2, 2)), max=six, dur_mean_s=np.array([10.0, 250.0]), dur_cv2=np.zeros(2),
        count=np.array([1, 1]), k_per_group=(0, 0, 1), scores={},
    )  # fmt: skip
    jobs = pl.DataFrame(
        {"submit_s": [0.0, 1.0], "duration_s": [250.0, 10.0], "cpu": [0.6, 0.6], "mem": [0.6, 0.6],
         "priority": [0, 0]}
    )  # fmt: skip
    z = np.zeros((2, 1))
    dem = Demand(z, z, z, z, np.array([[1.0, 1.0], [1.0, 1.0]]), np.zeros(1), np.zeros(1), 0.0)
    return tc, jobs, dem, (MachineType("one", 1.0, 1.0, 2, 100, 200),)


def test_cbs_relabel_swaps_with_a_free_long_container_elsewhere():
    """A container is "a logical reservation of resources" (§4). When the long task relabels at 100 s on
    machine 0, whose only container it holds, the free long container of its class sits on machine 1: the
    two swap classes, so the short task waiting since 1 s starts at 100 s on machine 1. Freeing the short
    container on machine 0 instead (``relabel="free"``, the former model) promises a container on a machine
    the long task still fills: the short task waits for it to end (250 s) while machine 1 idles."""
    tc, jobs, dem, types = _two_machines_one_container_each()
    r = simulate_harmony(jobs, tc, dem, HarmonyConfig(scheme="cbs", types=types))
    assert r.tasks["start_s"].to_list() == [0.0, 100.0]
    assert r.tasks["machine"].to_list() == [0, 1]
    old = simulate_harmony(jobs, tc, dem, HarmonyConfig(scheme="cbs", types=types, relabel="free"))
    assert old.tasks["start_s"].to_list() == [0.0, 250.0]
    with pytest.raises(ValueError, match="relabel"):
        HarmonyConfig(relabel="move")


def test_oracle_demand_reads_the_true_counts(small):
    """``with_oracle`` (an isolating run of forecast error) replaces the forecasts by the true counts and
    recomputes the containers as :func:`predict_demand` does from forecasts."""
    from sim.harmony.run import required_containers, with_oracle

    jobs, tc = small
    cfg = HarmonyConfig()
    dem = predict_demand(jobs, tc, 12, cfg, ForecastConfig(window=12, refit_every=12, min_train=4))
    assert np.array_equal(dem.containers, required_containers(dem.arrivals_fc, dem.long_fc, tc, cfg))
    o = with_oracle(dem, tc, cfg)
    assert np.array_equal(o.arrivals_fc, dem.arrivals) and np.array_equal(o.long_fc, dem.long_fc)
    ol = with_oracle(dem, tc, cfg, long=True)
    assert np.array_equal(ol.long_fc, dem.long_running)
    assert np.array_equal(ol.containers[:, 1::2], np.ceil(dem.long_running - 1e-9))
    assert not np.array_equal(o.containers, dem.containers)  # the forecasts were not the truth


@pytest.mark.parametrize("scheme", ["cbp", "cbs"])
def test_backlog_reading_provisions_for_waiting_tasks(scheme):
    """``backlog`` (§4's containers "required to schedule the current workload"): tasks waiting at a decision
    add short containers of their class, so with no forecast demand they still start at the next decision;
    by default (§9.2: CBP and CBS share the forecast demand) nothing is provisioned for them."""
    from sim.harmony.run import Demand

    tc = _one_class(100.0)
    jobs = pl.DataFrame(
        {"submit_s": [10.0, 20.0, 30.0], "duration_s": [50.0] * 3, "cpu": [0.1] * 3, "mem": [0.1] * 3,
         "priority": [0] * 3}
    )  # fmt: skip
    z = np.zeros((2, 1))
    dem = Demand(z, z, z, z, np.zeros((2, 2)), np.zeros(1), np.zeros(1), 0.0)
    types = (MachineType("one", 1.0, 1.0, 2, 100, 200),)
    off = simulate_harmony(jobs, tc, dem, HarmonyConfig(scheme=scheme, types=types))
    on = simulate_harmony(jobs, tc, dem, HarmonyConfig(scheme=scheme, types=types, backlog=True))
    assert off.metrics["unscheduled"] == 3
    assert on.metrics["unscheduled"] == 0 and on.tasks["start_s"].to_list() == [300.0] * 3


def test_cbs_repack_moves_running_containers_so_the_plan_fits():
    """Algorithm 1, lines 10–11: "Compute a re-packing configuration on all selected active machines ...
    perform re-packing using FF". Two running tasks hold a 0.45 × 0.45 container each, one on each of two
    1 × 1 machines; the decision plans two of them and one 0.9 × 0.9 container. Kept where they run, no
    machine has room for the big container (the model without migration places none); re-packed by first
    fit, both small containers share machine 0 (the task on machine 1 moves and keeps running) and the big
    one goes on machine 1."""
    from sim.harmony.engine import place_containers, repack_running

    csize = np.array([[0.45, 0.45], [0.9, 0.9]])
    mcap = np.ones((2, 2))
    mtype = np.zeros(2, np.int64)
    ts, te = np.array([0]), np.array([2])
    tgt = np.array([[2, 1]])
    order = np.array([1, 0])

    def state_now():
        occ = np.array([[1, 0], [1, 0]])
        used, nrun, tused = np.full((2, 2), 0.4), np.ones(2, np.int64), np.full((1, 2), 0.8)
        return occ, occ.copy(), used, nrun, tused, np.array([[2]]), np.array([0, 1])

    occ, slots, *_ = state_now()
    state = np.ones(2, np.int64)
    kept = place_containers(tgt, tgt, csize, order, mcap, state, occ, slots, ts, te)
    assert kept[0, 1] == 0  # without migration the big container fits nowhere

    occ, slots, used, nrun, tused, run_qm, mach = state_now()
    n_on = np.array([2])
    cpu = mem = np.full(2, 0.4)
    q, slotc = np.zeros(2, np.int64), np.zeros(2, np.int64)
    moved, stuck = repack_running(
        np.array([0, 1]), tgt, csize, order, mcap, mtype, ts, te, state, n_on, occ, used, nrun, tused, run_qm,
        cpu, mem, q, slotc, mach,
    )  # fmt: skip
    assert (moved, stuck) == (1, 0) and mach.tolist() == [0, 0]
    assert occ.tolist() == [[2, 0], [0, 0]] and nrun.tolist() == [2, 0]
    assert np.allclose(used, [[0.8, 0.8], [0.0, 0.0]]) and np.allclose(tused, [[0.8, 0.8]])
    placed = place_containers(tgt, tgt, csize, order, mcap, state, occ, slots, ts, te)
    assert placed.tolist() == [[2, 1]] and slots[1].tolist() == [0, 1]


def test_cbs_repack_turns_a_drained_machine_off_at_once():
    """With ``repack`` a decision that wants one machine where two each run a long task moves one task
    (it keeps running, on the other machine) and turns its machine off at once; without it the machine
    drains until its task ends (1,000 s), so the second interval has two machines on, not one. Fails under
    the model without migration (``repack=False``), which is still the default."""
    from sim.harmony.classify import TaskClasses
    from sim.harmony.run import Demand

    three = np.full((2, 2), 0.3)
    tc = TaskClasses(
        group=np.array([2]), centroid=np.array([[0.3, 0.3]]), threshold_s=np.array([np.inf]), mean=three,
        std=np.zeros((2, 2)), max=three, dur_mean_s=np.array([100.0, 0.0]), dur_cv2=np.zeros(2),
        count=np.array([1, 0]), k_per_group=(0, 0, 1), scores={},
    )  # fmt: skip
    jobs = pl.DataFrame(
        {"submit_s": [0.0] * 4, "duration_s": [1000.0, 100.0, 100.0, 1000.0], "cpu": [0.3] * 4,
         "mem": [0.3] * 4, "priority": [0] * 4}
    )  # fmt: skip
    z = np.zeros((2, 1))
    dem = Demand(z, z, z, z, np.array([[4.0, 0.0], [2.0, 0.0]]), np.zeros(1), np.zeros(1), 0.0)
    types = (MachineType("one", 1.0, 1.0, 2, 100, 200),)
    cfg = {"scheme": "cbs", "types": types, "omega": 1.0}
    old = simulate_harmony(jobs, tc, dem, HarmonyConfig(**cfg))
    new = simulate_harmony(jobs, tc, dem, HarmonyConfig(**cfg, repack=True))
    # rows by duration: the two short tasks, then the long ones; first fit puts three on machine 0
    assert old.tasks["machine"].to_list() == [0, 0, 0, 1]
    assert old.intervals["machines_on_0"].to_list() == [2.0, 2.0]
    assert new.intervals["machines_on_0"].to_list() == [2.0, 1.0]
    # at 300 s machine 0 (first of two equally loaded) is turned off: its long task moves to machine 1
    assert new.tasks["machine"].to_list() == [0, 0, 1, 1] and new.migrations == 1
    assert new.tasks["end_s"].to_list() == old.tasks["end_s"].to_list()  # moved, not restarted


def test_long_count_running_reads_the_schemes_own_long_tasks():
    """``long_count="running"`` (an isolating reading): the long-class demand at a decision is the number of
    the scheme's tasks running past their threshold, not the forecast; here the forecast says none at 300 s
    while one task has run 300 s of 1,000 (threshold 100 s), so only the reading keeps a machine planned."""
    from sim.harmony.run import Demand

    tc = _one_class(100.0)
    jobs = pl.DataFrame(
        {"submit_s": [0.0], "duration_s": [1000.0], "cpu": [0.1], "mem": [0.1], "priority": [0]}
    )  # fmt: skip
    z = np.zeros((2, 1))
    dem = Demand(z, z, z, z, np.array([[1.0, 0.0], [0.0, 0.0]]), np.zeros(1), np.zeros(1), 0.0)
    types = (MachineType("one", 1.0, 1.0, 2, 100, 200),)
    for scheme in ("cbp", "cbs"):
        fc = simulate_harmony(jobs, tc, dem, HarmonyConfig(scheme=scheme, types=types))
        own = simulate_harmony(jobs, tc, dem, HarmonyConfig(scheme=scheme, types=types, long_count="running"))
        assert fc.intervals["target_0"].to_list() == [1, 0]
        assert own.intervals["target_0"].to_list() == [1, 1]
    with pytest.raises(ValueError, match="long_count"):
        HarmonyConfig(long_count="forecast")


def test_quick_study_is_headline_plus_a_regular_subgrid_of_the_sweep() -> None:
    """``varcap run``'s Harmony study: every run of it is a run of ``harmony`` (same ids, same cache), it
    holds the headline's runs (paper 004's row) and ω on both sides of §9.2's turning point."""
    from studies.harmony.runner import OMEGAS, QUICK_OMEGAS, harmony_scenarios

    full = {s.id for s in harmony_scenarios("harmony")}
    quick = harmony_scenarios("harmony-quick")
    assert {s.id for s in quick} <= full
    assert {s.id for s in harmony_scenarios("harmony-headline")} <= {s.id for s in quick}
    omegas = sorted({s.omega for s in quick if s.scheme != "baseline"})
    assert omegas == sorted({*QUICK_OMEGAS, 1.2}) and set(QUICK_OMEGAS) < set(OMEGAS)
    assert min(omegas) < 1.1 < max(omegas) and len(quick) == 11


def test_ar_fit_is_statsmodels_arima_bit_for_bit() -> None:
    """``_fit_ar`` calls statsmodels' GLS estimator as ``ARIMA(..., trend="c").fit(method="burg")`` does: the
    same constant and coefficients, bit for bit, on counts, walks and spikes, and on a window whose Burg
    step refuses its roots (both fall back to Yule-Walker)."""
    import warnings

    from sim.harmony.forecast import _fit_ar

    def arima(y: np.ndarray, order: int) -> tuple[float, np.ndarray]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                res = ARIMA(y, order=(order, 0, 0), trend="c").fit(method="burg")
            except ValueError:
                res = ARIMA(y, order=(order, 0, 0), trend="c").fit(method="yule_walker")
        return float(res.params[0]), np.asarray(res.params[1 : 1 + order], dtype=float)

    rng = np.random.default_rng(1)
    windows = [(np.array([3.0, 4.0, 3.0, 2.0]), 2), (np.array([2.0, 2.0, 0.0, 2.0]), 2)]
    for i in range(24):
        n, order = int(rng.integers(12, 289)), int(rng.integers(1, 4))
        y = [
            np.abs(np.cumsum(rng.normal(size=n))) * 3,
            rng.poisson(rng.uniform(0.2, 30), size=n).astype(float),
            np.where(rng.random(n) < 0.9, 0.0, rng.uniform(1, 50, n)),
        ][i % 3]
        windows.append((y, order))
    with warnings.catch_warnings(), pytest.raises(ValueError):
        warnings.simplefilter("ignore")
        ARIMA(windows[0][0], order=(2, 0, 0), trend="c").fit(method="burg")  # the fallback is exercised
    for y, order in windows:
        mu, phi = _fit_ar(y, order)
        ref_mu, ref_phi = arima(y, order)
        assert mu == ref_mu and np.array_equal(phi, ref_phi)
