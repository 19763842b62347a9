// RUN: coop-opt %s --split-input-file -p 'legalize-coop-sizes{target=h200-vulkan}' | filecheck %s
// RUN: coop-opt %s --split-input-file -p 'legalize-coop-sizes{target=h200-vulkan flexible=false}' | filecheck %s --check-prefix=TILE
// Padding on the H200 (tensor addressing): a 20x16x16 f16·f16→f32 GEMM whose A is the 20x16
// window at (row 2, column 3) of a row-major buffer of stride 40 (offset 83 = 2·40 + 3), B a
// column-major 16x16 (stride 16) and C at offset 0, stride 16. Padded to 32x16x16 (the
// flexible-dimension granularity 16 keeps it one multiply-add; flexible=false: 2 tiles of 16).
func.func @pad_m(%A: memref<2048xf16>, %B: memref<256xf16>, %C: memref<512xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %o = arith.constant 0 : index
  %oa = arith.constant 83 : index
  %sa = arith.constant 40 : index
  %s = arith.constant 16 : index
  %a = coop.load %A[%oa], %sa, RowMajor : memref<2048xf16> -> !coop.matrix<20x16xf16, Subgroup, MatrixA>
  %b = coop.load %B[%o], %s, ColumnMajor : memref<256xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixB>
  %c = coop.load %C[%o], %s, RowMajor : memref<512xf32> -> !coop.matrix<20x16xf32, Subgroup, MatrixAcc>
  %d = coop.mul_add %a, %b, %c : !coop.matrix<20x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<20x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<20x16xf32, Subgroup, MatrixAcc>
  coop.store %d, %C[%o], %s, RowMajor : !coop.matrix<20x16xf32, Subgroup, MatrixAcc>, memref<512xf32>
  func.return
}
// A: (o0, o1) = (83 div 40, 83 mod 40) = (2, 3); dimension (2 + 20, 3 + 16), stride (40, 1),
// slice (2, 32, 3, 16); clamp mode Constant, clampValue 0 (create_layout's).
// CHECK-LABEL: func.func @pad_m
// CHECK:      %[[O0:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[O1:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[D0:.*]] = arith.constant 22 : i32
// CHECK-NEXT: %[[D1:.*]] = arith.constant 19 : i32
// CHECK-NEXT: %[[S:.*]] = arith.constant 40 : i32
// CHECK-NEXT: %[[L0:.*]] = tensor_addr.create_layout : !tensor_addr.layout<2, Constant>
// CHECK-NEXT: %[[L1:.*]] = tensor_addr.layout_set_dimension %[[L0]], %[[D0]], %[[D1]] : !tensor_addr.layout<2, Constant>
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[L2:.*]] = tensor_addr.layout_set_stride %[[L1]], %[[S]], %[[ONE]] : !tensor_addr.layout<2, Constant>
// CHECK-NEXT: %[[P0:.*]] = arith.constant 32 : i32
// CHECK-NEXT: %[[P1:.*]] = arith.constant 16 : i32
// CHECK-NEXT: %[[LA:.*]] = tensor_addr.layout_slice %[[L2]], %[[O0]], %[[P0]], %[[O1]], %[[P1]] : !tensor_addr.layout<2, Constant>
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f16
// CHECK-NEXT: %[[OBJ:.*]] = coop.composite_construct %[[Z]] : f16 -> !coop.matrix<32x16xf16, Subgroup, MatrixA>
// CHECK-NEXT: %[[A:.*]] = coop.load_tensor %A, %[[OBJ]], %[[LA]] : memref<2048xf16>, !coop.matrix<32x16xf16, Subgroup, MatrixA>, !tensor_addr.layout<2, Constant> -> !coop.matrix<32x16xf16, Subgroup, MatrixA>
// B is native: untouched.
// CHECK-NEXT: %b = coop.load %B[%o], %s, ColumnMajor : memref<256xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixB>
// CHECK:      %[[LC:.*]] = tensor_addr.layout_slice {{.*}} : !tensor_addr.layout<2, Constant>
// CHECK:      %[[CC:.*]] = coop.load_tensor %C, {{.*}}, %[[LC]] : {{.*}} -> !coop.matrix<32x16xf32, Subgroup, MatrixAcc>
// CHECK-NEXT: %[[D:.*]] = coop.mul_add %[[A]], %b, %[[CC]] : !coop.matrix<32x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<32x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<32x16xf32, Subgroup, MatrixAcc>
// The store: through a layout of the true 20x16 extents (out-of-bounds rows 20..31 discarded).
// CHECK:      %[[LS:.*]] = tensor_addr.layout_slice {{.*}} : !tensor_addr.layout<2, Constant>
// CHECK-NEXT: coop.store_tensor %[[D]], %C, %[[LS]] : !coop.matrix<32x16xf32, Subgroup, MatrixAcc>, memref<512xf32>, !tensor_addr.layout<2, Constant>
// CHECK-NOT:  coop.store %
// Tiles: each 16x16 tile reads through the padded layout sliced at (16·i, 16, 0, 16).
// TILE-LABEL: func.func @pad_m
// TILE:       %[[LA:.*]] = tensor_addr.layout_slice {{.*}} : !tensor_addr.layout<2, Constant>
// TILE:       %[[T0:.*]] = tensor_addr.layout_slice %[[LA]], {{.*}} : !tensor_addr.layout<2, Constant>
// TILE-NEXT:  coop.load_tensor %A, %{{.*}}, %[[T0]] : {{.*}} -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
// TILE-NEXT:  %[[R16:.*]] = arith.constant 16 : i32
// TILE-NEXT:  %[[S16:.*]] = arith.constant 16 : i32
// TILE-NEXT:  %[[C0:.*]] = arith.constant 0 : i32
// TILE-NEXT:  %[[C16:.*]] = arith.constant 16 : i32
// TILE-NEXT:  %[[T1:.*]] = tensor_addr.layout_slice %[[LA]], %[[R16]], %[[S16]], %[[C0]], %[[C16]] : !tensor_addr.layout<2, Constant>
// TILE-NEXT:  coop.load_tensor %A, %{{.*}}, %[[T1]] : {{.*}} -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
// TILE-COUNT-2: coop.mul_add {{.*}} -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
// TILE-COUNT-2: coop.store_tensor

// -----

// ColumnMajor B with K = 20 and a dynamic offset: (o0, o1) = (offset div stride, offset mod stride)
// at run time, tensor dimensions (column, row) and the transposing view <2, false, 1, 0>.
func.func @pad_k_dynamic(%A: memref<2048xf16>, %B: memref<2048xf16>, %C: memref<512xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %o = arith.constant 0 : index
  %s = arith.constant 20 : index
  %sc = arith.constant 16 : index
  %x = gpu.block_id x
  %a = coop.load %A[%o], %s, RowMajor : memref<2048xf16> -> !coop.matrix<16x20xf16, Subgroup, MatrixA>
  %b = coop.load %B[%x], %s, ColumnMajor : memref<2048xf16> -> !coop.matrix<20x16xf16, Subgroup, MatrixB>
  %c = coop.load %C[%o], %sc, RowMajor : memref<512xf32> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  %d = coop.mul_add %a, %b, %c : !coop.matrix<16x20xf16, Subgroup, MatrixA>, !coop.matrix<20x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  coop.store %d, %C[%o], %sc, RowMajor : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, memref<512xf32>
  func.return
}
// K = 20 pads to 24 (16x8x8 tiles give the smallest padded volume: 16x16x24 < 16x16x32).
// CHECK-LABEL: func.func @pad_k_dynamic
// CHECK:      coop.load_tensor %A, {{.*}} -> !coop.matrix<16x8xf16, Subgroup, MatrixA>
// CHECK:      %[[OFF:.*]] = arith.index_cast %x : index to i32
// CHECK-NEXT: %[[S:.*]] = arith.index_cast %s : index to i32
// CHECK-NEXT: %[[O0:.*]] = arith.divui %[[OFF]], %[[S]] : i32
// CHECK-NEXT: %[[O1:.*]] = arith.remui %[[OFF]], %[[S]] : i32
// CHECK:      %[[V:.*]] = tensor_addr.create_view : !tensor_addr.view<2, false, 1, 0>
// CHECK:      coop.load_tensor %B, %{{.*}}, %{{.*}} view %[[V]] : memref<2048xf16>, !coop.matrix<8x8xf16, Subgroup, MatrixB>, !tensor_addr.layout<2, Constant>, !tensor_addr.view<2, false, 1, 0> -> !coop.matrix<8x8xf16, Subgroup, MatrixB>
// C and the result keep their 16x16 extents (tiled 16x8): plain loads and stores.
// CHECK-COUNT-6: coop.mul_add {{.*}} -> !coop.matrix<16x8xf32, Subgroup, MatrixAcc>
// CHECK:      coop.store %{{.*}}, %C[%o], %sc, RowMajor
// CHECK-NOT:  coop.store_tensor
