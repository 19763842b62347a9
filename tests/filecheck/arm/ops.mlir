// RUN: coop-opt %s | coop-opt | filecheck %s
// RUN: coop-opt %s --print-op-generic | coop-opt | filecheck %s
func.func @k(%p: memref<4096xf16>, %q: memref<4096xi8>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %o = arith.constant 0 : index
  %s1 = arith.constant 1 : index
  %s2 = arith.constant 2 : index
  %s4 = arith.constant 4 : index
  %a = coop.load %p[%o], %s2, RowBlockedInterleavedARM : memref<4096xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  %b = coop.load %q[%o], %s4, ColumnBlockedInterleavedARM : memref<4096xi8> -> !coop.matrix<16x16xi8, Subgroup, MatrixB>
  coop.store %a, %p[%o], %s1, ColumnBlockedInterleavedARM : !coop.matrix<16x16xf16, Subgroup, MatrixA>, memref<4096xf16>
  func.return
}
// CHECK: coop.load %p[%o], %s2, RowBlockedInterleavedARM : memref<4096xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
// CHECK: coop.load %q[%o], %s4, ColumnBlockedInterleavedARM : memref<4096xi8> -> !coop.matrix<16x16xi8, Subgroup, MatrixB>
// CHECK: coop.store %a, %p[%o], %s1, ColumnBlockedInterleavedARM
