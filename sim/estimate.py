"""The expected work of a run, told before anything is allocated: events and memory from the capacity
points (:func:`sim.capacity.kinds.expected_points`), the platform size and the job count; a run that will
not fit in the memory the machine has free is refused with one line.

The memory figures are per item upper estimates of what a run holds at its peak: a job's input columns,
the engine's per-job state and its per-job output (docs/simulator.md measures ≤ 1.41 GB for 6M jobs: 235
bytes a job); a machine's rows in the engine and the per-machine trace views; a capacity point's time,
value and the views derived from it.
"""

from __future__ import annotations

from dataclasses import dataclass

BYTES_PER_JOB = 256
BYTES_PER_MACHINE = 64
BYTES_PER_POINT = 48


@dataclass(frozen=True)
class Work:
    """A run's expected size: ``events`` (each job's start and end plus each capacity point) and the peak
    ``bytes`` it holds."""

    jobs: int
    machines: int
    points: float
    events: float
    bytes: float


def expected_work(jobs: int, machines: int, points: float) -> Work:
    """The :class:`Work` of ``jobs`` jobs on ``machines`` machines under a trace of ``points`` points."""
    events = 2.0 * jobs + points
    size = BYTES_PER_JOB * float(jobs) + BYTES_PER_MACHINE * float(machines) + BYTES_PER_POINT * points
    return Work(jobs, machines, points, events, size)


def available_bytes() -> float | None:
    """Memory the machine has free now (``MemAvailable``; None where it cannot be read)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        return None
    return None


def check_fits(work: Work, available: float | None = None) -> None:
    """ValueError in one line (the expected memory, what it comes from, what is free) if ``work`` needs more
    memory than is ``available`` (default: :func:`available_bytes`; nothing is checked if unknown)."""
    free = available_bytes() if available is None else available
    if free is None or work.bytes <= free:
        return
    parts = [
        f"{work.machines:,} machines" if work.machines * BYTES_PER_MACHINE >= work.bytes / 3 else "",
        f"{work.jobs:,} jobs" if work.jobs * BYTES_PER_JOB >= work.bytes / 3 else "",
        f"{work.points:,.0f} capacity points" if work.points * BYTES_PER_POINT >= work.bytes / 3 else "",
    ]
    why = ", ".join(p for p in parts if p)
    raise ValueError(
        f"this run needs about {work.bytes / 2**30:,.1f} GiB ({why}; ~{work.events:,.0f} events) but "
        f"{free / 2**30:,.1f} GiB of memory is free: use fewer machines, jobs or a shorter horizon"
    )
