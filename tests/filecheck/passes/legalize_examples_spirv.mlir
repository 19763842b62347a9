// Every non-sparse example through legalize-coop-sizes and convert-coop-to-spirv, and spirv-val.
// RUN: coop-opt %examples/gemm_f16.mlir -p 'legalize-coop-sizes{target=h200-vulkan},convert-coop-to-spirv' -t spirv -o %t.1.spv && spirv-val --target-env vulkan1.3 %t.1.spv
// RUN: coop-opt %examples/gemm_s8.mlir -p 'legalize-coop-sizes{target=h200-vulkan},convert-coop-to-spirv' -t spirv -o %t.2.spv && spirv-val --target-env vulkan1.3 %t.2.spv
// RUN: coop-opt %examples/gemm_f16_64_large.mlir -p 'legalize-coop-sizes{target=h200-vulkan},convert-coop-to-spirv' -t spirv -o %t.3.spv && spirv-val --target-env vulkan1.3 %t.3.spv
// RUN: coop-opt %examples/gemm_f16_64_large.mlir -p 'legalize-coop-sizes{target=h200-vulkan flexible=false},convert-coop-to-spirv' -t spirv -o %t.4.spv && spirv-val --target-env vulkan1.3 %t.4.spv
// RUN: coop-opt %examples/gemm_f16_64_large.mlir -p 'legalize-coop-sizes{target=h200-vulkan flexible=false},convert-coop-to-spirv' -t spirv-asm | filecheck %s
// bf16 (SPV_KHR_bfloat16: h200-vulkan says "bfloat16": true), any shape through clamped layouts:
// RUN: coop-opt %examples/gemm_any_bf16.mlir -p 'fold-tensor-views,legalize-coop-sizes{target=h200-vulkan},convert-coop-to-spirv' -t spirv -o %t.5.spv && spirv-val --target-env vulkan1.3 %t.5.spv
// RUN: coop-opt %examples/gemm_any.mlir -p 'fold-tensor-views,legalize-coop-sizes{target=h200-vulkan},convert-coop-to-spirv' -t spirv -o %t.6.spv && spirv-val --target-env vulkan1.3 %t.6.spv
// RUN: coop-opt %examples/gemm_bf16_wg.mlir -p 'legalize-coop-sizes{target=h200-vulkan},convert-coop-to-spirv' -t spirv -o %t.7.spv && spirv-val --target-env vulkan1.3 %t.7.spv
// RUN: coop-opt %examples/gemm_bf16_wg.mlir -p 'convert-coop-to-spirv' -t spirv-asm | filecheck %s --check-prefix=BF16
// BF16-DAG: OpCapability BFloat16CooperativeMatrixKHR
// BF16-DAG: OpExtension "SPV_KHR_bfloat16"
// BF16: [[BF:%[0-9]+]] = OpTypeFloat 16 BFloat16KHR
// BF16: OpTypeCooperativeMatrixKHR [[BF]] {{%[0-9]+ %[0-9]+ %[0-9]+ %[0-9]+}}
// The split 64x64x64 GEMM: only 16x16 matrix types, 4x4 tiles x 4 K steps = 64 multiply-adds.
// CHECK-NOT: %uint_64 %uint_64
// CHECK-COUNT-64: OpCooperativeMatrixMulAddKHR
// CHECK-NOT: OpCooperativeMatrixMulAddKHR
