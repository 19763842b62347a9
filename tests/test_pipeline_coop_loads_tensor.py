"""`pipeline-coop-loads` stages tensor-addressed loads (`coop.load_tensor`, SPV_NV_cooperative_matrix2)
into `coop.async_copy_tensor` copies, proven by the interpreter: random kernels give bit-identical
outputs before and after the pass, and the pass really staged their loads.

The random kernels: a K loop (constant or dynamic bound, 0..6 iterations) whose body slices 2-D
tensor layouts at offsets affine in the induction variable (possibly negative, possibly past the
layout's dimensions, so that every clamp mode's out-of-bounds rule is exercised: Constant with a
random clampValue, ClampToEdge, Repeat, RepeatMirrored, and Undefined only where every element is
in bounds) and loads A and B through them — B either directly or through a transposing tensor view
(`!tensor_addr.view<2, false, 1, 0>`) of a column-major Bt — then `coop.mul_add`s them into a
loop-carried accumulator. The references are the interpreter's `coop.load_tensor` (the spec's
matrixCoordToTensorElement[WithView] pseudo-code, tests/tensor_reference.py checks it) before the
pass, and after it the copies of `coop.async_copy_tensor` read back by plain workgroup loads.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import scaled

from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser
from coopdialect.errors import CoopError, CoopWarning
from coopdialect.dialects import coop, coop_async, coop_nv2
from coopdialect.interpreter import run_kernel
from coopdialect.passes.pipeline_coop_loads import STAGES_ATTR, PipelineCoopLoadsPass

MODES = ["Constant", "ClampToEdge", "Repeat", "RepeatMirrored", "Undefined"]


@st.composite
def kernels(draw):
    scope = draw(st.sampled_from(["Subgroup", "Workgroup"]))
    m, n, k = (draw(st.sampled_from([8, 16])) for _ in range(3))
    trips = draw(st.integers(0, 6))
    mode = draw(st.sampled_from(MODES))
    inside = mode == "Undefined"  # out of bounds is undefined behaviour there
    # tensor sizes: the A tensor is MA x KA, Bt is NB x KB (B = Bt^T, loaded through a view)
    ka = k * trips + (0 if inside else draw(st.integers(-k, k)))
    ka = max(ka, k)
    ma = m + (draw(st.integers(0, 5)) if inside else draw(st.integers(-m + 1, 5)))
    nb = n + (draw(st.integers(0, 5)) if inside else draw(st.integers(-n + 1, 5)))
    ma, nb = max(ma, 2), max(nb, 2)  # RepeatMirrored divides by 2*dim-2
    r0 = draw(st.integers(0, ma - m)) if inside else draw(st.integers(-4, ma))
    c0 = draw(st.integers(0, nb - n)) if inside else draw(st.integers(-4, nb))
    k0 = 0 if inside else draw(st.integers(-3, 3))
    return dict(scope=scope, invocations=64 if scope == "Workgroup" and draw(st.booleans()) else 32,
                mnk=(m, n, k), trips=trips, mode=mode, ka=ka, ma=ma, nb=nb,
                r0=r0, c0=c0, k0=k0, transposed=draw(st.booleans()),
                clamp=draw(st.integers(0, 3)) if mode == "Constant" else 0,
                dynamic=draw(st.booleans()), stages=draw(st.integers(2, 4)),
                seed=draw(st.integers(0, 2**31)))


def kernel_text(p: dict) -> str:
    scope, (m, n, k), mode = p["scope"], p["mnk"], p["mode"]
    ta_ = f"!coop.matrix<{m}x{k}xf16, {scope}, MatrixA>"
    tb = f"!coop.matrix<{k}x{n}xf16, {scope}, MatrixB>"
    tc = f"!coop.matrix<{m}x{n}xf32, {scope}, MatrixAcc>"
    L = f"!tensor_addr.layout<2, {mode}>"
    b_arg = f"memref<{p['nb'] * p['ka']}xf16>" if p["transposed"] else \
        f"memref<{p['ka'] * p['nb']}xf16>"
    lines = [
        f"func.func @k(%A: memref<{p['ma'] * p['ka']}xf16>, %B: {b_arg}, "
        f"%C: memref<{m * n}xf32>, %ub: index) attributes "
        f"{{coop.workgroup_size = array<i32: {p['invocations']}, 1, 1>}} {{",
        "  %c0 = arith.constant 0 : index",
        f"  %ck = arith.constant {k} : index",
        f"  %cub = arith.constant {p['trips'] * k} : index",
        f"  %MA = arith.constant {p['ma']} : i32",
        f"  %KA = arith.constant {p['ka']} : i32",
        f"  %NB = arith.constant {p['nb']} : i32",
        f"  %tm = arith.constant {m} : i32",
        f"  %tn = arith.constant {n} : i32",
        f"  %tk = arith.constant {k} : i32",
        f"  %r0 = arith.constant {p['r0']} : i32",
        f"  %c0i = arith.constant {p['c0']} : i32",
        f"  %k0 = arith.constant {p['k0']} : i32",
        f"  %cv = arith.constant {p['clamp']} : i32",
        f"  %l0 = tensor_addr.create_layout : {L}",
        f"  %lv = tensor_addr.layout_set_clamp_value %l0, %cv : {L}",
        f"  %la = tensor_addr.layout_set_dimension %lv, %MA, %KA : {L}",
    ]
    if p["transposed"]:
        lines.append(f"  %lb = tensor_addr.layout_set_dimension %lv, %NB, %KA : {L}")
        lines.append("  %vt = tensor_addr.create_view : !tensor_addr.view<2, false, 1, 0>")
    else:
        lines.append(f"  %lb = tensor_addr.layout_set_dimension %lv, %KA, %NB : {L}")
    lines += ["  %zh = arith.constant 0.0 : f16", "  %zf = arith.constant 0.0 : f32",
              f"  %oa = coop.composite_construct %zh : f16 -> {ta_}",
              f"  %ob = coop.composite_construct %zh : f16 -> {tb}",
              f"  %init = coop.composite_construct %zf : f32 -> {tc}"]
    bound = "%ub" if p["dynamic"] else "%cub"
    lines += [f"  %acc = scf.for %i = %c0 to {bound} step %ck iter_args(%d = %init) -> ({tc}) {{",
              "    %i32 = arith.index_cast %i : index to i32",
              "    %kk = arith.addi %i32, %k0 : i32",
              f"    %las = tensor_addr.layout_slice %la, %r0, %tm, %kk, %tk : {L}",
              f"    %a = coop.load_tensor %A, %oa, %las : memref<{p['ma'] * p['ka']}xf16>, "
              f"{ta_}, {L} -> {ta_}"]
    if p["transposed"]:
        lines += [f"    %lbs = tensor_addr.layout_slice %lb, %c0i, %tn, %kk, %tk : {L}",
                  f"    %b = coop.load_tensor %B, %ob, %lbs view %vt : {b_arg}, {tb}, {L}, "
                  f"!tensor_addr.view<2, false, 1, 0> -> {tb}"]
    else:
        lines += [f"    %lbs = tensor_addr.layout_slice %lb, %kk, %tk, %c0i, %tn : {L}",
                  f"    %b = coop.load_tensor %B, %ob, %lbs : {b_arg}, {tb}, {L} -> {tb}"]
    lines += [f"    %e = coop.mul_add %a, %b, %d : {ta_}, {tb}, {tc} -> {tc}",
              f"    scf.yield %e : {tc}", "  }",
              f"  %cn = arith.constant {n} : index",
              f"  coop.store %acc, %C[%c0], %cn, RowMajor : {tc}, memref<{m * n}xf32>",
              "  func.return", "}"]
    return "\n".join(lines) + "\n"


def run(text: str, p: dict, stages: int | None):
    module = LocatingParser(make_context(), text, "random.mlir").parse_module()
    if stages is not None:
        PipelineCoopLoadsPass(stages=stages, strict=True).apply(make_context(), module)
    module.verify()
    rng = np.random.default_rng(p["seed"])
    a = rng.integers(-4, 5, p["ma"] * p["ka"]).astype(np.float16)
    b = rng.integers(-4, 5, p["nb"] * p["ka"]).astype(np.float16)
    m, n, k = p["mnk"]
    c = np.zeros(m * n, np.float32)
    run_kernel(module, "k", [a, b, c, p["trips"] * k], (1, 1, 1))
    return c, module


@settings(max_examples=scaled(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernels())
def test_staging_tensor_loads_preserves_interpreter_results(p):
    text = kernel_text(p)
    before, _ = run(text, p, None)
    after, staged = run(text, p, p["stages"])
    assert before.tobytes() == after.tobytes(), text
    # not vacuous: both loads became tensor copies, and no tensor load is left in the loop
    loops = [op for op in staged.walk() if op.name == "scf.for" and STAGES_ATTR in op.attributes]
    assert len(loops) == 1, text
    assert not any(isinstance(op, coop_nv2.LoadTensorOp) for op in staged.walk())
    copies = [op for op in staged.walk() if isinstance(op, coop_async.AsyncCopyTensorOp)]
    s, trips = p["stages"], p["trips"]
    prologue = s - 1 if p["dynamic"] else min(s - 1, trips)
    assert len(copies) == 2 * (prologue + 1), text
    (m, n, k), t = p["mnk"], p["transposed"]
    assert {c.box for c in copies} == {(m, k), (n, k) if t else (k, n)}
    slot_loads = [op for op in loops[0].body.walk() if isinstance(op, coop.LoadOp)]
    assert sorted(ld.layout.data.value for ld in slot_loads) == sorted(
        ["RowMajor", "ColumnMajor" if t else "RowMajor"])


def _unstageable(view_clip: bool) -> str:
    p = dict(scope="Subgroup", invocations=32, mnk=(16, 16, 16), trips=2, mode="Constant", ka=32, ma=16, nb=16,
             r0=0, c0=0, k0=0, transposed=True, clamp=0, dynamic=False, stages=2, seed=1)
    text = kernel_text(p)
    if view_clip:  # a view with a clip is not a plain transpose
        text = text.replace(
            "  %vt = tensor_addr.create_view : !tensor_addr.view<2, false, 1, 0>",
            "  %vt0 = tensor_addr.create_view : !tensor_addr.view<2, false, 1, 0>\n"
            "  %one = arith.constant 1 : i32\n  %big = arith.constant 15 : i32\n"
            "  %vt = tensor_addr.view_set_clip %vt0, %one, %big, %one, %big : "
            "!tensor_addr.view<2, false, 1, 0>")
    return text


def test_unstaged_tensor_load_is_a_located_warning_or_a_strict_error():
    text = _unstageable(view_clip=True)
    module = LocatingParser(make_context(), text, "clip.mlir").parse_module()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        PipelineCoopLoadsPass(stages=2).apply(make_context(), module)
    msgs = [str(w.message) for w in seen if issubclass(w.category, CoopWarning)]
    assert len(msgs) == 1 and msgs[0].startswith("clip.mlir:") and "'coop.load_tensor' op not " \
        "staged by pipeline-coop-loads: its tensor view does more than permute" in msgs[0], msgs
    # the A load was still staged; the clipped B load stays global
    assert sum(isinstance(op, coop_async.AsyncCopyTensorOp) for op in module.walk()) == 2
    module = LocatingParser(make_context(), text, "clip.mlir").parse_module()
    with pytest.raises(CoopError, match=r"^clip\.mlir:\d+:\d+: error: 'coop.load_tensor' op not "
                                        "staged by pipeline-coop-loads: its tensor view"):
        PipelineCoopLoadsPass(stages=2, strict=True).apply(make_context(), module)


def test_staged_tensor_gemm_lowers_to_valid_spirv(tmp_path):
    """The staged coopmat2 GEMM example through convert-coop-to-spirv (a tensor copy becomes a
    Workgroup-scope OpCooperativeMatrixLoadTensorNV and a store into workgroup memory): valid for
    spirv-val, and the same numbers as the unstaged kernel in the interpreter."""
    from coopdialect import api
    from validators import spirv_val

    path = "examples/gemm_coopmat2_f16.mlir"
    staged = api.parse_file(path)
    api.run_pipeline(staged, "pipeline-coop-loads{stages=3 strict=true}")
    assert sum(isinstance(o, coop_async.AsyncCopyTensorOp) for o in staged.walk()) == 6
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (256, 128)).astype(np.float16)
    bt = rng.integers(-3, 4, (256, 128)).astype(np.float16)
    c = np.zeros((256, 256), np.float32)
    api.run_kernel(staged, "gemm_coopmat2", [a, bt, c], (2, 2, 1))
    assert np.array_equal(c, a.astype(np.float32) @ bt.astype(np.float32).T)
    spirv_val(api.compile_to_spirv(staged), tmp_path)
