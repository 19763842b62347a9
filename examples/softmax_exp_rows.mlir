// Row softmax and a GELU epilogue of a 64×16 f32 matrix, with the math dialect inside the
// functions of cooperative-matrix-2 ops: for each 16×16 tile, y = exp(x - rowmax(x)) / rowsum(...)
// to Y, and gelu(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) to G.
//
//   coop.reduce Row ... @max, per_element_op @exp_sub(%x, %mx)   — math.exp of x - max
//   coop.reduce Row ... @add, per_element_op @div                 — the normalisation
//   per_element_op @gelu(%x)                                      — math.tanh, math.fma
//
// The backends compute exp and tanh with the instructions and bounds of docs/math.md (the
// interpreter: the exact value rounded once). Dispatch: grid = (1, 4, 1): workgroup y handles
// rows 16y..16y+15.
!L = !tensor_addr.layout<2, Constant>
!m = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @max(%a: f32, %b: f32) -> f32 {
  %r = arith.maximumf %a, %b : f32
  func.return %r : f32
}
func.func @add(%a: f32, %b: f32) -> f32 {
  %r = arith.addf %a, %b : f32
  func.return %r : f32
}
func.func @exp_sub(%r: i32, %c: i32, %x: f32, %m: f32) -> f32 {
  %d = arith.subf %x, %m : f32
  %e = math.exp %d : f32
  func.return %e : f32
}
func.func @div(%r: i32, %c: i32, %x: f32, %s: f32) -> f32 {
  %y = arith.divf %x, %s : f32
  func.return %y : f32
}
func.func @gelu(%r: i32, %c: i32, %x: f32) -> f32 {
  %k = arith.constant 0.797884583 : f32
  %a = arith.constant 0.044715 : f32
  %h = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %x2 = arith.mulf %x, %x : f32
  %p = math.fma %a, %x2, %one : f32
  %u = arith.mulf %x, %p : f32
  %v = arith.mulf %k, %u : f32
  %t = math.tanh %v : f32
  %s = arith.addf %t, %one : f32
  %hx = arith.mulf %h, %x : f32
  %y = arith.mulf %hx, %s : f32
  func.return %y : f32
}
func.func @softmax_exp_rows(%X: memref<64x16xf32>, %Y: memref<64x16xf32>, %G: memref<64x16xf32>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %R = arith.constant 64 : i32
  %Cc = arith.constant 16 : i32
  %t16 = arith.constant 16 : i32
  %z = arith.constant 0 : i32
  %c16 = arith.constant 16 : index
  %wy = gpu.block_id y
  %r = arith.muli %wy, %c16 : index
  %r0 = arith.index_cast %r : index to i32
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_set_dimension %l0, %R, %Cc : !L
  %l2 = tensor_addr.layout_slice %l1, %r0, %t16, %z, %t16 : !L
  %zf = arith.constant 0.0 : f32
  %obj = coop.composite_construct %zf : f32 -> !m
  %x = coop.load_tensor %X, %obj, %l2 : memref<64x16xf32>, !m, !L -> !m
  %mx = coop.reduce Row %x, @max : !m -> !m
  %e = coop.per_element_op @exp_sub(%x, %mx) : !m, !m -> !m
  %sum = coop.reduce Row %e, @add : !m -> !m
  %y = coop.per_element_op @div(%e, %sum) : !m, !m -> !m
  coop.store_tensor %y, %Y, %l2 : !m, memref<64x16xf32>, !L
  %g = coop.per_element_op @gelu(%x) : !m -> !m
  coop.store_tensor %g, %G, %l2 : !m, memref<64x16xf32>, !L
  func.return
}
