"""The embedding API: parse, lower, emit and interpret in a few calls.

    from coopdialect import api
    module = api.parse_file("examples/gemm_f16.mlir")
    spv = api.compile_to_spirv(module)                 # bytes of a Vulkan compute module
    ptx = api.compile_to_ptx(api.parse_file(...))      # PTX text for sm_90a
    api.run_kernel(module, "gemm_f16", [A, B, C], grid=(2, 2, 1))   # numpy, in place
    api.run_kernel(module, "gemm_f16", [A, B, C], (2, 2, 1), device="cuda", check=True)
    api.run_kernel(dyn, "gemm_dynamic", [A, B, C, M, N, K])      # scalars; the declared grid
    kernels = api.read_spirv(open("shader.spv", "rb").read(), raise_to_coop=True)  # glslang's output

Errors (docs/diagnostics.md), the same for every function:

* `coopdialect.diagnostics.CoopError` for bad IR or content (syntax, verifier, a pass or emitter
  refusing, a run-time error of the interpreter, a pipeline with nothing to lower). `str(e)` is
  one line, `file:line:col: error: message`; `e.op` is the op (or None), `e.message` the text.
* `TypeError` (clear message) for an argument of the wrong Python type, `ValueError` for an
  argument value out of range (a grid of zero, a subgroup size of 3, an unknown flavor),
  `OSError` for a path that cannot be read.

A function that lowers works on a copy and replaces the module's body only when every pass
succeeded: on an error the module is unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import ParseError

from coopdialect.context import make_context
from coopdialect.errors import CoopError
from coopdialect.diagnostics import LocatingParser, decode_source, format_error, verify_with_locations


def _check_type(name: str, value: object, kinds: type | tuple[type, ...], spelled: str) -> None:
    if not isinstance(value, kinds) or isinstance(value, bool):
        raise TypeError(f"{name} must be {spelled}, got {type(value).__name__}")


def parse(text: str | bytes, name: str = "<string>") -> ModuleOp:
    """Parse and verify IR text (str, or UTF-8 bytes); ops get `name:line:col` locations.

    Raises CoopError (syntax, verifier, not UTF-8, nesting deeper than MAX_NESTING), TypeError."""
    _check_type("text", text, (str, bytes), "IR text (str or bytes)")
    _check_type("name", name, str, "a str")
    name = name or "<string>"  # a location needs a file part
    text = decode_source(text, name)
    try:
        module = LocatingParser(make_context(), text, name).parse_module()
    except ParseError as e:  # xDSL's own str() is several lines with a caret; ours is one
        raise CoopError(None, format_error(e).split(": error: ", 1)[1],
                        where=format_error(e).split(": error: ", 1)[0]) from None
    verify_with_locations(module)
    return module


def parse_file(path: str | os.PathLike) -> ModuleOp:
    """Parse and verify the IR file at `path`. Raises OSError (unreadable), CoopError, TypeError."""
    _check_type("path", path, (str, bytes, os.PathLike), "a path (str, bytes or os.PathLike)")
    name = os.fsdecode(path)
    with open(path, "rb") as f:
        data = f.read()
    return parse(decode_source(data, name), name)


def read_spirv(data: bytes, name: str = "<binary>", raise_to_coop: bool = False) -> ModuleOp:
    """A SPIR-V binary as a module holding its `spirv.module` (validated on reading; ops located at
    `name:0:W`, W the word offset), or, with `raise_to_coop`, its kernels lifted by
    `raise-spirv-to-coop`. A corrupt, invalid or unliftable binary is a CoopError."""
    from coopdialect.errors import CoopError
    from coopdialect.spirv.errors import SpirvReadError
    from coopdialect.spirv.reader import deserialize

    try:
        module = ModuleOp([deserialize(data, file=name)])
    except SpirvReadError as e:
        raise CoopError(None, e.message, where=f"{name}:0:{e.word}") from None
    return run_pipeline(module, "raise-spirv-to-coop") if raise_to_coop else module


def run_pipeline(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Apply a coop-opt pass pipeline (`'pass{k=v},pass'`) to `module`, verifying before and after
    each pass; returns `module`. On any error the module is left as it was.

    Raises CoopError (a bad pipeline is located at `<command line>`), TypeError."""
    from coopdialect.pipeline import apply_pipeline

    _check_type("module", module, ModuleOp, "a builtin.module (ModuleOp)")
    return apply_pipeline(module, pipeline)


def compile_to_spirv(module: ModuleOp, flavor: str = "khr") -> bytes:
    """Lower a coop kernel module (in place) and return the SPIR-V binary (bytes, little-endian
    words). `flavor`: "khr" (SPV_KHR_cooperative_matrix) or "nv" (SPV_NV_cooperative_matrix).

    Raises CoopError (including a module already lowered: nothing to lower), TypeError,
    ValueError (flavor)."""
    from coopdialect.spirv.target import emit_spirv
    from coopdialect.spirv.writer import verified_by_caller

    _check_type("flavor", flavor, str, "a str")
    if flavor not in ("khr", "nv"):
        raise ValueError(f"flavor must be 'khr' or 'nv', got {flavor!r}")
    run_pipeline(module, f"convert-coop-to-spirv{{flavor={flavor}}}")
    with verified_by_caller():  # run_pipeline verified the result, with locations
        return emit_spirv(module)


def compile_to_ptx(module: ModuleOp, target: str = "sm_90a") -> str:
    """Lower a coop kernel module (in place) and return PTX text. `target`: sm_80 ... sm_90a.

    Raises CoopError (including a module already lowered: nothing to lower), TypeError,
    ValueError (target)."""
    from coopdialect.passes.convert_coop_to_ptx import TARGETS
    from coopdialect.ptx.printer import emit_ptx

    _check_type("target", target, str, "a str")
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    run_pipeline(module, f"convert-coop-to-ptx{{target={target}}}")
    return emit_ptx(module)


MAX_INTERPRETED_WORKGROUPS = 1 << 16
"""Most workgroups `run_kernel` interprets in one call (the interpreter runs them one by one)."""


def run_kernel(
    module: ModuleOp,
    kernel: str,
    args: Sequence[np.ndarray | int | float | np.generic],
    grid: tuple[int, int, int] | None = None,
    subgroup_size: int = 32,
    *,
    device: str = "interp",
    pipeline: str | None = None,
    check: bool = False,
    bench: int = 0,
    flops: float | None = None,
):
    """Run `kernel` over `grid` workgroups; the arrays among `args` are updated in place.

    `args`: one per kernel argument, in order: a numpy array of the memref's dtype and shape
    (any size along a `?` dimension) for a memref argument; a Python or numpy number for a
    scalar argument (an integer within the type's range for i32/i64/index, any number for
    f32/f16). `grid`: three positive ints (x, y, z), or None for the grid the kernel declares
    (`coop.grid`, evaluated with its scalar arguments); at most MAX_INTERPRETED_WORKGROUPS
    workgroups in all for the interpreter. `subgroup_size`: a power of two from 1 to 128.
    `device`: "interp" (the interpreter, default), "cuda" or "vulkan" (coopdialect.runtime:
    compile with `pipeline` + the device's conversion, upload, launch, download). `check`
    compares every buffer with the interpreter's on the same inputs, `bench` times that many
    launches. Returns None for a plain interpreter run, else a `coopdialect.runtime.RunReport`
    (`.verdicts`, `.times`, `.lines()`).
    Raises CoopError (no such kernel, buffers of the wrong count/dtype/shape, any run-time error,
    located at the op), DeviceError (a CoopError: the device is missing or lacks a feature),
    TypeError (an argument of the wrong kind), ValueError (a scalar out of its type's range, no
    grid given for a kernel that declares none, a declared grid that evaluates to a count < 1)."""
    from coopdialect.dialects.coop_kernel import check_subgroup_size, dispatch_grid, scalar_value
    from coopdialect.interpreter.kernel import run_kernel as _run

    _check_type("module", module, ModuleOp, "a builtin.module (ModuleOp)")
    _check_type("kernel", kernel, str, "the kernel's name (str)")
    if isinstance(args, np.ndarray | str | bytes) or not isinstance(args, Sequence):
        raise TypeError(f"args must be a list of numpy arrays and numbers (one per kernel "
                        f"argument), got {type(args).__name__}")
    for i, b in enumerate(args):
        if not isinstance(b, np.ndarray | int | float | np.generic) or isinstance(b, bool):
            raise TypeError(f"args[{i}] must be a numpy array (or a number for a scalar "
                            f"argument), got {type(b).__name__}")
    if grid is not None:
        if not isinstance(grid, Sequence) or isinstance(grid, str | bytes):
            raise TypeError(f"grid must be a tuple of three ints (x, y, z), got "
                            f"{type(grid).__name__}")
        if len(grid) != 3:
            raise ValueError(f"grid must have three entries (x, y, z), got {len(grid)}")
        for g in grid:
            if isinstance(g, bool) or not isinstance(g, int | np.integer):
                raise TypeError(f"grid must be three ints, got {type(g).__name__} {g!r}")
        if any(int(g) <= 0 for g in grid):
            raise ValueError(f"grid must be three positive counts, got "
                             f"{tuple(int(g) for g in grid)}")
    if device not in ("interp", "cuda", "vulkan"):
        raise ValueError(f"device must be interp, cuda or vulkan, got {device!r}")
    subgroup_size = check_subgroup_size(subgroup_size)
    found = SymbolTable.lookup_symbol(module, kernel)
    if not isinstance(found, func.FuncOp) or found.is_declaration:
        names = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)]
        raise CoopError(module, f"no func.func @{kernel} with a body in the module (kernels: "
                                f"{', '.join('@' + n for n in names) or 'none'})")
    types = found.function_type.inputs.data
    if len(args) == len(types):  # a wrong count is the interpreter's / runtime's located error
        for i, (t, a) in enumerate(zip(types, args)):
            if not isinstance(a, np.ndarray) and not isinstance(t, MemRefType):
                try:
                    scalar_value(t, a)
                except (TypeError, ValueError) as e:
                    raise type(e)(f"args[{i}] (%{found.args[i].name_hint or i}: {t}): {e}") from None
    if grid is None:
        if len(args) != len(types):
            raise ValueError(f"@{kernel} takes {len(types)} arguments, got {len(args)}")
        grid = dispatch_grid(found, args)
    grid = tuple(int(g) for g in grid)
    if device == "interp" and grid[0] * grid[1] * grid[2] > MAX_INTERPRETED_WORKGROUPS:
        raise ValueError(f"grid {grid} is more than {MAX_INTERPRETED_WORKGROUPS} workgroups "
                         "(MAX_INTERPRETED_WORKGROUPS)")
    if device == "interp" and not (pipeline or check or bench):
        _run(module, kernel, args, grid, subgroup_size=subgroup_size)
        return None
    from coopdialect.runtime import run_kernel as _run_on

    return _run_on(module, kernel, args, grid, device, pipeline=pipeline, check=check,
                   bench=bench, flops=flops, subgroup_size=subgroup_size)
