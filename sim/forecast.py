"""As-of forecasts of an hourly grid signal, and the start a deferring scheduler picks from one.

Pure functions over an hourly series ``y`` (index = hour; ``y[h]`` is the value of the hour that starts at
hour ``h``). A forecast *issued at hour i* (the instant the hour ``i`` starts) may use only the hours that
have ended by then, ``y[:i]`` (so every row it reads has ``ts ≤ issued_at − 1 h``), and predicts the
``horizon`` hours ``i … i + horizon − 1``. Methods (:data:`METHODS`):

* ``oracle`` — the actual values (perfect foresight: the reference every peer simulator uses; it breaks
  the as-of rule on purpose and is the only method that does);
* ``persist24`` — the same hour yesterday, ``y[t − 24]``;
* ``profile7d`` — the mean of the same hour of day over the last 7 days;
* ``sarimax`` — statsmodels SARIMAX(1,0,0)(1,0,0)\\ :sub:`24` with a constant, fitted by maximum likelihood
  at hours that are multiples of ``refit_every_h`` (default weekly; a fit takes seconds) on the trailing
  ``window_h`` hours known then (default 14 days), each fit starting from the previous one's parameters;
  each forecast runs the fitted model on every hour known at its issue (exact for this pure AR),
  floored at 0.

:func:`best_starts` is the deferral rule of the ``defer`` policy: the start within a job's slack that
minimizes the forecast mean over the job's run.
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import numpy as np

METHODS = ("oracle", "persist24", "profile7d", "sarimax")
HORIZON_H = 24
HOUR = 3600.0


def _check(y: np.ndarray, issues: np.ndarray, method: str, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    if method not in METHODS:
        raise ValueError(f"unknown forecast method {method!r}; methods: {', '.join(METHODS)}")
    if horizon < 1:
        raise ValueError(f"forecast horizon must be ≥ 1 hour, got {horizon}")
    y = np.asarray(y, np.float64)
    iss = np.asarray(issues, np.int64)
    if y.ndim != 1 or iss.ndim != 1:
        raise ValueError("forecast needs a 1-d hourly series and 1-d issue hours")
    if iss.size and (iss.min() < 0 or iss.max() > len(y)):
        raise ValueError(f"issue hours must lie in [0, {len(y)}]")
    return y, iss


def forecast_matrix(
    y: np.ndarray,
    issues: np.ndarray,
    method: str,
    horizon: int = HORIZON_H,
    *,
    window_h: int = 14 * 24,
    refit_every_h: int = 7 * 24,
) -> np.ndarray:
    """``F[k, h]``: the ``method`` forecast issued at hour ``issues[k]`` for hour ``issues[k] + h``
    (``h < horizon``), NaN where the method has too little history (or, for ``oracle``, no actual value).

    Every method but ``oracle`` reads only ``y[:issues[k]]`` for row ``k``. ValueError for an unknown
    method, a horizon < 1 or an issue hour outside ``[0, len(y)]``."""
    y, iss = _check(y, issues, method, horizon)
    n = len(y)
    t = iss[:, None] + np.arange(horizon)[None, :]  # target hours
    if method == "oracle":
        return np.where(t < n, y[np.minimum(t, n - 1)], np.nan)
    if method == "persist24":
        if horizon > 24:
            raise ValueError("persist24 forecasts at most 24 hours ahead")
        src = t - 24
        return np.where(src >= 0, y[np.maximum(src, 0)], np.nan)
    if method == "profile7d":
        if horizon > 24:
            raise ValueError("profile7d forecasts at most 24 hours ahead")
        days = np.arange(1, 8)[None, None, :]
        src = t[:, :, None] - 24 * days
        vals = np.where(src >= 0, y[np.maximum(src, 0)], np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows (no history) stay NaN
            return np.nanmean(vals, axis=2)
    key = sarimax_key(y, iss, horizon, window_h, refit_every_h)
    if key not in _SARIMAX_CACHE:
        while len(_SARIMAX_CACHE) >= 8:
            _SARIMAX_CACHE.pop(next(iter(_SARIMAX_CACHE)))
        f = _read_cached(key, (len(iss), horizon))
        if f is None:
            f = _sarimax(y, iss, horizon, window_h, refit_every_h)
            _write_cached(key, f)
        _SARIMAX_CACHE[key] = f
    return _SARIMAX_CACHE[key].copy()


#: SARIMAX forecasts by (series, issues, settings): a sweep process runs many scenarios on one grid month,
#: and the weekly fits (seconds each) are the same for all of them. Beside it, on disk
#: (``<cache>/forecast/sarimax-<key>.npy``, :func:`sim.paths.cache_dir`), for the scenarios that differ
#: only in what the forecast does not read (the seed, the slack, the policy) and run in other processes
_SARIMAX_CACHE: dict[str, np.ndarray] = {}


def sarimax_key(y: np.ndarray, iss: np.ndarray, horizon: int, window_h: int, refit_every_h: int) -> str:
    """The content key of one SARIMAX forecast matrix: the series, the issue hours, the settings, the code
    that fits and runs the model (this module's source) and the statsmodels/numpy/scipy versions its fits
    depend on."""
    import scipy
    import statsmodels

    h = hashlib.sha256()
    for part in (
        np.ascontiguousarray(y, np.float64).tobytes(),
        np.ascontiguousarray(iss, np.int64).tobytes(),
        repr((horizon, window_h, refit_every_h)).encode(),
        Path(__file__).read_bytes(),  # this module: the fits and the forecast recursion
        f"{statsmodels.__version__} {np.__version__} {scipy.__version__}".encode(),
    ):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:32]


def _cache_path(key: str) -> Path:
    from sim.paths import cache_dir

    return cache_dir() / "forecast" / f"sarimax-{key}.npy"


def _read_cached(key: str, shape: tuple[int, int]) -> np.ndarray | None:
    """The forecast stored under ``key``, or None (absent, unreadable or of another shape: recomputed)."""
    p = _cache_path(key)
    try:
        f = np.load(p, allow_pickle=False)
    except (OSError, ValueError):
        return None
    return f if f.shape == shape and f.dtype == np.float64 else None


def _write_cached(key: str, f: np.ndarray) -> None:
    """Store ``f`` under ``key`` (written to a temporary file and renamed: a reader never sees half a
    file); a cache that cannot be written is skipped."""
    import contextlib
    import os
    import tempfile

    p = _cache_path(key)
    tmp = None
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=p.stem, suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            np.save(out, f, allow_pickle=False)
        os.replace(tmp, p)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _sarimax(y: np.ndarray, iss: np.ndarray, horizon: int, window_h: int, refit_every_h: int) -> np.ndarray:
    from statsmodels.tsa.statespace.sarimax import SARIMAX

    out = np.full((len(iss), horizon), np.nan)
    fits: dict[int, np.ndarray] = {}
    start = None
    for k, i in enumerate(iss):
        r = int(i) // refit_every_h * refit_every_h  # the last refit at or before the issue
        if r < 2 * 24 or i < 25:  # two days are the least a daily-seasonal AR is fitted on
            continue
        if r not in fits:
            train = y[max(0, r - window_h) : r]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # convergence chatter; the fit is used as it ends
                model = SARIMAX(train, order=(1, 0, 0), seasonal_order=(1, 0, 0, 24), trend="c",
                                concentrate_scale=True)  # fmt: skip
                res = model.fit(start_params=start, disp=False, maxiter=50, method="lbfgs")
            start = res.params
            fits[r] = np.asarray(res.params[:3], np.float64)  # intercept, ar.L1, ar.S.L24
        out[k] = np.maximum(_ar_forecast(y[:i], fits[r], horizon), 0.0)  # intensities are ≥ 0
    return out


def _ar_forecast(known: np.ndarray, p: np.ndarray, horizon: int) -> np.ndarray:
    """The SARIMAX(1,0,0)(1,0,0)24 point forecast from the hours known: the model is the AR
    ``y_t = c + φ y_{t−1} + Φ y_{t−24} − φΦ y_{t−25} + ε_t``, whose forecast given ≥ 25 past hours is this
    recursion (the Kalman filter's prediction once its state is observed)."""
    c, phi, big = p
    z = list(known[-25:])
    for _ in range(horizon):
        z.append(c + phi * z[-1] + big * z[-24] - phi * big * z[-25])
    return np.asarray(z[25:])


def horizon_errors(f: np.ndarray, y: np.ndarray, issues: np.ndarray) -> dict[str, np.ndarray]:
    """Per horizon ``h`` (1-based hours ahead, 1 = the hour starting at the issue): mean absolute error,
    mean absolute percentage error (%, over actual values > 0) and the number of forecasts scored (NaN
    forecasts and targets past the series are left out)."""
    y = np.asarray(y, np.float64)
    iss = np.asarray(issues, np.int64)
    t = iss[:, None] + np.arange(f.shape[1])[None, :]
    act = np.where(t < len(y), y[np.minimum(t, len(y) - 1)], np.nan)
    ok = np.isfinite(f) & np.isfinite(act)
    err = np.where(ok, np.abs(f - act), 0.0)
    pos = ok & (act > 0)
    n = ok.sum(axis=0)
    npos = pos.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mae = err.sum(axis=0) / n
        mape = 100.0 * np.where(pos, err / np.where(pos, act, 1.0), 0.0).sum(axis=0) / npos
    return {"horizon_h": np.arange(1, f.shape[1] + 1), "mae": mae, "mape_pct": mape, "n": n}


def best_starts(
    submit_s: np.ndarray, duration_s: np.ndarray, slack: float, f: np.ndarray, origin_h: int = 0
) -> np.ndarray:
    """Per job, the start in ``[submit, submit + (slack − 1) × duration]`` — the submit time or a later hour
    boundary — that minimizes the mean of the forecast over ``[start, start + duration)``; ties go to the
    earliest. The job submitted in simulation hour ``q = ⌊submit / 3600⌋`` reads the forecast issued at
    the start of that hour, row ``q + origin_h`` of ``f`` (rows indexed by issue hour of the series,
    simulation time 0 = series hour ``origin_h``); hours past the forecast's horizon take its last value.
    A NaN forecast row keeps the submit time. ValueError for ``slack < 1``."""
    if slack < 1.0:
        raise ValueError(f"slack must be ≥ 1 (deadline = submit + slack × duration), got {slack:g}")
    s = np.asarray(submit_s, np.float64)
    d = np.asarray(duration_s, np.float64)
    if s.size == 0:
        return s.copy()
    q = np.floor(s / HOUR).astype(np.int64)
    rows = q + origin_h
    if rows.min() < 0 or rows.max() >= len(f):
        raise ValueError(
            f"forecast rows cover issue hours [0, {len(f)}); jobs need {rows.min()}–{rows.max()}"
        )
    fr = f[rows]  # (n, H)
    hz = fr.shape[1]
    bad = ~np.all(np.isfinite(fr), axis=1)
    fr = np.where(np.isfinite(fr), fr, 0.0)
    cum = np.concatenate([np.zeros((len(s), 1)), np.cumsum(fr, axis=1) * HOUR], axis=1)  # (n, H + 1)
    base = q * HOUR
    latest = s + (slack - 1.0) * d
    n_cand = hz + 1
    m = np.arange(n_cand)[None, :]
    cand = np.where(m == 0, s[:, None], (q[:, None] + m) * HOUR)  # submit, then the next hour boundaries
    valid = (m == 0) | (cand <= latest[:, None] + 1e-9)

    def g(t: np.ndarray) -> np.ndarray:  # ∫ forecast from the row's issue to t (t ≥ base)
        x = (t - base[:, None]) / HOUR
        k = np.clip(np.floor(x).astype(np.int64), 0, hz)
        part = x - k
        slope = fr[np.arange(len(s))[:, None], np.minimum(k, hz - 1)]
        return np.take_along_axis(cum, k, axis=1) + part * HOUR * slope

    mean = (g(cand + d[:, None]) - g(cand)) / d[:, None]
    mean = np.where(valid, mean, np.inf)
    pick = np.argmin(mean, axis=1)  # first minimum: the earliest start
    out = cand[np.arange(len(s)), pick]
    return np.where(bad, s, out)
