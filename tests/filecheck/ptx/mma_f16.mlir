// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// f16/bf16 subgroup products: a 16x16x16 product is 2 x mma.sync m16n8k16; f16 A packs two
// halves per .b32 (mov.b32 {lo, hi}); an f16 accumulator is packed too and unpacked after.
!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
!b = !coop.matrix<16x16xf16, Subgroup, MatrixB>
!c = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
!h = !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
!ab = !coop.matrix<16x16xbf16, Subgroup, MatrixA>
!bb = !coop.matrix<16x16xbf16, Subgroup, MatrixB>
func.func @mma_f16(%A: memref<256xf16>, %B: memref<256xf16>, %C: memref<256xf32>, %H: memref<256xf16>,
                   %X: memref<256xbf16>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %a = coop.load %A[%c0], %c16, RowMajor : memref<256xf16> -> !a
  %b = coop.load %B[%c0], %c16, RowMajor : memref<256xf16> -> !b
  %c = coop.load %C[%c0], %c16, RowMajor : memref<256xf32> -> !c
  %d = coop.mul_add %a, %b, %c : !a, !b, !c -> !c
  coop.store %d, %C[%c0], %c16, RowMajor : !c, memref<256xf32>
  %h = coop.load %H[%c0], %c16, RowMajor : memref<256xf16> -> !h
  %e = coop.mul_add %a, %b, %h : !a, !b, !h -> !h
  coop.store %e, %H[%c0], %c16, RowMajor : !h, memref<256xf16>
  %xa = coop.load %X[%c0], %c16, RowMajor : memref<256xbf16> -> !ab
  %xb = coop.load %X[%c0], %c16, ColumnMajor : memref<256xbf16> -> !bb
  %f = coop.mul_add %xa, %xb, %d : !ab, !bb, !c -> !c
  coop.store %f, %C[%c0], %c16, ColumnMajor : !c, memref<256xf32>
  func.return
}
// CHECK:      .version 8.0
// CHECK-NEXT: .target sm_90a
// CHECK-NEXT: .address_size 64
// CHECK:      .visible .entry mma_f16(
// CHECK-NEXT:   .param .u64 mma_f16_param_A,
// CHECK:      .reqntid 32, 1, 1
// CHECK:      // coop.load -> 16x16xf16 MatrixA, RowMajor
// CHECK:      ld.global.b16 %h0, [%rd[[A:[0-9]+]]];
// CHECK-NEXT: ld.global.b16 %h1, [%rd[[A]]+2];
// CHECK-NEXT: ld.global.b16 %h2, [%rd[[A]]+256];
// CHECK-NEXT: ld.global.b16 %h3, [%rd[[A]]+258];
// CHECK-NEXT: ld.global.b16 %h4, [%rd[[A]]+16];
// CHECK:      // coop.load -> 16x16xf16 MatrixB, RowMajor
// CHECK:      ld.global.b16 %h8, [%rd[[B:[0-9]+]]];
// CHECK-NEXT: ld.global.b16 %h9, [%rd[[B]]+32];
// CHECK-NEXT: ld.global.b16 %h10, [%rd[[B]]+256];
// CHECK-NEXT: ld.global.b16 %h11, [%rd[[B]]+288];
// CHECK:      // coop.mul_add 16x16x16: 2 x mma.sync m16n8k16
// CHECK:      mov.b32 %r{{[0-9]+}}, {%h0, %h1};
// CHECK:      mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f{{.*}}}, {%r{{.*}}}, {%r{{.*}}}, {%f0, %f1, %f2, %f3};
// CHECK-NEXT: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f{{.*}}}, {%r{{.*}}}, {%r{{.*}}}, {%f4, %f5, %f6, %f7};
// CHECK:      st.global.f32 [%rd{{[0-9]+}}+4], %f{{[0-9]+}};
// CHECK:      mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{.*}}}, {%r{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK:      mov.b32 {%h{{[0-9]+}}, %h{{[0-9]+}}}, %r{{[0-9]+}};
// CHECK:      st.global.b16
// CHECK:      // coop.load -> 16x16xbf16 MatrixB, ColumnMajor
// CHECK:      mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NEXT: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK:      ret;
