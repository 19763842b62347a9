"""Tensor loads and stores of accumulator tiles through plain box layouts (coopdialect/ptx/
box_access.py: whole rows inside the tensor, element by element at its edges, a bias row by a
1-D layout), run by the PTX simulator (tests/ptx_sim.py) against the interpreter, which follows
SPV_NV_tensor_addressing's pseudo-code.

The kernel (the shape of coopdialect.kernels.gemm's split-K reduction, on small tiles): 64 x 8
f32 tiles of S partial sums loaded through a 3-D layout (S x M x N, one slice each) and added, a
bias row added through a 1-D layout of span 8, the sum converted to f16 and stored through a 2-D
layout; M = 70 and N = 13 or 14 cut the tiles at the bottom, at the right and at both.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from coopdialect import api

KERNEL = """
!L = !tensor_addr.layout<2, Constant>
!L3 = !tensor_addr.layout<3, Constant>
!L1 = !tensor_addr.layout<1, Constant>
!r = !coop.matrix<64x8xf32, Workgroup, MatrixAcc>
!h = !coop.matrix<64x8xf16, Workgroup, MatrixAcc>
func.func @reduce(%W: memref<?xf32>, %D: memref<?x?xf16>, %bias: memref<?xf16>, %M: i32, %N: i32,
                  %S: i32) attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %t64 = arith.constant 64 : i32
  %t8 = arith.constant 8 : i32
  %l3 = tensor_addr.create_layout : !L3
  %lw = tensor_addr.layout_set_dimension %l3, %S, %M, %N : !L3
  %l0 = tensor_addr.create_layout : !L
  %ld = tensor_addr.layout_set_dimension %l0, %M, %N : !L
  %l1 = tensor_addr.create_layout : !L1
  %lb = tensor_addr.layout_set_dimension %l1, %N : !L1
  %wx = gpu.block_id x
  %wy = gpu.block_id y
  %x = arith.index_cast %wx : index to i32
  %y = arith.index_cast %wy : index to i32
  %row0 = arith.muli %y, %t64 : i32
  %col0 = arith.muli %x, %t8 : i32
  %zf = arith.constant 0.0 : f32
  %zh = arith.constant 0.0 : f16
  %init = coop.composite_construct %zf : f32 -> !r
  %s = arith.index_cast %S : i32 to index
  %sum = scf.for %zz = %c0 to %s step %c1 iter_args(%acc = %init) -> (!r) {
    %z = arith.index_cast %zz : index to i32
    %lws = tensor_addr.layout_slice %lw, %z, %one, %row0, %t64, %col0, %t8 : !L3
    %p = coop.load_tensor %W, %init, %lws : memref<?xf32>, !r, !L3 -> !r
    %a2 = coop.fadd %acc, %p : !r
    scf.yield %a2 : !r
  }
  %lbs = tensor_addr.layout_slice %lb, %col0, %t8 : !L1
  %oh = coop.composite_construct %zh : f16 -> !h
  %bh = coop.load_tensor %bias, %oh, %lbs : memref<?xf16>, !h, !L1 -> !h
  %bf = coop.f_convert %bh : !h -> !r
  %sb = coop.fadd %sum, %bf : !r
  %out = coop.f_convert %sb : !r -> !h
  %lds = tensor_addr.layout_slice %ld, %row0, %t64, %col0, %t8 : !L
  coop.store_tensor %out, %D, %lds : !h, memref<?x?xf16>, !L
  func.return
}
"""


@pytest.mark.parametrize("n", [14, 13])  # pair-aligned rows (whole-row stores), or not
def test_box_loads_and_stores_run_like_the_interpreter(n):
    import ptx_sim

    m, s = 70, 2  # tiles whole, cut at the right, below, and both
    rng = np.random.default_rng(7)
    w = rng.integers(-64, 65, s * m * n).astype(np.float32)
    bias = rng.integers(-8, 9, n).astype(np.float16)
    grid = (-(-n // 8), -(-m // 64), 1)
    want = np.full((m, n), np.nan, np.float16)
    api.run_kernel(api.parse(KERNEL, "box.mlir"), "reduce", [w, want, bias, m, n, s], grid)
    ref = (w.reshape(s, m, n).sum(0) + bias.astype(np.float32)).astype(np.float16)
    assert np.array_equal(want, ref)  # the interpreter against numpy first

    module = api.parse(KERNEL, "box.mlir")
    api.run_pipeline(module, "convert-coop-to-ptx")
    (k,) = module.ops
    text = "\n".join(str(op) for op in k.walk())
    assert "whole rows" in text  # the box path, not the element-by-element rule
    got = np.full((m, n), np.nan, np.float16)
    scalars = [struct.pack("<I", v) for v in (m, n, s)]
    ptx_sim.Kernel(k).run([w.copy(), got, bias.copy(), *scalars], grid, (128, 1, 1))
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))
