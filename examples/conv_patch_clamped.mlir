// Clamped convolution-style patch loads: each workgroup reads the 16×16 input patch that a 3×3
// convolution centred on its 16×16 output tile needs at tap (dy, dx) = (-1, -1), from an H×W f16
// image, with the tensor layout doing the border handling:
//   * ClampToEdge (edge replication padding) into Out1,
//   * Constant with clampValue 0x3C00 (1.0 in f16: the value's bit pattern) into Out2.
// The offsets of the slice are negative at the top/left border; the layout clamps them, and the
// store through a plain layout (Constant mode) drops nothing since the output is in bounds.
//
// Dispatch: grid = (W/16, H/16, 1) = (4, 4, 1); one subgroup per workgroup.
!Le = !tensor_addr.layout<2, ClampToEdge>
!Lc = !tensor_addr.layout<2, Constant>
!m = !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
func.func @conv_patch(%In: memref<64x64xf16>, %Out1: memref<64x64xf16>, %Out2: memref<64x64xf16>)
    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %H = arith.constant 64 : i32
  %W = arith.constant 64 : i32
  %t16 = arith.constant 16 : i32
  %m1 = arith.constant -1 : i32
  %one = arith.constant 15360 : i32
  %c16 = arith.constant 16 : index
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %y = arith.muli %wy, %c16 : index
  %x = arith.muli %wx, %c16 : index
  %y0 = arith.index_cast %y : index to i32
  %x0 = arith.index_cast %x : index to i32
  %ym = arith.addi %y0, %m1 : i32
  %xm = arith.addi %x0, %m1 : i32
  %e0 = tensor_addr.create_layout : !Le
  %e1 = tensor_addr.layout_set_dimension %e0, %H, %W : !Le
  %e2 = tensor_addr.layout_slice %e1, %ym, %t16, %xm, %t16 : !Le
  %k0 = tensor_addr.create_layout : !Lc
  %k1 = tensor_addr.layout_set_dimension %k0, %H, %W : !Lc
  %k2 = tensor_addr.layout_set_clamp_value %k1, %one : !Lc
  %k3 = tensor_addr.layout_slice %k2, %ym, %t16, %xm, %t16 : !Lc
  %o3 = tensor_addr.layout_slice %k1, %y0, %t16, %x0, %t16 : !Lc
  %z = arith.constant 0.0 : f16
  %obj = coop.composite_construct %z : f16 -> !m
  %p1 = coop.load_tensor %In, %obj, %e2 : memref<64x64xf16>, !m, !Le -> !m
  %p2 = coop.load_tensor %In, %obj, %k3 : memref<64x64xf16>, !m, !Lc -> !m
  coop.store_tensor %p1, %Out1, %o3 : !m, memref<64x64xf16>, !Lc
  coop.store_tensor %p2, %Out2, %o3 : !m, memref<64x64xf16>, !Lc
  func.return
}
