"""The embedding API: parse, lower, emit and interpret in a few calls.

    from coopdialect import api
    module = api.parse_file("examples/gemm_f16.mlir")
    spv = api.compile_to_spirv(module)                 # bytes of a Vulkan compute module
    ptx = api.compile_to_ptx(api.parse_file(...))      # PTX text for sm_90a
    api.run_kernel(module, "gemm_f16", [A, B, C], grid=(2, 2, 1))   # numpy, in place
    kernels = api.read_spirv(open("shader.spv", "rb").read(), raise_to_coop=True)  # glslang's output

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


def read_spirv(data: bytes, name: str = "<binary>", raise_to_coop: bool = False) -> ModuleOp:
    """A SPIR-V binary as a module holding its `spirv.module` (validated on reading; ops located at
    `name:0:W`, W the word offset), or, with `raise_to_coop`, its kernels lifted by
    `raise-spirv-to-coop`. A corrupt, invalid or unliftable binary is a CoopError."""
    from coopdialect.diagnostics import CoopError
    from coopdialect.spirv.errors import SpirvReadError
    from coopdialect.spirv.reader import deserialize

    try:
        module = ModuleOp([deserialize(data, file=name)])
    except SpirvReadError as e:
        raise CoopError(None, e.message, where=f"{name}:0:{e.word}") from None
    return run_pipeline(module, "raise-spirv-to-coop") if raise_to_coop else module


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
) -> None:
    """Interpret `kernel` over `grid` workgroups; `buffers` (one per memref argument) are updated in place."""
    from coopdialect.interpreter.kernel import run_kernel as _run

    _run(module, kernel, buffers, grid, subgroup_size=subgroup_size)
