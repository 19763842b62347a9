// RUN: coop-opt %s -p convert-coop-to-ptx -t ptx | filecheck %s
// Tensor-addressed loads/stores and a row reduction at subgroup scope. A constant layout folds
// to immediate offsets (no division); a run-time slice in Constant mode tests bounds per element
// and selects clampValue; reduce Row combines within the lane, then butterflies 1 and 2; the
// CombineFunc is inlined, not a kernel.
!Lu = !tensor_addr.layout<2, Undefined>
!Lc = !tensor_addr.layout<2, Constant>
!m = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @add(%a: f32, %b: f32) -> f32 {
  %r = arith.addf %a, %b : f32
  func.return %r : f32
}
func.func @k(%X: memref<32x16xf32>, %Y: memref<32x16xf32>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %R = arith.constant 32 : i32
  %C = arith.constant 16 : i32
  %t16 = arith.constant 16 : i32
  %z = arith.constant 0 : i32
  %bits = arith.constant 1065353216 : i32
  %wy = gpu.block_id y
  %r = arith.index_cast %wy : index to i32
  %u0 = tensor_addr.create_layout : !Lu
  %u1 = tensor_addr.layout_set_dimension %u0, %R, %C : !Lu
  %u2 = tensor_addr.layout_slice %u1, %t16, %t16, %z, %t16 : !Lu
  %c0 = tensor_addr.create_layout : !Lc
  %c1 = tensor_addr.layout_set_dimension %c0, %R, %C : !Lc
  %c2 = tensor_addr.layout_set_clamp_value %c1, %bits : !Lc
  %c3 = tensor_addr.layout_slice %c2, %r, %t16, %z, %t16 : !Lc
  %zf = arith.constant 0.0 : f32
  %o = coop.composite_construct %zf : f32 -> !m
  %a = coop.load_tensor %X, %o, %u2 : memref<32x16xf32>, !m, !Lu -> !m
  %b = coop.load_tensor %X, %o, %c3 : memref<32x16xf32>, !m, !Lc -> !m
  %s = coop.reduce Row %b, @add : !m -> !m
  coop.store_tensor %a, %Y, %u2 : !m, memref<32x16xf32>, !Lu
  coop.store_tensor %s, %Y, %c3 : !m, memref<32x16xf32>, !Lc
  func.return
}
// CHECK-NOT:  .entry add
// CHECK:      .visible .entry k(
// CHECK:      // coop.load_tensor -> 16x16xf32 MatrixAcc, clamp Undefined
// CHECK-NOT:  {{div|rem}}
// CHECK:      ld.global.f32 %f{{[0-9]+}}, [%rd[[A:[0-9]+]]+1024];
// CHECK-NEXT: ld.global.f32 %f{{[0-9]+}}, [%rd[[A]]+1028];
// CHECK:      // coop.load_tensor -> 16x16xf32 MatrixAcc, clamp Constant
// CHECK:      setp.lt.s64
// CHECK:      selp.b64
// CHECK:      ld.global.f32
// CHECK:      selp.f32
// CHECK:      // coop.reduce Row 16x16 -> 16x16 (@add inlined per tree node)
// CHECK:      add.rn.f32
// CHECK:      shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, %r[[M1:[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK:      shfl.sync.bfly.b32
// CHECK:      // coop.store_tensor 16x16xf32, clamp Undefined
// CHECK:      st.global.f32 [%rd{{[0-9]+}}+1024], %f{{[0-9]+}};
// CHECK:      // coop.store_tensor 16x16xf32, clamp Constant
// CHECK:      @!%p{{[0-9]+}} bra $L__k_{{[0-9]+}};
// CHECK:      ret;
