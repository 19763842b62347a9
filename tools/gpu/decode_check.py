"""Run the DecodeFunc example (examples/block_decode_load.mlir: Q4_0 4-bit blocks with an f16 scale,
decoded by a function through a PhysicalStorageBuffer pointer) on the H200 through Vulkan and
compare with the interpreter.

    python tools/gpu/decode_check.py build .decodecheck          # here: compile + interpret
    python3 tools/gpu/decode_check.py run .decodecheck --out D   # on the GPU: dispatch + compare

`build` compiles the example unfolded and folded (fold-tensor-views), runs spirv-val, draws random
Q4_0 data (tests/test_decode_func.make_q4_0: nibbles 0..15, scales ±2^k, so every product and sum
is exact), runs the interpreter and also stores the numpy dequantization; `run` dispatches both
entry points (dequant_q4: W = decode(Q); gemm_q4: C = decode(Q)·B) and requires bit-exact
agreement with the interpreter (and reports the interpreter against numpy).
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vk_check_common import Case, bits, cli, report, run_cases, save_case, write_manifest, write_spv  # noqa: E402

EXAMPLE = "examples/block_decode_load.mlir"
M, K, N = 64, 128, 32


def build(args) -> None:
    sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
    from coopdialect import api
    from coopdialect.context import make_context
    from coopdialect.passes.fold_tensor_views import FoldTensorViewsPass
    from test_decode_func import make_q4_0

    out, rng, manifest = args.folder, np.random.default_rng(args.seed), []
    os.makedirs(out, exist_ok=True)
    for fold in (False, True):
        module = api.parse_file(EXAMPLE)
        if fold:
            FoldTensorViewsPass().apply(make_context(), module)
        name = "folded" if fold else "unfolded"
        spv = write_spv(out, name, api.compile_to_spirv(module))
        for s in range(args.sets):
            q, w = make_q4_0(rng)
            b = rng.integers(-4, 5, (K, N)).astype(np.float16)
            for kernel, bufs, grid, ref in (
                    ("dequant_q4", [q, np.zeros((M, K), np.float16)], (K // 16, M // 16, 1), w),
                    ("gemm_q4", [q, b, np.zeros((M, N), np.float32)], (N // 16, M // 16, 1),
                     w.astype(np.float32) @ b.astype(np.float32))):
                expected = [x.copy() for x in bufs]
                api.run_kernel(api.parse_file(EXAMPLE), kernel, expected, grid)
                save_case(out, manifest, f"{kernel}_{name}_{s}", spv, kernel, grid, bufs, expected,
                          extra=[ref])
    write_manifest(out, manifest)


def _check(case: Case, got: list[np.ndarray]) -> tuple[str, str]:
    expected, ref = case.expected[-1], case.extra[0]
    ok = np.array_equal(bits(got[-1]), bits(expected))
    interp_ok = np.array_equal(bits(expected), bits(ref.astype(expected.dtype)))
    bad = int(np.count_nonzero(bits(got[-1]) != bits(expected)))
    return ("PASS" if ok else "FAIL"), (f": {expected.shape} {expected.dtype} bit mismatches={bad}/"
                                        f"{expected.size}; interpreter == numpy: {interp_ok}")


def run(args) -> int:
    lines, failures = run_cases(args.folder, _check)
    lines.append(f"{len(lines) - 1 - failures}/{len(lines) - 1} cases match the interpreter bit-exactly")
    return report(lines, args.out, "decode_check.txt", failures)


if __name__ == "__main__":
    cli(__doc__, build, run, build_args=lambda p: p.add_argument("--sets", type=int, default=3))
