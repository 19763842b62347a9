// RUN: coop-opt %s | coop-opt | filecheck %s
// RUN: coop-opt %s --print-op-generic | coop-opt | filecheck %s

// CHECK: spirv.module Logical Vulkan requires ["Shader", "VulkanMemoryModel", "Float16", "Int16", "StorageBuffer16BitAccess", "CooperativeMatrixKHR", "CooperativeMatrixNV"] extensions ["SPV_KHR_cooperative_matrix", "SPV_NV_cooperative_matrix"] version "1.6" {
spirv.module Logical Vulkan requires ["Shader", "VulkanMemoryModel", "Float16", "Int16", "StorageBuffer16BitAccess", "CooperativeMatrixKHR", "CooperativeMatrixNV"] extensions ["SPV_KHR_cooperative_matrix", "SPV_NV_cooperative_matrix"] version "1.6" {
  // CHECK: spirv.GlobalVariable @buf bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f16, stride=2> [0]), Block>, StorageBuffer>
  spirv.GlobalVariable @buf bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f16, stride=2> [0]), Block>, StorageBuffer>
  // CHECK: spirv.GlobalVariable @wg built_in("WorkgroupId") : !spirv.ptr<vector<3xi32>, Input>
  spirv.GlobalVariable @wg built_in("WorkgroupId") : !spirv.ptr<vector<3xi32>, Input>
  // CHECK: spirv.GlobalVariable @arr : !spirv.ptr<!spirv.array<4 x f32>, Private>
  spirv.GlobalVariable @arr : !spirv.ptr<!spirv.array<4 x f32>, Private>
  // CHECK: spirv.EntryPoint "GLCompute" @main, @buf, @wg
  spirv.EntryPoint "GLCompute" @main, @buf, @wg
  // CHECK: spirv.ExecutionMode @main "LocalSize", 32, 1, 1
  spirv.ExecutionMode @main "LocalSize", 32, 1, 1
  // CHECK: %{{.*}} = spirv.Constant 0 : i32
  %c0 = spirv.Constant 0 : i32
  // CHECK: spirv.Constant 1.5 : f32
  %f = spirv.Constant 1.5 : f32
  // CHECK: spirv.Constant true : i1
  %t = spirv.Constant true : i1
  // CHECK: spirv.Constant 0.0 : !spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>
  %z = spirv.Constant 0.0 : !spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>
  // CHECK: spirv.func @main() {
  spirv.func @main() -> () {
    // CHECK: spirv.mlir.addressof @buf : !spirv.ptr
    %b = spirv.mlir.addressof @buf : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f16, stride=2> [0]), Block>, StorageBuffer>
    %c16 = spirv.Constant 16 : i32
    // CHECK: spirv.AccessChain %{{.*}}, %{{.*}}, %{{.*}} : (!spirv.ptr<{{.*}}>, i32, i32) -> !spirv.ptr<f16, StorageBuffer>
    %p = spirv.AccessChain %b, %c0, %c0 : (!spirv.ptr<!spirv.struct<(!spirv.rtarray<f16, stride=2> [0]), Block>, StorageBuffer>, i32, i32) -> !spirv.ptr<f16, StorageBuffer>
    // CHECK: spirv.Load %{{.*}} {memory_access = "Aligned(2)"} : (!spirv.ptr<f16, StorageBuffer>) -> f16
    %h = spirv.Load %p {memory_access = "Aligned(2)"} : (!spirv.ptr<f16, StorageBuffer>) -> f16
    // CHECK: spirv.Store %{{.*}}, %{{.*}} : !spirv.ptr<f16, StorageBuffer>, f16
    spirv.Store %p, %h : !spirv.ptr<f16, StorageBuffer>, f16
    // CHECK: spirv.KHR.CooperativeMatrixLoad %{{.*}}, %{{.*}}, %{{.*}} : (!spirv.ptr<f16, StorageBuffer>, i32, i32) -> !spirv.coopmatrix<16x16xf16, Subgroup, MatrixA>
    %a = spirv.KHR.CooperativeMatrixLoad %p, %c0, %c16 : (!spirv.ptr<f16, StorageBuffer>, i32, i32) -> !spirv.coopmatrix<16x16xf16, Subgroup, MatrixA>
    %bm = spirv.KHR.CooperativeMatrixLoad %p, %c0, %c16 {memory_operand = "Nontemporal"} : (!spirv.ptr<f16, StorageBuffer>, i32, i32) -> !spirv.coopmatrix<16x16xf16, Subgroup, MatrixB>
    // CHECK: spirv.KHR.CooperativeMatrixMulAdd
    %d = spirv.KHR.CooperativeMatrixMulAdd %a, %bm, %z : (!spirv.coopmatrix<16x16xf16, Subgroup, MatrixA>, !spirv.coopmatrix<16x16xf16, Subgroup, MatrixB>, !spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>) -> !spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>
    // CHECK: spirv.KHR.CooperativeMatrixStore
    spirv.KHR.CooperativeMatrixStore %p, %d, %c0, %c16 : !spirv.ptr<f16, StorageBuffer>, !spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>, i32, i32
    // CHECK: spirv.KHR.CooperativeMatrixLength {matrix_type = !spirv.coopmatrix<16x16xf16, Subgroup, MatrixA>} : i32
    %len = spirv.KHR.CooperativeMatrixLength {matrix_type = !spirv.coopmatrix<16x16xf16, Subgroup, MatrixA>} : i32
    // CHECK: spirv.NV.CooperativeMatrixLoad
    %na = spirv.NV.CooperativeMatrixLoad %p, %c16, %t : (!spirv.ptr<f16, StorageBuffer>, i32, i1) -> !spirv.NV.coopmatrix<16x16xf16, Subgroup>
    // CHECK: spirv.NV.CooperativeMatrixMulAdd
    %nd = spirv.NV.CooperativeMatrixMulAdd %na, %na, %na : (!spirv.NV.coopmatrix<16x16xf16, Subgroup>, !spirv.NV.coopmatrix<16x16xf16, Subgroup>, !spirv.NV.coopmatrix<16x16xf16, Subgroup>) -> !spirv.NV.coopmatrix<16x16xf16, Subgroup>
    // CHECK: spirv.NV.CooperativeMatrixStore
    spirv.NV.CooperativeMatrixStore %p, %nd, %c16, %t : !spirv.ptr<f16, StorageBuffer>, !spirv.NV.coopmatrix<16x16xf16, Subgroup>, i32, i1
    // CHECK: spirv.NV.CooperativeMatrixLength {matrix_type = !spirv.NV.coopmatrix<16x16xf16, Subgroup>} : i32
    %nlen = spirv.NV.CooperativeMatrixLength {matrix_type = !spirv.NV.coopmatrix<16x16xf16, Subgroup>} : i32
    // CHECK: spirv.IAdd %{{.*}}, %{{.*}} : (i32, i32) -> i32
    %s = spirv.IAdd %c0, %c16 : (i32, i32) -> i32
    %s1 = spirv.ISub %s, %c16 : (i32, i32) -> i32
    %s2 = spirv.IMul %s1, %c16 : (i32, i32) -> i32
    %s3 = spirv.SDiv %s2, %c16 : (i32, i32) -> i32
    %s4 = spirv.UDiv %s3, %c16 : (i32, i32) -> i32
    // CHECK: spirv.SNegate
    %s5 = spirv.SNegate %s4 : (i32) -> i32
    %g = spirv.FAdd %f, %f : (f32, f32) -> f32
    %g1 = spirv.FSub %g, %f : (f32, f32) -> f32
    %g2 = spirv.FMul %g1, %f : (f32, f32) -> f32
    %g3 = spirv.FDiv %g2, %f : (f32, f32) -> f32
    // CHECK: spirv.FNegate
    %g4 = spirv.FNegate %g3 : (f32) -> f32
    // CHECK: spirv.MatrixTimesScalar
    %h2 = spirv.Constant 2.0 : f16
    %m2 = spirv.MatrixTimesScalar %d, %h2 : (!spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>, f16) -> !spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>
    // CHECK: spirv.SLessThan %{{.*}}, %{{.*}} : (i32, i32) -> i1
    %lt = spirv.SLessThan %s5, %c16 : (i32, i32) -> i1
    %ult = spirv.ULessThan %s5, %c16 : (i32, i32) -> i1
    %eq = spirv.IEqual %s5, %c16 : (i32, i32) -> i1
    // CHECK: spirv.Select
    %sel = spirv.Select %lt, %s5, %c16 : (i1, i32, i32) -> i32
    // CHECK: spirv.ConvertFToU
    %cv = spirv.ConvertFToU %g4 : (f32) -> i32
    %cv1 = spirv.ConvertFToS %g4 : (f32) -> i32
    %cv2 = spirv.ConvertSToF %cv1 : (i32) -> f32
    %cv3 = spirv.ConvertUToF %cv : (i32) -> f32
    %cv4 = spirv.FConvert %cv3 : (f32) -> f16
    %cv5 = spirv.SConvert %cv1 : (i32) -> i16
    %cv6 = spirv.UConvert %cv : (i32) -> i16
    %cv7 = spirv.Bitcast %cv2 : (f32) -> i32
    // CHECK: spirv.CompositeConstruct
    %vec = spirv.CompositeConstruct %s, %s, %s : (i32, i32, i32) -> vector<3xi32>
    // CHECK: spirv.CompositeExtract %{{.*}} {indices = array<i32: 1>} : (vector<3xi32>) -> i32
    %x = spirv.CompositeExtract %vec {indices = array<i32: 1>} : (vector<3xi32>) -> i32
    %vec2 = spirv.CompositeInsert %x, %vec {indices = array<i32: 0>} : (i32, vector<3xi32>) -> vector<3xi32>
    // CHECK: spirv.Undef : f32
    %u = spirv.Undef : f32
    // CHECK: spirv.Branch ^{{.*}}(%{{.*}} : !spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>)
    spirv.Branch ^header(%z : !spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>)
  ^header(%acc : !spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>):
    // CHECK: spirv.LoopMerge ^{{.*}}, ^{{.*}} {loop_control = "None"}
    spirv.LoopMerge ^exit, ^cont {loop_control = "None"}
    // CHECK: spirv.BranchConditional %{{.*}}, ^{{.*}}, ^{{.*}}
    spirv.BranchConditional %lt, ^body, ^exit
  ^body:
    // CHECK: spirv.SelectionMerge ^{{.*}}
    spirv.SelectionMerge ^join
    spirv.BranchConditional %eq, ^then, ^join
  ^then:
    spirv.Branch ^join
  ^join:
    spirv.Branch ^cont
  ^cont:
    %acc2 = spirv.KHR.CooperativeMatrixMulAdd %a, %bm, %acc : (!spirv.coopmatrix<16x16xf16, Subgroup, MatrixA>, !spirv.coopmatrix<16x16xf16, Subgroup, MatrixB>, !spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>) -> !spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>
    spirv.Branch ^header(%acc2 : !spirv.coopmatrix<16x16xf16, Subgroup, MatrixAcc>)
  ^exit:
    // CHECK: spirv.Return
    spirv.Return
  }
  // CHECK: spirv.func @helper(%{{.*}}: i32) -> i32 {
  spirv.func @helper(%arg : i32) -> i32 {
    // CHECK: spirv.ReturnValue %{{.*}} : i32
    spirv.ReturnValue %arg : i32
  }
}
