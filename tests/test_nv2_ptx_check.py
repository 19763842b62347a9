"""tests/gpu/test_gpu_nv2_ptx.py without a GPU: each of its cases through the real CudaDevice
(lowering to PTX, launch description, cuModuleLoadData, uploads, kernel parameters,
cuLaunchKernel, downloads) on a fake CUDA driver whose "GPU" is the interpreter, compared as
the GPU test compares (tensor_cases.run_on, tensor_cases.mismatch).

The fake's cuLaunchKernel reads the buffer addresses from kernelParams, takes the buffers' bytes
from its memory and interprets the module as it stood just before convert-coop-to-ptx (after
the case's pipeline, e.g. fold-tensor-views); so a case fails here when the check's plumbing is
wrong (inputs, grids, kernels, buffers, expected outputs) or the PTX lowering refuses the case,
not when the PTX computes wrong (that is the H200's job, and tests/test_nv2_ptx.py's
simulator's). Every loaded PTX module is also assembled by ptxas (sm_90a, no output allowed).

    NV2_CHECK_COUNT=60 python -m pytest tests/test_nv2_ptx_check.py   # all 80 cases (~1 min)

By default `tensor_cases.cases("cuda", 5)`: the examples, 5 random cases (random_000..004, the
GPU test's first five draws) and the decode cases (on other data than the GPU test's, which
draws them after 60 random cases).
"""

from __future__ import annotations

import ctypes
import os
import struct
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType
from xdsl.traits import SymbolTable

import tensor_cases
from coopdialect.interpreter.common import numpy_dtype
from coopdialect.interpreter.kernel import run_kernel as interpret
from coopdialect.runtime import cuda as cuda_mod
from coopdialect.runtime.device import lower
from test_ptx_ptxas import _ptxas, find_ptxas
from test_runtime import FakeDriver

class InterpretingDriver(FakeDriver):
    """FakeDriver whose modules are the coop IR that was lowered to them and whose kernels
    run on the interpreter over the bytes in its memory."""

    def __init__(self, real, ptx_dir: Path):
        super().__init__(real)
        del self.cuModuleLoadData, self.cuModuleGetFunction  # FakeDriver's recorders: ours below
        self.ptxas, self.ptx_dir = find_ptxas(), ptx_dir
        self.pending, self.modules, self.launches, self.bad_ptx = None, {}, 0, []

    def cuModuleLoadData(self, image: bytes):
        handle = len(self.modules)
        self.modules[handle] = self.pending  # the module lower() gave for this image
        p = self.ptx_dir / f"m{handle}.ptx"
        p.write_bytes(image.rstrip(b"\0"))
        rc, out = _ptxas(self.ptxas, p)
        if rc or out:
            self.bad_ptx.append(f"module {handle}: {out}")
        return self.real.CUresult.CUDA_SUCCESS, handle

    def cuModuleGetFunction(self, mod, name: bytes):
        return self.real.CUresult.CUDA_SUCCESS, (mod, name.decode())

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        module = self.modules[fn[0]]
        kernel = SymbolTable.lookup_symbol(module, fn[1])
        assert isinstance(kernel, func.FuncOp)
        assert [bx, by, bz] == [int(x) for x in kernel.attributes["coop.workgroup_size"]
                                .get_values()]
        ptrs = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        bufs, addrs = [], []
        for i, a in enumerate(kernel.args):
            assert isinstance(a.type, MemRefType)
            (addr,) = struct.unpack("<Q", ctypes.string_at(ptrs[i], 8))
            shape, dt = tuple(a.type.get_shape()), numpy_dtype(a.type.element_type)
            bufs.append(np.frombuffer(self.mem[addr], dt).reshape(shape).copy())
            addrs.append(addr)
        interpret(module, fn[1], bufs, (gx, gy, gz))
        for addr, b in zip(addrs, bufs):
            self.mem[addr] = b.tobytes()
        self.launches += 1
        return (self.real.CUresult.CUDA_SUCCESS,)


COUNT = int(os.environ.get("NV2_CHECK_COUNT", "5"))
NAMES = tensor_cases.names("cuda", COUNT)


def test_the_cases_are_the_gpu_tests_first_draws() -> None:
    assert len(NAMES) == 8 + COUNT + 12
    assert NAMES == [n for n in tensor_cases.names("cuda")
                     if not n.startswith("random_") or int(n[7:]) < COUNT]


# one test per case, so that parallel workers share them out
@pytest.mark.parametrize("name", NAMES)
def test_case_through_the_cuda_device(monkeypatch, tmp_path: Path, name: str) -> None:
    from cuda.bindings import driver as real  # the [cuda] extra is a test dependency

    fake = InterpretingDriver(real, tmp_path)
    monkeypatch.setattr(cuda_mod, "_driver", lambda: fake)

    def recording_lower(module, pipeline, default):
        fake.pending = lower(module, pipeline, "")  # what the interpreter runs for the PTX
        return lower(module, pipeline, default)

    monkeypatch.setattr(cuda_mod, "lower", recording_lower)
    case = tensor_cases.cases("cuda", COUNT)[name]
    with cuda_mod.CudaDevice() as dev:
        why = tensor_cases.mismatch(case, tensor_cases.run_on(dev, case), "cuda")
    assert why is None, f"{name} ({case.info or case.group}): {why}"
    assert fake.launches == 1 and len(fake.modules) == 1
    assert not fake.bad_ptx, "\n".join(fake.bad_ptx)
