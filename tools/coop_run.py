"""`coop-run`: run a kernel of an IR file on numpy buffers, on the interpreter or a GPU.

    coop-run FILE [--grid X,Y,Z] [--kernel NAME] [--device interp|cuda|vulkan] [--pipeline P]
             [--check] [--bench N] [--flops F] [--ulp U] [--input I=path.npy ...]
             [--arg NAME=VALUE ...] [--shape NAME=RxC ...] [--seed N] [--save DIR]

Each memref argument gets the array from `--input I=FILE.npy` (I = argument name or index), or
random data of the memref's shape and element type (small integers, so that float results are
exact; `--seed` picks them; drawn in chunks, so a benchmark's 8192x8192 operands need no
--input; only buffers larger than half the machine's memory are refused); a memref with a
dynamic size (`memref<?x?xf16>`) takes the shape of its random data from `--shape NAME=RxC`
(sizes joined by `x`, one per dimension). A scalar argument takes its value from `--arg
NAME=VALUE` (NAME its SSA name without `%`, or its index; an integer, decimal or 0x.., for
i32/i64/index, within the type's range; a number for f32/f16); `--input I=NUMBER` (or a 0-d
.npy) does the same. A `.spv` FILE is a SPIR-V
binary (glslang's output, say): it is read and lifted by `raise-spirv-to-coop`, its storage
and uniform buffers become `memref<?xT>` arguments in (set, binding) order — a block whose
members differ in scalar type one per member — (give them with --input) and its push constants
scalars.
The kernel (default: the only func.func with a
`coop.workgroup_size`) runs over the grid (`--grid`, or the grid the kernel declares with
`coop.grid`, from its scalar arguments; subgroups of `--subgroup-size`, default 32) on
`--device` (default interp): the module is compiled with `--pipeline` (coop-opt syntax) followed
by the device's conversion (convert-coop-to-ptx / -spirv) when the pipeline does not end in it.
Then every buffer's shape, dtype and a checksum is printed. `--save DIR` writes every argument
as it was before the run to DIR/in/<arg>.npy (a scalar as a 0-d array) and every buffer after the
run to DIR/out/<arg>.npy, so that `--input ARG=DIR/in/ARG.npy` replays the run and the results
can be checked again (C = A·B + C needs the C before).

`--check` also runs the interpreter on the original module with the same inputs and prints one
verdict per buffer (bit-exact, or the differing elements with the max ulp / relative difference)
and a `check: PASS|FAIL` line; the float tolerance is `--ulp` (default: what the target's spec
documents for the kernel's ops, e.g. 3 ulp for a division on Vulkan). `--bench N` times N launches
with device events and prints the median (and TFLOP/s for a GEMM-shaped kernel, or with
`--flops`). Without `--grid` for a kernel that declares no grid, a GPU device is opened first, so
a missing driver is reported before the missing flag. Exit status 1 for an error or a failed check. Errors are one
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
from coopdialect.errors import CoopError, location_of
from coopdialect.diagnostics import format_error
from coopdialect.dialects.coop_kernel import (
    GRID_ATTR,
    INTEGER_SCALARS,
    WORKGROUP_SIZE_ATTR,
    check_subgroup_size,
    dispatch_grid,
    scalar_type_name,
    scalar_value,
)
from coopdialect.interpreter.common import numpy_dtype
from coopdialect.tools.output_files import StagedFiles

DEVICES = ("interp", "cuda", "vulkan")


RANDOM_CHUNK = 1 << 20
"""Elements drawn at a time when filling a buffer with random data: the draw's int64
temporaries stay at 8 MiB whatever the buffer's size (a 8192x8192 operand fills in well under a
second)."""


def _random(t: MemRefType, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """A buffer of `shape` and `t`'s element type filled with small random integers (exact in
    every element type), drawn in chunks of RANDOM_CHUNK elements; the values are those of one
    draw of the whole buffer."""
    dtype = numpy_dtype(t.element_type)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        low, high = max(info.min, -100), min(info.max, 100) + 1
    else:
        low, high = -4, 5
    out = np.empty(shape, dtype)
    flat = out.reshape(-1)
    for start in range(0, flat.size, RANDOM_CHUNK):
        stop = min(start + RANDOM_CHUNK, flat.size)
        flat[start:stop] = rng.integers(low, high, stop - start)
    return out


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


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


def _argument(names: list[str], key: str) -> int | None:
    """The index of the argument `key` names (its SSA name, with or without `%`, or its index)."""
    key = key[1:] if key.startswith("%") else key
    if key in names:
        return names.index(key)
    if key.isdigit() and int(key) < len(names):
        return int(key)
    return None


def _scalar(flag: str, spec: str, name: str, t, text: str) -> int | float:
    """The value of a scalar argument of type `t` spelled `text`: an integer (decimal or 0x..)
    for i32/i64/index, a number for f32/f16, or a 0-d .npy file (what --save writes); checked
    against the type's range (`coop_kernel.scalar_value`)."""
    integer = scalar_type_name(t) in INTEGER_SCALARS
    if text.endswith(".npy"):
        array = _load(text)
        if array.ndim != 0:
            raise _Usage(f"{flag} {spec}: argument '{name}' is a scalar; {text} holds an array "
                         f"of shape {list(array.shape)}")
        value = array.item()
    else:
        try:
            value = int(text, 0) if integer else float(text)
        except ValueError:
            raise _Usage(f"{flag} {spec}: {name} is {t}; expected "
                         f"{'an integer' if integer else 'a number'}, got '{text}'") from None
    try:
        return scalar_value(t, value)
    except (TypeError, ValueError) as e:
        raise _Usage(f"{flag} {spec}: {e}") from None


def _shape(spec: str, name: str, t: MemRefType, text: str) -> tuple[int, ...]:
    """The shape `RxC` for memref argument `name` of type `t`: one positive size per dimension,
    equal to the type's where it is static."""
    try:
        shape = tuple(int(d) for d in text.split("x"))
    except ValueError:
        shape = ()
    rank = t.get_num_dims()
    if len(shape) != rank or min(shape, default=1) < 1:
        raise _Usage(f"--shape {spec}: {name} ({t}) needs {rank} positive sizes joined by 'x'")
    for d, (want, got) in enumerate(zip(t.get_shape(), shape)):
        if want >= 0 and want != got:
            raise _Usage(f"--shape {spec}: dimension {d} of {name} ({t}) is {want}, not {got}")
    return shape


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


def _run(args, saved: Saver | None) -> tuple[list[tuple[str, np.ndarray]], object]:
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
    args_ = kernel.body.blocks[0].args if kernel.body.blocks else ()
    names = [a.name_hint or str(i) for i, a in enumerate(args_)]
    scalars = {i for i, a in enumerate(args_) if not isinstance(a.type, MemRefType)}
    given: dict[int, object] = {}
    for flag, spec in [("--arg", s) for s in args.arg] + [("--input", s) for s in args.input]:
        key, eq, text = spec.partition("=")
        if not eq or not text:
            raise _Usage(f"--arg must be NAME=VALUE, got '{spec}'" if flag == "--arg" else
                         f"--input must be ARG=FILE.npy or ARG=NUMBER, got '{spec}'")
        index = _argument(names, key)
        if index is None or (flag == "--arg" and index not in scalars):
            what = "scalar argument" if flag == "--arg" else "argument"
            listed = [names[i] for i in sorted(scalars)] if flag == "--arg" else names
            raise _Usage(f"{flag} {spec}: @{kernel.sym_name.data} has no {what} '{key}' "
                         f"({what}s: {', '.join(listed) or 'none'})")
        if index in given:
            raise _Usage(f"{flag} {spec}: argument '{names[index]}' is given twice")
        if index in scalars:
            given[index] = _scalar(flag, spec, names[index], args_[index].type, text)
        else:
            given[index] = _load(text)
    shapes: dict[int, tuple[int, ...]] = {}
    for spec in args.shape:
        key, eq, text = spec.partition("=")
        index = _argument(names, key) if eq else None
        if index is None or index in scalars:
            memrefs = [n for i, n in enumerate(names) if i not in scalars]
            raise _Usage(f"--shape must be MEMREF=RxC (memref arguments: "
                         f"{', '.join(memrefs) or 'none'}), got '{spec}'")
        if index in given or index in shapes:
            raise _Usage(f"--shape {spec}: argument '{names[index]}' is given twice")
        shapes[index] = _shape(spec, names[index], args_[index].type, text)
    missing = sorted(scalars - set(given))
    if missing:
        i = missing[0]
        raise _Usage(f"give scalar argument {names[i]} ({args_[i].type}) with --arg "
                     f"{names[i]}=VALUE")
    if args.grid is not None:
        grid = _grid(args.grid)
    elif GRID_ATTR in kernel.attributes:
        try:
            grid = dispatch_grid(kernel, [given.get(i) for i in range(len(args_))])
        except ValueError as e:
            raise _Usage(str(e)) from None
    else:  # say first whether the device is there at all, then what is missing
        if args.device != "interp":
            from coopdialect.runtime import DeviceError, open_device

            try:
                open_device(args.device).close()
            except DeviceError as e:
                raise DeviceError(e.message, where=location_of(kernel)) from None
        raise _Usage("give the workgroups to dispatch with --grid X,Y,Z (the kernel declares "
                     f"no {GRID_ATTR})")
    random_bytes = 0
    for i, a in enumerate(args_):
        if i in given:
            continue
        if i not in shapes and any(d < 0 for d in a.type.get_shape()):
            sizes = "x".join(f"N{d}" for d in range(a.type.get_num_dims()))
            raise _Usage(f"argument {names[i]} ({a.type}) has a dynamic size: give its shape "
                         f"with --shape {names[i]}={sizes} or its data with --input "
                         f"{names[i]}=FILE.npy")
        shapes.setdefault(i, tuple(a.type.get_shape()))
        elements = int(np.prod(shapes[i], dtype=object))
        try:
            random_bytes += elements * numpy_dtype(a.type.element_type).itemsize
        except ValueError as e:  # a memref of something the interpreter holds no array of
            raise CoopError(kernel, f"argument {i} ({a.type}): {e}") from None
    memory = _memory_bytes()
    if memory is not None and random_bytes > memory // 2:
        raise CoopError(kernel, f"the random buffers take {random_bytes} bytes, more than half "
                                f"of this machine's memory ({memory} bytes): pass --input")
    rng = np.random.default_rng(args.seed)
    buffers = [(np.ascontiguousarray(given[i]) if isinstance(a.type, MemRefType) else given[i])
               if i in given else _random(a.type, shapes[i], rng) for i, a in enumerate(args_)]
    if saved is not None:  # the inputs, before the run updates the buffers in place
        saved.write("in", names, buffers)
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


class Saver:
    """`--save DIR`: DIR/in/<arg>.npy and DIR/out/<arg>.npy, written to temporary files as the run
    goes and renamed into place only when the whole run succeeded (`commit`)."""

    def __init__(self, directory: str):
        self.directory = directory
        self.created = not os.path.isdir(directory)
        os.makedirs(directory, exist_ok=True)
        self.staged = StagedFiles()

    def write(self, part: str, names: list[str], values: list) -> None:
        folder = os.path.join(self.directory, part)
        os.makedirs(folder, exist_ok=True)
        for name, value in zip(names, values):
            if part == "out" and not isinstance(value, np.ndarray):
                continue  # scalar arguments are inputs only
            with self.staged.open(os.path.join(folder, f"{name}.npy")) as f:
                np.save(f, np.asarray(value))

    def commit(self) -> None:
        self.staged.commit()

    def discard(self) -> None:
        """Remove the temporary files, and the folders this run made."""
        self.staged.discard()
        folders = [os.path.join(self.directory, p) for p in ("in", "out")]
        for folder in folders + ([self.directory] if self.created else []):
            try:
                os.rmdir(folder)
            except OSError:
                pass  # not there, or holds files this run did not write


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `coop-run` console script (see the module docstring)."""
    ap = argparse.ArgumentParser(
        prog="coop-run", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a kernel of an IR file on numpy buffers, on the interpreter or a GPU.",
        epilog="examples:\n"
               "  coop-run examples/gemm_s8.mlir --grid 4,2,1 --save out/run\n"
               "  coop-run examples/gemm_dynamic.mlir --arg M=128 --arg N=64 --arg K=48 \\\n"
               "      --shape A=128x48 --shape B=48x64 --shape C=128x64\n"
               "  coop-run examples/gemm_f16.mlir --grid 2,2,1 --device cuda --check --bench 20")
    ap.add_argument("file", help="the kernel's module: an IR file (.mlir) or a SPIR-V binary "
                                 "(.spv, lifted with raise-spirv-to-coop)")
    ap.add_argument("--kernel", metavar="NAME",
                    help="the func.func to run (default: the only one with a "
                         "coop.workgroup_size)")
    ap.add_argument("--grid", metavar="X,Y,Z",
                    help="workgroups to dispatch along x, y, z (default: the grid the kernel "
                         "declares with coop.grid; required for a kernel that declares none)")
    ap.add_argument("--device", choices=DEVICES, default="interp",
                    help="where to run: the numpy interpreter (default), CUDA (PTX through the "
                         "driver) or Vulkan (SPIR-V); docs/gpu.md says what a GPU machine needs")
    ap.add_argument("--pipeline", metavar="PASSES",
                    help="coop-opt passes to run first (-p syntax); the device's conversion is "
                         "appended when the pipeline does not end in it")
    ap.add_argument("--check", action="store_true",
                    help="also interpret the original module on the same inputs and compare "
                         "every buffer (exit status 1 when one differs)")
    ap.add_argument("--bench", type=int, default=0, metavar="N",
                    help="time N launches with device events (after one warm-up) and print "
                         "the median, and TFLOP/s for a GEMM")
    ap.add_argument("--flops", type=float, metavar="F",
                    help="flop count of one launch, for --bench's rate (default: 2*M*N*K of a "
                         "GEMM-shaped kernel)")
    ap.add_argument("--ulp", type=float, metavar="U",
                    help="float tolerance of --check in ulp (default: what the target's spec "
                         "allows for the kernel's ops)")
    ap.add_argument("--input", action="append", default=[], metavar="ARG=FILE.npy|NUMBER",
                    help="the value of argument ARG (its index or name): a .npy file for a "
                         "memref, a number (or a 0-d .npy) for a scalar; repeat for each "
                         "argument; the others get random small integers")
    ap.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                    help="the value of scalar argument NAME (its SSA name without %%): an "
                         "integer (decimal or 0x..) for i32/i64/index, a number for f32/f16")
    ap.add_argument("--shape", action="append", default=[], metavar="NAME=RxC",
                    help="the shape of the random data of a memref argument with a dynamic "
                         "size (one size per dimension, joined by x)")
    ap.add_argument("--seed", type=int, default=0, metavar="N",
                    help="seed of the random inputs (default 0)")
    ap.add_argument("--subgroup-size", type=int, default=32, metavar="N",
                    help="invocations per subgroup in the interpreter (default 32)")
    ap.add_argument("--save", metavar="DIR",
                    help="write the inputs (before the run) to DIR/in/ARG.npy and the buffers "
                         "after it to DIR/out/ARG.npy, only if the whole run succeeded")
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
        saved = None
        try:
            saved = Saver(args.save) if args.save else None
            results, report = _run(args, saved)
            if saved is not None:
                saved.write("out", [n for n, _ in results], [b for _, b in results])
                saved.commit()
        except BaseException:
            if saved is not None:
                saved.discard()
            raise
    except _Usage as e:
        print(f"<command line>: error: {e}", file=sys.stderr)
        sys.exit(1)
    except Exception as e:  # noqa: BLE001 - every failure is one line
        print(format_error(e, args.file), file=sys.stderr)
        sys.exit(1)
    for name, buf in results:
        if not isinstance(buf, np.ndarray):
            continue
        checksum = float(np.sum(buf, dtype=np.float64))  # no float64 copy of the buffer
        print(f"%{name}: {buf.dtype}{list(buf.shape)} sum={checksum:.17g}")
    if report is not None:
        print("\n".join(report.lines()))
        if not report.passed:
            sys.exit(1)


if __name__ == "__main__":
    main()
