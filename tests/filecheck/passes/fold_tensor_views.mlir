// RUN: coop-opt %s -p fold-tensor-views | filecheck %s
// RUN: coop-opt %s -p fold-tensor-views | coop-opt -p fold-tensor-views | filecheck %s
!L = !tensor_addr.layout<2, Constant>
!V = !tensor_addr.view<2, true, 1, 0>
!M = !coop.matrix<16x16xf16, Subgroup, MatrixA>

// A fully-constant chain becomes one op holding the final state.
// CHECK-LABEL: func.func @constant_chain
// CHECK-NEXT:    %{{.*}} = tensor_addr.layout_constant block_size [1, 1] dimension [64, 32] stride [40, 1] offset [18, 6] span [16, 16] clamp_value 16896 : !tensor_addr.layout<2, Constant>
// CHECK-NEXT:    %{{.*}} = coop.load_tensor
func.func @constant_chain(%p: memref<4096xf16>, %o: !M) -> !M {
  %c2 = arith.constant 2 : i32
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  %c40 = arith.constant 40 : i32
  %c64 = arith.constant 64 : i32
  %c1 = arith.constant 1 : i32
  %cv = arith.constant 16896 : i32
  %c0_ = arith.constant 0 : i32
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_set_dimension %l0, %c64, %c32 : !L
  %l2 = tensor_addr.layout_set_stride %l1, %c40, %c1 : !L
  %l3 = tensor_addr.layout_slice %l2, %c16, %c32, %c2, %c16 : !L
  %l4 = tensor_addr.layout_slice %l3, %c2, %c16, %c2, %c16 : !L
  %l5 = tensor_addr.layout_set_clamp_value %l4, %cv : !L
  %l6 = tensor_addr.layout_slice %l5, %c0_, %c16, %c2, %c16 : !L
  %m = coop.load_tensor %p, %o, %l6 : memref<4096xf16>, !M, !L -> !M
  func.return %m : !M
}

// set_dimension resets offset, span and stride: an earlier dynamic slice and stride are dropped.
// CHECK-LABEL: func.func @overwritten
// CHECK-NEXT:    %{{.*}} = tensor_addr.create_layout : !tensor_addr.layout<2, Constant>
// CHECK-NEXT:    %{{.*}} = tensor_addr.layout_set_dimension %{{.*}}, %d, %d : !tensor_addr.layout<2, Constant>
// CHECK-NEXT:    %{{.*}} = tensor_addr.layout_slice %{{.*}}, %o0, %d, %o0, %d : !tensor_addr.layout<2, Constant>
// CHECK-NEXT:    %{{.*}} = coop.load_tensor
func.func @overwritten(%p: memref<4096xf16>, %o: !M, %d: i32, %o0: i32, %s: i32) -> !M {
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_slice %l0, %o0, %s, %o0, %s : !L
  %l2 = tensor_addr.layout_set_stride %l1, %s, %s : !L
  %l3 = tensor_addr.layout_set_dimension %l2, %d, %d : !L
  %l4 = tensor_addr.layout_slice %l3, %o0, %d, %o0, %d : !L
  %m = coop.load_tensor %p, %o, %l4 : memref<4096xf16>, !M, !L -> !M
  func.return %m : !M
}

// Two dynamic slices merge (offsets add); a stride set between them commutes; a second stride
// set makes the first dead.
// CHECK-LABEL: func.func @merge_slices
// CHECK:         %[[A:.*]] = arith.addi %a, %b : i32
// CHECK-NEXT:    %[[B:.*]] = arith.addi %b, %a : i32
// CHECK-NEXT:    %[[S:.*]] = tensor_addr.layout_slice %{{.*}}, %[[A]], %s2, %[[B]], %s2 : !tensor_addr.layout<2, Constant>
// CHECK-NEXT:    %{{.*}} = tensor_addr.layout_set_stride %[[S]], %t2, %t2 : !tensor_addr.layout<2, Constant>
// CHECK-NEXT:    %{{.*}} = coop.load_tensor
func.func @merge_slices(%p: memref<4096xf16>, %o: !M, %d: i32, %a: i32, %b: i32, %s1: i32, %s2: i32, %t1: i32, %t2: i32) -> !M {
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_set_dimension %l0, %d, %d : !L
  %l2 = tensor_addr.layout_slice %l1, %a, %s1, %b, %s1 : !L
  %l3 = tensor_addr.layout_set_stride %l2, %t1, %t1 : !L
  %l4 = tensor_addr.layout_slice %l3, %b, %s2, %a, %s2 : !L
  %l5 = tensor_addr.layout_set_stride %l4, %t2, %t2 : !L
  %m = coop.load_tensor %p, %o, %l5 : memref<4096xf16>, !M, !L -> !M
  func.return %m : !M
}

// A value used twice keeps its exact state; only the chain after it folds.
// CHECK-LABEL: func.func @shared
// CHECK-NEXT:    tensor_addr.create_layout
// CHECK-NEXT:    %[[D:.*]] = tensor_addr.layout_set_dimension %{{.*}}, %d, %d
// CHECK-NEXT:    %{{.*}} = tensor_addr.layout_set_clamp_value %[[D]], %v
// CHECK-NEXT:    %{{.*}} = tensor_addr.layout_slice %[[D]], %v, %d, %v, %d
func.func @shared(%p: memref<4096xf16>, %o: !M, %d: i32, %v: i32) -> !M {
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_set_dimension %l0, %d, %d : !L
  %l2 = tensor_addr.layout_set_clamp_value %l1, %d : !L
  %l3 = tensor_addr.layout_set_clamp_value %l2, %v : !L
  %l4 = tensor_addr.layout_slice %l1, %v, %d, %v, %d : !L
  %m = coop.load_tensor %p, %o, %l3 : memref<4096xf16>, !M, !L -> !M
  %n = coop.load_tensor %p, %m, %l4 : memref<4096xf16>, !M, !L -> !M
  func.return %n : !M
}

// Views: a constant chain becomes view_constant; the first of two clip sets is dead; a chain
// that builds the created default state is just create_view.
// CHECK-LABEL: func.func @views
// CHECK-NEXT:    %{{.*}} = tensor_addr.layout_constant
// CHECK-NEXT:    %[[V:.*]] = tensor_addr.view_constant dimension [4, 64] stride [64, 1] clip [0, 4294967295, 0, 4294967295] : !tensor_addr.view<2, true, 1, 0>
// CHECK-NEXT:    %[[W:.*]] = tensor_addr.view_set_clip %[[V]], %r, %r, %r, %r
// CHECK-NEXT:    %[[X:.*]] = tensor_addr.create_view : !tensor_addr.view<2, true, 1, 0>
func.func @views(%p: memref<4096xf16>, %o: !M, %r: i32) -> !M {
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  %c64 = arith.constant 64 : i32
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_set_dimension %l0, %c64, %c64 : !L
  %v0 = tensor_addr.create_view : !V
  %v1 = tensor_addr.view_set_dimension %v0, %c4, %c64 : !V
  %v2 = tensor_addr.view_set_clip %v1, %r, %c4, %r, %c4 : !V
  %v3 = tensor_addr.view_set_clip %v2, %r, %r, %r, %r : !V
  %w1 = tensor_addr.view_set_stride %v0, %c0, %c0 : !V
  %m = coop.load_tensor %p, %o, %l1 view %v3 : memref<4096xf16>, !M, !L, !V -> !M
  %n = coop.load_tensor %p, %m, %l1 view %w1 : memref<4096xf16>, !M, !L, !V -> !M
  func.return %n : !M
}
