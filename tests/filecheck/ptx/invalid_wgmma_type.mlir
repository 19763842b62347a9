// RUN: not coop-opt %s -p convert-coop-to-ptx -t ptx 2>&1 | filecheck %s
// wgmma multiplies f16, bf16 and 8-bit integers (tf32 and fp8 are not lowered here): a 16-bit
// integer operand is refused at its load.
!a = !coop.matrix<64x16xi16, Workgroup, MatrixA>
func.func @i16(%A: memref<1024xi16>) attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = coop.load %A[%c0], %c16, RowMajor : memref<1024xi16> -> !a
  func.return
}
// CHECK: invalid_wgmma_type.mlir:8:{{[0-9]+}}: error: 'coop.load' op workgroup-scope MatrixA of i16: wgmma operands of f16, bf16 and 8-bit integers are lowered
// CHECK-NOT: Traceback
