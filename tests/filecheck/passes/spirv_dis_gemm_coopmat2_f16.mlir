// The coopmat2 GEMM example (workgroup scope, tensor layouts, a transposing view) as Vulkan SPIR-V,
// folded and unfolded, checked on spirv-dis's own disassembly.
// RUN: coop-opt %examples/gemm_coopmat2_f16.mlir -p fold-tensor-views,convert-coop-to-spirv -t spirv -o %t.spv
// RUN: spirv-val --target-env vulkan1.3 %t.spv
// RUN: spirv-dis %t.spv | filecheck %s
// RUN: coop-opt %examples/gemm_coopmat2_f16.mlir -p convert-coop-to-spirv -t spirv -o %t2.spv
// RUN: spirv-val --target-env vulkan1.3 %t2.spv
// RUN: spirv-dis %t2.spv | filecheck %s

// CHECK-DAG:  OpCapability Float16
// CHECK-DAG:  OpCapability CooperativeMatrixTensorAddressingNV
// CHECK-DAG:  OpCapability TensorAddressingNV
// CHECK-DAG:  OpCapability CooperativeMatrixKHR
// CHECK-NOT:  OpCapability CooperativeMatrixBlockLoadsNV
// CHECK-DAG:  OpExtension "SPV_NV_cooperative_matrix2"
// CHECK-DAG:  OpExtension "SPV_NV_tensor_addressing"
// CHECK:      OpMemoryModel Logical Vulkan
// The workgroup size is declared (execution modes precede every type) before the Workgroup-scope types:
// CHECK:      OpExecutionMode %gemm_coopmat2 LocalSize 256 1 1
// ClampToEdge = 2; the view: Dim 2, HasDimensions false, permutation 1 0.
// CHECK:      %[[L:.*]] = OpTypeTensorLayoutNV %uint_2 %uint_2
// CHECK:      %[[V:.*]] = OpTypeTensorViewNV %uint_2 %false %uint_1 %uint_0
// Scope Workgroup = 2; Use A = 0, B = 1, Accumulator = 2.
// CHECK-DAG:  %[[ACC:.*]] = OpTypeCooperativeMatrixKHR %float %uint_2 %uint_128 %uint_128 %uint_2
// CHECK-DAG:  %[[A:.*]] = OpTypeCooperativeMatrixKHR %half %uint_2 %uint_128 %uint_32 %uint_0
// CHECK-DAG:  %[[B:.*]] = OpTypeCooperativeMatrixKHR %half %uint_2 %uint_32 %uint_128 %uint_1
// CHECK:      OpCreateTensorLayoutNV %[[L]]
// CHECK:      OpTensorLayoutSetDimensionNV %[[L]] %{{.*}} %uint_256 %uint_128
// CHECK:      OpCreateTensorViewNV %[[V]]
// CHECK:      OpLoopMerge
// CHECK:      %[[LA:.*]] = OpTensorLayoutSliceNV %[[L]] %{{.*}} %{{.*}} %uint_128 %{{.*}} %uint_32
// CHECK:      %[[LB:.*]] = OpTensorLayoutSliceNV %[[L]] %{{.*}} %{{.*}} %uint_128 %{{.*}} %uint_32
// CHECK:      OpCooperativeMatrixLoadTensorNV %[[A]] %{{.*}} %{{.*}} %[[LA]] None None
// CHECK:      OpCooperativeMatrixLoadTensorNV %[[B]] %{{.*}} %{{.*}} %[[LB]] None TensorView %{{.*}}
// CHECK:      OpCooperativeMatrixMulAddKHR %[[ACC]]
// CHECK:      OpCooperativeMatrixStoreTensorNV %{{.*}} %{{.*}} %{{.*}} None None
