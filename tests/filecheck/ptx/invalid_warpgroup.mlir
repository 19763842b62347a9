// RUN: not coop-opt %s -p convert-coop-to-ptx -t ptx 2>&1 | filecheck %s
// Workgroup-scope matrices (wgmma) need whole warpgroups: a multiple of 128 invocations.
!a = !coop.matrix<64x16xf16, Workgroup, MatrixA>
func.func @three_warps(%A: memref<1024xf16>) attributes {coop.workgroup_size = array<i32: 96, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = coop.load %A[%c0], %c16, RowMajor : memref<1024xf16> -> !a
  func.return
}
// CHECK: invalid_warpgroup.mlir:7:{{[0-9]+}}: error: 'coop.load' op workgroup-scope matrices need whole warpgroups: coop.workgroup_size of a multiple of 128 invocations, got [96, 1, 1]
// CHECK-NOT: Traceback
