// RUN: coop-opt %s | coop-opt | filecheck %s
// RUN: coop-opt %s --print-op-generic | coop-opt | filecheck %s
!a = !coop.matrix<64x16xf16, Workgroup, MatrixA>
!e = !coop.matrix<64x8xui8, Workgroup, MatrixA>
!b = !coop.matrix<64x32xf16, Workgroup, MatrixB>
!c = !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
!d = !coop.matrix<64x32xf16, Workgroup, MatrixA>
func.func @f(%a: !a, %e: !e, %b: !b, %c: !c, %x: !d) -> !c {
  %v, %m = sparse_mma.compress %x : !d -> !a, !e
  %y = sparse_mma.decompress %v, %m : !a, !e -> !d
  %r = sparse_mma.mma_sp %a, %e, %b, %c {sp_sel = 1 : i32, scale_d = false, imm_scale_a = -1 : i32, imm_trans_b = 1 : i32} : !a, !e, !b, !c -> !c
  func.return %r : !c
}
// CHECK: %v, %m = sparse_mma.compress %x : !coop.matrix<64x32xf16, Workgroup, MatrixA> -> !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>
// CHECK: %y = sparse_mma.decompress %v, %m : {{.*}} -> !coop.matrix<64x32xf16, Workgroup, MatrixA>
// CHECK: %r = sparse_mma.mma_sp %a, %e, %b, %c {sp_sel = 1 : i32, scale_d = false, imm_scale_a = -1 : i32, imm_trans_b = 1 : i32} : !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>, !coop.matrix<64x32xf16, Workgroup, MatrixB>, !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
