"""coopdialect.runtime without a GPU: the launch description, kernel parameters, tensor-map
encoding (against the CUDA driver API's documented cuTensorMapEncodeTiled, through a mocked
driver), Vulkan feature naming, verdicts, and the one-line errors when there is no driver."""

from __future__ import annotations

import ctypes
import json
import re
import struct
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import tool_processes
from xdsl.dialects import func

from coopdialect import api
from coopdialect.ptx.launch import describe
from coopdialect.runtime import DeviceError, run_kernel
from coopdialect.runtime import cuda as cuda_mod
from coopdialect.runtime.cuda_params import LaunchError, encode_args, param_bytes, parse_launch
from coopdialect.runtime.run import gemm_flops
from coopdialect.runtime.verdict import compare, summary
from coopdialect.runtime.vulkan import missing_features
import parsed

ROOT = Path(__file__).resolve().parents[1]
GEMM_F16 = str(ROOT / "examples" / "gemm_f16.mlir")


def _lowered_ptx(path: str):
    module = parsed.parse_file(path)
    src = next(op for op in module.ops if isinstance(op, func.FuncOp))
    wg = [int(x) for x in src.attributes["coop.workgroup_size"].get_values()]
    args = [(a.name_hint, str(a.type.element_type), list(a.type.get_shape())) for a in src.args]
    lowered = parsed.parse_file(path)
    text = api.compile_to_ptx(lowered)
    return lowered, text, wg, args


# ---- the launch description ------------------------------------------------------------------


@pytest.mark.parametrize("example", ["gemm_f16", "gemm_s8", "sparse_gemm_f16"])
def test_describe_matches_source_and_ptx(example):
    lowered, text, wg, args = _lowered_ptx(str(ROOT / "examples" / f"{example}.mlir"))
    d = describe(lowered)
    assert d["format"] == "coopdialect-ptx-launch" and d["version"] == 1
    (k,) = d["kernels"]
    assert k["name"] == example and k["grid"] == "dispatch" and k["dynamic_shared_bytes"] == 0
    assert k["block"] == wg
    assert [(a["name"], a["dtype"], a["shape"]) for a in k["args"]] == args
    assert k["params"] == [{"kind": "pointer", "arg": i} for i in range(len(args))]
    # the printed .entry: one .param .u64 per argument, .reqntid = the block
    entry = text[text.index(f".entry {example}("):]
    assert len(re.findall(r"\.param \.u64 ", entry[:entry.index(")")])) == len(args)
    assert re.search(r"\.reqntid (\d+), (\d+), (\d+)", entry).groups() == tuple(map(str, wg))
    assert parse_launch(d)[example].block == tuple(wg)


def test_coop_opt_prints_launch_description():
    from cli import run_coop_opt

    r = run_coop_opt([GEMM_F16, "-p", "convert-coop-to-ptx", "-t", "ptx-launch"])
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert json.loads(out)["kernels"][0]["args"][2] == {"name": "C", "dtype": "f32",
                                                        "shape": [128, 128]}


def _desc(params, args=None, **kernel):
    k = {"name": "k", "block": [128, 1, 1], "grid": "dispatch", "dynamic_shared_bytes": 0,
         "args": args or [{"name": "A", "dtype": "f16", "shape": [8192, 8192]},
                          {"name": "C", "dtype": "f32", "shape": [8192, 8192]}],
         "params": params}
    k.update(kernel)
    return {"format": "coopdialect-ptx-launch", "version": 1, "kernels": [k]}


TMAP = {"kind": "tensor_map", "arg": 0, "data_type": "FLOAT16", "global_dims": [8192, 8192],
        "global_strides": [16384], "box_dims": [64, 128], "element_strides": [1, 1],
        "interleave": "NONE", "swizzle": "128B", "l2_promotion": "L2_256B", "oob_fill": "NONE"}


@pytest.mark.parametrize("change, message", [
    ({"version": 2}, "version 1"),
    ({"kernel": {"block": [0, 1, 1]}}, "block must be three positive"),
    ({"kernel": {"grid": [1, 1, 1]}}, "one of dispatch, persistent"),
    ({"param": {"kind": "grid", "dim": "w"}}, "grid param 1 has dim 'w'"),
    ({"kernel": {"dynamic_shared_bytes": -1}}, "dynamic_shared_bytes"),
    ({"param": {"kind": "constant", "arg": 0}}, "unknown kind 'constant'"),
    ({"param": {"kind": "scalar", "arg": 0, "dtype": "f16"}}, "scalar param 1 must name a scalar"),
    ({"param": {"kind": "pointer", "arg": 5}}, "names argument 5 of 2"),
    # cuTensorMapEncodeTiled's documented requirements
    ({"tmap": {"data_type": "FLOAT8"}}, "data_type 'FLOAT8'"),
    ({"tmap": {"global_dims": [8192] * 6, "global_strides": [16384] * 5, "box_dims": [8] * 6,
               "element_strides": [1] * 6}}, "rank 6 is not 1..5"),
    ({"tmap": {"global_strides": [16383]}}, "multiples of 16"),
    ({"tmap": {"global_strides": []}}, "needs 1 global_strides"),
    ({"tmap": {"box_dims": [64, 257]}}, "box_dims [64, 257] must be in 1..256"),
    ({"tmap": {"element_strides": [1, 9]}}, "element_strides"),
    ({"tmap": {"box_dims": [4, 128], "swizzle": "NONE"}}, "8 bytes is not a multiple of 16"),
    ({"tmap": {"box_dims": [128, 128]}}, "exceeds the 128B swizzle span"),
    ({"tmap": {"interleave": "32B"}}, "interleaved layout needs rank >= 3"),
])
def test_parse_launch_rejects(change, message):
    params = [dict(TMAP), {"kind": "pointer", "arg": 1}]
    d = _desc(params)
    if "version" in change:
        d["version"] = change["version"]
    d["kernels"][0].update(change.get("kernel", {}))
    if "param" in change:
        params[1] = change["param"]
    params[0].update(change.get("tmap", {}))
    with pytest.raises(LaunchError) as e:
        parse_launch(d)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_encode_args_are_the_driver_parameters():
    (k,) = parse_launch(_desc([TMAP, {"kind": "pointer", "arg": 1}])).values()
    assert encode_args(k.params[0], 0x7F0000001000) == {
        "tensorDataType": "FLOAT16", "tensorRank": 2, "globalAddress": 0x7F0000001000,
        "globalDim": [8192, 8192], "globalStrides": [16384], "boxDim": [64, 128],
        "elementStrides": [1, 1], "interleave": "NONE", "swizzle": "128B",
        "l2Promotion": "L2_256B", "oobFill": "NONE"}
    with pytest.raises(LaunchError, match="not 16-byte aligned"):
        encode_args(k.params[0], 0x7F0000001008)


def test_param_bytes_layout():
    (k,) = parse_launch(_desc([{"kind": "pointer", "arg": 1}, TMAP])).values()
    tm = bytes(range(128))
    assert param_bytes(k, [0x1000, 0xDEADBEEF00], {1: tm}) == [
        (0xDEADBEEF00).to_bytes(8, "little"), tm]
    with pytest.raises(LaunchError, match="128 bytes"):
        param_bytes(k, [0, 0], {1: b"short"})


def test_persistent_launch_grid_and_grid_params():
    params = [TMAP, {"kind": "pointer", "arg": 1}, {"kind": "grid", "dim": "x"},
              {"kind": "grid", "dim": "y"}]
    (k,) = parse_launch(_desc(params, grid="persistent")).values()
    # one CTA per multiprocessor, fewer when there are fewer tiles; the tiles come as params
    assert k.launch_grid((32, 64, 1), 132) == (132, 1, 1)
    assert k.launch_grid((3, 2, 1), 132) == (6, 1, 1)
    tm = bytes(128)
    assert param_bytes(k, [0x1000, 0x2000], {0: tm}, (32, 64, 1)) == [
        tm, (0x2000).to_bytes(8, "little"), (32).to_bytes(8, "little"), (64).to_bytes(8, "little")]
    with pytest.raises(LaunchError, match="2-D grid of tiles; got a dispatch of 4x4x2"):
        k.launch_grid((4, 4, 2), 132)
    (d,) = parse_launch(_desc([{"kind": "pointer", "arg": 1}])).values()
    assert d.launch_grid((4, 4, 2), 132) == (4, 4, 2)


# ---- the CUDA device against a mocked driver ---------------------------------------------


class FakeDriver:
    """cuda.bindings.driver's enums and integer types, with recording fake functions."""

    def __init__(self, real):
        self.real, self.calls, self.mem, self.next_ptr = real, [], {}, 0x7F0000000000
        for name in ("CUresult", "CUfunction_attribute", "CUtensorMapDataType",
                     "CUtensorMapInterleave", "CUtensorMapSwizzle", "CUtensorMapL2promotion",
                     "CUtensorMapFloatOOBfill", "cuuint32_t", "cuuint64_t", "CUdevice_attribute"):
            setattr(self, name, getattr(real, name))
        ok = real.CUresult.CUDA_SUCCESS
        simple = {"cuInit": (ok,), "cuDeviceGet": (ok, "dev0"),
                  "cuDevicePrimaryCtxRetain": (ok, "ctx"), "cuCtxSetCurrent": (ok,),
                  "cuStreamCreate": (ok, "stream"), "cuModuleLoadData": (ok, "mod"),
                  "cuModuleGetFunction": (ok, "fn"), "cuFuncSetAttribute": (ok,),
                  "cuStreamSynchronize": (ok,), "cuMemFree": (ok,), "cuModuleUnload": (ok,),
                  "cuStreamDestroy": (ok,), "cuDevicePrimaryCtxRelease": (ok,),
                  "cuDeviceGetAttribute": (ok, 132)}
        for name, result in simple.items():
            setattr(self, name, self._recorder(name, result))

    def _recorder(self, name, result):
        def call(*args):
            self.calls.append((name, args))
            return result
        return call

    def cuMemAlloc(self, n):
        self.calls.append(("cuMemAlloc", (n,)))
        ptr, self.next_ptr = self.next_ptr, self.next_ptr + ((n + 255) // 256) * 256
        return self.real.CUresult.CUDA_SUCCESS, ptr

    def cuMemcpyHtoD(self, dst, src, n):
        self.mem[dst] = ctypes.string_at(src, n)
        return (self.real.CUresult.CUDA_SUCCESS,)

    def cuMemcpyDtoH(self, dst, src, n):
        ctypes.memmove(dst, self.mem[src], n)
        return (self.real.CUresult.CUDA_SUCCESS,)

    def cuTensorMapEncodeTiled(self, *args):
        self.calls.append(("cuTensorMapEncodeTiled", args))
        tmap = self.real.CUtensorMap()
        ctypes.memmove(tmap.getPtr(), bytes(range(128, 256)), 128)  # a recognizable pattern
        return self.real.CUresult.CUDA_SUCCESS, tmap

    def cuLaunchKernel(self, *args):
        params = ctypes.cast(args[9], ctypes.POINTER(ctypes.c_void_p))
        self.launched = args, [params[i] for i in range(len(self.sizes))]
        self.param_values = [ctypes.string_at(params[i], n) for i, n in enumerate(self.sizes)]
        return (self.real.CUresult.CUDA_SUCCESS,)


@pytest.fixture
def fake_driver(monkeypatch):
    from cuda.bindings import driver as real  # the [cuda] extra is a test dependency

    fake = FakeDriver(real)
    monkeypatch.setattr(cuda_mod, "_driver", lambda: fake)
    return fake


def test_cuda_launch_passes_device_addresses(fake_driver):
    dev = cuda_mod.CudaDevice()
    prog = dev.compile(parsed.parse_file(GEMM_F16))
    name, (mod_image,) = next(c for c in fake_driver.calls if c[0] == "cuModuleLoadData")
    assert mod_image == prog.binary.encode() + b"\0" and ".entry gemm_f16(" in prog.binary
    assert not any(c[0] == "cuFuncSetAttribute" for c in fake_driver.calls)  # no dynamic smem
    arrays = [np.arange(6, dtype=np.float16), np.ones(3, np.float32), np.zeros(4, np.float32)]
    bufs = [dev.upload(a) for a in arrays]
    assert fake_driver.mem[bufs[1]] == arrays[1].tobytes()
    fake_driver.sizes = [8, 8, 8]
    dev.launch(prog, "gemm_f16", bufs, (2, 3, 1))
    args, _ = fake_driver.launched
    assert args[:9] == ("fn", 2, 3, 1, 128, 1, 1, 0, "stream") and args[10] == 0
    assert [struct.unpack("<Q", v)[0] for v in fake_driver.param_values] == bufs
    assert np.array_equal(dev.download(bufs[0], arrays[0]), arrays[0])
    dev.close()


def test_cuda_tensor_map_and_dynamic_shared_memory(fake_driver):
    real = fake_driver.real
    dev = cuda_mod.CudaDevice()
    prog = dev.load(".version 8.0", _desc([{"kind": "pointer", "arg": 1}, TMAP],
                                          dynamic_shared_bytes=197632))
    assert ("cuFuncSetAttribute", ("fn", real.CUfunction_attribute.
                                   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 197632)
            ) in fake_driver.calls
    a = dev.upload(np.zeros((4, 8), np.float16))
    c = dev.upload(np.zeros((4, 8), np.float32))
    fake_driver.sizes = [8, 128]
    dev.launch(prog, "k", [a, c], (64, 32, 1))
    (args,) = [c_[1] for c_ in fake_driver.calls if c_[0] == "cuTensorMapEncodeTiled"]
    # cuTensorMapEncodeTiled(tensorDataType, tensorRank, globalAddress, globalDim,
    #   globalStrides, boxDim, elementStrides, interleave, swizzle, l2Promotion, oobFill)
    assert args[0] == real.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16
    assert args[1:3] == (2, a)
    assert [int(x) for x in args[3]] == [8192, 8192] and all(
        isinstance(x, real.cuuint64_t) for x in args[3] + args[4])
    assert [int(x) for x in args[4]] == [16384]
    assert [int(x) for x in args[5]] == [64, 128] and [int(x) for x in args[6]] == [1, 1]
    assert all(isinstance(x, real.cuuint32_t) for x in args[5] + args[6])
    assert args[7:] == (real.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                        real.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
                        real.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        real.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    launch_args, _ = fake_driver.launched
    assert launch_args[1:8] == (64, 32, 1, 128, 1, 1, 197632)
    assert fake_driver.param_values == [struct.pack("<Q", c), bytes(range(128, 256))]


def test_cuda_driver_error_is_one_line(fake_driver):
    real = fake_driver.real
    fake_driver.cuModuleLoadData = lambda image: (real.CUresult.CUDA_ERROR_INVALID_PTX, None)
    fake_driver.cuGetErrorName = lambda err: (real.CUresult.CUDA_SUCCESS,
                                              b"CUDA_ERROR_INVALID_PTX")
    dev = cuda_mod.CudaDevice()
    with pytest.raises(DeviceError, match=r"^<device>: error: cuModuleLoadData: "
                                          r"CUDA_ERROR_INVALID_PTX$"):
        dev.load("garbage", _desc([{"kind": "pointer", "arg": 0}]))


def test_cuda_no_gpu(fake_driver):
    fake_driver.cuInit = lambda flags: (fake_driver.real.CUresult.CUDA_ERROR_NO_DEVICE,)
    with pytest.raises(DeviceError, match="no CUDA GPU found"):
        cuda_mod.CudaDevice()


# ---- no driver here: one line, exit 1 ----------------------------------------------------


@pytest.mark.parametrize("grid", [["--grid", "2,2,1", "--check"], []])
@pytest.mark.parametrize("device, pattern", [
    ("cuda", r"no CUDA (driver|GPU) found"),
    ("vulkan", r"no Vulkan (loader|driver|GPU) found|lacks"),
])
def test_coop_run_without_a_gpu_is_one_line(device, pattern, grid):
    r = tool_processes.run(["coop-run", GEMM_F16, "--device", device, *grid], text=True, cwd=ROOT)
    if r.returncode == 0:  # a machine with this GPU: then the check must have passed
        assert "check: PASS" in r.stdout
        return
    if not grid and "--grid" in r.stderr:  # a machine with this GPU, run without a grid
        pattern = r"'func.func' op give the workgroups to dispatch with --grid X,Y,Z"
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert re.match(rf"^{re.escape(GEMM_F16)}:13:1: error: ({pattern})", lines[0]), lines[0]


# ---- Vulkan: the feature a module needs, by name -----------------------------------------


def test_missing_vulkan_features_are_named():
    from coopdialect.spirv.requirements import derive_requirements
    from coopdialect.spirv.target import find_spirv_module

    module = parsed.parse_file(str(ROOT / "examples" / "softmax_rows.mlir"))
    api.run_pipeline(module, "convert-coop-to-spirv")
    req = derive_requirements(find_spirv_module(module))
    everything = {"vulkan12": {"vulkanMemoryModel": True},
                  "cooperative_matrix_khr": {"cooperativeMatrix": True},
                  "cooperative_matrix2_nv": {"cooperativeMatrixReductions": True,
                                             "cooperativeMatrixPerElementOperations": True,
                                             "cooperativeMatrixTensorAddressing": True}}
    exts = ["VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix2"]
    assert missing_features(req.capabilities, req.extensions, everything, exts) == []
    no_reduce = {**everything, "cooperative_matrix2_nv": {
        "cooperativeMatrixPerElementOperations": True, "cooperativeMatrixTensorAddressing": True}}
    assert missing_features(req.capabilities, req.extensions, no_reduce, exts) == [
        "Vulkan feature VkPhysicalDeviceCooperativeMatrix2FeaturesNV::cooperativeMatrixReductions"
        " (for capability CooperativeMatrixReductionsNV)"]
    assert missing_features(req.capabilities, req.extensions, everything, exts[:1])[:2] == [
        "device extension VK_NV_cooperative_matrix2 (for SPV_NV_cooperative_matrix2)",
        "device extension VK_NV_cooperative_matrix2 (for SPV_NV_tensor_addressing)"]


def test_vulkan_device_refuses_before_dispatch(monkeypatch):
    from coopdialect.runtime import vulkan, vulkan_ctypes

    class Ctx:  # a device with KHR cooperative matrices but no coopmat2
        enabled_extensions = ["VK_KHR_cooperative_matrix"]
        enabled_features = {"vulkan11": {"storageBuffer16BitAccess": True},
                            "vulkan12": {"vulkanMemoryModel": True, "shaderFloat16": True},
                            "cooperative_matrix_khr": {"cooperativeMatrix": True}}

        def __init__(self, validation=None):
            pass

        def device_info(self):
            return {"name": "Fake GPU"}

        def run_compute(self, *a, **k):
            raise AssertionError("dispatched a module the device cannot run")

        def close(self):
            pass

    monkeypatch.setattr(vulkan_ctypes, "VulkanContext", Ctx)
    path = str(ROOT / "examples" / "softmax_rows.mlir")
    bufs = [np.zeros((64, 16), np.float32), np.zeros((64, 16), np.float32),
            np.zeros((32, 8), np.float32)]
    with pytest.raises(DeviceError) as e:
        run_kernel(parsed.parse_file(path), "softmax_rows", bufs, (1, 4, 1), vulkan.VulkanDevice())
    text = str(e.value)
    assert text.startswith(f"{path}:34:1: error: the Vulkan device (Fake GPU) lacks device "
                           "extension VK_NV_cooperative_matrix2") and "\n" not in text


# ---- verdicts ------------------------------------------------------------------------------


def test_verdict_bit_exact_and_ulps():
    want = np.array([1.0, 2.0, -3.0, 0.5], np.float32)
    got = want.copy()
    assert compare("C", "f32[4]", got, want).line() == "%C f32[4]: bit-exact"
    got[1] = np.nextafter(np.float32(2.0), np.float32(3.0))      # 1 ulp of 2.0
    got[2] = np.float32(-3.0) - 2 * np.spacing(np.float32(3.0))  # 2 ulp of -3.0
    v = compare("C", "f32[4]", got, want)
    assert (v.differing, v.max_ulp, v.ok) == (2, 2.0, False)
    assert v.line().startswith("%C f32[4]: MISMATCH: 2/4 elements differ, max 2 ulp")
    assert compare("C", "f32[4]", got, want, tolerance_ulp=3).ok
    h = np.array([1.0, 1024.0], np.float16)
    hg = h.copy()
    hg[1] = np.float16(1025.0)          # f16 spacing at 1024 is 1: one ulp
    assert compare("H", "f16[2]", hg, h).max_ulp == 1.0
    b = np.array([1.0, 256.0], ml_dtypes.bfloat16)
    bg = np.array([1.0, 258.0], ml_dtypes.bfloat16)  # bf16 spacing at 256 is 2: one ulp
    assert compare("B", "bf16[2]", bg, b).max_ulp == 1.0
    z = compare("Z", "f32[1]", np.array([-0.0], np.float32), np.array([0.0], np.float32))
    assert z.differing == 1  # bit patterns, not values


def test_verdict_integers_and_summary():
    want = np.array([1, -5, 2**31 - 1], np.int32)
    got = np.array([1, 0, 2**31 - 1], np.int32)
    v = compare("C", "si32[3]", got, want, tolerance_ulp=3)  # no tolerance for integers
    assert not v.ok and v.line() == ("%C si32[3]: MISMATCH: 1/3 elements differ, "
                                     "max abs diff 5")
    ok = compare("A", "si32[3]", want, want)
    assert summary([ok, v]) == "check: FAIL (1 of 2 buffers differ from the interpreter)"
    assert summary([ok, ok]) == "check: PASS (all 2 buffers bit-exact)"


# ---- the interpreter device and the shared run -------------------------------------------


def test_interp_device_with_pipeline_checks_against_numpy():
    path = str(ROOT / "examples" / "gemm_s8.mlir")
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    bt = rng.integers(-128, 128, (64, 128)).astype(np.int8)
    c = rng.integers(-2**31, 2**31, (64, 64), dtype=np.int64).astype(np.int32)
    want = (c.astype(np.int64) + a.astype(np.int64) @ bt.T.astype(np.int64))
    want = ((want + 2**31) % 2**32 - 2**31).astype(np.int32)  # KHR: wraps to 32 bits
    bufs = [a.copy(), bt.copy(), c.copy()]
    report = api.run_kernel(parsed.parse_file(path), "gemm_s8", bufs, (4, 2, 1),
                            pipeline="legalize-coop-sizes{target=h200-vulkan}", check=True)
    assert np.array_equal(bufs[2], want)
    assert [v.exact for v in report.verdicts] == [True] * 3 and report.passed


def test_gemm_flops_from_shapes():
    def flops(name):
        m = parsed.parse_file(str(ROOT / "examples" / f"{name}.mlir"))
        return gemm_flops(next(op for op in m.ops if isinstance(op, func.FuncOp)))

    assert flops("gemm_f16") == 2 * 128 * 128 * 256          # A 128x256, B 256x128
    assert flops("gemm_s8") == 2 * 64 * 64 * 128             # B given transposed (N x K)
    assert flops("sparse_gemm_f16") == 2 * 256 * 256 * 256   # A compressed (M x K/2)
    assert flops("conv_patch_clamped") is None


def test_unknown_device():
    # an argument value out of range: ValueError with a clear message (api docstring)
    with pytest.raises(ValueError, match="device must be interp, cuda or vulkan, got 'tpu'"):
        api.run_kernel(parsed.parse_file(GEMM_F16), "gemm_f16", [], (1, 1, 1), device="tpu")


def test_driver_functions_exist_in_cuda_bindings():
    # every driver function the CUDA device calls exists in cuda.bindings under that name
    from cuda.bindings import driver as real

    used = set(re.findall(r'_call\(\s*"(cu\w+)"', (ROOT / "coopdialect/runtime/cuda.py")
                          .read_text()))
    used |= set(re.findall(r"self\.cu\.(cu\w+)\(", (ROOT / "coopdialect/runtime/cuda.py")
                           .read_text()))
    assert len(used) > 15 and all(hasattr(real, n) for n in used), sorted(
        n for n in used if not hasattr(real, n))


def test_vulkan_device_dispatches_entry_point_with_buffers_in_binding_order(monkeypatch):
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
            assert push_constants is None  # gemm_f16 has no scalar arguments
            calls.append((spv, [b.copy() for b in buffers], grid, entry))
            return [b + 1 for b in buffers]  # what a dispatch would have written

        def close(self):
            pass

    monkeypatch.setattr(vulkan_ctypes, "VulkanContext", Ctx)
    bufs = [np.ones((128, 256), np.float16), np.ones((256, 128), np.float16),
            np.zeros((128, 128), np.float32)]
    report = run_kernel(parsed.parse_file(GEMM_F16), "gemm_f16", bufs, (2, 2, 1),
                        vulkan.VulkanDevice())
    ((spv, sent, grid, entry),) = calls
    assert struct.unpack("<I", spv[:4])[0] == 0x07230203  # the SPIR-V magic number
    assert grid == (2, 2, 1) and entry == "gemm_f16"
    assert [s.shape for s in sent] == [(128, 256), (256, 128), (128, 128)]
    assert np.array_equal(bufs[2], np.ones((128, 128), np.float32))  # results written back
    assert report.device == "vulkan" and report.verdicts is None


def test_pipeline_executable_structs_follow_the_c_layout():
    """VK_KHR_pipeline_executable_properties structs as the C ABI lays out vk.xml's members
    (x86-64: pointers and 64-bit members 8-aligned): the driver writes into them."""
    import ctypes

    from coopdialect.runtime import vulkan_ctypes as v

    st = v.VkPipelineExecutableStatisticKHR
    # sType 0, pNext 8, name[256] 16, description[256] 272, format 528, value (union) 536
    assert [getattr(st, f).offset for f in ("pNext", "name", "description", "format", "value")] \
        == [8, 16, 272, 528, 536]
    assert ctypes.sizeof(st) == 544
    pr = v.VkPipelineExecutablePropertiesKHR
    # sType 0, pNext 8, stages 16, name 20, description 276, subgroupSize 532, size 536
    assert [getattr(pr, f).offset for f in ("stages", "name", "description", "subgroupSize")] \
        == [16, 20, 276, 532]
    assert ctypes.sizeof(pr) == 536
    assert v.VkPipelineExecutableInfoKHR.executableIndex.offset == 24
    assert "VK_KHR_pipeline_executable_properties" in v.WANTED_DEVICE_EXTENSIONS
