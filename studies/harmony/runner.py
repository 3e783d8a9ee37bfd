"""The ``harmony`` study runner (paper 004 §9): baseline / CBP / CBS on the Borg 2011 sample, and the ω sweep.

§9.2: "In our first experiment, we use an over-provisioning factor of 1.2"; "we varied the values of the
over-provisioning factor ω^k between 0.6-2.2 to produce different tradeoffs between operational costs
(energy and reconfiguration cost) and the average scheduling delay" (Figs. 32–33). The headline (CBS's
energy-cost reduction against the baseline) is :mod:`studies.harmony.claims`.

Workloads (from ``core_jobs`` rows of ``borg2011``: normalized cpu and memory requests, priority):

* ``borg2011-sample`` — the new task runs (submitted after trace start; §9: "we mainly focus on
  simulating the arrival of new tasks") of the first contiguous coverage window of the embedded
  task_events shards (0–5.73 h: 69 control intervals);
* ``borg2011-7d`` — the Borg-scale resampled workload: 7 days of one-hour blocks drawn (seeded) from the
  sample window, each replaying that hour's task runs with their real requests and durations.

Classes (§5.1) are fitted once on every borg2011 task run (seeded K-means); the demand forecasts are
computed once per workload and shared by all schemes and ω values, so the schemes see identical inputs.

Results are cached per scenario under ``data/sim/harmony/<id>/`` (``run.json`` with the metrics, and
``intervals.parquet``, ``tasks.parquet``), keyed by the code version of ``sim/harmony`` and this module
and by the workload's hash; nothing here opens DuckDB.

Not registered in :data:`studies.catalogue.STUDIES`: that catalogue holds :class:`studies.scenarios.Scenario`
runs of ``sim.simulate`` (one policy on a capacity trace); Harmony scenarios choose the capacity
themselves. ``varcap sweep harmony`` materializes the ``harmony`` asset group instead.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sim.harmony.classify import TaskClasses
from sim.harmony.forecast import ForecastConfig
from sim.harmony.run import Demand, HarmonyConfig, container_sizes, predict_demand, simulate_harmony
from sim.harmony.workload import WORKLOADS, borg_frame, sample_window_s, workload  # noqa: F401 (re-exported)
from sim.paths import data_dir
from studies.harmony import HARMONY_STUDIES as _HARMONY_STUDIES
from studies.sweep import write_json_atomic, write_parquet_atomic

OMEGAS = tuple(round(0.6 + 0.2 * i, 1) for i in range(9))  # 0.6 … 2.2
#: ``harmony-quick``'s ω (a smoke test: every fourth value of the sweep, both ends and the middle, on both
#: sides of §9.2's ω = 1.1 turning point, beside the headline's 1.2): 11 runs instead of 21. Every other
#: value until 2026-12-02 (15 runs, 72 s of `make run` on a 2-core machine; the sweep's shape is the full
#: study's reading, `varcap sweep harmony`)
QUICK_OMEGAS = OMEGAS[::4]  # 0.6, 1.4, 2.2
SCHEMES = ("baseline", "cbp", "cbs")


@dataclass(frozen=True)
class HarmonyScenario:
    """One Harmony run: workload, scheme, ω, cluster scale (fraction of Table 2), seed, and the reading of
    the baseline's type order (:func:`sim.harmony.machines.type_order`; default ``paper``)."""

    workload: str = "borg2011-sample"
    scheme: str = "cbs"
    omega: float = 1.2
    machine_fraction: float = 1.0
    seed: int = 0
    efficiency: str = "paper"

    @property
    def id(self) -> str:
        d = asdict(self)
        if d["efficiency"] == "paper":  # the default reading keeps the ids scenarios had before it existed
            del d["efficiency"]
        blob = json.dumps(d, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    def config(self) -> HarmonyConfig:
        return HarmonyConfig(
            scheme=self.scheme,
            omega=self.omega,
            machine_fraction=self.machine_fraction,
            seed=self.seed,
            efficiency=self.efficiency,
        )


#: the baseline's type-order readings other than the default, run beside it (baseline only: §9's order is
#: the baseline's; CBP and CBS keep the default order for the types they try without containers)
OTHER_ORDERS = ("cpu", "capacity")


def harmony_scenarios(name: str = "harmony") -> list[HarmonyScenario]:
    """``harmony``: the sample × {baseline, CBP, CBS} at ω = 1.2, the baseline under the other type-order
    readings (:data:`OTHER_ORDERS`), plus CBP/CBS over ω ∈ {0.6, 0.8, …, 2.2};
    ``harmony-7d``: the 7-day resampled workload × the three schemes at ω = 1.2; ``harmony-headline``: the
    sample × the three schemes at ω = 1.2 and the baseline's other orders (paper 004's headline row of ``varcap reproduce --quick``; the
    same scenarios, so the same cached runs, as in ``harmony``); ``harmony-quick`` (``varcap run``'s):
    ``harmony-headline`` plus CBP/CBS at every fourth ω of the sweep (:data:`QUICK_OMEGAS`);
    ``harmony-smoke``: the sample on a 1 % cluster (tests)."""
    orders = [HarmonyScenario("borg2011-sample", "baseline", efficiency=e) for e in OTHER_ORDERS]
    if name == "harmony-headline":
        return [HarmonyScenario("borg2011-sample", s) for s in SCHEMES] + orders
    if name in ("harmony", "harmony-quick"):
        out = [HarmonyScenario("borg2011-sample", s) for s in SCHEMES] + orders
        omegas = OMEGAS if name == "harmony" else QUICK_OMEGAS
        out += [HarmonyScenario("borg2011-sample", s, w) for w in omegas for s in ("cbp", "cbs") if w != 1.2]
        return out
    if name == "harmony-7d":
        return [HarmonyScenario("borg2011-7d", s) for s in SCHEMES]
    if name == "harmony-smoke":
        return [HarmonyScenario("borg2011-sample", s, machine_fraction=0.1) for s in SCHEMES]
    raise KeyError(f"unknown Harmony study {name!r}; studies: {', '.join(HARMONY_STUDIES)}")


HARMONY_STUDIES = _HARMONY_STUDIES  # defined in the package, which imports no simulator


# ------------------------------------------------------------------------------------------------ inputs
# ------------------------------------------------------------------------------------------- classes IO
def classes_frame(tc: TaskClasses, cfg: HarmonyConfig | None = None) -> pl.DataFrame:
    """One row per class (``out_harmony_task_classes``): group, size cluster, short/long, centroid, member
    statistics, Theorem 1 container size, split threshold, count."""
    from sim.harmony.classify import GROUPS

    cs = container_sizes(tc, cfg or HarmonyConfig())
    rows = []
    for c in range(tc.n_classes):
        q = c // 2
        rows.append(
            {
                "class_id": c,
                "size_cluster": q,
                "priority_group": GROUPS[int(tc.group[q])],
                "length": "long" if c % 2 else "short",
                "centroid_cpu": float(tc.centroid[q, 0]),
                "centroid_mem": float(tc.centroid[q, 1]),
                "mean_cpu": float(tc.mean[c, 0]),
                "mean_mem": float(tc.mean[c, 1]),
                "std_cpu": float(tc.std[c, 0]),
                "std_mem": float(tc.std[c, 1]),
                "max_cpu": float(tc.max[c, 0]),
                "max_mem": float(tc.max[c, 1]),
                "container_cpu": float(cs[c, 0]),
                "container_mem": float(cs[c, 1]),
                "threshold_s": float(tc.threshold_s[q]) if np.isfinite(tc.threshold_s[q]) else None,
                "duration_mean_s": float(tc.dur_mean_s[c]),
                "duration_cv2": float(tc.dur_cv2[c]),
                "tasks": int(tc.count[c]),
            }
        )
    return pl.DataFrame(rows, infer_schema_length=None)


def classes_from_frame(df: pl.DataFrame) -> TaskClasses:
    """Rebuild :class:`TaskClasses` from :func:`classes_frame` rows (sorted by class id)."""
    from sim.harmony.classify import GROUPS

    df = df.sort("class_id")
    short = df.filter(pl.col("length") == "short")
    group = np.array([GROUPS.index(g) for g in short["priority_group"]], dtype=np.int64)
    thr = short["threshold_s"].fill_null(np.inf).to_numpy().astype(float)
    two = lambda a, b: np.column_stack([df[a].to_numpy(), df[b].to_numpy()]).astype(float)  # noqa: E731
    ks = tuple(int((group == g).sum()) for g in range(len(GROUPS)))
    return TaskClasses(
        group,
        np.column_stack([short["centroid_cpu"], short["centroid_mem"]]).astype(float),
        thr,
        two("mean_cpu", "mean_mem"),
        two("std_cpu", "std_mem"),
        two("max_cpu", "max_mem"),
        df["duration_mean_s"].to_numpy().astype(float),
        df["duration_cv2"].to_numpy().astype(float),
        df["tasks"].to_numpy().astype(np.int64),
        ks,
        {},
    )


# --------------------------------------------------------------------------------------------- running
def harmony_dir() -> Path:
    return data_dir() / "sim" / "harmony"


@functools.cache
def code_version() -> str:
    """Hash of ``sim/harmony`` and this module (a change invalidates cached Harmony runs)."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for f in [*sorted((root / "sim" / "harmony").glob("*.py")), Path(__file__).resolve()]:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def frame_version(*frames: pl.DataFrame) -> str:
    h = hashlib.sha256()
    for f in frames:
        h.update(str(f.hash_rows().sum()).encode())
        h.update(str(f.shape).encode())
    return h.hexdigest()[:12]


def demand_frame(dem: Demand, classes: TaskClasses) -> pl.DataFrame:
    """Long table of ``out_harmony_demand``: one row per interval and size class."""
    from sim.harmony.classify import GROUPS

    T, Q = dem.arrivals.shape
    iv = np.repeat(np.arange(T), Q)
    q = np.tile(np.arange(Q), T)
    return pl.DataFrame(
        {
            "interval": iv,
            "t_s": iv * 300.0,
            "size_cluster": q,
            "priority_group": np.array(GROUPS)[classes.group[q]],
            "arrivals": dem.arrivals.ravel(),
            "arrivals_forecast": dem.arrivals_fc.ravel(),
            "long_running": dem.long_running.ravel(),
            "long_running_forecast": dem.long_fc.ravel(),
            "containers_short": dem.containers[:, 0::2].ravel(),
            "containers_long": dem.containers[:, 1::2].ravel(),
        }
    )


def run_study(
    name: str,
    borg: pl.DataFrame,
    classes: TaskClasses,
    prices_usd_per_kwh: np.ndarray | None = None,
    out: Path | None = None,
    progress: Any = None,
) -> list[dict[str, Any]]:
    """Run (or reuse cached) every scenario of study ``name``; returns their ``run.json`` rows."""
    out = out or harmony_dir()
    rows = []
    demands: dict[str, tuple[pl.DataFrame, Demand]] = {}
    for sc in harmony_scenarios(name):
        jobs, n_iv = workload(borg, sc.workload, seed=sc.seed)
        version = f"{code_version()}-{frame_version(jobs)}-{frame_version(classes_frame(classes))}"
        if prices_usd_per_kwh is not None:
            version += "-" + hashlib.sha256(np.asarray(prices_usd_per_kwh).tobytes()).hexdigest()[:8]
        d = out / sc.id
        try:
            row = json.loads((d / "run.json").read_text())
            if row.get("version") == version and (d / "intervals.parquet").is_file():
                rows.append({**row, "study": name, "cache_hit": True})  # shared with another study
                continue
        except (OSError, ValueError):
            pass
        if sc.workload not in demands:
            fc = ForecastConfig(refit_every=24 if n_iv <= 288 else 288)
            demands[sc.workload] = (jobs, predict_demand(jobs, classes, n_iv, sc.config(), fc))
        jobs, dem = demands[sc.workload]
        t0 = time.perf_counter()
        r = simulate_harmony(jobs, classes, dem, sc.config(), prices_usd_per_kwh)
        d.mkdir(parents=True, exist_ok=True)
        write_parquet_atomic(r.intervals, d / "intervals.parquet")
        write_parquet_atomic(r.tasks.select("delay_s", "group", "scheduled"), d / "tasks.parquet")
        row = {
            "scenario_id": sc.id,
            "study": name,
            "params": asdict(sc),
            "metrics": r.metrics,
            "lp_seconds": r.lp_seconds,
            "wall_s": time.perf_counter() - t0,
            "forecast_s": dem.seconds,
            "version": version,
        }
        write_json_atomic(row, d / "run.json", sort_keys=True)
        rows.append({**row, "cache_hit": False})
        if progress is not None:
            progress(sc, row)
    return rows


def load_results(name: str = "harmony", out: Path | None = None) -> list[dict[str, Any]]:
    """Cached ``run.json`` rows of study ``name`` (whatever their version; empty if none ran)."""
    out = out or harmony_dir()
    rows = []
    for sc in harmony_scenarios(name):
        f = out / sc.id / "run.json"
        if f.is_file():
            rows.append(json.loads(f.read_text()))
    return rows


def energy_change_pct(
    rows: list[dict[str, Any]],
    scheme: str,
    metric: str = "energy_cost_usd",
    omega: float = 1.2,
    order: str = "paper",
) -> float:
    """100 × (scheme − baseline)/baseline of ``metric`` on the same workload at ω, the baseline under type
    order ``order`` and the scheme under the default order (nan if either is missing)."""
    by = {
        (
            r["params"]["workload"],
            r["params"]["scheme"],
            r["params"]["omega"],
            r["params"].get("efficiency", "paper"),
        ): r
        for r in rows
    }
    for wl in WORKLOADS:
        b = by.get((wl, "baseline", 1.2, order))
        s = by.get((wl, scheme, omega, "paper"))
        if b and s:
            return 100.0 * (s["metrics"][metric] - b["metrics"][metric]) / b["metrics"][metric]
    return float("nan")


def results_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """``out_harmony_results``: one row per scenario with energy, cost, delays per priority group, utilization."""
    recs = []
    for r in rows:
        p, m = r["params"], r["metrics"]
        recs.append(
            {
                "scenario_id": r["scenario_id"],
                "study": r.get("study", "harmony"),
                **p,
                **m,
                "wall_s": r["wall_s"],
                "lp_seconds": r["lp_seconds"],
            }
        )
    return pl.DataFrame(recs, infer_schema_length=None)
