// A Vulkan f16 GEMM in the coopmat2 workgroup form, as a user writes it: C = A·B, f16 × f16 → f32,
// all row-major, 8192³ (what torch.matmul computes in f32).
//
// One workgroup of 256 invocations owns a 128×256 tile of C as ONE Workgroup-scope accumulator;
// the K loop (step 64) loads a 128×64 slice of A and a 64×256 slice of B through tensor layouts
// (SPV_NV_cooperative_matrix2, Undefined clamp: every tile lies inside the matrices) and lets the
// driver stage them. This is the fastest f16→f32 structure measured through the H200's Vulkan
// driver (benchmarks/vk_gemm_sweep.py, docs/performance.md): 0.41-0.46 of cuBLAS, against 0.34-0.37
// for the KHR subgroup form of examples/gemm_f16_vk.mlir. Pipeline:
//
//   coop-opt examples/gemm_f16_coopmat2_vk.mlir -p fold-tensor-views,convert-coop-to-spirv -t spirv -o gemm.spv
//
// Dispatch: grid = (8192/256, 8192/128, 1) = (32, 64, 1).
!L = !tensor_addr.layout<2, Undefined>
!a = !coop.matrix<128x64xf16, Workgroup, MatrixA>
!b = !coop.matrix<64x256xf16, Workgroup, MatrixB>
!c = !coop.matrix<128x256xf32, Workgroup, MatrixAcc>
func.func @gemm_f16_coopmat2_vk(%A: memref<8192x8192xf16>, %B: memref<8192x8192xf16>, %C: memref<8192x8192xf32>)
    attributes {coop.workgroup_size = array<i32: 256, 1, 1>} {
  %S = arith.constant 8192 : i32
  %tm = arith.constant 128 : i32
  %tn = arith.constant 256 : i32
  %tk = arith.constant 64 : i32
  %c0 = arith.constant 0 : index
  %step = arith.constant 64 : index
  %ctm = arith.constant 128 : index
  %ctn = arith.constant 256 : index
  %kend = arith.constant 8192 : index
  %l0 = tensor_addr.create_layout : !L
  %la = tensor_addr.layout_set_dimension %l0, %S, %S : !L
  %lb = tensor_addr.layout_set_dimension %l0, %S, %S : !L
  %lc = tensor_addr.layout_set_dimension %l0, %S, %S : !L
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %r0 = arith.muli %wy, %ctm : index
  %n0 = arith.muli %wx, %ctn : index
  %row0 = arith.index_cast %r0 : index to i32
  %col0 = arith.index_cast %n0 : index to i32
  %zh = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %oa = coop.composite_construct %zh : f16 -> !a
  %ob = coop.composite_construct %zh : f16 -> !b
  %init = coop.composite_construct %zf : f32 -> !c
  %acc = scf.for %kk = %c0 to %kend step %step iter_args(%d = %init) -> (!c) {
    %k32_0 = arith.index_cast %kk : index to i32
    %las0 = tensor_addr.layout_slice %la, %row0, %tm, %k32_0, %tk : !L
    %lbs0 = tensor_addr.layout_slice %lb, %k32_0, %tk, %col0, %tn : !L
    %av0 = coop.load_tensor %A, %oa, %las0 : memref<8192x8192xf16>, !a, !L -> !a
    %bv0 = coop.load_tensor %B, %ob, %lbs0 : memref<8192x8192xf16>, !b, !L -> !b
    %e0 = coop.mul_add %av0, %bv0, %d : !a, !b, !c -> !c
    scf.yield %e0 : !c
  }
  %lcs = tensor_addr.layout_slice %lc, %row0, %tm, %col0, %tn : !L
  coop.store_tensor %acc, %C, %lcs : !c, memref<8192x8192xf32>, !L
  func.return
}
