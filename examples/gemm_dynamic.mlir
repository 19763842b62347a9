// Tiled GEMM at any size, written once: C = A·B + C, f16 × f16 + f32 → f32, all row-major.
//
//   A: M×K f16, B: K×N f16, C: M×N f32; M, N multiples of 64 and K a multiple of 16, given as
//   the kernel's i32 arguments %M, %N, %K (push constants in SPIR-V, .param .u32 in PTX).
//
// One workgroup of 128 invocations (4 subgroups of 32) computes a 64×64 tile of C. Subgroup s
// owns the 32×32 quadrant (s / 2, s % 2) of that tile and keeps it as 2×2 accumulators of 16×16,
// carried through the K loop (step 16) as scf.for iteration arguments.
//
// Dispatch: the kernel declares its grid, (N/64, M/64, 1), as a function of its integer scalar
// arguments (symbols s0, s1, s2 = %M, %N, %K in argument order), so it runs without a --grid:
//
//   coop-run examples/gemm_dynamic.mlir --arg M=128 --arg N=64 --arg K=48 \
//       --shape A=128x48 --shape B=48x64 --shape C=128x64
!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
!b = !coop.matrix<16x16xf16, Subgroup, MatrixB>
!c = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @gemm_dynamic(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>,
                        %M: i32, %N: i32, %K: i32)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>,
                coop.grid = affine_map<()[s0, s1, s2] -> (s1 ceildiv 64, s0 ceildiv 64, 1)>} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  // Leading dimensions: A is M×K (lda = K), B and C have N columns.
  %lda = arith.index_cast %K : i32 to index
  %ldb = arith.index_cast %N : i32 to index
  %ldc = arith.index_cast %N : i32 to index
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
  %i00 = coop.load %C[%o00], %ldc, RowMajor : memref<?x?xf32> -> !c
  %i01 = coop.load %C[%o01], %ldc, RowMajor : memref<?x?xf32> -> !c
  %i10 = coop.load %C[%o10], %ldc, RowMajor : memref<?x?xf32> -> !c
  %i11 = coop.load %C[%o11], %ldc, RowMajor : memref<?x?xf32> -> !c
  %r0a = arith.muli %row0, %lda : index
  %r1a = arith.muli %row1, %lda : index
  %acc:4 = scf.for %k = %c0 to %lda step %c16
      iter_args(%d00 = %i00, %d01 = %i01, %d10 = %i10, %d11 = %i11) -> (!c, !c, !c, !c) {
    %oa0 = arith.addi %r0a, %k : index
    %oa1 = arith.addi %r1a, %k : index
    %kb = arith.muli %k, %ldb : index
    %ob0 = arith.addi %kb, %col0 : index
    %ob1 = arith.addi %kb, %col1 : index
    %a0 = coop.load %A[%oa0], %lda, RowMajor : memref<?x?xf16> -> !a
    %a1 = coop.load %A[%oa1], %lda, RowMajor : memref<?x?xf16> -> !a
    %b0 = coop.load %B[%ob0], %ldb, RowMajor : memref<?x?xf16> -> !b
    %b1 = coop.load %B[%ob1], %ldb, RowMajor : memref<?x?xf16> -> !b
    %e00 = coop.mul_add %a0, %b0, %d00 : !a, !b, !c -> !c
    %e01 = coop.mul_add %a0, %b1, %d01 : !a, !b, !c -> !c
    %e10 = coop.mul_add %a1, %b0, %d10 : !a, !b, !c -> !c
    %e11 = coop.mul_add %a1, %b1, %d11 : !a, !b, !c -> !c
    scf.yield %e00, %e01, %e10, %e11 : !c, !c, !c, !c
  }
  coop.store %acc#0, %C[%o00], %ldc, RowMajor : !c, memref<?x?xf32>
  coop.store %acc#1, %C[%o01], %ldc, RowMajor : !c, memref<?x?xf32>
  coop.store %acc#2, %C[%o10], %ldc, RowMajor : !c, memref<?x?xf32>
  coop.store %acc#3, %C[%o11], %ldc, RowMajor : !c, memref<?x?xf32>
  func.return
}
