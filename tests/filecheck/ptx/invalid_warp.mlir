// RUN: not coop-opt %s -p convert-coop-to-ptx -t ptx 2>&1 | filecheck %s
// Subgroup-scope matrices (mma.sync fragments, .aligned) need whole warps: a workgroup of one
// invocation, as a SPIR-V LocalSizeId left at its default of 1 gives, is refused.
!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
func.func @one_invocation(%A: memref<256xf16>) attributes {coop.workgroup_size = array<i32: 1, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = coop.load %A[%c0], %c16, RowMajor : memref<256xf16> -> !a
  coop.store %x, %A[%c0], %c16, RowMajor : !a, memref<256xf16>
  func.return
}
// CHECK: invalid_warp.mlir:8:{{[0-9]+}}: error: 'coop.load' op subgroup-scope matrices need whole warps: coop.workgroup_size of a multiple of 32 invocations, got [1, 1, 1]
