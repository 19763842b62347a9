// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3},convert-coop-to-ptx{persistent=true}' -t ptx | filecheck %s
// RUN: coop-opt %s -p 'pipeline-coop-loads{stages=3},convert-coop-to-ptx{persistent=true}' -t ptx-launch | filecheck %s --check-prefix=LAUNCH
// The dense workgroup GEMM of pipelined.mlir as a persistent kernel (convert-coop-to-ptx's
// `persistent`): the entry takes the dispatch grid (grid_x, grid_y) after the memrefs; each
// role loops over the tiles t = ctaid.x, ctaid.x + nctaid.x, ...; group k of a CTA's n-th tile
// is n * 4 + k (4 K steps), so at 3 stages the IR's slot i mod 3 is rotated in the ring
// (add, sub, min.u32) before every copy and load; every copy of a tile, the prologue's too,
// first waits for its slot's release; after the K loop the consumers release the stage of the
// batch still in flight, which the producer refills for the next tile.
// CHECK: .param .u64 gemm_f16_wg_grid_x,
// CHECK-NEXT: .param .u64 gemm_f16_wg_grid_y
// CHECK: mov.u32 [[CTA:%r[0-9]+]], %ctaid.x;
// CHECK: mov.u32 [[NCTA:%r[0-9]+]], %nctaid.x;
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK: mov.b32 [[T:%r[0-9]+]], [[CTA]];
// CHECK-NEXT: mov.b32
// CHECK-NEXT: bra.uni [[HEAD:\$L__gemm_f16_wg_[0-9]+]];
// CHECK: [[HEAD]]:
// CHECK-NEXT: setp.ge.u32 {{%p[0-9]+}}, [[T]], {{%r[0-9]+}};
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 _, [{{%r[0-9]+}}], 49152;
// CHECK: min.u32
// CHECK-NEXT: add.u32
// CHECK: cp.async.bulk.tensor.2d
// CHECK: add.u32 {{%r[0-9]+}}, [[T]], [[NCTA]];
// CHECK: bra.uni [[HEAD]];
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK: wgmma.wait_group.sync.aligned 1;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT: add.u32
// CHECK-NEXT: setp.eq.u32
// CHECK-NEXT: @!{{%p[0-9]+}} bra
// CHECK: mbarrier.arrive.shared::cta.b64
// CHECK: st.global.b32
// CHECK: bra.uni
// LAUNCH: "grid": "persistent"
// LAUNCH: "kind": "grid",
// LAUNCH-NEXT: "dim": "x"
// LAUNCH: "kind": "grid",
// LAUNCH-NEXT: "dim": "y"
!a = !coop.matrix<128x64xf16, Workgroup, MatrixA>
!b = !coop.matrix<64x256xf16, Workgroup, MatrixB>
!c = !coop.matrix<128x256xf32, Workgroup, MatrixAcc>
!d = !coop.matrix<128x256xf16, Workgroup, MatrixAcc>
func.func @gemm_f16_wg(%A: memref<128x256xf16>, %Bt: memref<256x256xf16>, %D: memref<128x256xf16>)
    attributes {coop.workgroup_size = array<i32: 256, 1, 1>} {
  %c0 = arith.constant 0 : index
  %tm = arith.constant 128 : index
  %tn = arith.constant 256 : index
  %tk = arith.constant 64 : index
  %K = arith.constant 256 : index
  %ldd = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %row0 = arith.muli %wy, %tm : index
  %col0 = arith.muli %wx, %tn : index
  %a0 = arith.muli %row0, %K : index   // A[row0, 0]
  %b0 = arith.muli %col0, %K : index   // Bt[col0, 0], i.e. B[0, col0]
  %init = coop.composite_construct %zero : f32 -> !c
  %acc = scf.for %k0 = %c0 to %K step %tk iter_args(%c = %init) -> (!c) {
    %aoff = arith.addi %a0, %k0 : index
    %boff = arith.addi %b0, %k0 : index
    %a = coop.load %A[%aoff], %K, RowMajor : memref<128x256xf16> -> !a
    %b = coop.load %Bt[%boff], %K, ColumnMajor : memref<256x256xf16> -> !b
    %r = coop.mul_add %a, %b, %c : !a, !b, !c -> !c
    scf.yield %r : !c
  }
  %out = coop.f_convert %acc : !c -> !d
  %drow = arith.muli %row0, %ldd : index
  %doff = arith.addi %drow, %col0 : index
  coop.store %out, %D[%doff], %ldd, RowMajor : !d, memref<128x256xf16>
  func.return
}
