"""Per-attempt energy and carbon, computed from a run's attempt log and capacity steps after the
run — no engine changes, for every policy.

**Power model** (:class:`PowerModel`): a machine draws ``idle_w + (busy_w − idle_w) × u`` with ``u`` the
fraction of its cores in use — the linear model of Fan, Weber & Barroso, "Power provisioning for a
warehouse-sized computer", ISCA 2007 §4.1. Its two parameters are a published SPECpower_ssj2008 result:
``power_ssj2008-20120306-00434`` (https://www.spec.org/power_ssj2008/results/res2012q1/power_ssj2008-20120306-00434.html,
Dell PowerEdge R620, 2 × Intel Xeon E5-2670, 16 cores / 32 threads), "Average Active Power" 54.1 W at
active idle and 243 W at the 100 % target load (figures as transcribed, with that result's URL, in AtLarge
Research's OpenDC, ``MachineSpecs.kt`` of its radice experiments; the spec.org page itself was not
re-read here). The simulated machines have 24 cores, the measured one 16 cores (32 threads): the wattage is
that server's, not scaled. The same result's intermediate loads (126 W at 50 %) lie below the line between
its endpoints (148.6 W), so the linear model overstates mid-load power by up to ~18 % of it. An *attempt*
of ``c`` cores on a machine of ``C`` cores is charged its share of the whole machine, ``c / C × busy_w``
(idle power shared by cores in use); the run's ``energy_kwh`` is the facility's: idle power of every
machine alive plus the dynamic power of every attempt.

**Carbon**: ``gco2`` integrates power × the hourly intensity (gCO2eq/kWh) at each instant. Without a signal
the carbon metrics are NaN. Deferral metrics compare each completed job's attempts with the same job run
from its submit time (``carbon_saving_pct``), and that saving with the saving of the clairvoyant start
choice (``oracle_share``; needs the policy's ``slack``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

HOUR = 3600.0
_KILLED, _COMPLETED = 1, 0  # attempt outcomes (sim.metrics.ATT_*)


@dataclass(frozen=True)
class PowerModel:
    """Machine power, watts: active idle and fully busy — SPECpower_ssj2008 result
    power_ssj2008-20120306-00434 (Dell PowerEdge R620; source and caveats in the module docstring)."""

    idle_w: float = 54.1
    busy_w: float = 243.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.idle_w <= self.busy_w or self.busy_w <= 0:
            raise ValueError(f"power model needs 0 ≤ idle_w ≤ busy_w, busy_w > 0 (got {self})")


POWER = PowerModel()


@dataclass(frozen=True)
class CarbonSignal:
    """Hourly carbon intensity (gCO2eq/kWh) with history: simulation time 0 is the start of hour
    ``origin_h`` of ``values`` (hours before it are what a forecast may read at the start)."""

    values: np.ndarray
    origin_h: int = 0
    label: str = ""

    def __post_init__(self) -> None:
        v = np.asarray(self.values, np.float64)
        if v.ndim != 1 or v.size <= self.origin_h or not np.all(np.isfinite(v)) or self.origin_h < 0:
            raise ValueError("carbon signal needs finite hourly values covering hour origin_h")
        object.__setattr__(self, "values", v)

    def cumulative(self, t: np.ndarray) -> np.ndarray:
        """∫_0^t intensity dt (gCO2/kWh·s) at simulation times ``t`` (past the signal: its last value)."""
        v = self.values[self.origin_h :]
        knots = np.arange(len(v) + 1) * HOUR
        cum = np.concatenate([[0.0], np.cumsum(v) * HOUR])
        t = np.asarray(t, np.float64)
        out = np.interp(t, knots, cum)
        past = t > knots[-1]
        return np.where(past, cum[-1] + (t - knots[-1]) * v[-1], out)


@dataclass(frozen=True)
class Metric:
    name: str
    kind: type
    unit: str
    description: str


#: carbon and energy metrics, after :data:`sim.metrics.METRICS` in ``out_sim_results``
CARBON_METRICS: tuple[Metric, ...] = (
    Metric(
        "energy_kwh", float, "kWh", "facility energy: idle power of machines alive + attempts' dynamic power"
    ),
    Metric(
        "gco2", float, "gCO2eq", "facility energy × hourly grid intensity at each instant (NaN: no signal)"
    ),
    Metric("wasted_gco2", float, "gCO2eq", "carbon charged to attempts later killed"),
    Metric("gco2_per_useful_core_hour", float, "gCO2eq/core·h", "gco2 / core-hours of completed attempts"),
    Metric(
        "carbon_saving_pct",
        float,
        "%",
        "carbon of completed jobs' attempts vs the same jobs run from their submit time (signal only)",
    ),
    Metric(
        "oracle_share", float, "-", "carbon_saving_pct / the saving of clairvoyant starts within the slack"
    ),
    Metric("deadline_miss_rate", float, "fraction", "jobs not completed by submit + slack × duration"),
)
CARBON_METRIC_NAMES = tuple(m.name for m in CARBON_METRICS)


def carbon_accounting(
    out: object,
    submit_s: np.ndarray,
    duration_s: np.ndarray,
    cores: np.ndarray,
    machine_cores: float,
    signal: CarbonSignal | None = None,
    power: PowerModel = POWER,
    slack: float | None = None,
    window: tuple[float, float] | None = None,
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """The :data:`CARBON_METRICS` of a run (``out``: a :class:`sim.metrics.EngineOutput`) over ``window``
    (attempts clipped to it; default the whole run) and per job ``energy_kwh, gco2, wasted_gco2``."""
    a, b = window if window is not None else (0.0, np.inf)
    job = out.att_job  # type: ignore[attr-defined]
    s = np.maximum(out.att_start_s, a)  # type: ignore[attr-defined]
    e = np.minimum(out.att_end_s, b)  # type: ignore[attr-defined]
    e = np.maximum(e, s)
    oc = out.att_outcome  # type: ignore[attr-defined]
    share = cores[job] / machine_cores
    att_kw = share * power.busy_w / 1000.0
    att_kwh = att_kw * (e - s) / HOUR
    n = len(submit_s)
    j_kwh = np.bincount(job, att_kwh, n)
    # facility: idle power of machines alive (capacity steps in cores) + dynamic power of attempts
    ct, cc = np.asarray(out.cap_time_s, np.float64), np.asarray(out.cap_cores, np.float64)  # type: ignore[attr-defined]
    end = b if np.isfinite(b) else float(max(np.max(out.att_end_s, initial=0.0), ct[-1] if ct.size else 0.0))  # type: ignore[attr-defined]
    lo = np.clip(ct, a, end)
    hi = np.clip(np.r_[ct[1:], end], a, end) if ct.size else ct
    idle_kw = cc / machine_cores * power.idle_w / 1000.0
    dyn_kw = share * (power.busy_w - power.idle_w) / 1000.0
    energy = float(np.sum(idle_kw * (hi - lo)) / HOUR + np.sum(dyn_kw * (e - s)) / HOUR)
    done = oc == _COMPLETED
    useful_ch = float(np.sum(cores[job[done]] * (e[done] - s[done])) / HOUR)
    m = {k: float("nan") for k in CARBON_METRIC_NAMES}
    m["energy_kwh"] = energy
    per_job = {"energy_kwh": j_kwh, "gco2": np.full(n, np.nan), "wasted_gco2": np.full(n, np.nan)}
    if slack is not None:
        fin = np.full(n, np.inf)
        np.minimum.at(fin, job[done], out.att_end_s[done])  # type: ignore[attr-defined]
        m["deadline_miss_rate"] = float(np.mean(fin > submit_s + slack * duration_s + 1e-6)) if n else 0.0
    if signal is None:
        return m, per_job
    g = signal.cumulative
    att_g = att_kw * (g(e) - g(s)) / HOUR
    killed = oc == _KILLED
    per_job["gco2"] = np.bincount(job, att_g, n)
    per_job["wasted_gco2"] = np.bincount(job[killed], att_g[killed], n).astype(np.float64)
    facility = float(np.sum(idle_kw * (g(hi) - g(lo))) / HOUR + np.sum(dyn_kw * (g(e) - g(s))) / HOUR)
    m["gco2"] = facility
    m["wasted_gco2"] = float(att_g[killed].sum())
    m["gco2_per_useful_core_hour"] = facility / useful_ch if useful_ch > 0 else float("nan")
    # deferral: completed jobs' attempts (cores × ∫ intensity) against the same jobs from their submit
    completed = np.zeros(n, bool)
    completed[job[done]] = True
    completed &= submit_s >= a  # jobs submitted in the measurement window
    ci = cores[job] * (g(out.att_end_s) - g(out.att_start_s))  # type: ignore[attr-defined]
    real = float(np.sum(ci[completed[job]]))
    sub, dur, c = submit_s[completed], duration_s[completed], cores[completed]
    base = float(np.sum(c * (g(sub + dur) - g(sub))))
    if base > 0:
        m["carbon_saving_pct"] = 100.0 * (1.0 - real / base)
        if slack is not None:
            from sim.forecast import best_starts, forecast_matrix

            hours = len(signal.values) - signal.origin_h
            f = forecast_matrix(signal.values, signal.origin_h + np.arange(hours), "oracle")
            ideal_start = best_starts(sub, dur, slack, f)
            ideal = float(np.sum(c * (g(ideal_start + dur) - g(ideal_start))))
            saved = 1.0 - ideal / base
            m["oracle_share"] = (1.0 - real / base) / saved if saved > 0 else float("nan")
    return m, per_job
