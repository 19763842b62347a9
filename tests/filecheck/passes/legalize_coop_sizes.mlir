// RUN: coop-opt %s --split-input-file -p 'legalize-coop-sizes{target=h200-vulkan flexible=false}' | filecheck %s
// RUN: coop-opt %s --split-input-file -p 'legalize-coop-sizes{target=h200-vulkan}' | filecheck %s --check-prefix=FLEX
// Each rewrite of legalize-coop-sizes on the H200's tables (native f16·f16→f32: 16x16x16,
// 16x8x16, 16x8x8; the largest dividing shape wins).

// M split: RowMajor sub-loads at offset + (i*16)*stride, element-wise op and mul_add per tile.
func.func @split_m(%A: memref<1024xf16>, %B: memref<1024xf16>, %C: memref<1024xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %o = arith.constant 0 : index
  %s = arith.constant 40 : index
  %a = coop.load %A[%o], %s, RowMajor : memref<1024xf16> -> !coop.matrix<32x16xf16, Subgroup, MatrixA>
  %b = coop.load %B[%o], %s, ColumnMajor : memref<1024xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixB>
  %c = coop.load %C[%o], %s, RowMajor : memref<1024xf32> -> !coop.matrix<32x16xf32, Subgroup, MatrixAcc>
  %e = coop.fadd %c, %c : !coop.matrix<32x16xf32, Subgroup, MatrixAcc>
  %d = coop.mul_add %a, %b, %e : !coop.matrix<32x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<32x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<32x16xf32, Subgroup, MatrixAcc>
  coop.store %d, %C[%o], %s, RowMajor : !coop.matrix<32x16xf32, Subgroup, MatrixAcc>, memref<1024xf32>
  func.return
}
// CHECK-LABEL: func.func @split_m
// CHECK:      %[[A0:.*]] = coop.load %A[%o], %s, RowMajor : memref<1024xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
// CHECK-NEXT: %[[R16:.*]] = arith.constant 16 : index
// CHECK-NEXT: %[[T:.*]] = arith.muli %s, %[[R16]] : index
// CHECK-NEXT: %[[OFF:.*]] = arith.addi %o, %[[T]] : index
// CHECK-NEXT: %[[A1:.*]] = coop.load %A[%[[OFF]]], %s, RowMajor : memref<1024xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
// CHECK-NEXT: %b = coop.load %B[%o], %s, ColumnMajor : memref<1024xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixB>
// CHECK:      %[[C0:.*]] = coop.load %C[%o], %s, RowMajor {{.*}} -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
// CHECK:      %[[C1:.*]] = coop.load %C[{{.*}}], %s, RowMajor {{.*}} -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
// CHECK-NEXT: %[[E0:.*]] = coop.fadd %[[C0]], %[[C0]] : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
// CHECK-NEXT: %[[E1:.*]] = coop.fadd %[[C1]], %[[C1]] : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
// CHECK-NEXT: %[[D0:.*]] = coop.mul_add %[[A0]], %b, %[[E0]] : {{.*}} -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
// CHECK-NEXT: %[[D1:.*]] = coop.mul_add %[[A1]], %b, %[[E1]] : {{.*}} -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
// CHECK-NEXT: coop.store %[[D0]], %C[%o], %s, RowMajor
// CHECK:      coop.store %[[D1]], %C[{{.*}}], %s, RowMajor
// CHECK-NOT:  32x16
// FLEX-LABEL: func.func @split_m
// FLEX:       coop.mul_add {{.*}} -> !coop.matrix<32x16xf32, Subgroup, MatrixAcc>

// -----
// N split with a ColumnMajor B (tile (0, 1) at offset + (1*16)*stride) and K split into a
// chain of multiply-adds that keeps the signedness flags.
func.func @split_nk(%A: memref<4096xi8>, %B: memref<4096xi8>, %C: memref<4096xi32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %o = arith.constant 0 : index
  %s = arith.constant 64 : index
  %a = coop.load %A[%o], %s, RowMajor : memref<4096xi8> -> !coop.matrix<16x64xi8, Subgroup, MatrixA>
  %b = coop.load %B[%o], %s, ColumnMajor : memref<4096xi8> -> !coop.matrix<64x32xi8, Subgroup, MatrixB>
  %c = coop.load %C[%o], %s, RowMajor : memref<4096xi32> -> !coop.matrix<16x32xi32, Subgroup, MatrixAcc>
  %d = coop.mul_add %a, %b, %c <ASigned|BSigned|CSigned|ResultSigned> : !coop.matrix<16x64xi8, Subgroup, MatrixA>, !coop.matrix<64x32xi8, Subgroup, MatrixB>, !coop.matrix<16x32xi32, Subgroup, MatrixAcc> -> !coop.matrix<16x32xi32, Subgroup, MatrixAcc>
  coop.store %d, %C[%o], %s, RowMajor : !coop.matrix<16x32xi32, Subgroup, MatrixAcc>, memref<4096xi32>
  func.return
}
// CHECK-LABEL: func.func @split_nk
// CHECK:      %[[A0:.*]] = coop.load %A[%o], %s, RowMajor : memref<4096xi8> -> !coop.matrix<16x32xi8, Subgroup, MatrixA>
// CHECK:      %[[K32:.*]] = arith.constant 32 : index
// CHECK-NEXT: %[[AOFF:.*]] = arith.addi %o, %[[K32]] : index
// CHECK-NEXT: %[[A1:.*]] = coop.load %A[%[[AOFF]]], %s, RowMajor {{.*}} -> !coop.matrix<16x32xi8, Subgroup, MatrixA>
// CHECK:      %[[B00:.*]] = coop.load %B[%o], %s, ColumnMajor {{.*}} -> !coop.matrix<32x16xi8, Subgroup, MatrixB>
// CHECK-NEXT: %[[N16:.*]] = arith.constant 16 : index
// CHECK-NEXT: %[[T:.*]] = arith.muli %s, %[[N16]] : index
// CHECK-NEXT: %[[BOFF:.*]] = arith.addi %o, %[[T]] : index
// CHECK-NEXT: %[[B01:.*]] = coop.load %B[%[[BOFF]]], %s, ColumnMajor
// CHECK-NEXT: %[[R32:.*]] = arith.constant 32 : index
// CHECK-NEXT: %[[B10OFF:.*]] = arith.addi %o, %[[R32]] : index
// CHECK-NEXT: %[[B10:.*]] = coop.load %B[%[[B10OFF]]], %s, ColumnMajor
// CHECK:      %[[B11:.*]] = coop.load %B[{{.*}}], %s, ColumnMajor
// CHECK:      %[[C0:.*]] = coop.load %C[%o], %s, RowMajor {{.*}} -> !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
// CHECK:      %[[C1:.*]] = coop.load %C[{{.*}}], %s, RowMajor {{.*}} -> !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
// CHECK-NEXT: %[[P0:.*]] = coop.mul_add %[[A0]], %[[B00]], %[[C0]] <ASigned|BSigned|CSigned|ResultSigned>
// CHECK-NEXT: %[[Q0:.*]] = coop.mul_add %[[A1]], %[[B10]], %[[P0]] <ASigned|BSigned|CSigned|ResultSigned>
// CHECK-NEXT: %[[P1:.*]] = coop.mul_add %[[A0]], %[[B01]], %[[C1]] <ASigned|BSigned|CSigned|ResultSigned>
// CHECK-NEXT: %[[Q1:.*]] = coop.mul_add %[[A1]], %[[B11]], %[[P1]] <ASigned|BSigned|CSigned|ResultSigned>
// CHECK-NEXT: coop.store %[[Q0]], %C[%o], %s, RowMajor
// CHECK:      coop.store %[[Q1]], %C[{{.*}}], %s, RowMajor

// -----
// A loop-carried 32x32 accumulator becomes four 16x16 iter_args.
!a = !coop.matrix<32x16xf16, Subgroup, MatrixA>
!b = !coop.matrix<16x32xf16, Subgroup, MatrixB>
!c = !coop.matrix<32x32xf32, Subgroup, MatrixAcc>
func.func @loop(%A: memref<4096xf16>, %B: memref<4096xf16>, %C: memref<4096xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s = arith.constant 64 : index
  %a = coop.load %A[%c0], %s, RowMajor : memref<4096xf16> -> !a
  %b = coop.load %B[%c0], %s, RowMajor : memref<4096xf16> -> !b
  %c = coop.load %C[%c0], %s, RowMajor : memref<4096xf32> -> !c
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %c) -> (!c) {
    %d = coop.mul_add %a, %b, %acc : !a, !b, !c -> !c
    scf.yield %d : !c
  }
  coop.store %r, %C[%c0], %s, RowMajor : !c, memref<4096xf32>
  func.return
}
// CHECK-LABEL: func.func @loop
// CHECK:      %[[R0:[0-9a-z_]+]], %{{[0-9a-z_]+}}, %{{[0-9a-z_]+}}, %[[R3:[0-9a-z_]+]] = scf.for %i = %c0 to %c4 step %c1 iter_args(%[[X0:[0-9a-z_]+]] = %{{[0-9a-z_]+}}, %[[X1:[0-9a-z_]+]] = %{{[0-9a-z_]+}}, %[[X2:[0-9a-z_]+]] = %{{[0-9a-z_]+}}, %[[X3:[0-9a-z_]+]] = %{{[0-9a-z_]+}}) -> (!coop.matrix<16x16xf32, Subgroup, MatrixAcc>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc>)
// CHECK-NEXT:   %[[Y0:[0-9a-z_]+]] = coop.mul_add %{{[0-9a-z_]+}}, %{{[0-9a-z_]+}}, %[[X0]] :
// CHECK-NEXT:   %[[Y1:[0-9a-z_]+]] = coop.mul_add %{{[0-9a-z_]+}}, %{{[0-9a-z_]+}}, %[[X1]] :
// CHECK-NEXT:   %[[Y2:[0-9a-z_]+]] = coop.mul_add %{{[0-9a-z_]+}}, %{{[0-9a-z_]+}}, %[[X2]] :
// CHECK-NEXT:   %[[Y3:[0-9a-z_]+]] = coop.mul_add %{{[0-9a-z_]+}}, %{{[0-9a-z_]+}}, %[[X3]] :
// CHECK-NEXT:   scf.yield %[[Y0]], %[[Y1]], %[[Y2]], %[[Y3]] :
// CHECK-NEXT: }
// CHECK-NEXT: coop.store %[[R0]], %C[%c0], %s, RowMajor
// CHECK:      coop.store %[[R3]], %C[{{.*}}], %s, RowMajor
// FLEX-LABEL: func.func @loop
// FLEX:       scf.for {{.*}} -> (!coop.matrix<32x32xf32, Subgroup, MatrixAcc>)
