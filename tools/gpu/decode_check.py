"""The DecodeFunc example (examples/block_decode_load.mlir: Q4_0 4-bit blocks with an f16 scale,
decoded by a function through a PhysicalStorageBuffer pointer) through Vulkan on the H200, against
the interpreter.

    python3 tools/gpu/decode_check.py [--sets 3] [--out D]    # on the GPU (coopdialect installed)

Both entry points (dequant_q4: W = decode(Q); gemm_q4: C = decode(Q)·B), compiled unfolded and
folded (fold-tensor-views), on random Q4_0 data (tests/test_decode_func.make_q4_0: nibbles 0..15,
scales ±2^k, so every product and sum is exact); runtime.run_kernel(check=True) must find every
buffer bit-exact, and the line also says whether the interpreter equals the numpy dequantization.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "block_decode_load.mlir")
M, K, N = 64, 128, 32


def main(argv: list[str]) -> int:
    sys.path[:0] = [str(ROOT / "tests"), str(Path(__file__).parent)]
    from gpu_check_common import report
    from test_decode_func import make_q4_0

    from coopdialect import api
    from coopdialect.runtime import open_device, run_kernel

    sets = int(argv[argv.index("--sets") + 1]) if "--sets" in argv else 3
    rng, lines, failures = np.random.default_rng(2026), [], 0
    with open_device("vulkan") as dev:
        lines.append(f"device: {dev.ctx.device_info()['name']}")
        for pipeline in ("", "fold-tensor-views"):
            for s in range(sets):
                q, w = make_q4_0(rng)
                b = rng.integers(-4, 5, (K, N)).astype(np.float16)
                for kernel, bufs, grid, ref in (
                        ("dequant_q4", [q, np.zeros((M, K), np.float16)], (K // 16, M // 16, 1), w),
                        ("gemm_q4", [q, b, np.zeros((M, N), np.float32)], (N // 16, M // 16, 1),
                         w.astype(np.float32) @ b.astype(np.float32))):
                    try:
                        r = run_kernel(api.parse_file(EXAMPLE), kernel, bufs, grid, dev,
                                       pipeline=pipeline or None, check=True)
                        ok, detail = r.passed, r.verdicts[-1].line()
                        detail += f"; GPU == numpy: {np.array_equal(bufs[-1], ref)}"
                    except Exception as e:  # noqa: BLE001 - report it, go on
                        ok, detail = False, f"{type(e).__name__}: {e}"
                    failures += not ok
                    lines.append(f"[{'PASS' if ok else 'FAIL'}] {kernel}_"
                                 f"{'folded' if pipeline else 'unfolded'}_{s}: {detail}")
    lines.append(f"{len(lines) - 1 - failures}/{len(lines) - 1} cases match the interpreter bit-exactly")
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else None
    return report(lines, out, "decode_check.txt", failures)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
