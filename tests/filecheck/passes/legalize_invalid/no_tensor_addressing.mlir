// RUN: not coop-opt %s -p 'legalize-coop-sizes{target=arm-mali}' 2>&1 | filecheck %s
// arm-mali has no tensor addressing: a non-multiple is refused, not padded.
func.func @f(%A: memref<1024xf16>, %C: memref<1024xf32>) attributes {coop.workgroup_size = array<i32: 16, 1, 1>} {
  %o = arith.constant 0 : index
  %s = arith.constant 16 : index
  %a = coop.load %A[%o], %s, RowMajor : memref<1024xf16> -> !coop.matrix<20x16xf16, Subgroup, MatrixA>
  %b = coop.load %A[%o], %s, RowMajor : memref<1024xf16> -> !coop.matrix<16x16xf16, Subgroup, MatrixB>
  %c = coop.load %C[%o], %s, RowMajor : memref<1024xf32> -> !coop.matrix<20x16xf32, Subgroup, MatrixAcc>
  %d = coop.mul_add %a, %b, %c : !coop.matrix<20x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<20x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<20x16xf32, Subgroup, MatrixAcc>
  coop.store %d, %C[%o], %s, RowMajor : !coop.matrix<20x16xf32, Subgroup, MatrixAcc>, memref<1024xf32>
  func.return
}
// CHECK: no_tensor_addressing.mlir:9:3: error: 'coop.mul_add' op 20x16x16 f16·f16·f32·f32 Subgroup has no native tiling on target 'arm-mali'; native shapes for these types: 16x16x16 (all Subgroup shapes: 16x16x16, 16x16x32) (padding needs tensor addressing, which the target does not have)
