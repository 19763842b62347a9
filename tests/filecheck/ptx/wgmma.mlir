// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// Workgroup-scope 64xNx16 products on one warpgroup: A/B staged in shared memory (K-major core
// matrices), fence.proxy.async + bar.sync, then wgmma.fence / mma_async / commit / wait 0.
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
// CHECK:      .version 8.0
// CHECK:      .target sm_90a
// CHECK:      .reqntid 128, 1, 1
// CHECK:      .shared .align 128 .b8 wg_smem0[2048];
// CHECK-NEXT: .shared .align 128 .b8 wg_smem1[1024];
// CHECK:      mov.u64 %rd[[SA:[0-9]+]], wg_smem0;
// CHECK:      mov.b64 %rd[[STRIDES:[0-9]+]], 0x0000001000080000;
// CHECK:      // coop.load -> 64x16 MatrixA staged in shared memory
// CHECK:      bar.sync 0;
// CHECK:      st.shared.b16 [%rd{{[0-9]+}}], %h0;
// CHECK:      st.shared.b16 [%rd{{[0-9]+}}+1792], %h7;
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.sync 0;
// CHECK:      // coop.load -> 64x32 wgmma accumulator, RowMajor
// CHECK-COUNT-16: ld.global.f32
// CHECK:      // coop.mul_add 64x32x16 -> wgmma.mma_async.m64n32k16.f32.f16.f16
// CHECK-COUNT-16: mov.f32
// CHECK-NEXT: wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%f16, {{.*}}, %f31}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, 1, 1, 1, 0, 0;
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT: // coop.store 64x32 wgmma accumulator, RowMajor
// CHECK:      st.global.f32 [%rd{{[0-9]+}}], %f16;
