// D = gelu(A @ B + bias) at any M, N, K given as kernel arguments: bf16 inputs,
// f32 accumulation, bf16 output (gemm_any.mlir: the same in f16).
//
//   A: M x K row-major; B given as Bt = B^T, N x K row-major (the layout of a PyTorch linear
//   layer's weight); D: M x N row-major; bias: N elements. The sizes are the i32 arguments.
//
// One workgroup computes a 128x256 tile of D as one Workgroup-scope accumulator, in K steps of 64.
// The tiles are slices of tensor layouts (SPV_NV_tensor_addressing) with clamp mode Constant:
// elements past M, N or K read as clampValue = 0 and stores past M or N are dropped, so partial
// tiles at every edge are exact. B is read through a transposing tensor view of Bt. The bias row
// is a 1-D layout of span 256, which every row of the tile reads (linearToSpanCoord wraps r * 256
// + c to c); GELU is x * (1 + erf(x / sqrt 2)) / 2, a coop.per_element_op, its erf marked
// fastmath<afn> since the result is rounded to 16 bits (PTX: the fast erf, docs/math.md). The grid
// is declared: ceil(N / 256) x ceil(M / 128) workgroups. (coopdialect.kernels.gemm.gemm_ir writes
// these.)
//
// Fast on sm_90a: coop-opt gemm_any_bf16.mlir -p 'pipeline-coop-loads{stages=4},convert-coop-to-ptx{persistent=true}'
// SPIR-V: coop-opt gemm_any_bf16.mlir -p convert-coop-to-spirv -t spirv (SPV_KHR_bfloat16, for a
// target whose description says "bfloat16": true, such as h200-vulkan; docs/vulkan.md).
!L = !tensor_addr.layout<2, Constant>
!L1 = !tensor_addr.layout<1, Constant>
!L3 = !tensor_addr.layout<3, Constant>
!Vt = !tensor_addr.view<2, false, 1, 0>
!a = !coop.matrix<128x64xbf16, Workgroup, MatrixA>
!b = !coop.matrix<64x256xbf16, Workgroup, MatrixB>
!c = !coop.matrix<128x256xf32, Workgroup, MatrixAcc>
!d = !coop.matrix<128x256xbf16, Workgroup, MatrixAcc>
func.func @gelu(%row: i32, %col: i32, %x: f32) -> f32 {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.70710678118654752 : f32
  %s = arith.mulf %x, %rsqrt2 : f32
  %e = math.erf %s fastmath<afn> : f32
  %p = arith.addf %e, %one : f32
  %h = arith.mulf %x, %half : f32
  %y = arith.mulf %h, %p : f32
  func.return %y : f32
}
func.func @gemm_bf16_bias_gelu(%A: memref<?x?xbf16>, %Bt: memref<?x?xbf16>, %D: memref<?x?xbf16>, %bias: memref<?xbf16>, %M: i32, %N: i32, %K: i32)
    attributes {coop.workgroup_size = array<i32: 256, 1, 1>,
                coop.grid = affine_map<()[s0, s1, s2] -> (s1 ceildiv 256, s0 ceildiv 128, 1)>} {
  %c0 = arith.constant 0 : index
  %kend = arith.index_cast %K : i32 to index
  %tbm = arith.constant 128 : i32
  %tbn = arith.constant 256 : i32
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %x = arith.index_cast %wx : index to i32
  %y = arith.index_cast %wy : index to i32
  %row0 = arith.muli %y, %tbm : i32
  %col0 = arith.muli %x, %tbn : i32
  %zf = arith.constant 0.0 : f32
  %cbk = arith.constant 64 : index
  %tbk = arith.constant 64 : i32
  %l0 = tensor_addr.create_layout : !L
  %la = tensor_addr.layout_set_dimension %l0, %M, %K : !L
  %lb = tensor_addr.layout_set_dimension %l0, %N, %K : !L
  %vt = tensor_addr.create_view : !Vt
  %zh = arith.constant 0.0 : bf16
  %oa = coop.composite_construct %zh : bf16 -> !a
  %ob = coop.composite_construct %zh : bf16 -> !b
  %init = coop.composite_construct %zf : f32 -> !c
  %acc = scf.for %k = %c0 to %kend step %cbk iter_args(%cc = %init) -> (!c) {
    %k32 = arith.index_cast %k : index to i32
    %las = tensor_addr.layout_slice %la, %row0, %tbm, %k32, %tbk : !L
    %lbs = tensor_addr.layout_slice %lb, %col0, %tbn, %k32, %tbk : !L
    %av = coop.load_tensor %A, %oa, %las : memref<?x?xbf16>, !a, !L -> !a
    %bv = coop.load_tensor %Bt, %ob, %lbs view %vt : memref<?x?xbf16>, !b, !L, !Vt -> !b
    %r = coop.mul_add %av, %bv, %cc : !a, !b, !c -> !c
    scf.yield %r : !c
  }
  %l1 = tensor_addr.create_layout : !L1
  %lbias = tensor_addr.layout_set_dimension %l1, %N : !L1
  %lbiass = tensor_addr.layout_slice %lbias, %col0, %tbn : !L1
  %zd = arith.constant 0.0 : bf16
  %od = coop.composite_construct %zd : bf16 -> !d
  %bt = coop.load_tensor %bias, %od, %lbiass : memref<?xbf16>, !d, !L1 -> !d
  %bf = coop.f_convert %bt : !d -> !c
  %sum = coop.fadd %acc, %bf : !c
  %act = coop.per_element_op @gelu(%sum) : !c -> !c
  %out = coop.f_convert %act : !c -> !d
  %lo0 = tensor_addr.create_layout : !L
  %ld = tensor_addr.layout_set_dimension %lo0, %M, %N : !L
  %lds = tensor_addr.layout_slice %ld, %row0, %tbm, %col0, %tbn : !L
  coop.store_tensor %out, %D, %lds : !d, memref<?x?xbf16>, !L
  func.return
}
