// FlashAttention-style forward: O = softmax(Q K^T * scale [+ causal mask]) V and the row
// log-sum-exp, at any batch, heads and sequence length (kernel arguments), f32 softmax and
// accumulation; the online softmax over key blocks in base 2 (log2(e) folded into the scale).
// Q, K, V, O: [B, H, S, D] row-major; LSE: [B, H, S]; causal != 0: key j masked for query
// i < j. Grid: ceil(S / block_m) x H x B (declared). docs/attention.md.
//
// Kernels: attention_d64: f16, 128x64 score tiles, 256 invocations; attention_d128: f16, 64x64 score tiles, 128 invocations.
// Regenerate: python -m coopdialect.kernels.attention > examples/attention.mlir
!L3 = !tensor_addr.layout<3, Constant>
!V3 = !tensor_addr.view<3, false, 0, 2, 1>
!q_d64 = !coop.matrix<128x64xf16, Workgroup, MatrixA>
!kt_d64 = !coop.matrix<64x64xf16, Workgroup, MatrixB>
!v_d64 = !coop.matrix<64x64xf16, Workgroup, MatrixB>
!s_d64 = !coop.matrix<128x64xf32, Workgroup, MatrixAcc>
!ph_d64 = !coop.matrix<128x64xf16, Workgroup, MatrixAcc>
!pa_d64 = !coop.matrix<128x64xf16, Workgroup, MatrixA>
!r_d64 = !coop.matrix<128x8xf32, Workgroup, MatrixAcc>
!o_d64 = !coop.matrix<128x64xf32, Workgroup, MatrixAcc>
!oh_d64 = !coop.matrix<128x64xf16, Workgroup, MatrixAcc>
!q_d128 = !coop.matrix<64x128xf16, Workgroup, MatrixA>
!kt_d128 = !coop.matrix<128x64xf16, Workgroup, MatrixB>
!v_d128 = !coop.matrix<64x128xf16, Workgroup, MatrixB>
!s_d128 = !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
!ph_d128 = !coop.matrix<64x64xf16, Workgroup, MatrixAcc>
!pa_d128 = !coop.matrix<64x64xf16, Workgroup, MatrixA>
!r_d128 = !coop.matrix<64x8xf32, Workgroup, MatrixAcc>
!o_d128 = !coop.matrix<64x128xf32, Workgroup, MatrixAcc>
!oh_d128 = !coop.matrix<64x128xf16, Workgroup, MatrixAcc>
func.func @max(%a: f32, %b: f32) -> f32 {
  %r = arith.maximumf %a, %b : f32
  func.return %r : f32
}
func.func @add(%a: f32, %b: f32) -> f32 {
  %r = arith.addf %a, %b : f32
  func.return %r : f32
}
// S, or -FLT_MAX for a key past the sequence or (causal) after the query
func.func @score(%r: i32, %c: i32, %x: f32, %row0: i32, %col0: i32, %S: i32, %causal: i32) -> f32 {
  %zero = arith.constant 0 : i32
  %neg = arith.constant 0xFF7FFFFF : f32
  %q = arith.addi %row0, %r : i32
  %k = arith.addi %col0, %c : i32
  %past = arith.cmpi sge, %k, %S : i32
  %after = arith.cmpi sgt, %k, %q : i32
  %isc = arith.cmpi ne, %causal, %zero : i32
  %cm = arith.andi %after, %isc : i1
  %masked = arith.ori %past, %cm : i1
  %s = arith.select %masked, %neg, %x : f32
  func.return %s : f32
}
func.func @maximum(%r: i32, %c: i32, %a: f32, %b: f32) -> f32 {
  %y = arith.maximumf %a, %b : f32
  func.return %y : f32
}
// -m * scale2: the exponent's offset (nscale2 = -scale2)
func.func @offset(%r: i32, %c: i32, %m: f32, %nscale2: f32) -> f32 {
  %y = arith.mulf %m, %nscale2 : f32
  func.return %y : f32
}
// exp2(x * scale2 - m * scale2), the product and the sum rounded once; afn: PTX may
// flush results below 2^-126 to 0 (ex2.approx.ftz)
func.func @exp2_fma(%r: i32, %c: i32, %x: f32, %nm: f32, %scale2: f32) -> f32 {
  %d = math.fma %x, %scale2, %nm : f32
  %e = math.exp2 %d fastmath<afn> : f32
  func.return %e : f32
}
// the natural log-sum-exp of a row from its max m and sum l: (m scale2 + log2 l) ln 2
func.func @lse(%r: i32, %c: i32, %m: f32, %l: f32, %scale2: f32) -> f32 {
  %ln2 = arith.constant 0x3F317218 : f32
  %b = math.log2 %l : f32
  %a = math.fma %m, %scale2, %b : f32
  %y = arith.mulf %a, %ln2 : f32
  func.return %y : f32
}
func.func @attention_d64(%Q: memref<?xf16>, %K: memref<?xf16>, %V: memref<?xf16>, %O: memref<?xf16>, %LSE: memref<?xf32>, %B: i32, %H: i32, %S: i32, %scale: f32, %causal: i32)
    attributes {coop.workgroup_size = array<i32: 256, 1, 1>,
                coop.grid = affine_map<()[s0, s1, s2, s3] -> (s2 ceildiv 128, s1, s0)>} {
  %c0 = arith.constant 0 : index
  %cbn = arith.constant 64 : index
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %tbm = arith.constant 128 : i32
  %tbn = arith.constant 64 : i32
  %td = arith.constant 64 : i32
  %tst = arith.constant 8 : i32
  %log2e = arith.constant 0x3FB8AA3B : f32
  %scale2 = arith.mulf %scale, %log2e : f32
  %nscale2 = arith.negf %scale2 : f32
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %wz = gpu.block_id z
  // query blocks in reverse (the last first): with the causal mask the later blocks
  // have more keys, and starting the longest first leaves less of a tail
  %xw = arith.index_cast %wx : index to i32
  %bm1 = arith.constant 127 : i32
  %sb = arith.addi %S, %bm1 : i32
  %nq = arith.divsi %sb, %tbm : i32
  %nq1 = arith.subi %nq, %one : i32
  %x = arith.subi %nq1, %xw : i32
  %h = arith.index_cast %wy : index to i32
  %b = arith.index_cast %wz : index to i32
  %row0 = arith.muli %x, %tbm : i32
  %bh0 = arith.muli %b, %H : i32
  %bh = arith.addi %bh0, %h : i32
  %BH = arith.muli %B, %H : i32
  // [B*H, S, D]: this workgroup's rows of Q and O, blocks of K and V
  %l0 = tensor_addr.create_layout : !L3
  %lt = tensor_addr.layout_set_dimension %l0, %BH, %S, %td : !L3
  %lq = tensor_addr.layout_slice %lt, %bh, %one, %row0, %tbm, %zero, %td : !L3
  %vt = tensor_addr.create_view : !V3
  %zh = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %neg = arith.constant 0xFF7FFFFF : f32
  %oq = coop.composite_construct %zh : f16 -> !q_d64
  %okt = coop.composite_construct %zh : f16 -> !kt_d64
  %ov = coop.composite_construct %zh : f16 -> !v_d64
  %zs = coop.composite_construct %zf : f32 -> !s_d64
  %zr = coop.composite_construct %zf : f32 -> !r_d64
  %m0 = coop.composite_construct %neg : f32 -> !r_d64
  %o0 = coop.composite_construct %zf : f32 -> !o_d64
  %qt = coop.load_tensor %Q, %oq, %lq : memref<?xf16>, !q_d64, !L3 -> !q_d64
  // key blocks with no masked key: those wholly before S and (causal) wholly at or
  // before the block's first query row; then the rest, masked, up to the last key or
  // (causal) the one holding the last query row
  %isc = arith.cmpi ne, %causal, %zero : i32
  %row1 = arith.addi %row0, %one : i32
  %first = arith.minsi %row1, %S : i32
  %lim = arith.select %isc, %first, %S : i32
  %nfull = arith.divsi %lim, %tbn : i32
  %uend32 = arith.muli %nfull, %tbn : i32
  %uend = arith.index_cast %uend32 : i32 to index
  %rend = arith.addi %row0, %tbm : i32
  %diag = arith.minsi %rend, %S : i32
  %kend32 = arith.select %isc, %diag, %S : i32
  %kend = arith.index_cast %kend32 : i32 to index
  %full:3 = scf.for %j = %c0 to %uend step %cbn iter_args(%o = %o0, %m = %m0, %l = %zr) -> (!o_d64, !r_d64, !r_d64) {
    %j32 = arith.index_cast %j : index to i32
    %lkv = tensor_addr.layout_slice %lt, %bh, %one, %j32, %tbn, %zero, %td : !L3
    %k = coop.load_tensor %K, %okt, %lkv view %vt : memref<?xf16>, !kt_d64, !L3, !V3 -> !kt_d64
    %vb = coop.load_tensor %V, %ov, %lkv : memref<?xf16>, !v_d64, !L3 -> !v_d64
    %st = coop.mul_add %qt, %k, %zs : !q_d64, !kt_d64, !s_d64 -> !s_d64
    %mb = coop.reduce Row %st, @max : !s_d64 -> !r_d64
    %mn = coop.per_element_op @maximum(%m, %mb) : !r_d64, !r_d64 -> !r_d64
    %nm = coop.per_element_op @offset(%mn, %nscale2) : !r_d64, f32 -> !r_d64
    %nw = coop.reduce Row %nm, @max : !r_d64 -> !s_d64
    %p = coop.per_element_op @exp2_fma(%st, %nw, %scale2) : !s_d64, !s_d64, f32 -> !s_d64
    %a = coop.per_element_op @exp2_fma(%m, %nm, %scale2) : !r_d64, !r_d64, f32 -> !r_d64
    %rs = coop.reduce Row %p, @add : !s_d64 -> !r_d64
    %la = coop.fmul %l, %a : !r_d64
    %ln = coop.fadd %la, %rs : !r_d64
    %ao = coop.reduce Row %a, @max : !r_d64 -> !o_d64
    %oa = coop.fmul %o, %ao : !o_d64
    %pt = coop.f_convert %p : !s_d64 -> !ph_d64
    %pm = coop.convert %pt : !ph_d64 -> !pa_d64
    %on = coop.mul_add %pm, %vb, %oa : !pa_d64, !v_d64, !o_d64 -> !o_d64
    scf.yield %on, %mn, %ln : !o_d64, !r_d64, !r_d64
  }
  %res:3 = scf.for %j = %uend to %kend step %cbn iter_args(%o = %full#0, %m = %full#1, %l = %full#2) -> (!o_d64, !r_d64, !r_d64) {
    %j32 = arith.index_cast %j : index to i32
    %lkv = tensor_addr.layout_slice %lt, %bh, %one, %j32, %tbn, %zero, %td : !L3
    %k = coop.load_tensor %K, %okt, %lkv view %vt : memref<?xf16>, !kt_d64, !L3, !V3 -> !kt_d64
    %vb = coop.load_tensor %V, %ov, %lkv : memref<?xf16>, !v_d64, !L3 -> !v_d64
    %st = coop.mul_add %qt, %k, %zs : !q_d64, !kt_d64, !s_d64 -> !s_d64
    %s2 = coop.per_element_op @score(%st, %row0, %j32, %S, %causal) : !s_d64, i32, i32, i32, i32 -> !s_d64
    %mb = coop.reduce Row %s2, @max : !s_d64 -> !r_d64
    %mn = coop.per_element_op @maximum(%m, %mb) : !r_d64, !r_d64 -> !r_d64
    %nm = coop.per_element_op @offset(%mn, %nscale2) : !r_d64, f32 -> !r_d64
    %nw = coop.reduce Row %nm, @max : !r_d64 -> !s_d64
    %p = coop.per_element_op @exp2_fma(%s2, %nw, %scale2) : !s_d64, !s_d64, f32 -> !s_d64
    %a = coop.per_element_op @exp2_fma(%m, %nm, %scale2) : !r_d64, !r_d64, f32 -> !r_d64
    %rs = coop.reduce Row %p, @add : !s_d64 -> !r_d64
    %la = coop.fmul %l, %a : !r_d64
    %ln = coop.fadd %la, %rs : !r_d64
    %ao = coop.reduce Row %a, @max : !r_d64 -> !o_d64
    %oa = coop.fmul %o, %ao : !o_d64
    %pt = coop.f_convert %p : !s_d64 -> !ph_d64
    %pm = coop.convert %pt : !ph_d64 -> !pa_d64
    %on = coop.mul_add %pm, %vb, %oa : !pa_d64, !v_d64, !o_d64 -> !o_d64
    scf.yield %on, %mn, %ln : !o_d64, !r_d64, !r_d64
  }
  %lo = coop.reduce Row %res#2, @max : !r_d64 -> !o_d64
  %of = coop.fdiv %res#0, %lo : !o_d64
  %oc = coop.f_convert %of : !o_d64 -> !oh_d64
  coop.store_tensor %oc, %O, %lq : !oh_d64, memref<?xf16>, !L3
  // LSE [B*H, S, 1]: column 0 of the row-constant matrix; the other columns are dropped
  %lse = coop.per_element_op @lse(%res#1, %res#2, %scale2) : !r_d64, !r_d64, f32 -> !r_d64
  %ll = tensor_addr.layout_set_dimension %l0, %BH, %S, %one : !L3
  %lls = tensor_addr.layout_slice %ll, %bh, %one, %row0, %tbm, %zero, %tst : !L3
  coop.store_tensor %lse, %LSE, %lls : !r_d64, memref<?xf32>, !L3
  func.return
}
func.func @attention_d128(%Q: memref<?xf16>, %K: memref<?xf16>, %V: memref<?xf16>, %O: memref<?xf16>, %LSE: memref<?xf32>, %B: i32, %H: i32, %S: i32, %scale: f32, %causal: i32)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>,
                coop.grid = affine_map<()[s0, s1, s2, s3] -> (s2 ceildiv 64, s1, s0)>} {
  %c0 = arith.constant 0 : index
  %cbn = arith.constant 64 : index
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %tbm = arith.constant 64 : i32
  %tbn = arith.constant 64 : i32
  %td = arith.constant 128 : i32
  %tst = arith.constant 8 : i32
  %log2e = arith.constant 0x3FB8AA3B : f32
  %scale2 = arith.mulf %scale, %log2e : f32
  %nscale2 = arith.negf %scale2 : f32
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %wz = gpu.block_id z
  // query blocks in reverse (the last first): with the causal mask the later blocks
  // have more keys, and starting the longest first leaves less of a tail
  %xw = arith.index_cast %wx : index to i32
  %bm1 = arith.constant 63 : i32
  %sb = arith.addi %S, %bm1 : i32
  %nq = arith.divsi %sb, %tbm : i32
  %nq1 = arith.subi %nq, %one : i32
  %x = arith.subi %nq1, %xw : i32
  %h = arith.index_cast %wy : index to i32
  %b = arith.index_cast %wz : index to i32
  %row0 = arith.muli %x, %tbm : i32
  %bh0 = arith.muli %b, %H : i32
  %bh = arith.addi %bh0, %h : i32
  %BH = arith.muli %B, %H : i32
  // [B*H, S, D]: this workgroup's rows of Q and O, blocks of K and V
  %l0 = tensor_addr.create_layout : !L3
  %lt = tensor_addr.layout_set_dimension %l0, %BH, %S, %td : !L3
  %lq = tensor_addr.layout_slice %lt, %bh, %one, %row0, %tbm, %zero, %td : !L3
  %vt = tensor_addr.create_view : !V3
  %zh = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %neg = arith.constant 0xFF7FFFFF : f32
  %oq = coop.composite_construct %zh : f16 -> !q_d128
  %okt = coop.composite_construct %zh : f16 -> !kt_d128
  %ov = coop.composite_construct %zh : f16 -> !v_d128
  %zs = coop.composite_construct %zf : f32 -> !s_d128
  %zr = coop.composite_construct %zf : f32 -> !r_d128
  %m0 = coop.composite_construct %neg : f32 -> !r_d128
  %o0 = coop.composite_construct %zf : f32 -> !o_d128
  %qt = coop.load_tensor %Q, %oq, %lq : memref<?xf16>, !q_d128, !L3 -> !q_d128
  // key blocks with no masked key: those wholly before S and (causal) wholly at or
  // before the block's first query row; then the rest, masked, up to the last key or
  // (causal) the one holding the last query row
  %isc = arith.cmpi ne, %causal, %zero : i32
  %row1 = arith.addi %row0, %one : i32
  %first = arith.minsi %row1, %S : i32
  %lim = arith.select %isc, %first, %S : i32
  %nfull = arith.divsi %lim, %tbn : i32
  %uend32 = arith.muli %nfull, %tbn : i32
  %uend = arith.index_cast %uend32 : i32 to index
  %rend = arith.addi %row0, %tbm : i32
  %diag = arith.minsi %rend, %S : i32
  %kend32 = arith.select %isc, %diag, %S : i32
  %kend = arith.index_cast %kend32 : i32 to index
  %full:3 = scf.for %j = %c0 to %uend step %cbn iter_args(%o = %o0, %m = %m0, %l = %zr) -> (!o_d128, !r_d128, !r_d128) {
    %j32 = arith.index_cast %j : index to i32
    %lkv = tensor_addr.layout_slice %lt, %bh, %one, %j32, %tbn, %zero, %td : !L3
    %k = coop.load_tensor %K, %okt, %lkv view %vt : memref<?xf16>, !kt_d128, !L3, !V3 -> !kt_d128
    %vb = coop.load_tensor %V, %ov, %lkv : memref<?xf16>, !v_d128, !L3 -> !v_d128
    %st = coop.mul_add %qt, %k, %zs : !q_d128, !kt_d128, !s_d128 -> !s_d128
    %mb = coop.reduce Row %st, @max : !s_d128 -> !r_d128
    %mn = coop.per_element_op @maximum(%m, %mb) : !r_d128, !r_d128 -> !r_d128
    %nm = coop.per_element_op @offset(%mn, %nscale2) : !r_d128, f32 -> !r_d128
    %nw = coop.reduce Row %nm, @max : !r_d128 -> !s_d128
    %p = coop.per_element_op @exp2_fma(%st, %nw, %scale2) : !s_d128, !s_d128, f32 -> !s_d128
    %a = coop.per_element_op @exp2_fma(%m, %nm, %scale2) : !r_d128, !r_d128, f32 -> !r_d128
    %rs = coop.reduce Row %p, @add : !s_d128 -> !r_d128
    %la = coop.fmul %l, %a : !r_d128
    %ln = coop.fadd %la, %rs : !r_d128
    %ao = coop.reduce Row %a, @max : !r_d128 -> !o_d128
    %oa = coop.fmul %o, %ao : !o_d128
    %pt = coop.f_convert %p : !s_d128 -> !ph_d128
    %pm = coop.convert %pt : !ph_d128 -> !pa_d128
    %on = coop.mul_add %pm, %vb, %oa : !pa_d128, !v_d128, !o_d128 -> !o_d128
    scf.yield %on, %mn, %ln : !o_d128, !r_d128, !r_d128
  }
  %res:3 = scf.for %j = %uend to %kend step %cbn iter_args(%o = %full#0, %m = %full#1, %l = %full#2) -> (!o_d128, !r_d128, !r_d128) {
    %j32 = arith.index_cast %j : index to i32
    %lkv = tensor_addr.layout_slice %lt, %bh, %one, %j32, %tbn, %zero, %td : !L3
    %k = coop.load_tensor %K, %okt, %lkv view %vt : memref<?xf16>, !kt_d128, !L3, !V3 -> !kt_d128
    %vb = coop.load_tensor %V, %ov, %lkv : memref<?xf16>, !v_d128, !L3 -> !v_d128
    %st = coop.mul_add %qt, %k, %zs : !q_d128, !kt_d128, !s_d128 -> !s_d128
    %s2 = coop.per_element_op @score(%st, %row0, %j32, %S, %causal) : !s_d128, i32, i32, i32, i32 -> !s_d128
    %mb = coop.reduce Row %s2, @max : !s_d128 -> !r_d128
    %mn = coop.per_element_op @maximum(%m, %mb) : !r_d128, !r_d128 -> !r_d128
    %nm = coop.per_element_op @offset(%mn, %nscale2) : !r_d128, f32 -> !r_d128
    %nw = coop.reduce Row %nm, @max : !r_d128 -> !s_d128
    %p = coop.per_element_op @exp2_fma(%s2, %nw, %scale2) : !s_d128, !s_d128, f32 -> !s_d128
    %a = coop.per_element_op @exp2_fma(%m, %nm, %scale2) : !r_d128, !r_d128, f32 -> !r_d128
    %rs = coop.reduce Row %p, @add : !s_d128 -> !r_d128
    %la = coop.fmul %l, %a : !r_d128
    %ln = coop.fadd %la, %rs : !r_d128
    %ao = coop.reduce Row %a, @max : !r_d128 -> !o_d128
    %oa = coop.fmul %o, %ao : !o_d128
    %pt = coop.f_convert %p : !s_d128 -> !ph_d128
    %pm = coop.convert %pt : !ph_d128 -> !pa_d128
    %on = coop.mul_add %pm, %vb, %oa : !pa_d128, !v_d128, !o_d128 -> !o_d128
    scf.yield %on, %mn, %ln : !o_d128, !r_d128, !r_d128
  }
  %lo = coop.reduce Row %res#2, @max : !r_d128 -> !o_d128
  %of = coop.fdiv %res#0, %lo : !o_d128
  %oc = coop.f_convert %of : !o_d128 -> !oh_d128
  coop.store_tensor %oc, %O, %lq : !oh_d128, memref<?xf16>, !L3
  // LSE [B*H, S, 1]: column 0 of the row-constant matrix; the other columns are dropped
  %lse = coop.per_element_op @lse(%res#1, %res#2, %scale2) : !r_d128, !r_d128, f32 -> !r_d128
  %ll = tensor_addr.layout_set_dimension %l0, %BH, %S, %one : !L3
  %lls = tensor_addr.layout_slice %ll, %bh, %one, %row0, %tbm, %zero, %tst : !L3
  coop.store_tensor %lse, %LSE, %lls : !r_d128, memref<?xf32>, !L3
  func.return
}
