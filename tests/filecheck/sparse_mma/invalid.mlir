// RUN: coop-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
func.func @f(%a: !coop.matrix<64x16xf16, Subgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x16xf16, Subgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x64xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: A (compressed values) must be a !coop.matrix<..., Workgroup, MatrixA>

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xbf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x64xbf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: .atype/.btype f16/bf16 is not a wgmma.mma_async.sp type pair

// -----
func.func @f(%a: !coop.matrix<64x16xbf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xbf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf16, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x16xbf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x64xbf16, Workgroup, MatrixB>, !coop.matrix<64x64xf16, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf16, Workgroup, MatrixAcc>
  func.return
}
// CHECK: .dtype f16 is not allowed with .atype .bf16

// -----
func.func @f(%a: !coop.matrix<64x8xf32, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<16x64xf32, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf16, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x8xf32, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<16x64xf32, Workgroup, MatrixB>, !coop.matrix<64x64xf16, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf16, Workgroup, MatrixAcc>
  func.return
}
// CHECK: .dtype f16 is not allowed with .atype .tf32

// -----
func.func @f(%a: !coop.matrix<64x32xsi8, Workgroup, MatrixA>, %e: !coop.matrix<64x16xui8, Workgroup, MatrixA>, %b: !coop.matrix<64x48xsi8, Workgroup, MatrixB>, %c: !coop.matrix<64x48xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x32xsi8, Workgroup, MatrixA>, !coop.matrix<64x16xui8, Workgroup, MatrixA>, !coop.matrix<64x48xsi8, Workgroup, MatrixB>, !coop.matrix<64x48xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x48xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: .dtype f32 is not allowed with .atype .s8

// -----
func.func @f(%a: !coop.matrix<64x32xsi8, Workgroup, MatrixA>, %e: !coop.matrix<64x16xui8, Workgroup, MatrixA>, %b: !coop.matrix<64x40xsi8, Workgroup, MatrixB>, %c: !coop.matrix<64x40xi32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x32xsi8, Workgroup, MatrixA>, !coop.matrix<64x16xui8, Workgroup, MatrixA>, !coop.matrix<64x40xsi8, Workgroup, MatrixB>, !coop.matrix<64x40xi32, Workgroup, MatrixAcc> -> !coop.matrix<64x40xi32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: N = 40 is not a valid .m64nNk64 shape for .s8

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x260xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x260xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x260xf16, Workgroup, MatrixB>, !coop.matrix<64x260xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x260xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: N = 260 is not a valid .m64nNk32 shape for .f16

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x12xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x12xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x12xf16, Workgroup, MatrixB>, !coop.matrix<64x12xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x12xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: N = 12 is not a valid .m64nNk32 shape for .f16

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {sp_sel = 2 : i32} : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x64xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: sp-sel of .f16 must be 0 (threads T0, T1) or 1 (threads T2, T3), got 2

// -----
func.func @f(%a: !coop.matrix<64x8xf32, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<16x64xf32, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {sp_sel = 2 : i32} : !coop.matrix<64x8xf32, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<16x64xf32, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: sp-sel of .tf32 must be 0 (threads T0, T1) or 1 (threads T2, T3), got 2

// -----
func.func @f(%a: !coop.matrix<64x32xsi8, Workgroup, MatrixA>, %e: !coop.matrix<64x16xui8, Workgroup, MatrixA>, %b: !coop.matrix<64x48xsi8, Workgroup, MatrixB>, %c: !coop.matrix<64x48xi32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {sp_sel = 1 : i32} : !coop.matrix<64x32xsi8, Workgroup, MatrixA>, !coop.matrix<64x16xui8, Workgroup, MatrixA>, !coop.matrix<64x48xsi8, Workgroup, MatrixB>, !coop.matrix<64x48xi32, Workgroup, MatrixAcc> -> !coop.matrix<64x48xi32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: sp-sel of .s8 must be 0 (all threads contribute), got 1

// -----
func.func @f(%a: !coop.matrix<64x32xf8E4M3FN, Workgroup, MatrixA>, %e: !coop.matrix<64x16xui8, Workgroup, MatrixA>, %b: !coop.matrix<64x64xf8E5M2, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {sp_sel = 1 : i32} : !coop.matrix<64x32xf8E4M3FN, Workgroup, MatrixA>, !coop.matrix<64x16xui8, Workgroup, MatrixA>, !coop.matrix<64x64xf8E5M2, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: sp-sel of .e4m3 must be 0 (all threads contribute), got 1

// -----
func.func @f(%a: !coop.matrix<64x32xsi8, Workgroup, MatrixA>, %e: !coop.matrix<64x16xui8, Workgroup, MatrixA>, %b: !coop.matrix<64x48xsi8, Workgroup, MatrixB>, %c: !coop.matrix<64x48xi32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {imm_scale_a = -1 : i32} : !coop.matrix<64x32xsi8, Workgroup, MatrixA>, !coop.matrix<64x16xui8, Workgroup, MatrixA>, !coop.matrix<64x48xsi8, Workgroup, MatrixB>, !coop.matrix<64x48xi32, Workgroup, MatrixAcc> -> !coop.matrix<64x48xi32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: imm-scale-a/imm-scale-b do not exist for integer wgmma.mma_async.sp

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {imm_scale_b = 2 : i32} : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x64xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: imm-scale-b must be -1 or 1, got 2

// -----
func.func @f(%a: !coop.matrix<64x8xf32, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<16x64xf32, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {imm_trans_b = 1 : i32} : !coop.matrix<64x8xf32, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<16x64xf32, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: imm-trans-b exists only for .f16/.bf16 wgmma.mma_async.sp

// -----
func.func @f(%a: !coop.matrix<64x32xf8E4M3FN, Workgroup, MatrixA>, %e: !coop.matrix<64x16xui8, Workgroup, MatrixA>, %b: !coop.matrix<64x64xf8E5M2, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {imm_trans_a = 1 : i32} : !coop.matrix<64x32xf8E4M3FN, Workgroup, MatrixA>, !coop.matrix<64x16xui8, Workgroup, MatrixA>, !coop.matrix<64x64xf8E5M2, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: imm-trans-a exists only for .f16/.bf16 wgmma.mma_async.sp

// -----
func.func @f(%a: !coop.matrix<64x32xsi8, Workgroup, MatrixA>, %e: !coop.matrix<64x16xui8, Workgroup, MatrixA>, %b: !coop.matrix<64x48xsi8, Workgroup, MatrixB>, %c: !coop.matrix<64x48xi32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {imm_trans_a = 0 : i32} : !coop.matrix<64x32xsi8, Workgroup, MatrixA>, !coop.matrix<64x16xui8, Workgroup, MatrixA>, !coop.matrix<64x48xsi8, Workgroup, MatrixB>, !coop.matrix<64x48xi32, Workgroup, MatrixAcc> -> !coop.matrix<64x48xi32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: imm-trans-a exists only for .f16/.bf16 wgmma.mma_async.sp

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {imm_trans_b = 2 : i32} : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x64xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: imm-trans-b must be 0 or 1, got 2

// -----
func.func @f(%a: !coop.matrix<16x64xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {imm_trans_a = 1 : i32, a_registers} : !coop.matrix<16x64xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x64xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: imm-trans-a needs A in shared memory

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {satfinite} : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x64xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: .satfinite exists only for the integer (.s32) wgmma.mma_async.sp

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c {scale_d = 1 : i32} : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x64xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: scale_d must be an i1

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<32x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x64xf16, Workgroup, MatrixB>, !coop.matrix<32x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<32x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: the accumulator must have M = 64 rows

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x32xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x32xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: B has N = 32 but the accumulator has N = 64

// -----
func.func @f(%a: !coop.matrix<64x8xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x4xui8, Workgroup, MatrixA>, %b: !coop.matrix<16x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x8xf16, Workgroup, MatrixA>, !coop.matrix<64x4xui8, Workgroup, MatrixA>, !coop.matrix<16x64xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: K = 16 must be a multiple of the instruction K 32

// -----
func.func @f(%a: !coop.matrix<64x32xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x32xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x64xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: compressed A must be 64x16

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xi16, Workgroup, MatrixA>, %b: !coop.matrix<32x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xi16, Workgroup, MatrixA>, !coop.matrix<32x64xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: the sparsity metadata elements must be an 8-bit integer type

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x16xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x16xui8, Workgroup, MatrixA>, !coop.matrix<32x64xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: the sparsity metadata must be 64x8

// -----
func.func @f(%a: !coop.matrix<64x8xf32, Workgroup, MatrixA>, %e: !coop.matrix<64x4xui8, Workgroup, MatrixA>, %b: !coop.matrix<16x64xf32, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x8xf32, Workgroup, MatrixA>, !coop.matrix<64x4xui8, Workgroup, MatrixA>, !coop.matrix<16x64xf32, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: the sparsity metadata must be 64x8 (one value per 2-chunk

// -----
func.func @f(%a: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>, %b: !coop.matrix<32x64xf16, Workgroup, MatrixB>, %c: !coop.matrix<64x64xf32, Workgroup, MatrixAcc>) {
  %d = sparse_mma.mma_sp %a, %e, %b, %c : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<32x64xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf16, Workgroup, MatrixAcc>
  func.return
}
// CHECK: the result type must equal C's type

// -----
func.func @g(%x: !coop.matrix<64x30xf16, Workgroup, MatrixA>) {
  %v, %m = sparse_mma.compress %x : !coop.matrix<64x30xf16, Workgroup, MatrixA> -> !coop.matrix<64x15xf16, Workgroup, MatrixA>, !coop.matrix<64x7xui8, Workgroup, MatrixA>
  func.return
}
// CHECK: the dense matrix needs a column count that is a multiple of the chunk width 4

// -----
func.func @g(%x: !coop.matrix<64x32xf16, Workgroup, MatrixA>) {
  %v, %m = sparse_mma.compress %x : !coop.matrix<64x32xf16, Workgroup, MatrixA> -> !coop.matrix<64x8xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>
  func.return
}
// CHECK: compressed values of a 64x32 matrix are 64x16 (K/2 kept per row), got 64x8

// -----
func.func @g(%v: !coop.matrix<64x16xf16, Workgroup, MatrixA>, %e: !coop.matrix<64x8xui8, Workgroup, MatrixA>) {
  %x = sparse_mma.decompress %v, %e : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA> -> !coop.matrix<64x32xbf16, Workgroup, MatrixA>
  func.return
}
// CHECK: compressed values must have the dense element type bf16, got f16

// -----
func.func @g(%x: !coop.matrix<64x32xf32, Workgroup, MatrixA>) {
  %v, %m = sparse_mma.compress %x : !coop.matrix<64x32xf32, Workgroup, MatrixA> -> !coop.matrix<64x16xf32, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>
  func.return
}
// CHECK: metadata of a 64x32 matrix is 64x16 (one value per 2-chunk), got 64x8
