"""Drawn layouts (`coop-layout`, `coopdialect.layouts`): every SVG parses, and the assignment it
shows — read back from the picture's cell labels — equals an independent statement of the layout:

* mma.sync and wgmma fragments: the PTX ISA's fragment figures, as formulas of groupID
  (lane >> 2) and threadID_in_group (lane & 3) (PTX ISA 9.7.14.5.8 m16n8k16, 9.7.14.5.9
  m16n8k32, 9.7.15.5.1 wgmma D);
* the 2:4 selection: the metadata rule of PTX ISA 9.7.15.6.1 (idx0 = e & 3, idx1 = e >> 2);
* tensor views: tests/tensor_reference.py (the pseudo-code, element by element, no shared code);
* Arm layouts: the memory model of tests/test_arm_layouts.py (memory walked in address order).

The committed pictures in docs/img/ are checked to be what their command draws now.
"""

from __future__ import annotations

import random
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import tensor_reference as ref  # noqa: E402
from test_arm_layouts import model_memory  # noqa: E402

from coopdialect import layouts  # noqa: E402
from coopdialect.tools import coop_layout  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NS = "{http://www.w3.org/2000/svg}"


def cells(svg: str) -> dict[tuple[int, int], tuple[str, ...]]:
    """(row, col) -> label lines, read from the SVG; also checks that the cells are placed in
    row and column order."""
    root = ET.fromstring(svg)
    out, xs, ys = {}, {}, {}
    for g in root.iter(f"{NS}g"):
        if g.get("class") != "c":
            continue
        r, c = int(g.get("data-row")), int(g.get("data-col"))
        rect = g.find(f"{NS}rect")
        xs.setdefault(c, set()).add(float(rect.get("x")))
        ys.setdefault(r, set()).add(float(rect.get("y")))
        out[(r, c)] = tuple(t.text for t in g.iter(f"{NS}text"))
    for pos in (xs, ys):
        assert all(len(v) == 1 for v in pos.values())  # one x per column, one y per row
        order = [next(iter(pos[k])) for k in sorted(pos)]
        assert order == sorted(order) and len(set(order)) == len(order)
    return out


def _lane_reg(label) -> tuple[int, int]:
    return int(label[0][1:]), int(label[1][1:])


# ---- mma.sync: the PTX ISA fragment figures ---------------------------------------------------

def isa_mma(operand: str, bits: int, lane: int, i: int) -> tuple[int, int]:
    """(row, col) of register i of `lane` in the PTX ISA figures (16-bit: m16n8k16, 8-bit:
    m16n8k32)."""
    g, q = lane >> 2, lane & 3
    if operand == "C":  # c0, c1: row groupID; c2, c3: groupID + 8; col q*2 + (i & 1)
        return g + 8 * (i >= 2), q * 2 + (i & 1)
    if bits == 16:
        if operand == "A":  # a0,a1,a4,a5: row g; a2,a3,a6,a7: g+8; col q*2 + (i & 1) (+8 for i >= 4)
            return g + 8 * (i in (2, 3, 6, 7)), q * 2 + (i & 1) + 8 * (i >= 4)
        return q * 2 + (i & 1) + 8 * (i >= 2), g  # B: b0,b1 rows q*2+(0,1); b2,b3 +8; col g
    if operand == "A":  # a0..a3, a8..a11: row g; others g+8; col q*4 + (i & 3) (+16 for i >= 8)
        return g + 8 * (i in (4, 5, 6, 7, 12, 13, 14, 15)), q * 4 + (i & 3) + 16 * (i >= 8)
    return q * 4 + (i & 3) + 16 * (i >= 4), g  # B: b0..b3 rows q*4+(0..3); b4..b7 +16; col g


@pytest.mark.parametrize("element, bits", [("f16", 16), ("bf16", 16), ("s8", 8), ("u8", 8)])
@pytest.mark.parametrize("operand", ["A", "B", "C"])
def test_mma_fragment_is_the_isa_figure(operand, element, bits):
    drawn = cells(layouts.mma_fragment(operand, element).to_svg())
    k = 16 if bits == 16 else 32
    rows, cols = {"A": (16, k), "B": (k, 8), "C": (16, 8)}[operand]
    regs = rows * cols // 32
    want = {isa_mma(operand, bits, lane, i): (lane, i) for lane in range(32) for i in range(regs)}
    assert len(want) == rows * cols  # the figure covers every element once
    assert {pos: _lane_reg(label) for pos, label in drawn.items()} == want
    assert all(label[1][0] == operand.lower() for label in drawn.values())


@pytest.mark.parametrize("n", [8, 64, 256])
def test_wgmma_accumulator_is_the_isa_figure(n):
    drawn = cells(layouts.wgmma_accumulator(n, [(0, n)]).to_svg())
    want = {}
    for t in range(128):
        warp, lane = divmod(t, 32)
        g, q = lane >> 2, lane & 3
        for i in range(n // 2):  # row 16*warp + g + 8*((i % 4) / 2), col 8*(i / 4) + 2q + i % 2
            want[(16 * warp + g + 8 * ((i % 4) // 2), 8 * (i // 4) + 2 * q + i % 2)] = (t, i)
    assert len(want) == 64 * n
    assert {pos: _lane_reg(label) for pos, label in drawn.items()} == want


def test_wgmma_drawing_shows_the_chosen_columns():
    svg = layouts.wgmma_accumulator(256).to_svg()
    drawn = cells(svg)
    assert {c for _, c in drawn} == set(range(16)) | set(range(248, 256))
    assert len(drawn) == 64 * 24 and "…" in svg


# ---- 2:4 sparse metadata -----------------------------------------------------------------------

@pytest.mark.parametrize("element, k, group", [("f16", 32, 4), ("s8", 64, 4), ("f32", 16, 2)])
def test_sparse_selection_follows_the_metadata_rule(element, k, group):
    rng = np.random.default_rng(4)
    valid = [0x4, 0xE] if group == 2 else [0x4, 0x8, 0xC, 0x9, 0xD, 0xE]
    meta = rng.choice(np.array(valid, np.uint8), (3, k // group))
    drawn = cells(layouts.sparse_selection(element, 3, meta).to_svg())
    for r in range(3):
        for chunk in range(k // group):
            e = int(meta[r, chunk])
            if group == 4:  # v[2c] at idx0 = e & 3, v[2c+1] at idx1 = e >> 2, zeros elsewhere
                kept = {e & 3: 2 * chunk, e >> 2: 2 * chunk + 1}
            else:  # tf32: 0x4 keeps element 0, 0xE element 1; value c
                kept = {0 if e == 0x4 else 1: chunk}
            for p in range(group):
                label = drawn[(r, group * chunk + p)]
                assert label == ((f"v{kept[p]}",) if p in kept else ("0",)), (r, chunk, p)


# ---- tensor addressing --------------------------------------------------------------------------

def _reference(rows, cols, dims, off, span, block, mode, perm, vdims, clip):
    t = ref.create_layout(2)
    t = ref.layout_op(t, "set_block_size", list(block))
    t = ref.layout_op(t, "set_dimension", list(dims))
    t = ref.layout_op(t, "slice", [off[0], span[0], off[1], span[1]])
    view = None
    if vdims is not None or clip is not None or perm != (0, 1):
        v = ref.create_view(2)
        if vdims is not None:
            v = ref.view_op(v, "set_dimension", list(vdims))
        if clip is not None:
            v = ref.view_op(v, "set_clip", list(clip))
        view = (v, vdims is not None, perm)
    out = {}
    for r in range(rows):
        for c in range(cols):
            kind, index, b, inner = ref.element(t, mode, r, c, cols, view)
            if kind == "clip":
                out[(r, c)] = ("clip",)
            elif kind == "discard":
                out[(r, c)] = ("—",)
            else:
                y, x = (bb * bs + ii for bb, bs, ii in zip(b, block, inner))
                out[(r, c)] = (str(index), f"{y},{x}")
    clamped = set()
    if mode != "Constant":
        clamped = {pos for pos in out if ref.element(t, "Constant", *pos, cols, view)[0] == "discard"}
    return out, clamped


def _hatched(svg: str) -> set[tuple[int, int]]:
    root = ET.fromstring(svg)
    return {(int(g.get("data-row")), int(g.get("data-col"))) for g in root.iter(f"{NS}g")
            if g.get("class") == "c" and g.find(f"{NS}path") is not None}


TENSOR_CASES = [
    dict(dims=(6, 10), off=(-1, -1), mode="ClampToEdge", perm=(0, 1), vdims=None, clip=None),
    dict(dims=(6, 10), off=(-1, -1), mode="ClampToEdge", perm=(1, 0), vdims=None, clip=None),
    dict(dims=(5, 7), off=(2, -3), mode="Repeat", perm=(0, 1), vdims=None, clip=(1, 6, 0, 7)),
    dict(dims=(9, 9), off=(-2, 4), mode="RepeatMirrored", perm=(0, 1), vdims=None, clip=None),
    dict(dims=(6, 6), off=(3, 3), mode="Constant", perm=(1, 0), vdims=(8, 8), clip=None),
]


@pytest.mark.parametrize("case", TENSOR_CASES)
def test_tensor_view_is_the_pseudo_code(case):
    rows = cols = 8
    grid = layouts.tensor_view(rows, cols, case["dims"], case["off"], None, (1, 1), case["mode"],
                               case["vdims"], case["perm"], case["clip"])
    svg = grid.to_svg()
    want, clamped = _reference(rows, cols, case["dims"], case["off"], (rows, cols), (1, 1),
                               case["mode"], case["perm"], case["vdims"], case["clip"])
    assert cells(svg) == want
    discarded = {pos for pos, label in want.items() if label in (("—",), ("clip",))}
    assert _hatched(svg) == clamped | discarded


def test_tensor_view_with_blocks_matches_the_pseudo_code():
    rng = random.Random(7)
    for _ in range(5):
        block = (rng.randint(1, 3), rng.randint(1, 3))
        dims = (rng.randint(3, 12), rng.randint(3, 12))
        off = (rng.randint(-3, 3), rng.randint(-3, 3))
        grid = layouts.tensor_view(6, 6, dims, off, None, block, "ClampToEdge")
        want, _ = _reference(6, 6, dims, off, (6, 6), block, "ClampToEdge", (0, 1), None, None)
        assert cells(grid.to_svg()) == want


# ---- Arm blocked layouts --------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["RowBlockedInterleavedARM", "ColumnBlockedInterleavedARM"])
@pytest.mark.parametrize("element, dtype", [("f16", np.uint16), ("s8", np.uint8), ("f32", np.uint32)])
@pytest.mark.parametrize("stride", [1, 2, 4])
def test_arm_blocked_is_the_memory_model(layout, element, dtype, stride):
    size = np.dtype(dtype).itemsize
    rows, cols = 4 * stride, (16 // size) * stride
    ids = np.arange(rows * cols, dtype=np.uint32).reshape(rows, cols)
    # each element's id through the model, one byte-sized digit at a time for 8-bit elements
    bits = 8 * size
    memory = sum(model_memory(((ids >> shift) & ((1 << bits) - 1)).astype(dtype), layout, stride)
                 .view(dtype).astype(np.int64) << shift for shift in range(0, 16, bits))
    where = {int(v): i for i, v in enumerate(memory)}
    drawn = cells(layouts.arm_blocked(rows, cols, element, layout, stride).to_svg())
    assert {pos: int(label[0]) for pos, label in drawn.items()} == {
        (r, c): where[int(ids[r, c])] for r in range(rows) for c in range(cols)}


def test_arm_worked_example_of_the_docs():
    drawn = cells(layouts.arm_blocked(8, 16, "f16", "RowBlockedInterleavedARM", 2).to_svg())
    assert drawn[(5, 11)][0] == "87"  # docs/arm-layouts.md: element (5, 11) -> element 87


# ---- the command and the committed pictures ---------------------------------------------------

IMAGES = {
    "docs/img/mma-m16n8k16-f16-accumulator.svg": "mma --operand C --element f16",
    "docs/img/wgmma-m64n256k16-accumulator.svg": "wgmma-acc --n 256",
    "docs/img/tensor-view-clamped.svg":
        "tensor --dimension 6,10 --offset=-1,-1 --clamp ClampToEdge --permutation 1,0",
    "docs/img/arm-row-blocked-stride2-f16.svg": "arm --rows 8 --cols 16 --element f16 --stride 2",
    "docs/img/sparse-2-4-f16.svg": "sparse --element f16",
}


@pytest.mark.parametrize("path", list(IMAGES))
def test_committed_pictures_are_current_and_linked(path, tmp_path):
    out = tmp_path / "x.svg"
    coop_layout.main(["-o", str(out), *shlex.split(IMAGES[path])])
    assert (ROOT / path).read_text() == out.read_text(), (
        f"{path} is stale: coop-layout -o {path} {IMAGES[path]}")
    ET.fromstring(out.read_text())
    linked = [d for d in (ROOT / "docs").glob("*.md") if f"img/{Path(path).name}" in d.read_text()]
    assert linked, f"no doc links {path}"


def test_command_errors_are_one_line(capsys, tmp_path):
    for argv in (["arm", "--stride", "3"], ["mma", "--operand", "D"], ["wgmma-acc", "--n", "12"],
                 ["tensor", "--clamp", "Undefined"], ["tensor", "--clamp", "Sideways"]):
        with pytest.raises(SystemExit) as e:
            coop_layout.main(argv)
        err = capsys.readouterr().err
        assert e.value.code == 1 and err.startswith("<command line>: error: ") and err.count("\n") == 1


def test_png_output_or_a_clear_error(tmp_path, capsys):
    out = tmp_path / "acc.png"
    try:
        import cairosvg  # noqa: F401
    except ImportError:
        with pytest.raises(SystemExit):
            coop_layout.main(["-o", str(out), "mma"])
        assert "pip install '.[png]'" in capsys.readouterr().err and not out.exists()
        return
    coop_layout.main(["-o", str(out), "mma"])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
