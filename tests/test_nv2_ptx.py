"""Cooperative-matrix-2 and tensor addressing through convert-coop-to-ptx (issue 13).

* The address arithmetic of the PTX rules (coopdialect/ptx/tensor_rules.element_address on
  ptx/affine.py) is executed here, instruction by instruction, by a small evaluator of the PTX
  integer instructions it emits (PTX ISA semantics: s64 wrap, u64 division, truncated s64
  division, setp/selp), for every element of random tensor-addressing cases (tests/tensor_ir.py:
  all clamp modes, Dim 1-5 layouts with block sizes, slices, strides; views with permutations
  and clips; operands constant or run-time values), and compared with the interpreter's
  `tensor_element_indices` on every element whose address is used.
* Random cases through ptxas; one-line diagnostics for what is not lowered.
The whole kernels run on a GPU in tests/gpu/test_gpu_nv2_ptx.py.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType

import tensor_ir
from coopdialect import api
from coopdialect.dialects import coop_nv2 as nv2
from coopdialect.dialects import ptx
from coopdialect.dialects import tensor_addr as ta
from coopdialect.interpreter.tensor_addr import (AddressingError, LayoutValue, ViewValue,
                                                 tensor_element_indices)
from coopdialect.ptx import affine as af
import coopdialect.ptx.lower  # noqa: F401  (registers every rule in RULES)
from coopdialect.ptx.kernel_lowering import RULES, Scalar
from cli import run_coop_opt
from tensor_cases import compile_ptx
from test_ptx_ptxas import _ptxas, find_ptxas
from hypothesis_profiles import scaled
import parsed

M64 = (1 << 64) - 1


def _s64(v: int) -> int:
    v &= M64
    return v - (1 << 64) if v >> 63 else v


class Reg:
    """A register of the evaluator: one Python int per matrix element (object array)."""

    def __init__(self, v) -> None:
        self.v = v


def _u64(x):
    return np.vectorize(lambda a: int(a) & M64, otypes=[object])(x)


def _trunc_div(a, b):
    return int(abs(a) // abs(b)) * (1 if (a >= 0) == (b >= 0) else -1) if b else 0


class EvalLowering:
    """Stands in for KernelLowering: `inst`/`imm` evaluate instead of emitting."""

    def __init__(self) -> None:
        self.cur = object()
        self.vmap: dict = {}

    def scalar(self, v):
        return self.vmap[v]

    def imm(self, kind: str, lit: str) -> Reg:
        return Reg(np.array(_s64(int(lit, 0)), dtype=object))

    def inst(self, cls, mods: str, args, kind: str, pro: bool = False) -> Reg:
        a = [x.v for x in args]
        f = np.vectorize
        if cls is ptx.MulOp and mods == ".lo.s64":
            r = f(lambda x, y: _s64(x * y), otypes=[object])(*a)
        elif cls is ptx.MadOp and mods == ".lo.s64":
            r = f(lambda x, y, z: _s64(x * y + z), otypes=[object])(*a)
        elif cls is ptx.AddOp and mods == ".s64":
            r = f(lambda x, y: _s64(x + y), otypes=[object])(*a)
        elif cls is ptx.SubOp and mods == ".s64":
            r = f(lambda x, y: _s64(x - y), otypes=[object])(*a)
        elif cls is ptx.AndOp and mods == ".b64":
            r = f(lambda x, y: _s64(x & y), otypes=[object])(*a)
        elif cls is ptx.ShrOp and mods == ".s64":
            r = f(lambda x, k: x >> k, otypes=[object])(*a)
        elif cls is ptx.CvtOp and mods == ".u64.u32":
            r = f(lambda x: x & 0xFFFFFFFF, otypes=[object])(*a)
        elif cls is ptx.CvtOp and mods == ".u32.u64":
            r = f(lambda x: x & 0xFFFFFFFF, otypes=[object])(*a)
        elif cls is ptx.CvtOp and mods == ".s64.s32":
            r = f(lambda x: ((x & 0xFFFFFFFF) ^ 2**31) - 2**31, otypes=[object])(*a)
        elif cls in (ptx.DivOp, ptx.RemOp) and mods == ".u64":
            div = cls is ptx.DivOp
            r = f(lambda x, y: _s64(((x & M64) // (y & M64) if div else (x & M64) % (y & M64))
                                    if y else 0), otypes=[object])(*a)
        elif cls in (ptx.DivOp, ptx.RemOp) and mods == ".s64":
            div = cls is ptx.DivOp
            r = f(lambda x, y: (_trunc_div(x, y) if div else x - y * _trunc_div(x, y)) if y
                  else 0, otypes=[object])(*a)
        elif cls is ptx.SetpOp and mods == ".lt.s64":
            r = f(lambda x, y: x < y, otypes=[object])(*a)
        elif cls is ptx.SelpOp and mods == ".b64":
            r = f(lambda x, y, p: x if p else y, otypes=[object])(*a)
        elif cls in (ptx.MinOp, ptx.MaxOp) and mods == ".s64":
            r = f(min if cls is ptx.MinOp else max, otypes=[object])(*a)
        elif cls is ptx.NotOp and mods == ".pred":
            r = f(lambda p: not p, otypes=[object])(*a)
        elif cls in (ptx.OrOp, ptx.AndOp) and mods == ".pred":
            r = f((lambda p, q: p or q) if cls is ptx.OrOp else (lambda p, q: p and q),
                  otypes=[object])(*a)
        else:
            raise AssertionError(f"evaluator lacks {cls.OPCODE}{mods}")
        return Reg(r)


def _value(x, shape):
    """An Aff or Pred as a (rows, cols) array of Python ints / bools."""
    if isinstance(x, bool):
        return np.full(shape, x, dtype=object)
    if isinstance(x, Reg):
        return np.broadcast_to(x.v, shape)
    total = np.full(shape, x.const, dtype=object)
    for c, a in x.terms:
        total = total + c * np.broadcast_to(a.reg.v, shape)
    return total


def _evaluate(case: dict) -> tuple[dict, object]:
    """Run the case's layout/view ops through the PTX rules on the evaluator, then
    element_address for every element; returns the arrays and the interpreter's Addresses."""
    from coopdialect.ptx.tensor_rules import element_address

    text, scalars = tensor_ir.case_ir(case)
    module = parsed.parse(text, "case")
    fn = next(op for op in module.ops if hasattr(op, "sym_name") and op.sym_name.data == "k")
    lw = EvalLowering()
    for arg, v in zip(fn.args[2:], scalars):
        lw.vmap[arg] = Scalar(IntegerType(32), reg=Reg(np.array(v & 0xFFFFFFFF, dtype=object)))
    mem_op = None
    for op in fn.body.block.ops:
        if op.name.startswith("tensor_addr") or isinstance(op, arith.ConstantOp):
            RULES[type(op)](lw, op)
        elif isinstance(op, nv2.LoadTensorOp | nv2.StoreTensorOp):
            mem_op = op
    rows, cols = case["rows"], case["cols"]
    r = af.atom(Reg(np.arange(rows, dtype=object)[:, None]), 0, rows - 1)
    c = af.atom(Reg(np.arange(cols, dtype=object)[None, :]), 0, cols - 1)
    store = case["kind"] == "store"
    ar = af.Arith(lw)
    lay = lw.vmap[mem_op.layout]
    view = lw.vmap[mem_op.view] if mem_op.view is not None else None
    e = element_address(ar, lay, view, r, c, cols, store)
    shape = (rows, cols)
    got = {"index": _value(e.index, shape), "active": _value(e.active, shape),
           "discarded": _value(e.discarded, shape),
           "block": [_value(b, shape) for b in e.block], "inner": [_value(i, shape) for i in e.inner]}
    # the interpreter on the same state
    t = ta.constant_layout_state(mem_op.layout)
    if t is None:  # dynamic operands: evaluate the chain with the spec functions
        t = _state_of(mem_op.layout, module, scalars, fn)
    layout = LayoutValue(mem_op.layout.type.mode, t)
    vv = None
    if mem_op.view is not None:
        vt = mem_op.view.type
        vv = ViewValue(vt.has_dims, vt.perm, _state_of(mem_op.view, module, scalars, fn, True))
    try:
        want = tensor_element_indices(layout, rows, cols, vv, store)
    except AddressingError:
        want = None
    return got, want


def _state_of(v, module, scalars, fn, view=False):
    vals = {a: s & 0xFFFFFFFF for a, s in zip(fn.args[2:], scalars)}
    chain = []
    while not isinstance(v.owner, ta.CreateLayoutOp | ta.CreateViewOp):
        chain.append(v.owner)
        v = v.owner.input
    rank = v.type.rank
    s = ta.ViewState.create(rank) if view else ta.LayoutState.create(rank)
    for op in reversed(chain):
        operands = [vals[x] if x in vals else ta.const_u32(x) for x in op.values]
        s = (ta.apply_view if view else ta.apply_layout)(op.name, s, operands)
    return s


@settings(max_examples=scaled(40), deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1))
def test_address_arithmetic_matches_interpreter(seed: int) -> None:
    rng = random.Random(seed)
    case = tensor_ir.random_case(rng)
    if tensor_ir.expected(case, np.zeros(case["mem"], np.int32),
                          np.zeros((case["rows"], case["cols"]), np.int32)) is None:
        return  # a broken stride rule or undefined behaviour: nothing to compare
    got, want = _evaluate(case)
    if want is None:
        return  # undefined behaviour: any address is right
    used = want.active & ~want.discarded
    assert np.array_equal(got["active"].astype(bool), want.active)
    assert np.array_equal(got["discarded"].astype(bool)[want.active], want.discarded[want.active])
    assert np.array_equal(got["index"][used].astype(np.int64), want.index[used])
    for d in range(len(got["block"])):
        assert np.array_equal(got["block"][d][used].astype(np.int64) & 0xFFFFFFFF,
                              want.block_coord[..., d][used] & 0xFFFFFFFF)
        assert np.array_equal(got["inner"][d][used].astype(np.int64),
                              want.coord_in_block[..., d][used])


def test_random_tensor_cases_assemble(tmp_path: Path) -> None:
    ptxas = find_ptxas()
    rng = random.Random(13)
    bad = []
    i = 0
    while i < 12:
        case = tensor_ir.random_case(rng)
        case["mode"] = ["Undefined", "Constant", "ClampToEdge", "Repeat", "RepeatMirrored"][i % 5]
        case["rows"], case["cols"] = rng.choice([16, 32]), rng.choice([16, 32])
        case["dynamic"] = set()
        z = np.zeros(case["mem"], np.int32)
        if tensor_ir.expected(case, z, np.zeros((case["rows"], case["cols"]), np.int32)) is None:
            continue  # invalid IR or undefined behaviour
        i += 1
        text, _ = tensor_ir.case_ir(case)
        p = tmp_path / f"case{i}.ptx"
        p.write_text(compile_ptx(text, f"case{i}"))
        rc, out = _ptxas(ptxas, p)
        if rc or out:
            bad.append(f"case {i}: {out}")
    assert not bad, "\n".join(bad)


REDUCE_WG = """
func.func @add(%a: f32, %b: f32) -> f32 {
  %r = arith.addf %a, %b : f32
  func.return %r : f32
}
func.func @k(%X: memref<64x64xf32>) attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %z = arith.constant 0.0 : f32
  %m = coop.composite_construct %z : f32 -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  %r = coop.reduce Column %m, @add : !coop.matrix<64x64xf32, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
  func.return
}
"""

CONVERT_B_WG = """
func.func @k(%X: memref<64x64xf16>) attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %z = arith.constant 0.0 : f16
  %m = coop.composite_construct %z : f16 -> !coop.matrix<64x64xf16, Workgroup, MatrixAcc>
  %r = coop.convert %m : !coop.matrix<64x64xf16, Workgroup, MatrixAcc> -> !coop.matrix<64x64xf16, Workgroup, MatrixB>
  func.return
}
"""

@pytest.mark.parametrize("text,message", [
    (REDUCE_WG, "'coop.reduce' op Column reduce of a Workgroup-scope matrix has no PTX lowering"),
    (CONVERT_B_WG, "'coop.convert' op convert of a Workgroup-scope accumulator to MatrixB"),
])
def test_unsupported_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "k.mlir"
    p.write_text(text)
    r = run_coop_opt([p, "-p", "convert-coop-to-ptx", "-t", "ptx"])
    assert r.returncode == 1 and not r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and f"{p}:" in lines[0], r.stderr


# ---------------------------------------------------------------------------------------------
# Whole kernels: the lowered PTX executed by tests/ptx_sim.py against the interpreter
# ---------------------------------------------------------------------------------------------


def _lower(text: str, source: str, fold: bool = False):
    from coopdialect.context import make_context
    from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass
    from coopdialect.passes.fold_tensor_views import FoldTensorViewsPass

    module = parsed.parse(text, source)
    if fold:
        FoldTensorViewsPass().apply(make_context(), module)
    ConvertCoopToPtxPass().apply(make_context(), module)
    return {k.sym_name.data: k for k in module.ops}


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


def _run_both(text, source, kernel, bufs, grid, block, fold=False, shifts=None):
    import ptx_sim

    want = [b.copy() for b in bufs]
    api.run_kernel(parsed.parse(text, source), kernel, want, grid)
    got = [b.copy() for b in bufs]
    ptx_sim.Kernel(_lower(text, source, fold)[kernel]).run(got, grid, block, shifts)
    for i, (g, w) in enumerate(zip(got, want)):
        assert _same_bits(g, w), f"{kernel} buffer {i}: {np.count_nonzero(g != w)} elements differ"


EX = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("fold", [False, True])
def test_conv_patch_clamped_runs_like_the_interpreter(fold: bool) -> None:
    rng = np.random.default_rng(5)
    bufs = [rng.integers(-1000, 1000, (64, 64)).astype(np.float16),
            np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float16)]
    _run_both((EX / "conv_patch_clamped.mlir").read_text(), "conv", "conv_patch", bufs,
              (4, 4, 1), (32, 1, 1), fold)


def test_softmax_rows_runs_like_the_interpreter() -> None:
    rng = np.random.default_rng(6)
    bufs = [rng.integers(-64, 65, (64, 16)).astype(np.float32), np.zeros((64, 16), np.float32),
            np.zeros((32, 8), np.float32)]
    _run_both((EX / "softmax_rows.mlir").read_text(), "softmax", "softmax_rows", bufs,
              (1, 4, 1), (32, 1, 1))


def test_dequant_q4_runs_like_the_interpreter() -> None:
    from test_decode_func import make_q4_0
    q, _ = make_q4_0(np.random.default_rng(7))
    _run_both((EX / "block_decode_load.mlir").read_text(), "decode", "dequant_q4",
              [q, np.zeros((64, 128), np.float16)], (8, 4, 1), (32, 1, 1))


@pytest.mark.parametrize("seed", range(8))
def test_random_tensor_case_runs_like_the_interpreter(seed: int) -> None:
    rng = random.Random(1000 + seed)
    nrng = np.random.default_rng(seed)
    while True:
        case = tensor_ir.random_case(rng)
        case["mode"] = ["Undefined", "Constant", "ClampToEdge", "Repeat", "RepeatMirrored"][seed % 5]
        case["rows"], case["cols"] = rng.choice([16, 32]), rng.choice([16, 32])
        case["dynamic"] = set()
        buf, mat = tensor_ir.case_inputs(case, nrng)
        if tensor_ir.expected(case, buf, mat) is not None:
            break
    text, _ = tensor_ir.case_ir(case)
    _run_both(text, "case", "k", [buf, mat], (1, 1, 1), (32, 1, 1))


@pytest.mark.parametrize("shift", [0, 2])
def test_coopmat2_gemm_two_warpgroups_runs_like_the_interpreter(shift: int) -> None:
    """The generated coopmat2 GEMM (256 invocations = 2 warpgroups, 128x256 accumulator, A/B
    staged from load_tensor, 4 chained wgmma per warpgroup) at its smallest size; the
    simulator computes wgmma from the shared-memory descriptors as the ISA defines them.
    With A and B 16-byte aligned the staging takes the ld.global.v4 path, with both moved by
    2 bytes the element path."""
    from coopdialect.kernels.coopmat2_gemm import coopmat2_gemm_ir, grid

    rng = np.random.default_rng(8)
    bufs = [rng.integers(-4, 5, (128, 64)).astype(np.float16),
            rng.integers(-4, 5, (64, 256)).astype(np.float16), np.zeros((128, 256), np.float32)]
    _run_both(coopmat2_gemm_ir(128, 256, 64), "gen", "gemm_coopmat2", bufs, grid(128, 256),
              (256, 1, 1), shifts=[shift, shift, 0])


NV2_OPS_KERNEL = """
!acc = !coop.matrix<{M}x{N}xf16, Subgroup, MatrixAcc>
!ma = !coop.matrix<{M}x{N}xf16, Subgroup, MatrixA>
!mb = !coop.matrix<{M}x{N}xf16, Subgroup, MatrixB>
!tb = !coop.matrix<{N}x{M}xf16, Subgroup, MatrixB>
!L = !tensor_addr.layout<2, Constant>
func.func @add(%a: f16, %b: f16) -> f16 {{
  %r = arith.addf %a, %b : f16
  func.return %r : f16
}}
func.func @maxf(%a: f16, %b: f16) -> f16 {{
  %r = arith.maximumf %a, %b : f16
  func.return %r : f16
}}
func.func @pos(%r: i32, %c: i32, %x: f16, %s: f16, %y: f16) -> f16 {{
  %k = arith.constant 64 : i32
  %rk = arith.muli %r, %k : i32
  %i = arith.addi %rk, %c : i32
  %f = arith.sitofp %i : i32 to f16
  %t = arith.mulf %x, %s : f16
  %u = arith.subf %t, %y : f16
  %v = arith.addf %u, %f : f16
  func.return %v : f16
}}
func.func @k(%X: memref<{M}x{N}xf16>, %Out: memref<16x{M}x{N}xf16>) attributes {{coop.workgroup_size = array<i32: 64, 1, 1>}} {{
  %Mi = arith.constant {M} : i32
  %Ni = arith.constant {N} : i32
  %z = arith.constant 0 : i32
  %c0 = arith.constant 0 : index
  %ld = arith.constant {N} : index
  %ldt = arith.constant {M} : index
  %l0 = tensor_addr.create_layout : !L
  %l1 = tensor_addr.layout_set_dimension %l0, %Mi, %Ni : !L
  %x = coop.load %X[%c0], %ld, RowMajor : memref<{M}x{N}xf16> -> !acc
  %a = coop.convert %x : !acc -> !ma
  %b = coop.convert %x : !acc -> !mb
  %t = coop.transpose %x : !acc -> !tb
  %r = coop.reduce Row %x, @add : !acc -> !acc
  %c = coop.reduce Column %x, @maxf : !acc -> !acc
  %rc = coop.reduce Row|Column %x, @add : !acc -> !acc
  %s = arith.constant 1.5 : f16
  %p = coop.per_element_op @pos(%x, %s, %r) : !acc, f16, !acc -> !acc
  %sg = gpu.subgroup_id : index
  %per = arith.constant {MN8} : index
  %base = arith.muli %sg, %per : index
  %e1 = arith.constant {MN} : index
  %e2 = arith.constant {MN2} : index
  %e3 = arith.constant {MN3} : index
  %e4 = arith.constant {MN4} : index
  %e5 = arith.constant {MN5} : index
  %e6 = arith.constant {MN6} : index
  %q1 = arith.addi %base, %e1 : index
  %q2 = arith.addi %base, %e2 : index
  %q3 = arith.addi %base, %e3 : index
  %q4 = arith.addi %base, %e4 : index
  %q5 = arith.addi %base, %e5 : index
  %q6 = arith.addi %base, %e6 : index
  coop.store %a, %Out[%base], %ld, RowMajor : !ma, memref<16x{M}x{N}xf16>
  coop.store %b, %Out[%q1], %ld, RowMajor : !mb, memref<16x{M}x{N}xf16>
  coop.store %t, %Out[%q2], %ldt, RowMajor : !tb, memref<16x{M}x{N}xf16>
  coop.store %r, %Out[%q3], %ld, RowMajor : !acc, memref<16x{M}x{N}xf16>
  coop.store %c, %Out[%q4], %ld, RowMajor : !acc, memref<16x{M}x{N}xf16>
  coop.store %rc, %Out[%q5], %ld, RowMajor : !acc, memref<16x{M}x{N}xf16>
  coop.store %p, %Out[%q6], %ld, RowMajor : !acc, memref<16x{M}x{N}xf16>
  func.return
}}
"""


@pytest.mark.parametrize("m,n", [(16, 16), (32, 16)])
def test_convert_transpose_reduce_per_element_run_like_the_interpreter(m: int, n: int) -> None:
    """convert to A and B, transpose, reduce Row/Column/Row|Column, per_element_op with row
    and column, a scalar and a matrix operand; two subgroups per workgroup (a per-warp tile)."""
    mn = m * n
    text = NV2_OPS_KERNEL.format(M=m, N=n, MN=mn, MN2=2 * mn, MN3=3 * mn, MN4=4 * mn,
                                 MN5=5 * mn, MN6=6 * mn, MN8=8 * mn)
    rng = np.random.default_rng(m)
    x = rng.integers(-8, 9, (m, n)).astype(np.float16)
    _run_both(text, "nv2ops", "k", [x, np.zeros((16, m, n), np.float16)], (1, 1, 1), (64, 1, 1))


def test_workgroup_softmax_steps_run_like_the_interpreter() -> None:
    """Row reductions of a wgmma accumulator in registers, an f16 accumulator converted to MatrixA
    in place and P·V with A in registers (filecheck/ptx/nv2_workgroup_softmax.mlir): the simulated
    PTX writes the interpreter's bits (small-integer data: every product and sum is exact)."""
    rng = np.random.default_rng(12)
    bufs = [rng.integers(-3, 4, (64, 32)).astype(np.float16),
            rng.integers(-3, 4, (32, 64)).astype(np.float16),
            rng.integers(-3, 4, (64, 32)).astype(np.float16), np.zeros((64, 32), np.float32)]
    text = (Path(__file__).parent / "filecheck/ptx/nv2_workgroup_softmax.mlir").read_text()
    _run_both(text, "softmax_steps", "k", bufs, (1, 1, 1), (128, 1, 1))


ROW_CONSTANT_KERNEL = """
!L = !tensor_addr.layout<2, Constant>
!a = !coop.matrix<64x32xf16, Workgroup, MatrixA>
!b = !coop.matrix<32x64xf16, Workgroup, MatrixB>
!s = !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
!r = !coop.matrix<64x8xf32, Workgroup, MatrixAcc>
func.func @max(%a: f32, %b: f32) -> f32 {
  %r = arith.maximumf %a, %b : f32
  func.return %r : f32
}
func.func @maximum(%r: i32, %c: i32, %a: f32, %b: f32) -> f32 {
  %y = arith.maximumf %a, %b : f32
  func.return %y : f32
}
func.func @scaled(%r: i32, %c: i32, %x: f32, %s: f32) -> f32 {
  %y = arith.mulf %x, %s : f32
  func.return %y : f32
}
func.func @by_column(%r: i32, %c: i32, %x: f32) -> f32 {
  %f = arith.sitofp %c : i32 to f32
  %y = arith.addf %x, %f : f32
  func.return %y : f32
}
func.func @k(%Q: memref<64x32xf16>, %Kt: memref<32x64xf16>, %O: memref<16384xf32>,
             %s: f32) attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %i3 = arith.constant 3 : index
  %l0 = tensor_addr.create_layout : !L
  %lq = tensor_addr.layout_set_dimension %l0, %c64, %c32 : !L
  %lk = tensor_addr.layout_set_dimension %l0, %c32, %c64 : !L
  %zh = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %neg = arith.constant -1.0e30 : f32
  %oa = coop.composite_construct %zh : f16 -> !a
  %ob = coop.composite_construct %zh : f16 -> !b
  %zs = coop.composite_construct %zf : f32 -> !s
  %m0 = coop.composite_construct %neg : f32 -> !r
  %q = coop.load_tensor %Q, %oa, %lq : memref<64x32xf16>, !a, !L -> !a
  %k = coop.load_tensor %Kt, %ob, %lk : memref<32x64xf16>, !b, !L -> !b
  %st = coop.mul_add %q, %k, %zs : !a, !b, !s -> !s
  // a running max carried by a loop: row-constant through the loop's fixed point
  %m = scf.for %i = %i1 to %i3 step %i1 iter_args(%mi = %m0) -> (!r) {
    %rs = coop.per_element_op @scaled(%st, %s) : !s, f32 -> !s
    %mb = coop.reduce Row %rs, @max : !s -> !r
    %mn = coop.per_element_op @maximum(%mi, %mb) : !r, !r -> !r
    scf.yield %mn : !r
  }
  // row-constant: each row's value, no shuffles
  %w = coop.reduce Row %m, @max : !r -> !s
  %ms = coop.per_element_op @scaled(%m, %s) : !r, f32 -> !r
  %ws = coop.reduce Row %ms, @max : !r -> !s
  // not row-constant (the function reads the column): butterflies
  %mc = coop.per_element_op @by_column(%m) : !r -> !r
  %wc = coop.reduce Row %mc, @max : !r -> !s
  %ld = arith.constant 64 : index
  %p1 = arith.constant 4096 : index
  %p2 = arith.constant 8192 : index
  %p3 = arith.constant 12288 : index
  coop.store %st, %O[%i0], %ld, RowMajor : !s, memref<16384xf32>
  coop.store %w, %O[%p1], %ld, RowMajor : !s, memref<16384xf32>
  coop.store %ws, %O[%p2], %ld, RowMajor : !s, memref<16384xf32>
  coop.store %wc, %O[%p3], %ld, RowMajor : !s, memref<16384xf32>
  func.return
}
"""


def test_row_reduce_of_a_row_constant_matrix_takes_the_row_value() -> None:
    """A Row @max reduction of a matrix whose rows are constant (a Row reduction, a loop-carried
    running max of them, a per_element_op of them that does not read the column) is each row's
    value, taken from the thread's own register: no shuffle. One whose function reads the
    column is reduced across the quad. The simulated PTX writes the interpreter's bits."""
    from coopdialect.ptx.printer import emit_ptx

    text = ROW_CONSTANT_KERNEL
    ptx_text = emit_ptx(_lower(text, "rowc", False)["k"].parent_op())
    reduces = re.findall(r"// coop\.reduce Row (\S+) -> (\S+) Workgroup( of a row-constant)?",
                         ptx_text)
    assert reduces == [("64x64", "64x8", ""), ("64x8", "64x64", " of a row-constant"),
                       ("64x8", "64x64", " of a row-constant"), ("64x8", "64x64", "")]
    after = ptx_text.split("of a row-constant matrix")[-1]
    last = after.split("// coop.reduce Row")[1]
    assert "shfl.sync" not in after.split("// coop.per_element_op @by_column")[0]
    assert last.count("shfl.sync.bfly") == 4  # two rows a thread, lanes ^ 2 and ^ 1
    import ptx_sim

    rng = np.random.default_rng(21)
    bufs = [rng.integers(-3, 4, (64, 32)).astype(np.float16),
            rng.integers(-3, 4, (32, 64)).astype(np.float16), np.zeros(16384, np.float32)]
    scale = np.float32(0.5)
    want = [b.copy() for b in bufs] + [scale]
    api.run_kernel(parsed.parse(text, "rowc"), "k", want, (1, 1, 1))
    got = [b.copy() for b in bufs] + [scale.tobytes()]
    ptx_sim.Kernel(_lower(text, "rowc")["k"]).run(got, (1, 1, 1), (128, 1, 1))
    st = bufs[0].astype(np.float32) @ bufs[1].astype(np.float32)
    row_max = np.repeat((st * scale).max(axis=1, keepdims=True), 64, axis=1)
    assert np.array_equal(want[2][4096:8192].reshape(64, 64), row_max)  # the model
    assert _same_bits(got[2], want[2])


def test_row_constancy_follows_what_computes_a_matrix() -> None:
    """`row_uniform.RowConstancy`: a splat of a kernel argument is row-constant, a splat of a
    value computed from the thread id is not (each invocation may hold another), nor is a
    loop-carried matrix whose yielded value is not, nor what was derived from it, nor one of a
    loop whose trip count is the thread's."""
    from xdsl.dialects import scf

    from coopdialect.ptx.row_uniform import RowConstancy

    module = parsed.parse("""
!r = !coop.matrix<64x8xf32, Workgroup, MatrixAcc>
func.func @k(%x: f32) attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %t = gpu.thread_id x
  %ti = arith.index_cast %t : index to i32
  %tf = arith.sitofp %ti : i32 to f32
  %y = arith.mulf %x, %x : f32
  %a = coop.composite_construct %y : f32 -> !r
  %b = coop.composite_construct %tf : f32 -> !r
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %l = scf.for %i = %c0 to %c2 step %c1 iter_args(%v = %a) -> (!r) {
    %u = coop.fmul %v, %v : !r
    %n = coop.fadd %u, %b : !r
    scf.yield %n : !r
  }
  %k = scf.for %i = %c0 to %c2 step %c1 iter_args(%v = %a) -> (!r) {
    %n = coop.fadd %v, %a : !r
    scf.yield %n : !r
  }
  %bx = gpu.block_id x
  %g = scf.for %i = %c0 to %bx step %c1 iter_args(%v = %a) -> (!r) {
    %n = coop.fadd %v, %a : !r
    scf.yield %n : !r
  }
  %j = scf.for %i = %c0 to %t step %c1 iter_args(%v = %a) -> (!r) {
    %n = coop.fadd %v, %a : !r
    scf.yield %n : !r
  }
  func.return
}
""", "constancy")
    values = {op.results[0].name_hint: op.results[0] for op in module.walk()
              if op.results and op.results[0].name_hint}
    rc = RowConstancy()
    assert rc.row_constant(values["a"]) and not rc.row_constant(values["b"])
    loops = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    assert not rc.row_constant(loops[0].results[0])
    assert not rc.row_constant(values["u"])  # concluded while the loop's value was assumed
    assert rc.row_constant(loops[1].results[0])
    assert rc.row_constant(loops[2].results[0])  # as many trips as the workgroup id
    assert not rc.row_constant(loops[3].results[0])  # as many trips as the thread id


def test_row_constancy_of_a_chain_deeper_than_python_recurses_is_not_known() -> None:
    """A loop bound computed by a chain of adds deeper than Python's recursion limit: the
    analysis gives up (not row-constant) instead of failing, and keeps no assumption."""
    import sys

    from xdsl.dialects import scf

    from coopdialect.ptx.row_uniform import RowConstancy

    depth = sys.getrecursionlimit()
    chain = "\n".join(f"  %n{i + 1} = arith.addi %n{i}, %c1 : index" for i in range(depth))
    module = parsed.parse(f"""
!r = !coop.matrix<64x8xf32, Workgroup, MatrixAcc>
func.func @k(%x: f32) attributes {{coop.workgroup_size = array<i32: 128, 1, 1>}} {{
  %a = coop.composite_construct %x : f32 -> !r
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n0 = arith.constant 2 : index
{chain}
  %l = scf.for %i = %c0 to %n{depth} step %c1 iter_args(%v = %a) -> (!r) {{
    scf.yield %v : !r
  }}
  func.return
}}
""", "deep")
    loop = next(op for op in module.walk() if isinstance(op, scf.ForOp))
    rc = RowConstancy()
    assert not rc.row_constant(loop.results[0])
    assert rc.row_constant(loop.iter_args[0])  # and what is shallow is still known
