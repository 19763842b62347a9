// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3},convert-coop-to-ptx' -t ptx | filecheck %s
// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3},convert-coop-to-ptx' -t ptx-launch | filecheck %s --check-prefix=LAUNCH
// A workgroup GEMM tile (128x256, K step 64) staged by pipeline-coop-loads becomes the
// warp-specialized pipeline: a producer warpgroup issuing bulk tensor copies on mbarriers and
// two consumer warpgroups issuing wgmma from 128B-swizzled shared memory, one batch in flight.
!a = !coop.matrix<128x64xf16, Workgroup, MatrixA>
!b = !coop.matrix<64x256xf16, Workgroup, MatrixB>
!c = !coop.matrix<128x256xf32, Workgroup, MatrixAcc>
!d = !coop.matrix<128x256xf16, Workgroup, MatrixAcc>
func.func @gemm(%A: memref<128x256xf16>, %Bt: memref<256x256xf16>, %D: memref<128x256xf16>) attributes {coop.workgroup_size = array<i32: 256, 1, 1>} {
  %c0 = arith.constant 0 : index
  %cK = arith.constant 256 : index
  %cN = arith.constant 256 : index
  %cBK = arith.constant 64 : index
  %cBM = arith.constant 128 : index
  %cBN = arith.constant 256 : index
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %m0 = arith.muli %wy, %cBM : index
  %n0 = arith.muli %wx, %cBN : index
  %a0 = arith.muli %m0, %cK : index
  %b0 = arith.muli %n0, %cK : index
  %z = arith.constant 0.0 : f32
  %cinit = coop.composite_construct %z : f32 -> !c
  %acc = scf.for %k = %c0 to %cK step %cBK iter_args(%c = %cinit) -> (!c) {
    %ao = arith.addi %a0, %k : index
    %bo = arith.addi %b0, %k : index
    %a = coop.load %A[%ao], %cK, RowMajor : memref<128x256xf16> -> !a
    %b = coop.load %Bt[%bo], %cK, ColumnMajor : memref<256x256xf16> -> !b
    %r = coop.mul_add %a, %b, %c : !a, !b, !c -> !c
    scf.yield %r : !c
  }
  %h = coop.f_convert %acc : !c -> !d
  %doff0 = arith.muli %m0, %cN : index
  %doff = arith.addi %doff0, %n0 : index
  coop.store %h, %D[%doff], %cN, RowMajor : !d, memref<128x256xf16>
  func.return
}
// CHECK: .extern .shared .align 1024 .b8 gemm_dsmem[];
// CHECK: .param .align 64 .b8 gemm_tmap_A[128],
// CHECK: .param .align 64 .b8 gemm_tmap_Bt[128],
// CHECK: .param .u64 gemm_param_D
// CHECK: .maxntid 384, 1, 1
// CHECK: .minnctapersm 1
// CHECK: cvta.param.u64
// CHECK: mbarrier.init.shared::cta.b64 [%r{{[0-9]+}}], 1;
// CHECK: mbarrier.init.shared::cta.b64 [%r{{[0-9]+}}], 8;
// CHECK: fence.mbarrier_init.release.cluster;
// CHECK: bar.sync 0;
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r{{[0-9]+}}], 49152;
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.wait_group.sync.aligned 1;
// CHECK: mbarrier.arrive.shared::cta.b64 _,
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: cvt.rn.f16.f32
// CHECK: st.global.b32

// LAUNCH: "block": [
// LAUNCH-NEXT: 384,
// 3 stages x (A 128x64 + B 256x64 f16 = 49152 bytes) + 3 x 16 bytes of mbarriers + 1024 for aligning the base:
// LAUNCH: "dynamic_shared_bytes": 148528,
// LAUNCH: "kind": "tensor_map",
// LAUNCH-NEXT: "arg": 0,
// LAUNCH-NEXT: "data_type": "FLOAT16",
// LAUNCH-NEXT: "global_dims": [
// LAUNCH-NEXT: 256,
// LAUNCH-NEXT: 128
// LAUNCH: "box_dims": [
// LAUNCH-NEXT: 64,
// LAUNCH-NEXT: 128
// LAUNCH: "swizzle": "128B",
// LAUNCH: "kind": "pointer",
// LAUNCH-NEXT: "arg": 2
