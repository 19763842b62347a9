// The DecodeFunc example (Q4_0 blocks decoded by @decode_q4_0) as Vulkan SPIR-V, folded and
// unfolded, on spirv-dis's disassembly. Expected forms from SPV_NV_cooperative_matrix2 (the decode
// function's first parameter is a PhysicalStorageBuffer pointer, then two arrays of Dim 32-bit
// integers) and SPV_KHR_physical_storage_buffer (such a parameter is decorated Aliased or Restrict;
// loads through it carry Aligned).
// RUN: coop-opt %examples/block_decode_load.mlir -p fold-tensor-views,convert-coop-to-spirv -t spirv -o %t.spv
// RUN: spirv-val --target-env vulkan1.3 %t.spv
// RUN: spirv-dis %t.spv | filecheck %s
// RUN: coop-opt %examples/block_decode_load.mlir -p convert-coop-to-spirv -t spirv -o %t2.spv
// RUN: spirv-val --target-env vulkan1.3 %t2.spv
// RUN: spirv-dis %t2.spv | filecheck %s

// CHECK-DAG:  OpCapability PhysicalStorageBufferAddresses
// CHECK-DAG:  OpCapability CooperativeMatrixBlockLoadsNV
// CHECK-DAG:  OpCapability StorageBuffer16BitAccess
// CHECK:      OpMemoryModel PhysicalStorageBuffer64 Vulkan
// CHECK-DAG:  OpDecorate %pointer Aliased
// CHECK-DAG:  %[[ARR:.*]] = OpTypeArray %uint %uint_2
// CHECK-DAG:  OpDecorate %_runtimearr_ushort ArrayStride 2
// CHECK-DAG:  %_runtimearr_ushort = OpTypeRuntimeArray %ushort
// CHECK-DAG:  %[[BLK:.*]] = OpTypeStruct %_runtimearr_ushort
// CHECK-DAG:  %[[PSB:.*]] = OpTypePointer PhysicalStorageBuffer %[[BLK]]
// CHECK-DAG:  %[[PSBE:.*]] = OpTypePointer PhysicalStorageBuffer %ushort
// CHECK-DAG:  %[[FT:.*]] = OpTypeFunction %half %[[PSB]] %[[ARR]] %[[ARR]]
// The loads keep their StorageBuffer Pointer and name the decode function:
// CHECK:      %dequant_q4 = OpFunction
// CHECK:      OpCooperativeMatrixLoadTensorNV %{{.*}} None DecodeFunc %decode_q4_0
// CHECK:      %gemm_q4 = OpFunction
// CHECK:      OpCooperativeMatrixLoadTensorNV %{{.*}} None DecodeFunc %decode_q4_0
// memref.load %q[%index] -> element 0 of the pointer; memref.load %q[%index + w] -> element w:
// CHECK:      %decode_q4_0 = OpFunction %half None %[[FT]]
// CHECK-NEXT: %pointer = OpFunctionParameter %[[PSB]]
// CHECK-NEXT: %blockCoord = OpFunctionParameter %[[ARR]]
// CHECK-NEXT: %coordInBlock = OpFunctionParameter %[[ARR]]
// CHECK:      %[[IK:.*]] = OpCompositeExtract %uint %coordInBlock 1
// CHECK:      %[[P0:.*]] = OpAccessChain %[[PSBE]] %pointer %uint_0 %uint_0
// CHECK-NEXT: %[[D:.*]] = OpLoad %ushort %[[P0]] Aligned 2
// CHECK-NEXT: OpBitcast %half %[[D]]
// CHECK:      %[[W:.*]] = OpIAdd %uint %{{.*}} %uint_1
// CHECK-NEXT: %[[P1:.*]] = OpAccessChain %[[PSBE]] %pointer %uint_0 %[[W]]
// CHECK-NEXT: OpLoad %ushort %[[P1]] Aligned 2
// CHECK:      OpReturnValue
