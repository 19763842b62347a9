// RUN: not coop-opt %s -p convert-coop-to-ptx -t ptx 2>&1 | filecheck %s
// mma.sync has no f32 A operand: one line naming the op and its location.
!a = !coop.matrix<16x16xf32, Subgroup, MatrixA>
!b = !coop.matrix<16x16xf32, Subgroup, MatrixB>
!c = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @f32_product(%C: memref<256xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = coop.load %C[%c0], %c16, RowMajor : memref<256xf32> -> !a
  func.return
}
// CHECK: invalid_type.mlir:9:{{[0-9]+}}: error: 'coop.load' op mma.sync has no MatrixA operand of 32-bit components (f32)
