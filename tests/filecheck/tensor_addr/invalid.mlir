// RUN: coop-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// RUN: not coop-opt %s 2>&1 | filecheck %s --check-prefix=ONELINE
// Every verifier rule of tensor_addr and of the cooperative-matrix-2 coop ops, one per chunk.
// ONELINE: invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error: {{.*}}
// ONELINE-NOT: Traceback

// OpTypeTensorLayoutNV: Dim in [1, 5]
func.func private @f(!tensor_addr.layout<6, Constant>)
// CHECK: Dim must be greater than zero and less than or equal to 5, got 6 (OpTypeTensorLayoutNV)
// -----
func.func private @f(!tensor_addr.layout<0, Constant>)
// CHECK: Dim must be greater than zero and less than or equal to 5, got 0 (OpTypeTensorLayoutNV)
// -----
// OpTypeTensorLayoutNV: ClampMode is a Tensor Clamp Mode
func.func private @f(!tensor_addr.layout<2, Wrap>)
// CHECK: Expected `Undefined`, `Constant`, `ClampToEdge`, `Repeat`, or `RepeatMirrored`
// -----
// OpTypeTensorViewNV: Dim in [1, 5]
func.func private @f(!tensor_addr.view<7, true>)
// CHECK: Dim must be greater than zero and less than or equal to 5, got 7 (OpTypeTensorViewNV)
// -----
// OpTypeTensorViewNV: the p's form a valid permutation of [0, Dim)
func.func private @f(!tensor_addr.view<3, true, 0, 1, 1>)
// CHECK: p0..p2 must form a valid permutation of the range [0,3), got [0, 1, 1] (OpTypeTensorViewNV)
// -----
// OpTypeTensorViewNV: one p per dimension
func.func private @f(!tensor_addr.view<3, false, 1, 0>)
// CHECK: a tensor view of Dim 3 needs 3 permutation values p0..p2, got 2
// -----
// OpCreateTensorLayoutNV: Result Type must be OpTypeTensorLayoutNV
%l = "tensor_addr.create_layout"() : () -> !tensor_addr.view<2, true, 0, 1>
// CHECK: Result Type must be OpTypeTensorLayoutNV (OpCreateTensorLayoutNV)
// -----
// OpCreateTensorViewNV: Result Type must be OpTypeTensorViewNV
%v = "tensor_addr.create_view"() : () -> !tensor_addr.layout<2, Undefined>
// CHECK: Result Type must be OpTypeTensorViewNV (OpCreateTensorViewNV)
// -----
// OpTensorLayoutSetDimensionNV: the number of Dim operands must match the dimension
%c = arith.constant 4 : i32
%l0 = tensor_addr.create_layout : !tensor_addr.layout<2, Undefined>
%l1 = tensor_addr.layout_set_dimension %l0, %c : !tensor_addr.layout<2, Undefined>
// CHECK: The number of Dim operands must match the dimension of Result Type (2), got 1 (OpTensorLayoutSetDimensionNV)
// -----
// OpTensorLayoutSetStrideNV: the number of Stride operands must match the dimension
%c = arith.constant 4 : i32
%l0 = tensor_addr.create_layout : !tensor_addr.layout<1, Undefined>
%l1 = tensor_addr.layout_set_stride %l0, %c, %c : !tensor_addr.layout<1, Undefined>
// CHECK: The number of Stride operands must match the dimension of Result Type (1), got 2 (OpTensorLayoutSetStrideNV)
// -----
// OpTensorLayoutSetBlockSizeNV: the number of BlockSize operands must match the dimension
%c = arith.constant 4 : i32
%l0 = tensor_addr.create_layout : !tensor_addr.layout<3, Undefined>
%l1 = tensor_addr.layout_set_block_size %l0, %c : !tensor_addr.layout<3, Undefined>
// CHECK: The number of BlockSize operands must match the dimension of Result Type (3), got 1 (OpTensorLayoutSetBlockSizeNV)
// -----
// OpTensorLayoutSliceNV: Offset and Span operands must each match the dimension
%c = arith.constant 4 : i32
%l0 = tensor_addr.create_layout : !tensor_addr.layout<2, Undefined>
%l1 = tensor_addr.layout_slice %l0, %c, %c, %c : !tensor_addr.layout<2, Undefined>
// CHECK: The number of Offset and Span operands must each match the dimension of Result Type (2 pairs), got 3 (OpTensorLayoutSliceNV)
// -----
// OpTensorLayoutSetClampValueNV: one Value
%c = arith.constant 4 : i32
%l0 = tensor_addr.create_layout : !tensor_addr.layout<2, Constant>
%l1 = tensor_addr.layout_set_clamp_value %l0, %c, %c : !tensor_addr.layout<2, Constant>
// CHECK: exactly one Value operand is needed, got 2 (OpTensorLayoutSetClampValueNV)
// -----
// OpTensorViewSetDimensionNV: the number of Dim operands must match the dimension
%c = arith.constant 4 : i32
%v0 = tensor_addr.create_view : !tensor_addr.view<2, true, 0, 1>
%v1 = tensor_addr.view_set_dimension %v0, %c, %c, %c : !tensor_addr.view<2, true, 0, 1>
// CHECK: The number of Dim operands must match the dimension of Result Type (2), got 3 (OpTensorViewSetDimensionNV)
// -----
// OpTensorViewSetStrideNV: the number of Stride operands must match the dimension
%c = arith.constant 4 : i32
%v0 = tensor_addr.create_view : !tensor_addr.view<2, true, 0, 1>
%v1 = tensor_addr.view_set_stride %v0, %c : !tensor_addr.view<2, true, 0, 1>
// CHECK: The number of Stride operands must match the dimension of Result Type (2), got 1 (OpTensorViewSetStrideNV)
// -----
// OpTensorViewSetClipNV: four Clip operands
%c = arith.constant 4 : i32
%v0 = tensor_addr.create_view : !tensor_addr.view<2, true, 0, 1>
%v1 = tensor_addr.view_set_clip %v0, %c, %c : !tensor_addr.view<2, true, 0, 1>
// CHECK: four Clip operands are needed (ClipRowOffset, ClipRowSpan, ClipColOffset, ClipColSpan), got 2 (OpTensorViewSetClipNV)
// -----
// Operands must each be a scalar 32-bit integer type
%c = arith.constant 4 : i64
%l0 = tensor_addr.create_layout : !tensor_addr.layout<1, Undefined>
%l1 = "tensor_addr.layout_set_dimension"(%l0, %c) : (!tensor_addr.layout<1, Undefined>, i64) -> !tensor_addr.layout<1, Undefined>
// CHECK: The Dim operands must each be a scalar 32-bit integer type, operand 0 has type i64 (OpTensorLayoutSetDimensionNV)
// -----
// The type of TensorLayout must be Result Type
%c = arith.constant 4 : i32
%l0 = tensor_addr.create_layout : !tensor_addr.layout<1, Undefined>
%l1 = "tensor_addr.layout_set_dimension"(%l0, %c) : (!tensor_addr.layout<1, Undefined>, i32) -> !tensor_addr.layout<1, Constant>
// CHECK: The type of TensorLayout must be Result Type: !tensor_addr.layout<1, Undefined> vs !tensor_addr.layout<1, Constant> (OpTensorLayoutSetDimensionNV)
// -----
// The type of TensorView must be Result Type
%c = arith.constant 4 : i32
%v0 = tensor_addr.create_view : !tensor_addr.view<1, true, 0>
%v1 = "tensor_addr.view_set_dimension"(%v0, %c) : (!tensor_addr.view<1, true, 0>, i32) -> !tensor_addr.view<1, false, 0>
// CHECK: The type of TensorView must be Result Type: !tensor_addr.view<1, true, 0> vs !tensor_addr.view<1, false, 0> (OpTensorViewSetDimensionNV)
// -----
// A layout op's Result Type must be a tensor layout
%c = arith.constant 4 : i32
%v0 = tensor_addr.create_view : !tensor_addr.view<1, true, 0>
%v1 = "tensor_addr.layout_set_dimension"(%v0, %c) : (!tensor_addr.view<1, true, 0>, i32) -> !tensor_addr.view<1, true, 0>
// CHECK: Result Type must be OpTypeTensorLayoutNV (OpTensorLayoutSetDimensionNV)
// -----
// OpTensorLayoutSetStrideNV: Stride<i> >= Stride<i+1> * ceiling(layoutDimension[i+1] / blockSize[i+1])
%c1 = arith.constant 1 : i32
%c2 = arith.constant 2 : i32
%c8 = arith.constant 8 : i32
%c15 = arith.constant 15 : i32
%l0 = tensor_addr.create_layout : !tensor_addr.layout<2, Undefined>
%l1 = tensor_addr.layout_set_block_size %l0, %c1, %c2 : !tensor_addr.layout<2, Undefined>
%l2 = tensor_addr.layout_set_dimension %l1, %c8, %c8 : !tensor_addr.layout<2, Undefined>
%l3 = tensor_addr.layout_set_stride %l2, %c2, %c1 : !tensor_addr.layout<2, Undefined>
// CHECK: Stride<i> must be at least Stride<i+1> * ceiling(layoutDimension[i+1] / blockSize[i+1]): stride[0] = 2 is less than stride[1] * ceiling(8 / 2) = 4 (OpTensorLayoutSetStrideNV)
// -----
// OpTensorLayoutSliceNV: Stride<i> must be at least Stride<i+1> times layoutDimension[i+1]
%c1 = arith.constant 1 : i32
%c8 = arith.constant 8 : i32
%l0 = tensor_addr.create_layout : !tensor_addr.layout<2, Undefined>
%l1 = tensor_addr.layout_set_stride %l0, %c1, %c1 : !tensor_addr.layout<2, Undefined>
%l2 = tensor_addr.layout_set_block_size %l1, %c1, %c1 : !tensor_addr.layout<2, Undefined>
%l3 = "tensor_addr.layout_set_dimension"(%l0, %c8, %c8) : (!tensor_addr.layout<2, Undefined>, i32, i32) -> !tensor_addr.layout<2, Undefined>
%l4 = tensor_addr.layout_constant block_size [1, 1] dimension [8, 8] stride [1, 1] offset [0, 0] span [8, 8] clamp_value 0 : !tensor_addr.layout<2, Undefined>
%l5 = tensor_addr.layout_slice %l4, %c1, %c1, %c1, %c1 : !tensor_addr.layout<2, Undefined>
// CHECK: Stride<i> must be at least Stride<i+1> times layoutDimension[i+1] (in blocks): stride[0] = 1 is less than stride[1] * ceiling(8 / 1) = 8 (OpTensorLayoutSliceNV)
// -----
// layout_constant: one value per dimension
%l = tensor_addr.layout_constant block_size [1] dimension [8, 8] stride [8, 1] offset [0, 0] span [8, 8] clamp_value 0 : !tensor_addr.layout<2, Undefined>
// CHECK: block_size needs 2 values (the layout's Dim), got 1
// -----
// OpCooperativeMatrixLoadTensorNV: Object must have the same type as Result Type
func.func @f(%p: memref<64xf16>, %o: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %l: !tensor_addr.layout<1, Undefined>) {
  %m = "coop.load_tensor"(%p, %o, %l) : (memref<64xf16>, !coop.matrix<16x16xf16, Subgroup, MatrixA>, !tensor_addr.layout<1, Undefined>) -> !coop.matrix<16x16xf16, Subgroup, MatrixB>
  func.return
}
// CHECK: Object must have the same type as Result Type: !coop.matrix<16x16xf16, Subgroup, MatrixA> vs !coop.matrix<16x16xf16, Subgroup, MatrixB> (OpCooperativeMatrixLoadTensorNV)
// -----
// TensorLayout must be a tensor layout
func.func @f(%p: memref<64xf16>, %o: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %l: i32) {
  %m = coop.load_tensor %p, %o, %l : memref<64xf16>, !coop.matrix<16x16xf16, Subgroup, MatrixA>, i32 -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: TensorLayout must be a tensor layout (OpTypeTensorLayoutNV), got i32 (OpCooperativeMatrixLoadTensorNV)
// -----
// TensorView must be a tensor view
func.func @f(%p: memref<64xf16>, %o: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %l: !tensor_addr.layout<1, Undefined>, %v: i32) {
  %m = coop.load_tensor %p, %o, %l view %v : memref<64xf16>, !coop.matrix<16x16xf16, Subgroup, MatrixA>, !tensor_addr.layout<1, Undefined>, i32 -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: the TensorView operand must be a tensor view (OpTypeTensorViewNV), got i32 (OpCooperativeMatrixLoadTensorNV)
// -----
// A view without its own dimensions uses the layout's span: equal Dim
func.func @f(%p: memref<64xf16>, %o: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %l: !tensor_addr.layout<1, Undefined>, %v: !tensor_addr.view<2, false, 1, 0>) {
  %m = coop.load_tensor %p, %o, %l view %v : memref<64xf16>, !coop.matrix<16x16xf16, Subgroup, MatrixA>, !tensor_addr.layout<1, Undefined>, !tensor_addr.view<2, false, 1, 0> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: a tensor view with HasDimensions false uses the layout's span, so its Dim (2) must equal the layout's Dim (1) (OpCooperativeMatrixLoadTensorNV)
// -----
// Pointer element type = Component Type (without a DecodeFunc)
func.func @f(%p: memref<64xf32>, %o: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %l: !tensor_addr.layout<1, Undefined>) {
  %m = coop.load_tensor %p, %o, %l : memref<64xf32>, !coop.matrix<16x16xf16, Subgroup, MatrixA>, !tensor_addr.layout<1, Undefined> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: memref element type f32 must equal the matrix Component Type f16
// -----
// DecodeFunc's return type must match the component type
func.func @dec(%p: memref<64xi32>, %i: i32, %b: i32, %c: i32) -> f32 {
  %x = arith.constant 1.0 : f32
  func.return %x : f32
}
func.func @f(%p: memref<64xi32>, %o: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %l: !tensor_addr.layout<1, Undefined>) {
  %m = coop.load_tensor %p, %o, %l decode @dec : memref<64xi32>, !coop.matrix<16x16xf16, Subgroup, MatrixA>, !tensor_addr.layout<1, Undefined> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: The DecodeFunc's return type must match the component type of the result matrix type (f16) (OpCooperativeMatrixLoadTensorNV)
// -----
// DecodeFunc parameters: pointer, index, blockCoord[Dim], coordInBlock[Dim]
func.func @dec(%p: memref<64xi32>, %i: i32, %b: i32) -> f16 {
  %x = arith.constant 1.0 : f16
  func.return %x : f16
}
func.func @f(%p: memref<64xi32>, %o: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %l: !tensor_addr.layout<1, Undefined>) {
  %m = coop.load_tensor %p, %o, %l decode @dec : memref<64xi32>, !coop.matrix<16x16xf16, Subgroup, MatrixA>, !tensor_addr.layout<1, Undefined> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: DecodeFunc must take (the Pointer's memref memref<64xi32>, i32 index, 1 i32 blockCoord, 1 i32 coordInBlock): 4 parameters (OpCooperativeMatrixLoadTensorNV)
// -----
// DecodeFunc must name a function
func.func @f(%p: memref<64xi32>, %o: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %l: !tensor_addr.layout<1, Undefined>) {
  %m = coop.load_tensor %p, %o, %l decode @nothing : memref<64xi32>, !coop.matrix<16x16xf16, Subgroup, MatrixA>, !tensor_addr.layout<1, Undefined> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: DecodeFunc @nothing must name an OpFunction (a func.func in the module)
// -----
// DecodeFunc is not allowed with OpCooperativeMatrixStoreTensorNV
func.func @f(%p: memref<64xf16>, %o: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %l: !tensor_addr.layout<1, Undefined>) {
  coop.store_tensor %o, %p, %l decode @f : !coop.matrix<16x16xf16, Subgroup, MatrixA>, memref<64xf16>, !tensor_addr.layout<1, Undefined>
  func.return
}
// CHECK: DecodeFunc is not allowed with OpCooperativeMatrixStoreTensorNV
// -----
// A block size larger than 1 must not be used with OpCooperativeMatrixStoreTensorNV
func.func @f(%p: memref<64xf16>, %o: !coop.matrix<16x16xf16, Subgroup, MatrixA>) {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %l0 = tensor_addr.create_layout : !tensor_addr.layout<2, Constant>
  %l1 = tensor_addr.layout_set_block_size %l0, %c1, %c2 : !tensor_addr.layout<2, Constant>
  coop.store_tensor %o, %p, %l1 : !coop.matrix<16x16xf16, Subgroup, MatrixA>, memref<64xf16>, !tensor_addr.layout<2, Constant>
  func.return
}
// CHECK: a block size larger than 1 must not be used with OpCooperativeMatrixStoreTensorNV (it would lead to data races): blockSize[1] = 2
// -----
// Workgroup scope needs the workgroup size
func.func @f(%p: memref<64xf16>, %o: !coop.matrix<16x16xf16, Workgroup, MatrixA>, %l: !tensor_addr.layout<1, Undefined>) {
  coop.store_tensor %o, %p, %l : !coop.matrix<16x16xf16, Workgroup, MatrixA>, memref<64xf16>, !tensor_addr.layout<1, Undefined>
  func.return
}
// CHECK: a Workgroup-scope cooperative matrix needs the workgroup size to be specified: the enclosing function has no 'coop.workgroup_size' attribute
// -----
// Reduce: 2x2 cannot combine with Row or Column
func.func @add(%a: f32, %b: f32) -> f32 {
  func.return %a : f32
}
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %r = "coop.reduce"(%m) <{reduce = #builtin.int<5>, combine_func = @add}> : (!coop.matrix<16x16xf32, Subgroup, MatrixAcc>) -> !coop.matrix<8x8xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: It is invalid to combine 2x2 with Row or Column (OpCooperativeMatrixReduceNV)
// -----
// Reduce: a valid Cooperative Matrix Reduce Mode
func.func @add(%a: f32, %b: f32) -> f32 {
  func.return %a : f32
}
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %r = "coop.reduce"(%m) <{reduce = #builtin.int<0>, combine_func = @add}> : (!coop.matrix<16x16xf32, Subgroup, MatrixAcc>) -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: Reduce must be a combination of Row (0x1), Column (0x2) and 2x2 (0x4), got 0x0 (OpCooperativeMatrixReduceNV)
// -----
// Reduce: same Component Type
func.func @add(%a: f32, %b: f32) -> f32 {
  func.return %a : f32
}
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %r = coop.reduce Row %m, @add : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
  func.return
}
// CHECK: The type of Matrix must have the same Component Type as Result Type: f32 vs f16 (OpCooperativeMatrixReduceNV)
// -----
// Reduce: Use of MatrixAccumulatorKHR
func.func @add(%a: f32, %b: f32) -> f32 {
  func.return %a : f32
}
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixA>) {
  %r = coop.reduce Row %m, @add : !coop.matrix<16x16xf32, Subgroup, MatrixA> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: The type of Matrix and Result Type must each have Use of MatrixAccumulatorKHR (OpCooperativeMatrixReduceNV)
// -----
// Reduce: matching Scope
func.func @add(%a: f32, %b: f32) -> f32 {
  func.return %a : f32
}
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %r = coop.reduce Row %m, @add : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: The type of Matrix and Result Type must have matching Scope (OpCooperativeMatrixReduceNV)
// -----
// Reduce 2x2: half the dimensions
func.func @add(%a: f32, %b: f32) -> f32 {
  func.return %a : f32
}
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %r = coop.reduce 2x2 %m, @add : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<8x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: If Reduce includes 2x2, the dimensions of ResultType must be half of the dimensions of Matrix: 16x16 -> 8x16 (OpCooperativeMatrixReduceNV)
// -----
// Reduce Row: same number of rows
func.func @add(%a: f32, %b: f32) -> f32 {
  func.return %a : f32
}
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %r = coop.reduce Row %m, @add : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<8x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: If Reduce equals Row, then Result Type must have the same number of rows as Matrix (16 vs 8) (OpCooperativeMatrixReduceNV)
// -----
// Reduce Column: same number of columns
func.func @add(%a: f32, %b: f32) -> f32 {
  func.return %a : f32
}
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %r = coop.reduce Column %m, @add : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x1xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: If Reduce equals Column, then Result Type must have the same number of columns as Matrix (16 vs 1) (OpCooperativeMatrixReduceNV)
// -----
// Reduce: CombineFunc signature
func.func @add(%a: f32, %b: f16) -> f32 {
  func.return %a : f32
}
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %r = coop.reduce Row|Column %m, @add : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<1x1xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: CombineFunc must be an OpFunction with two parameters whose types and result type all match the component type of Matrix (f32) (OpCooperativeMatrixReduceNV)
// -----
// Reduce mode syntax
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %r = coop.reduce Diagonal %m, @add : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<1x1xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: expected a Cooperative Matrix Reduce Mode: Row, Column or 2x2
// -----
// ConvertNV: the Use of Result Type must be MatrixAKHR or MatrixBKHR
func.func @f(%m: !coop.matrix<16x16xf16, Subgroup, MatrixAcc>) {
  %r = coop.convert %m : !coop.matrix<16x16xf16, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
  func.return
}
// CHECK: The Use of Result Type must be MatrixAKHR or MatrixBKHR (OpCooperativeMatrixConvertNV)
// -----
// ConvertNV: the Use of Matrix must be MatrixAccumulatorKHR
func.func @f(%m: !coop.matrix<16x16xf16, Subgroup, MatrixB>) {
  %r = coop.convert %m : !coop.matrix<16x16xf16, Subgroup, MatrixB> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: the Use of Matrix must be MatrixAccumulatorKHR (OpCooperativeMatrixConvertNV)
// -----
// ConvertNV: same Component Type, Scope, Rows, Columns
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %r = coop.convert %m : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: The type of Matrix must have the same Component Type, Scope, Rows, and Columns as Result Type (OpCooperativeMatrixConvertNV)
// -----
// TransposeNV: Rows and Columns swapped
func.func @f(%m: !coop.matrix<16x8xf16, Subgroup, MatrixAcc>) {
  %r = coop.transpose %m : !coop.matrix<16x8xf16, Subgroup, MatrixAcc> -> !coop.matrix<16x8xf16, Subgroup, MatrixB>
  func.return
}
// CHECK: Matrix must have Rows and Columns swapped relative to Result Type: 16x8 vs 16x8 (OpCooperativeMatrixTransposeNV)
// -----
// TransposeNV: Result Use MatrixB
func.func @f(%m: !coop.matrix<16x8xf16, Subgroup, MatrixAcc>) {
  %r = coop.transpose %m : !coop.matrix<16x8xf16, Subgroup, MatrixAcc> -> !coop.matrix<8x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: The Use of Result Type must be MatrixBKHR (OpCooperativeMatrixTransposeNV)
// -----
// TransposeNV: Matrix Use MatrixAcc
func.func @f(%m: !coop.matrix<16x8xf16, Subgroup, MatrixA>) {
  %r = coop.transpose %m : !coop.matrix<16x8xf16, Subgroup, MatrixA> -> !coop.matrix<8x16xf16, Subgroup, MatrixB>
  func.return
}
// CHECK: the Use of Matrix must be MatrixAccumulatorKHR (OpCooperativeMatrixTransposeNV)
// -----
// TransposeNV: same Scope
func.func @f(%m: !coop.matrix<16x8xf16, Subgroup, MatrixAcc>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %r = coop.transpose %m : !coop.matrix<16x8xf16, Subgroup, MatrixAcc> -> !coop.matrix<8x16xf16, Workgroup, MatrixB>
  func.return
}
// CHECK: The type of Matrix must have the same Scope as Result Type (OpCooperativeMatrixTransposeNV)
// -----
// TransposeNV: same Component Type (coopdialect)
func.func @f(%m: !coop.matrix<16x8xf32, Subgroup, MatrixAcc>) {
  %r = coop.transpose %m : !coop.matrix<16x8xf32, Subgroup, MatrixAcc> -> !coop.matrix<8x16xf16, Subgroup, MatrixB>
  func.return
}
// CHECK: Matrix and Result Type must have the same Component Type (coopdialect; convert the type first) (OpCooperativeMatrixTransposeNV)
// -----
// PerElementOpNV: Result Type must match the type of Matrix
func.func @pe(%r: i32, %c: i32, %x: f16) -> f16 {
  func.return %x : f16
}
func.func @f(%m: !coop.matrix<16x16xf16, Subgroup, MatrixAcc>) {
  %r = coop.per_element_op @pe(%m) : !coop.matrix<16x16xf16, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: Result Type must match the type of Matrix (OpCooperativeMatrixPerElementOpNV)
// -----
// PerElementOpNV: Func return type = component type
func.func @pe(%r: i32, %c: i32, %x: f16) -> f32 {
  %y = arith.extf %x : f16 to f32
  func.return %y : f32
}
func.func @f(%m: !coop.matrix<16x16xf16, Subgroup, MatrixAcc>) {
  %r = coop.per_element_op @pe(%m) : !coop.matrix<16x16xf16, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
  func.return
}
// CHECK: Func's return type must match the component type of Matrix (f16) (OpCooperativeMatrixPerElementOpNV)
// -----
// PerElementOpNV: first two parameters 32-bit integers, third the component type
func.func @pe(%r: index, %c: i32, %x: f16) -> f16 {
  func.return %x : f16
}
func.func @f(%m: !coop.matrix<16x16xf16, Subgroup, MatrixAcc>) {
  %r = coop.per_element_op @pe(%m) : !coop.matrix<16x16xf16, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
  func.return
}
// CHECK: Func's first two parameters must be 32-bit integer types and its third parameter type must match the component type of Matrix (f16) (OpCooperativeMatrixPerElementOpNV)
// -----
// PerElementOpNV: one parameter per optional operand
func.func @pe(%r: i32, %c: i32, %x: f16) -> f16 {
  func.return %x : f16
}
func.func @f(%m: !coop.matrix<16x16xf16, Subgroup, MatrixAcc>, %s: f16) {
  %r = coop.per_element_op @pe(%m, %s) : !coop.matrix<16x16xf16, Subgroup, MatrixAcc>, f16 -> !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
  func.return
}
// CHECK: Func takes 0 additional parameters but 1 optional operands are given (OpCooperativeMatrixPerElementOpNV)
// -----
// PerElementOpNV: an additional matrix operand has the type of Matrix
func.func @pe(%r: i32, %c: i32, %x: f16, %y: f16) -> f16 {
  func.return %x : f16
}
func.func @f(%m: !coop.matrix<16x16xf16, Subgroup, MatrixAcc>, %n: !coop.matrix<16x16xf16, Subgroup, MatrixA>) {
  %r = coop.per_element_op @pe(%m, %n) : !coop.matrix<16x16xf16, Subgroup, MatrixAcc>, !coop.matrix<16x16xf16, Subgroup, MatrixA> -> !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
  func.return
}
// CHECK: an additional cooperative matrix operand must have the type of Matrix: operand 0 is !coop.matrix<16x16xf16, Subgroup, MatrixA> (OpCooperativeMatrixPerElementOpNV)
// -----
// PerElementOpNV: a scalar operand has its parameter's type
func.func @pe(%r: i32, %c: i32, %x: f16, %y: f32) -> f16 {
  func.return %x : f16
}
func.func @f(%m: !coop.matrix<16x16xf16, Subgroup, MatrixAcc>, %s: f16) {
  %r = coop.per_element_op @pe(%m, %s) : !coop.matrix<16x16xf16, Subgroup, MatrixAcc>, f16 -> !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
  func.return
}
// CHECK: additional operand 0 has type f16 but parameter 3 of Func has type f32 (OpCooperativeMatrixPerElementOpNV)
