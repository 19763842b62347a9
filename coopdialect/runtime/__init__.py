"""Run compiled kernels on a GPU: one small interface (`Device`), three devices.

    from coopdialect.runtime import open_device, run_kernel
    report = run_kernel(module, "gemm_f16", [A, B, C], (2, 2, 1), device="cuda", check=True)
    print("\\n".join(report.lines()))          # per-buffer verdicts against the interpreter

    with open_device("vulkan") as dev:        # the interface itself
        prog = dev.compile(module)            # lowers a clone (convert-coop-to-spirv)
        bufs = [dev.upload(a) for a in (A, B, C)]
        dev.launch(prog, "gemm_f16", bufs, (2, 2, 1))
        C2 = dev.download(bufs[2], C)
        seconds = dev.time(prog, "gemm_f16", bufs, (2, 2, 1), reps=20)

Devices: `interp` (the numpy interpreter, always there), `cuda` (PTX through the driver JIT,
the `[cuda]` extra: `pip install '.[cuda]'` in a clone), `vulkan` (SPIR-V through libvulkan.so.1
with ctypes; no Python package). See docs/runtime.md; docs/gpu.md says what a GPU machine needs.
"""

from coopdialect.runtime.device import Device, DeviceError, Program
from coopdialect.runtime.run import DEVICES, RunReport, open_device, run_kernel

__all__ = ["DEVICES", "Device", "DeviceError", "Program", "RunReport", "open_device", "run_kernel"]
