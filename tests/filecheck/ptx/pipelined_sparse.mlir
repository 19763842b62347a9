// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3},convert-coop-to-ptx' -t ptx | filecheck %s
// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3},convert-coop-to-ptx{sparse_batch=2 sparse_in_flight=0}' -t ptx | filecheck %s --check-prefix=PAIR
// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3},convert-coop-to-ptx{sparse_batch=1 sparse_in_flight=0}' -t ptx | filecheck %s --check-prefix=ONE
// The 2:4 sparse Workgroup-tile GEMM (python -m coopdialect.kernels.gemm_tiles 128 256 256 f16 --sparse
// --meta-tiles) through the warp-specialized pipeline at 3 stages. The K loop has 4 iterations
// (an even, constant trip count).
//
// Defaults (sparse_batch=1, sparse_in_flight=1): the consumers run two iterations per trip, each
// K step a batch of two wgmma.mma_async.sp closed by wait_group 1, which retires the other
// batch; after it the retired batch's sp-meta words are stored to shared memory (so they stay in
// their registers until then). The second batch's words are written by prmt straight into the
// registers the loop carries to the next trip's first wait; after the loop, wait_group 0.
//
// PAIR (sparse_batch=2, none in flight): both stages are waited for and all sp-meta words loaded
// before the four wgmma.mma_async.sp of the two K steps go out as one batch, then wait_group 0
// and both stages are released. ONE (sparse_batch=1, none in flight): each K step its own
// batch of two, wait_group 0.
//
// The stage count 3 is no power of two: slot and parity are multiply-high sequences, never
// div/rem (ptxas compiles those as full divisions; the only div/rem left are the workgroup-id
// remap's, once per CTA, before the roles start).
// CHECK: setmaxnreg.dec.sync.aligned.u32
// CHECK-NOT: {{(div|rem)\.}}
// CHECK: setmaxnreg.inc.sync.aligned.u32
// CHECK-NOT: {{(div|rem)\.}}
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: prmt.b32 [[A0:%r[0-9]+]],
// CHECK: prmt.b32 [[A1:%r[0-9]+]],
// CHECK: wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.f16.f16 {{.*}}, [[A0]], 0, 1, 1, 1, 0, 0;
// CHECK-NEXT: wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.f16.f16 {{.*}}, [[A1]], 0, 1, 1, 1, 0, 0;
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 1;
// CHECK: mbarrier.arrive.shared::cta.b64
// CHECK: st.shared.v2.b32 [{{%r[0-9]+}}], {[[B0:%r[0-9]+]], [[B1:%r[0-9]+]]};
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: prmt.b32 [[B0]],
// CHECK: prmt.b32 [[B1]],
// CHECK: wgmma.fence.sync.aligned;
// CHECK-NEXT: wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.f16.f16 {{.*}}, [[B0]], 0, 1, 1, 1, 0, 0;
// CHECK-NEXT: wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.f16.f16 {{.*}}, [[B1]], 0, 1, 1, 1, 0, 0;
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 1;
// CHECK: mbarrier.arrive.shared::cta.b64
// CHECK: st.shared.v2.b32 [{{%r[0-9]+}}], {[[A0]], [[A1]]};
// CHECK-NOT: mov.b32 [[B0]],
// CHECK: bra.uni
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: st.shared.v2.b32 [{{%r[0-9]+}}], {[[B0]], [[B1]]};
// CHECK-NOT: {{(div|rem)\.}}
// PAIR: setmaxnreg.inc.sync.aligned.u32
// PAIR: mbarrier.try_wait.parity.shared::cta.b64
// PAIR: ld.shared.b32
// PAIR: mbarrier.try_wait.parity.shared::cta.b64
// PAIR: ld.shared.b32
// PAIR: wgmma.fence.sync.aligned;
// PAIR-NEXT: wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.f16.f16
// PAIR-NEXT: wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.f16.f16
// PAIR-NEXT: wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.f16.f16
// PAIR-NEXT: wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.f16.f16
// PAIR-NEXT: wgmma.commit_group.sync.aligned;
// PAIR-NEXT: wgmma.wait_group.sync.aligned 0;
// PAIR: mbarrier.arrive.shared::cta.b64
// PAIR: mbarrier.arrive.shared::cta.b64
// PAIR-NOT: wait_group.sync.aligned 1;
// ONE: wgmma.fence.sync.aligned;
// ONE-NEXT: wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.f16.f16
// ONE-NEXT: wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.f16.f16
// ONE-NEXT: wgmma.commit_group.sync.aligned;
// ONE-NEXT: wgmma.wait_group.sync.aligned 0;
// ONE-NOT: wgmma.mma_async.sp
// ONE: wgmma.wait_group.sync.aligned 0;
!a = !coop.matrix<128x32xf16, Workgroup, MatrixA>
!e = !coop.matrix<128x16xui8, Workgroup, MatrixA>
!b = !coop.matrix<64x256xf16, Workgroup, MatrixB>
!c = !coop.matrix<128x256xf32, Workgroup, MatrixAcc>
!d = !coop.matrix<128x256xf16, Workgroup, MatrixAcc>
func.func @sparse_gemm_f16_wg(%A: memref<128x128xf16>, %E: memref<4x2048xui8>, %Bt: memref<256x256xf16>,
                  %D: memref<128x256xf16>)
    attributes {coop.workgroup_size = array<i32: 256, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tm = arith.constant 128 : index
  %tn = arith.constant 256 : index
  %tk = arith.constant 64 : index
  %nk = arith.constant 4 : index
  %lda = arith.constant 128 : index
  %lde = arith.constant 64 : index
  %K = arith.constant 256 : index
  %ldd = arith.constant 256 : index
  %ka = arith.constant 32 : index
  %ke = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %row0 = arith.muli %wy, %tm : index
  %col0 = arith.muli %wx, %tn : index
  %a0 = arith.muli %row0, %lda : index
  %ets = arith.constant 2048 : index
  %e0 = arith.muli %wy, %nk : index
  %b0 = arith.muli %col0, %K : index
  %init = coop.composite_construct %zero : f32 -> !c
  %acc = scf.for %i = %c0 to %nk step %c1 iter_args(%c = %init) -> (!c) {
    %ia = arith.muli %i, %ka : index
    %ib = arith.muli %i, %tk : index
    %aoff = arith.addi %a0, %ia : index
    %et = arith.addi %e0, %i : index
    %eoff = arith.muli %et, %ets : index
    %boff = arith.addi %b0, %ib : index
    %va = coop.load %A[%aoff], %lda, RowMajor : memref<128x128xf16> -> !a
    %ve = coop.load %E[%eoff], %ke, RowMajor : memref<4x2048xui8> -> !e
    %vb = coop.load %Bt[%boff], %K, ColumnMajor : memref<256x256xf16> -> !b
    %r = sparse_mma.mma_sp %va, %ve, %vb, %c : !a, !e, !b, !c -> !c
    scf.yield %r : !c
  }
  %out = coop.f_convert %acc : !c -> !d
  %drow = arith.muli %row0, %ldd : index
  %doff = arith.addi %drow, %col0 : index
  coop.store %out, %D[%doff], %ldd, RowMajor : !d, memref<128x256xf16>
  func.return
}
