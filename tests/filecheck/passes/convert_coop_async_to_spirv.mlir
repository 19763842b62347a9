// convert-coop-to-spirv on the staged form (passes/convert_coop_async_to_spirv.py): Workgroup
// arrays, 16-byte copies through a vector view of the source binding, padded rows, barriers.
// RUN: coop-opt %s -p convert-coop-to-spirv -t spirv -o %t.spv
// RUN: spirv-val --target-env vulkan1.3 %t.spv
// RUN: spirv-dis %t.spv | filecheck %s
// RUN: coop-opt %s -p 'convert-coop-to-spirv{workgroup_pad=0}' -t spirv -o %t0.spv
// RUN: spirv-val --target-env vulkan1.3 %t0.spv
// RUN: spirv-dis %t0.spv | filecheck %s --check-prefix=NOPAD

// @vec: a 32x32 f16 box per copy, 64 invocations: 128 16-byte pieces, 2 per invocation, no guard.
// Row pitch 32 (+8 padding) -> 2048 / 32 rows * 40 = 2560 halves = 320 vectors; unpadded 256.
// CHECK-DAG: OpEntryPoint GLCompute %vec "vec" {{.*}}%vec_wg0{{.*}}%vec_A_v16
// CHECK-DAG: OpDecorate %vec_A Binding 0
// CHECK-DAG: OpDecorate %vec_A_v16 Binding 0
// CHECK-DAG: OpDecorate %vec_A_v16 DescriptorSet 0
// CHECK-DAG: %vec_wg0 = OpVariable %_ptr_Workgroup__arr_v4uint_uint_320 Workgroup
// NOPAD-DAG: %vec_wg0 = OpVariable %_ptr_Workgroup__arr_v4uint_uint_256 Workgroup
// The barrier of async_wait_group: Workgroup scopes (2), AcquireRelease|WorkgroupMemory (8|256).
// CHECK-DAG: OpControlBarrier %uint_2 %uint_2 %uint_264
// CHECK-DAG: OpDecorate %{{.*}}LocalInvocationIndex BuiltIn LocalInvocationIndex
// The slot is read with the padded pitch in vectors: 40 / 8 = 5 (unpadded: 32 / 8 = 4).
// CHECK-DAG: OpCooperativeMatrixLoadKHR %{{.*}} %{{.*}} %uint_0 %uint_5
// NOPAD-DAG: OpCooperativeMatrixLoadKHR %{{.*}} %{{.*}} %uint_0 %uint_4
!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
func.func @vec(%A: memref<64x64xf16>, %O: memref<64x64xf16>)
    attributes {coop.workgroup_size = array<i32: 64, 1, 1>} {
  %w = coop.alloc_workgroup : memref<2048xf16, #coop.storage_class<Workgroup>>
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %wy = gpu.block_id y
  %off = arith.muli %wy, %c32 : index
  coop.async_copy %A[%off], %c64 -> %w[%c0], %c32, rows 32, cols 32
      : memref<64x64xf16> -> memref<2048xf16, #coop.storage_class<Workgroup>>
  coop.async_copy %A[%c32], %c64 -> %w[%c1024], %c32, rows 32, cols 32
      : memref<64x64xf16> -> memref<2048xf16, #coop.storage_class<Workgroup>>
  coop.async_commit_group
  coop.async_wait_group 0
  %m = coop.load %w[%c16], %c32, RowMajor : memref<2048xf16, #coop.storage_class<Workgroup>> -> !a
  coop.store %m, %O[%c0], %c64, RowMajor : !a, memref<64x64xf16>
  func.return
}

// @scalar: the source offset is not provably a multiple of 8 elements, so the buffer is an
// array of f16 (no vector view) and each invocation copies single elements: 24x8 = 192 elements
// over 128 invocations = 2 per invocation, the second guarded (piece < 192).
// CHECK-DAG: %scalar_wg0 = OpVariable %_ptr_Workgroup__arr_half_uint_{{[0-9]+}} Workgroup
// CHECK-NOT: %scalar_A_v16
// CHECK: %scalar = OpFunction
// CHECK: OpULessThan %bool %{{.*}} %uint_192
// CHECK-NEXT: OpSelectionMerge
// CHECK: OpFunctionEnd
!b = !coop.matrix<16x8xf16, Subgroup, MatrixB>
func.func @scalar(%A: memref<64x64xf16>, %O: memref<64x64xf16>)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %w = coop.alloc_workgroup : memref<192xf16, #coop.storage_class<Workgroup>>
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %wx = gpu.block_id x
  coop.async_copy %A[%wx], %c64 -> %w[%c0], %c8, rows 24, cols 8
      : memref<64x64xf16> -> memref<192xf16, #coop.storage_class<Workgroup>>
  coop.async_commit_group
  coop.async_wait_group 0
  %m = coop.load %w[%c0], %c8, RowMajor : memref<192xf16, #coop.storage_class<Workgroup>> -> !b
  coop.store %m, %O[%c0], %c64, RowMajor : !b, memref<64x64xf16>
  func.return
}
