// The clamped patch-load example as Vulkan SPIR-V (folded and unfolded), on spirv-dis's disassembly.
// RUN: coop-opt %examples/conv_patch_clamped.mlir -p fold-tensor-views,convert-coop-to-spirv -t spirv -o %t.spv
// RUN: spirv-val --target-env vulkan1.3 %t.spv
// RUN: spirv-dis %t.spv | filecheck %s
// RUN: coop-opt %examples/conv_patch_clamped.mlir -p convert-coop-to-spirv -t spirv -o %t2.spv
// RUN: spirv-val --target-env vulkan1.3 %t2.spv
// RUN: spirv-dis %t2.spv | filecheck %s

// CHECK-DAG:  OpCapability CooperativeMatrixTensorAddressingNV
// CHECK-DAG:  OpCapability TensorAddressingNV
// CHECK:      OpExecutionMode %conv_patch LocalSize 32 1 1
// TensorClampMode: Constant = 1, ClampToEdge = 2.
// CHECK-DAG:  %[[LE:.*]] = OpTypeTensorLayoutNV %uint_2 %uint_2
// CHECK-DAG:  %[[LC:.*]] = OpTypeTensorLayoutNV %uint_2 %uint_1
// The slice offsets are y0 - 1 and x0 - 1 (the -1 tap), computed at run time:
// CHECK-DAG:  %[[M1:.*]] = OpConstant %uint 4294967295
// CHECK-DAG:  OpCreateTensorLayoutNV %[[LE]]
// CHECK-DAG:  OpCreateTensorLayoutNV %[[LC]]
// The clamp value is the bit pattern of 1.0 in f16 (0x3C00 = 15360):
// CHECK-DAG:  OpTensorLayoutSetClampValueNV %[[LC]] %{{.*}} %uint_15360
// CHECK-DAG:  OpIAdd %uint %{{.*}} %[[M1]]
// CHECK:      OpCooperativeMatrixLoadTensorNV %{{.*}} None None
// CHECK:      OpCooperativeMatrixLoadTensorNV %{{.*}} None None
// CHECK-COUNT-2: OpCooperativeMatrixStoreTensorNV %{{.*}} None None
