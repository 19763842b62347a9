"""A cooperative-matrix-2 GEMM at any size (the form of examples/gemm_coopmat2_f16.mlir with B
row-major, a 128×256 tile and K step 64).

C[M,N] (f32) = A[M,K] (f16, row-major) · B[K,N] (f16, row-major), sizes in elements; loads and
the store through tensor layouts (SPV_NV_tensor_addressing, SPV_NV_cooperative_matrix2). One
workgroup of 256 invocations owns a 128×256 tile of C as ONE workgroup-scope accumulator; one plain K loop (one
OpLoopMerge) with K step 64 loads a 128×64 slice of A and a 64×256 slice of B through
tensor layouts (clamp mode Undefined by default: the tiles stay inside the matrices). All tiles
fit the H200's Vulkan workgroup granularity for 256 invocations (32×32×16, its
VkCooperativeMatrixFlexibleDimensionsPropertiesNV). Dispatch grid `grid(M, N)` =
(N/256, M/128, 1). M must be a multiple of 128, N of 256, K of 64.
"""

from __future__ import annotations

TM, TN, TK = 128, 256, 64
INVOCATIONS = 256


def coopmat2_gemm_ir(m: int, n: int, k: int, name: str = "gemm_coopmat2", clamp: str = "Undefined") -> str:
    """The kernel's IR text for the given sizes (elements). `clamp` is the layouts' Tensor Clamp
    Mode: Undefined (default; the tiles never leave the matrices, and no clamping is fastest) or
    any other Tensor Clamp Mode (the parser refuses a name that is none). Arguments
    `(%A: memref<MxKxf16>, %B: memref<KxNxf16>, %C: memref<MxNxf32>)`. Raises ValueError for sizes that are not multiples of the tile (M % 128,
    N % 256, K % 64) or that overflow the 32-bit index."""
    if m % TM or n % TN or k % TK or min(m, n, k) <= 0:
        raise ValueError(f"M, N, K must be positive multiples of {TM}, {TN}, {TK} "
                         f"(got {m} {n} {k})")
    if max(m, n, k) >= 2**31 // 2:
        raise ValueError("sizes must fit the 32-bit SPIR-V index")
    return f"""// coopmat2 GEMM at M={m} N={n} K={k}: grid = ({n // TN}, {m // TM}, 1), {INVOCATIONS} invocations
!L = !tensor_addr.layout<2, {clamp}>
!a = !coop.matrix<{TM}x{TK}xf16, Workgroup, MatrixA>
!b = !coop.matrix<{TK}x{TN}xf16, Workgroup, MatrixB>
!c = !coop.matrix<{TM}x{TN}xf32, Workgroup, MatrixAcc>
func.func @{name}(%A: memref<{m}x{k}xf16>, %B: memref<{k}x{n}xf16>, %C: memref<{m}x{n}xf32>)
    attributes {{coop.workgroup_size = array<i32: {INVOCATIONS}, 1, 1>}} {{
  %M = arith.constant {m} : i32
  %N = arith.constant {n} : i32
  %K = arith.constant {k} : i32
  %tm = arith.constant {TM} : i32
  %tn = arith.constant {TN} : i32
  %tk = arith.constant {TK} : i32
  %c0 = arith.constant 0 : index
  %ctk = arith.constant {TK} : index
  %ctm = arith.constant {TM} : index
  %ctn = arith.constant {TN} : index
  %kend = arith.constant {k} : index
  %l0 = tensor_addr.create_layout : !L
  %la = tensor_addr.layout_set_dimension %l0, %M, %K : !L
  %lb = tensor_addr.layout_set_dimension %l0, %K, %N : !L
  %lc = tensor_addr.layout_set_dimension %l0, %M, %N : !L
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %r0 = arith.muli %wy, %ctm : index
  %n0 = arith.muli %wx, %ctn : index
  %row0 = arith.index_cast %r0 : index to i32
  %col0 = arith.index_cast %n0 : index to i32
  %zh = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %oa = coop.composite_construct %zh : f16 -> !a
  %ob = coop.composite_construct %zh : f16 -> !b
  %init = coop.composite_construct %zf : f32 -> !c
  %acc = scf.for %kk = %c0 to %kend step %ctk iter_args(%d = %init) -> (!c) {{
    %k32 = arith.index_cast %kk : index to i32
    %las = tensor_addr.layout_slice %la, %row0, %tm, %k32, %tk : !L
    %lbs = tensor_addr.layout_slice %lb, %k32, %tk, %col0, %tn : !L
    %av = coop.load_tensor %A, %oa, %las : memref<{m}x{k}xf16>, !a, !L -> !a
    %bv = coop.load_tensor %B, %ob, %lbs : memref<{k}x{n}xf16>, !b, !L -> !b
    %e = coop.mul_add %av, %bv, %d : !a, !b, !c -> !c
    scf.yield %e : !c
  }}
  %lcs = tensor_addr.layout_slice %lc, %row0, %tm, %col0, %tn : !L
  coop.store_tensor %acc, %C, %lcs : !c, memref<{m}x{n}xf32>, !L
  func.return
}}
"""


def grid(m: int, n: int) -> tuple[int, int, int]:
    """The dispatch grid (workgroups along x, y, z) of `coopmat2_gemm_ir(m, n, k)`."""
    return (n // TN, m // TM, 1)
