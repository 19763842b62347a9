// RUN: not coop-opt %s -p convert-coop-to-ptx -t ptx 2>&1 | filecheck %s
// Op by op, staged operands live in static shared memory (48 KB): a 256x128 f16 A (64 KB) is
// refused at its load with the way out (smaller tiles, or the staged wgmma pipeline).
!a = !coop.matrix<256x128xf16, Workgroup, MatrixA>
func.func @big(%A: memref<32768xf16>) attributes {coop.workgroup_size = array<i32: 256, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %x = coop.load %A[%c0], %c128, RowMajor : memref<32768xf16> -> !a
  func.return
}
// CHECK: invalid_wgmma_shared.mlir:8:{{[0-9]+}}: error: 'coop.load' op staging this operand needs 65536 bytes of shared memory in all, more than the 49152 of static shared memory: use smaller tiles, or stage the K loop with pipeline-coop-loads (the wgmma pipeline's dynamic shared memory)
// CHECK-NOT: Traceback
