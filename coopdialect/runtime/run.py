"""Run one kernel on a device, optionally check it against the interpreter and time it.

This is what `coop-run --device D [--check] [--bench N]` and `api.run_kernel(..., device=D)` do.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, MemRefType, ModuleOp, SymbolRefAttr
from xdsl.traits import SymbolTable

from coopdialect.dialects.coop_kernel import dispatch_grid, scalar_value
from coopdialect.errors import CoopError, location_of
from coopdialect.runtime.device import Device, DeviceError
from coopdialect.runtime.verdict import Verdict, compare, summary

DEVICES = ("interp", "cuda", "vulkan")
# Vulkan spec, "Precision and Operation of SPIR-V Instructions": OpFDiv is within 2.5 ULP, every
# other arithmetic op coopdialect emits is correctly rounded (or exact); PTX's div.rn is
# correctly rounded. So a float result may be off by 3 ulp on Vulkan when the kernel divides
# (arith.divf, or coop.fdiv: OpFDiv on cooperative matrices).
VULKAN_FDIV_ULP = 3
GEMM_OPS = ("coop.mul_add", "sparse_mma.mma_sp")


def open_device(name: str, **options) -> Device:
    """A Device by name: `interp` (options: subgroup_size), `cuda` (ordinal), `vulkan`
    (validation). Raises DeviceError for an unknown name or a device that cannot be opened."""
    if name == "interp":
        from coopdialect.runtime.interp import InterpDevice
        return InterpDevice(**options)
    if name == "cuda":
        from coopdialect.runtime.cuda import CudaDevice
        return CudaDevice(**options)
    if name == "vulkan":
        from coopdialect.runtime.vulkan import VulkanDevice
        return VulkanDevice(**options)
    raise DeviceError(f"unknown device '{name}' (one of {', '.join(DEVICES)})")


def documented_ulp(module: ModuleOp, device: str) -> float:
    """The float tolerance that the target's spec allows for `module`'s operations (in ulp)."""
    if device == "vulkan" and any(op.name in ("arith.divf", "coop.fdiv") for op in module.walk()):
        return VULKAN_FDIV_ULP
    return 0


def gemm_flops(fn: func.FuncOp, args: Sequence[object] | None = None) -> float | None:
    """2*M*N*K when the kernel is a GEMM-like product: it multiplies matrices (coop.mul_add,
    sparse_mma.mma_sp), its last 2-D memref argument is C (M x N), another is B (K x N, or N x K
    transposed) and another has M rows (A, dense or 2:4-compressed); else None (pass the count
    yourself). Shapes are the arrays' among `args` (one per kernel argument) when given, which
    a memref of dynamic shape needs, else the memref types'."""
    if not any(op.name in GEMM_OPS for op in fn.walk()):
        return None
    shapes = []
    for i, a in enumerate(fn.args):
        if not isinstance(a.type, MemRefType) or len(a.type.get_shape()) != 2:
            continue
        given = args[i] if args is not None and i < len(args) else None
        shape = tuple(given.shape) if isinstance(given, np.ndarray) else tuple(a.type.get_shape())
        if min(shape) < 0:
            return None
        shapes.append(shape)
    if len(shapes) < 3:
        return None
    m, n = shapes[-1]
    rest = shapes[:-1]
    for bi in range(len(rest) - 1, -1, -1):
        b = rest[bi]
        k = b[0] if b[1] == n else b[1] if b[0] == n else None
        if k is not None and any(s[0] == m for i, s in enumerate(rest) if i != bi):
            return 2.0 * m * n * k
    return None


@dataclass
class RunReport:
    """What a run found: the device, per-buffer verdicts (with --check), launch times in
    seconds (with --bench) and the flop count used for the rate."""

    device: str
    verdicts: list[Verdict] | None = None
    times: list[float] = field(default_factory=list)
    flops: float | None = None

    @property
    def passed(self) -> bool:
        return self.verdicts is None or all(v.ok for v in self.verdicts)

    def lines(self) -> list[str]:
        out = []
        if self.verdicts is not None:
            out += [v.line() for v in self.verdicts] + [summary(self.verdicts)]
        if self.times:
            med = statistics.median(self.times)
            rate = (f", {self.flops / med / 1e12:.4g} TFLOP/s ({self.flops:.4g} flop)"
                    if self.flops else "")
            out.append(f"bench: {self.device} median {med * 1e3:.4f} ms of {len(self.times)} "
                       f"launches (min {min(self.times) * 1e3:.4f}){rate}")
        return out


def find_kernel(module: ModuleOp, kernel: str) -> func.FuncOp:
    fn = SymbolTable.lookup_symbol(module, kernel)
    if not isinstance(fn, func.FuncOp):
        raise CoopError(None, f"no func.func @{kernel} in the module", where="<module>")
    return fn


def kernel_arguments(fn: func.FuncOp, args: Sequence[object]) -> list[object]:
    """`args` checked against `fn`'s arguments: one per argument, a numpy array for a memref
    (copied, C order), a number for a scalar (`coop_kernel.scalar_value`'s value). Raises
    CoopError (on the kernel) for a wrong count or kind, or a scalar out of its type's range."""
    types = fn.function_type.inputs.data
    if len(args) != len(types):
        raise CoopError(fn, f"the kernel takes {len(types)} arguments, {len(args)} were given")
    out: list[object] = []
    for i, (t, a) in enumerate(zip(types, args)):
        if isinstance(t, MemRefType):
            if not isinstance(a, np.ndarray):
                raise CoopError(fn, f"argument {i} ({t}) needs a numpy array, got "
                                    f"{type(a).__name__}")
            out.append(np.array(a, order="C", copy=True))
            continue
        try:
            out.append(scalar_value(t, a))
        except (TypeError, ValueError) as e:
            raise CoopError(fn, f"argument {i} ({t}): {e}") from None
    return out


def _symbols(attr, out: set[str]) -> None:
    if isinstance(attr, SymbolRefAttr):
        out.add(attr.root_reference.data)
    elif isinstance(attr, ArrayAttr):
        for a in attr.data:
            _symbols(a, out)
    elif isinstance(attr, DictionaryAttr):
        for a in attr.data.values():
            _symbols(a, out)


def kernel_module(module: ModuleOp, kernel: str) -> ModuleOp:
    """A clone of `module` holding, of its functions, only `kernel` and those it names through
    symbol references (calls, per-element and reduction functions, DecodeFuncs: transitively);
    every other top-level op is kept. What a device compiles for one launch: another kernel of
    the module may need what the device lacks, and a driver compiles no more than is run (the
    H200's Vulkan driver faults compiling one attention kernel beside another in one module,
    not alone). `module` itself is unchanged."""
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    keep, todo = set(), [kernel]
    while todo:
        name = todo.pop()
        if name in keep or name not in funcs:
            continue
        keep.add(name)
        refs: set[str] = set()
        for op in funcs[name].walk():
            for a in (*op.attributes.values(), *op.properties.values()):
                _symbols(a, refs)
        todo += sorted(refs - keep)
    out = module.clone()
    for op in list(out.ops):
        if isinstance(op, func.FuncOp) and op.sym_name.data not in keep:
            out.body.block.erase_op(op)
    return out


def run_kernel(module: ModuleOp, kernel: str, args: Sequence[object],
               grid: tuple[int, int, int] | None = None, device: str | Device = "interp", *,
               pipeline: str | None = None, check: bool = False, bench: int = 0,
               flops: float | None = None, tolerance_ulp: float | None = None,
               subgroup_size: int = 32) -> RunReport:
    """Compile `module`'s `kernel` (`kernel_module`: it and what it calls) for `device`, run it
    over `grid` workgroups on `args` (one per kernel argument: numpy arrays for memrefs, updated
    in place with the device's results; Python or numpy numbers for scalars).

    * `grid`: None for the grid the kernel declares (`coop.grid`, from its scalar arguments).
    * `pipeline`: coop-opt passes run first (the device's conversion is appended when needed).
    * `check`: also interpret the original module on copies of the same inputs and compare
      every buffer (`RunReport.verdicts`; float tolerance `tolerance_ulp`, default
      `documented_ulp`).
    * `bench`: time that many launches (after one warm-up) on copies of the inputs; the rate
      uses `flops` or `gemm_flops`.

    Raises CoopError for bad IR or arguments, DeviceError (located at the kernel) for the
    device's refusals, ValueError for a kernel without a declared grid when `grid` is None."""
    fn = find_kernel(module, kernel)
    where = location_of(fn)
    inputs = kernel_arguments(fn, args)
    grid = tuple(int(g) for g in grid) if grid is not None else dispatch_grid(fn, inputs)
    arrays = [i for i, a in enumerate(inputs) if isinstance(a, np.ndarray)]
    own = isinstance(device, str)
    try:
        dev = open_device(device, **({"subgroup_size": subgroup_size} if device == "interp"
                                     else {})) if own else device
        try:
            report = RunReport(dev.name)
            program = dev.compile(kernel_module(module, kernel), pipeline)
            on_device = [dev.upload(a) if i in arrays else a for i, a in enumerate(inputs)]
            dev.launch(program, kernel, on_device, grid)
            for i in arrays:
                args[i][...] = dev.download(on_device[i], args[i])
            if bench:
                timed = [dev.upload(a) if i in arrays else a for i, a in enumerate(inputs)]
                report.times = dev.time(program, kernel, timed, grid, bench)
                report.flops = flops if flops is not None else gemm_flops(fn, inputs)
        finally:
            if own:
                dev.close()
    except DeviceError as e:
        raise DeviceError(e.message, where=where) from None
    if check:
        expected = [a.copy() if i in arrays else a for i, a in enumerate(inputs)]
        from coopdialect.interpreter.kernel import run_kernel as interpret

        interpret(module, kernel, expected, grid, subgroup_size=subgroup_size)
        tol = documented_ulp(module, report.device) if tolerance_ulp is None else tolerance_ulp
        report.verdicts = []
        for i in arrays:
            a, got = fn.args[i], args[i]
            shape = "x".join(str(d) for d in got.shape)
            report.verdicts.append(compare(a.name_hint or str(i),
                                           f"{a.type.element_type}[{shape}]", got, expected[i],
                                           tol))
    return report
