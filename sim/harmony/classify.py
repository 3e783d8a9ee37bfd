"""§5.1 task classification.

"we adopt a two-step approach for workload clustering. In the first step, tasks are classified based on
static characteristics (e.g., CPU and memory size specified in the job request) using the K-means
algorithm. In the second step, each task class is further divided into short tasks and long tasks using
K-means algorithm. ... At runtime, each task is initially assumed to be short. Later on if the task
running time exceeds the partitioning threshold between short and long tasks determined by the K-means
algorithm, the task will be relabelled and assigned to the right task class."

§3: "There are 12 priorities that are divided into three priority groups: gratis (0-1), other (2-8),
production (9-11)". §5.1: K is picked "such that adding another cluster does not achieve much better
gain in terms of minimizing score" — here: the smallest K whose step to K + 1 lowers the K-means score by
less than ``elbow`` (default 5 %) of the one-cluster score.

Short/long: K = 2 K-means on log10(duration) within each size cluster; the threshold is the midpoint of
the two centroids (the 1-D K-means boundary). Censored durations (tasks still running at the end of the
trace window) are used as observed, i.e. as lower bounds.

Classes are numbered ``2·q + long`` where ``q`` is the size cluster ("queue class") in group order
production, other, gratis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GROUPS = ("production", "other", "gratis")  # scheduling order: production first


def priority_group(priority: np.ndarray) -> np.ndarray:
    """Group index per task: 0 production (9–11), 1 other (2–8), 2 gratis (0–1)."""
    p = np.asarray(priority)
    return np.where(p >= 9, 0, np.where(p >= 2, 1, 2)).astype(np.int64)


def kmeans_labels(x: np.ndarray, k: int, seed: int, n_init: int = 4) -> tuple[np.ndarray, np.ndarray, float]:
    """Labels, centroids and score of a seeded K-means (labels ordered by centroid norm, deterministic).

    Fitted on one thread: scikit-learn's OpenMP threads each sum their share of the points, so the
    centroids depended on the machine's core count (one thread against two: 3e-10 apart on the Borg
    sample's classes) and the spinning threads cost CPU (the sample's classes: 11.6 CPU s on two threads,
    4.7 on one; measured 2026-12-03)."""
    from sklearn.cluster import KMeans  # ~1.5 s of imports: only when clustering
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        km = KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit(x)
    order = np.lexsort(tuple(km.cluster_centers_.T[::-1]))  # sort centroids lexicographically
    remap = np.empty(k, dtype=np.int64)
    remap[order] = np.arange(k)
    return remap[km.labels_], km.cluster_centers_[order], float(km.inertia_)


def elbow_k(x: np.ndarray, k_max: int, seed: int, elbow: float = 0.05) -> tuple[int, list[float]]:
    """Smallest K for which going to K + 1 gains less than ``elbow`` × the K = 1 score; all scores."""
    distinct = len(np.unique(x, axis=0))
    scores = []
    for k in range(1, min(k_max, distinct) + 1):
        scores.append(kmeans_labels(x, k, seed)[2])
    for k in range(1, len(scores)):
        if scores[0] <= 0 or (scores[k - 1] - scores[k]) < elbow * scores[0]:
            return k, scores
    return len(scores), scores


@dataclass
class TaskClasses:
    """Fitted classes. Per queue class q (size cluster): ``group``, centroid, ``threshold_s``; per class
    c = 2q + long: member statistics (mean/std of cpu and memory, mean duration, squared CV, count)."""

    group: np.ndarray  # (Q,) priority group of the size cluster
    centroid: np.ndarray  # (Q, 2) cpu, memory
    threshold_s: np.ndarray  # (Q,) short/long split (inf: no long tasks)
    mean: np.ndarray  # (C, 2)
    std: np.ndarray  # (C, 2)
    max: np.ndarray  # (C, 2)
    dur_mean_s: np.ndarray  # (C,)
    dur_cv2: np.ndarray  # (C,)
    count: np.ndarray  # (C,)
    k_per_group: tuple[int, ...]
    scores: dict[str, list[float]]

    @property
    def n_queues(self) -> int:
        return len(self.group)

    @property
    def n_classes(self) -> int:
        return 2 * len(self.group)

    def size_cluster(self, cpu: np.ndarray, mem: np.ndarray, priority: np.ndarray) -> np.ndarray:
        """Queue class of each task: nearest centroid within its priority group (run-time labelling)."""
        g = priority_group(priority)
        x = np.column_stack([cpu, mem])
        out = np.empty(len(g), dtype=np.int64)
        for gi in range(len(GROUPS)):
            qs = np.flatnonzero(self.group == gi)
            sel = g == gi
            if not sel.any():
                continue
            d = ((x[sel, None, :] - self.centroid[None, qs, :]) ** 2).sum(axis=2)
            out[sel] = qs[np.argmin(d, axis=1)]
        return out

    def short_hold_s(self, q: int) -> tuple[float, float]:
        """Mean and squared CV of the time a task of size cluster ``q`` holds a *short* container.

        §5.1: "each task is initially assumed to be short. Later on if the task running time exceeds the
        partitioning threshold ... the task will be relabelled": every task of the cluster enters the short
        class, a short task holds its container for its duration, a long one until the threshold. So the
        service time of the short class's M/G/N queue (§5.2) is ``min(duration, threshold)`` over *all*
        the cluster's tasks, from the short and long members' counts and moments."""
        n_s, n_l = float(self.count[2 * q]), float(self.count[2 * q + 1])
        m_s, cv2_s = float(self.dur_mean_s[2 * q]), float(self.dur_cv2[2 * q])
        thr = float(self.threshold_s[q])
        if n_l <= 0 or not np.isfinite(thr):
            return m_s, cv2_s
        n = n_s + n_l
        e1 = (n_s * m_s + n_l * thr) / n
        e2 = (n_s * m_s * m_s * (1.0 + cv2_s) + n_l * thr * thr) / n
        return e1, max(e2 / (e1 * e1) - 1.0, 0.0) if e1 > 0 else 0.0

    def label(self, q: np.ndarray, age_s: np.ndarray) -> np.ndarray:
        """Class at run time: short (2q) until the task has run longer than its threshold, then long."""
        return 2 * q + (age_s > self.threshold_s[q]).astype(np.int64)


def fit_classes(
    cpu: np.ndarray,
    mem: np.ndarray,
    priority: np.ndarray,
    duration_s: np.ndarray,
    k_max: int = 6,
    elbow: float = 0.05,
    seed: int = 0,
    fit_sample: int = 50_000,
) -> TaskClasses:
    """Two-step classification of §5.1 (K-means fitted on at most ``fit_sample`` seeded rows per group).

    The tasks are put in one canonical order (by cpu, memory, priority, duration) before any seeded
    sample, so the classes depend on the seed and the tasks, never on the input's row order."""
    cpu, mem, dur = (np.asarray(a, dtype=float) for a in (cpu, mem, duration_s))
    priority = np.asarray(priority)
    canon = np.lexsort((dur, priority, mem, cpu))
    cpu, mem, dur, priority = cpu[canon], mem[canon], dur[canon], priority[canon]
    g = priority_group(priority)
    rng = np.random.default_rng(seed)
    groups, cents, ks, scores = [], [], [], {}
    for gi, name in enumerate(GROUPS):
        sel = np.flatnonzero(g == gi)
        if sel.size == 0:
            ks.append(0)
            continue
        fit_idx = rng.choice(sel, fit_sample, replace=False) if sel.size > fit_sample else sel
        x = np.column_stack([cpu[fit_idx], mem[fit_idx]])
        k, sc = elbow_k(x, k_max, seed, elbow)
        _, c, _ = kmeans_labels(x, k, seed)
        groups += [gi] * k
        cents.append(c)
        ks.append(k)
        scores[name] = sc
    group = np.array(groups, dtype=np.int64)
    centroid = np.vstack(cents)
    tc = TaskClasses(
        group,
        centroid,
        np.full(len(group), np.inf),
        *(np.zeros((2 * len(group), 2)) for _ in range(3)),
        np.zeros(2 * len(group)),
        np.zeros(2 * len(group)),
        np.zeros(2 * len(group), dtype=np.int64),
        tuple(ks),
        scores,
    )
    q = tc.size_cluster(cpu, mem, priority)
    logd = np.log10(np.maximum(dur, 1.0))
    for qi in range(len(group)):
        members = np.flatnonzero(q == qi)
        ld = logd[members]
        if len(np.unique(ld)) >= 2:
            sub = rng.choice(ld, fit_sample, replace=False) if ld.size > fit_sample else ld
            _, c2, _ = kmeans_labels(sub[:, None], 2, seed)
            tc.threshold_s[qi] = 10 ** float(c2[:, 0].mean())
        long = dur[members] > tc.threshold_s[qi]
        for is_long in (0, 1):
            m = members[long == bool(is_long)]
            c = 2 * qi + is_long
            tc.count[c] = m.size
            if m.size == 0:
                continue
            x = np.column_stack([cpu[m], mem[m]])
            tc.mean[c], tc.std[c], tc.max[c] = x.mean(axis=0), x.std(axis=0), x.max(axis=0)
            d = dur[m]
            tc.dur_mean_s[c] = d.mean()
            tc.dur_cv2[c] = d.var() / d.mean() ** 2 if d.mean() > 0 else 0.0
    return tc
