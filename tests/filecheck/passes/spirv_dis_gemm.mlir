// The f16 GEMM example as Vulkan SPIR-V, checked on spirv-dis's own disassembly.
// RUN: coop-opt %examples/gemm_f16.mlir -p convert-coop-to-spirv -t spirv -o %t.spv
// RUN: spirv-val --target-env vulkan1.3 %t.spv
// RUN: spirv-dis %t.spv | filecheck %s

// CHECK-DAG:  OpCapability Shader
// CHECK-DAG:  OpCapability Float16
// CHECK-DAG:  OpCapability StorageBuffer16BitAccess
// CHECK-DAG:  OpCapability GroupNonUniform
// CHECK-DAG:  OpCapability VulkanMemoryModel
// CHECK-DAG:  OpCapability CooperativeMatrixKHR
// CHECK:      OpExtension "SPV_KHR_cooperative_matrix"
// CHECK:      OpMemoryModel Logical Vulkan
// CHECK:      OpEntryPoint GLCompute %gemm_f16 "gemm_f16" %gemm_f16_A %gemm_f16_B %gemm_f16_C %gemm_f16_WorkgroupId %gemm_f16_SubgroupId
// CHECK:      OpExecutionMode %gemm_f16 LocalSize 128 1 1
// CHECK-DAG:  OpDecorate %{{.*}} ArrayStride 2
// CHECK-DAG:  OpDecorate %{{.*}} ArrayStride 4
// CHECK-DAG:  OpDecorate %{{.*}} Block
// CHECK-DAG:  OpMemberDecorate %{{.*}} 0 Offset 0
// CHECK-DAG:  OpDecorate %gemm_f16_A DescriptorSet 0
// CHECK-DAG:  OpDecorate %gemm_f16_A Binding 0
// CHECK-DAG:  OpDecorate %gemm_f16_B Binding 1
// CHECK-DAG:  OpDecorate %gemm_f16_C Binding 2
// CHECK-DAG:  OpDecorate %gemm_f16_WorkgroupId BuiltIn WorkgroupId
// CHECK-DAG:  OpDecorate %gemm_f16_SubgroupId BuiltIn SubgroupId
// CHECK-DAG:  %[[HALF:.*]] = OpTypeFloat 16
// CHECK-DAG:  %[[FLOAT:.*]] = OpTypeFloat 32
// CHECK-DAG:  %[[MATA:.*]] = OpTypeCooperativeMatrixKHR %[[HALF]] %uint_3 %uint_16 %uint_16 %uint_0
// CHECK-DAG:  %[[MATB:.*]] = OpTypeCooperativeMatrixKHR %[[HALF]] %uint_3 %uint_16 %uint_16 %uint_1
// CHECK-DAG:  %[[ACC:.*]] = OpTypeCooperativeMatrixKHR %[[FLOAT]] %uint_3 %uint_16 %uint_16 %uint_2
// CHECK:      %gemm_f16 = OpFunction %void None
// Four accumulators loaded from C with stride 128 (RowMajorKHR = 0):
// CHECK-COUNT-4: OpCooperativeMatrixLoadKHR %[[ACC]] %{{.*}} %uint_0 %uint_128
// The K loop: a header with one OpPhi per carried value (k and the four accumulators).
// CHECK:      %[[HEADER:.*]] = OpLabel
// CHECK-COUNT-5: OpPhi
// CHECK:      OpSLessThan %bool %{{.*}} %uint_256
// CHECK:      OpLoopMerge %[[MERGE:.*]] %[[CONT:.*]] None
// CHECK:      OpBranchConditional %{{.*}} %{{.*}} %[[MERGE]]
// CHECK-COUNT-2: OpCooperativeMatrixLoadKHR %[[MATA]] %{{.*}} %uint_0 %uint_256
// CHECK-COUNT-2: OpCooperativeMatrixLoadKHR %[[MATB]] %{{.*}} %uint_0 %uint_128
// CHECK-COUNT-4: OpCooperativeMatrixMulAddKHR %[[ACC]]
// CHECK:      OpBranch %[[CONT]]
// CHECK:      %[[CONT]] = OpLabel
// CHECK:      OpIAdd %uint %{{.*}} %uint_16
// CHECK:      OpBranch %[[HEADER]]
// CHECK:      %[[MERGE]] = OpLabel
// CHECK-COUNT-4: OpCooperativeMatrixStoreKHR %{{.*}} %{{.*}} %uint_0 %uint_128
// CHECK:      OpReturn
// CHECK:      OpFunctionEnd
