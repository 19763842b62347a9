// RUN: coop-opt %s | coop-opt | filecheck %s
// RUN: coop-opt %s --print-op-generic | coop-opt | filecheck %s
// RUN: coop-opt %s -t spirv -o %t.spv && spirv-val --target-env vulkan1.3 %t.spv
// RUN: coop-opt %t.spv | filecheck %s --check-prefix=READ
// The ops the SPIR-V reader added: an entry point named apart from its function, OpExecutionModeId,
// OpSpecConstantComposite and OpSpecConstantOp.

spirv.module Logical Vulkan requires ["Shader", "VulkanMemoryModel", "CooperativeMatrixNV"] extensions ["SPV_NV_cooperative_matrix"] version "1.6" {
  %x = spirv.SpecConstant {value = 32 : i32, spec_id = #builtin.int<0>} : i32
  %one = spirv.Constant 1 : i32
  // CHECK: spirv.SpecConstantComposite %{{.*}}, %{{.*}}, %{{.*}} : (i32, i32, i32) -> vector<3xi32>
  %wg = spirv.SpecConstantComposite %x, %one, %one : (i32, i32, i32) -> vector<3xi32>
  // CHECK: spirv.SpecConstantOperation "OpCooperativeMatrixLengthNV" () [!spirv.NV.coopmatrix<16x16xf32, Subgroup>] : () -> i32
  %len = spirv.SpecConstantOperation "OpCooperativeMatrixLengthNV" () [!spirv.NV.coopmatrix<16x16xf32, Subgroup>] : () -> i32
  // CHECK: spirv.SpecConstantOperation "OpIAdd" (%{{.*}}, %{{.*}}) [] : (i32, i32) -> i32
  %sum = spirv.SpecConstantOperation "OpIAdd" (%len, %one) [] : (i32, i32) -> i32
  // CHECK: spirv.EntryPoint "GLCompute" @entry as "main"
  spirv.EntryPoint "GLCompute" @entry as "main"
  // CHECK: spirv.ExecutionModeId @entry "LocalSizeId", %{{.*}}, %{{.*}}, %{{.*}} : i32, i32, i32
  spirv.ExecutionModeId @entry "LocalSizeId", %x, %one, %one : i32, i32, i32
  spirv.func @entry() -> () {
    spirv.Return
  }
}
// READ: spirv.SpecConstantOperation "OpCooperativeMatrixLengthNV"
// READ: spirv.EntryPoint "GLCompute" @entry as "main"
// READ: spirv.ExecutionModeId @entry "LocalSizeId"
