// Integer GEMM with cooperative matrices: C = A·B + C, s8 × s8 + s32 → s32, wrapping.
//
//   A: M×K si8 row-major, B: K×N si8 column-major (i.e. Bᵀ stored row-major, as int8 GEMMs
//   usually keep it), C: M×N si32 row-major, with M = N = 64, K = 128.
//
// One workgroup of 64 invocations (2 subgroups of 32) computes a 32×16 tile of C; subgroup s owns
// the 16×16 block at rows 16·s of the tile. K loop step 32 (the native 16×16×32 int8 shape).
// The si8/si32 component types make the multiply-add signed (MatrixA/B/C/ResultSignedComponents).
//
// Dispatch: grid = (N/16, M/32, 1) = (4, 2, 1).
!a = !coop.matrix<16x32xsi8, Subgroup, MatrixA>
!b = !coop.matrix<32x16xsi8, Subgroup, MatrixB>
!c = !coop.matrix<16x16xsi32, Subgroup, MatrixAcc>
func.func @gemm_s8(%A: memref<64x128xsi8>, %Bt: memref<64x128xsi8>, %C: memref<64x64xsi32>)
    attributes {coop.workgroup_size = array<i32: 64, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %ldk = arith.constant 128 : index
  %ldc = arith.constant 64 : index
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %sg = gpu.subgroup_id : index
  %wr = arith.muli %wy, %c32 : index
  %sr = arith.muli %sg, %c16 : index
  %row = arith.addi %wr, %sr : index
  %col = arith.muli %wx, %c16 : index
  %rc = arith.muli %row, %ldc : index
  %oc = arith.addi %rc, %col : index
  %ra = arith.muli %row, %ldk : index
  %cb = arith.muli %col, %ldk : index
  %init = coop.load %C[%oc], %ldc, RowMajor : memref<64x64xsi32> -> !c
  %acc = scf.for %k = %c0 to %ldk step %c32 iter_args(%d = %init) -> (!c) {
    %oa = arith.addi %ra, %k : index
    %ob = arith.addi %cb, %k : index
    %a = coop.load %A[%oa], %ldk, RowMajor : memref<64x128xsi8> -> !a
    %b = coop.load %Bt[%ob], %ldk, ColumnMajor : memref<64x128xsi8> -> !b
    %e = coop.mul_add %a, %b, %d : !a, !b, !c -> !c
    scf.yield %e : !c
  }
  coop.store %acc, %C[%oc], %ldc, RowMajor : !c, memref<64x64xsi32>
  func.return
}
