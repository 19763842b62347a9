// A Vulkan integer GEMM in the coopmat2 workgroup form, as a user writes it: C = A·B, s8 × s8 → s32
// (wrapping), all row-major, 8192³ (what torch._int_mm computes).
//
// One workgroup of 256 invocations owns a 256×128 tile of C as ONE Workgroup-scope accumulator;
// the K loop (step 64) loads a 256×64 slice of A and a 64×128 slice of B through tensor layouts
// (SPV_NV_cooperative_matrix2, Undefined clamp). Components are signless i8/i32 with the KHR
// signedness operands, so the accumulator starts from an arith zero. The fastest s8 structure
// measured through the H200's Vulkan driver (benchmarks/vk_gemm_sweep.py, docs/performance.md):
// 0.39-0.47 of torch._int_mm, against 0.32-0.36 for examples/gemm_s8_vk.mlir. Pipeline:
//
//   coop-opt examples/gemm_s8_coopmat2_vk.mlir -p fold-tensor-views,convert-coop-to-spirv -t spirv -o gemm.spv
//
// Dispatch: grid = (8192/128, 8192/256, 1) = (64, 32, 1).
!L = !tensor_addr.layout<2, Undefined>
!a = !coop.matrix<256x64xi8, Workgroup, MatrixA>
!b = !coop.matrix<64x128xi8, Workgroup, MatrixB>
!c = !coop.matrix<256x128xi32, Workgroup, MatrixAcc>
func.func @gemm_s8_coopmat2_vk(%A: memref<8192x8192xi8>, %B: memref<8192x8192xi8>, %C: memref<8192x8192xi32>)
    attributes {coop.workgroup_size = array<i32: 256, 1, 1>} {
  %S = arith.constant 8192 : i32
  %tm = arith.constant 256 : i32
  %tn = arith.constant 128 : i32
  %tk = arith.constant 64 : i32
  %c0 = arith.constant 0 : index
  %step = arith.constant 64 : index
  %ctm = arith.constant 256 : index
  %ctn = arith.constant 128 : index
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
  %zh = arith.constant 0 : i8
  %zf = arith.constant 0 : i32
  %oa = coop.composite_construct %zh : i8 -> !a
  %ob = coop.composite_construct %zh : i8 -> !b
  %init = coop.composite_construct %zf : i32 -> !c
  %acc = scf.for %kk = %c0 to %kend step %step iter_args(%d = %init) -> (!c) {
    %k32_0 = arith.index_cast %kk : index to i32
    %las0 = tensor_addr.layout_slice %la, %row0, %tm, %k32_0, %tk : !L
    %lbs0 = tensor_addr.layout_slice %lb, %k32_0, %tk, %col0, %tn : !L
    %av0 = coop.load_tensor %A, %oa, %las0 : memref<8192x8192xi8>, !a, !L -> !a
    %bv0 = coop.load_tensor %B, %ob, %lbs0 : memref<8192x8192xi8>, !b, !L -> !b
    %e0 = coop.mul_add %av0, %bv0, %d <ASigned|BSigned|CSigned|ResultSigned> : !a, !b, !c -> !c
    scf.yield %e0 : !c
  }
  %lcs = tensor_addr.layout_slice %lc, %row0, %tm, %col0, %tn : !L
  coop.store_tensor %acc, %C, %lcs : !c, memref<8192x8192xi32>, !L
  func.return
}
