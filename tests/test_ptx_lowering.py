"""Unit tests of the PTX backend: fragment layouts, printer, pass options, diagnostics."""

from __future__ import annotations

import itertools

import numpy as np

import pytest
from xdsl.dialects.builtin import IntegerType, Signedness, f16, f32
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

from coopdialect.context import make_context
from coopdialect.dialects.coop import MatrixType
from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass
from coopdialect.ptx import PtxTarget, emit_ptx
from coopdialect.ptx import fragments as fr
from coopdialect.ptx.printer import emit_to_string
from ptx_cases import ROOT

S8 = IntegerType(8, Signedness.SIGNED)


@pytest.mark.parametrize("t", [
    MatrixType(16, 16, f16, "Subgroup", "MatrixA"), MatrixType(32, 32, f16, "Subgroup", "MatrixA"),
    MatrixType(16, 16, f16, "Subgroup", "MatrixB"), MatrixType(16, 16, f32, "Subgroup", "MatrixAcc"),
    MatrixType(16, 64, S8, "Subgroup", "MatrixA"), MatrixType(32, 16, S8, "Subgroup", "MatrixB"),
])
def test_fragments_cover_each_element_once(t: MatrixType) -> None:
    lay = fr.subgroup_layout(t)
    held = [p for lane in range(32) for p in fr.element_positions(t, lay, lane)]
    assert sorted(held) == sorted(itertools.product(range(t.rows), range(t.columns)))


def test_wgmma_accumulator_covers_tile() -> None:
    t = MatrixType(64, 24, f32, "Workgroup", "MatrixAcc")
    lay = fr.wgmma_acc_layout(24)
    held = [p for w in range(4) for lane in range(32) for p in fr.element_positions(t, lay, lane, w)]
    assert sorted(held) == sorted(itertools.product(range(64), range(24)))


def test_ptx_isa_fragment_examples() -> None:
    # PTX ISA m16n8k16 A: lane 5 (g=1, q=1) holds a0,a1 at (1,2),(1,3), a2 at (9,2), a4 at (1,10).
    t = MatrixType(16, 16, f16, "Subgroup", "MatrixA")
    pos = fr.element_positions(t, fr.subgroup_layout(t), 5)
    assert pos[:5] == [(1, 2), (1, 3), (9, 2), (9, 3), (1, 10)]
    # m16n8k32 B (8-bit): lane 6 (g=1, q=2) holds b0..b3 at k = 8..11, b4 at k = 24, column 1.
    b = MatrixType(32, 8, S8, "Subgroup", "MatrixB")
    assert fr.element_positions(b, fr.subgroup_layout(b), 6)[:5] == [(8, 1), (9, 1), (10, 1), (11, 1), (24, 1)]


def _lower(path_or_text: str, target: str = "sm_90a", name: str = "t.mlir"):
    ctx = make_context()
    text = (ROOT / path_or_text).read_text() if path_or_text.endswith(".mlir") else path_or_text
    m = Parser(ctx, text, name).parse_module()
    m.verify()
    ConvertCoopToPtxPass(target=target).apply(ctx, m)
    m.verify()
    return m


def test_printer_is_deterministic_and_complete() -> None:
    a = emit_ptx(_lower("examples/gemm_f16.mlir"))
    b = emit_ptx(_lower("examples/gemm_f16.mlir"))
    assert a == b
    assert a.splitlines()[1:4] == [".version 8.0", ".target sm_90a", ".address_size 64"]
    assert ".visible .entry gemm_f16(" in a and ".reqntid 128, 1, 1" in a
    assert a.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 8


def test_target_interface_and_name() -> None:
    assert PtxTarget.name == "ptx" and ConvertCoopToPtxPass.name == "convert-coop-to-ptx"
    m = _lower("examples/gemm_s8.mlir")
    assert emit_to_string(m) == emit_ptx(m)


def test_unknown_target_is_an_error() -> None:
    with pytest.raises(DiagnosticException, match="unknown target 'sm_75'"):
        _lower("examples/gemm_s8.mlir", target="sm_75")


def test_wgmma_needs_sm90a() -> None:
    text = """
!a = !coop.matrix<64x16xf16, Workgroup, MatrixA>
func.func @k(%A: memref<1024xf16>) attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %x = coop.load %A[%c0], %c16, RowMajor : memref<1024xf16> -> !a
  func.return
}"""
    with pytest.raises(DiagnosticException, match="'coop.load' op .*needs target sm_90a, not sm_80"):
        _lower(text, target="sm_80")


def test_unsigned_saturation_is_refused() -> None:
    text = """
!a = !coop.matrix<16x32xui8, Subgroup, MatrixA>
!b = !coop.matrix<32x8xui8, Subgroup, MatrixB>
!c = !coop.matrix<16x8xui32, Subgroup, MatrixAcc>
func.func @k(%a: memref<512xui8>, %c: memref<128xui32>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c8 = arith.constant 8 : index
  %x = coop.load %a[%c0], %c32, RowMajor : memref<512xui8> -> !a
  %y = coop.load %a[%c0], %c32, ColumnMajor : memref<512xui8> -> !b
  %z = coop.load %c[%c0], %c8, RowMajor : memref<128xui32> -> !c
  %d = coop.mul_add %x, %y, %z <SaturatingAccumulation> : !a, !b, !c -> !c
  func.return
}"""
    with pytest.raises(DiagnosticException, match="'coop.mul_add' op SaturatingAccumulation"):
        _lower(text)


# Unsigned division by constants (KernelLowering.udiv_const): ptxas compiles `div`/`rem` by a
# constant as a full division, so the lowering emits a multiply-high sequence instead; run it in
# the PTX simulator against the interpreter's integer division on edge and random values.
DIVISORS = [1, 2, 3, 5, 6, 7, 12, 48, 641, 1000003, 2**31 - 1, 2**31 + 1]


def _division_kernel(t: str) -> str:
    outs = ", ".join(f"%q{i}: memref<256x{t}>, %r{i}: memref<256x{t}>" for i in range(len(DIVISORS)))
    body = []
    for i, d in enumerate(DIVISORS):
        body += [f"  %d{i} = arith.constant {d} : {t}",
                 f"  %vq{i} = arith.divui %x, %d{i} : {t}",
                 f"  %vr{i} = arith.remui %x, %d{i} : {t}",
                 f"  memref.store %vq{i}, %q{i}[%g] : memref<256x{t}>",
                 f"  memref.store %vr{i}, %r{i}[%g] : memref<256x{t}>"]
    return "\n".join([
        f"func.func @divs(%xs: memref<256x{t}>, {outs}) "
        "attributes {coop.workgroup_size = array<i32: 64, 1, 1>} {",
        "  %g = gpu.global_id x",
        f"  %x = memref.load %xs[%g] : memref<256x{t}>", *body, "  func.return", "}"])


@pytest.mark.parametrize("t,dtype", [("i32", np.uint32), ("i64", np.uint64)])
def test_division_by_constants_matches_numpy(t: str, dtype) -> None:
    import ptx_sim
    from test_nv2_ptx import _lower

    w = np.iinfo(dtype).bits
    rng = np.random.default_rng(11)
    edge = [0, 1, 2, 3, 4, 5, 6, 7, 640, 641, 642, 2**31 - 1, 2**31, 2**32 - 1, 2**w - 1, 2**w - 2]
    x = np.concatenate([np.array(edge, np.uint64),
                        rng.integers(0, 2**w - 1, 256 - len(edge), dtype=np.uint64, endpoint=True)])
    for d in DIVISORS:  # values just around multiples of each divisor
        for at in rng.integers(len(edge), 256, 4):
            x[at] = (int(rng.integers(1, 2**31)) * (2**w // d) // 2**31 * d - int(rng.integers(0, 2))) % 2**w
    x = x.astype(dtype)
    text = _division_kernel(t)
    kernel = _lower(text, "divs")["divs"]
    ptx_text = emit_to_string(kernel.parent_op())
    assert "div." not in ptx_text and "rem." not in ptx_text
    sdt = np.int32 if w == 32 else np.int64
    bufs = [x.view(sdt).copy()] + [np.zeros(256, sdt) for _ in range(2 * len(DIVISORS))]
    ptx_sim.Kernel(kernel).run(bufs, (4, 1, 1), (64, 1, 1))
    for i, d in enumerate(DIVISORS):
        assert np.array_equal(bufs[1 + 2 * i].view(dtype), x // dtype(d)), d
        assert np.array_equal(bufs[2 + 2 * i].view(dtype), x % dtype(d)), d


def test_ptx_fast_paths_agree_with_irdl() -> None:
    """The ptx dialect builds instructions and verifies register-only ops without IRDL's generic
    machinery: the ops it builds equal IRDL's, its verifier accepts and rejects exactly what
    IRDL's definition does, and an op's own verifier still runs."""
    from xdsl.dialects.builtin import IntAttr, StringAttr, i32
    from xdsl.ir import Block, Region
    from xdsl.irdl import IRDLOperation
    from xdsl.utils.exceptions import VerifyException
    from xdsl.utils.test_value import create_ssa_value

    from coopdialect.dialects import ptx

    a, b = create_ssa_value(ptx.B32), create_ssa_value(ptx.B64)
    fast = ptx.AddOp(".u32", [a, a], [ptx.B32])
    generic = ptx.AddOp.__new__(ptx.AddOp)
    IRDLOperation.__init__(generic, operands=[[a, a]], result_types=[[ptx.B32]],
                           properties={"mods": StringAttr(".u32")})
    assert fast.is_structurally_equivalent(generic)
    assert ([o.type for o in fast.operands], [r.type for r in fast.results], fast.properties) == \
        ([o.type for o in generic.operands], [r.type for r in generic.results], generic.properties)

    for fast, operands, result_types, props in [
            (ptx.StOp(".global.b32", b, 8, [a, a]), [b, [a, a]], [],
             {"mods": StringAttr(".global.b32"), "offset": IntAttr(8)}),
            (ptx.LdOp(".global.v2.b32", b, 0, [ptx.B32, ptx.B32]), [b], [[ptx.B32, ptx.B32]],
             {"mods": StringAttr(".global.v2.b32"), "offset": IntAttr(0)}),
            (ptx.LdParamOp("p", "u32"), [], [ptx.B32],
             {"param": StringAttr("p"), "type": StringAttr("u32")})]:
        generic = type(fast).__new__(type(fast))
        IRDLOperation.__init__(generic, operands=operands, result_types=result_types, properties=props)
        assert fast.is_structurally_equivalent(generic), fast.name
        assert [o.type for o in fast.results] == [o.type for o in generic.results]
    with pytest.raises(ValueError):  # a wrong count still fails in IRDL's builder
        ptx.PtxOp.__init__(ptx.StOp.__new__(ptx.StOp), operands=[b], properties={})

    def irdl_rejects(op) -> bool:
        try:
            type(op).get_irdl_definition().verify(op)
        except VerifyException:
            return True
        return False

    def fast_rejects(op) -> bool:
        try:
            op.verify_()
        except VerifyException:
            return True
        return False

    def edited(make, edit):
        op = make()
        edit(op)
        return op

    def variants(make, good_props):
        yield make()
        yield edited(make, lambda op: op.properties.update(extra=StringAttr("x")))   # undeclared
        for name in good_props:
            yield edited(make, lambda op: op.properties.pop(name))                   # missing
            yield edited(make, lambda op: op.properties.update({name: ptx.B32}))     # wrong class
        yield edited(make, lambda op: op.add_region(Region(Block())))               # a region

    cases = [
        (lambda: ptx.AddOp(".u32", [a, a], [ptx.B32]), ["mods"]),
        (lambda: ptx.AddOp(".u32", [], []), ["mods"]),
        (lambda: ptx.AddOp(".u32", [a, create_ssa_value(i32)], [ptx.B32]), []),      # not a register
        (lambda: ptx.AddOp(".u32", [a], [i32]), []),
        (lambda: ptx.LdOp(".global.b32", b, 4, [ptx.B32, ptx.B32]), ["mods", "offset"]),
        (lambda: ptx.LdOp(".global.b32", b, 4, []), []),
        (lambda: ptx.StOp(".global.b32", b, 0, [a]), ["mods", "offset"]),
        (lambda: ptx.LdOp.create(operands=[], result_types=[ptx.B32],                 # no address
                                 properties={"mods": StringAttr(""), "offset": IntAttr(0)}), []),
        (lambda: ptx.StOp.create(operands=[b, a], result_types=[ptx.B32],             # a result
                                 properties={"mods": StringAttr(""), "offset": IntAttr(0)}), []),
        (lambda: ptx.MovImmOp(".u32", "5", ptx.B32), ["mods", "imm"]),
        (lambda: ptx.MovImmOp.create(result_types=[],                                  # no result
                                     properties={"mods": StringAttr(""), "imm": StringAttr("5")}), []),
    ]
    verdicts = [(irdl_rejects(op), fast_rejects(op)) for make, props in cases
                for op in variants(make, props)]
    assert all(i == f for i, f in verdicts), verdicts
    # accepted: the unedited ops of the six well-formed cases, nothing else
    assert [i for i, _ in verdicts].count(False) == 6 and not verdicts[0][0]
    assert all("register_shape" in op.verify_.__qualname__ for op in (ptx.AddOp, ptx.LdOp, ptx.StOp,
                                                                      ptx.MovImmOp, ptx.LdParamOp))

    # PtxOp.verify (for an op that does not end its block: the erased-operand check and verify_
    # only) rejects exactly what Operation.verify does, in a block's middle and at its end
    from xdsl.ir import Operation
    from xdsl.ir.core import ErasedSSAValue

    def rejects(verify, op) -> bool:
        try:
            verify(op)
        except (VerifyException, ValueError):
            return True
        return False

    def erased(op):
        op.operands = [ErasedSSAValue(v.type, v) for v in op.operands]

    ops = [op for make, props in cases for op in variants(make, props)]
    ops += [edited(cases[0][0], erased), edited(cases[4][0], erased)]
    for last in (False, True):
        for op in ops:
            if op.parent is not None:
                op.detach()
            Region(Block([op] if last else [op, ptx.RetOp()]))
            assert rejects(op.verify, op) == rejects(Operation.verify, op), (op.name, last)
    assert sum(rejects(op.verify, op) for op in ops) == len(ops) - 6

    # LdParamOp's own verifier (the register class of its parameter type) still runs
    bad = ptx.LdParamOp.create(result_types=[ptx.B32], properties={"param": StringAttr("p")})
    with pytest.raises(VerifyException, match="ld.param.u64 needs a .b64 register"):
        bad.verify_()
    ptx.LdParamOp("p").verify_()


@pytest.mark.parametrize("n", [1, 2, 3])
def test_minctasm_is_minnctapersm_and_ptxas_fits_it(n, tmp_path) -> None:
    """`nvvm.minctasm = N` on a kernel is `.minnctapersm N` beside `.reqntid`, which ptxas
    honours: the registers a thread uses fit N workgroups into the 64K of a multiprocessor."""
    import re
    import subprocess

    from coopdialect import api
    from validators import ptxas

    text = (ROOT / "examples/gemm_f16.mlir").read_text().replace(
        "attributes {coop.workgroup_size = array<i32: 128, 1, 1>}",
        f"attributes {{coop.workgroup_size = array<i32: 128, 1, 1>, nvvm.minctasm = {n} : i32}}")
    ptx = api.compile_to_ptx(api.parse(text))
    assert f".reqntid 128, 1, 1\n.minnctapersm {n}\n" in ptx
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    r = subprocess.run([ptxas(), "-arch=sm_90a", "-v", str(path), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert int(re.search(r"Used (\d+) registers", r.stderr).group(1)) * 128 * n <= 65536


def test_minctasm_must_be_positive() -> None:
    from coopdialect import api
    from coopdialect.errors import CoopError

    text = (ROOT / "examples/gemm_f16.mlir").read_text().replace(
        "attributes {coop.workgroup_size = array<i32: 128, 1, 1>}",
        "attributes {coop.workgroup_size = array<i32: 128, 1, 1>, nvvm.minctasm = 0 : i32}")
    with pytest.raises(CoopError, match="nvvm.minctasm must be a positive integer"):
        api.compile_to_ptx(api.parse(text, "k.mlir"))
