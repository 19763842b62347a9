// Every non-sparse example through legalize-coop-sizes and convert-coop-to-spirv, and spirv-val.
// RUN: coop-opt %examples/gemm_f16.mlir -p 'legalize-coop-sizes{target=h200-vulkan},convert-coop-to-spirv' -t spirv -o %t.1.spv && spirv-val --target-env vulkan1.3 %t.1.spv
// RUN: coop-opt %examples/gemm_s8.mlir -p 'legalize-coop-sizes{target=h200-vulkan},convert-coop-to-spirv' -t spirv -o %t.2.spv && spirv-val --target-env vulkan1.3 %t.2.spv
// RUN: coop-opt %examples/gemm_f16_64_large.mlir -p 'legalize-coop-sizes{target=h200-vulkan},convert-coop-to-spirv' -t spirv -o %t.3.spv && spirv-val --target-env vulkan1.3 %t.3.spv
// RUN: coop-opt %examples/gemm_f16_64_large.mlir -p 'legalize-coop-sizes{target=h200-vulkan flexible=false},convert-coop-to-spirv' -t spirv -o %t.4.spv && spirv-val --target-env vulkan1.3 %t.4.spv
// RUN: coop-opt %examples/gemm_f16_64_large.mlir -p 'legalize-coop-sizes{target=h200-vulkan flexible=false},convert-coop-to-spirv' -t spirv-asm | filecheck %s
// The split 64x64x64 GEMM: only 16x16 matrix types, 4x4 tiles x 4 K steps = 64 multiply-adds.
// CHECK-NOT: %uint_64 %uint_64
// CHECK-COUNT-64: OpCooperativeMatrixMulAddKHR
// CHECK-NOT: OpCooperativeMatrixMulAddKHR
