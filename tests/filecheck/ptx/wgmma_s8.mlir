// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// RUN: coop-opt %examples/gemm_s8_vk.mlir -p convert-coop-to-ptx -t ptx | filecheck %s --check-prefix=EX
// RUN: coop-opt %examples/gemm_s8_coopmat2_vk.mlir -p fold-tensor-views,convert-coop-to-ptx -t ptx | filecheck %s --check-prefix=CM2
// 8-bit products at Workgroup scope (coopdialect/ptx/wgmma.py): wgmma.mma_async.m64nNk32.s32
// with the operands' signedness, integer N chunks (8, 16, 24, multiples of 16), the
// accumulation wrapping; SaturatingAccumulation as A*B from zero, then add.sat.s32 of C.

// s8 x u8: PTX 8.4; N = 40 -> m64n32k32 + m64n8k32 (no m64n40k32 for integers).
!a = !coop.matrix<64x32xi8, Workgroup, MatrixA>
!b = !coop.matrix<32x40xui8, Workgroup, MatrixB>
!c = !coop.matrix<64x40xi32, Workgroup, MatrixAcc>
func.func @mixed(%A: memref<2048xi8>, %B: memref<1280xui8>, %C: memref<2560xi32>)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c40 = arith.constant 40 : index
  %a = coop.load %A[%c0], %c32, RowMajor : memref<2048xi8> -> !a
  %b = coop.load %B[%c0], %c40, RowMajor : memref<1280xui8> -> !b
  %c = coop.load %C[%c0], %c40, RowMajor : memref<2560xi32> -> !c
  %d = coop.mul_add %a, %b, %c <ASigned|CSigned|ResultSigned> : !a, !b, !c -> !c
  coop.store %d, %C[%c0], %c40, RowMajor : !c, memref<2560xi32>
  func.return
}
// CHECK:      .version 8.4
// CHECK-LABEL: .visible .entry mixed(
// A (row-major, 32 bytes a row): 16 K elements per ld.global.v4 / st.shared.v4, else one
// byte at a time (ld.global.u8, st.shared.b8).
// CHECK:      ld.global.v4.b32
// CHECK:      st.shared.v4.b32
// CHECK:      ld.global.u8 %r{{[0-9]+}}, [%rd{{[0-9]+}}];
// CHECK:      st.shared.b8
// CHECK:      // coop.mul_add 64x40x32: 2 x wgmma.mma_async (m64n32k32.s32.s8.u8, m64n8k32.s32.s8.u8) per warpgroup: 1 K slices x 1 64-row blocks x 2 N chunks (1 warpgroups)
// B's chunk at column 32 starts 32/8 * 256 bytes in: descriptor + 64.
// CHECK:      wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n32k32.s32.s8.u8 {%r[[C0:[0-9]+]], {{.*}}, %r{{[0-9]+}}}, %rd[[A:[0-9]+]], %rd[[B:[0-9]+]], 1;
// CHECK-NEXT: add.s64 %rd[[B32:[0-9]+]], %rd[[B]], %rd{{[0-9]+}};
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.u8 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd[[A]], %rd[[B32]], 1;
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT: // coop.store 64x40 workgroup accumulator, RowMajor
// CHECK:      st.global.b32 [%rd{{[0-9]+}}], %r[[C0]];

// Saturating: two K slices chained from zero without .satfinite (it would clamp each partial
// sum), then C added once with saturation.
!as = !coop.matrix<64x64xi8, Workgroup, MatrixA>
!bs = !coop.matrix<64x16xi8, Workgroup, MatrixB>
!cs = !coop.matrix<64x16xi32, Workgroup, MatrixAcc>
func.func @saturating(%A: memref<4096xi8>, %B: memref<1024xi8>, %C: memref<1024xi32>)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %a = coop.load %A[%c0], %c64, RowMajor : memref<4096xi8> -> !as
  %b = coop.load %B[%c0], %c64, ColumnMajor : memref<1024xi8> -> !bs
  %c = coop.load %C[%c0], %c16, RowMajor : memref<1024xi32> -> !cs
  %d = coop.mul_add %a, %b, %c <ASigned|BSigned|CSigned|ResultSigned|SaturatingAccumulation> : !as, !bs, !cs -> !cs
  coop.store %d, %C[%c0], %c16, RowMajor : !cs, memref<1024xi32>
  func.return
}
// CHECK-LABEL: .visible .entry saturating(
// CHECK:      // coop.mul_add 64x16x64: 2 x wgmma.mma_async (m64n16k32.s32.s8.s8) per warpgroup: 2 K slices x 1 64-row blocks x 1 N chunks (1 warpgroups); A*B from zero, then add.sat.s32 of C
// CHECK-COUNT-8: mov.b32 %r{{[0-9]+}}, 0;
// CHECK:      wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n16k32.s32.s8.s8 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, 1;
// CHECK-NEXT: add.s64
// CHECK-NEXT: add.s64
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n16k32.s32.s8.s8 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, 1;
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// CHECK-COUNT-8: add.sat.s32
// CHECK-NOT:  satfinite

// The example (8192^3, one warpgroup, a 128x128 s32 accumulator, K step 64): per K step 2 K
// slices x 2 row blocks of m64n128k32.s32.s8.s8, A staged by 16-byte vectors along K, B
// (row-major: N-contiguous) by 16-byte vectors scattered into the K-major tile.
// EX:      .version 8.0
// EX:      // coop.load -> 128x64 MatrixA staged in shared memory (64 elements per invocation), RowMajor
// EX:      ld.global.v4.b32
// EX:      st.shared.v4.b32
// EX:      // coop.load -> 64x128 MatrixB staged in shared memory (64 elements per invocation), RowMajor
// EX:      ld.global.v4.b32
// EX-COUNT-16: st.shared.b8
// EX:      // coop.mul_add 128x128x64: 4 x wgmma.mma_async (m64n128k32.s32.s8.s8) per warpgroup: 2 K slices x 2 64-row blocks x 1 N chunks (1 warpgroups)
// EX-NOT:  mov.b32
// EX:      wgmma.fence.sync.aligned;
// EX-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8
// EX-NEXT: wgmma.commit_group.sync.aligned;
// EX-NEXT: wgmma.wait_group.sync.aligned 0;

// examples/gemm_s8_coopmat2_vk.mlir (folded): two warpgroups, a 256x128 accumulator (two 64-row
// blocks each); warpgroup v's A blocks start 2 * 2048 * v bytes into each slice.
// CM2:      // coop.mul_add 256x128x64: 4 x wgmma.mma_async (m64n128k32.s32.s8.s8) per warpgroup: 2 K slices x 2 64-row blocks x 1 N chunks (2 warpgroups)
// CM2-NEXT: mad.lo.s64 %rd[[AV:[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}}, %rd{{[0-9]+}};
// CM2:      wgmma.fence.sync.aligned;
// CM2-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8
// CM2-NEXT: wgmma.commit_group.sync.aligned;
// CM2-NEXT: wgmma.wait_group.sync.aligned 0;
