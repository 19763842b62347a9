// RUN: not coop-opt %s -p convert-coop-to-ptx -t ptx 2>&1 | filecheck %s
// SaturatingAccumulation of 8-bit wgmma products: A*B then add.sat.s32 of C, which saturates
// to the s32 range only; an unsigned Result is refused at the op.
!a = !coop.matrix<64x32xui8, Workgroup, MatrixA>
!b = !coop.matrix<32x16xui8, Workgroup, MatrixB>
!c = !coop.matrix<64x16xui32, Workgroup, MatrixAcc>
func.func @unsigned(%A: memref<2048xui8>, %B: memref<512xui8>, %C: memref<1024xui32>)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %a = coop.load %A[%c0], %c32, RowMajor : memref<2048xui8> -> !a
  %b = coop.load %B[%c0], %c16, RowMajor : memref<512xui8> -> !b
  %c = coop.load %C[%c0], %c16, RowMajor : memref<1024xui32> -> !c
  %d = coop.mul_add %a, %b, %c <SaturatingAccumulation> : !a, !b, !c -> !c
  coop.store %d, %C[%c0], %c16, RowMajor : !c, memref<1024xui32>
  func.return
}
// CHECK: invalid_wgmma_saturating.mlir:15:{{[0-9]+}}: error: 'coop.mul_add' op SaturatingAccumulation with an unsigned C or Result: add.sat saturates to the s32 range only
// CHECK-NOT: Traceback
