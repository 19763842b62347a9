// Block-quantized weights decoded by a DecodeFunc (SPV_NV_cooperative_matrix2, CooperativeMatrixBlockLoadsNV).
//
// W (M×K) is stored in the 4-bit "Q4_0" block format of llama.cpp: every 32 consecutive elements
// of a row form one 18-byte block = 9 i16 words:
//   word 0      the block scale d, the bits of an f16;
//   words 1..8  16 bytes qs[0..15] (little-endian in the words); element j of the block is the
//               low nibble of qs[j] for j < 16 and the high nibble of qs[j - 16] otherwise;
//   value(j) = (nibble - 8) * d.
// Q holds the M×(K/32) blocks row by row: memref<M*K/32*9 x i16>.
//
// The tensor layout says so: blockSize (1, 32), dimensions (M, K), strides (K/32*9, 9) in i16
// words, so matrixCoordToTensorElement gives the word index of the element's block and the
// DecodeFunc gets Pointer + that index (its %q, %index), blockCoord and coordInBlock.
//
//   @dequant_q4: W = decode(Q) as f16, one 16×16 tile per subgroup;  grid (K/16, M/16, 1)
//   @gemm_q4:    C = decode(Q) · B, B: K×N f16, C: M×N f32;            grid (N/16, M/16, 1)
// with M = 64, K = 128, N = 32 (the constants and memref shapes below).
!L = !tensor_addr.layout<2, ClampToEdge>
!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
!b = !coop.matrix<16x16xf16, Subgroup, MatrixB>
!c = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>

// Element (blockCoord, coordInBlock) of a Q4_0 block; %index is the word index of the block.
func.func @decode_q4_0(%q: memref<2304xi16>, %index: i32, %br: i32, %bk: i32, %ir: i32,
                       %ik: i32) -> f16 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c4 = arith.constant 4 : i32
  %c8 = arith.constant 8 : i32
  %c15 = arith.constant 15 : i32
  %c16 = arith.constant 16 : i32
  %at = arith.index_cast %index : i32 to index
  %dbits = memref.load %q[%at] : memref<2304xi16>
  %d = arith.bitcast %dbits : i16 to f16
  // byte qs[j % 16] lives in word 1 + (j % 16) / 2, at bit 8 * (j % 2); the high nibble if j >= 16
  %byte = arith.remui %ik, %c16 : i32
  %half = arith.divui %ik, %c16 : i32
  %w0 = arith.divui %byte, %c2 : i32
  %w1 = arith.addi %w0, %c1 : i32
  %wofs = arith.index_cast %w1 : i32 to index
  %wat = arith.addi %at, %wofs : index
  %word = memref.load %q[%wat] : memref<2304xi16>
  %w32 = arith.extui %word : i16 to i32
  %odd = arith.remui %byte, %c2 : i32
  %s8 = arith.muli %odd, %c8 : i32
  %s4 = arith.muli %half, %c4 : i32
  %sh = arith.addi %s8, %s4 : i32
  %v = arith.shrui %w32, %sh : i32
  %nib = arith.andi %v, %c15 : i32
  %x = arith.subi %nib, %c8 : i32
  %xf = arith.sitofp %x : i32 to f16
  %r = arith.mulf %xf, %d : f16
  func.return %r : f16
}

func.func @dequant_q4(%Q: memref<2304xi16>, %W: memref<64x128xf16>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %M = arith.constant 64 : i32
  %K = arith.constant 128 : i32
  %one = arith.constant 1 : i32
  %t16 = arith.constant 16 : i32
  %qk = arith.constant 32 : i32
  %rs = arith.constant 36 : i32
  %bs = arith.constant 9 : i32
  %c16 = arith.constant 16 : index
  %ldw = arith.constant 128 : index
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_set_block_size %l0, %one, %qk : !L
  %l2 = tensor_addr.layout_set_dimension %l1, %M, %K : !L
  %lq = tensor_addr.layout_set_stride %l2, %rs, %bs : !L
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %r0 = arith.muli %wy, %c16 : index
  %k0 = arith.muli %wx, %c16 : index
  %r32 = arith.index_cast %r0 : index to i32
  %k32 = arith.index_cast %k0 : index to i32
  %ls = tensor_addr.layout_slice %lq, %r32, %t16, %k32, %t16 : !L
  %zh = arith.constant 0.0 : f16
  %o = coop.composite_construct %zh : f16 -> !a
  %a = coop.load_tensor %Q, %o, %ls decode @decode_q4_0 : memref<2304xi16>, !a, !L -> !a
  %rw = arith.muli %r0, %ldw : index
  %ow = arith.addi %rw, %k0 : index
  coop.store %a, %W[%ow], %ldw, RowMajor : !a, memref<64x128xf16>
  func.return
}

func.func @gemm_q4(%Q: memref<2304xi16>, %B: memref<128x32xf16>, %C: memref<64x32xf32>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %M = arith.constant 64 : i32
  %K = arith.constant 128 : i32
  %one = arith.constant 1 : i32
  %t16 = arith.constant 16 : i32
  %qk = arith.constant 32 : i32
  %rs = arith.constant 36 : i32
  %bs = arith.constant 9 : i32
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %kend = arith.constant 128 : index
  %ldb = arith.constant 32 : index
  %ldc = arith.constant 32 : index
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_set_block_size %l0, %one, %qk : !L
  %l2 = tensor_addr.layout_set_dimension %l1, %M, %K : !L
  %lq = tensor_addr.layout_set_stride %l2, %rs, %bs : !L
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %r0 = arith.muli %wy, %c16 : index
  %n0 = arith.muli %wx, %c16 : index
  %r32 = arith.index_cast %r0 : index to i32
  %zh = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %o = coop.composite_construct %zh : f16 -> !a
  %init = coop.composite_construct %zf : f32 -> !c
  %acc = scf.for %k = %c0 to %kend step %c16 iter_args(%d = %init) -> (!c) {
    %k32 = arith.index_cast %k : index to i32
    %ls = tensor_addr.layout_slice %lq, %r32, %t16, %k32, %t16 : !L
    %a = coop.load_tensor %Q, %o, %ls decode @decode_q4_0 : memref<2304xi16>, !a, !L -> !a
    %kb = arith.muli %k, %ldb : index
    %ob = arith.addi %kb, %n0 : index
    %b = coop.load %B[%ob], %ldb, RowMajor : memref<128x32xf16> -> !b
    %e = coop.mul_add %a, %b, %d : !a, !b, !c -> !c
    scf.yield %e : !c
  }
  %rc = arith.muli %r0, %ldc : index
  %oc = arith.addi %rc, %n0 : index
  coop.store %acc, %C[%oc], %ldc, RowMajor : !c, memref<64x32xf32>
  func.return
}
