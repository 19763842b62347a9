"""Compile-time benchmark: coop-opt's full pipeline against xDSL's own parse+print.

Generates a kernel of N operations (independent 16×16×16 tiles: offsets, three loads, a
multiply-add and a store each), then measures in one process:

* baseline: xDSL parse + print of the file (the cost any xDSL tool pays to read and write it);
* pipeline: `coop-opt FILE -p convert-coop-to-spirv -t spirv -o OUT` run by coop-opt's driver
  in this process: parse with locations, verify, lower to the spirv dialect, verify, serialize
  the SPIR-V binary (reading the file and writing the output included).

Prints the ratio pipeline / baseline at N and 10·N (goal: ≤ 2.0, and about the same at both
sizes, i.e. linear growth). Each figure is the best of `--repeat` runs.

    python benchmarks/bench_pipeline.py [--ops 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time

from xdsl.printer import Printer

from coopdialect.context import make_context
from xdsl.parser import Parser


def generate(ops: int) -> str:
    """A valid kernel with about `ops` operations (7 per tile plus a few constants)."""
    tiles = max(1, (ops - 8) // 7)
    n = 16 * tiles
    lines = [
        "!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>",
        "!b = !coop.matrix<16x16xf16, Subgroup, MatrixB>",
        "!c = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>",
        f"func.func @tiles(%A: memref<16x{n}xf16>, %B: memref<16x{n}xf16>, %C: memref<16x{n}xf32>)",
        "    attributes {coop.workgroup_size = array<i32: 32, 1, 1>} {",
        f"  %ld = arith.constant {n} : index",
    ]
    for t in range(tiles):
        lines += [
            f"  %o{t} = arith.constant {16 * t} : index",
            f"  %a{t} = coop.load %A[%o{t}], %ld, RowMajor : memref<16x{n}xf16> -> !a",
            f"  %b{t} = coop.load %B[%o{t}], %ld, RowMajor : memref<16x{n}xf16> -> !b",
            f"  %c{t} = coop.load %C[%o{t}], %ld, RowMajor : memref<16x{n}xf32> -> !c",
            f"  %d{t} = coop.mul_add %a{t}, %b{t}, %c{t} : !a, !b, !c -> !c",
            f"  %e{t} = coop.fadd %d{t}, %c{t} : !c",
            f"  coop.store %e{t}, %C[%o{t}], %ld, RowMajor : !c, memref<16x{n}xf32>",
        ]
    lines += ["  func.return", "}"]
    return "\n".join(lines) + "\n"


def baseline(text: str) -> float:
    ctx = make_context()
    t0 = time.perf_counter()
    module = Parser(ctx, text, "bench.mlir").parse_module()
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return time.perf_counter() - t0


def pipeline(text: str) -> float:
    """`coop-opt bench.mlir -p convert-coop-to-spirv -t spirv` (coop-opt's own driver, in process):
    parse with locations, verify, lower, verify, serialize."""
    from coopdialect.tools.coop_opt import CoopOptMain

    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "bench.mlir"), os.path.join(tmp, "bench.spv")
        with open(src, "w") as f:
            f.write(text)
        import coopdialect.spirv.writer  # noqa: F401  (imported once, outside the timing)
        from coopdialect.passes.convert_coop_to_spirv import ConvertCoopToSpirvPass  # noqa: F401

        t0 = time.perf_counter()
        CoopOptMain(args=[src, "-p", "convert-coop-to-spirv", "-t", "spirv", "-o", out]).run()
        elapsed = time.perf_counter() - t0
        assert os.path.getsize(out) > 20
    return elapsed


def best(fn, text: str, repeat: int) -> float:
    return min(fn(text) for _ in range(repeat))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    for ops in (args.ops, 10 * args.ops):
        text = generate(ops)
        count = text.count("\n")
        b = best(baseline, text, args.repeat)
        p = best(pipeline, text, args.repeat)
        rows.append((ops, count, b, p))
        print(f"{ops:>7} ops: xDSL parse+print {b:8.3f} s   coop-opt pipeline {p:8.3f} s   "
              f"ratio {p / b:5.2f}", flush=True)
    (o1, _, b1, p1), (o2, _, b2, p2) = rows
    print(f"growth from {o1} to {o2} ops: baseline x{b2 / b1:.1f}, pipeline x{p2 / p1:.1f} "
          f"(linear = x{o2 / o1:.0f})")


if __name__ == "__main__":
    main()
