// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// The Arm blocked-interleaved layouts (SPV_ARM_cooperative_matrix_layouts) at subgroup scope:
// per-element byte offsets from the extension's addressing (docs/arm-layouts.md), computed on
// the lane's bits (g = lane>>2, q = lane&3) so that the power-of-two divisions fold.

// A 16x16 f16 (m16n8k16 A fragment: a_v at (g + 8((v>>1)&1), 2q + (v&1) + 8(v>>2))),
// RowBlockedInterleavedARM, Stride 2: blocks 4x8, groups of 2 interleaved by words.
// Row r = 4*g2 + (g0 + 2*g1) + r0, column c = 2q + c0: block j = 2*(g2 + r0/4) + c0/8, group
// j/2 = g2 + r0/4, member c0/8; byte in block ((g0 + 2 g1)*8 + 2q + c0%8)*2, word 4(g0 + 2g1) + q.
// Address = 128*(g2 + r0/4) + 4*(c0/8) + 8*(4(g0 + 2g1) + q) + 2*(c0%8) = 8*lane + const,
// const = 32*r0 + 4*(c0/8) + 2*(c0%8): 0, 2, 256, 258, 4, 6, 260, 262.
func.func @a_row(%p: memref<4096xf16>, %o: memref<4096xf16>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %z = arith.constant 0 : index
  %s16 = arith.constant 16 : index
  %s2 = arith.constant 2 : index
  %a = coop.load %p[%z], %s2, RowBlockedInterleavedARM : memref<4096xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  coop.store %a, %o[%z], %s16, RowMajor : !coop.matrix<16x16xf16, Subgroup, MatrixA>, memref<4096xf16>
  func.return
}
// CHECK-LABEL: .visible .entry a_row(
// CHECK:      mov.u32 %r[[LANEID:[0-9]+]], %laneid;
// CHECK:      cvt.u64.u32 %rd[[LANE:[0-9]+]], %r[[LANEID]];
// CHECK:      mov.b64 %rd[[EIGHT:[0-9]+]], 8;
// CHECK:      // coop.load -> 16x16xf16 MatrixA, RowBlockedInterleavedARM
// CHECK-NEXT: mad.lo.s64 %rd[[A:[0-9]+]], %rd[[LANE]], %rd[[EIGHT]], %rd{{[0-9]+}};
// CHECK-NEXT: ld.global.b16 %h0, [%rd[[A]]];
// CHECK-NEXT: ld.global.b16 %h1, [%rd[[A]]+2];
// CHECK-NEXT: ld.global.b16 %h2, [%rd[[A]]+256];
// CHECK-NEXT: ld.global.b16 %h3, [%rd[[A]]+258];
// CHECK-NEXT: ld.global.b16 %h4, [%rd[[A]]+4];
// CHECK-NEXT: ld.global.b16 %h5, [%rd[[A]]+6];
// CHECK-NEXT: ld.global.b16 %h6, [%rd[[A]]+260];
// CHECK-NEXT: ld.global.b16 %h7, [%rd[[A]]+262];

// B 16x8 f16 (b_v at (2q + (v&1) + 8(v>>1), g)), ColumnBlockedInterleavedARM, Stride 1, a
// store: block j = r/4 = q1 + r0/4 (column-major block order, one block column), byte in block
// ((2q0 + r0%4)*8 + g)*2. Address = 64 j + byte = 32q + 2g + const: 64*(r0/4) + 16*(r0%4) =
// 0, 16, 128, 144 for r0 = 0, 1, 8, 9.
func.func @b_col(%p: memref<4096xf16>, %o: memref<4096xf16>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %z = arith.constant 0 : index
  %s8 = arith.constant 8 : index
  %s1 = arith.constant 1 : index
  %b = coop.load %p[%z], %s8, RowMajor : memref<4096xf16> -> !coop.matrix<16x8xf16, Subgroup, MatrixB>
  coop.store %b, %o[%z], %s1, ColumnBlockedInterleavedARM : !coop.matrix<16x8xf16, Subgroup, MatrixB>, memref<4096xf16>
  func.return
}
// CHECK-LABEL: .visible .entry b_col(
// CHECK-DAG:  mov.b64 %rd[[I32:[0-9]+]], 32;
// CHECK-DAG:  mov.b64 %rd[[I2:[0-9]+]], 2;
// CHECK:      // coop.store 16x8xf16, ColumnBlockedInterleavedARM
// CHECK-NEXT: mad.lo.s64 %rd[[T:[0-9]+]], %rd{{[0-9]+}}, %rd[[I2]], %rd{{[0-9]+}};
// CHECK-NEXT: mad.lo.s64 %rd[[B:[0-9]+]], %rd{{[0-9]+}}, %rd[[I32]], %rd[[T]];
// CHECK-NEXT: st.global.b16 [%rd[[B]]], %h{{[0-9]+}};
// CHECK-NEXT: st.global.b16 [%rd[[B]]+16], %h{{[0-9]+}};
// CHECK-NEXT: st.global.b16 [%rd[[B]]+128], %h{{[0-9]+}};
// CHECK-NEXT: st.global.b16 [%rd[[B]]+144], %h{{[0-9]+}};

// An f64 accumulator (c_v at (g + 8(v>>1), 2q + (v&1))), RowBlockedInterleavedARM, Stride 2:
// an 8-byte component is two 4-byte words 4*Stride = 8 bytes apart. Blocks 4x2, j = 4*(g2 +
// r0/4) + q, group j/2, member q0; words 4(g0 + 2g1) + 2 c0 and +1: low word at 256 g2 + 128 q1
// + 4 q0 + 32 g0 + 64 g1 + 64 r0 + 16 c0, high word 8 bytes on.
func.func @acc_f64(%p: memref<512xf64>, %o: memref<512xf64>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %z = arith.constant 0 : index
  %s8 = arith.constant 8 : index
  %s2 = arith.constant 2 : index
  %c = coop.load %p[%z], %s2, RowBlockedInterleavedARM : memref<512xf64> -> !coop.matrix<16x8xf64, Subgroup, MatrixAcc>
  coop.store %c, %o[%z], %s8, RowMajor : !coop.matrix<16x8xf64, Subgroup, MatrixAcc>, memref<512xf64>
  func.return
}
// CHECK-LABEL: .visible .entry acc_f64(
// CHECK:      // coop.load -> 16x8xf64 MatrixAcc, RowBlockedInterleavedARM
// CHECK:      ld.global.b32 %r[[L0:[0-9]+]], [%rd[[C:[0-9]+]]];
// CHECK-NEXT: ld.global.b32 %r[[H0:[0-9]+]], [%rd[[C]]+8];
// CHECK-NEXT: mov.b64 %rd[[W0:[0-9]+]], {%r[[L0]], %r[[H0]]};
// CHECK-NEXT: mov.b64 %fd{{[0-9]+}}, %rd[[W0]];
// CHECK-NEXT: ld.global.b32 %r{{[0-9]+}}, [%rd[[C]]+16];
// CHECK-NEXT: ld.global.b32 %r{{[0-9]+}}, [%rd[[C]]+24];
// CHECK:      ld.global.b32 %r{{[0-9]+}}, [%rd[[C]]+512];
// CHECK-NEXT: ld.global.b32 %r{{[0-9]+}}, [%rd[[C]]+520];
// CHECK:      ld.global.b32 %r{{[0-9]+}}, [%rd[[C]]+528];
// CHECK-NEXT: ld.global.b32 %r{{[0-9]+}}, [%rd[[C]]+536];
