// RUN: coop-opt %s -p 'convert-coop-to-spirv{flavor=nv}' | filecheck %s
// RUN: coop-opt %s -p 'convert-coop-to-spirv{flavor=nv}' -t spirv -o %t.spv && spirv-val --target-env vulkan1.3 %t.spv
// flavor=nv: SPV_NV_cooperative_matrix instructions, matrices without a Use (written with or
// without one), ColumnMajor as a boolean constant, signedness from the si8/si32 component types.

!a = !coop.matrix<16x32xsi8, Subgroup>
!b = !coop.matrix<32x16xsi8, Subgroup>
!c = !coop.matrix<16x16xsi32, Subgroup>
!f = !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
func.func @nv(%A: memref<1024xsi8>, %C: memref<256xsi32>, %F: memref<256xf16>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %a = coop.load %A[%c0], %c32, RowMajor : memref<1024xsi8> -> !a
  %b = coop.load %A[%c0], %c32, ColumnMajor, <Volatile> : memref<1024xsi8> -> !b
  %c = coop.load %C[%c0], %c16, RowMajor : memref<256xsi32> -> !c
  %d = coop.mul_add %a, %b, %c : !a, !b, !c -> !c
  %n = coop.length : !c
  coop.store %d, %C[%c0], %c16, RowMajor : !c, memref<256xsi32>
  %f = coop.load %F[%c0], %c16, RowMajor : memref<256xf16> -> !f
  %g = coop.fadd %f, %f : !f
  coop.store %g, %F[%c0], %c16, ColumnMajor : !f, memref<256xf16>
  func.return
}

// CHECK:      spirv.module Logical Vulkan requires [{{.*}}"CooperativeMatrixNV"{{.*}}] extensions [{{.*}}"SPV_NV_cooperative_matrix"{{.*}}]
// CHECK-DAG:  %[[TRUE:.*]] = spirv.Constant true : i1
// CHECK-DAG:  %[[FALSE:.*]] = spirv.Constant false : i1
// CHECK:      spirv.NV.CooperativeMatrixLoad {{.*}}, %[[FALSE]] : {{.*}} -> !spirv.NV.coopmatrix<16x32xsi8, Subgroup>
// CHECK:      spirv.NV.CooperativeMatrixLoad {{.*}}, %[[TRUE]] {memory_access = "Volatile"} : {{.*}} -> !spirv.NV.coopmatrix<32x16xsi8, Subgroup>
// CHECK:      spirv.NV.CooperativeMatrixMulAdd {{.*}} -> !spirv.NV.coopmatrix<16x16xsi32, Subgroup>
// CHECK:      spirv.NV.CooperativeMatrixLength
// CHECK:      spirv.NV.CooperativeMatrixStore
// CHECK:      spirv.FAdd {{.*}} : (!spirv.NV.coopmatrix<16x16xf16, Subgroup>, !spirv.NV.coopmatrix<16x16xf16, Subgroup>)
// CHECK:      spirv.NV.CooperativeMatrixStore {{.*}}, %[[TRUE]]
