// RUN: not coop-opt %s -p convert-coop-to-ptx -t ptx 2>&1 | filecheck %s
// A MatrixA must be whole 16x16 (f16) mma.sync tiles.
!a = !coop.matrix<16x24xf16, Subgroup, MatrixA>
func.func @ragged(%A: memref<512xf16>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c24 = arith.constant 24 : index
  %x = coop.load %A[%c0], %c24, RowMajor : memref<512xf16> -> !a
  func.return
}
// CHECK: invalid_shape.mlir:7:{{[0-9]+}}: error: 'coop.load' op a MatrixA of 16x24 is not a whole number of 16x16 mma.sync tiles
