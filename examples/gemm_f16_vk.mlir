// A fast Vulkan GEMM as a user writes it: C = A·B, f16 × f16 → f32, all row-major, 8192³.
//
// One workgroup of 128 invocations owns a 128×128 tile of C as ONE Workgroup-scope accumulator;
// the K loop (step 32) multiplies a 128×32 slice of A by a 32×128 slice of B. Nothing here says
// how the tiles reach the tensor cores: the pipeline does (docs/vulkan.md, "Staged GEMMs"):
//
//   coop-opt examples/gemm_f16_vk.mlir -t spirv -o gemm.spv -p \
//     'pipeline-coop-loads{stages=2},distribute-coop-workgroup,legalize-coop-sizes{target=h200-vulkan flexible=false},convert-coop-to-spirv'
//
// stages both slices through two Workgroup-memory slots (16-byte copies by all invocations, one
// barrier per K step), gives each of the 4 subgroups a 64×64 block of C (2×2 grid) and splits
// the blocks into 16×16×16 KHR tiles (16 accumulators per subgroup).
// Dispatch: grid = (8192/128, 8192/128, 1) = (64, 64, 1).
!a = !coop.matrix<128x32xf16, Workgroup, MatrixA>
!b = !coop.matrix<32x128xf16, Workgroup, MatrixB>
!c = !coop.matrix<128x128xf32, Workgroup, MatrixAcc>
func.func @gemm_f16_vk(%A: memref<8192x8192xf16>, %B: memref<8192x8192xf16>, %C: memref<8192x8192xf32>)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %bk = arith.constant 32 : index
  %tile = arith.constant 128 : index
  %n = arith.constant 8192 : index
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %row = arith.muli %wy, %tile : index
  %col = arith.muli %wx, %tile : index
  %ra = arith.muli %row, %n : index
  %oc = arith.addi %ra, %col : index
  %zero = arith.constant 0.0 : f32
  %init = coop.composite_construct %zero : f32 -> !c
  %acc = scf.for %k = %c0 to %n step %bk iter_args(%d = %init) -> (!c) {
    %oa = arith.addi %ra, %k : index
    %kb = arith.muli %k, %n : index
    %ob = arith.addi %kb, %col : index
    %av = coop.load %A[%oa], %n, RowMajor : memref<8192x8192xf16> -> !a
    %bv = coop.load %B[%ob], %n, RowMajor : memref<8192x8192xf16> -> !b
    %e = coop.mul_add %av, %bv, %d : !a, !b, !c -> !c
    scf.yield %e : !c
  }
  coop.store %acc, %C[%oc], %n, RowMajor : !c, memref<8192x8192xf32>
  func.return
}
