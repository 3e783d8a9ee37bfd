"""§7.1 DCP-RELAX as a linear program, solved with scipy's HiGHS, over a horizon of W control intervals.

"we denote by z_t^m ∈ R+ the number of type m machines that are active at time t, and δ_t^m ∈ R the
change ... define x_t^{mk} ∈ R+ as the number of type k containers assigned to machines of type m"
(state equations 10–11); schedulability (12) with the over-provisioning factor of (14):
``Σ_k ω^k c^{kr} x_t^{mk} ≤ z_t^m C^{mr}`` for every m, r, t, and ``x_t^{mk} = 0`` where a type k
container does not fit a type m machine (ψ^{mk} = 0); ``z_t^m ≤ N_t^m`` (13). Objective (DCP-RELAX):
energy ``p_t (z_t^m E^{idle,m} + Σ_r Σ_k α^{mr} c^{kr}/C^{mr} x_t^{mk})`` times (1 + cooling), switching
cost (8) on ``δ = on − off`` and the utility of scheduled containers.

The utility f^k is left open by the paper ("can be a linear decreasing function of the average
scheduling delay"). Here it is linear up to the demand: every one of the N_t^k required containers that
is left out costs ``unserved_usd[k]`` (the caller sets it above the cost of a whole machine for the
interval, so the LP drops demand only when the cluster cannot host it). Turning a machine on costs
``switch_usd`` (one power cycle, §9: 0.5 ¢); turning it off is free.

Variables per step: z (M), x (M·K), on (M), off (M), u (K) — independent of the number of machines, so
one interval's LP is the same size at 10 or 10,000 machines.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class LPSolution:
    z: np.ndarray  # (W, M)
    x: np.ndarray  # (W, M, K)
    unserved: np.ndarray  # (W, K)
    on: np.ndarray  # (W, M)
    off: np.ndarray  # (W, M)
    cost_usd: float
    status: int
    message: str


class DCPRelax:
    """The LP structure for fixed machine types and container sizes; :meth:`solve` per control interval.

    ``cap`` (M, R) machine capacity, ``avail`` (M,) machines available, ``idle_w`` (M,), ``slope_w`` (M, R),
    ``csize`` (K, R) container size, ``omega`` (K,), ``horizon`` W, ``interval_s`` Δ."""

    def __init__(
        self,
        cap: np.ndarray,
        avail: np.ndarray,
        idle_w: np.ndarray,
        slope_w: np.ndarray,
        csize: np.ndarray,
        omega: np.ndarray | float,
        horizon: int = 1,
        interval_s: float = 300.0,
        cooling: float = 0.8,
        switch_usd: float = 0.005,
        unserved_usd: np.ndarray | float = 1.0,
    ) -> None:
        self.cap, self.avail = np.asarray(cap, float), np.asarray(avail, float)
        self.idle_w, self.slope_w = np.asarray(idle_w, float), np.asarray(slope_w, float)
        self.csize = np.asarray(csize, float)
        M, R = self.cap.shape
        K = self.csize.shape[0]
        self.M, self.K, self.R, self.W = M, K, R, horizon
        self.omega = np.broadcast_to(np.asarray(omega, float), (K,)).copy()
        self.interval_s, self.cooling, self.switch_usd = interval_s, cooling, switch_usd
        self.unserved_usd = np.broadcast_to(np.asarray(unserved_usd, float), (K,)).copy()
        #: ψ^{mk}: a type k container fits on a type m machine
        self.psi = (self.csize[None, :, :] <= self.cap[:, None, :] + 1e-12).all(axis=2)
        self.nv = M + M * K + 2 * M + K  # per step
        self._build()

    # variable offsets within step w
    def _z(self, w: int) -> int:
        return w * self.nv

    def _x(self, w: int) -> int:
        return w * self.nv + self.M

    def _on(self, w: int) -> int:
        return w * self.nv + self.M + self.M * self.K

    def _off(self, w: int) -> int:
        return self._on(w) + self.M

    def _u(self, w: int) -> int:
        return self._off(w) + self.M

    def _build(self) -> None:
        from scipy.sparse import csr_matrix  # scipy loads with the first LP, not with the package

        M, K, R, W = self.M, self.K, self.R, self.W
        rows, cols, vals = [], [], []
        r_i = 0
        for w in range(W):
            for m in range(M):  # capacity (14)
                for r in range(R):
                    for k in range(K):
                        if self.psi[m, k] and self.csize[k, r] > 0:
                            rows.append(r_i), cols.append(self._x(w) + m * K + k)
                            vals.append(self.omega[k] * self.csize[k, r])
                    rows.append(r_i), cols.append(self._z(w) + m), vals.append(-self.cap[m, r])
                    r_i += 1
            for k in range(K):  # demand: Σ_m x + u ≥ N
                for m in range(M):
                    rows.append(r_i), cols.append(self._x(w) + m * K + k), vals.append(-1.0)
                rows.append(r_i), cols.append(self._u(w) + k), vals.append(-1.0)
                r_i += 1
        self.A_ub = csr_matrix((vals, (rows, cols)), shape=(r_i, W * self.nv))
        rows, cols, vals = [], [], []
        for w in range(W):  # dynamics (10): z_w − z_{w−1} − on_w + off_w = 0
            for m in range(M):
                i = w * M + m
                rows += [i, i, i]
                cols += [self._z(w) + m, self._on(w) + m, self._off(w) + m]
                vals += [1.0, -1.0, 1.0]
                if w > 0:
                    rows.append(i), cols.append(self._z(w - 1) + m), vals.append(-1.0)
        self.A_eq = csr_matrix((vals, (rows, cols)), shape=(W * M, W * self.nv))
        lo = np.zeros(W * self.nv)
        hi = np.full(W * self.nv, np.inf)
        for w in range(W):
            hi[self._z(w) : self._z(w) + M] = self.avail
            hi[self._x(w) : self._x(w) + M * K] = np.where(self.psi.ravel(), np.inf, 0.0)
        self.bounds = np.column_stack([lo, hi])

    def costs(self, price_usd_per_kwh: np.ndarray) -> np.ndarray:
        """Objective vector for the per-step prices."""
        M, K = self.M, self.K
        c = np.zeros(self.W * self.nv)
        kwh = self.interval_s / 3600.0 / 1000.0 * (1.0 + self.cooling)
        per_container = (self.slope_w[:, None, :] * self.csize[None, :, :] / self.cap[:, None, :]).sum(axis=2)
        for w in range(self.W):
            p = float(price_usd_per_kwh[w]) * kwh
            c[self._z(w) : self._z(w) + M] = p * self.idle_w
            c[self._x(w) : self._x(w) + M * K] = (p * per_container).ravel()
            c[self._on(w) : self._on(w) + M] = self.switch_usd
            c[self._u(w) : self._u(w) + K] = self.unserved_usd
        return c

    def solve(
        self,
        demand: np.ndarray,
        price_usd_per_kwh: np.ndarray | float,
        z_prev: np.ndarray,
        x_min: np.ndarray | None = None,
    ) -> LPSolution:
        """Solve for required containers ``demand`` (W, K) (or (K,): held over the horizon)."""
        from scipy.optimize import linprog

        M, K, W = self.M, self.K, self.W
        d = np.broadcast_to(np.asarray(demand, float), (W, K))
        price = np.broadcast_to(np.asarray(price_usd_per_kwh, float), (W,))
        b_ub = self._b_ub(d)
        b_eq = np.zeros(W * M)
        b_eq[:M] = np.asarray(z_prev, float)
        res = linprog(
            self.costs(price),
            A_ub=self.A_ub,
            b_ub=b_ub,
            A_eq=self.A_eq,
            b_eq=b_eq,
            bounds=self._bounds(x_min),
            method="highs",
        )
        if res.status != 0:
            raise RuntimeError(f"DCP-RELAX failed: {res.message}")
        v = res.x.reshape(W, self.nv)
        return LPSolution(
            z=v[:, :M].copy(),
            x=v[:, M : M + M * K].reshape(W, M, K).copy(),
            unserved=v[:, -K:].copy(),
            on=v[:, M + M * K : 2 * M + M * K].copy(),
            off=v[:, 2 * M + M * K : 3 * M + M * K].copy(),
            cost_usd=float(res.fun),
            status=int(res.status),
            message=str(res.message),
        )

    def _bounds(self, x_min: np.ndarray | None) -> np.ndarray:
        """Variable bounds; ``x_min`` (M, K): containers of each type on each machine type that every step
        must keep (they hold running tasks, which are never migrated)."""
        if x_min is None:
            return self.bounds
        b = self.bounds.copy()
        lo = np.where(self.psi, np.asarray(x_min, float), 0.0).ravel()
        for w in range(self.W):
            b[self._x(w) : self._x(w) + self.M * self.K, 0] = lo
        return b

    def _b_ub(self, d: np.ndarray) -> np.ndarray:
        M, R = self.M, self.R
        parts = []
        for w in range(self.W):
            parts += [np.zeros(M * R), -d[w]]
        return np.concatenate(parts)  # rows are laid out step by step: capacity rows, then demand rows
