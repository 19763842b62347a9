// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// 8-bit products: m16n8k32, signedness from the component types (si8 x ui8 -> .s8.u8), four
// bytes per .b32 packed with prmt. SaturatingAccumulation saturates the final addition of C
// once: .satfinite for one K step, exact sum then add.sat.s32 for several.
!a = !coop.matrix<16x32xsi8, Subgroup, MatrixA>
!b = !coop.matrix<32x16xui8, Subgroup, MatrixB>
!c = !coop.matrix<16x16xsi32, Subgroup, MatrixAcc>
!a2 = !coop.matrix<16x64xsi8, Subgroup, MatrixA>
!b2 = !coop.matrix<64x8xsi8, Subgroup, MatrixB>
!c2 = !coop.matrix<16x8xsi32, Subgroup, MatrixAcc>
func.func @mma_s8(%A: memref<1024xsi8>, %B: memref<1024xui8>, %S: memref<1024xsi8>, %C: memref<256xsi32>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %a = coop.load %A[%c0], %c32, RowMajor : memref<1024xsi8> -> !a
  %b = coop.load %B[%c0], %c32, ColumnMajor : memref<1024xui8> -> !b
  %c = coop.load %C[%c0], %c16, RowMajor : memref<256xsi32> -> !c
  %d = coop.mul_add %a, %b, %c <SaturatingAccumulation> : !a, !b, !c -> !c
  coop.store %d, %C[%c0], %c16, RowMajor : !c, memref<256xsi32>
  %a2 = coop.load %S[%c0], %c64, RowMajor : memref<1024xsi8> -> !a2
  %b2 = coop.load %S[%c0], %c64, ColumnMajor : memref<1024xsi8> -> !b2
  %e = coop.load %C[%c0], %c16, RowMajor : memref<256xsi32> -> !c2
  %f = coop.mul_add %a2, %b2, %e <SaturatingAccumulation> : !a2, !b2, !c2 -> !c2
  coop.store %f, %C[%c0], %c16, RowMajor : !c2, memref<256xsi32>
  func.return
}
// CHECK:      .target sm_90a
// CHECK:      // coop.load -> 16x32xsi8 MatrixA, RowMajor
// CHECK:      ld.global.s8 %r{{[0-9]+}}, [%rd[[A:[0-9]+]]];
// CHECK-NEXT: ld.global.s8 %r{{[0-9]+}}, [%rd[[A]]+1];
// CHECK-NEXT: ld.global.s8 %r{{[0-9]+}}, [%rd[[A]]+2];
// CHECK-NEXT: ld.global.s8 %r{{[0-9]+}}, [%rd[[A]]+3];
// CHECK-NEXT: ld.global.s8 %r{{[0-9]+}}, [%rd[[A]]+256];
// CHECK:      // coop.load -> 32x16xui8 MatrixB, ColumnMajor
// CHECK:      ld.global.u8 %r{{[0-9]+}}, [%rd[[B:[0-9]+]]];
// CHECK-NEXT: ld.global.u8 %r{{[0-9]+}}, [%rd[[B]]+1];
// CHECK:      // coop.mul_add 16x16x32: 2 x mma.sync m16n8k32
// CHECK:      prmt.b32
// CHECK:      mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32
// CHECK-NEXT: mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32
// CHECK:      // coop.mul_add 16x8x64: 2 x mma.sync m16n8k32
// CHECK:      mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {{.*}}, {%r[[Z:[0-9]+]], %r[[Z]], %r[[Z]], %r[[Z]]};
// CHECK-NEXT: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
// CHECK-NEXT: add.sat.s32
// CHECK-NEXT: add.sat.s32
// CHECK-NEXT: add.sat.s32
// CHECK-NEXT: add.sat.s32
