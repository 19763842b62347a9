// RUN: not coop-opt %s -p convert-coop-to-ptx -t ptx 2>&1 | filecheck %s
// 8-bit products accumulate in 32-bit integers: an f32 accumulator is refused at the product.
!a = !coop.matrix<64x32xi8, Workgroup, MatrixA>
!b = !coop.matrix<32x16xi8, Workgroup, MatrixB>
!c = !coop.matrix<64x16xf32, Workgroup, MatrixAcc>
func.func @float_acc(%A: memref<2048xi8>, %B: memref<512xi8>, %C: memref<1024xf32>)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %a = coop.load %A[%c0], %c32, RowMajor : memref<2048xi8> -> !a
  %b = coop.load %B[%c0], %c16, RowMajor : memref<512xi8> -> !b
  %c = coop.load %C[%c0], %c16, RowMajor : memref<1024xf32> -> !c
  %d = coop.mul_add %a, %b, %c <ASigned|BSigned> : !a, !b, !c -> !c
  coop.store %d, %C[%c0], %c16, RowMajor : !c, memref<1024xf32>
  func.return
}
// CHECK: invalid_wgmma_accumulator.mlir:14:{{[0-9]+}}: error: 'coop.mul_add' op wgmma accumulates 8-bit products in 32-bit integers, not C of f32
// CHECK-NOT: Traceback
