"""`coop-run`: run a kernel of an IR file on numpy buffers, on the interpreter or a GPU.

    coop-run FILE --grid X,Y,Z [--kernel NAME] [--device interp|cuda|vulkan] [--pipeline P]
             [--check] [--bench N] [--flops F] [--ulp U] [--input I=path.npy ...] [--seed N]
             [--save DIR]

Each memref argument gets the array from `--input I=FILE.npy` (I = argument index or name), or
random data of the memref's shape and element type (small integers, so that float results are
exact; `--seed` picks them); a scalar argument takes `--input I=NUMBER`. A `.spv` FILE is a SPIR-V
binary (glslang's output, say): it is read and lifted by `raise-spirv-to-coop`, its storage and
uniform buffers become `memref<?xT>` arguments in (set, binding) order — a block whose members
differ in scalar type one per member — (give them with --input) and its push constants scalars.
The kernel (default: the only func.func with a
`coop.workgroup_size`) runs over the grid (subgroups of `--subgroup-size`, default 32) on
`--device` (default interp): the module is compiled with `--pipeline` (coop-opt syntax) followed
by the device's conversion (convert-coop-to-ptx / -spirv) when the pipeline does not end in it.
Then every buffer's shape, dtype and a checksum is printed, and `--save DIR` writes each buffer
as DIR/<arg>.npy.

`--check` also runs the interpreter on the original module with the same inputs and prints one
verdict per buffer (bit-exact, or the differing elements with the max ulp / relative difference)
and a `check: PASS|FAIL` line; the float tolerance is `--ulp` (default: what the target's spec
documents for the kernel's ops, e.g. 3 ulp for a division on Vulkan). `--bench N` times N launches
with device events and prints the median (and TFLOP/s for a GEMM-shaped kernel, or with
`--flops`). Without `--grid`, a GPU device is opened first, so a missing driver is reported before
the missing flag. Exit status 1 for an error or a failed check. Errors are one
line on stderr — `file:line:col: error: ...` for the IR, `<command line>: error: ...` for a bad
flag, `path: error: ...` for a file that cannot be read or written — and exit status 1; nothing is
printed on stdout and nothing saved unless the whole run succeeded.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType

from coopdialect import api
from coopdialect.diagnostics import CoopError, format_error, location_of
from coopdialect.dialects.coop_kernel import WORKGROUP_SIZE_ATTR, check_subgroup_size
from coopdialect.interpreter.common import numpy_dtype

DEVICES = ("interp", "cuda", "vulkan")


def _random(t: MemRefType, rng: np.random.Generator) -> np.ndarray:
    dtype = numpy_dtype(t.element_type)
    shape = tuple(d if d > 0 else 1 for d in t.get_shape())
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100) + 1, shape).astype(dtype)
    return rng.integers(-4, 5, shape).astype(dtype)


MAX_RANDOM_BYTES = 1 << 25
"""Largest buffer coop-run fills with random data (32 MiB; drawing it takes about 8 times that
for a moment); larger ones come with --input."""


class _Usage(Exception):
    """A bad flag: reported as `<command line>: error: ...`."""


def _grid(text: str) -> tuple[int, int, int]:
    try:
        grid = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise _Usage(f"--grid must be X,Y,Z (three positive integers), got '{text}'") from None
    if len(grid) != 3 or min(grid) <= 0:
        raise _Usage(f"--grid must be X,Y,Z (three positive integers), got '{text}'")
    return grid  # type: ignore[return-value]


def _load(path: str) -> np.ndarray:
    try:
        array = np.load(path, allow_pickle=False)
    except OSError:
        raise
    except Exception as e:  # noqa: BLE001 - numpy's many ways of saying "not a .npy file"
        raise CoopError(None, f"not a .npy array file: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
                        where=path) from None
    if not isinstance(array, np.ndarray):
        raise CoopError(None, "holds several arrays (.npz); give one .npy file", where=path)
    return array


def _run(args) -> tuple[list[tuple[str, np.ndarray]], object]:
    if args.file.endswith(".spv"):
        with open(args.file, "rb") as f:
            module = api.read_spirv(f.read(), args.file, raise_to_coop=True)
    else:
        module = api.parse_file(args.file)
    funcs = [op for op in module.body.blocks[0].ops if isinstance(op, func.FuncOp)]
    if args.kernel:
        kernels = [k for k in funcs if k.sym_name.data == args.kernel]
    else:  # the kernels: functions with a workgroup size (others are helpers, e.g. DecodeFuncs)
        kernels = [k for k in funcs if WORKGROUP_SIZE_ATTR in k.attributes] or funcs
    if len(kernels) != 1:
        names = ", ".join(f"@{k.sym_name.data}" for k in funcs) or "none"
        what = f"no func.func @{args.kernel}" if args.kernel else f"{len(kernels)} kernels"
        raise CoopError(module, f"name one kernel with --kernel ({what}; functions: {names})")
    kernel = kernels[0]
    if args.grid is None:  # say first whether the device is there at all, then what is missing
        if args.device != "interp":
            from coopdialect.runtime import DeviceError, open_device

            try:
                open_device(args.device).close()
            except DeviceError as e:
                raise DeviceError(e.message, where=location_of(kernel)) from None
        raise _Usage("give the workgroups to dispatch with --grid X,Y,Z")
    grid = _grid(args.grid)
    args_ = kernel.body.blocks[0].args if kernel.body.blocks else ()
    names = [a.name_hint or str(i) for i, a in enumerate(args_)]
    given = {}
    for spec in args.input:
        key, eq, path = spec.partition("=")
        if not eq or not path:
            raise _Usage(f"--input must be ARG=FILE.npy or ARG=NUMBER, got '{spec}'")
        if key in names:
            index = names.index(key)
        elif key.isdigit() and int(key) < len(names):
            index = int(key)
        else:
            raise _Usage(f"--input {spec}: @{kernel.sym_name.data} has no argument '{key}' "
                         f"(arguments: {', '.join(names) or 'none'})")
        if isinstance(args_[index].type, MemRefType):
            given[index] = _load(path)
        else:  # a scalar argument (a raised shader's push constant)
            try:
                given[index] = float(path) if any(c in path for c in ".eEn") else int(path)
            except ValueError:
                raise _Usage(f"--input {spec}: argument '{key}' is a scalar; give a number") from None
    rng = np.random.default_rng(args.seed)
    buffers = []
    for i, a in enumerate(args_):
        if not isinstance(a.type, MemRefType):
            if i not in given:
                raise CoopError(kernel, f"argument {i} ({a.type}) is a scalar: give it with "
                                        f"--input {i}=NUMBER")
            buffers.append(given[i])
            continue
        if i not in given and any(d < 0 for d in a.type.get_shape()):
            raise CoopError(kernel, f"argument {i} ({a.type}) has a dynamic size: give it with "
                                    f"--input {i}=FILE.npy")
        if i not in given:
            elements = int(np.prod([d if d > 0 else 1 for d in a.type.get_shape()], dtype=object))
            try:
                size = elements * numpy_dtype(a.type.element_type).itemsize
            except ValueError as e:  # a memref of something the interpreter holds no array of
                raise CoopError(kernel, f"argument {i} ({a.type}): {e}") from None
            if size > MAX_RANDOM_BYTES:
                raise CoopError(kernel, f"argument {i} ({a.type}) is {size} bytes; coop-run makes "
                                        f"random buffers of at most {MAX_RANDOM_BYTES} bytes "
                                        "(MAX_RANDOM_BYTES): pass --input")
        buffers.append(np.ascontiguousarray(given[i]) if i in given else _random(a.type, rng))
    report = None
    try:
        if args.device == "interp" and not (args.pipeline or args.check or args.bench):
            api.run_kernel(module, kernel.sym_name.data, buffers, grid,
                           subgroup_size=args.subgroup_size)
        else:
            from coopdialect.runtime import run_kernel

            report = run_kernel(module, kernel.sym_name.data, buffers, grid, args.device,
                                pipeline=args.pipeline, check=args.check, bench=args.bench,
                                flops=args.flops, tolerance_ulp=args.ulp,
                                subgroup_size=args.subgroup_size)
    except (TypeError, ValueError) as e:  # the API's argument checks: here they are the flags'
        raise _Usage(str(e)) from None
    return list(zip(names, buffers)), report


def _save(directory: str, results: list[tuple[str, np.ndarray]]) -> None:
    """Write every buffer, or nothing: each file goes to a temporary name first."""
    os.makedirs(directory, exist_ok=True)
    done = []
    try:
        for name, buf in results:
            if not isinstance(buf, np.ndarray):  # scalar arguments are inputs only
                continue
            final = os.path.join(directory, f"{name}.npy")
            tmp = os.path.join(directory, f".{name}.npy.tmp")
            with open(tmp, "wb") as f:
                np.save(f, buf)
            done.append((tmp, final))
    except OSError:
        for tmp, _ in done:
            os.unlink(tmp)
        raise
    for tmp, final in done:
        os.replace(tmp, final)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="coop-run", description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--kernel", help="kernel to run (default: the only kernel)")
    ap.add_argument("--grid", help="workgroups as X,Y,Z (required to run)")
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
    # stderr carries the one diagnostic line and nothing else: numpy's overflow warnings of an
    # exact run (wrapping integers, float conversions to inf) are not diagnostics
    warnings.simplefilter("ignore")
    try:
        if args.seed < 0:
            raise _Usage(f"--seed must be a non-negative integer, got {args.seed}")
        if args.save == "":
            raise _Usage("--save needs a directory name")
        try:
            check_subgroup_size(args.subgroup_size)
        except ValueError as e:
            raise _Usage(f"--subgroup-size: {e}") from None
        if args.bench < 0:
            raise _Usage(f"--bench must be a non-negative count, got {args.bench}")
        results, report = _run(args)
        if args.save:
            _save(args.save, results)
    except _Usage as e:
        print(f"<command line>: error: {e}", file=sys.stderr)
        sys.exit(1)
    except Exception as e:  # noqa: BLE001 - every failure is one line
        print(format_error(e, args.file), file=sys.stderr)
        sys.exit(1)
    for name, buf in results:
        if not isinstance(buf, np.ndarray):
            continue
        checksum = float(np.sum(buf.astype(np.float64)))
        print(f"%{name}: {buf.dtype}{list(buf.shape)} sum={checksum:.17g}")
    if report is not None:
        print("\n".join(report.lines()))
        if not report.passed:
            sys.exit(1)


if __name__ == "__main__":
    main()
