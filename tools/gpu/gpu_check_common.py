"""What ptx_check.py and sparse_check.py share: the build/run CLI, and the GPU side's run/compare loop.

The GPU side launches through the runtime's CUDA device (coopdialect.runtime.cuda: cuda-bindings,
driver JIT); torch is imported only for the cuBLAS baselines (`timed`). The folder a `build`
writes holds `cases.json` (a list `cases` of dicts with at least `name`, `kernel`, `grid`,
`ptx`, `nbuf`; and `perf`) and `data.npz` with the raw bytes of input buffer i under `KEY/in{i}`
and of the expected output buffer i under `KEY/exp{i}`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np


def load_cases(folder: Path):
    """(cases.json as a dict, the npz data) of a built folder."""
    return json.loads((folder / "cases.json").read_text()), np.load(folder / "data.npz")


def load(dev, ptx: str, kernel: str, block) -> object:
    """The runtime Program of PTX text holding `kernel`, with the default launch description
    (`block` threads, one pointer parameter per `.param` of its `.entry`)."""
    entry = ptx[ptx.index(f".entry {kernel}("):]
    n = entry[:entry.index(")")].count(".param")
    return dev.load(ptx, {"format": "coopdialect-ptx-launch", "version": 1, "kernels": [{
        "name": kernel, "block": list(block), "grid": "dispatch", "dynamic_shared_bytes": 0,
        "args": [{"name": str(i)} for i in range(n)],
        "params": [{"kind": "pointer", "arg": i} for i in range(n)]}]})


def run_case(dev, data, c: dict, key: str, block: tuple, outputs: Iterable[int], fail: str) -> str:
    """Launch one case on the runtime's CUDA device and compare its output buffers byte for
    byte with the expected bytes.

    Returns "PASS", `fail` formatted with `bad` (bytes that differ) and `size` (bytes
    compared), or "ERROR Type: message" for any exception (reported, not raised).
    """
    try:
        prog = load(dev, c["ptx"], c["kernel"], block)
        ins = [data[f"{key}/in{i}"] for i in range(c["nbuf"])]
        bufs = [dev.upload(a) for a in ins]
        dev.launch(prog, c["kernel"], bufs, tuple(c["grid"]))
        bad = size = 0
        for i in outputs:
            want = data[f"{key}/exp{i}"]
            got = dev.download(bufs[i], want)
            bad += int(np.count_nonzero(got != want))
            size += want.size
        return "PASS" if bad == 0 else fail.format(bad=bad, size=size)
    except Exception as e:  # noqa: BLE001 - report and go on
        return f"ERROR {type(e).__name__}: {e}"


def run_cases(cases: Iterable[dict], run_one: Callable[[dict], str],
              group: Callable[[dict], str]) -> tuple[list[str], int, int, dict[str, list[int]]]:
    """Run every case; (one `STATUS name` line each, passed, failed, {group: [passed, all]})."""
    lines, passed, failed, groups = [], 0, 0, {}
    for c in cases:
        status = run_one(c)
        ok = status == "PASS"
        passed += ok
        failed += not ok
        g = groups.setdefault(group(c), [0, 0])
        g[0] += ok
        g[1] += 1
        lines.append(f"{status:8s} {c['name']}")
    return lines, passed, failed, groups


def report(lines: list[str], out: Path | None, file_name: str, failed: int) -> int:
    """Print the lines, also write them to OUT/FILE_NAME; exit status 0 when nothing failed."""
    text = "\n".join(lines)
    print(text)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / file_name).write_text(text + "\n")
    return 0 if failed == 0 else 1


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


def main(argv: list[str], doc: str, build: Callable[[Path, int, list[int]], None],
         run: Callable[[Path, Path | None], int], default_count: int) -> int:
    """`build FOLDER [--count N] [--perf N,N]` or `run FOLDER [--out DIR]`; else print `doc`."""
    if len(argv) >= 2 and argv[0] == "build":
        count = int(argv[argv.index("--count") + 1]) if "--count" in argv else default_count
        perf = ([int(x) for x in argv[argv.index("--perf") + 1].split(",")]
                if "--perf" in argv else [])
        t = time.time()
        build(Path(argv[1]), count, perf)
        print(f"({time.time() - t:.1f} s)")
        return 0
    if len(argv) >= 2 and argv[0] == "run":
        out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else None
        return run(Path(argv[1]), out)
    print(doc)
    return 2

