"""§5.2 container counts from the M/G/N queue and §7.3.1 container size (Theorem 1).

Eq. (1): ``d_i ≈ π_N/(1 − ρ_i) · (1 + CV_i²)/2 · 1/(N μ_i)`` with ``ρ_i = λ_i/(N μ_i)``; eq. (2) is the
Erlang-C probability of waiting ``π_N`` (computed here through the numerically stable Erlang-B
recursion ``B_j = a B_{j−1}/(j + a B_{j−1})``, ``π_N = N B_N/(N − a(1 − B_N))``, ``a = λ/μ``). "Given an
average scheduling delay and using Eq. (1), it is easy to estimate N to ensure d_i ≤ d̄_i and ρ_i < 1."

Theorem 1: ``c^{kr} = μ^{kr} + sqrt((|R| − ε^{1/M^k}) / ε^{1/M^k}) σ^{kr}``; §9.1 uses ε = 0.001, |R| = 2,
M^k = 100.

:func:`simulate_fcfs` is a discrete-event FCFS multi-server queue (each arrival takes the server that
frees first), the reference the tests hold eq. (1) against.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from sim.engine._jit import cached_njit


@cached_njit(entry=True)
def erlang_c(n: int, a: float) -> float:
    """Probability of waiting in M/M/n with offered load ``a = λ/μ`` (1 if a ≥ n)."""
    if a <= 0.0:
        return 0.0
    if a >= n:
        return 1.0
    b = 1.0
    for j in range(1, n + 1):
        b = a * b / (j + a * b)
    return n * b / (n - a * (1.0 - b))


def mgn_wait(lam: float, mu: float, n: int, cv2: float) -> float:
    """Eq. (1): mean waiting time of M/G/n (inf if ρ ≥ 1)."""
    a = lam / mu
    if a >= n:
        return math.inf
    rho = a / n
    return erlang_c(n, a) / (1.0 - rho) * (1.0 + cv2) / 2.0 / (n * mu)


@cached_njit(entry=True)
def containers_for_delay(lam: float, mu: float, cv2: float, target_s: float, n_max: int) -> int:
    """Smallest N with ρ < 1 and eq. (1) delay ≤ ``target_s`` (0 if λ = 0; capped at ``n_max``)."""
    if lam <= 0.0 or mu <= 0.0:
        return 0
    a = lam / mu
    b = 1.0
    n = 0
    while n < n_max:
        n += 1
        b = a * b / (n + a * b)
        if a < n:
            c = n * b / (n - a * (1.0 - b))
            d = c / (1.0 - a / n) * (1.0 + cv2) / 2.0 / (n * mu)
            if d <= target_s:
                return n
    return n_max


def theorem1_beta(eps: float = 0.001, r: int = 2, mk: int = 100) -> float:
    """Theorem 1's multiplier of σ: sqrt((|R| − ε^{1/M^k}) / ε^{1/M^k})."""
    e = eps ** (1.0 / mk)
    return math.sqrt((r - e) / e)


def container_size(
    mean: np.ndarray, std: np.ndarray, beta: float, cap: np.ndarray | None = None
) -> np.ndarray:
    """``μ + β σ`` per class and resource, at most ``cap`` (e.g. the class maximum) where given."""
    c = np.asarray(mean) + beta * np.asarray(std)
    return np.minimum(c, cap) if cap is not None else c


def simulate_fcfs(arrivals_s: np.ndarray, services_s: np.ndarray, n: int) -> np.ndarray:
    """Waiting time of each customer in a FCFS n-server queue (arrivals sorted)."""
    free = [0.0] * n
    heapq.heapify(free)
    waits = np.empty(len(arrivals_s))
    for i, (a, s) in enumerate(zip(arrivals_s, services_s, strict=True)):
        f = heapq.heappop(free)
        start = max(a, f)
        waits[i] = start - a
        heapq.heappush(free, start + s)
    return waits
