// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// Workgroup scope over two warpgroups (256 invocations): A 128x64 and B 64x256 staged from
// load_tensor (16-byte vector path behind a uniform alignment test, element path otherwise),
// one barrier pair for both tiles, then four chained m64n256k16 wgmma per warpgroup.
!L = !tensor_addr.layout<2, Undefined>
!a = !coop.matrix<128x64xf16, Workgroup, MatrixA>
!b = !coop.matrix<64x256xf16, Workgroup, MatrixB>
!c = !coop.matrix<128x256xf32, Workgroup, MatrixAcc>
func.func @gemm_coopmat2(%A: memref<128x64xf16>, %B: memref<64x256xf16>, %C: memref<128x256xf32>)
    attributes {coop.workgroup_size = array<i32: 256, 1, 1>} {
  %M = arith.constant 128 : i32
  %N = arith.constant 256 : i32
  %K = arith.constant 64 : i32
  %tm = arith.constant 128 : i32
  %tn = arith.constant 256 : i32
  %tk = arith.constant 64 : i32
  %c0 = arith.constant 0 : index
  %ctk = arith.constant 64 : index
  %ctm = arith.constant 128 : index
  %ctn = arith.constant 256 : index
  %kend = arith.constant 64 : index
  %l0 = tensor_addr.create_layout : !L
  %la = tensor_addr.layout_set_dimension %l0, %M, %K : !L
  %lb = tensor_addr.layout_set_dimension %l0, %K, %N : !L
  %lc = tensor_addr.layout_set_dimension %l0, %M, %N : !L
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %r0 = arith.muli %wy, %ctm : index
  %n0 = arith.muli %wx, %ctn : index
  %row0 = arith.index_cast %r0 : index to i32
  %col0 = arith.index_cast %n0 : index to i32
  %zh = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %oa = coop.composite_construct %zh : f16 -> !a
  %ob = coop.composite_construct %zh : f16 -> !b
  %init = coop.composite_construct %zf : f32 -> !c
  %acc = scf.for %kk = %c0 to %kend step %ctk iter_args(%d = %init) -> (!c) {
    %k32 = arith.index_cast %kk : index to i32
    %las = tensor_addr.layout_slice %la, %row0, %tm, %k32, %tk : !L
    %lbs = tensor_addr.layout_slice %lb, %k32, %tk, %col0, %tn : !L
    %av = coop.load_tensor %A, %oa, %las : memref<128x64xf16>, !a, !L -> !a
    %bv = coop.load_tensor %B, %ob, %lbs : memref<64x256xf16>, !b, !L -> !b
    %e = coop.mul_add %av, %bv, %d : !a, !b, !c -> !c
    scf.yield %e : !c
  }
  %lcs = tensor_addr.layout_slice %lc, %row0, %tm, %col0, %tn : !L
  coop.store_tensor %acc, %C, %lcs : !c, memref<128x256xf32>, !L
  func.return
}
// CHECK:      .reqntid 256, 1, 1
// CHECK:      .shared .align 128 .b8 gemm_coopmat2_smem0[16384];
// CHECK-NEXT: .shared .align 128 .b8 gemm_coopmat2_smem1[32768];
// CHECK:      // coop.load_tensor -> 128x64 MatrixA staged in shared memory (32 elements per invocation), clamp Undefined
// CHECK-NEXT: bar.sync 0;
// CHECK:      setp.eq.b64 %p[[AL:[0-9]+]],
// CHECK-NEXT: @!%p[[AL]] bra $L__gemm_coopmat2_[[SCALAR:[0-9]+]];
// CHECK:      ld.global.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}];
// CHECK:      st.shared.v4.b32 [%rd{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK:      $L__gemm_coopmat2_[[SCALAR]]:
// CHECK:      ld.global.b16
// CHECK-NOT:  bar.sync
// CHECK:      // coop.load_tensor -> 64x256 MatrixB staged in shared memory (64 elements per invocation), clamp Undefined
// CHECK-NOT:  bar.sync
// CHECK:      ld.global.v4.b32
// CHECK:      fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.sync 0;
// CHECK-NEXT: // coop.mul_add 128x256x64: 4 x wgmma.mma_async (m64n256k16.f32.f16.f16) per warpgroup: 4 K slices x 1 64-row blocks x 1 N chunks (2 warpgroups)
// CHECK:      wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// The tile store: whole-row pairs when the tile lies inside the tensor, else
// element by element under the tensor layout's bounds.
// CHECK:      // coop.store_tensor 128x256 tile: whole rows when it is inside the tensor and pair-aligned, else element by element
// CHECK:      @!%p[[INSIDE:[0-9]+]] bra $L__gemm_coopmat2_[[SLOW:[0-9]+]];
// CHECK:      st.global.v2.f32
// CHECK:      $L__gemm_coopmat2_[[SLOW]]:
// CHECK-NEXT: @%p[[INSIDE]] bra
// CHECK:      st.global.f32
