// RUN: not coop-opt %s -p 'legalize-coop-sizes{target=h200-vulkan flexible=false}' 2>&1 | filecheck %s
// SaturatingAccumulation: K cannot be split (saturating each partial sum differs).
func.func @f(%a: !coop.matrix<16x64xi8, Subgroup, MatrixA>, %b: !coop.matrix<64x16xi8, Subgroup, MatrixB>, %c: !coop.matrix<16x16xi32, Subgroup, MatrixAcc>) {
  %d = coop.mul_add %a, %b, %c <SaturatingAccumulation> : !coop.matrix<16x64xi8, Subgroup, MatrixA>, !coop.matrix<64x16xi8, Subgroup, MatrixB>, !coop.matrix<16x16xi32, Subgroup, MatrixAcc> -> !coop.matrix<16x16xi32, Subgroup, MatrixAcc>
  func.return
}
// CHECK: error: 'coop.mul_add' op 16x16x64 u8·u8·u32·u32 Subgroup has no native tiling on target 'h200-vulkan' (SaturatingAccumulation: K cannot be split); native shapes for these types: none
