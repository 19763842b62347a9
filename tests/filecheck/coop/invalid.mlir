// RUN: coop-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// RUN: not coop-opt %s 2>&1 | filecheck %s --check-prefix=ONELINE
// Every verifier rule of the coop dialect, with its message (one case per split chunk).
// ONELINE: invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error: {{.*}}
// ONELINE-NOT: Traceback

// OpTypeCooperativeMatrix: Rows/Columns must be positive constants
func.func private @f(!coop.matrix<?x16xf16, Subgroup, MatrixA>)
// CHECK: Rows and Columns must be positive constants
// -----
// OpTypeCooperativeMatrix: exactly two dimensions
func.func private @f(!coop.matrix<16x16x16xf16, Subgroup, MatrixA>)
// CHECK: coop.matrix must have exactly two dimensions (Rows, Columns)
// -----
// OpTypeCooperativeMatrix: Component Type must be a scalar numerical type
func.func private @f(!coop.matrix<16x16xi1, Subgroup, MatrixA>)
// CHECK: Component Type must be a scalar numerical type, got i1
// -----
// OpTypeCooperativeMatrixKHR: Use must be a Cooperative Matrix Use
func.func private @f(!coop.matrix<16x16xf16, Subgroup, MatrixD>)
// CHECK: Expected `MatrixA`, `MatrixB`, or `MatrixAcc`
// -----
// Scope must be a valid scope
func.func private @f(!coop.matrix<16x16xf16, Device, MatrixA>)
// CHECK: Expected `Subgroup`, or `Workgroup`
// -----
// Load: Stride >= 0
func.func @f(%p: memref<4096xf16>, %o: index) {
  %s = arith.constant -1 : index
  %a = coop.load %p[%o], %s, RowMajor : memref<4096xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: 'coop.load' op Stride must be greater than or equal to 0 when passed to OpCooperativeMatrixLoadKHR, got -1
// -----
// Store: Stride > 0
func.func @f(%p: memref<4096xf16>, %o: index, %a: !coop.matrix<16x16xf16, Subgroup, MatrixA>) {
  %s = arith.constant 0 : index
  coop.store %a, %p[%o], %s, RowMajor : !coop.matrix<16x16xf16, Subgroup, MatrixA>, memref<4096xf16>
  func.return
}
// CHECK: 'coop.store' op Stride must be greater than 0 when passed to OpCooperativeMatrixStoreKHR, got 0
// -----
// NV store: Stride > 0 (NV instruction named)
func.func @f(%p: memref<4096xf16>, %o: index, %a: !coop.matrix<16x16xf16, Subgroup>) {
  %s = arith.constant 0 : index
  coop.store %a, %p[%o], %s, ColumnMajor : !coop.matrix<16x16xf16, Subgroup>, memref<4096xf16>
  func.return
}
// CHECK: Stride must be greater than 0 when passed to OpCooperativeMatrixStoreNV
// -----
// Load: MakePointerAvailable is not valid with a load
func.func @f(%p: memref<4096xf16>, %o: index, %s: index) {
  %a = coop.load %p[%o], %s, RowMajor, <MakePointerAvailable Device|NonPrivatePointer> : memref<4096xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: 'coop.load' op MakePointerAvailable is not valid with OpCooperativeMatrixLoadKHR
// -----
// Store: MakePointerVisible is not valid with a store
func.func @f(%p: memref<4096xf16>, %o: index, %s: index, %a: !coop.matrix<16x16xf16, Subgroup, MatrixA>) {
  coop.store %a, %p[%o], %s, RowMajor, <MakePointerVisible Device|NonPrivatePointer> : !coop.matrix<16x16xf16, Subgroup, MatrixA>, memref<4096xf16>
  func.return
}
// CHECK: 'coop.store' op MakePointerVisible is not valid with OpCooperativeMatrixStoreKHR
// -----
// Memory operand: MakePointerAvailable needs NonPrivatePointer
func.func @f(%p: memref<4096xf16>, %o: index, %s: index, %a: !coop.matrix<16x16xf16, Subgroup, MatrixA>) {
  coop.store %a, %p[%o], %s, RowMajor, <MakePointerAvailable Device> : !coop.matrix<16x16xf16, Subgroup, MatrixA>, memref<4096xf16>
  func.return
}
// CHECK: MakePointerAvailable/MakePointerVisible require NonPrivatePointer (SPIR-V 3.26 Memory Operands)
// -----
// Memory operand: Aligned needs a power of two
func.func @f(%p: memref<4096xf16>, %o: index, %s: index) {
  %a = coop.load %p[%o], %s, RowMajor, <Aligned 12> : memref<4096xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: Aligned memory operand needs a power-of-two literal alignment, got 12
// -----
// Pointer: storage class must be StorageBuffer or Workgroup
func.func @f(%p: memref<4096xf16, 5 : i32>, %o: index, %s: index) {
  %a = coop.load %p[%o], %s, RowMajor : memref<4096xf16, 5 : i32> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: The storage class of Pointer must be Workgroup or StorageBuffer (the default)
// -----
// Pointer: element type equals the Component Type (coopdialect restriction)
func.func @f(%p: memref<4096xf32>, %o: index, %s: index) {
  %a = coop.load %p[%o], %s, RowMajor : memref<4096xf32> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: memref element type f32 must equal the matrix Component Type f16
// -----
// MulAdd: A must have Use MatrixA
func.func @f(%a: !coop.matrix<16x16xf16, Subgroup, MatrixB>, %b: !coop.matrix<16x16xf16, Subgroup, MatrixB>, %c: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c : !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: 'coop.mul_add' op A must have Use MatrixA, got MatrixB (OpCooperativeMatrixMulAddKHR)
// -----
// MulAdd: B must have Use MatrixB
func.func @f(%a: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %b: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %c: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c : !coop.matrix<16x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: B must have Use MatrixB, got MatrixA
// -----
// MulAdd: C must have Use MatrixAcc
func.func @f(%a: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %b: !coop.matrix<16x16xf16, Subgroup, MatrixB>, %c: !coop.matrix<16x16xf32, Subgroup, MatrixA>) {
  %d = coop.mul_add %a, %b, %c : !coop.matrix<16x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xf32, Subgroup, MatrixA> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: C must have Use MatrixAcc, got MatrixA
// -----
// MulAdd: Result Type must have Use MatrixAcc
func.func @f(%a: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %b: !coop.matrix<16x16xf16, Subgroup, MatrixB>, %c: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c : !coop.matrix<16x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixB>
  func.return
}
// CHECK: Result Type must have Use MatrixAcc, got MatrixB
// -----
// MulAdd: M, N, K consistency
func.func @f(%a: !coop.matrix<16x8xf16, Subgroup, MatrixA>, %b: !coop.matrix<16x16xf16, Subgroup, MatrixB>, %c: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c : !coop.matrix<16x8xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: M, N and K must be consistent: A is 16x8, B is 16x16, C is 16x16, Result is 16x16 (OpCooperativeMatrixMulAddKHR)
// -----
// MulAdd: same scope
func.func @f(%a: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %b: !coop.matrix<16x16xf16, Subgroup, MatrixB>, %c: !coop.matrix<16x16xf32, Workgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c : !coop.matrix<16x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xf32, Workgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Workgroup, MatrixAcc>
  func.return
}
// CHECK: A, B, C and Result Type must have the same scope (OpCooperativeMatrixMulAddKHR)
// -----
// MulAdd: KHR and NV matrices do not mix
func.func @f(%a: !coop.matrix<16x16xf16, Subgroup>, %b: !coop.matrix<16x16xf16, Subgroup, MatrixB>, %c: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c : !coop.matrix<16x16xf16, Subgroup>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: A, B, C and Result must all be KHR matrices (with a Use) or all NV matrices (without)
// -----
// MulAdd: NV has no Cooperative Matrix Operands
func.func @f(%a: !coop.matrix<16x32xi8, Subgroup>, %b: !coop.matrix<32x16xi8, Subgroup>, %c: !coop.matrix<16x16xi32, Subgroup>) {
  %d = coop.mul_add %a, %b, %c <ASigned> : !coop.matrix<16x32xi8, Subgroup>, !coop.matrix<32x16xi8, Subgroup>, !coop.matrix<16x16xi32, Subgroup> -> !coop.matrix<16x16xi32, Subgroup>
  func.return
}
// CHECK: Cooperative Matrix Operands need SPV_KHR_cooperative_matrix
// -----
// MulAdd: Matrix{A,B,C,Result}SignedComponentsKHR only with integer types
func.func @f(%a: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %b: !coop.matrix<16x16xf16, Subgroup, MatrixB>, %c: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c <ASigned> : !coop.matrix<16x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: MatrixASignedComponentsKHR can only be used when the type of matrix A is an integer type, got f16
// -----
// MulAdd: ResultSigned only with an integer result
func.func @f(%a: !coop.matrix<16x32xi8, Subgroup, MatrixA>, %b: !coop.matrix<32x16xi8, Subgroup, MatrixB>, %c: !coop.matrix<16x16xi32, Subgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c <ResultSigned> : !coop.matrix<16x32xi8, Subgroup, MatrixA>, !coop.matrix<32x16xi8, Subgroup, MatrixB>, !coop.matrix<16x16xi32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: MatrixResultSignedComponentsKHR can only be used when the type of matrix Result is an integer type
// -----
// MulAdd: a signed flag contradicts an unsigned type
func.func @f(%a: !coop.matrix<16x32xui8, Subgroup, MatrixA>, %b: !coop.matrix<32x16xi8, Subgroup, MatrixB>, %c: !coop.matrix<16x16xi32, Subgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c <ASigned> : !coop.matrix<16x32xui8, Subgroup, MatrixA>, !coop.matrix<32x16xi8, Subgroup, MatrixB>, !coop.matrix<16x16xi32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: MatrixASignedComponentsKHR contradicts the unsigned component type ui8 of matrix A
// -----
// MulAdd: SaturatingAccumulation applies to integer accumulation
func.func @f(%a: !coop.matrix<16x16xf16, Subgroup, MatrixA>, %b: !coop.matrix<16x16xf16, Subgroup, MatrixB>, %c: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c <SaturatingAccumulation> : !coop.matrix<16x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: SaturatingAccumulationKHR applies to integer accumulation
// -----
// MulAdd: integer and float inputs do not mix
func.func @f(%a: !coop.matrix<16x32xi8, Subgroup, MatrixA>, %b: !coop.matrix<32x16xf16, Subgroup, MatrixB>, %c: !coop.matrix<16x16xi32, Subgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c : !coop.matrix<16x32xi8, Subgroup, MatrixA>, !coop.matrix<32x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xi32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: A and B must both be integer or both be float, and so must C and Result Type
// -----
// Length: Result Type must be a 32-bit integer with 0 Signedness
func.func @f() {
  %n = "coop.length"() <{matrix_type = !coop.matrix<16x16xf16, Subgroup, MatrixA>}> : () -> si32
  func.return
}
// CHECK: Result Type must be a 32-bit integer with 0 Signedness, got si32 (OpCooperativeMatrixLengthKHR)
// -----
// CompositeConstruct: one Constituent of the Component Type
func.func @f(%x: f16) {
  %m = coop.composite_construct %x : f16 -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: there must be only one Constituent, with scalar type matching the cooperative matrix Component Type f32, got f16 (OpCompositeConstruct)
// -----
// CompositeExtract: Result Type is the Component Type
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %x = "coop.extract"(%m) <{index = #builtin.int<0>}> : (!coop.matrix<16x16xf32, Subgroup, MatrixAcc>) -> f16
  func.return
}
// CHECK: Result Type must be the Component Type f32 (OpCompositeExtract)
// -----
// CompositeExtract: Indexes are non-negative
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %x = coop.extract %m[-1] : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: Indexes must be non-negative literals, got -1 (OpCompositeExtract)
// -----
// CompositeInsert: Object has the Component Type
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, %x: f16) {
  %n = "coop.insert"(%x, %m) <{index = #builtin.int<0>}> : (f16, !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: Object must have the Component Type f32, got f16 (OpCompositeInsert)
// -----
// Binary arithmetic: operand types must match
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, %h: !coop.matrix<16x16xf16, Subgroup, MatrixAcc>) {
  %n = "coop.fadd"(%m, %h) : (!coop.matrix<16x16xf32, Subgroup, MatrixAcc>, !coop.matrix<16x16xf16, Subgroup, MatrixAcc>) -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: binary arithmetic instructions operate on cooperative matrices whose type must match
// -----
// OpF* need a floating-point Component Type
func.func @f(%m: !coop.matrix<16x16xi32, Subgroup, MatrixAcc>) {
  %n = coop.fadd %m, %m : !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: OpFAdd can only be used with cooperative matrix types whose Component Type is a floating-point type, got i32
// -----
// OpI*/OpS*/OpU* need an integer Component Type
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %n = coop.snegate %m : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: OpSNegate can only be used with cooperative matrix types whose Component Type is an integer type, got f32
// -----
// OpFMul on NV matrices needs SPV_KHR_cooperative_matrix
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup>) {
  %n = coop.fmul %m, %m : !coop.matrix<16x16xf32, Subgroup>
  func.return
}
// CHECK: OpFMul on cooperative matrices needs SPV_KHR_cooperative_matrix
// -----
// OpIMul on NV matrices needs SPV_KHR_cooperative_matrix
func.func @f(%m: !coop.matrix<16x16xi32, Subgroup>) {
  %n = coop.imul %m, %m : !coop.matrix<16x16xi32, Subgroup>
  func.return
}
// CHECK: OpIMul on cooperative matrices needs SPV_KHR_cooperative_matrix
// -----
// OpMatrixTimesScalar: Scalar has the Component Type
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, %x: f16) {
  %n = coop.matrix_times_scalar %m, %x : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, f16 -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: Scalar must have the same type as the Component Type f32, got f16 (OpMatrixTimesScalar)
// -----
// OpMatrixTimesScalar: float Component Type
func.func @f(%m: !coop.matrix<16x16xi32, Subgroup, MatrixAcc>, %x: i32) {
  %n = coop.matrix_times_scalar %m, %x : !coop.matrix<16x16xi32, Subgroup, MatrixAcc>, i32 -> !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: OpMatrixTimesScalar needs a floating-point Component Type, got i32
// -----
// Conversion: same Scope, Rows and Columns
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %n = coop.f_convert %m : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x8xf16, Subgroup, MatrixAcc>
  func.return
}
// CHECK: the result type and value type must have the same Scope, number of Rows and number of Columns (OpFConvert)
// -----
// Conversion: same Use (KHR)
func.func @f(%m: !coop.matrix<16x16xf32, Subgroup, MatrixAcc>) {
  %n = coop.f_convert %m : !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf16, Subgroup, MatrixA>
  func.return
}
// CHECK: the result type and value type must have the same Use (OpFConvert)
// -----
// Conversion: component types appropriate to the instruction
func.func @f(%m: !coop.matrix<16x16xi32, Subgroup, MatrixAcc>) {
  %n = coop.convert_f_to_s %m : !coop.matrix<16x16xi32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: OpConvertFToS needs a value Component Type that is a floating-point type, got i32
// -----
// OpFConvert/OpSConvert/OpUConvert: widths differ
func.func @f(%m: !coop.matrix<16x16xi32, Subgroup, MatrixAcc>) {
  %n = coop.s_convert %m : !coop.matrix<16x16xi32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xui32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: the component width of the value (32) cannot equal the component width in Result Type (OpSConvert)
// -----
// OpUConvert: result Signedness 0
func.func @f(%m: !coop.matrix<16x16xi32, Subgroup, MatrixAcc>) {
  %n = coop.u_convert %m : !coop.matrix<16x16xi32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xsi8, Subgroup, MatrixAcc>
  func.return
}
// CHECK: OpUConvert needs a Result Type with 0 Signedness
// -----
// OpBitcast: integer Component Types of the same Width
func.func @f(%m: !coop.matrix<16x16xi32, Subgroup, MatrixAcc>) {
  %n = coop.bitcast %m : !coop.matrix<16x16xi32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xi16, Subgroup, MatrixAcc>
  func.return
}
// CHECK: OpBitcast on cooperative matrices needs integer Component Types of the same Width
