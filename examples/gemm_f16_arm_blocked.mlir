// GEMM on operands pre-packed in Arm blocked-interleaved layouts (SPV_ARM_cooperative_matrix_layouts):
// C = A·B + C, f16 × f16 + f32 → f32, M = N = K = 32, 16×16 tiles.
//
//   A: the 2×2 tiles of A (16×16 f16 each), tile (i, k) at element (2·i + k)·256, each tile in
//      RowBlockedInterleavedARM with Stride 2 (groups of two 4×8 blocks interleaved by 4 bytes).
//   B: the tiles of B, tile (k, j) at element (2·j + k)·256, ColumnBlockedInterleavedARM, Stride 1.
//   C: 32×32 f32, row-major (ld 32).
//
// One workgroup of one subgroup (32 invocations) per 16×16 tile of C: grid = (2, 2, 1).
// The layouts' addressing is docs/arm-layouts.md; `coop-opt -p convert-coop-to-spirv -t spirv`
// declares CooperativeMatrixLayoutsARM and its extension (no Arm GPU was available to run it).
!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
!b = !coop.matrix<16x16xf16, Subgroup, MatrixB>
!c = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @gemm_f16_arm_blocked(%A: memref<1024xf16>, %B: memref<1024xf16>, %C: memref<1024xf32>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %ldc = arith.constant 32 : index
  %j = gpu.block_id x
  %i = gpu.block_id y
  %row = arith.muli %i, %c16 : index
  %col = arith.muli %j, %c16 : index
  %crow = arith.muli %row, %ldc : index
  %coff = arith.addi %crow, %col : index
  %acc0 = coop.load %C[%coff], %ldc, RowMajor : memref<1024xf32> -> !c
  %i2 = arith.muli %i, %c2 : index
  %j2 = arith.muli %j, %c2 : index
  %acc = scf.for %k = %c0 to %c2 step %c1 iter_args(%acc_in = %acc0) -> (!c) {
    %at = arith.addi %i2, %k : index
    %aoff = arith.muli %at, %c256 : index
    %bt = arith.addi %j2, %k : index
    %boff = arith.muli %bt, %c256 : index
    %a = coop.load %A[%aoff], %c2, RowBlockedInterleavedARM : memref<1024xf16> -> !a
    %b = coop.load %B[%boff], %c1, ColumnBlockedInterleavedARM : memref<1024xf16> -> !b
    %r = coop.mul_add %a, %b, %acc_in : !a, !b, !c -> !c
    scf.yield %r : !c
  }
  coop.store %acc, %C[%coff], %ldc, RowMajor : !c, memref<1024xf32>
  func.return
}
