// A fast Vulkan integer GEMM as a user writes it: C = A·B, s8 × s8 → s32 (wrapping), all
// row-major, 8192³ (what torch._int_mm computes).
//
// One workgroup of 128 invocations owns a 128×128 tile of C as ONE Workgroup-scope accumulator;
// the K loop (step 64) multiplies a 128×64 slice of A by a 64×128 slice of B. The components are
// signless i8/i32 with the multiply-add's ASigned|BSigned|CSigned|ResultSigned operands (the
// KHR Cooperative Matrix Operands), so the accumulator can start from an arith constant 0.
// Pipeline (docs/vulkan.md, "Staged GEMMs"):
//
//   coop-opt examples/gemm_s8_vk.mlir -t spirv -o gemm.spv -p \
//     'pipeline-coop-loads{stages=2},distribute-coop-workgroup,legalize-coop-sizes{target=h200-vulkan flexible=false},convert-coop-to-spirv'
//
// Each of the 4 subgroups gets a 64×64 block of C, split into 16×16×32 KHR tiles.
// Dispatch: grid = (8192/128, 8192/128, 1) = (64, 64, 1).
!a = !coop.matrix<128x64xi8, Workgroup, MatrixA>
!b = !coop.matrix<64x128xi8, Workgroup, MatrixB>
!c = !coop.matrix<128x128xi32, Workgroup, MatrixAcc>
func.func @gemm_s8_vk(%A: memref<8192x8192xi8>, %B: memref<8192x8192xi8>, %C: memref<8192x8192xi32>)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %bk = arith.constant 64 : index
  %tile = arith.constant 128 : index
  %n = arith.constant 8192 : index
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %row = arith.muli %wy, %tile : index
  %col = arith.muli %wx, %tile : index
  %ra = arith.muli %row, %n : index
  %oc = arith.addi %ra, %col : index
  %zero = arith.constant 0 : i32
  %init = coop.composite_construct %zero : i32 -> !c
  %acc = scf.for %k = %c0 to %n step %bk iter_args(%d = %init) -> (!c) {
    %oa = arith.addi %ra, %k : index
    %kb = arith.muli %k, %n : index
    %ob = arith.addi %kb, %col : index
    %av = coop.load %A[%oa], %n, RowMajor : memref<8192x8192xi8> -> !a
    %bv = coop.load %B[%ob], %n, RowMajor : memref<8192x8192xi8> -> !b
    %e = coop.mul_add %av, %bv, %d <ASigned|BSigned|CSigned|ResultSigned> : !a, !b, !c -> !c
    scf.yield %e : !c
  }
  coop.store %acc, %C[%oc], %n, RowMajor : !c, memref<8192x8192xi32>
  func.return
}
