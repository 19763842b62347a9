// Workgroup-scope GEMM with tensor layouts (SPV_NV_cooperative_matrix2): C = A·B, f16 × f16 → f32.
//
//   A: M×K f16 row-major; B is given column-major, i.e. as Bt = Bᵀ (N×K, row-major); C: M×N f32.
//   M = N = 256, K = 128 here (the shapes are in the layouts; change the constants and memrefs).
//
// The shape NVIDIA's coopmat2 GEMMs use: one workgroup of 256 invocations owns a 128×128 tile of
// C as ONE workgroup-scope accumulator; the K loop (step 32) loads a 128×32 slice of A and, through
// the transposing view tensorView<2, false, 1, 0>, a 32×128 slice of B from the column-major Bt.
// Tile sizes fit the H200's workgroup granularity for 256 invocations (32×32×16).
//
// Dispatch: grid = (N/128, M/128, 1) = (2, 2, 1).
!L = !tensor_addr.layout<2, ClampToEdge>
!Vt = !tensor_addr.view<2, false, 1, 0>
!a = !coop.matrix<128x32xf16, Workgroup, MatrixA>
!b = !coop.matrix<32x128xf16, Workgroup, MatrixB>
!c = !coop.matrix<128x128xf32, Workgroup, MatrixAcc>
func.func @gemm_coopmat2(%A: memref<256x128xf16>, %Bt: memref<256x128xf16>, %C: memref<256x256xf32>)
    attributes {coop.workgroup_size = array<i32: 256, 1, 1>} {
  %M = arith.constant 256 : i32
  %N = arith.constant 256 : i32
  %K = arith.constant 128 : i32
  %t128 = arith.constant 128 : i32
  %t32 = arith.constant 32 : i32
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %kend = arith.constant 128 : index
  %l0 = tensor_addr.create_layout : !L
  %la = tensor_addr.layout_set_dimension %l0, %M, %K : !L
  %lb = tensor_addr.layout_set_dimension %l0, %N, %K : !L
  %lc = tensor_addr.layout_set_dimension %l0, %M, %N : !L
  %vt = tensor_addr.create_view : !Vt
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %r0 = arith.muli %wy, %c128 : index
  %n0 = arith.muli %wx, %c128 : index
  %row0 = arith.index_cast %r0 : index to i32
  %col0 = arith.index_cast %n0 : index to i32
  %zh = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %oa = coop.composite_construct %zh : f16 -> !a
  %ob = coop.composite_construct %zh : f16 -> !b
  %init = coop.composite_construct %zf : f32 -> !c
  %acc = scf.for %k = %c0 to %kend step %c32 iter_args(%d = %init) -> (!c) {
    %k32 = arith.index_cast %k : index to i32
    %las = tensor_addr.layout_slice %la, %row0, %t128, %k32, %t32 : !L
    %lbs = tensor_addr.layout_slice %lb, %col0, %t128, %k32, %t32 : !L
    %a = coop.load_tensor %A, %oa, %las : memref<256x128xf16>, !a, !L -> !a
    %b = coop.load_tensor %Bt, %ob, %lbs view %vt : memref<256x128xf16>, !b, !L, !Vt -> !b
    %e = coop.mul_add %a, %b, %d : !a, !b, !c -> !c
    scf.yield %e : !c
  }
  %lcs = tensor_addr.layout_slice %lc, %row0, %t128, %col0, %t128 : !L
  coop.store_tensor %acc, %C, %lcs : !c, memref<256x256xf32>, !L
  func.return
}
