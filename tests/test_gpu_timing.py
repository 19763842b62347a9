"""The benchmarks' timing protocols (benchmarks/gpu_timing.py), on fake timers and a fake
host clock: what each protocol samples decides every ratio in benchmarks/results."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from gpu_timing import SmClock, interleaved_medians, sustained_medians  # noqa: E402


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _timer(name: str, clock: FakeClock, calls: list, cost: float, value):
    """A timer whose call takes `cost` host seconds and returns value(calls of it in a row
    before this one)."""
    def t(reps: int) -> float:
        run = 0
        while run < len(calls) and calls[-1 - run] == name:
            run += 1
        calls.append(name)
        clock.now += cost
        return value(run)
    return t


def test_sustained_takes_turns_in_blocks_and_drops_the_settling_part(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(time, "time", clock)
    calls: list[str] = []
    # 0.25 s a call: the first 4 calls of a block start inside its settling second, and run slow
    timers = {"a": _timer("a", clock, calls, 0.25, lambda run: 9.0 if run < 4 else 1.0),
              "b": _timer("b", clock, calls, 0.25, lambda run: 9.0 if run < 4 else 2.0 + run)}
    got = sustained_medians(timers, seconds=2.5, settle=1.0, cycles=2)
    assert got["a"][0] == 1.0
    assert got["b"][0] == 2.0 + 6.5  # median of runs 4..9 of two blocks
    # blocks of 10 calls (2.5 s), taking turns: a, b, a, b
    assert calls == ["a"] * 10 + ["b"] * 10 + ["a"] * 10 + ["b"] * 10
    # two measured windows each, after the settling second of each block
    for k in "ab":
        windows = got[k][1]
        assert len(windows) == 2 and all(b - a == 1.5 for a, b in windows)


def test_interleaved_alternates_every_round():
    calls: list[str] = []
    clock = FakeClock()
    timers = {k: _timer(k, clock, calls, 0.01, lambda run, k=k: {"x": 3.0, "y": 5.0}[k]) for k in "xy"}
    got = interleaved_medians(timers, rounds=3, reps=10)
    assert calls == ["x", "y"] * 3 and got == {"x": 3.0, "y": 5.0}


def test_sm_clock_median_keeps_only_samples_inside_the_windows():
    clk = SmClock()
    clk.samples = [(0.5, 1980.0), (1.5, 1500.0), (2.0, 1600.0), (2.5, 1700.0), (4.0, 1200.0)]
    assert clk.median([(1.0, 3.0)]) == 1600.0
    assert clk.median([(1.0, 1.6), (3.5, 4.5)]) == 1350.0
    assert clk.median([(5.0, 6.0)]) is None
