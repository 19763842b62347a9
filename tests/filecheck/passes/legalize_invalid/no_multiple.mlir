// RUN: not coop-opt %s -p 'legalize-coop-sizes{target=h200-vulkan flexible=false}' 2>&1 | filecheck %s
// M = 20 is no multiple of any native M; padding (tensor loads) needs the matrices to come from
// coop.load, and these are function arguments.
func.func @f(%a: !coop.matrix<20x16xf16, Subgroup, MatrixA>, %b: !coop.matrix<16x16xf16, Subgroup, MatrixB>, %c: !coop.matrix<20x16xf32, Subgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c : !coop.matrix<20x16xf16, Subgroup, MatrixA>, !coop.matrix<16x16xf16, Subgroup, MatrixB>, !coop.matrix<20x16xf32, Subgroup, MatrixAcc> -> !coop.matrix<20x16xf32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: no_multiple.mlir:5:3: error: 'coop.mul_add' op 20x16x16 f16·f16·f32·f32 Subgroup has no native tiling on target 'h200-vulkan'; native shapes for these types: 16x16x16, 16x8x16, 16x8x8; it cannot be padded to 32x16x16; its 20x16 MatrixA matrix is a function argument, which cannot carry padding (only coop.load/coop.store, multiply-adds, element-wise ops and scf.for can)
