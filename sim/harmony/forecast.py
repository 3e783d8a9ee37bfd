"""§5.2 demand prediction: per-class counts per control interval, one step ahead, trailing windows only.

"the prediction module is responsible for forecasting the arrival rate of each task class. Currently, we
have implemented a time series-based predictor using the ARIMA [9] model"; for long-running tasks "we
use the ARIMA model to predict the number of long running tasks, which translates into the number of
required containers." §9: "The DCP procedure is performed once every 5 minutes".

Model: ARIMA(p, 0, 0) with a constant (statsmodels, Burg estimator; Yule-Walker where Burg's roots are
non-stationary) fitted on the ``window`` intervals
before the refit time, refitted every ``refit_every`` intervals; between refits the fitted model is
applied to the newest observations (for an AR(p) model the one-step forecast given the last p values is
``μ + Σ φ_i (y_{t−i} − μ)``, exactly what statsmodels' ``forecast(1)`` returns). Before ``min_train``
intervals exist the forecast is the last observed value (persistence). The forecast for interval t reads
only intervals < t (tested by perturbing the future).
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ForecastConfig:
    order: int = 2
    window: int = 288  # trailing intervals used for a fit (one day of 5-minute intervals)
    refit_every: int = 24
    min_train: int = 12


def counts_per_interval(
    times_s: np.ndarray, cls: np.ndarray, n_classes: int, interval_s: float, n: int
) -> np.ndarray:
    """(n, n_classes) number of events of each class in each interval [t·Δ, (t+1)·Δ)."""
    t = np.floor(np.asarray(times_s) / interval_s).astype(np.int64)
    ok = (t >= 0) & (t < n)
    out = np.zeros((n, n_classes), dtype=np.float64)
    np.add.at(out, (t[ok], np.asarray(cls)[ok]), 1.0)
    return out


def fit_ar(y: np.ndarray, order: int) -> tuple[float, np.ndarray]:
    """(mean, AR coefficients) of ARIMA(order, 0, 0) with a constant, fitted by statsmodels (Burg). A fit of
    the same window and order again in this process is the kept one (:func:`_fit_ar_kept`): ``varcap run``
    forecasts the same demand for ``out_harmony_demand`` and for the study's runs (the embedded sample's
    84 fits: 3.9–4.7 CPU s the second time without this, 0.13–0.24 with it, 2026-12-04). The coefficients
    are read-only."""
    y = np.ascontiguousarray(y, dtype=float)
    return _fit_ar_kept(y.tobytes(), order)


@functools.lru_cache(maxsize=8192)
def _fit_ar_kept(window: bytes, order: int) -> tuple[float, np.ndarray]:
    """:func:`fit_ar` of the float64 values ``window``, kept per process (a window is at most a day of
    intervals, 2.3 kB)."""
    mu, phi = _fit_ar(np.frombuffer(window, dtype=float), order)
    phi.flags.writeable = False
    return mu, phi


def _fit_ar(y: np.ndarray, order: int) -> tuple[float, np.ndarray]:
    """The estimate ``ARIMA(y, order=(order, 0, 0), trend="c").fit(method="burg")`` makes: statsmodels' GLS
    estimator of the constant with Burg's ARMA step, called as that ``fit`` calls it, without the state-space
    results object ``fit`` builds around it and this reads nothing of (45 → 18 ms for a 200-interval window
    of order 3; bit for bit the same parameters on the 11 windows of `varcap warm`'s Harmony runs, 4 of them
    through the Yule-Walker fallback, and on 400 random windows of counts, walks and spikes, 2026-12-04)."""
    from statsmodels.tsa.arima.estimators.gls import gls

    if np.ptp(y) == 0:
        return float(y[0]), np.zeros(order)
    # as ARIMA.fit calls it for a model with the trend "c" column as its exog
    kw = {
        "exog": np.ones((y.size, 1)),
        "order": (order, 0, 0),
        "seasonal_order": (0, 0, 0, 0),
        "include_constant": False,
        "arma_estimator_kwargs": {},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            p, _ = gls(y, arma_estimator="burg", **kw)
        except ValueError:  # Burg's GLS step refuses non-stationary roots: Yule-Walker is always stationary
            p, _ = gls(y, arma_estimator="yule_walker", **kw)
    return float(p.params[0]), np.asarray(p.params[1 : 1 + order], dtype=float)


def one_step_forecasts(series: np.ndarray, cfg: ForecastConfig = ForecastConfig()) -> np.ndarray:
    """Forecast of ``series[t]`` from ``series[:t]`` only, for every t (rows) and column; clipped at 0."""
    y = np.asarray(series, dtype=float)
    if y.ndim == 1:
        return one_step_forecasts(y[:, None], cfg)[:, 0]
    n, k = y.shape
    out = np.zeros_like(y)
    p = cfg.order
    for j in range(k):
        mu, phi, last_fit = 0.0, None, -(10**9)
        for t in range(n):
            if t >= max(cfg.min_train, p + 2) and t - last_fit >= cfg.refit_every:
                mu, phi = fit_ar(y[max(0, t - cfg.window) : t, j], p)
                last_fit = t
            if phi is None:
                out[t, j] = y[t - 1, j] if t > 0 else 0.0
            else:
                lags = y[t - p : t, j][::-1]  # y_{t-1}, …, y_{t-p}
                out[t, j] = mu + float(phi @ (lags - mu))
    return np.maximum(out, 0.0)


def mape(actual: np.ndarray, forecast: np.ndarray) -> np.ndarray:
    """Mean absolute percentage error per column over intervals with a non-zero actual (nan if none)."""
    a, f = np.atleast_2d(np.asarray(actual, float).T).T, np.atleast_2d(np.asarray(forecast, float).T).T
    out = np.full(a.shape[1], np.nan)
    for j in range(a.shape[1]):
        nz = a[:, j] > 0
        if nz.any():
            out[j] = float(np.mean(np.abs(a[nz, j] - f[nz, j]) / a[nz, j]) * 100)
    return out
