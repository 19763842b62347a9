"""The order of `coop.reduce` (SPV_NV_cooperative_matrix2 leaves it open): the interpreter's
halving tree against an independent numpy model of it on data where the order shows (random
f32, whose sums round differently in every order), and the PTX lowering, run by
tests/ptx_sim.py, bit for bit the interpreter on the same data — subgroup Row, Column and
Row|Column at widths that are not powers of two, and workgroup Row over wgmma accumulators."""

from __future__ import annotations

import numpy as np
import pytest

from coopdialect import api


def halving(v: np.ndarray) -> np.float32:
    """Element i takes element i + h (h = P/2 ... 1, P the power of two >= n) while i + h < n."""
    v = [np.float32(x) for x in v]
    n = len(v)
    h = 1
    while h < n:
        h *= 2
    h //= 2
    while h >= 1:
        if n > h:
            for i in range(n - h):
                v[i] = np.float32(v[i] + v[i + h])
            n = h
        h //= 2
    return v[0]


KERNEL = """
func.func @add(%a: f32, %b: f32) -> f32 {{
  %r = arith.addf %a, %b : f32
  func.return %r : f32
}}
func.func @k(%X: memref<{M}x{N}xf32>, %Out: memref<3x{M}x{N}xf32>) attributes {{coop.workgroup_size = array<i32: {T}, 1, 1>}} {{
  %c0 = arith.constant 0 : index
  %ld = arith.constant {N} : index
  %x = coop.load %X[%c0], %ld, RowMajor : memref<{M}x{N}xf32> -> !coop.matrix<{M}x{N}xf32, {S}, MatrixAcc>
  %r = coop.reduce Row %x, @add : !coop.matrix<{M}x{N}xf32, {S}, MatrixAcc> -> !coop.matrix<{M}x{N}xf32, {S}, MatrixAcc>
  coop.store %r, %Out[%c0], %ld, RowMajor : !coop.matrix<{M}x{N}xf32, {S}, MatrixAcc>, memref<3x{M}x{N}xf32>
{REST}  func.return
}}
"""

SUBGROUP_REST = """  %c = coop.reduce Column %x, @add : !coop.matrix<{M}x{N}xf32, {S}, MatrixAcc> -> !coop.matrix<{M}x{N}xf32, {S}, MatrixAcc>
  %rc = coop.reduce Row|Column %x, @add : !coop.matrix<{M}x{N}xf32, {S}, MatrixAcc> -> !coop.matrix<{M}x{N}xf32, {S}, MatrixAcc>
  %o1 = arith.constant {MN} : index
  %o2 = arith.constant {MN2} : index
  coop.store %c, %Out[%o1], %ld, RowMajor : !coop.matrix<{M}x{N}xf32, {S}, MatrixAcc>, memref<3x{M}x{N}xf32>
  coop.store %rc, %Out[%o2], %ld, RowMajor : !coop.matrix<{M}x{N}xf32, {S}, MatrixAcc>, memref<3x{M}x{N}xf32>
"""

CASES = [(16, 24, "Subgroup", 32), (48, 40, "Subgroup", 32), (16, 8, "Subgroup", 32),
         (64, 48, "Workgroup", 128), (128, 136, "Workgroup", 256)]


def _text(m: int, n: int, scope: str, threads: int) -> str:
    rest = SUBGROUP_REST if scope == "Subgroup" else ""
    fields = dict(M=m, N=n, S=scope, T=threads, MN=m * n, MN2=2 * m * n)
    return KERNEL.format(REST=rest.format(**fields), **fields)


def _data(m: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(m * 1000 + n)
    return (rng.standard_normal((m, n)) * np.exp2(rng.integers(-8, 9, (m, n)))).astype(np.float32)


@pytest.mark.parametrize("m,n,scope,threads", CASES)
def test_interpreter_reduces_in_the_halving_tree(m, n, scope, threads) -> None:
    x = _data(m, n)
    out = np.zeros((3, m, n), np.float32)
    api.run_kernel(api.parse(_text(m, n, scope, threads), "reduce"), "k", [x, out], (1, 1, 1))
    rows = np.array([halving(r) for r in x], np.float32)
    assert np.array_equal(out[0], np.broadcast_to(rows[:, None], (m, n)))
    # the order shows on this data: the adjacent-pairs tree and a plain sum give other bits
    assert not np.array_equal(rows, x.sum(axis=1, dtype=np.float32))
    if scope == "Subgroup":
        cols = np.array([halving(c) for c in x.T], np.float32)
        assert np.array_equal(out[1], np.broadcast_to(cols[None, :], (m, n)))
        assert np.array_equal(out[2], np.full((m, n), halving(rows), np.float32))


@pytest.mark.parametrize("m,n,scope,threads", CASES)
def test_ptx_reduces_like_the_interpreter(m, n, scope, threads) -> None:
    import ptx_sim

    from coopdialect.context import make_context
    from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass

    text = _text(m, n, scope, threads)
    x = _data(m, n)
    want = [x, np.zeros((3, m, n), np.float32)]
    api.run_kernel(api.parse(text, "reduce"), "k", want, (1, 1, 1))
    module = api.parse(text, "reduce")
    ConvertCoopToPtxPass().apply(make_context(), module)
    got = [x, np.zeros((3, m, n), np.float32)]
    ptx_sim.Kernel(list(module.ops)[-1]).run(got, (1, 1, 1), (threads, 1, 1))
    assert np.array_equal(got[1].view(np.uint32), want[1].view(np.uint32)), \
        f"{np.count_nonzero(got[1] != want[1])} elements differ"
