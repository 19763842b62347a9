"""legalize-coop-sizes: random GEMM-like programs give the same interpreter results before and
after the pass (bit-exact: floats use small integers, which every order of summation gives
exactly; integers use the full range, which wraps the same way), and the result has only
multiply-adds native to the target. Plus the target loader's schema errors.
"""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopdialect.context import make_context
from coopdialect.errors import CoopError
from coopdialect.diagnostics import LocatingParser
from coopdialect.interpreter import run_kernel
from coopdialect.passes.legalize_coop_sizes import LegalizeCoopSizesPass, non_native_ops
from coopdialect.targets import TargetError, get_target, load_target, shipped_targets
from hypothesis_profiles import scaled

SETTINGS = settings(max_examples=scaled(10), deadline=None)

# target spelling -> (MLIR type, numpy dtype)
MLIR = {"f16": ("f16", np.float16), "bf16": ("bf16", ml_dtypes.bfloat16), "f32": ("f32", np.float32),
        "s8": ("i8", np.int8), "u8": ("i8", np.uint8), "s32": ("i32", np.int32),
        "u32": ("i32", np.uint32)}


def parse(text: str):
    module = LocatingParser(make_context(), text, "legalize.mlir").parse_module()
    module.verify()
    return module


def program(row, m, n, k, b_col_major: bool, loop: bool, elementwise: bool) -> str:
    ta, tb, tc = (MLIR[x][0] for x in (row.a, row.b, row.c))
    flags = " <ASigned|BSigned|CSigned|ResultSigned>" if row.a.startswith("s") else ""
    A = f"!coop.matrix<{m}x{k}x{ta}, Subgroup, MatrixA>"
    B = f"!coop.matrix<{k}x{n}x{tb}, Subgroup, MatrixB>"
    C = f"!coop.matrix<{m}x{n}x{tc}, Subgroup, MatrixAcc>"
    layout_b, ldb = ("ColumnMajor", k) if b_col_major else ("RowMajor", n)
    add = "coop.fadd" if tc.startswith(("f", "b")) else "coop.iadd"
    lines = [
        f"func.func @k(%A: memref<{m * k}x{ta}>, %B: memref<{k * n}x{tb}>, %C: memref<{m * n}x{tc}>)",
        "    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {",
        "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
        "  %c2 = arith.constant 2 : index",
        f"  %lda = arith.constant {k} : index", f"  %ldb = arith.constant {ldb} : index",
        f"  %ldc = arith.constant {n} : index",
        f"  %a = coop.load %A[%c0], %lda, RowMajor : memref<{m * k}x{ta}> -> {A}",
        f"  %b = coop.load %B[%c0], %ldb, {layout_b} : memref<{k * n}x{tb}> -> {B}",
        f"  %c = coop.load %C[%c0], %ldc, RowMajor : memref<{m * n}x{tc}> -> {C}",
    ]
    cur = "%c"
    if elementwise:
        lines.append(f"  %e = {add} %c, %c : {C}")
        cur = "%e"
    if loop:
        lines += [f"  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = {cur}) -> ({C}) {{",
                  f"    %d = coop.mul_add %a, %b, %acc{flags} : {A}, {B}, {C} -> {C}",
                  f"    scf.yield %d : {C}", "  }"]
    else:
        lines.append(f"  %r = coop.mul_add %a, %b, {cur}{flags} : {A}, {B}, {C} -> {C}")
    lines += [f"  coop.store %r, %C[%c0], %ldc, RowMajor : {C}, memref<{m * n}x{tc}>",
              "  func.return", "}"]
    return "\n".join(lines) + "\n"


def assembles_for_sm90a(module, tmp_path) -> None:
    """convert-coop-to-ptx takes a legalized `module` (a copy) and ptxas assembles the PTX
    without a word: the PTX target's native shapes are the PTX backend's."""
    from coopdialect.ptx import emit_ptx
    from coopdialect.runtime.device import lower
    from test_ptx_ptxas import _ptxas, find_ptxas

    path = tmp_path / "legalized.ptx"
    path.write_text(emit_ptx(lower(module.clone(), None, "convert-coop-to-ptx")))
    rc, out = _ptxas(find_ptxas(), path)
    assert rc == 0 and not out, f"ptxas: rc={rc}\n{out}"


def data(rng, name: str, size: int):
    dt = MLIR[name][1]
    if name in ("f16", "bf16", "f32"):
        lim = 2 if name != "f32" else 2
        return rng.integers(-lim, lim + 1, size).astype(dt)
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, size, endpoint=True).astype(dt)
    return x.view(np.int8 if info.bits == 8 else np.int32)  # signless iN buffers are intN


@st.composite
def cases(draw):
    name = draw(st.sampled_from(shipped_targets()))
    target = get_target(name)
    rows = [r for r in target.cooperative_matrix if r.scope == "Subgroup" and r.c == r.result]
    row = draw(st.sampled_from(rows))
    fm, fn, fk = (draw(st.integers(1, 3)) for _ in range(3))
    m, n, k = row.m * fm, row.n * fn, row.k * fk
    return (name, row, m, n, k, draw(st.booleans()), draw(st.booleans()), draw(st.booleans()),
            draw(st.booleans()))


@SETTINGS
@given(cases(), st.integers(0, 2**31))
def test_pass_preserves_interpreter_results(tmp_path_factory, case, seed):
    name, row, m, n, k, col_b, loop, elementwise, flexible = case
    text = program(row, m, n, k, col_b, loop, elementwise)
    rng = np.random.default_rng(seed)
    a, b, c = data(rng, row.a, m * k), data(rng, row.b, k * n), data(rng, row.c, m * n)
    if row.c == "f16":
        c = (c * 10).astype(np.float16)
    before = [a.copy(), b.copy(), c.copy()]
    run_kernel(parse(text), "k", before, (1, 1, 1))
    module = parse(text)
    LegalizeCoopSizesPass(target=name, flexible=flexible).apply(make_context(), module)
    module.verify()
    target = get_target(name)
    assert non_native_ops(module, target, flexible) == []
    after = [a.copy(), b.copy(), c.copy()]
    run_kernel(module, "k", after, (1, 1, 1))
    assert after[2].tobytes() == before[2].tobytes()
    if target.api == "ptx":
        assembles_for_sm90a(module, tmp_path_factory.mktemp("ptx"))


def test_largest_dividing_native_shape_is_chosen():
    target = get_target("h200-vulkan")
    row = next(r for r in target.cooperative_matrix if r.types == ("f16", "f16", "f32", "f32")
               and (r.m, r.n, r.k) == (16, 16, 16))
    module = parse(program(row, 32, 24, 16, False, False, False))  # N = 24: only 8 divides it
    LegalizeCoopSizesPass(target="h200-vulkan", flexible=False).apply(make_context(), module)
    shapes = {(op.a.type.rows, op.b.type.columns, op.a.type.columns)
              for op in module.walk() if op.name == "coop.mul_add"}
    assert shapes == {(16, 8, 16)}


def test_refusal_names_op_shape_and_native_shapes(tmp_path):
    # the H200's tables without tensor addressing (with it, 20x16x16 is padded)
    from importlib import resources
    data = json.loads(resources.files("coopdialect.targets").joinpath("h200-vulkan.json").read_text())
    path = tmp_path / "h200-no-tensor.json"
    path.write_text(json.dumps(dict(data, tensor_addressing=False)))
    target = get_target("h200-vulkan")
    row = next(r for r in target.cooperative_matrix if r.types == ("f16", "f16", "f32", "f32"))
    module = parse(program(row, 20, 16, 16, False, False, False))
    with pytest.raises(CoopError) as e:
        LegalizeCoopSizesPass(target=str(path), flexible=False).apply(make_context(), module)
    msg = str(e.value)
    assert "'coop.mul_add' op 20x16x16 f16·f16·f32·f32 Subgroup has no native tiling" in msg
    assert "16x16x16, 16x8x16, 16x8x8" in msg and "\n" not in msg


def test_shipped_targets_and_loader_errors(tmp_path):
    assert {"h200-vulkan", "arm-mali", "sm90a-ptx"} <= set(shipped_targets())
    h200 = get_target("h200-vulkan")
    assert len(h200.cooperative_matrix) == 11 and h200.flexible_max_dimension == 1024
    ptx = get_target("sm90a-ptx")
    assert any(r.scope == "Workgroup" and (r.m, r.n, r.k) == (64, 256, 16) for r in ptx.native_shapes())
    good = json.loads((tmp_path / "x").parent.joinpath("x").name and json.dumps({
        "name": "mine", "description": "d", "source": "vulkaninfo", "api": "vulkan",
        "subgroup_size": 32, "layouts": ["RowMajor"], "flexible_dimensions": [],
        "tensor_addressing": False,
        "cooperative_matrix": [{"m": 8, "n": 8, "k": 8, "a": "f16", "b": "f16", "c": "f16",
                                "result": "f16", "saturating": False, "scope": "Subgroup"}]}))
    p = tmp_path / "mine.json"
    p.write_text(json.dumps(good))
    assert get_target(str(p)).cooperative_matrix[0].m == 8
    bad = dict(good, cooperative_matrix=[dict(good["cooperative_matrix"][0], a="f17")])
    p.write_text(json.dumps(bad))
    with pytest.raises(TargetError, match=r"mine.json: \$.cooperative_matrix\[0\].a: unknown component type 'f17'"):
        load_target(p)
    p.write_text("{")
    with pytest.raises(TargetError, match="not valid JSON"):
        load_target(p)
    with pytest.raises(TargetError, match="unknown target 'nope'"):
        get_target("nope")
    p.write_text(json.dumps({k: v for k, v in good.items() if k != "api"}))
    with pytest.raises(TargetError, match=r"\$.api: missing"):
        load_target(p)
    flex = {"granularity": [16, 8, 16], "a": "f16", "b": "f16", "c": "f32", "result": "f32",
            "saturating": False, "scope": "Subgroup", "workgroup_invocations": None}
    for top, ok in (([32, 16, 48], True), ([32, 12, 48], False), ([32, 16], False)):
        p.write_text(json.dumps(dict(good, flexible_dimensions=[dict(flex, max=top)],
                                     flexible_max_dimension=64)))
        if ok:
            f = load_target(p).flexible_dimensions[0]
            assert f.allows((32, 16, 48), 64) and not f.allows((48, 16, 16), 64)
        else:
            with pytest.raises(TargetError, match=r"\$.flexible_dimensions\[0\].max: expected "
                                                  r"\[M, N, K\] positive multiples"):
                load_target(p)


# --------------------------------------------------------------------------------------------
# Padding (targets with tensor addressing): non-multiple shapes
# --------------------------------------------------------------------------------------------


def padded_program(row, m, n, k, wins, dynamic: bool, loop: bool, elementwise: bool) -> str:
    """A GEMM of non-native M×N×K whose A, B, C are windows of larger buffers: wins maps
    'A'/'B'/'C' to (layout, row0, col0, stride) (the window's top-left element in a buffer of
    `stride` columns; ColumnMajor: the stored transpose). Offsets are arith on gpu.block_id
    (0 here) when `dynamic`, so the pass cannot fold them."""
    ta, tb, tc = (MLIR[x][0] for x in (row.a, row.b, row.c))
    flags = " <ASigned|BSigned|CSigned|ResultSigned>" if row.a.startswith("s") else ""
    A = f"!coop.matrix<{m}x{k}x{ta}, Subgroup, MatrixA>"
    B = f"!coop.matrix<{k}x{n}x{tb}, Subgroup, MatrixB>"
    C = f"!coop.matrix<{m}x{n}x{tc}, Subgroup, MatrixAcc>"
    sizes = {name: buffer_size(name, m, n, k, wins[name]) for name in "ABC"}
    lines = [f"func.func @k(%A: memref<{sizes['A']}x{ta}>, %B: memref<{sizes['B']}x{tb}>, "
             f"%C: memref<{sizes['C']}x{tc}>)",
             "    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {",
             "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
             "  %c2 = arith.constant 2 : index", "  %bx = gpu.block_id x"]
    for name in "ABC":
        layout, r0, c0, stride = wins[name]
        lines.append(f"  %s{name} = arith.constant {stride} : index")
        if dynamic:
            lines += [f"  %k{name} = arith.constant {r0 * stride + c0} : index",
                      f"  %o{name} = arith.addi %k{name}, %bx : index"]
        else:
            lines.append(f"  %o{name} = arith.constant {r0 * stride + c0} : index")
    for name, t, T in (("A", ta, A), ("B", tb, B), ("C", tc, C)):
        lines.append(f"  %{name.lower()} = coop.load %{name}[%o{name}], %s{name}, {wins[name][0]} "
                     f": memref<{sizes[name]}x{t}> -> {T}")
    cur = "%c"
    if elementwise:
        add = "coop.fadd" if tc.startswith(("f", "b")) else "coop.iadd"
        lines.append(f"  %e = {add} %c, %c : {C}")
        cur = "%e"
    if loop:
        lines += [f"  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = {cur}) -> ({C}) {{",
                  f"    %d = coop.mul_add %a, %b, %acc{flags} : {A}, {B}, {C} -> {C}",
                  f"    scf.yield %d : {C}", "  }"]
    else:
        lines.append(f"  %r = coop.mul_add %a, %b, {cur}{flags} : {A}, {B}, {C} -> {C}")
    lines += [f"  coop.store %r, %C[%oC], %sC, {wins['C'][0]} : {C}, memref<{sizes['C']}x{tc}>",
              "  func.return", "}"]
    return "\n".join(lines) + "\n"


def buffer_size(name, m, n, k, win) -> int:
    rows, cols = {"A": (m, k), "B": (k, n), "C": (m, n)}[name]
    layout, r0, c0, stride = win
    if layout == "ColumnMajor":
        rows, cols = cols, rows
    return (r0 + rows) * stride  # r0 + rows stored rows of `stride` elements


@st.composite
def padding_cases(draw):
    target_name = draw(st.sampled_from(["h200-vulkan", "sm90a-ptx"]))
    target = get_target(target_name)
    rows = [r for r in target.cooperative_matrix if r.scope == "Subgroup" and r.c == r.result]
    row = draw(st.sampled_from(rows))
    # every native m, n, k of both is a multiple of 8: these never divide, so padding is needed
    m, n, k = (8 * draw(st.integers(0, 3)) + draw(st.integers(1, 7)) for _ in range(3))
    wins = {}
    for name, (rr, cc) in (("A", (m, k)), ("B", (k, n)), ("C", (m, n))):
        layout = draw(st.sampled_from(["RowMajor", "ColumnMajor"]))
        if layout == "ColumnMajor":
            rr, cc = cc, rr
        c0 = draw(st.integers(0, 5))
        wins[name] = (layout, draw(st.integers(0, 3)), c0, c0 + cc + draw(st.integers(0, 4)))
    return target_name, row, m, n, k, wins, draw(st.booleans()), draw(st.booleans()), \
        draw(st.booleans()), draw(st.booleans())


@settings(max_examples=scaled(5), deadline=None)  # hypothesis_profiles: 50 in `long`
@given(padding_cases(), st.integers(0, 2**31))
def test_padding_preserves_interpreter_results(tmp_path_factory, case, seed):
    """Non-multiple M×N×K on h200-vulkan and sm90a-ptx: the same output buffer, bit for bit (the
    C buffer's elements outside the window too: the padded stores must not write them); for
    sm90a-ptx the result also lowers to PTX that ptxas assembles cleanly."""
    name, row, m, n, k, wins, dynamic, loop, elementwise, flexible = case
    text = padded_program(row, m, n, k, wins, dynamic, loop, elementwise)
    rng = np.random.default_rng(seed)
    sizes = [buffer_size(x, m, n, k, wins[x]) for x in "ABC"]
    bufs = [data(rng, t, s) for t, s in zip((row.a, row.b, row.c), sizes)]
    before = [b.copy() for b in bufs]
    run_kernel(parse(text), "k", before, (1, 1, 1))
    module = parse(text)
    LegalizeCoopSizesPass(target=name, flexible=flexible).apply(make_context(), module)
    module.verify()
    assert non_native_ops(module, get_target(name), flexible) == []
    names = {op.name for op in module.walk()}
    assert "coop.load_tensor" in names and "coop.store_tensor" in names and "coop.load" not in names
    assert ("arith.divui" in names) == dynamic  # offsets folded when constant
    after = [b.copy() for b in bufs]
    run_kernel(module, "k", after, (1, 1, 1))
    assert after[2].tobytes() == before[2].tobytes()
    if name == "sm90a-ptx":
        assembles_for_sm90a(module, tmp_path_factory.mktemp("ptx"))


def test_ptx_targets_have_tensor_addressing():
    """convert-coop-to-ptx lowers coop.load_tensor / store_tensor with every clamp mode, so the
    PTX targets pad like h200-vulkan (test_padding_preserves_interpreter_results)."""
    assert all(get_target(n).tensor_addressing for n in shipped_targets()
               if get_target(n).api == "ptx")


@pytest.mark.parametrize("target", ["arm-mali"])
def test_targets_without_tensor_addressing_refuse_non_multiples(target):
    t = get_target(target)
    assert not t.tensor_addressing
    row = next(r for r in t.cooperative_matrix if r.scope == "Subgroup" and r.a == "f16")
    module = parse(padded_program(row, row.m + 3, row.n, row.k, {
        "A": ("RowMajor", 0, 0, row.k), "B": ("RowMajor", 0, 0, row.n),
        "C": ("RowMajor", 0, 0, row.n)}, False, False, False))
    with pytest.raises(CoopError) as e:
        LegalizeCoopSizesPass(target=target).apply(make_context(), module)
    msg = str(e.value)
    assert f"'coop.mul_add' op {row.m + 3}x{row.n}x{row.k} " in msg
    assert "native shapes for these types:" in msg and "padding needs tensor addressing" in msg
    assert "\n" not in msg


def test_padding_refuses_a_without_zero_padding_and_wrapping_windows():
    row = next(r for r in get_target("h200-vulkan").cooperative_matrix
               if r.types == ("f16", "f16", "f32", "f32") and (r.m, r.n, r.k) == (16, 16, 16))
    wins = {"A": ("RowMajor", 0, 0, 20), "B": ("RowMajor", 0, 0, 16), "C": ("RowMajor", 0, 0, 16)}
    text = padded_program(row, 16, 16, 20, wins, False, False, False)
    # A from a composite construct: its K padding would be 1.0, not 0
    bad = text.replace("%a = coop.load %A[%oA], %sA, RowMajor : memref<320xf16> ->",
                       "%one = arith.constant 1.0 : f16\n  %a = coop.composite_construct %one : f16 ->")
    assert bad != text
    with pytest.raises(CoopError, match="A does not come from a coop.load"):
        LegalizeCoopSizesPass(target="h200-vulkan").apply(make_context(), parse(bad))
    # a constant window that wraps past a row of `stride` elements breaks the layout stride rule
    wrap = text.replace("%oA = arith.constant 0 : index", "%oA = arith.constant 5 : index") \
        .replace("memref<320xf16>", "memref<400xf16>")
    with pytest.raises(CoopError, match="stride rule"):
        LegalizeCoopSizesPass(target="h200-vulkan").apply(make_context(), parse(wrap))


@pytest.mark.parametrize("flexible", [True, False])
def test_sm90a_ptx_pads_a_20x20_product_and_ptxas_takes_it(flexible, tmp_path):
    """A 20x20x20 f16 product (no mma.sync tile divides 20): legalize-coop-sizes{target=sm90a-ptx}
    pads it through clamped tensor loads to 32x24x32 (the smallest multiple of m16 n8 k16), kept
    whole (flexible: a matrix the backend lowers as mma.sync tiles) or split into 16x8x16 tiles;
    the interpreter gives numpy's product before and after, and ptxas takes the PTX."""
    row = next(r for r in get_target("sm90a-ptx").cooperative_matrix
               if r.types == ("f16", "f16", "f32", "f32"))
    wins = {"A": ("RowMajor", 0, 0, 20), "B": ("RowMajor", 0, 0, 20), "C": ("RowMajor", 0, 0, 20)}
    text = padded_program(row, 20, 20, 20, wins, False, False, False)
    rng = np.random.default_rng(20)
    bufs = [rng.integers(-3, 4, 400).astype(t) for t in (np.float16, np.float16, np.float32)]
    want = bufs[0].reshape(20, 20).astype(np.float64) @ bufs[1].reshape(20, 20) + bufs[2].reshape(20, 20)
    before = [b.copy() for b in bufs]
    run_kernel(parse(text), "k", before, (1, 1, 1))
    module = parse(text)
    LegalizeCoopSizesPass(target="sm90a-ptx", flexible=flexible).apply(make_context(), module)
    module.verify()
    shapes = sorted((op.a.type.rows, op.b.type.columns, op.a.type.columns)
                    for op in module.walk() if op.name == "coop.mul_add")
    assert shapes == ([(32, 24, 32)] if flexible else [(16, 8, 16)] * 12)
    names = {op.name for op in module.walk()}
    assert "coop.load_tensor" in names and "coop.store_tensor" in names and "coop.load" not in names
    after = [b.copy() for b in bufs]
    run_kernel(module, "k", after, (1, 1, 1))
    assert np.array_equal(before[2].reshape(20, 20), want)
    assert after[2].tobytes() == before[2].tobytes()
    assembles_for_sm90a(module, tmp_path)
