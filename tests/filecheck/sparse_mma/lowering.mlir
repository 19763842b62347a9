// RUN: coop-opt %S/../../../examples/sparse_gemm_f16.mlir -p convert-coop-to-ptx -t ptx | filecheck %s
// RUN: not coop-opt %S/../../../examples/sparse_gemm_f16.mlir -p 'convert-coop-to-ptx{target=sm_90}' -t ptx 2>&1 | filecheck %s --check-prefix=GATE
// The sparse GEMM example: K loop of sparse_mma.mma_sp (K = 64 each = 2 chained wgmma.mma_async.sp):
// staging (vector copies: Aligned 16, K-contiguous), fence.proxy.async + bar.sync, metadata words,
// accumulator copies, wgmma.fence, two chained instructions, commit, wait 0.
// CHECK:      .version 8.2
// CHECK:      .target sm_90a
// CHECK:      .reqntid 128, 1, 1
// CHECK:      // sparse_mma.mma_sp 64x128x64 -> 2 x wgmma.mma_async.sp.m64n128k32.f32.f16.f16
// CHECK-NEXT: bar.sync 0;
// CHECK:      ld.global.v4.b32
// CHECK:      st.shared.v4.b32
// CHECK:      fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.sync 0;
// CHECK:      ld.global.u8
// CHECK:      mov.f32
// CHECK:      wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sp.sync.aligned.m64n128k32.f32.f16.f16 {%f[[D:[0-9]+]], {{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, %r{{[0-9]+}}, 0, 1, 1, 1, 0, 0;
// CHECK-NEXT: wgmma.mma_async.sp.sync.aligned.m64n128k32.f32.f16.f16 {%f[[D]], {{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, %r{{[0-9]+}}, 0, 1, 1, 1, 0, 0;
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// GATE: error: {{.*}}needs target sm_90a, not sm_90
