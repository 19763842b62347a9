"""The subgroup-scope GEMM of examples/gemm_f16.mlir at any size.

C[M,N] += A[M,K] · B[K,N]: f16 × f16 + f32 → f32, every matrix row-major, sizes in elements.
One workgroup of 128 invocations (4 subgroups) computes a 64×64 tile of C; subgroup s owns its
32×32 quadrant (s / 2, s % 2) as 2×2 accumulators of 16×16 (`Subgroup` scope,
SPV_KHR_cooperative_matrix), carried through the K loop (step 16) as scf.for iteration
arguments. Dispatch grid (N/64, M/64, 1). At M = N = 128, K = 256 the text below the header is
the example's.
"""

from __future__ import annotations

TILE_M = TILE_N = 64  # elements of C per workgroup
K_STEP = 16
INVOCATIONS = 128


def grid(m: int, n: int) -> tuple[int, int, int]:
    """The dispatch grid (workgroups along x, y, z) of `gemm_f16_ir(m, n, k)`."""
    return (n // TILE_N, m // TILE_M, 1)


def gemm_f16_ir(m: int, n: int, k: int, name: str = "gemm_f16") -> str:
    """IR text of `func.func @name(%A: memref<MxKxf16>, %B: memref<KxNxf16>,
    %C: memref<MxNxf32>)`, C = A·B + C (module docstring). Raises ValueError unless M and N are
    positive multiples of 64 and K of 16."""
    if m % TILE_M or n % TILE_N or k % K_STEP or min(m, n, k) <= 0:
        raise ValueError(f"M and N must be positive multiples of {TILE_M} and K of {K_STEP} "
                         f"(got {m} {n} {k})")
    gx, gy, _ = grid(m, n)
    a, b, c = f"memref<{m}x{k}xf16>", f"memref<{k}x{n}xf16>", f"memref<{m}x{n}xf32>"
    return f"""// gemm_f16 example kernel at M={m} N={n} K={k}; grid = ({gx}, {gy}, 1)
!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
!b = !coop.matrix<16x16xf16, Subgroup, MatrixB>
!c = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @{name}(%A: {a}, %B: {b}, %C: {c})
    attributes {{coop.workgroup_size = array<i32: {INVOCATIONS}, 1, 1>}} {{
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %lda = arith.constant {k} : index
  %ldb = arith.constant {n} : index
  %ldc = arith.constant {n} : index
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %sg = gpu.subgroup_id : index
  // Top-left corner of this subgroup's 32×32 quadrant of C.
  %qr = arith.divui %sg, %c2 : index
  %qc = arith.remui %sg, %c2 : index
  %wr = arith.muli %wy, %c64 : index
  %wc = arith.muli %wx, %c64 : index
  %qr32 = arith.muli %qr, %c32 : index
  %qc32 = arith.muli %qc, %c32 : index
  %row0 = arith.addi %wr, %qr32 : index
  %col0 = arith.addi %wc, %qc32 : index
  %row1 = arith.addi %row0, %c16 : index
  %col1 = arith.addi %col0, %c16 : index
  // Element offsets of the four 16×16 blocks of C.
  %r0c = arith.muli %row0, %ldc : index
  %r1c = arith.muli %row1, %ldc : index
  %o00 = arith.addi %r0c, %col0 : index
  %o01 = arith.addi %r0c, %col1 : index
  %o10 = arith.addi %r1c, %col0 : index
  %o11 = arith.addi %r1c, %col1 : index
  %i00 = coop.load %C[%o00], %ldc, RowMajor : {c} -> !c
  %i01 = coop.load %C[%o01], %ldc, RowMajor : {c} -> !c
  %i10 = coop.load %C[%o10], %ldc, RowMajor : {c} -> !c
  %i11 = coop.load %C[%o11], %ldc, RowMajor : {c} -> !c
  %r0a = arith.muli %row0, %lda : index
  %r1a = arith.muli %row1, %lda : index
  %acc:4 = scf.for %k = %c0 to %lda step %c16
      iter_args(%d00 = %i00, %d01 = %i01, %d10 = %i10, %d11 = %i11) -> (!c, !c, !c, !c) {{
    %oa0 = arith.addi %r0a, %k : index
    %oa1 = arith.addi %r1a, %k : index
    %kb = arith.muli %k, %ldb : index
    %ob0 = arith.addi %kb, %col0 : index
    %ob1 = arith.addi %kb, %col1 : index
    %a0 = coop.load %A[%oa0], %lda, RowMajor : {a} -> !a
    %a1 = coop.load %A[%oa1], %lda, RowMajor : {a} -> !a
    %b0 = coop.load %B[%ob0], %ldb, RowMajor : {b} -> !b
    %b1 = coop.load %B[%ob1], %ldb, RowMajor : {b} -> !b
    %e00 = coop.mul_add %a0, %b0, %d00 : !a, !b, !c -> !c
    %e01 = coop.mul_add %a0, %b1, %d01 : !a, !b, !c -> !c
    %e10 = coop.mul_add %a1, %b0, %d10 : !a, !b, !c -> !c
    %e11 = coop.mul_add %a1, %b1, %d11 : !a, !b, !c -> !c
    scf.yield %e00, %e01, %e10, %e11 : !c, !c, !c, !c
  }}
  coop.store %acc#0, %C[%o00], %ldc, RowMajor : !c, {c}
  coop.store %acc#1, %C[%o01], %ldc, RowMajor : !c, {c}
  coop.store %acc#2, %C[%o10], %ldc, RowMajor : !c, {c}
  coop.store %acc#3, %C[%o11], %ldc, RowMajor : !c, {c}
  func.return
}}
"""
