// RUN: coop-opt %s --split-input-file --verify-diagnostics -p 'convert-coop-to-spirv{flavor=nv}' | filecheck %s --check-prefix=NV
// RUN: coop-opt %s --split-input-file --verify-diagnostics -p convert-coop-to-spirv | filecheck %s
// What the lowering of tensor addressing / coopmat2 refuses, one line each.

!L = !tensor_addr.layout<1, Undefined>
!m = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @decode(%p: memref<256xi32>, %i: i32, %b: i32, %c: i32) -> f32 {
  %r = arith.sitofp %i : i32 to f32
  func.return %r : f32
}
func.func @k(%T: memref<256xi32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %z = arith.constant 0.0 : f32
  %obj = coop.composite_construct %z : f32 -> !m
  %l = tensor_addr.create_layout : !L
  %x = coop.load_tensor %T, %obj, %l decode @decode : memref<256xi32>, !m, !L -> !m
  func.return
}
// NV: error: 'coop.load_tensor' op 'coop.load_tensor' lowers to SPV_NV_cooperative_matrix2, which extends OpTypeCooperativeMatrixKHR: use convert-coop-to-spirv{flavor=khr}
// CHECK: error: 'arith.sitofp' op uses the DecodeFunc's index parameter, which SPIR-V folds into the pointer parameter (Pointer + index elements): only `memref.load %m[%index + k]` is supported (k built without %index, through arith.index_cast / addi / subi)

// -----
!m = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @add(%x: f32, %y: f32) -> f32 {
  %r = arith.addf %x, %y : f32
  func.return %r : f32
}
func.func @k(%T: memref<256xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %z = arith.constant 0.0 : f32
  %obj = coop.composite_construct %z : f32 -> !m
  %r = coop.reduce Row %obj, @add : !m -> !m
  func.return
}
// NV: error: 'coop.reduce' op 'coop.reduce' lowers to SPV_NV_cooperative_matrix2, which extends OpTypeCooperativeMatrixKHR: use convert-coop-to-spirv{flavor=khr}
// CHECK-NOT: error

