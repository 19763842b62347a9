"""Size-parametrized copy of examples/gemm_f16.mlir: `python tools/gpu/gen_gemm.py M N K`.

Same kernel shape as the example (workgroup of 128 = 4 subgroups, 64x64 tile per workgroup,
32x32 per subgroup as 2x2 accumulators of 16x16 f32, K step 16, all row-major); only the sizes
change. Dispatch grid = (N/64, M/64, 1). M and N must be multiples of 64, K of 16.
"""

from __future__ import annotations

import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gemm_f16.mlir"


def gemm_f16_ir(m: int, n: int, k: int, name: str = "gemm_f16") -> str:
    """The example kernel's IR for C[m,n] += A[m,k] @ B[k,n] (f16 x f16 + f32)."""
    if m % 64 or n % 64 or k % 16:
        raise ValueError("M and N must be multiples of 64 and K of 16")
    src = EXAMPLE.read_text()
    body = src[src.index("!a = "):]
    body = (body.replace("memref<128x256xf16>", f"memref<{m}x{k}xf16>")
                .replace("memref<256x128xf16>", f"memref<{k}x{n}xf16>")
                .replace("memref<128x128xf32>", f"memref<{m}x{n}xf32>")
                .replace("%lda = arith.constant 256", f"%lda = arith.constant {k}")
                .replace("%ldb = arith.constant 128", f"%ldb = arith.constant {n}")
                .replace("%ldc = arith.constant 128", f"%ldc = arith.constant {n}")
                .replace("@gemm_f16(", f"@{name}("))
    return f"// gemm_f16 example kernel at M={m} N={n} K={k}; grid = ({n // 64}, {m // 64}, 1)\n" + body


if __name__ == "__main__":
    m, n, k = (int(x) for x in sys.argv[1:4])
    sys.stdout.write(gemm_f16_ir(m, n, k))
