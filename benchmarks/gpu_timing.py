"""The GPU benchmarks' timing protocols: a torch/CUDA-event timer, alternating rounds, sustained
blocks at the clock a kernel holds under the power cap, and an SM clock sampler.

Imported by benchmarks/bench_ptx.py, vk_gemm_bench.py and the other benchmarks beside it (run on
the GPU machine with coopdialect installed, docs/runtime.md); torch is imported only when a
torch baseline is timed. tests/test_gpu_timing.py checks what each protocol samples on fake
timers and a fake host clock.
"""

from __future__ import annotations

from collections.abc import Callable

# the alternating-rounds protocol lives in the runtime (coop-tune times configurations with it)
from coopdialect.runtime.timing import interleaved_medians  # noqa: F401  (re-exported)


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
