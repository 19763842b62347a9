"""distribute-coop-workgroup and the SPIR-V flavour of the staged form.

* Property: random Workgroup-scope GEMM tiles (f16->f32 and signed i8->i32, RowMajor or
  ColumnMajor B, 2 or 4 subgroups, several tile/K/grid sizes) give the same output bits in the
  interpreter before and after `distribute-coop-workgroup`, alone and after
  `pipeline-coop-loads{stages=S}` and before `legalize-coop-sizes{flexible=false}` (the
  Vulkan pipeline of docs/vulkan.md); the reference is also numpy's exact product.
* The Vulkan examples (examples/gemm_{f16,s8}_vk.mlir, at 256³) through the full pipeline:
  interpreter = numpy, and the SPIR-V passes spirv-val.
* Refusals are one line naming the op.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from coopdialect import api
from coopdialect.errors import CoopError
from coopdialect.kernels.gemm_tiles import workgroup_gemm_ir
from hypothesis_profiles import scaled
import parsed

ROOT = Path(__file__).resolve().parents[1]
VULKAN = ("pipeline-coop-loads{stages=2},distribute-coop-workgroup,"
          "legalize-coop-sizes{target=h200-vulkan flexible=false}")


def gemm_ir(m, n, k, bm, bn, bk, inv, dtype, b_col):
    """A Workgroup-scope tile GEMM (the shape of examples/gemm_f16_vk.mlir), C = A·B."""
    return workgroup_gemm_ir(m, n, k, bm, bn, bk, inv, dtype, b_col)


def _data(m, n, k, dtype, b_col, seed):
    rng = np.random.default_rng(seed)
    if dtype == "f16":
        a = rng.integers(-4, 5, (m, k)).astype(np.float16)
        b = rng.integers(-4, 5, (k, n)).astype(np.float16)
        ref = a.astype(np.float32) @ b.astype(np.float32)
        c = np.zeros((m, n), np.float32)
    else:
        a = rng.integers(-128, 128, (m, k), dtype=np.int8)
        b = rng.integers(-128, 128, (k, n), dtype=np.int8)
        ref = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
        c = np.zeros((m, n), np.int32)
    return a, (np.ascontiguousarray(b.T) if b_col else b), c, ref


def _run(text, pipeline, grid, data):
    module = parsed.parse(text, "gemm")
    if pipeline:
        api.run_pipeline(module, pipeline)
    a, b, c, _ = data
    c = c.copy()
    api.run_kernel(module, "g", [a, b, c], grid)
    return c


@st.composite
def _cases(draw):
    dtype = draw(st.sampled_from(["f16", "i8"]))
    inv = draw(st.sampled_from([64, 128]))
    bm = draw(st.sampled_from([32, 64]))
    bn = draw(st.sampled_from([32, 64]))
    bk = draw(st.sampled_from([16, 32])) * (2 if dtype == "i8" else 1)
    trips = draw(st.integers(1, 3))
    gx, gy = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    stages = draw(st.sampled_from([0, 2, 3]))
    legalize = draw(st.booleans())
    b_col = draw(st.booleans())
    return dtype, inv, bm, bn, bk, trips, gx, gy, stages, legalize, b_col


@settings(max_examples=scaled(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases(), st.integers(0, 2**16))
def test_distribution_keeps_interpreter_results(case, seed):
    dtype, inv, bm, bn, bk, trips, gx, gy, stages, legalize, b_col = case
    m, n, k = bm * gy, bn * gx, bk * trips
    text = gemm_ir(m, n, k, bm, bn, bk, inv, dtype, b_col)
    data = _data(m, n, k, dtype, b_col, seed)
    steps = ([f"pipeline-coop-loads{{stages={stages}}}"] if stages else []) + [
        "distribute-coop-workgroup"]
    if legalize:
        steps.append("legalize-coop-sizes{target=h200-vulkan flexible=false}")
    try:
        after = _run(text, ",".join(steps), (gx, gy, 1), data)
    except CoopError as e:
        assume("no grid of" not in str(e))  # e.g. 4 subgroups over a 32x32 tile with 1x4
        raise
    before = _run(text, "", (gx, gy, 1), data)
    np.testing.assert_array_equal(before, data[3])
    np.testing.assert_array_equal(after, before)


@pytest.mark.parametrize("dtype, path", [("f16", "examples/gemm_f16_vk.mlir"),
                                         ("i8", "examples/gemm_s8_vk.mlir")])
def test_vulkan_examples_pipeline(dtype, path, tmp_path):
    s = 256
    text = (ROOT / path).read_text().replace("8192", str(s))
    kernel = "gemm_f16_vk" if dtype == "f16" else "gemm_s8_vk"
    data = _data(s, s, s, dtype, False, 7)
    module = parsed.parse(text, path)
    api.run_pipeline(module, VULKAN)
    a, b, c, ref = data
    api.run_kernel(module, kernel, [a, b, c], (s // 128, s // 128, 1))
    np.testing.assert_array_equal(c, ref)
    spv = tmp_path / "k.spv"
    module = parsed.parse(text, path)
    api.run_pipeline(module, VULKAN)
    spv.write_bytes(api.compile_to_spirv(module))
    subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(spv)], check=True)
    dis = subprocess.run(["spirv-dis", str(spv)], check=True, capture_output=True, text=True).stdout
    # register staging (the default): the two slots of each operand share one padded slot,
    # 16-byte rows + 16 bytes of padding: f16 A 128x32 -> 128*40*2 B = 640 vectors, B 32x128 ->
    # 32*136*2 B = 544; s8 A 128x64 -> 128*80 B = 640, B 64x128 -> 64*144 B = 576
    sizes = {"f16": (640, 544), "i8": (640, 576)}[dtype]
    for n in sizes:
        assert f"OpTypeArray %v4uint %uint_{n}" in dis
    # each wait: barrier, the registers land, barrier (the loop's wait and the final one)
    assert dis.count("OpControlBarrier") == 4
    assert "_v16" in dis and "_issued = OpVariable %_ptr_Private_bool Private" in dis


def test_hoisted_copies_keep_interpreter_results():
    """hoist_copies (the IR rewrite the register staging starts with) moves the next
    iteration's copies before the compute; the staged semantics allow it: same output."""
    from xdsl.dialects import func

    from coopdialect.dialects import coop, coop_async
    from coopdialect.passes.convert_coop_async_to_spirv import hoist_copies

    s = 256
    text = (ROOT / "examples/gemm_f16_vk.mlir").read_text().replace("8192", str(s))
    module = parsed.parse(text, "gemm_f16_vk")
    api.run_pipeline(module, VULKAN)
    (kernel,) = [o for o in module.walk() if isinstance(o, func.FuncOp)]
    hoist_copies(kernel)
    module.verify()
    loop = next(o for o in kernel.walk() if o.attributes.get("coop.pipeline_stages"))
    body = list(loop.body.blocks[0].ops)
    first_copy = next(i for i, o in enumerate(body)
                      if any(isinstance(x, coop_async.AsyncCopyOp) for x in o.walk()))
    first_mma = next(i for i, o in enumerate(body) if isinstance(o, coop.MulAddOp))
    assert first_copy < first_mma
    a, b, c, ref = _data(s, s, s, "f16", False, 3)
    api.run_kernel(module, "gemm_f16_vk", [a, b, c], (s // 128, s // 128, 1))
    np.testing.assert_array_equal(c, ref)


def test_refuses_unsplittable_use():
    text = """
!c = !coop.matrix<64x64xf32, Workgroup, MatrixAcc>
func.func @g(%C: memref<64x64xf32>) attributes {coop.workgroup_size = array<i32: 128, 1, 1>} {
  %z = arith.constant 0.0 : f32
  %m = coop.composite_construct %z : f32 -> !c
  %x = coop.extract %m[0] : !c
  func.return
}"""
    module = parsed.parse(text, "t.mlir")
    with pytest.raises(CoopError, match="cannot split a Workgroup-scope matrix"):
        api.run_pipeline(module, "distribute-coop-workgroup")


def test_explicit_grid_must_divide():
    text = gemm_ir(64, 64, 32, 64, 64, 32, 128, "f16", False)
    module = parsed.parse(text, "t.mlir")
    with pytest.raises(CoopError, match="grid 2x1 does not split"):
        api.run_pipeline(module, "distribute-coop-workgroup{grid=2x1}")
    module = parsed.parse(text, "t.mlir")
    api.run_pipeline(module, "distribute-coop-workgroup{grid=4x1}")
    assert "16x32xf16, Subgroup, MatrixA" in str(module)
