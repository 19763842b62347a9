// RUN: coop-opt %s --split-input-file --verify-diagnostics -p 'convert-coop-to-spirv{flavor=nv}' | filecheck %s
// What flavor=nv refuses: the KHR-only features of SPV_KHR_cooperative_matrix.

!i = !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
func.func @imul(%I: memref<256xi32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %m = coop.load %I[%c0], %c16, RowMajor : memref<256xi32> -> !i
  %n = coop.imul %m, %m : !i
  func.return
}
// CHECK: error: 'coop.imul' op OpIMul on cooperative matrices needs flavor=khr

// -----
!i = !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
func.func @bitcast(%I: memref<256xi32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %m = coop.load %I[%c0], %c16, RowMajor : memref<256xi32> -> !i
  %n = coop.bitcast %m : !i -> !coop.matrix<16x16xui32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: error: 'coop.bitcast' op OpBitcast on cooperative matrices needs flavor=khr

// -----
!a = !coop.matrix<16x32xi8, Subgroup, MatrixA>
!b = !coop.matrix<32x16xi8, Subgroup, MatrixB>
!c = !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
func.func @signless_signed(%a: !a, %b: !b, %c: !c) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %d = coop.mul_add %a, %b, %c <ASigned|BSigned> : !a, !b, !c -> !c
  func.return
}
// CHECK: error: 'func.func' op kernel argument 0 must be a memref

// -----
!a = !coop.matrix<16x32xi8, Subgroup, MatrixA>
!b = !coop.matrix<32x16xi8, Subgroup, MatrixB>
!c = !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
func.func @signless_signed(%A: memref<1024xi8>, %C: memref<256xi32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %a = coop.load %A[%c0], %c32, RowMajor : memref<1024xi8> -> !a
  %b = coop.load %A[%c0], %c16, RowMajor : memref<1024xi8> -> !b
  %c = coop.load %C[%c0], %c16, RowMajor : memref<256xi32> -> !c
  %d = coop.mul_add %a, %b, %c <ASigned|BSigned> : !a, !b, !c -> !c
  func.return
}
// CHECK: error: 'coop.mul_add' op flavor=nv takes signedness from the component type: matrix A is signed, so its type must be si8, not i8

// -----
!a = !coop.matrix<16x32xsi8, Subgroup, MatrixA>
!b = !coop.matrix<32x16xsi8, Subgroup, MatrixB>
!c = !coop.matrix<16x16xsi32, Subgroup, MatrixAcc>
func.func @saturating(%A: memref<1024xsi8>, %C: memref<256xsi32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %a = coop.load %A[%c0], %c32, RowMajor : memref<1024xsi8> -> !a
  %b = coop.load %A[%c0], %c16, RowMajor : memref<1024xsi8> -> !b
  %c = coop.load %C[%c0], %c16, RowMajor : memref<256xsi32> -> !c
  %d = coop.mul_add %a, %b, %c <SaturatingAccumulation> : !a, !b, !c -> !c
  func.return
}
// CHECK: error: 'coop.mul_add' op SaturatingAccumulation needs SPV_KHR_cooperative_matrix (flavor=khr)
