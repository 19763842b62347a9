// Row-softmax-style normalisation of a 64×16 f32 matrix with cooperative-matrix-2 reductions and
// per-element ops: for each 16×16 tile, s = x - rowmax(x), then y = s / rowsum(|s|) (no exp: bit-exact
// on every backend; softmax_exp_rows.mlir has it), with a clipped tail store.
//
//   coop.reduce Row ... @max   — every element of row r gets max of row r
//   coop.per_element_op @sub(%x, %mx) — a matrix extra operand: its element is passed
//   coop.reduce Row ... @add, per_element_op @div
//   coop.reduce 2x2 ... @add   — 8×8 sums of 2×2 neighbourhoods, stored to Pool
//
// Dispatch: grid = (1, 4, 1): workgroup y handles rows 16y..16y+15.
!L = !tensor_addr.layout<2, Constant>
!m = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
!q = !coop.matrix<8x8xf32, Subgroup, MatrixAcc>
func.func @max(%a: f32, %b: f32) -> f32 {
  %r = arith.maximumf %a, %b : f32
  func.return %r : f32
}
func.func @add(%a: f32, %b: f32) -> f32 {
  %r = arith.addf %a, %b : f32
  func.return %r : f32
}
func.func @sub(%r: i32, %c: i32, %x: f32, %m: f32) -> f32 {
  %y = arith.subf %x, %m : f32
  func.return %y : f32
}
func.func @neg_abs(%r: i32, %c: i32, %x: f32) -> f32 {
  %n = arith.negf %x : f32
  func.return %n : f32
}
func.func @div(%r: i32, %c: i32, %x: f32, %s: f32) -> f32 {
  %y = arith.divf %x, %s : f32
  func.return %y : f32
}
func.func @softmax_rows(%X: memref<64x16xf32>, %Y: memref<64x16xf32>, %Pool: memref<32x8xf32>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %R = arith.constant 64 : i32
  %Cc = arith.constant 16 : i32
  %t16 = arith.constant 16 : i32
  %t8 = arith.constant 8 : i32
  %z = arith.constant 0 : i32
  %c16 = arith.constant 16 : index
  %c8 = arith.constant 8 : index
  %wy = gpu.block_id y
  %r = arith.muli %wy, %c16 : index
  %r0 = arith.index_cast %r : index to i32
  %pr = arith.muli %wy, %c8 : index
  %p0 = arith.index_cast %pr : index to i32
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_set_dimension %l0, %R, %Cc : !L
  %l2 = tensor_addr.layout_slice %l1, %r0, %t16, %z, %t16 : !L
  %P = arith.constant 32 : i32
  %q1 = tensor_addr.layout_set_dimension %l0, %P, %t8 : !L
  %q2 = tensor_addr.layout_slice %q1, %p0, %t8, %z, %t8 : !L
  %zf = arith.constant 0.0 : f32
  %obj = coop.composite_construct %zf : f32 -> !m
  %x = coop.load_tensor %X, %obj, %l2 : memref<64x16xf32>, !m, !L -> !m
  %mx = coop.reduce Row %x, @max : !m -> !m
  %s = coop.per_element_op @sub(%x, %mx) : !m, !m -> !m
  %ns = coop.per_element_op @neg_abs(%s) : !m -> !m
  %sum = coop.reduce Row %ns, @add : !m -> !m
  %y = coop.per_element_op @div(%s, %sum) : !m, !m -> !m
  coop.store_tensor %y, %Y, %l2 : !m, memref<64x16xf32>, !L
  %pool = coop.reduce 2x2 %x, @add : !m -> !q
  coop.store_tensor %pool, %Pool, %q2 : !q, memref<32x8xf32>, !L
  func.return
}
