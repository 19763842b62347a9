"""Scalar kernel arguments, dynamic memrefs and a declared grid, through every stage.

examples/gemm_dynamic.mlir (a subgroup-scope f16 GEMM with `memref<?x?xf16>` operands, `%M, %N,
%K: i32` and `coop.grid = (N/64, M/64, 1)`) is interpreted at two shapes against numpy, lowered
to SPIR-V (spirv-val; read back, raised and interpreted again) and to PTX (ptxas; executed by
tests/ptx_sim.py with the scalar parameters' bytes; its launch description checked field by field
against the IR). The host's bytes (CUDA parameters, Vulkan push constants) are checked against
struct.pack of the values at the offsets the Vulkan / PTX rules give, computed here by hand.
"""

from __future__ import annotations

import math
import re
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import scaled
import parsed
import tool_processes
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType

from coopdialect import api
from coopdialect.errors import CoopError
from coopdialect.dialects.coop_kernel import dispatch_grid
from coopdialect.host_expr import eval_host_expr
from coopdialect.ptx.launch import describe
from coopdialect.runtime import run_kernel
from coopdialect.runtime import cuda as cuda_mod
from coopdialect.runtime.cuda_params import (LaunchError, encode_args, pack_scalar, param_bytes,
                                             parse_launch)
from coopdialect.spirv import push_constants
from coopdialect.tools import coop_run
from test_runtime import TMAP, FakeDriver, _desc, fake_driver  # noqa: F401  (the fixture)
from validators import ptxas, spirv_dis, spirv_val

ROOT = Path(__file__).resolve().parents[1]
GEMM = ROOT / "examples" / "gemm_dynamic.mlir"
SHAPES = [(64, 128, 32), (128, 64, 48)]  # (M, N, K): M, N multiples of 64, K of 16

# one scalar of each type between two memrefs: the numbering of buffers and of scalars
MIXED = """
!m = !coop.matrix<16x16xf16, Subgroup, MatrixAcc>
!f = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @mixed(%A: memref<?xf16>, %s: f16, %n: i64, %B: memref<?x16xf32>, %x: index, %f: f32,
                 %m: i32) attributes {coop.workgroup_size = array<i32: 32, 1, 1>,
                 coop.grid = affine_map<()[s0, s1, s2] -> (s0 + 1, s1 floordiv 2, s2 mod 3 + 1)>} {
  %c16 = arith.constant 16 : index
  %ni = arith.index_cast %n : i64 to index
  %mi = arith.index_cast %m : i32 to index
  %o = arith.addi %ni, %x : index
  %o2 = arith.addi %o, %mi : index
  %a = coop.load %A[%o2], %c16, RowMajor : memref<?xf16> -> !m
  %b = coop.matrix_times_scalar %a, %s : !m, f16 -> !m
  coop.store %b, %A[%o2], %c16, RowMajor : !m, memref<?xf16>
  %c = coop.load %B[%o2], %c16, RowMajor : memref<?x16xf32> -> !f
  %d = coop.matrix_times_scalar %c, %f : !f, f32 -> !f
  coop.store %d, %B[%o2], %c16, RowMajor : !f, memref<?x16xf32>
  func.return
}
"""


def _gemm_inputs(m: int, n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    c = rng.integers(-3, 4, (m, n)).astype(np.float32)
    # small integers: every product and sum is exact in f32, so the result is numpy's exactly
    want = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    return a, b, c, want


def _kernel(module) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp))


# ---- the interpreter ---------------------------------------------------------------------------


@pytest.mark.parametrize("m, n, k", SHAPES)
def test_interpreted_gemm_at_two_shapes(m, n, k):
    module = parsed.parse_file(GEMM)
    a, b, c, want = _gemm_inputs(m, n, k)
    # numpy and Python scalars alike; no grid: the declared one, (N/64, M/64, 1)
    api.run_kernel(module, "gemm_dynamic", [a, b, c, np.int32(m), n, np.int64(k)])
    assert np.array_equal(c, want)
    a, b, c, want = _gemm_inputs(m, n, k, seed=1)
    api.run_kernel(module, "gemm_dynamic", [a, b, c, m, n, k], grid=(n // 64, m // 64, 1))
    assert np.array_equal(c, want)


_GEMM_FN = []


@settings(max_examples=scaled(20), deadline=None)
@given(st.integers(1, 1 << 20), st.integers(1, 1 << 20), st.integers(-(1 << 31), (1 << 31) - 1))
def test_declared_grid_is_the_maps_value(m, n, k):
    if not _GEMM_FN:
        _GEMM_FN.append(_kernel(parsed.parse_file(GEMM)))
    fn = _GEMM_FN[0]
    assert dispatch_grid(fn, [None, None, None, m, n, k]) == (math.ceil(n / 64), math.ceil(m / 64), 1)


def test_declared_grid_of_the_mixed_kernel():
    fn = _kernel(parsed.parse(MIXED))
    # symbols s0, s1, s2 are the integer scalars %n, %x, %m (f16 and f32 are no symbols)
    assert dispatch_grid(fn, [None, 1.0, 6, None, 9, 2.5, -4]) == (7, 4, (-4) % 3 + 1)
    with pytest.raises(ValueError, match=r"is \(0, 4, 3\) for n = -1, x = 9, m = -4"):
        dispatch_grid(fn, [None, 1.0, -1, None, 9, 2.5, -4])


@pytest.mark.parametrize("args, exc, message", [
    ([64, 64, True], TypeError, r"args\[5\] must be a numpy array \(or a number .*got bool"),
    ([64, 64, 16.0], TypeError, "takes an integer, got float"),
    ([64, 64, 1 << 32], ValueError, "4294967296 does not fit i32"),
    ([64, 64, -(1 << 31) - 1], ValueError, "does not fit i32"),
    ([64, 64, "16"], TypeError, r"args\[5\] must be a numpy array \(or a number"),
])
def test_scalar_argument_errors(args, exc, message):
    module = parsed.parse_file(GEMM)
    a, b, c, _ = _gemm_inputs(64, 64, 16)
    with pytest.raises(exc, match=message):
        api.run_kernel(module, "gemm_dynamic", [a, b, c, *args])


def test_the_interpreter_takes_the_unsigned_range_of_i32_as_twos_complement():
    # 0xFFFFFFC0 is -64 as an i32: the declared grid's count M/64 is -1, refused in one line
    module = parsed.parse_file(GEMM)
    a, b, c, _ = _gemm_inputs(64, 64, 16)
    with pytest.raises(ValueError, match=r"is \(1, -1, 1\) for M = -64"):
        api.run_kernel(module, "gemm_dynamic", [a, b, c, 0xFFFFFFC0, 64, 16])


def test_no_grid_for_a_kernel_that_declares_none():
    module = api.parse_file(ROOT / "examples" / "gemm_f16.mlir")
    bufs = [np.zeros((128, 256), np.float16), np.zeros((256, 128), np.float16),
            np.zeros((128, 128), np.float32)]
    with pytest.raises(ValueError, match="declares no grid"):
        api.run_kernel(module, "gemm_f16", bufs)


@pytest.mark.parametrize("m, n, k", SHAPES[:1])
def test_legalize_to_mma_tiles_keeps_the_numbers(m, n, k):
    """legalize-coop-sizes{target=sm90a-ptx flexible=false} splits the 16x16 B/C tiles of the
    dynamic GEMM into m16n8k16 ones (flexible, the PTX backend takes them whole)."""
    module = parsed.parse_file(GEMM)
    api.run_pipeline(module, "legalize-coop-sizes{target=sm90a-ptx flexible=false}")
    assert "16x8x" in str(module)
    a, b, c, want = _gemm_inputs(m, n, k)
    api.run_kernel(module, "gemm_dynamic", [a, b, c, m, n, k])
    assert np.array_equal(c, want)


# ---- SPIR-V ------------------------------------------------------------------------------------


def _spirv_dis(data: bytes, tmp_path: Path) -> str:
    return spirv_dis(data, tmp_path, raw_id=True)


def _push_block(dis: str) -> tuple[list[str], list[int]]:
    """(member type ids, member offsets) of the struct the PushConstant variable points at."""
    ptr = re.search(r"(%\d+) = OpTypePointer PushConstant (%\d+)", dis).group(2)
    members = re.search(rf"{ptr} = OpTypeStruct (.*)", dis).group(1).split()
    offsets = {int(i): int(o) for i, o in
               re.findall(rf"OpMemberDecorate {ptr} (\d+) Offset (\d+)", dis)}
    assert re.search(rf"OpDecorate {ptr} Block", dis)
    return members, [offsets[i] for i in range(len(members))]


def test_spirv_of_the_dynamic_gemm(tmp_path):
    data = api.compile_to_spirv(parsed.parse_file(GEMM))
    spirv_val(data, tmp_path)
    dis = _spirv_dis(data, tmp_path)
    members, offsets = _push_block(dis)
    assert offsets == [0, 4, 8]  # M, N, K: three 4-byte integers
    assert all(re.search(rf"{t} = OpTypeInt 32 \d", dis) for t in members)
    # the buffers are bindings 0, 1, 2; the push constants are on the entry point's interface
    bindings = re.findall(r"OpDecorate (%\d+) Binding (\d+)", dis)
    assert sorted(int(b) for _, b in bindings) == [0, 1, 2]
    variable = re.search(r"(%\d+) = OpVariable %\d+ PushConstant", dis).group(1)
    assert variable in re.search(r"OpEntryPoint GLCompute .*", dis).group(0)


def test_push_constant_block_of_every_scalar_type(tmp_path):
    data = api.compile_to_spirv(parsed.parse(MIXED))
    spirv_val(data, tmp_path)
    dis = _spirv_dis(data, tmp_path)
    assert "OpCapability StoragePushConstant16" in dis  # the f16 member
    assert "OpCapability Int64" in dis
    members, offsets = _push_block(dis)
    kinds = [re.search(rf"{t} = (OpType\w+ \d+)", dis).group(1) for t in members]
    assert kinds == ["OpTypeFloat 16", "OpTypeInt 64", "OpTypeInt 32", "OpTypeFloat 32",
                     "OpTypeInt 32"]  # f16, i64, index (32-bit in SPIR-V), f32, i32
    # Vulkan's push-constant layout: a scalar at the next multiple of its size
    assert offsets == [0, 8, 16, 20, 24]
    # the host's bytes: the same offsets, as struct.pack lays out these formats (`6x`: padding)
    values = [1.5, -(1 << 40), 7, -2.25, -9]
    want = struct.pack("<e6xqifi", *values)
    assert [struct.calcsize(f) for f in ("<e6x", "<e6xq", "<e6xqi", "<e6xqif")] == offsets[1:]
    types = [a.type for a in _kernel(parsed.parse(MIXED)).args if not isinstance(a.type, MemRefType)]
    members = push_constants.layout(types)
    assert [m.offset for m in members] == offsets
    assert push_constants.pack(members, values) == want
    with pytest.raises(ValueError, match="32-bit index"):
        push_constants.pack(members, [0, 0, 1 << 31, 0, 0])


def test_emitted_spirv_read_back_and_raised_gives_the_same_gemm():
    """The SPIR-V binary, read and lifted by raise-spirv-to-coop (buffers become memref<?xT>,
    the push-constant members scalar arguments after them), interpreted at another shape."""
    module = api.read_spirv(api.compile_to_spirv(parsed.parse_file(GEMM)), raise_to_coop=True)
    m, n, k = SHAPES[1]
    a, b, c, want = _gemm_inputs(m, n, k)
    flat = c.reshape(-1)
    api.run_kernel(module, "gemm_dynamic", [a.reshape(-1), b.reshape(-1), flat, m, n, k],
                   (n // 64, m // 64, 1))
    assert np.array_equal(flat.reshape(m, n), want)


def test_vulkan_device_pushes_the_scalars(monkeypatch):
    from coopdialect.runtime import vulkan, vulkan_ctypes

    calls = []

    class Ctx:  # every feature the module needs; records the dispatch
        enabled_extensions = ["VK_KHR_cooperative_matrix"]
        enabled_features = {"core": {"shaderInt16": True},
                            "vulkan11": {"storageBuffer16BitAccess": True},
                            "vulkan12": {"vulkanMemoryModel": True, "shaderFloat16": True},
                            "cooperative_matrix_khr": {"cooperativeMatrix": True}}

        def device_info(self):  # the H200's shared memory limit
            return {"name": "Fake GPU", "limits": {"maxComputeSharedMemorySize": 49152}}

        def __init__(self, validation=None):
            pass

        def run_compute(self, spv, buffers, grid, entry, push_constants=None):
            calls.append(([b.shape for b in buffers], grid, entry, push_constants))
            return [b for b in buffers]

        def close(self):
            pass

    monkeypatch.setattr(vulkan_ctypes, "VulkanContext", Ctx)
    m, n, k = SHAPES[1]
    a, b, c, _ = _gemm_inputs(m, n, k)
    run_kernel(parsed.parse_file(GEMM), "gemm_dynamic", [a, b, c, m, n, k], None,
               vulkan.VulkanDevice())
    ((shapes, grid, entry, push),) = calls
    assert shapes == [(m, k), (k, n), (m, n)] and entry == "gemm_dynamic"
    assert grid == (n // 64, m // 64, 1)
    assert push == struct.pack("<iii", m, n, k)


def test_vulkan_storage_push_constant_16_is_a_named_feature():
    from coopdialect.runtime.vulkan import missing_features

    assert missing_features(["StoragePushConstant16"], [], {}, []) == [
        "Vulkan feature VkPhysicalDeviceVulkan11Features::storagePushConstant16 (for capability "
        "StoragePushConstant16)"]


# ---- PTX ---------------------------------------------------------------------------------------


def _ptx(text_or_path) -> tuple[object, str]:
    module = api.parse_file(text_or_path) if isinstance(text_or_path, Path) else api.parse(text_or_path)
    return module, api.compile_to_ptx(module)


def _ptxas_ok(text: str, tmp_path: Path) -> None:
    f = tmp_path / "k.ptx"
    f.write_text(text)
    r = subprocess.run([ptxas(), "-arch=sm_90a", str(f), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_ptx_params_and_launch_description_follow_the_ir(tmp_path):
    src = _kernel(parsed.parse_file(GEMM))
    lowered, text = _ptx(GEMM)
    _ptxas_ok(text, tmp_path)
    entry = text[text.index(".entry gemm_dynamic("):]
    decls = re.findall(r"\.param \.(\w+) gemm_dynamic_param_(\w+)", entry[:entry.index(")")])
    assert decls == [("u64", "A"), ("u64", "B"), ("u64", "C"), ("u32", "M"), ("u32", "N"),
                     ("u32", "K")]
    for name in "MNK":
        assert re.search(rf"ld\.param\.u32 %r\d+, \[gemm_dynamic_param_{name}\];", text)
    (k,) = describe(lowered)["kernels"]
    assert k["block"] == [int(x) for x in src.attributes["coop.workgroup_size"].get_values()]
    assert k["grid"] == "dispatch" and k["dynamic_shared_bytes"] == 0
    for i, (a, desc) in enumerate(zip(src.args, k["args"])):
        assert desc["name"] == a.name_hint
        if i < 3:  # memref<?x?xT>: the element type, both sizes dynamic (null)
            assert desc == {"name": a.name_hint, "dtype": str(a.type.element_type),
                            "shape": [None, None]}
            assert k["params"][i] == {"kind": "pointer", "arg": i}
        else:
            assert desc == {"name": a.name_hint, "dtype": "i32", "scalar": True}
            assert k["params"][i] == {"kind": "scalar", "arg": i, "dtype": "i32"}
    assert len(k["params"]) == len(src.args) == len(k["args"])
    # grid_dims: (ceildiv(N, 64), ceildiv(M, 64), 1) over the arguments M = 3, N = 4
    for m, n in [(64, 128), (1, 1), (65, 200), (4096, 64)]:
        values = {3: m, 4: n, 5: 16}
        assert [eval_host_expr(e, values) for e in k["grid_dims"]] == [
            math.ceil(n / 64), math.ceil(m / 64), 1]
    launch = parse_launch(describe(lowered))["gemm_dynamic"]
    assert launch.declared_grid([0, 0, 0, 128, 192, 16]) == (3, 2, 1)


def test_ptx_params_of_every_scalar_type(tmp_path):
    lowered, text = _ptx(MIXED)
    _ptxas_ok(text, tmp_path)
    entry = text[text.index(".entry mixed("):]
    decls = re.findall(r"\.param \.(\w+) mixed_param_(\w+)", entry[:entry.index(")")])
    assert decls == [("u64", "A"), ("b16", "s"), ("u64", "n"), ("u64", "B"), ("u64", "x"),
                     ("f32", "f"), ("u32", "m")]
    for t, reg, name in [("b16", "%h", "s"), ("u64", "%rd", "n"), ("u64", "%rd", "x"),
                         ("f32", "%f", "f"), ("u32", "%r", "m")]:
        assert re.search(rf"ld\.param\.{t} {reg}\d+, \[mixed_param_{name}\];", text), name
    (k,) = describe(lowered)["kernels"]
    assert [a.get("dtype") for a in k["args"]] == ["f16", "f16", "i64", "f32", "index", "f32",
                                                   "i32"]
    assert k["args"][3]["shape"] == [None, 16]
    assert [p["kind"] for p in k["params"]] == ["pointer", "scalar", "scalar", "pointer",
                                                "scalar", "scalar", "scalar"]
    # the declared grid's symbols are the integer scalars n (2), x (4), m (6)
    assert [eval_host_expr(e, {2: 5, 4: 9, 6: 7}) for e in k["grid_dims"]] == [6, 4, 2]
    # each scalar param's bytes: struct's formats of the .param types (.b16 = IEEE half)
    launch = parse_launch(describe(lowered))["mixed"]
    args = [0x7000, 1.5, -3, 0x8000, 1 << 40, -0.75, 0xFFFFFFFF]
    assert param_bytes(launch, args, {}) == [
        struct.pack("<Q", 0x7000), struct.pack("<e", 1.5), struct.pack("<q", -3),
        struct.pack("<Q", 0x8000), struct.pack("<q", 1 << 40), struct.pack("<f", -0.75),
        struct.pack("<I", 0xFFFFFFFF)]


@pytest.mark.parametrize("m, n, k", [(64, 64, 32)])
def test_ptx_of_the_dynamic_gemm_runs_in_the_simulator(m, n, k):
    """The lowered kernel, executed by tests/ptx_sim.py with the .param bytes a host passes."""
    import ptx_sim

    module = parsed.parse_file(GEMM)
    api.run_pipeline(module, "convert-coop-to-ptx")
    a, b, c, want = _gemm_inputs(m, n, k)
    scalars = [struct.pack("<I", v) for v in (m, n, k)]
    ptx_sim.Kernel(next(iter(module.ops))).run([a, b, c, *scalars], (n // 64, m // 64, 1),
                                               (128, 1, 1))
    assert np.array_equal(c, want)


def test_a_staged_copy_from_a_dynamic_memref_is_refused():
    text = (ROOT / "examples" / "gemm_f16_wg.mlir").read_text()
    sig = re.search(r"func\.func @\w+\((.*?)\)", text, re.S).group(1)
    dynamic = text.replace(sig, re.sub(r"memref<\d+x\d+x", "memref<?x?x", sig))
    dynamic = re.sub(r"memref<\d+x\d+x(f16|bf16|f32)>", r"memref<?x?x\1>", dynamic)
    module = api.parse(dynamic, "wg.mlir")
    api.run_pipeline(module, "pipeline-coop-loads{stages=4}")
    # an offset/stride copy reads rows of a static shape; a dynamic source goes through a tensor
    # layout sized by scalar arguments instead (docs/staging.md)
    with pytest.raises(CoopError, match=r"wg\.mlir:\d+:\d+: error: 'coop\.async_copy' op .*the "
                                        r"copy source memref<\?x\?xf16> has a dynamic size"):
        api.compile_to_ptx(module)


# ---- the runtime's parameters ------------------------------------------------------------------


@pytest.mark.parametrize("dtype, value, want", [
    ("i32", 7, struct.pack("<i", 7)), ("i32", -7, struct.pack("<i", -7)),
    ("i32", 0xFFFFFFFF, struct.pack("<I", 0xFFFFFFFF)), ("i64", -(1 << 40), struct.pack("<q", -(1 << 40))),
    ("index", np.int64(1 << 62), struct.pack("<q", 1 << 62)), ("f32", 0.1, struct.pack("<f", 0.1)),
    ("f16", 65504.0, struct.pack("<e", 65504.0)), ("f16", np.float32(-2.5), struct.pack("<e", -2.5)),
])
def test_pack_scalar_is_struct_pack(dtype, value, want):
    assert pack_scalar(dtype, value) == want


@pytest.mark.parametrize("dtype, value, message", [
    ("i32", 1 << 32, "does not fit i32"), ("index", 1 << 63, "does not fit index"),
    ("i64", 1.0, "takes an integer"), ("f32", "1", "takes a number"), ("i32", True, "takes a number"),
])
def test_pack_scalar_refuses(dtype, value, message):
    with pytest.raises(LaunchError, match=message):
        pack_scalar(dtype, value)


ARGS = [{"name": "A", "dtype": "f16", "shape": [None, None]},
        {"name": "C", "dtype": "f32", "shape": [None, None]},
        {"name": "K", "dtype": "i32", "scalar": True}, {"name": "M", "dtype": "i64", "scalar": True},
        {"name": "s", "dtype": "f32", "scalar": True}]
SCALARS = [{"kind": "scalar", "arg": i, "dtype": ARGS[i]["dtype"]} for i in (2, 3, 4)]


def test_tensor_map_sizes_from_scalar_arguments():
    tmap = dict(TMAP, global_dims=[{"arg": 2}, {"arg": 3}],
                global_strides=[{"op": "mul", "args": [{"arg": 2}, 2]}])
    (k,) = parse_launch(_desc([tmap, {"kind": "pointer", "arg": 1}, *SCALARS], ARGS)).values()
    args = [0x7F0000001000, 0x7F0000002000, 4096, 8192, 0.5]
    got = encode_args(k.params[0], args[0], k.scalars(args))
    assert got["globalDim"] == [4096, 8192] and got["globalStrides"] == [8192]
    # values the driver API refuses, once known: a stride not a multiple of 16 bytes
    with pytest.raises(LaunchError, match="global_strides \\[8190\\] must be multiples of 16"):
        encode_args(k.params[0], args[0], k.scalars([0, 0, 4095, 8192, 0.5]))
    with pytest.raises(LaunchError, match="no value for argument 2"):
        encode_args(k.params[0], args[0], {})


@pytest.mark.parametrize("change, message", [
    ({"tmap": {"global_dims": [{"arg": 4}, 64]}}, "does not name an integer scalar argument"),
    ({"tmap": {"global_dims": [{"arg": 0}, 64]}}, "does not name an integer scalar argument"),
    ({"tmap": {"global_strides": [{"op": "pow", "args": [2, 3]}]}}, "global_strides"),
    ({"kernel": {"grid_dims": [1, 1]}}, "grid_dims must be three host expressions"),
    ({"kernel": {"grid_dims": [{"arg": 1}, 1, 1]}}, "grid_dims x: {'arg': 1} does not name"),
    ({"kernel": {"grid": "persistent", "grid_dims": [1, 1, 1]}}, "of a dispatch grid"),
    ({"param": {"kind": "scalar", "arg": 2, "dtype": "i64"}}, "scalar param 4 must name a scalar "
                                                             "argument of its dtype 'i64'"),
    ({"param": {"kind": "pointer", "arg": 3}}, "pointer param 4 names scalar argument 3"),
    ({"args": {"dtype": "u8"}}, "scalar argument 2 has dtype 'u8'"),
])
def test_parse_launch_refuses_bad_scalars_and_expressions(change, message):
    tmap = {**TMAP, "global_dims": [{"arg": 2}, 64], **change.get("tmap", {})}
    params = [tmap, {"kind": "pointer", "arg": 1}, *SCALARS]
    if "param" in change:
        params[4] = change["param"]
    args = [dict(a) for a in ARGS]
    args[2].update(change.get("args", {}))
    d = _desc(params, args, **change.get("kernel", {}))
    with pytest.raises(LaunchError) as e:
        parse_launch(d)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_declared_grid_of_a_launch():
    d = _desc([{"kind": "pointer", "arg": 0}, *SCALARS], ARGS,
              grid_dims=[{"op": "ceildiv", "args": [{"arg": 3}, 128]}, {"arg": 2}, 1])
    (k,) = parse_launch(d).values()
    assert k.declared_grid([0, 0, 5, 1000, 0.0]) == (8, 5, 1)
    with pytest.raises(LaunchError, match=r"the declared grid is \(8, 0, 1\)"):
        k.declared_grid([0, 0, 0, 1000, 0.0])
    with pytest.raises(LaunchError, match="takes 5 arguments, got 2"):
        k.declared_grid([0, 0])


def test_cuda_launch_passes_scalar_params(fake_driver):  # noqa: F811
    dev = cuda_mod.CudaDevice()
    m, n, k = SHAPES[0]
    a, b, c, _ = _gemm_inputs(m, n, k)
    fake_driver.sizes = [8, 8, 8, 4, 4, 4]
    report = run_kernel(parsed.parse_file(GEMM), "gemm_dynamic", [a, b, c, m, n, np.int32(k)],
                        None, dev)
    args, _ = fake_driver.launched
    assert args[1:7] == (n // 64, m // 64, 1, 128, 1, 1)  # the declared grid, the block
    addresses = [struct.unpack("<Q", v)[0] for v in fake_driver.param_values[:3]]
    assert [fake_driver.mem[p] for p in addresses] == [a.tobytes(), b.tobytes(), c.tobytes()]
    assert fake_driver.param_values[3:] == [struct.pack("<I", v) for v in (m, n, k)]
    assert report.device == "cuda"
    with pytest.raises(CoopError, match=r"argument 3 \(i32\): 4294967296 does not fit i32"):
        run_kernel(parsed.parse_file(GEMM), "gemm_dynamic", [a, b, c, 1 << 32, n, k], None, dev)
    dev.close()


# ---- coop-run ----------------------------------------------------------------------------------


def _coop_run(capsys, *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        coop_run.main([*argv])
        sys.exit(0)
    out, err = capsys.readouterr()
    return e.value.code, out, err


def test_coop_run_with_scalar_arguments_and_shapes(capsys, tmp_path):
    m, n, k = SHAPES[1]
    rc, out, err = _coop_run(capsys, str(GEMM), "--arg", f"M={m}", "--arg", f"N={n}",
                             "--arg", f"%K={k}", "--shape", f"A={m}x{k}", "--shape", f"B={k}x{n}",
                             "--shape", f"C={m}x{n}", "--check", "--save", str(tmp_path))
    assert rc == 0 and err == "", err
    assert "check: PASS (all 3 buffers bit-exact)" in out
    assert f"%C: float32[{m}, {n}]" in out
    a, b, c = (np.load(tmp_path / "in" / f"{x}.npy") for x in "ABC")
    assert a.shape == (m, k) and b.shape == (k, n) and c.shape == (m, n)
    assert [int(np.load(tmp_path / "in" / f"{x}.npy")) for x in "MNK"] == [m, n, k]
    want = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    assert np.array_equal(np.load(tmp_path / "out" / "C.npy"), want)
    # the saved inputs replay the run: the scalars as 0-d .npy files
    rc, out2, err = _coop_run(capsys, str(GEMM), *(f"--input={x}={tmp_path / 'in' / x}.npy"
                                                   for x in ("A", "B", "C", "M", "N", "K")))
    assert rc == 0 and err == "", err
    assert out2.splitlines()[2] == out.splitlines()[2]  # %C: the same checksum


ERRORS = [
    (["--arg", "M"], "--arg must be NAME=VALUE, got 'M'"),
    (["--arg", "Q=1"], "--arg Q=1: @gemm_dynamic has no scalar argument 'Q' (scalar arguments: M, N, K)"),
    (["--arg", "A=1"], "--arg A=1: @gemm_dynamic has no scalar argument 'A'"),
    (["--arg", "M=12x"], "--arg M=12x: M is i32; expected an integer, got '12x'"),
    (["--arg", "M=4294967296"], "--arg M=4294967296: 4294967296 does not fit i32 (-2147483648..4294967295)"),
    (["--arg", "M=1", "--arg", "M=2"], "--arg M=2: argument 'M' is given twice"),
    (["--arg", "M=64", "--arg", "N=64"], "give scalar argument K (i32) with --arg K=VALUE"),
    (["--arg", "M=0", "--arg", "N=64", "--arg", "K=16"],
     "@gemm_dynamic's declared grid (ceildiv(N, 64), ceildiv(M, 64), 1) is (1, 0, 1) for M = 0, N = 64, K = 16"),
    (["--arg", "M=64", "--arg", "N=64", "--arg", "K=16"],
     "argument A (memref<?x?xf16>) has a dynamic size: give its shape with --shape A=N0xN1"),
    (["--arg", "M=64", "--arg", "N=64", "--arg", "K=16", "--shape", "A=64"],
     "--shape A=64: A (memref<?x?xf16>) needs 2 positive sizes joined by 'x'"),
    (["--arg", "M=64", "--arg", "N=64", "--arg", "K=16", "--shape", "M=64x64"],
     "--shape must be MEMREF=RxC (memref arguments: A, B, C), got 'M=64x64'"),
]


@pytest.mark.parametrize("argv, message", ERRORS)
def test_coop_run_argument_errors(capsys, argv, message):
    rc, out, err = _coop_run(capsys, str(GEMM), *argv)
    assert rc == 1 and out == ""
    assert err.splitlines() == [f"<command line>: error: {message}"] or (
        len(err.splitlines()) == 1 and err.startswith(f"<command line>: error: {message}")), err


def test_coop_run_shape_must_agree_with_static_sizes(capsys, tmp_path):
    f = tmp_path / "k.mlir"
    f.write_text(MIXED)
    rc, _, err = _coop_run(capsys, str(f), "--arg", "s=1", "--arg", "n=0", "--arg", "x=0",
                           "--arg", "f=1", "--arg", "m=0", "--shape", "B=16x8")
    assert rc == 1 and err == ("<command line>: error: --shape B=16x8: dimension 1 of B "
                               "(memref<?x16xf32>) is 16, not 8\n")


def test_coop_run_ptx_launch_command_line():
    """`coop-opt -t ptx-launch` of the example from a shell, as docs/runtime.md shows it."""
    r = tool_processes.run(["coop-opt", GEMM, "-p", "convert-coop-to-ptx", "-t", "ptx-launch"],
                           text=True)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert '"grid_dims"' in out and '"scalar": true' in out


def test_staged_kernel_takes_a_scalar_loop_bound(tmp_path):
    """The warp-specialized pipeline (pipeline-coop-loads, then convert-coop-to-ptx) with the K
    loop's bound a scalar argument: a `.param .u32` after the tensor maps and the pointer, in the
    launch description's params and args, and the declared (constant) grid as grid_dims."""
    text = (ROOT / "examples" / "gemm_f16_wg.mlir").read_text()
    text = text.replace("%D: memref<8192x8192xf16>)", "%D: memref<8192x8192xf16>, %Kn: i32)")
    text = text.replace("coop.workgroup_size = array<i32: 256, 1, 1>}",
                        "coop.workgroup_size = array<i32: 256, 1, 1>, "
                        "coop.grid = affine_map<()[s0] -> (32, 64, 1)>}")
    text = text.replace("  %acc = scf.for %k0 = %c0 to %K step",
                        "  %Ki = arith.index_cast %Kn : i32 to index\n"
                        "  %acc = scf.for %k0 = %c0 to %Ki step")
    assert "%Ki" in text and "coop.grid" in text
    module = api.parse(text, "wg.mlir")
    api.run_pipeline(module, "pipeline-coop-loads{stages=4}")
    lowered = module.clone()
    ptx_text = api.compile_to_ptx(module)
    _ptxas_ok(ptx_text, tmp_path)
    assert re.search(r"\.param \.u32 gemm_f16_wg_param_Kn\n\)", ptx_text)
    assert re.search(r"ld\.param\.u32 %r\d+, \[gemm_f16_wg_param_Kn\];", ptx_text)
    api.run_pipeline(lowered, "convert-coop-to-ptx")
    (k,) = describe(lowered)["kernels"]
    assert k["grid"] == "dispatch" and k["grid_dims"] == [32, 64, 1]
    assert k["args"][3] == {"name": "Kn", "dtype": "i32", "scalar": True}
    assert [p["kind"] for p in k["params"]] == ["tensor_map", "tensor_map", "pointer", "scalar"]
    assert k["params"][3] == {"kind": "scalar", "arg": 3, "dtype": "i32"}
    assert parse_launch(describe(lowered))["gemm_f16_wg"].declared_grid([0, 0, 0, 8192]) == (32, 64, 1)
