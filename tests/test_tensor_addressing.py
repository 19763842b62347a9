"""The interpreter's tensor-addressed loads/stores vs the independent scalar reference
(tests/tensor_reference.py, written from the spec text): random layouts, views, clamp modes,
block sizes, constant and dynamic operands; identical element indices and identical values, and
an error exactly where the reference hits undefined behavior."""

from __future__ import annotations

import os
import random
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import tensor_ir  # noqa: E402
import tensor_reference as ref  # noqa: E402
from coopdialect.context import make_context  # noqa: E402
from coopdialect.dialects import tensor_addr as ta  # noqa: E402
from coopdialect.interpreter import InterpreterError, run_kernel  # noqa: E402
from coopdialect.interpreter.tensor_addr import (  # noqa: E402
    AddressingError,
    LayoutValue,
    ViewValue,
    tensor_element_indices,
)
from xdsl.parser import Parser  # noqa: E402


def _parse(text: str):
    m = Parser(make_context(), text).parse_module()
    m.verify()
    return m


@pytest.mark.parametrize("seed", range(4))
def test_indices_match_reference(seed):
    """tensor_element_indices == the scalar pseudo-code, element by element (indices, blockCoord,
    coordInBlock, clip and discard masks), over 150 random layouts/views per seed."""
    rng = random.Random(seed)
    checked = overflows = 0
    for _ in range(150):
        case = tensor_ir.random_case(rng, avoid_clip_overflow=False)
        try:
            t = ref.run_chain(case["ldim"], case["lops"])
        except ValueError:
            continue  # a broken stride rule (tested with the kernels)
        lv = LayoutValue(ta.ClampMode(case["mode"]), ta.LayoutState(
            tuple(t["blockSize"]), tuple(t["layoutDimension"]), tuple(t["stride"]),
            tuple(t["offset"]), tuple(t["span"]), t["clampValue"]))
        vv, view = None, None
        if case["view"]:
            v = case["view"]
            s = ref.run_chain(v["vdim"], v["vops"], view=True)
            view = (s, v["has_dims"], v["perm"])
            vv = ViewValue(v["has_dims"], tuple(v["perm"]), ta.ViewState(
                tuple(s["viewDimension"]), tuple(s["viewStride"]), tuple(s["clip"])))
        store = case["kind"] == "store"
        R, C = case["rows"], case["cols"]
        want = [[ref.element(t, case["mode"], r, c, C, view, store) for c in range(C)]
                for r in range(R)]
        if any(w[0] == "ub" for row in want for w in row):
            over = view is not None and (view[0]["clip"][0] + view[0]["clip"][1] > ref.M32 or
                                         view[0]["clip"][2] + view[0]["clip"][3] > ref.M32)
            overflows += over
            with pytest.raises(AddressingError, match="exceeds 2" if over else None):
                tensor_element_indices(lv, R, C, vv, store)
            continue
        got = tensor_element_indices(lv, R, C, vv, store)
        for r in range(R):
            for c in range(C):
                kind, idx, block, inner = want[r][c]
                assert got.active[r, c] == (kind != "clip")
                if kind == "clip":
                    continue
                assert got.discarded[r, c] == (kind == "discard")
                if kind == "ok":
                    assert int(got.index[r, c]) == idx
                    assert list(got.block_coord[r, c]) == block
                    assert list(got.coord_in_block[r, c]) == inner
        checked += 1
    assert checked > 60
    assert overflows > 0  # some views clip with offset + span > 2^32 - 1: refused


@pytest.mark.parametrize("seed", range(3))
def test_kernels_match_reference(seed):
    """Whole kernels (parse, verify, interpret) vs the reference: values of loads (including
    clamp values as bit patterns and clipped elements keeping Object) and of stores."""
    rng = random.Random(100 + seed)
    nrng = np.random.default_rng(seed)
    ok = failed = 0
    for i in range(70):
        case = tensor_ir.random_case(rng, avoid_clip_overflow=False)
        case["dynamic"] = set(range(10)) | set(range(100, 110))  # no constant-operand rules
        text, scalars = tensor_ir.case_ir(case)
        module = _parse(text)
        buf, out = tensor_ir.case_inputs(case, nrng)
        want = tensor_ir.expected(case, buf, out)
        if want is None:
            with pytest.raises(InterpreterError):
                run_kernel(module, "k", [buf, out, *scalars], (1, 1, 1))
            failed += 1
            continue
        run_kernel(module, "k", [buf, out, *scalars], (1, 1, 1))
        assert buf.view(np.uint8).tobytes() == want[0].view(np.uint8).tobytes(), (i, text)
        assert out.view(np.uint8).tobytes() == want[1].view(np.uint8).tobytes(), (i, text)
        ok += 1
    assert ok > 25


def test_clamp_value_is_a_bit_pattern():
    text = """
func.func @k(%buf: memref<4xf16>, %out: memref<2x2xf16>) attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %cv = arith.constant 16896 : i32
  %l0 = tensor_addr.create_layout : !tensor_addr.layout<2, Constant>
  %l1 = tensor_addr.layout_set_dimension %l0, %c1, %c2 : !tensor_addr.layout<2, Constant>
  %l2 = tensor_addr.layout_slice %l1, %c1, %c2, %c1, %c2 : !tensor_addr.layout<2, Constant>
  %l3 = tensor_addr.layout_set_clamp_value %l2, %cv : !tensor_addr.layout<2, Constant>
  %z = arith.constant 0 : index
  %two = arith.constant 2 : index
  %o = coop.load %out[%z], %two, RowMajor : memref<2x2xf16> -> !coop.matrix<2x2xf16, Subgroup, MatrixAcc>
  %m = coop.load_tensor %buf, %o, %l3 : memref<4xf16>, !coop.matrix<2x2xf16, Subgroup, MatrixAcc>, !tensor_addr.layout<2, Constant> -> !coop.matrix<2x2xf16, Subgroup, MatrixAcc>
  coop.store %m, %out[%z], %two, RowMajor : !coop.matrix<2x2xf16, Subgroup, MatrixAcc>, memref<2x2xf16>
  func.return
}"""
    buf = np.arange(4, dtype=np.float16)
    out = np.zeros((2, 2), np.float16)
    run_kernel(_parse(text), "k", [buf, out], (1, 1, 1))
    assert (out == 3.0).all()  # 0x4200


def test_repeat_mirrored_follows_the_table():
    """c = c % (2*dim-2); c = c >= dim ? 2*dim-2-c : c, with dim = layoutDimension = 4."""
    st = ta.LayoutState((1,), (4,), (1,), (-6,), (16,), 0)
    a = tensor_element_indices(LayoutValue(ta.ClampMode.RepeatMirrored, st), 1, 16)
    want = []
    for x in range(-6, 10):
        c = x if 0 <= x < 4 else x % 6
        want.append(6 - c if c >= 4 else c)
    assert list(a.index[0]) == want


def test_undefined_out_of_bounds_is_an_error():
    st = ta.LayoutState((1,), (4,), (1,), (2,), (4,), 0)
    with pytest.raises(AddressingError, match="Undefined"):
        tensor_element_indices(LayoutValue(ta.ClampMode.Undefined, st), 1, 4)


def test_clip_offset_plus_span_above_u32_is_an_error():
    """clipRowOffset + clipRowSpan (or Col) > 2^32 - 1: the text's uint32 sum wraps, the H200
    does not wrap; coopdialect refuses it. A sum of exactly 2^32 - 1 is fine (the default clip)."""
    st = ta.LayoutState((1,), (64,), (1,), (0,), (64,), 0)
    lv = LayoutValue(ta.ClampMode.Undefined, st)

    def view(clip):
        return ViewValue(True, (0,), ta.ViewState((64,), (1,), clip))

    for clip, what in (((4, 0xFFFFFFFC, 0, 8), "clipRowOffset"),
                       ((0, 8, 1, 0xFFFFFFFF), "clipColOffset")):
        with pytest.raises(AddressingError, match=f"{what} \\+ clip.*exceeds 2\\^32 - 1"):
            tensor_element_indices(lv, 8, 8, view(clip))
        assert ref.element({"blockSize": [1], "layoutDimension": [64], "stride": [1],
                            "offset": [0], "span": [64], "clampValue": 0}, "Undefined", 0, 0, 8,
                           ({"viewDimension": [64], "viewStride": [1], "clip": list(clip)},
                            True, [0]))[0] == "ub"
    a = tensor_element_indices(lv, 8, 8, view((3, 0xFFFFFFFC, 2, 0xFFFFFFFD)))
    assert not a.active[:3].any() and not a.active[:, :2].any() and a.active[3:, 2:].all()
