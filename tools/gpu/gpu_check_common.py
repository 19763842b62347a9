"""What the GPU checks share: options, the case loop, byte comparison, the report, a torch timer.

The checks run on the GPU machine with coopdialect installed there (tools/gpu_wheelhouse.sh):
they build each case, take its expected outputs from the interpreter and launch it through
coopdialect.runtime. torch is imported only for the cuBLAS baselines (`timed`).
"""

from __future__ import annotations

from coopdialect.runtime.timing import interleaved_medians  # noqa: F401  (the benchmarks' timer)

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np


def options(argv: list[str], count: int) -> tuple[int, list[int], Path | None]:
    """(--count N, --perf N,N..., --out DIR) of a check's command line."""
    def value(flag: str):
        return argv[argv.index(flag) + 1] if flag in argv else None

    perf = value("--perf")
    return (int(value("--count") or count), [int(x) for x in perf.split(",")] if perf else [],
            Path(value("--out")) if value("--out") else None)


def bytes_differ(got: list[np.ndarray], expected: dict[int, np.ndarray]) -> tuple[int, int]:
    """(bytes that differ, bytes compared) between buffers `got[i]` and `expected[i]`."""
    bad = size = 0
    for i, want in expected.items():
        g = np.ascontiguousarray(got[i]).view(np.uint8)
        bad += int(np.count_nonzero(g != np.ascontiguousarray(want).view(np.uint8)))
        size += g.size
    return bad, size


def run_cases(cases: Iterable, run_one: Callable[[object], str], group: Callable[[object], str]
              ) -> tuple[list[str], int, int, dict[str, list[int]]]:
    """Run every case (`run_one` returns "PASS" or a failure text and never raises);
    (one `STATUS name` line each, passed, failed, {group: [passed, all]})."""
    lines, passed, failed, groups = [], 0, 0, {}
    for c in cases:
        try:
            status = run_one(c)
        except Exception as e:  # noqa: BLE001 - report and go on
            status = f"ERROR {type(e).__name__}: {e}"
        ok = status == "PASS"
        passed += ok
        failed += not ok
        g = groups.setdefault(group(c), [0, 0])
        g[0] += ok
        g[1] += 1
        lines.append(f"{status:8s} {c.name}")
    return lines, passed, failed, groups


def report(lines: list[str], out: Path | None, file_name: str, failed: int) -> int:
    """Print the lines, also write them to OUT/FILE_NAME; exit status 0 when nothing failed."""
    text = "\n".join(lines)
    print(text)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / file_name).write_text(text + "\n")
    return 0 if failed == 0 else 1


def median_seconds(f: Callable[[], object], reps: int = 20, warm: int = 5) -> float:
    """Median seconds of one call of `f` (a torch/CUDA launch), each timed alone between two
    CUDA events after `warm` untimed calls: the library baseline of every GPU benchmark."""
    import statistics

    import torch

    for _ in range(warm):
        f()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        f()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def sustained_medians(timers: dict[str, Callable[[int], float]], seconds: float = 2.5,
                      settle: float = 1.0, cycles: int = 2
                      ) -> dict[str, tuple[float, list[tuple[float, float]]]]:
    """Each timer's median result (a timer maps a launch count to the median time of that many
    launches) while its kernel runs back to back for `seconds`, after the first `settle`
    seconds of each such block; the timers take turns in `cycles` blocks each.

    Returns timer -> (median, the measured (start, end) windows in host time, for
    `SmClock.median`). Under the H200's 700 W cap a kernel's clock follows the power it draws,
    with about a second's lag: in `interleaved_medians`' 10-launch turns every kernel runs at
    the clock the whole mix sets, while here each kernel is measured at the clock it sustains
    on its own, as in a loop of that product."""
    import statistics
    import time

    per: dict[str, list[float]] = {k: [] for k in timers}
    windows: dict[str, list[tuple[float, float]]] = {k: [] for k in timers}
    for _ in range(cycles):
        for k, t in timers.items():
            t0 = time.time()
            while (s0 := time.time()) - t0 < seconds:
                v = t(20)
                if s0 - t0 >= settle:
                    per[k].append(v)
            windows[k].append((t0 + settle, time.time()))
    return {k: (statistics.median(v), windows[k]) for k, v in per.items()}


class SmClock:
    """`nvidia-smi` sampling the SM clock every 50 ms in the background (a context manager);
    `median(windows)` is the median clock of the samples inside the (start, end) host-time
    windows, or None where nvidia-smi is missing or took no sample there."""

    def __init__(self):
        self.samples: list[tuple[float, float]] = []
        self._proc = None

    def __enter__(self) -> "SmClock":
        import shutil
        import subprocess
        import tempfile

        if shutil.which("nvidia-smi"):
            self._file = tempfile.TemporaryFile("w+")
            self._proc = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=timestamp,clocks.sm", "--format=csv,noheader,nounits",
                 "-lms", "50"], stdout=self._file, stderr=subprocess.DEVNULL)
        return self

    def __exit__(self, *exc) -> None:
        import datetime

        if self._proc is None:
            return
        self._proc.terminate()
        self._proc.wait()
        self._file.seek(0)
        for line in self._file:
            stamp, _, mhz = line.partition(",")
            try:  # nvidia-smi prints local time, as time.time() is read back here
                t = datetime.datetime.strptime(stamp.strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
                self.samples.append((t, float(mhz)))
            except ValueError:
                continue
        self._file.close()

    def median(self, windows: list[tuple[float, float]]) -> float | None:
        import statistics

        got = [m for t, m in self.samples if any(a <= t <= b for a, b in windows)]
        return statistics.median(got) if got else None


def timed(f: Callable[[], object], reps: int) -> float:
    """Seconds per call of `f` on the current CUDA stream (one warm-up call, then `reps`)."""
    import torch

    f()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        f()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / reps
