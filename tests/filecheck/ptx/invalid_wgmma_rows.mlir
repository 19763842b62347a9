// RUN: not coop-opt %s -p convert-coop-to-ptx -t ptx 2>&1 | filecheck %s
// A Workgroup-scope accumulator is 64-row blocks spread evenly over the warpgroups: 192 rows
// on two warpgroups (256 invocations) is refused at the op.
!c = !coop.matrix<192x32xf32, Workgroup, MatrixAcc>
func.func @rows(%C: memref<6144xf32>) attributes {coop.workgroup_size = array<i32: 256, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c = coop.load %C[%c0], %c32, RowMajor : memref<6144xf32> -> !c
  coop.store %c, %C[%c0], %c32, RowMajor : !c, memref<6144xf32>
  func.return
}
// CHECK: invalid_wgmma_rows.mlir:8:{{[0-9]+}}: error: 'coop.load' op workgroup-scope MatrixAcc 192x32 with 2 warpgroup(s): an accumulator must be 128·R x N (64-row blocks spread evenly over the warpgroups, N a multiple of 8)
// CHECK-NOT: Traceback
