// A 64×64×64 GEMM written with one large cooperative-matrix op: C = A·B + C, f16 × f16 + f32 → f32,
// all row-major, one subgroup (32 invocations), grid (1, 1, 1).
//
// 64×64×64 is no native KHR shape of the H200 (its largest is 16×16×16 for f16): run
// `legalize-coop-sizes{target=h200-vulkan flexible=false}` to split it into 4×4 accumulators
// chained over 4 K tiles, or keep it whole with the default flexible=true, which relies on
// VK_NV_cooperative_matrix2 flexible dimensions (granularity 16×16×16 at subgroup scope).
!a = !coop.matrix<64x64xf16, Subgroup, MatrixA>
!b = !coop.matrix<64x64xf16, Subgroup, MatrixB>
!c = !coop.matrix<64x64xf32, Subgroup, MatrixAcc>
func.func @gemm_f16_64_large(%A: memref<64x64xf16>, %B: memref<64x64xf16>, %C: memref<64x64xf32>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %ld = arith.constant 64 : index
  %a = coop.load %A[%c0], %ld, RowMajor : memref<64x64xf16> -> !a
  %b = coop.load %B[%c0], %ld, RowMajor : memref<64x64xf16> -> !b
  %c = coop.load %C[%c0], %ld, RowMajor : memref<64x64xf32> -> !c
  %d = coop.mul_add %a, %b, %c : !a, !b, !c -> !c
  coop.store %d, %C[%c0], %ld, RowMajor : !c, memref<64x64xf32>
  func.return
}
