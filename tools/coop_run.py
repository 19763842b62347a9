"""`coop-run`: interpret a kernel of an IR file on numpy buffers.

    coop-run FILE --grid X,Y,Z [--kernel NAME] [--input I=path.npy ...] [--seed N] [--save DIR]

Each memref argument gets the array from `--input I=FILE.npy` (I = argument index or name), or
random data of the memref's shape and element type (small integers, so that float results are
exact; `--seed` picks them); a scalar argument takes `--input I=NUMBER`. A `.spv` FILE is a SPIR-V
binary (glslang's output, say): it is read and lifted by `raise-spirv-to-coop`, its storage
buffers become `memref<?xT>` arguments (give them with --input) and its push constants scalars. The kernel runs over the grid (workgroup size from
`coop.workgroup_size`, subgroups of `--subgroup-size`, default 32); then every buffer's shape, dtype
and a checksum is printed, and `--save DIR` writes each buffer as DIR/<arg>.npy. Errors are one
line, `file:line:col: error: ...`, and exit status 1.
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


def _random(t: MemRefType, rng: np.random.Generator) -> np.ndarray:
    dtype = numpy_dtype(t.element_type)
    shape = tuple(d if d > 0 else 1 for d in t.get_shape())
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100) + 1, shape).astype(dtype)
    return rng.integers(-4, 5, shape).astype(dtype)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="coop-run", description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--kernel", help="kernel to run (default: the only func.func)")
    ap.add_argument("--grid", required=True, help="workgroups as X,Y,Z")
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
    try:
        if args.file.endswith(".spv"):
            with open(args.file, "rb") as f:
                module = api.read_spirv(f.read(), args.file, raise_to_coop=True)
        else:
            module = api.parse_file(args.file)
        kernels = [op for op in module.body.blocks[0].ops if isinstance(op, func.FuncOp)]
        if args.kernel:
            kernels = [k for k in kernels if k.sym_name.data == args.kernel]
        if len(kernels) != 1:
            raise CoopError(module, f"name one kernel with --kernel (found {len(kernels)})")
        kernel = kernels[0]
        names = [a.name_hint or str(i) for i, a in enumerate(kernel.body.blocks[0].args)]
        given = {}
        for spec in args.input:
            key, _, path = spec.partition("=")
            i = names.index(key) if key in names else int(key)
            args_t = kernel.body.blocks[0].args[i].type
            given[i] = np.load(path) if isinstance(args_t, MemRefType) else float(path) if "." in path else int(path)
        rng = np.random.default_rng(args.seed)
        buffers = []
        for i, a in enumerate(kernel.body.blocks[0].args):
            if i in given:
                buffers.append(np.ascontiguousarray(given[i]) if isinstance(a.type, MemRefType) else given[i])
            elif not isinstance(a.type, MemRefType):
                raise CoopError(kernel, f"argument {i} ({a.type}) is a scalar: give it with --input {i}=NUMBER")
            elif any(d < 0 for d in a.type.get_shape()):
                raise CoopError(kernel, f"argument {i} ({a.type}) has a dynamic size: give it with --input {i}=FILE.npy")
            else:
                buffers.append(_random(a.type, rng))
        api.run_kernel(module, kernel.sym_name.data, buffers, grid, subgroup_size=args.subgroup_size)
    except Exception as e:  # every failure is one line
        print(format_error(e), file=sys.stderr)
        sys.exit(1)
    for name, buf in zip(names, buffers):
        if not isinstance(buf, np.ndarray):
            continue
        checksum = float(np.sum(buf.astype(np.float64)))
        print(f"%{name}: {buf.dtype}{list(buf.shape)} sum={checksum:.17g}")
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            np.save(os.path.join(args.save, f"{name}.npy"), buf)


if __name__ == "__main__":
    main()
