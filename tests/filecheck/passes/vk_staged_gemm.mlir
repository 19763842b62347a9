// The Vulkan GEMM examples through their pipeline (docs/vulkan.md, "Staged GEMMs"): spirv-val,
// and the loop has the sweep's fastest structure (regs1): barrier, the registers land, barrier,
// the next tile's 16-byte global loads into registers, then the 16 fragment loads + 32 MMAs.
// RUN: coop-opt %examples/gemm_f16_vk.mlir -p 'pipeline-coop-loads{stages=2},distribute-coop-workgroup,legalize-coop-sizes{target=h200-vulkan flexible=false},convert-coop-to-spirv' -t spirv -o %t.f16.spv
// RUN: spirv-val --target-env vulkan1.3 %t.f16.spv
// RUN: spirv-dis %t.f16.spv | filecheck %s
// RUN: coop-opt %examples/gemm_s8_vk.mlir -p 'pipeline-coop-loads{stages=2},distribute-coop-workgroup,legalize-coop-sizes{target=h200-vulkan flexible=false},convert-coop-to-spirv' -t spirv -o %t.s8.spv
// RUN: spirv-val --target-env vulkan1.3 %t.s8.spv
// RUN: spirv-dis %t.s8.spv | filecheck %s --check-prefix=S8

// One padded slot per operand: A 128x32 f16 -> 128 rows of 40 halves = 640 vectors.
// CHECK-DAG: %gemm_f16_vk_wg0 = OpVariable %_ptr_Workgroup__arr_v4uint_uint_640 Workgroup
// CHECK-DAG: %gemm_f16_vk_wg0_r3 = OpVariable %_ptr_Private_v4uint Private
// CHECK: OpLoopMerge
// CHECK-NEXT: OpBranchConditional
// CHECK: OpControlBarrier %uint_2 %uint_2 %uint_264
// CHECK: OpLoad %bool %gemm_f16_vk_wg0_issued
// CHECK: OpStore %{{[0-9]+}} %{{[0-9]+}}
// CHECK: OpControlBarrier %uint_2 %uint_2 %uint_264
// CHECK: OpLoad %v4uint
// CHECK: OpStore %gemm_f16_vk_wg0_r0
// CHECK: OpCooperativeMatrixLoadKHR
// CHECK-COUNT-32: OpCooperativeMatrixMulAddKHR
// CHECK-NOT: OpCooperativeMatrixMulAddKHR

// S8: OpCooperativeMatrixMulAddKHR {{.*}} MatrixASignedComponentsKHR|MatrixBSignedComponentsKHR|MatrixCSignedComponentsKHR|MatrixResultSignedComponentsKHR
