// RUN: coop-opt %s -p convert-coop-to-spirv -t spirv -o %t.spv && spirv-val --target-env vulkan1.3 %t.spv
// RUN: coop-opt %s -p convert-coop-to-spirv -t spirv-asm | filecheck %s
// RUN: not coop-opt %s -p 'convert-coop-to-spirv{flavor=nv}' 2>&1 | filecheck %s --check-prefix=NV
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
// CHECK-DAG: OpCapability CooperativeMatrixLayoutsARM
// CHECK-DAG: OpExtension "SPV_ARM_cooperative_matrix_layouts"
// CHECK-DAG: %[[ROW:[0-9a-z_]+]] = OpConstant %{{[0-9a-z_]+}} 4202
// CHECK-DAG: %[[COL:[0-9a-z_]+]] = OpConstant %{{[0-9a-z_]+}} 4203
// CHECK: OpCooperativeMatrixLoadKHR %{{[0-9a-z_]+}} %{{[0-9a-z_]+}} %[[ROW]]
// CHECK: OpCooperativeMatrixLoadKHR %{{[0-9a-z_]+}} %{{[0-9a-z_]+}} %[[COL]]
// CHECK: OpCooperativeMatrixStoreKHR %{{[0-9a-z_]+}} %{{[0-9a-z_]+}} %[[COL]]
// NV: error: 'coop.load' op MemoryLayout RowBlockedInterleavedARM needs flavor=khr
