// RUN: not coop-opt %s -p convert-coop-to-ptx -t ptx 2>&1 | filecheck %s
// Op by op, staged operands live in shared memory: statically up to 48 KB, past that in the
// kernel's dynamic shared memory, up to the 227 KB a block may use on sm_90. A 256x512 f16 A
// (256 KB) is refused at its load.
!a = !coop.matrix<256x512xf16, Workgroup, MatrixA>
func.func @big(%A: memref<131072xf16>) attributes {coop.workgroup_size = array<i32: 256, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c512 = arith.constant 512 : index
  %x = coop.load %A[%c0], %c512, RowMajor : memref<131072xf16> -> !a
  func.return
}
// CHECK: invalid_wgmma_shared.mlir:9:{{[0-9]+}}: error: 'coop.load' op staging this operand needs 262144 bytes of shared memory in all, more than the 232448 a block may use on sm_90a: use smaller tiles
// CHECK-NOT: Traceback
