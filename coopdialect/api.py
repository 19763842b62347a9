"""The embedding API: parse, lower, emit and interpret in a few calls.

    from coopdialect import api
    module = api.parse_file("examples/gemm_f16.mlir")
    spv = api.compile_to_spirv(module)                 # bytes of a Vulkan compute module
    ptx = api.compile_to_ptx(api.parse_file(...))      # PTX text for sm_90a
    api.run_kernel(module, "gemm_f16", [A, B, C], grid=(2, 2, 1))   # numpy, in place
    api.run_kernel(module, "gemm_f16", [A, B, C], (2, 2, 1), device="cuda", check=True)

Every function raises `coopdialect.diagnostics.CoopError` (or xDSL's ParseError) for bad input; its
`str()` is the one-line `file:line:col: error: ...` diagnostic. `parse_*` verify the module.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from coopdialect.context import make_context
from coopdialect.diagnostics import LocatingParser, verify_with_locations


def parse(text: str, name: str = "<string>") -> ModuleOp:
    """Parse and verify IR text; ops get `name:line:col` locations for diagnostics."""
    module = LocatingParser(make_context(), text, name).parse_module()
    verify_with_locations(module)
    return module


def parse_file(path: str) -> ModuleOp:
    """Parse and verify the IR file at `path`."""
    with open(path) as f:
        return parse(f.read(), path)


def run_pipeline(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Apply a coop-opt pass pipeline (`'pass{k=v},pass'`) in place; verifies after each pass."""
    from xdsl.passes import PassPipeline

    from coopdialect.passes import get_all_passes

    ctx = make_context()
    passes = PassPipeline.parse_spec(
        get_all_passes(), pipeline, lambda _p, m, _n: verify_with_locations(m)
    )
    passes.apply(ctx, module)
    return module


def compile_to_spirv(module: ModuleOp, flavor: str = "khr") -> bytes:
    """Lower a coop kernel module (in place) and return the SPIR-V binary (bytes, little-endian words)."""
    from coopdialect.spirv.target import emit_spirv
    from coopdialect.spirv.writer import verified_by_caller

    run_pipeline(module, f"convert-coop-to-spirv{{flavor={flavor}}}")
    with verified_by_caller():  # run_pipeline verified the result, with locations
        return emit_spirv(module)


def compile_to_ptx(module: ModuleOp, target: str = "sm_90a") -> str:
    """Lower a coop kernel module (in place) and return PTX text."""
    from coopdialect.ptx.printer import emit_ptx

    run_pipeline(module, f"convert-coop-to-ptx{{target={target}}}")
    return emit_ptx(module)


def run_kernel(
    module: ModuleOp,
    kernel: str,
    buffers: Sequence[np.ndarray],
    grid: tuple[int, int, int],
    subgroup_size: int = 32,
    *,
    device: str = "interp",
    pipeline: str | None = None,
    check: bool = False,
    bench: int = 0,
    flops: float | None = None,
):
    """Run `kernel` over `grid` workgroups; `buffers` (one per memref argument) are updated in place.

    `device`: "interp" (the interpreter, default), "cuda" or "vulkan" (coopdialect.runtime:
    compile with `pipeline` + the device's conversion, upload, launch, download). `check`
    compares every buffer with the interpreter's on the same inputs, `bench` times that many
    launches. Returns None for a plain interpreter run, else a `coopdialect.runtime.RunReport`
    (`.verdicts`, `.times`, `.lines()`). Raises DeviceError (one line) when the device is
    missing or lacks a feature.
    """
    if device == "interp" and not (pipeline or check or bench):
        from coopdialect.interpreter.kernel import run_kernel as _run

        _run(module, kernel, buffers, grid, subgroup_size=subgroup_size)
        return None
    from coopdialect.runtime import run_kernel as _run_on

    return _run_on(module, kernel, buffers, grid, device, pipeline=pipeline, check=check,
                   bench=bench, flops=flops, subgroup_size=subgroup_size)
