"""Timing several kernels fairly in one process: alternating rounds (used by coop-tune and the
benchmarks)."""

from __future__ import annotations

import statistics
from collections.abc import Callable


def interleaved_medians(timers: dict[str, Callable[[int], float]], rounds: int = 5,
                        reps: int = 10) -> dict[str, float]:
    """The median, over `rounds` alternating rounds, of each timer's result: a timer maps a
    launch count to the median time of that many launches (any unit). The H200 slows as it
    heats (the same kernel measured 1.09 and 1.22 ms minutes apart), so the kernels of one
    comparison take turns and sample the same moments instead of running one after another."""
    per: dict[str, list[float]] = {k: [] for k in timers}
    for _ in range(rounds):
        for k, t in timers.items():
            per[k].append(t(reps))
    return {k: statistics.median(v) for k, v in per.items()}
