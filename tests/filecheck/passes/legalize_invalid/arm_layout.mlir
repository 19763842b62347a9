// RUN: not coop-opt %s -p 'legalize-coop-sizes{target=h200-vulkan flexible=false}' 2>&1 | filecheck %s
// Arm blocked layouts are not split.
func.func @f(%p: memref<4096xf32>, %o: index) {
  %s = arith.constant 1 : index
  %c = coop.load %p[%o], %s, RowBlockedInterleavedARM : memref<4096xf32> -> !coop.matrix<32x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: error: 'coop.load' op a RowBlockedInterleavedARM matrix cannot be split into native tiles
