// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// The steps of an online softmax on Workgroup-scope accumulators (one warpgroup): a Row
// reduction in registers (quad butterflies, no shared memory) to a result of another column
// count, an f16 accumulator converted to MatrixA without moving data, and the P·V product
// taking that A from registers (wgmma's register form: four packed .b32 per K slice of 16).
!L = !tensor_addr.layout<2, Constant>
!a = !coop.matrix<64x32xf16, Workgroup, MatrixA>
!b = !coop.matrix<32x64xf16, Workgroup, MatrixB>
!v = !coop.matrix<64x32xf16, Workgroup, MatrixB>
!s = !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
!h = !coop.matrix<64x64xf16, Workgroup, MatrixAcc>
!p = !coop.matrix<64x64xf16, Workgroup, MatrixA>
!o = !coop.matrix<64x32xf32, Workgroup, MatrixAcc>
func.func @max(%a: f32, %b: f32) -> f32 {
  %r = arith.maximumf %a, %b : f32
  func.return %r : f32
}
func.func @sub(%r: i32, %c: i32, %x: f32, %m: f32) -> f32 {
  %y = arith.subf %x, %m : f32
  func.return %y : f32
}
func.func @k(%Q: memref<64x32xf16>, %Kt: memref<32x64xf16>, %V: memref<64x32xf16>,
             %O: memref<64x32xf32>) attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %l0 = tensor_addr.create_layout : !L
  %lq = tensor_addr.layout_set_dimension %l0, %c64, %c32 : !L
  %lk = tensor_addr.layout_set_dimension %l0, %c32, %c64 : !L
  %zh = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %oa = coop.composite_construct %zh : f16 -> !a
  %ob = coop.composite_construct %zh : f16 -> !b
  %ov = coop.composite_construct %zh : f16 -> !v
  %zs = coop.composite_construct %zf : f32 -> !s
  %zo = coop.composite_construct %zf : f32 -> !o
  %q = coop.load_tensor %Q, %oa, %lq : memref<64x32xf16>, !a, !L -> !a
  %k = coop.load_tensor %Kt, %ob, %lk : memref<32x64xf16>, !b, !L -> !b
  %st = coop.mul_add %q, %k, %zs : !a, !b, !s -> !s
  %mx = coop.reduce Row %st, @max : !s -> !s
  %mo = coop.reduce Row %st, @max : !s -> !o
  %d = coop.per_element_op @sub(%st, %mx) : !s, !s -> !s
  %dh = coop.f_convert %d : !s -> !h
  %pa = coop.convert %dh : !h -> !p
  %vb = coop.load_tensor %V, %ov, %lq : memref<64x32xf16>, !v, !L -> !v
  %o = coop.mul_add %pa, %vb, %mo : !p, !v, !o -> !o
  %lo = tensor_addr.layout_slice %lq, %c0, %c64, %c0, %c32 : !L
  coop.store_tensor %o, %O, %lo : !o, memref<64x32xf32>, !L
  func.return
}
// CHECK:      // coop.mul_add 64x64x32: 2 x wgmma.mma_async (m64n64k16.f32.f16.f16) per warpgroup: 2 K slices x 1 64-row blocks x 1 N chunks (1 warpgroups)
// CHECK:      wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT: // coop.reduce Row 64x64 -> 64x64 Workgroup (@max inlined per tree node; one 16-row tile per warp)
// CHECK-NOT:  bar.sync
// CHECK-NOT:  st.shared
// CHECK-COUNT-2: shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK:      // coop.reduce Row 64x64 -> 64x32 Workgroup
// CHECK-NOT:  st.shared
// CHECK:      // coop.convert 64x64 MatrixAcc -> MatrixA Workgroup: the same registers (wgmma's register A fragment)
// CHECK-NOT:  st.shared
// CHECK:      // coop.load_tensor -> 64x32 MatrixB staged in shared memory
// CHECK:      // coop.mul_add 64x32x64: 4 x wgmma.mma_async (m64n32k16.f32.f16.f16) per warpgroup: 4 K slices x 1 64-row blocks x 1 N chunks (1 warpgroups), A in registers
// CHECK:      mov.b32 %r{{[0-9]+}}, {%h{{[0-9]+}}, %h{{[0-9]+}}};
// CHECK:      wgmma.fence.sync.aligned;
// V (64x32, rows of 16-byte groups along N) is staged MN-major: imm-trans-b 1.
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {{{(%f[0-9]+, ){15}%f[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, 1, 1, 1, 1;
// CHECK-NEXT: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
