// RUN: coop-opt %s | coop-opt | filecheck %s
// RUN: coop-opt %s --print-op-generic | coop-opt | filecheck %s
// Round trip (custom and generic form) of the tensor_addr ops and the cooperative-matrix-2 coop ops.
!L = !tensor_addr.layout<2, Constant>
!V = !tensor_addr.view<2, false, 1, 0>
!M = !coop.matrix<16x16xf16, Subgroup, MatrixA>
!C = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
!R = !coop.matrix<16x1xf32, Subgroup, MatrixAcc>
func.func @add(%a: f32, %b: f32) -> f32 {
  %c = arith.addf %a, %b : f32
  func.return %c : f32
}
func.func @pe(%r: i32, %c: i32, %x: f32, %s: f32) -> f32 {
  %y = arith.mulf %x, %s : f32
  func.return %y : f32
}
func.func @dec(%p: memref<64xi32>, %i: i32, %b0: i32, %b1: i32, %c0: i32, %c1: i32) -> f16 {
  %x = arith.constant 1.0 : f16
  func.return %x : f16
}
func.func @f(%buf: memref<64x64xf16>, %q: memref<64xi32>, %o: !M, %acc: !C, %s: f32) {
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %c64 = arith.constant 64 : i32
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_set_dimension %l0, %c64, %c64 : !L
  %l2 = tensor_addr.layout_slice %l1, %c16, %c16, %c16, %c16 : !L
  %l3 = tensor_addr.layout_set_stride %l2, %c64, %c1 : !L
  %l4 = tensor_addr.layout_set_block_size %l3, %c1, %c1 : !L
  %l5 = tensor_addr.layout_set_clamp_value %l4, %c16 : !L
  %v0 = tensor_addr.create_view : !V
  %v1 = tensor_addr.view_set_clip %v0, %c16, %c16, %c16, %c16 : !V
  %w0 = tensor_addr.create_view : !tensor_addr.view<3, true, 2, 0, 1>
  %w1 = tensor_addr.view_set_dimension %w0, %c16, %c16, %c1 : !tensor_addr.view<3, true, 2, 0, 1>
  %w2 = tensor_addr.view_set_stride %w1, %c16, %c1, %c1 : !tensor_addr.view<3, true, 2, 0, 1>
  %k = tensor_addr.layout_constant block_size [1, 2] dimension [8, 8] stride [4, 1] offset [-1, 0] span [8, 8] clamp_value 7 : !tensor_addr.layout<2, Repeat>
  %kv = tensor_addr.view_constant dimension [4, 4] stride [4, 1] clip [0, 4294967295, 0, 4294967295] : !tensor_addr.view<2, true, 0, 1>
  %m = coop.load_tensor %buf, %o, %l2 : memref<64x64xf16>, !M, !L -> !M
  %m2 = coop.load_tensor %buf, %o, %l2 view %v1 : memref<64x64xf16>, !M, !L, !V -> !M
  %m3 = coop.load_tensor %q, %o, %l5 decode @dec, <NonPrivatePointer> : memref<64xi32>, !M, !L -> !M
  coop.store_tensor %m2, %buf, %l2 view %v1, <Volatile> : !M, memref<64x64xf16>, !L, !V
  %r = coop.reduce Row|Column %acc, @add : !C -> !R
  %r2 = coop.reduce 2x2 %acc, @add : !C -> !coop.matrix<8x8xf32, Subgroup, MatrixAcc>
  %r3 = coop.reduce Column %acc, @add : !C -> !coop.matrix<4x16xf32, Subgroup, MatrixAcc>
  %p = coop.per_element_op @pe(%acc, %s) : !C, f32 -> !C
  %t = coop.transpose %acc : !C -> !coop.matrix<16x16xf32, Subgroup, MatrixB>
  %cv = coop.convert %acc : !C -> !coop.matrix<16x16xf32, Subgroup, MatrixA>
  func.return
}

// CHECK:      %l0 = tensor_addr.create_layout : !tensor_addr.layout<2, Constant>
// CHECK-NEXT: %l1 = tensor_addr.layout_set_dimension %l0, %c64, %c64 : !tensor_addr.layout<2, Constant>
// CHECK-NEXT: %l2 = tensor_addr.layout_slice %l1, %c16, %c16, %c16, %c16 : !tensor_addr.layout<2, Constant>
// CHECK-NEXT: %l3 = tensor_addr.layout_set_stride %l2, %c64, %c1 : !tensor_addr.layout<2, Constant>
// CHECK-NEXT: %l4 = tensor_addr.layout_set_block_size %l3, %c1, %c1 : !tensor_addr.layout<2, Constant>
// CHECK-NEXT: %l5 = tensor_addr.layout_set_clamp_value %l4, %c16 : !tensor_addr.layout<2, Constant>
// CHECK-NEXT: %v0 = tensor_addr.create_view : !tensor_addr.view<2, false, 1, 0>
// CHECK-NEXT: %v1 = tensor_addr.view_set_clip %v0, %c16, %c16, %c16, %c16 : !tensor_addr.view<2, false, 1, 0>
// CHECK-NEXT: %w0 = tensor_addr.create_view : !tensor_addr.view<3, true, 2, 0, 1>
// CHECK-NEXT: %w1 = tensor_addr.view_set_dimension %w0, %c16, %c16, %c1 : !tensor_addr.view<3, true, 2, 0, 1>
// CHECK-NEXT: %w2 = tensor_addr.view_set_stride %w1, %c16, %c1, %c1 : !tensor_addr.view<3, true, 2, 0, 1>
// CHECK-NEXT: %k = tensor_addr.layout_constant block_size [1, 2] dimension [8, 8] stride [4, 1] offset [-1, 0] span [8, 8] clamp_value 7 : !tensor_addr.layout<2, Repeat>
// CHECK-NEXT: %kv = tensor_addr.view_constant dimension [4, 4] stride [4, 1] clip [0, 4294967295, 0, 4294967295] : !tensor_addr.view<2, true, 0, 1>
// CHECK-NEXT: %m = coop.load_tensor %buf, %o, %l2 : memref<64x64xf16>, !coop.matrix<16x16xf16, Subgroup, MatrixA>, !tensor_addr.layout<2, Constant> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
// CHECK-NEXT: %m2 = coop.load_tensor %buf, %o, %l2 view %v1 : memref<64x64xf16>, !coop.matrix<16x16xf16, Subgroup, MatrixA>, !tensor_addr.layout<2, Constant>, !tensor_addr.view<2, false, 1, 0> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
// CHECK-NEXT: %m3 = coop.load_tensor %q, %o, %l5 decode @dec, <NonPrivatePointer> : memref<64xi32>, !coop.matrix<16x16xf16, Subgroup, MatrixA>, !tensor_addr.layout<2, Constant> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
// CHECK-NEXT: coop.store_tensor %m2, %buf, %l2 view %v1, <Volatile> : !coop.matrix<16x16xf16, Subgroup, MatrixA>, memref<64x64xf16>, !tensor_addr.layout<2, Constant>, !tensor_addr.view<2, false, 1, 0>
// CHECK-NEXT: %r = coop.reduce Row|Column %acc, @add : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x1xf32, Subgroup, MatrixAcc>
// CHECK-NEXT: %r2 = coop.reduce 2x2 %acc, @add : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<8x8xf32, Subgroup, MatrixAcc>
// CHECK-NEXT: %r3 = coop.reduce Column %acc, @add : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<4x16xf32, Subgroup, MatrixAcc>
// CHECK-NEXT: %p = coop.per_element_op @pe(%acc, %s) : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, f32 -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
// CHECK-NEXT: %t = coop.transpose %acc : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixB>
// CHECK-NEXT: %cv = coop.convert %acc : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixA>
