// convert-coop-to-spirv on the remaining tensor-addressing / coopmat2 ops: every layout and view
// instruction, a store through a view, Column and Row|Column reductions, ConvertNV and TransposeNV.
// RUN: coop-opt %s -p convert-coop-to-spirv -t spirv -o %t.spv
// RUN: spirv-val --target-env vulkan1.3 %t.spv
// RUN: spirv-dis %t.spv | filecheck %s

// CHECK-DAG:  OpCapability CooperativeMatrixReductions{{NV|EXT}}
// CHECK-DAG:  OpCapability CooperativeMatrixConversionsNV
// CHECK-DAG:  OpCapability CooperativeMatrixTensorAddressingNV
// RepeatMirrored = 4; a view of Dim 3 with its own dimensions, permutation 2 0 1.
// CHECK-DAG:  %[[L:.*]] = OpTypeTensorLayoutNV %uint_3 %uint_4
// CHECK-DAG:  %[[V:.*]] = OpTypeTensorViewNV %uint_3 %true %uint_2 %uint_0 %uint_1
// CHECK:      OpTensorLayoutSetDimensionNV %[[L]] %{{.*}} %uint_4 %uint_8 %uint_16
// CHECK:      OpTensorLayoutSetBlockSizeNV %[[L]] %{{.*}} %uint_1 %uint_1 %uint_1
// CHECK:      OpTensorLayoutSetStrideNV %[[L]] %{{.*}} %uint_256 %uint_16 %uint_1
// CHECK:      OpTensorLayoutSliceNV %[[L]]
// CHECK:      OpTensorLayoutSetClampValueNV %[[L]] %{{.*}} %uint_7
// CHECK:      OpTensorViewSetDimensionNV %[[V]] %{{.*}} %uint_2 %uint_16 %uint_8
// CHECK:      OpTensorViewSetStrideNV %[[V]] %{{.*}} %uint_128 %uint_8 %uint_1
// CHECK:      OpTensorViewSetClipNV %[[V]] %{{.*}} %uint_0 %uint_16 %uint_0 %uint_16
// CHECK:      OpCooperativeMatrixLoadTensorNV %{{.*}} None TensorView
// CHECK:      OpCooperativeMatrixReduce{{NV|EXT}} %{{.*}} Column %add
// CHECK:      OpCooperativeMatrixReduce{{NV|EXT}} %{{.*}} Row|Column %add
// CHECK:      OpCooperativeMatrixConvert{{NV|UseEXT}}
// CHECK:      OpCooperativeMatrixTransposeNV
// CHECK:      OpCooperativeMatrixStoreTensorNV %{{.*}} None TensorView
!L = !tensor_addr.layout<3, RepeatMirrored>
!V = !tensor_addr.view<3, true, 2, 0, 1>
!m = !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
!c = !coop.matrix<32x16xf16, Subgroup, MatrixAcc>
!s = !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
!b = !coop.matrix<16x16xf16, Subgroup, MatrixB>
func.func @add(%x: f16, %y: f16) -> f16 {
  %r = arith.addf %x, %y : f16
  func.return %r : f16
}
func.func @all_ops(%T: memref<1024xf16>, %O: memref<1024xf16>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c4 = arith.constant 4 : i32
  %c7 = arith.constant 7 : i32
  %c8 = arith.constant 8 : i32
  %c16 = arith.constant 16 : i32
  %c128 = arith.constant 128 : i32
  %c256 = arith.constant 256 : i32
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_set_dimension %l0, %c4, %c8, %c16 : !L
  %l2 = tensor_addr.layout_set_block_size %l1, %c1, %c1, %c1 : !L
  %l3 = tensor_addr.layout_set_stride %l2, %c256, %c16, %c1 : !L
  %l4 = tensor_addr.layout_slice %l3, %c0, %c2, %c0, %c8, %c0, %c16 : !L
  %l5 = tensor_addr.layout_set_clamp_value %l4, %c7 : !L
  %v0 = tensor_addr.create_view : !V
  %v1 = tensor_addr.view_set_dimension %v0, %c2, %c16, %c8 : !V
  %v2 = tensor_addr.view_set_stride %v1, %c128, %c8, %c1 : !V
  %v3 = tensor_addr.view_set_clip %v2, %c0, %c16, %c0, %c16 : !V
  %z = arith.constant 0.0 : f16
  %obj = coop.composite_construct %z : f16 -> !m
  %x = coop.load_tensor %T, %obj, %l5 view %v3 : memref<1024xf16>, !m, !L, !V -> !m
  %col = coop.reduce Column %x, @add : !m -> !c
  %all = coop.reduce Row|Column %x, @add : !m -> !s
  %a = coop.convert %all : !s -> !a
  %b = coop.transpose %all : !s -> !b
  coop.store_tensor %x, %O, %l1 view %v3 : !m, memref<1024xf16>, !L, !V
  func.return
}
