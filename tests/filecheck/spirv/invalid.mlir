// RUN: coop-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// RUN: not coop-opt %s 2>&1 | filecheck %s --check-prefix=ONELINE
// Rules of the spirv dialect's verifiers (coopdialect/dialects/spirv_rules.py), one per chunk; the
// binary reader refuses the same (tests/test_spirv_read.py, one negative binary per rule).
// ONELINE: invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error: {{.*}}
// ONELINE-NOT: Traceback

spirv.module Logical Vulkan requires ["Shader", "VulkanMemoryModel", "CooperativeMatrixKHR"] extensions ["SPV_KHR_cooperative_matrix"] {
  spirv.func @f(%a: !spirv.coopmatrix<16x16xf16, Subgroup, MatrixB>, %b: !spirv.coopmatrix<16x16xf16, Subgroup, MatrixA>, %c: !spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>) -> () {
    %r = spirv.KHR.CooperativeMatrixMulAdd %a, %b, %c : (!spirv.coopmatrix<16x16xf16, Subgroup, MatrixB>, !spirv.coopmatrix<16x16xf16, Subgroup, MatrixA>, !spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>) -> !spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>
    spirv.Return
  }
}
// CHECK: A must have Use MatrixAKHR, B MatrixBKHR, C and Result Type MatrixAccumulatorKHR
// -----
spirv.module Logical Vulkan requires ["Shader", "VulkanMemoryModel", "CooperativeMatrixKHR"] extensions ["SPV_KHR_cooperative_matrix"] {
  spirv.func @f(%a: !spirv.coopmatrix<16x8xf16, Subgroup, MatrixA>, %b: !spirv.coopmatrix<16x16xf16, Subgroup, MatrixB>, %c: !spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>) -> () {
    %r = spirv.KHR.CooperativeMatrixMulAdd %a, %b, %c : (!spirv.coopmatrix<16x8xf16, Subgroup, MatrixA>, !spirv.coopmatrix<16x16xf16, Subgroup, MatrixB>, !spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>) -> !spirv.coopmatrix<16x16xf32, Subgroup, MatrixAcc>
    spirv.Return
  }
}
// CHECK: A must be MxK, B KxN and C MxN, got 16x8, 16x16, 16x16
// -----
spirv.module Logical Vulkan requires ["Shader"] extensions [] {
  spirv.func @f(%m: !spirv.coopmatrix<16x16xf16, Workgroup, MatrixA>) -> () {
    %r = spirv.NV.CooperativeMatrixConvert %m : (!spirv.coopmatrix<16x16xf16, Workgroup, MatrixA>) -> !spirv.coopmatrix<16x16xf16, Workgroup, MatrixB>
    spirv.Return
  }
}
// CHECK: The Use of Matrix must be MatrixAccumulatorKHR, got MatrixAKHR (OpCooperativeMatrixConvertNV)
// -----
spirv.module Logical Vulkan requires ["Shader"] extensions [] {
  spirv.func @f(%m: !spirv.coopmatrix<16x16xf16, Workgroup, MatrixAcc>) -> () {
    %r = spirv.NV.CooperativeMatrixTranspose %m : (!spirv.coopmatrix<16x16xf16, Workgroup, MatrixAcc>) -> !spirv.coopmatrix<16x16xf16, Workgroup, MatrixA>
    spirv.Return
  }
}
// CHECK: The Use of Result Type must be MatrixBKHR, got MatrixAKHR (OpCooperativeMatrixTransposeNV)
// -----
spirv.module Logical Vulkan requires ["Shader"] extensions [] {
  spirv.func @combine(%x: f32, %y: f32) -> f32 {
    spirv.ReturnValue %x : f32
  }
  spirv.func @f(%m: !spirv.coopmatrix<16x16xf32, Workgroup, MatrixAcc>) -> () {
    %r = spirv.NV.CooperativeMatrixReduce %m {reduce = "2x2", combine_func = @combine} : (!spirv.coopmatrix<16x16xf32, Workgroup, MatrixAcc>) -> !spirv.coopmatrix<16x16xf32, Workgroup, MatrixAcc>
    spirv.Return
  }
}
// CHECK: If Reduce includes 2x2, the dimensions of Result Type must be half of the dimensions of Matrix, got 16x16 -> 16x16
// -----
spirv.module Logical Vulkan requires ["Shader"] extensions [] {
  spirv.func @combine(%x: f32) -> f32 {
    spirv.ReturnValue %x : f32
  }
  spirv.func @f(%m: !spirv.coopmatrix<16x16xf32, Workgroup, MatrixAcc>) -> () {
    %r = spirv.NV.CooperativeMatrixReduce %m {reduce = "Row", combine_func = @combine} : (!spirv.coopmatrix<16x16xf32, Workgroup, MatrixAcc>) -> !spirv.coopmatrix<16x16xf32, Workgroup, MatrixAcc>
    spirv.Return
  }
}
// CHECK: CombineFunc must be an OpFunction with two parameters
// -----
spirv.module Logical Vulkan requires ["Shader"] extensions [] {
  spirv.func @f(%l: !spirv.NV.tensor_layout<2, ClampToEdge>, %d: i32) -> () {
    %r = spirv.NV.TensorLayoutSetDimension %l, %d : (!spirv.NV.tensor_layout<2, ClampToEdge>, i32) -> !spirv.NV.tensor_layout<2, ClampToEdge>
    spirv.Return
  }
}
// CHECK: the number of Dim operands must be 2 (Dim 2), got 1 (OpTensorLayoutSetDimensionNV)
// -----
spirv.module Logical Vulkan requires ["Shader"] extensions [] {
  spirv.GlobalVariable @buf bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f16, stride=2> [0]), Block>, StorageBuffer>
  spirv.func @f() -> () {
    %b = spirv.mlir.addressof @buf : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f16, stride=2> [0]), Block>, StorageBuffer>
    %c0 = spirv.Constant 0 : i32
    %l = spirv.Constant 4202 : i32
    %s = spirv.Constant 3 : i32
    %p = spirv.AccessChain %b, %c0, %c0 : (!spirv.ptr<!spirv.struct<(!spirv.rtarray<f16, stride=2> [0]), Block>, StorageBuffer>, i32, i32) -> !spirv.ptr<f16, StorageBuffer>
    %m = spirv.KHR.CooperativeMatrixLoad %p, %l, %s : (!spirv.ptr<f16, StorageBuffer>, i32, i32) -> !spirv.coopmatrix<16x16xf16, Subgroup, MatrixA>
    spirv.Return
  }
}
// CHECK: Stride must be a constant 1, 2 or 4 when MemoryLayout is RowBlockedInterleavedARM
// -----
spirv.module Logical Vulkan requires ["Shader"] extensions [] {
  spirv.GlobalVariable @buf bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f16, stride=2> [0]), Block>, StorageBuffer>
  spirv.func @f() -> () {
    %b = spirv.mlir.addressof @buf : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f16, stride=2> [0]), Block>, StorageBuffer>
    %c0 = spirv.Constant 0 : i32
    %p = spirv.AccessChain %b, %c0, %c0 : (!spirv.ptr<!spirv.struct<(!spirv.rtarray<f16, stride=2> [0]), Block>, StorageBuffer>, i32, i32) -> !spirv.ptr<f32, StorageBuffer>
    spirv.Return
  }
}
// CHECK: Result Type must be a pointer to f16 in StorageBuffer
// -----
spirv.module Logical Vulkan requires ["Shader"] extensions [] {
  spirv.GlobalVariable @buf bind(0, 0) : !spirv.ptr<!spirv.struct<(f32 [0], f32 [2]), Block>, StorageBuffer>
}
// CHECK: member 1 at Offset 2 is not aligned to 4 bytes (Vulkan layout)
// -----
spirv.module Logical Vulkan requires ["Shader"] extensions [] {
  spirv.func @f(%a: f32, %b: f16) -> () {
    %r = spirv.FAdd %a, %b : (f32, f16) -> f32
    spirv.Return
  }
}
// CHECK: Result Type and the operands must be one floating-point type (OpFAdd)
// -----
spirv.module Logical Vulkan requires ["Shader"] extensions [] {
  spirv.func @f(%c: i1) -> () {
    spirv.BranchConditional %c, ^bb1, ^bb1
  ^bb1:
    spirv.Return
  }
}
// CHECK: a selection must be structured
