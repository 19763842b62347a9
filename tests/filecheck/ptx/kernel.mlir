// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// RUN: coop-opt %examples/gemm_f16.mlir -p convert-coop-to-ptx -t ptx | filecheck %s --check-prefix=F16
// RUN: coop-opt %examples/gemm_s8.mlir -p convert-coop-to-ptx -t ptx | filecheck %s --check-prefix=S8
// RUN: coop-opt %examples/gemm_f16.mlir -p 'convert-coop-to-ptx{target=sm_80}' -t ptx | filecheck %s --check-prefix=SM80
// The kernel convention: memref arguments -> .param .u64 + cvta.to.global; gpu ids -> special
// registers; index arithmetic in .s64; scf.for -> header block with setp/@p bra, back edge
// copying the iteration values.
!c = !coop.matrix<16x8xf32, Subgroup, MatrixAcc>
func.func @loop(%C: memref<4096xf32>) attributes {coop.workgroup_size = array<i32: 64, 2, 1>} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %n = arith.constant 4 : index
  %wx = gpu.block_id x
  %sg = gpu.subgroup_id : index
  %t = gpu.thread_id y
  %o = arith.muli %wx, %c8 : index
  %o2 = arith.addi %o, %sg : index
  %o3 = arith.addi %o2, %t : index
  %init = coop.load %C[%o3], %c8, RowMajor : memref<4096xf32> -> !c
  %r = scf.for %i = %c0 to %n step %c8 iter_args(%x = %init) -> (!c) {
    %y = coop.fadd %x, %x : !c
    scf.yield %y : !c
  }
  coop.store %r, %C[%o3], %c8, RowMajor : !c, memref<4096xf32>
  func.return
}
// CHECK:      .visible .entry loop(
// CHECK-NEXT:   .param .u64 loop_param_C
// CHECK-NEXT: )
// CHECK-NEXT: .reqntid 64, 2, 1
// CHECK:      ld.param.u64 %rd0, [loop_param_C];
// CHECK-NEXT: cvta.to.global.u64 %rd1, %rd0;
// CHECK:      mov.u32 %r{{[0-9]+}}, %ctaid.x;
// CHECK:      mov.u32 %r{{[0-9]+}}, %tid.y;
// CHECK:      mad.lo.u32
// CHECK:      shr.u32
// CHECK:      setp.ge.s64 %p0, %rd[[IV:[0-9]+]], %rd{{[0-9]+}};
// CHECK-NEXT: @%p0 bra $L__loop_3;
// CHECK-NEXT: $L__loop_2:
// CHECK:      add.rn.f32
// CHECK:      add.s64 %rd[[NEXT:[0-9]+]], %rd[[IV]], %rd{{[0-9]+}};
// CHECK-NEXT: mov.b64 %rd[[IV]], %rd[[NEXT]];
// CHECK:      bra.uni $L__loop_1;
// CHECK-NEXT: $L__loop_3:
// CHECK:      ret;

// F16:      .visible .entry gemm_f16(
// F16-COUNT-8: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// F16:      bra.uni $L__gemm_f16_1;
// S8:       .visible .entry gemm_s8(
// S8-COUNT-2: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
// SM80:     .version 7.0
// SM80-NEXT: .target sm_80
