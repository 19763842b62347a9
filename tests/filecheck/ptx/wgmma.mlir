// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// RUN: coop-opt %examples/gemm_f16_vk.mlir -p convert-coop-to-ptx -t ptx | filecheck %s --check-prefix=EX
// Workgroup-scope products op by op (coopdialect/ptx/wgmma.py): A/B staged in shared memory in
// K-major core matrices (a 16-byte vector path when the matrix is 16-byte aligned at run time,
// else element by element), fence.proxy.async + bar.sync, then wgmma.fence / mma_async /
// commit / wait 0 on the accumulator's own registers.
!a = !coop.matrix<64x16xf16, Workgroup, MatrixA>
!b = !coop.matrix<16x32xf16, Workgroup, MatrixB>
!c = !coop.matrix<64x32xf32, Workgroup, MatrixAcc>
func.func @wg(%A: memref<64x16xf16>, %B: memref<16x32xf16>, %C: memref<64x32xf32>)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %a = coop.load %A[%c0], %c16, RowMajor : memref<64x16xf16> -> !a
  %b = coop.load %B[%c0], %c32, RowMajor : memref<16x32xf16> -> !b
  %c = coop.load %C[%c0], %c32, RowMajor : memref<64x32xf32> -> !c
  %d = coop.mul_add %a, %b, %c : !a, !b, !c -> !c
  coop.store %d, %C[%c0], %c32, RowMajor : !c, memref<64x32xf32>
  func.return
}
// CHECK-LABEL: .visible .entry wg(
// CHECK:      .reqntid 128, 1, 1
// CHECK:      .shared .align 128 .b8 wg_smem0[2048];
// CHECK-NEXT: .shared .align 128 .b8 wg_smem1[1024];
// CHECK:      mov.b64 %rd[[STRIDES:[0-9]+]], 0x0000001000080000;
// CHECK:      // coop.load -> 64x16 MatrixA staged in shared memory (8 elements per invocation), RowMajor
// CHECK-NEXT: bar.sync 0;
// CHECK:      setp.eq.b64 %p[[AL:[0-9]+]],
// CHECK-NEXT: @!%p[[AL]] bra $L__wg_[[ELEMENTS:[0-9]+]];
// CHECK:      ld.global.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}];
// CHECK:      st.shared.v4.b32 [%rd{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK:      $L__wg_[[ELEMENTS]]:
// Element path: thread t stages row t/2 + 16j, columns 8(t%2)..; SBO = 256 bytes per 8 rows.
// CHECK:      ld.global.b16 %h0, [%rd{{[0-9]+}}];
// CHECK:      ld.global.b16 %h7, [%rd{{[0-9]+}}+1792];
// CHECK:      st.shared.b16 [%rd{{[0-9]+}}], %h0;
// CHECK:      st.shared.b16 [%rd{{[0-9]+}}+1792], %h7;
// CHECK-NOT:  bar.sync
// CHECK:      // coop.load -> 16x32 MatrixB staged in shared memory (4 elements per invocation), RowMajor
// B is N-contiguous in memory: element (k, n) of the K-major tile at (n/8)*256 + (k/8)*128 + (n%8)*16 + (k%8)*2.
// CHECK:      st.shared.b16 [%rd{{[0-9]+}}], %h8;
// CHECK-NEXT: st.shared.b16 [%rd{{[0-9]+}}+8], %h9;
// CHECK-NEXT: st.shared.b16 [%rd{{[0-9]+}}+128], %h10;
// CHECK-NEXT: st.shared.b16 [%rd{{[0-9]+}}+136], %h11;
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.sync 0;
// CHECK:      // coop.load -> 64x32 workgroup accumulator, RowMajor
// CHECK-COUNT-16: ld.global.f32
// CHECK:      // coop.mul_add 64x32x16: 1 x wgmma.mma_async (m64n32k16.f32.f16.f16) per warpgroup: 1 K slices x 1 64-row blocks x 1 N chunks (1 warpgroups)
// CHECK-NOT:  mov.f32
// CHECK:      or.b64 %rd[[DA:[0-9]+]], %rd{{[0-9]+}}, %rd[[STRIDES]];
// CHECK:      or.b64 %rd[[DB:[0-9]+]], %rd{{[0-9]+}}, %rd[[STRIDES]];
// CHECK-NEXT: wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%f0, {{.*}}, %f15}, %rd[[DA]], %rd[[DB]], 1, 1, 1, 0, 0;
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT: // coop.store 64x32 workgroup accumulator, RowMajor
// CHECK:      st.global.f32 [%rd{{[0-9]+}}], %f0;

// Two 64-row blocks on one warpgroup, two K slices: four chained wgmma, descriptors advanced
// in 16-byte units (block 1: 2048 bytes = 128; A's slice 1: 128 rows * 32 bytes = 256;
// B's slice 1: 24 * 32 bytes = 48). A ColumnMajor moves 16 bytes along M: its tile is MN-major
// (imm-trans-a 1); B's 96 groups do not split over 128 invocations, so it is staged element by
// element into a K-major tile (imm-trans-b 0).
!a2 = !coop.matrix<128x32xbf16, Workgroup, MatrixA>
!b2 = !coop.matrix<32x24xbf16, Workgroup, MatrixB>
!c2 = !coop.matrix<128x24xf32, Workgroup, MatrixAcc>
func.func @blocks(%A: memref<4096xbf16>, %B: memref<768xbf16>, %C: memref<3072xf32>)
    attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c24 = arith.constant 24 : index
  %c128 = arith.constant 128 : index
  %z = arith.constant 0.0 : f32
  %a = coop.load %A[%c0], %c128, ColumnMajor : memref<4096xbf16> -> !a2
  %b = coop.load %B[%c0], %c24, RowMajor : memref<768xbf16> -> !b2
  %c = coop.composite_construct %z : f32 -> !c2
  %d = coop.mul_add %a, %b, %c : !a2, !b2, !c2 -> !c2
  coop.store %d, %C[%c0], %c24, RowMajor : !c2, memref<3072xf32>
  func.return
}
// CHECK-LABEL: .visible .entry blocks(
// CHECK-DAG:  mov.b64 %rd[[I128:[0-9]+]], 128;
// CHECK-DAG:  mov.b64 %rd[[I256:[0-9]+]], 256;
// CHECK-DAG:  mov.b64 %rd[[I48:[0-9]+]], 48;
// CHECK-DAG:  mov.b64 %rd[[I384:[0-9]+]], 384;
// CHECK:      // coop.mul_add 128x24x32: 4 x wgmma.mma_async (m64n24k16.f32.bf16.bf16) per warpgroup: 2 K slices x 2 64-row blocks x 1 N chunks (1 warpgroups)
// A composite_construct repeats one register: copied into 24 distinct ones.
// CHECK-COUNT-24: mov.f32
// Each descriptor is advanced just before its wgmma (so that ptxas keeps it in a uniform
// register), each B descriptor once.
// CHECK:      or.b64 %rd[[A:[0-9]+]],
// CHECK:      or.b64 %rd[[B:[0-9]+]],
// CHECK-NEXT: wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n24k16.f32.bf16.bf16 {{{.*}}}, %rd[[A]], %rd[[B]], 1, 1, 1, 1, 0;
// CHECK-NEXT: add.s64 %rd[[A1:[0-9]+]], %rd[[A]], %rd[[I128]];
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n24k16.f32.bf16.bf16 {{{.*}}}, %rd[[A1]], %rd[[B]], 1, 1, 1, 1, 0;
// CHECK-NEXT: add.s64 %rd[[A2:[0-9]+]], %rd[[A]], %rd[[I256]];
// CHECK-NEXT: add.s64 %rd[[B1:[0-9]+]], %rd[[B]], %rd[[I48]];
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n24k16.f32.bf16.bf16 {{{.*}}}, %rd[[A2]], %rd[[B1]], 1, 1, 1, 1, 0;
// CHECK-NEXT: add.s64 %rd[[A3:[0-9]+]], %rd[[A]], %rd[[I384]];
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n24k16.f32.bf16.bf16 {{{.*}}}, %rd[[A3]], %rd[[B1]], 1, 1, 1, 1, 0;
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;

// examples/gemm_f16_vk.mlir: one warpgroup, a 128x128 accumulator (two 64-row blocks), K step
// 32 (two k16 slices).
// EX:      // coop.load -> 128x32 MatrixA staged in shared memory (32 elements per invocation), RowMajor
// EX:      // coop.load -> 32x128 MatrixB staged in shared memory (32 elements per invocation), RowMajor
// EX:      // coop.mul_add 128x128x32: 4 x wgmma.mma_async (m64n128k16.f32.f16.f16) per warpgroup: 2 K slices x 2 64-row blocks x 1 N chunks (1 warpgroups)
// EX:      wgmma.fence.sync.aligned;
// EX-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// EX-NEXT: wgmma.commit_group.sync.aligned;
// EX-NEXT: wgmma.wait_group.sync.aligned 0;
// EX:      // coop.store 128x128 workgroup accumulator, RowMajor
