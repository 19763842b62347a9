"""The CUDA device: PTX from convert-coop-to-ptx, run through the driver API of NVIDIA's
`cuda-bindings` (the `[cuda]` extra: `pip install '.[cuda]'` in a clone; docs/gpu.md).

* Context: the primary context of device 0 (`cuDevicePrimaryCtxRetain`), current on this thread.
* Compile: lower, print PTX, load it with the driver JIT (`cuModuleLoadData`); the launch
  description (`coopdialect.ptx.launch.describe`) says how to launch each kernel.
* Launch: `cuLaunchKernel(f, grid, block, dynamic_shared_bytes, stream, kernelParams)` where
  kernelParams is a `void*[]` pointing at each parameter's bytes (cuda_params.param_bytes:
  device addresses, scalar arguments packed by their dtype, CUtensorMaps from
  `cuTensorMapEncodeTiled`, whose host-expression sizes take the scalars' values); a kernel that needs more than
  the default dynamic shared memory gets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first.
* Time: `cuEventRecord` around each launch on the stream, `cuEventElapsedTime` (ms).

Every failing driver call is a DeviceError naming the call and the CUresult
(`cuModuleLoadData: CUDA_ERROR_INVALID_PTX`); no driver / no GPU are their own lines.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from coopdialect.runtime.cuda_params import (encode_args, param_bytes, parse_launch, repack_plan,
                                             repacked)
from coopdialect.runtime.device import Device, DeviceError, Program, lower


def _driver():
    """cuda.bindings.driver, or DeviceError when the package is not installed."""
    try:
        from cuda.bindings import driver
    except ImportError:
        raise DeviceError("no CUDA bindings installed (pip install cuda-bindings, or "
                          "pip install '.[cuda]' in a clone; docs/gpu.md)") from None
    except Exception as e:  # noqa: BLE001 - a broken install is one line too
        raise DeviceError(f"cannot load cuda-bindings ({type(e).__name__}: {e})") from None
    return driver


class CudaDevice(Device):
    """Device 0 of the CUDA driver (see the module docstring). Raises DeviceError `no CUDA
    driver found` (libcuda cannot be loaded) or `no CUDA GPU found` (CUDA_ERROR_NO_DEVICE)."""

    name = "cuda"
    default_pipeline = "convert-coop-to-ptx"

    def __init__(self, ordinal: int = 0):
        self.cu = cu = _driver()
        self._modules, self._allocs, self.ctx = [], [], None
        self._scratch: dict[tuple[int, int], object] = {}  # repack buffers (_repack)
        try:
            (err,) = cu.cuInit(0)
        except Exception as e:  # noqa: BLE001 - cuda-pathfinder raises when libcuda is absent
            raise DeviceError(f"no CUDA driver found (libcuda.so.1 cannot be loaded: "
                              f"{type(e).__name__})") from None
        if err == cu.CUresult.CUDA_ERROR_NO_DEVICE:
            raise DeviceError("no CUDA GPU found")
        if err == cu.CUresult.CUDA_ERROR_STUB_LIBRARY:
            raise DeviceError("no CUDA driver found (only the CUDA toolkit's stub libcuda)")
        self._check("cuInit", err)
        self.device = self._call("cuDeviceGet", ordinal)
        self.ctx = self._call("cuDevicePrimaryCtxRetain", self.device)
        self._call("cuCtxSetCurrent", self.ctx)
        self.stream = self._call("cuStreamCreate", 0)
        # a persistent kernel launches one CTA per multiprocessor (KernelLaunch.launch_grid)
        self.multiprocessors = int(self._call(
            "cuDeviceGetAttribute",
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self.device))

    # ---- driver calls ------------------------------------------------------------------

    def _check(self, call: str, err) -> None:
        if err != self.cu.CUresult.CUDA_SUCCESS:
            _, name = self.cu.cuGetErrorName(err)
            text = name.decode() if isinstance(name, bytes) else str(err)
            raise DeviceError(f"{call}: {text}")

    def _call(self, call: str, *args):
        """`cu.<call>(*args)`, checked; returns the result values (one, a tuple, or None)."""
        res = getattr(self.cu, call)(*args)
        self._check(call, res[0])
        rest = res[1:]
        return None if not rest else rest[0] if len(rest) == 1 else rest

    # ---- the Device interface ----------------------------------------------------------

    def compile(self, module: ModuleOp, pipeline: str | None = None) -> Program:
        from coopdialect.ptx.launch import describe
        from coopdialect.ptx.printer import emit_ptx

        lowered = lower(module, pipeline, self.default_pipeline)
        return self.load(emit_ptx(lowered), describe(lowered))

    def load(self, ptx_text: str, description: dict) -> Program:
        """Load PTX text (driver JIT) whose kernels `description` (a PTX launch description)
        describes; for PTX built elsewhere (a benchmark ships PTX + description)."""
        launches = parse_launch(description)
        mod = self._call("cuModuleLoadData", ptx_text.encode() + b"\0")
        self._modules.append(mod)
        kernels = {}
        for name, launch in launches.items():
            fn = self._call("cuModuleGetFunction", mod, name.encode())
            if launch.dynamic_shared_bytes:
                attr = self.cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                self._call("cuFuncSetAttribute", fn, attr, launch.dynamic_shared_bytes)
            kernels[name] = (fn, launch)
        return Program("cuda", ptx_text, kernels)

    def upload(self, array: np.ndarray) -> int:
        a = np.ascontiguousarray(array)
        ptr = int(self._call("cuMemAlloc", max(a.nbytes, 1)))
        self._allocs.append(ptr)
        if a.nbytes:
            self._call("cuMemcpyHtoD", ptr, a.ctypes.data, a.nbytes)
        return ptr

    def download(self, buffer: int, like: np.ndarray) -> np.ndarray:
        out = np.empty(like.shape, like.dtype)
        if out.nbytes:
            self._call("cuMemcpyDtoH", out.ctypes.data, buffer, out.nbytes)
        return out

    def launch(self, program: Program, kernel: str, args: Sequence[object],
               grid: tuple[int, int, int]) -> None:
        self._launch(program, kernel, args, grid)
        self._call("cuStreamSynchronize", self.stream)

    def time(self, program: Program, kernel: str, args: Sequence[object],
             grid: tuple[int, int, int], reps: int) -> list[float]:
        return self.time_launches([(program, kernel, args, grid)], reps)

    def time_launches(self, launches: Sequence[tuple[Program, str, Sequence[object],
                                                     tuple[int, int, int]]],
                      reps: int) -> list[float]:
        """Seconds of each of `reps` runs of the launches (program, kernel, args, grid) one
        after the other on the device's stream (a split-K product and its reduction, say),
        after one warm-up run; a run includes the copies a misaligned tensor map needs."""
        for launch in launches:  # warm-up
            self.launch(*launch)
        # the parameters (tensor maps encoded on the host) are built once, outside the timed
        # region: only the launches themselves lie between the two events
        prepared = [self._prepare(*launch) for launch in launches]
        start = self._call("cuEventCreate", 0)
        end = self._call("cuEventCreate", 0)
        out = []
        try:
            for _ in range(reps):
                self._call("cuEventRecord", start, self.stream)
                for p in prepared:
                    self._enqueue(*p)
                self._call("cuEventRecord", end, self.stream)
                self._call("cuEventSynchronize", end)
                out.append(self._call("cuEventElapsedTime", start, end) * 1e-3)
        finally:
            self.cu.cuEventDestroy(start)
            self.cu.cuEventDestroy(end)
        return out

    def _launch(self, program: Program, kernel: str, args: Sequence[object],
                grid: tuple[int, int, int]) -> None:
        self._enqueue(*self._prepare(program, kernel, args, grid))

    def _enqueue(self, fn, grid, block, shared, array, holders, copies=()) -> None:
        # `holders` (the parameter bytes `array` points into) are alive until the call returns;
        # cuLaunchKernel copies the parameters
        for desc in copies:  # operands repacked for their tensor maps (cuda_params.Repack)
            self._call("cuMemcpy2DAsync", desc, self.stream)
        self._call("cuLaunchKernel", fn, *grid, *block, shared, self.stream,
                   ctypes.addressof(array), 0)

    def _prepare(self, program: Program, kernel: str, args: Sequence[object],
                 grid: tuple[int, int, int]) -> tuple:
        """cuLaunchKernel's arguments for one launch (tensor maps encoded, parameter bytes
        packed); raises DeviceError for an unknown kernel or arguments the launch description
        does not take."""
        if kernel not in program.kernels:
            raise DeviceError(f"no kernel '{kernel}' in the compiled module "
                              f"(has {', '.join(program.kernels)})")
        fn, launch = program.kernels[kernel]
        launch.scalars(args)  # the argument count
        repacks = {r.param: r for r in repack_plan(launch, args)}
        copies = [self._repack(r) for r in repacks.values()]
        values = param_bytes(launch, list(args), self._tensor_maps(launch, args, repacks),
                             tuple(grid))
        grid = launch.launch_grid(tuple(grid), self.multiprocessors)
        # kernelParams: a void*[] whose entry i points at parameter i's bytes (cuLaunchKernel)
        holders = [ctypes.create_string_buffer(v, len(v)) for v in values]
        array = (ctypes.c_void_p * max(len(holders), 1))(*[ctypes.addressof(h) for h in holders])
        return (fn, tuple(int(g) for g in grid), tuple(launch.block), launch.dynamic_shared_bytes,
                array, holders, copies)

    def _repack(self, r) -> object:
        """The CUDA_MEMCPY2D of repack `r` into a scratch buffer of this device (reused for
        the same size), whose address becomes `r`'s tensor map's."""
        cu = self.cu
        key = (r.param, r.bytes)
        if key not in self._scratch:
            self._scratch[key] = self._call("cuMemAlloc", max(r.bytes, 16))
            self._allocs.append(self._scratch[key])
        dst = int(self._scratch[key])
        desc = cu.CUDA_MEMCPY2D()
        desc.srcMemoryType = cu.CUmemorytype.CU_MEMORYTYPE_DEVICE
        desc.srcDevice = r.src
        desc.srcPitch = r.src_pitch
        desc.dstMemoryType = cu.CUmemorytype.CU_MEMORYTYPE_DEVICE
        desc.dstDevice = dst
        desc.dstPitch = r.pitch
        desc.WidthInBytes = r.width
        desc.Height = r.rows
        return desc

    def _tensor_maps(self, launch, args: Sequence[object], repacks: dict | None = None
                     ) -> dict[int, bytes]:
        out = {}
        repacks = repacks or {}
        for i, p in enumerate(launch.params):
            if p["kind"] != "tensor_map":
                continue
            address = int(args[p["arg"]])
            if i in repacks:  # read the 16-byte-pitched copy (_repack)
                r = repacks[i]
                p, address = repacked(p, r), int(self._scratch[(r.param, r.bytes)])
            a = encode_args(p, address, launch.scalars(args))
            cu = self.cu
            tmap = self._call(
                "cuTensorMapEncodeTiled",
                getattr(cu.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{a['tensorDataType']}"),
                a["tensorRank"], a["globalAddress"],
                [cu.cuuint64_t(d) for d in a["globalDim"]],
                [cu.cuuint64_t(s) for s in a["globalStrides"]],
                [cu.cuuint32_t(b) for b in a["boxDim"]],
                [cu.cuuint32_t(e) for e in a["elementStrides"]],
                getattr(cu.CUtensorMapInterleave, f"CU_TENSOR_MAP_INTERLEAVE_{a['interleave']}"),
                getattr(cu.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{a['swizzle']}"),
                getattr(cu.CUtensorMapL2promotion,
                        f"CU_TENSOR_MAP_L2_PROMOTION_{a['l2Promotion']}"),
                getattr(cu.CUtensorMapFloatOOBfill, f"CU_TENSOR_MAP_FLOAT_OOB_FILL_{a['oobFill']}"))
            out[i] = ctypes.string_at(tmap.getPtr(), 128)
        return out

    def close(self) -> None:
        if self.ctx is None:
            return
        for ptr in self._allocs:
            self.cu.cuMemFree(ptr)
        for mod in self._modules:
            self.cu.cuModuleUnload(mod)
        self._allocs, self._modules, self._scratch = [], [], {}
        self.cu.cuStreamDestroy(self.stream)
        self.cu.cuDevicePrimaryCtxRelease(self.device)
        self.ctx = None
