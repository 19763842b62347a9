// RUN: coop-opt %s --split-input-file --verify-diagnostics -p convert-coop-to-spirv | filecheck %s
// What the SPIR-V lowering of the math dialect refuses, one line each.

!m = !coop.matrix<16x16xf64, Subgroup, MatrixAcc>
func.func @g(%r: i32, %c: i32, %x: f64) -> f64 {
  %y = math.exp %x : f64
  func.return %y : f64
}
func.func @k(%X: memref<256xf64>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = coop.load %X[%c0], %c16, RowMajor : memref<256xf64> -> !m
  %y = coop.per_element_op @g(%x) : !m -> !m
  coop.store %y, %X[%c0], %c16, RowMajor : !m, memref<256xf64>
  func.return
}
// CHECK: error: 'math.exp' op GLSL.std.450 Exp takes 16- or 32-bit floats: math.exp of f64 has no SPIR-V lowering

// -----

!m = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @g(%r: i32, %c: i32, %x: f32) -> f32 {
  %y = math.cbrt %x : f32
  func.return %y : f32
}
func.func @k(%X: memref<256xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = coop.load %X[%c0], %c16, RowMajor : memref<256xf32> -> !m
  %y = coop.per_element_op @g(%x) : !m -> !m
  coop.store %y, %X[%c0], %c16, RowMajor : !m, memref<256xf32>
  func.return
}
// CHECK: error: 'math.cbrt' op has no lowering to SPIR-V

// -----

!m = !coop.matrix<16x16xbf16, Subgroup, MatrixAcc>
func.func @g(%r: i32, %c: i32, %x: bf16) -> bf16 {
  %y = math.exp %x : bf16
  func.return %y : bf16
}
func.func @k(%X: memref<256xbf16>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = coop.load %X[%c0], %c16, RowMajor : memref<256xbf16> -> !m
  %y = coop.per_element_op @g(%x) : !m -> !m
  coop.store %y, %X[%c0], %c16, RowMajor : !m, memref<256xbf16>
  func.return
}
// CHECK: error: 'math.exp' op bf16 arithmetic has no SPIR-V form

// -----

!m = !coop.matrix<16x16xf64, Subgroup, MatrixAcc>
func.func @g(%r: i32, %c: i32, %x: f64) -> f64 {
  %y = math.erf %x : f64
  func.return %y : f64
}
func.func @k(%X: memref<256xf64>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = coop.load %X[%c0], %c16, RowMajor : memref<256xf64> -> !m
  %y = coop.per_element_op @g(%x) : !m -> !m
  coop.store %y, %X[%c0], %c16, RowMajor : !m, memref<256xf64>
  func.return
}
// CHECK: error: 'math.erf' op math.erf of f64 has no SPIR-V lowering (f16, f32)
