// The reduction / per-element example as Vulkan SPIR-V: the func.funcs it references become SPIR-V
// functions with parameters; checked on spirv-dis's disassembly (folded and unfolded).
// RUN: coop-opt %examples/softmax_rows.mlir -p fold-tensor-views,convert-coop-to-spirv -t spirv -o %t.spv
// RUN: spirv-val --target-env vulkan1.3 %t.spv
// RUN: spirv-dis %t.spv | filecheck %s
// RUN: coop-opt %examples/softmax_rows.mlir -p convert-coop-to-spirv -t spirv -o %t2.spv
// RUN: spirv-val --target-env vulkan1.3 %t2.spv
// RUN: spirv-dis %t2.spv | filecheck %s

// CHECK-DAG:  OpCapability CooperativeMatrixReductions{{NV|EXT}}
// CHECK-DAG:  OpCapability CooperativeMatrixPerElementOperations{{NV|EXT}}
// CHECK-DAG:  OpCapability CooperativeMatrixTensorAddressingNV
// CHECK-NOT:  OpCapability CooperativeMatrixConversionsNV
// Only the kernel is an entry point; the helpers are plain functions.
// CHECK:      OpEntryPoint GLCompute %softmax_rows "softmax_rows"
// CHECK-NOT:  OpEntryPoint
// CHECK-DAG:  %[[M:.*]] = OpTypeCooperativeMatrixKHR %float %uint_3 %uint_16 %uint_16 %uint_2
// CHECK-DAG:  %[[Q:.*]] = OpTypeCooperativeMatrixKHR %float %uint_3 %uint_8 %uint_8 %uint_2
// CHECK-DAG:  %[[COMBINE:.*]] = OpTypeFunction %float %float %float
// CHECK-DAG:  %[[PER4:.*]] = OpTypeFunction %float %uint %uint %float %float
// CHECK:      %[[X:.*]] = OpCooperativeMatrixLoadTensorNV %[[M]]
// CHECK:      %[[MX:.*]] = OpCooperativeMatrixReduce{{NV|EXT}} %[[M]] %[[X]] Row %max
// CHECK:      %[[S:.*]] = OpCooperativeMatrixPerElementOp{{NV|EXT}} %[[M]] %[[X]] %sub %[[MX]]
// CHECK:      OpCooperativeMatrixPerElementOp{{NV|EXT}} %[[M]] %[[S]] %neg_abs
// CHECK:      OpCooperativeMatrixReduce{{NV|EXT}} %[[M]] %{{.*}} Row %add
// CHECK:      OpCooperativeMatrixPerElementOp{{NV|EXT}} %[[M]] %[[S]] %div %{{.*}}
// CHECK:      OpCooperativeMatrixStoreTensorNV
// CHECK:      OpCooperativeMatrixReduce{{NV|EXT}} %[[Q]] %[[X]] 2x2 %add
// CHECK:      OpCooperativeMatrixStoreTensorNV
// CHECK:      %max = OpFunction %float None %[[COMBINE]]
// CHECK-NEXT: OpFunctionParameter %float
// CHECK-NEXT: OpFunctionParameter %float
// CHECK:      OpFOrdGreaterThan
// CHECK:      OpSelect %float
// CHECK:      OpReturnValue
// CHECK:      %sub = OpFunction %float None %[[PER4]]
// CHECK-NEXT: OpFunctionParameter %uint
// CHECK-NEXT: OpFunctionParameter %uint
// CHECK-NEXT: OpFunctionParameter %float
// CHECK-NEXT: OpFunctionParameter %float
// CHECK:      OpFSub %float
// CHECK:      OpReturnValue
