// RUN: coop-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// Every SPV_ARM_cooperative_matrix_layouts verifier rule (rev 1 rules plus the Stride rule of the
// current registry text), one case per chunk.

// Rows a multiple of 4
func.func @f(%p: memref<4096xf16>, %o: index) {
  %s = arith.constant 1 : index
  %a = coop.load %p[%o], %s, RowBlockedInterleavedARM : memref<4096xf16> -> !coop.matrix<6x8xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: with MemoryLayout RowBlockedInterleavedARM Rows must be a multiple of 4 and Columns a multiple of 16 / sizeof(f16) = 8, got 6x8
// -----
// Columns a multiple of 16 / sizeof(Component Type)
func.func @f(%p: memref<4096xi8>, %o: index, %m: !coop.matrix<4x8xi8, Subgroup, MatrixA>) {
  %s = arith.constant 1 : index
  coop.store %m, %p[%o], %s, ColumnBlockedInterleavedARM : !coop.matrix<4x8xi8, Subgroup, MatrixA>, memref<4096xi8>
  func.return
}
// CHECK: Columns a multiple of 16 / sizeof(i8) = 16, got 4x8
// -----
// RowBlockedInterleavedARM: Columns a multiple of 16 / sizeof * Stride
func.func @f(%p: memref<4096xf32>, %o: index) {
  %s = arith.constant 4 : index
  %a = coop.load %p[%o], %s, RowBlockedInterleavedARM : memref<4096xf32> -> !coop.matrix<8x8xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: with MemoryLayout RowBlockedInterleavedARM Columns must be a multiple of 16 / sizeof(f32) * Stride = 16, got 8
// -----
// ColumnBlockedInterleavedARM: Rows a multiple of 4 * Stride
func.func @f(%p: memref<4096xf16>, %o: index, %m: !coop.matrix<4x16xf16, Subgroup, MatrixB>) {
  %s = arith.constant 2 : index
  coop.store %m, %p[%o], %s, ColumnBlockedInterleavedARM : !coop.matrix<4x16xf16, Subgroup, MatrixB>, memref<4096xf16>
  func.return
}
// CHECK: with MemoryLayout ColumnBlockedInterleavedARM Rows must be a multiple of 4 * Stride = 8, got 4
// -----
// Current registry text: Stride must be a constant instruction
func.func @f(%p: memref<4096xf16>, %o: index, %s: index) {
  %a = coop.load %p[%o], %s, RowBlockedInterleavedARM : memref<4096xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: Stride must be a constant instruction when MemoryLayout is RowBlockedInterleavedARM
// -----
// Current registry text: Stride must be 1, 2 or 4
func.func @f(%p: memref<4096xf16>, %o: index) {
  %s = arith.constant 3 : index
  %a = coop.load %p[%o], %s, ColumnBlockedInterleavedARM : memref<4096xf16> -> !coop.matrix<24x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: Stride must be 1, 2 or 4 when MemoryLayout is ColumnBlockedInterleavedARM, got 3
// -----
// The Arm layouts extend the KHR instructions only
func.func @f(%p: memref<4096xf16>, %o: index) {
  %s = arith.constant 1 : index
  %a = coop.load %p[%o], %s, RowBlockedInterleavedARM : memref<4096xf16> -> !coop.matrix<16x16xf16, Subgroup>
  func.return
}
// CHECK: MemoryLayout RowBlockedInterleavedARM needs a KHR matrix (with a Use)
