// RUN: not coop-opt %s -p 'legalize-coop-sizes{target=h200-vulkan flexible=false}' 2>&1 | filecheck %s
// A split matrix crossing an op whose element mapping would change (coop.extract).
func.func @f(%p: memref<4096xf32>, %o: index, %s: index) -> f32 {
  %c = coop.load %p[%o], %s, RowMajor : memref<4096xf32> -> !coop.matrix<32x16xf32, Subgroup, MatrixAcc>
  %x = coop.extract %c[0] : !coop.matrix<32x16xf32, Subgroup, MatrixAcc>
  func.return %x : f32
}
// CHECK: error: 'coop.extract' op cannot be split into native tiles: it uses the 32x16 matrix that the target needs as 16x16 tiles
