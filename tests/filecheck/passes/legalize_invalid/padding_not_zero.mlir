// RUN: not coop-opt %s -p 'legalize-coop-sizes{target=h200-vulkan}' 2>&1 | filecheck %s
// K = 20 must be padded to 32, but A is a constant 1.0: its K padding would not be 0.
func.func @f(%B: memref<1024xf16>, %C: memref<1024xf32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %o = arith.constant 0 : index
  %s = arith.constant 16 : index
  %one = arith.constant 1.0 : f16
  %a = coop.composite_construct %one : f16 -> !coop.matrix<16x20xf16, Subgroup, MatrixA>
  %b = coop.load %B[%o], %s, RowMajor : memref<1024xf16> -> !coop.matrix<20x16xf16, Subgroup, MatrixB>
  %c = coop.load %C[%o], %s, RowMajor : memref<1024xf32> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  %d = coop.mul_add %a, %b, %c : !coop.matrix<16x20xf16, Subgroup, MatrixA>, !coop.matrix<20x16xf16, Subgroup, MatrixB>, !coop.matrix<16x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
  coop.store %d, %C[%o], %s, RowMajor : !coop.matrix<16x16xf32, Subgroup, MatrixAcc>, memref<1024xf32>
  func.return
}
// CHECK: padding_not_zero.mlir:10:3: error: 'coop.mul_add' op 16x16x20 f16·f16·f32·f32 Subgroup has no native tiling on target 'h200-vulkan'; native shapes for these types: 16x16x16, 16x8x16, 16x8x8; it cannot be padded to 16x16x24; A does not come from a coop.load, so its K padding is not known to be 0
