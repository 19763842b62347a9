"""`coop-run`: run a kernel of an IR file on the interpreter or a GPU, check it, time it.

    coop-run FILE --grid X,Y,Z [--device interp|cuda|vulkan] [--pipeline P] [--check]
             [--bench N] [--flops F] [--ulp U] [--kernel NAME] [--input I=path.npy ...]
             [--seed N] [--save DIR]

Each memref argument gets the array from `--input I=FILE.npy` (I = argument index or name), or
random data of the memref's shape and element type (small integers, so that float results are
exact; `--seed` picks them). The kernel (default: the only func.func with a
`coop.workgroup_size`) runs over the grid on `--device` (default interp): the module is compiled
with `--pipeline` (coop-opt syntax) followed by the device's conversion (convert-coop-to-ptx /
-spirv) when the pipeline does not end in it. Then every buffer's shape, dtype and a checksum is
printed; `--save DIR` writes each buffer as DIR/<arg>.npy.

`--check` also runs the interpreter on the original module with the same inputs and prints one
verdict per buffer (bit-exact, or the differing elements with the max ulp / relative difference)
and a `check: PASS|FAIL` line; the float tolerance is `--ulp` (default: what the target's spec
documents for the kernel's ops, e.g. 3 ulp for a division on Vulkan). `--bench N` times N launches
with device events and prints the median (and TFLOP/s for a GEMM-shaped kernel, or with
`--flops`). Errors (bad IR, no driver, no GPU, a missing device feature) are one line,
`file:line:col: error: ...`; exit status 1 for an error or a failed check.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType

from coopdialect import api
from coopdialect.diagnostics import CoopError, format_error
from coopdialect.interpreter.common import numpy_dtype

DEVICES = ("interp", "cuda", "vulkan")


def _random(t: MemRefType, rng: np.random.Generator) -> np.ndarray:
    dtype = numpy_dtype(t.element_type)
    shape = tuple(d if d > 0 else 1 for d in t.get_shape())
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100) + 1, shape).astype(dtype)
    return rng.integers(-4, 5, shape).astype(dtype)


def _pick_kernel(module, name: str | None) -> func.FuncOp:
    funcs = [op for op in module.body.blocks[0].ops if isinstance(op, func.FuncOp)]
    if name:
        kernels = [k for k in funcs if k.sym_name.data == name]
    else:  # functions without a workgroup size are callees (reduce / per-element functions)
        kernels = [k for k in funcs if "coop.workgroup_size" in k.attributes] or funcs
    if len(kernels) != 1:
        raise CoopError(module, f"name one kernel with --kernel (found {len(kernels)})")
    return kernels[0]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="coop-run", description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--kernel", help="kernel to run (default: the only kernel)")
    ap.add_argument("--grid", required=True, help="workgroups as X,Y,Z")
    ap.add_argument("--device", choices=DEVICES, default="interp")
    ap.add_argument("--pipeline", help="passes to run first (coop-opt -p syntax)")
    ap.add_argument("--check", action="store_true", help="compare with the interpreter")
    ap.add_argument("--bench", type=int, default=0, metavar="N", help="time N launches")
    ap.add_argument("--flops", type=float, help="flop count of one launch (for --bench)")
    ap.add_argument("--ulp", type=float, help="float tolerance of --check, in ulp")
    ap.add_argument("--input", action="append", default=[], metavar="ARG=FILE.npy")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--subgroup-size", type=int, default=32)
    ap.add_argument("--save", metavar="DIR")
    args = ap.parse_args(argv)
    try:
        grid = tuple(int(x) for x in args.grid.split(","))
        if len(grid) != 3:
            raise ValueError
    except ValueError:
        ap.error("--grid must be X,Y,Z")
    report = None
    try:
        module = api.parse_file(args.file)
        kernel = _pick_kernel(module, args.kernel)
        names = [a.name_hint or str(i) for i, a in enumerate(kernel.body.blocks[0].args)]
        given = {}
        for spec in args.input:
            key, _, path = spec.partition("=")
            given[names.index(key) if key in names else int(key)] = np.load(path)
        rng = np.random.default_rng(args.seed)
        buffers = []
        for i, a in enumerate(kernel.body.blocks[0].args):
            if not isinstance(a.type, MemRefType):
                raise CoopError(kernel, f"argument {i} is not a memref")
            buffers.append(np.ascontiguousarray(given[i]) if i in given else _random(a.type, rng))
        if args.device == "interp" and not (args.pipeline or args.check or args.bench):
            api.run_kernel(module, kernel.sym_name.data, buffers, grid,
                           subgroup_size=args.subgroup_size)
        else:
            from coopdialect.runtime import run_kernel

            report = run_kernel(module, kernel.sym_name.data, buffers, grid, args.device,
                                pipeline=args.pipeline, check=args.check, bench=args.bench,
                                flops=args.flops, tolerance_ulp=args.ulp,
                                subgroup_size=args.subgroup_size)
    except Exception as e:  # every failure is one line
        print(format_error(e), file=sys.stderr)
        sys.exit(1)
    for name, buf in zip(names, buffers):
        checksum = float(np.sum(buf.astype(np.float64)))
        print(f"%{name}: {buf.dtype}{list(buf.shape)} sum={checksum:.17g}")
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            np.save(os.path.join(args.save, f"{name}.npy"), buf)
    if report is not None:
        print("\n".join(report.lines()))
        if not report.passed:
            sys.exit(1)


if __name__ == "__main__":
    main()
