// D = A @ B at any M, N, K given as kernel arguments: f16 inputs, f32 accumulation, f16 output.
//
//   A: M x K row-major; B given as Bt = B^T, N x K row-major (the layout of a PyTorch linear
//   layer's weight); D: M x N row-major. The sizes are the i32 arguments %M, %N, %K.
//
// One workgroup computes a 128x256 tile of D as one Workgroup-scope accumulator, in K steps of 64.
// The tiles are slices of tensor layouts (SPV_NV_tensor_addressing) with clamp mode Constant:
// elements past M, N or K read as clampValue = 0 and stores past M or N are dropped, so partial
// tiles at every edge are exact. B is read through a transposing tensor view of Bt.
// The grid is declared: ceil(N / 256) x ceil(M / 128) workgroups.
//
// Fast on sm_90a: coop-opt gemm_any.mlir -p 'pipeline-coop-loads{stages=4},convert-coop-to-ptx'
!L = !tensor_addr.layout<2, Constant>
!Vt = !tensor_addr.view<2, false, 1, 0>
!a = !coop.matrix<128x64xf16, Workgroup, MatrixA>
!b = !coop.matrix<64x256xf16, Workgroup, MatrixB>
!c = !coop.matrix<128x256xf32, Workgroup, MatrixAcc>
!d = !coop.matrix<128x256xf16, Workgroup, MatrixAcc>
func.func @gemm_f16(%A: memref<?x?xf16>, %Bt: memref<?x?xf16>, %D: memref<?x?xf16>,
                    %M: i32, %N: i32, %K: i32)
    attributes {coop.workgroup_size = array<i32: 256, 1, 1>,
                coop.grid = affine_map<()[s0, s1, s2] -> (s1 ceildiv 256, s0 ceildiv 128, 1)>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %t64 = arith.constant 64 : i32
  %t128 = arith.constant 128 : i32
  %t256 = arith.constant 256 : i32
  %l0 = tensor_addr.create_layout : !L
  %la = tensor_addr.layout_set_dimension %l0, %M, %K : !L
  %lb = tensor_addr.layout_set_dimension %l0, %N, %K : !L
  %ld = tensor_addr.layout_set_dimension %l0, %M, %N : !L
  %vt = tensor_addr.create_view : !Vt
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %x = arith.index_cast %wx : index to i32
  %y = arith.index_cast %wy : index to i32
  %row0 = arith.muli %y, %t128 : i32
  %col0 = arith.muli %x, %t256 : i32
  %zh = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %oa = coop.composite_construct %zh : f16 -> !a
  %ob = coop.composite_construct %zh : f16 -> !b
  %init = coop.composite_construct %zf : f32 -> !c
  %kend = arith.index_cast %K : i32 to index
  %acc = scf.for %k = %c0 to %kend step %c64 iter_args(%cc = %init) -> (!c) {
    %k32 = arith.index_cast %k : index to i32
    %las = tensor_addr.layout_slice %la, %row0, %t128, %k32, %t64 : !L
    %lbs = tensor_addr.layout_slice %lb, %col0, %t256, %k32, %t64 : !L
    %av = coop.load_tensor %A, %oa, %las : memref<?x?xf16>, !a, !L -> !a
    %bv = coop.load_tensor %Bt, %ob, %lbs view %vt : memref<?x?xf16>, !b, !L, !Vt -> !b
    %r = coop.mul_add %av, %bv, %cc : !a, !b, !c -> !c
    scf.yield %r : !c
  }
  %out = coop.f_convert %acc : !c -> !d
  %lds = tensor_addr.layout_slice %ld, %row0, %t128, %col0, %t256 : !L
  coop.store_tensor %out, %D, %lds : !d, memref<?x?xf16>, !L
  func.return
}
