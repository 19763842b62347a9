// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// RS form (A from registers), f16 accumulator (packed pairs), selector 1, negation, trans-b,
// scale-d 0; and an s8 x u8 product with .satfinite (PTX 8.4 for the mixed types).
!a = !coop.matrix<64x16xf16, Workgroup, MatrixA>
!e = !coop.matrix<64x8xui8, Workgroup, MatrixA>
!b = !coop.matrix<16x32xf16, Workgroup, MatrixB>
!c = !coop.matrix<64x16xf16, Workgroup, MatrixAcc>
!a8 = !coop.matrix<64x32xsi8, Workgroup, MatrixA>
!e8 = !coop.matrix<64x16xui8, Workgroup, MatrixA>
!b8 = !coop.matrix<64x48xui8, Workgroup, MatrixB>
!c8 = !coop.matrix<64x48xi32, Workgroup, MatrixAcc>
func.func @rs(%A: memref<1024xf16>, %E: memref<512xui8>, %B: memref<512xf16>, %C: memref<1024xf16>,
              %A8: memref<2048xsi8>, %E8: memref<1024xui8>, %B8: memref<3072xui8>, %C8: memref<3072xi32>)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %a = coop.load %A[%c0], %c16, RowMajor : memref<1024xf16> -> !a
  %e = coop.load %E[%c0], %c8, RowMajor : memref<512xui8> -> !e
  %b = coop.load %B[%c0], %c32, RowMajor : memref<512xf16> -> !b
  %c = coop.load %C[%c0], %c16, RowMajor : memref<1024xf16> -> !c
  %d = sparse_mma.mma_sp %a, %e, %b, %c {sp_sel = 1 : i32, scale_d = false, imm_scale_a = -1 : i32, imm_trans_b = 1 : i32, a_registers} : !a, !e, !b, !c -> !c
  coop.store %d, %C[%c0], %c16, RowMajor : !c, memref<1024xf16>
  %a8 = coop.load %A8[%c0], %c32, RowMajor : memref<2048xsi8> -> !a8
  %e8 = coop.load %E8[%c0], %c16, RowMajor : memref<1024xui8> -> !e8
  %b8 = coop.load %B8[%c0], %c48, RowMajor : memref<3072xui8> -> !b8
  %c8v = coop.load %C8[%c0], %c48, RowMajor : memref<3072xi32> -> !c8
  %d8 = sparse_mma.mma_sp %a8, %e8, %b8, %c8v {satfinite} : !a8, !e8, !b8, !c8 -> !c8
  coop.store %d8, %C8[%c0], %c48, RowMajor : !c8, memref<3072xi32>
  func.return
}
// CHECK:      .version 8.4
// CHECK:      ld.global.b16
// CHECK:      mov.b32 %r{{[0-9]+}}, {%h{{[0-9]+}}, %h{{[0-9]+}}};
// CHECK:      wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sp.sync.aligned.m64n16k32.f16.f16.f16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, %r{{[0-9]+}}, 1, 0, -1, 1, 1;
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT: mov.b32 {%h{{[0-9]+}}, %h{{[0-9]+}}}, %r{{[0-9]+}};
// CHECK:      wgmma.mma_async.sp.sync.aligned.m64n48k64.satfinite.s32.s8.u8 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, %r{{[0-9]+}}, 0, 1;
