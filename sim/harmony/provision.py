"""From a DCP-RELAX solution to machines and containers (§7.2, §7.3.2), and the §9 baseline.

* **CBP** (§7.2): "CBP simply rounds up the fractional values of (x_t^{mk}, z_t^m) to obtain an integer
  solution for DCP, which gives the number of machines to be provisioned (i.e., ⌈z_t^m⌉) and the number of
  type n tasks that should be scheduled on type m machines (i.e., ⌈x_t^{mk}⌉)".
* **CBS** (§7.3.2, Algorithm 1): the same ⌈z⌉ machines ("both CBS and CBP provision the same number of
  machines as indicated by the MPC algorithm", §9.2); ⌈x^{mk}⌉ type-k containers are placed by first fit
  on the type-m machines, largest containers first (:func:`sim.harmony.engine.place_containers`); Lemma 1
  guarantees at least ⌊x^{mk}/(2|R|)⌋ of them fit in ⌈z^m⌉ + 1 machines (tested).
* **Baseline** (§9): "maintaining an 80 percent utilization of the bottleneck resource. Essentially, given
  the total resource demand, the algorithm provisions machines in a 'greedy' fashion by turning them on in
  decreasing order of energy efficiency". Total demand is that of Figs. 1–2: every task in the system,
  running or waiting.
"""

from __future__ import annotations

import numpy as np


def round_up(v: np.ndarray, tol: float = 1e-6) -> np.ndarray:
    """⌈v⌉ ignoring LP round-off (values within ``tol`` of an integer)."""
    return np.ceil(np.asarray(v) - tol).astype(np.int64).clip(min=0)


def machines_from_lp(z: np.ndarray, avail: np.ndarray) -> np.ndarray:
    """⌈z^m⌉ machines per type, at most the machines available."""
    return np.minimum(round_up(z), np.asarray(avail, dtype=np.int64))


def baseline_machines(
    demand: np.ndarray, cap: np.ndarray, avail: np.ndarray, order: np.ndarray, util: float = 0.8
) -> np.ndarray:
    """Machines per type so that demand/capacity ≤ ``util`` for every resource, filling types in ``order``.

    ``demand`` (R,) total requested resources; ``cap`` (M, R) per-machine capacity; ``avail`` (M,)."""
    need = np.asarray(demand, float) / util
    out = np.zeros(len(avail), dtype=np.int64)
    for m in order:
        if (need <= 1e-12).all():
            break
        k = int(np.ceil(np.max(np.where(need > 0, need / cap[m], 0.0)) - 1e-9))
        k = min(k, int(avail[m]))
        out[m] = k
        need = need - k * cap[m]
    return out


def lemma1_bound(x: np.ndarray, r: int = 2) -> np.ndarray:
    """Lemma 1: ⌊x^{mk}/(2|R|)⌋ containers of each type that first fit places in ⌈z^m⌉ + 1 machines."""
    return np.floor(np.asarray(x) / (2 * r) + 1e-9).astype(np.int64)
