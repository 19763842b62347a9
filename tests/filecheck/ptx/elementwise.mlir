// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// Element-wise ops and conversions act on each fragment register: f16 natively, bf16 and f16
// division through f32 (still correctly rounded), narrow integers extended before division.
!h = !coop.matrix<16x8xf16, Subgroup, MatrixAcc>
!g = !coop.matrix<16x8xbf16, Subgroup, MatrixAcc>
!f = !coop.matrix<16x8xf32, Subgroup, MatrixAcc>
!s = !coop.matrix<16x8xsi8, Subgroup, MatrixAcc>
!i = !coop.matrix<16x8xsi32, Subgroup, MatrixAcc>
func.func @ew(%H: memref<128xf16>, %G: memref<128xbf16>, %F: memref<128xf32>, %S: memref<128xsi8>,
              %I: memref<128xsi32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %h = coop.load %H[%c0], %c8, RowMajor : memref<128xf16> -> !h
  %h2 = coop.fadd %h, %h : !h
  %h3 = coop.fdiv %h2, %h : !h
  %k = arith.constant 1.5 : f16
  %h4 = coop.matrix_times_scalar %h3, %k : !h, f16 -> !h
  coop.store %h4, %H[%c0], %c8, RowMajor : !h, memref<128xf16>
  %g = coop.load %G[%c0], %c8, RowMajor : memref<128xbf16> -> !g
  %g2 = coop.fmul %g, %g : !g
  %g3 = coop.fnegate %g2 : !g
  coop.store %g3, %G[%c0], %c8, RowMajor : !g, memref<128xbf16>
  %s = coop.load %S[%c0], %c8, RowMajor : memref<128xsi8> -> !s
  %s2 = coop.sdiv %s, %s : !s
  coop.store %s2, %S[%c0], %c8, RowMajor : !s, memref<128xsi8>
  %f = coop.f_convert %h : !h -> !f
  %i = coop.convert_f_to_s %f : !f -> !i
  %w = coop.s_convert %s : !s -> !i
  %sum = coop.iadd %i, %w : !i
  coop.store %sum, %I[%c0], %c8, RowMajor : !i, memref<128xsi32>
  %back = coop.convert_s_to_f %sum : !i -> !g
  coop.store %back, %G[%c0], %c8, RowMajor : !g, memref<128xbf16>
  func.return
}
// CHECK:      mov.b16 %h[[K:[0-9]+]], 0x3E00;
// CHECK:      // coop.fadd (4 elements per lane)
// CHECK-NEXT: add.rn.f16 %h{{[0-9]+}}, %h[[X:[0-9]+]], %h[[X]];
// CHECK:      // coop.fdiv (4 elements per lane)
// CHECK-NEXT: cvt.f32.f16
// CHECK-NEXT: cvt.f32.f16
// CHECK-NEXT: div.rn.f32
// CHECK-NEXT: cvt.rn.f16.f32
// CHECK:      mul.rn.f16 %h{{[0-9]+}}, %h{{[0-9]+}}, %h[[K]];
// CHECK:      // coop.fmul (4 elements per lane)
// CHECK-NEXT: cvt.f32.bf16
// CHECK-NEXT: cvt.f32.bf16
// CHECK-NEXT: mul.rn.f32
// CHECK-NEXT: cvt.rn.bf16.f32
// CHECK:      neg.bf16
// CHECK:      // coop.sdiv (4 elements per lane)
// CHECK-NEXT: cvt.s32.s8
// CHECK-NEXT: cvt.s32.s8
// CHECK-NEXT: div.s32
// CHECK:      st.global.b8
// CHECK:      // coop.f_convert f16 -> f32
// CHECK-NEXT: cvt.f32.f16
// CHECK:      // coop.convert_f_to_s f32 -> si32
// CHECK-NEXT: cvt.rzi.s32.f32
// CHECK:      // coop.s_convert si8 -> si32
// CHECK-NEXT: cvt.s32.s8
// CHECK:      add.s32
// CHECK:      // coop.convert_s_to_f si32 -> bf16
// CHECK-NEXT: cvt.rn.f64.s32
// CHECK-NEXT: cvt.rn.bf16.f64
