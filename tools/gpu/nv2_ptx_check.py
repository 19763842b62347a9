"""Cooperative-matrix-2 and tensor addressing through PTX on the H200, against the interpreter.

    python3 tools/gpu/nv2_ptx_check.py [--count 60] [--perf 8192] [--out D] [--device interp]

Runs on the GPU machine with coopdialect installed (tools/gpu_wheelhouse.sh), in one step: each
case's expected buffers come from the interpreter there, the kernel is lowered by
`convert-coop-to-ptx` and launched through coopdialect.runtime's CUDA device. The PTX twin of
tensor_check.py and the DecodeFunc kernels of run_examples.sh (which run the same IR through
Vulkan). Cases (8 + `--count` + 12; 80 by default):

* the three tensor-addressing examples and the size-parametrized coopmat2 GEMM
  (gen_coopmat2_gemm.py at 256x512x128), each as written (`chain`: pipeline
  convert-coop-to-ptx) and after fold-tensor-views (`folded`); the inputs of tensor_check.py;
* `--count` random tensor-addressed loads and stores (tests/tensor_ir.py: every clamp mode in
  turn, layouts of Dim 1-5 with block sizes, slices and strides, views with permutations and
  clips; 16/32-row and -column subgroup matrices; the same draw as tensor_check.py), as written
  through convert-coop-to-ptx; the interpreter must agree with the independent reference
  tests/tensor_reference.py on each (else the check stops), and draws the reference calls
  undefined are drawn again;
* examples/block_decode_load.mlir (DecodeFunc, Q4_0), both kernels, unfolded and folded, 3
  random data sets each (tests/test_decode_func.make_q4_0).

A case passes when every byte of every buffer equals the interpreter's on the source IR (softmax's
division is IEEE `div.rn.f32` in PTX, so it is bit-exact too; the Vulkan driver deviations do
not apply). Prints one line per case, the count by kind and `correctness: P/N ...`; exit status
1 when any case fails. With `--perf N[,N...]`, also times the coopmat2 GEMM (gen_coopmat2_gemm.py,
M = N = K = N) against torch.matmul (f16 in, f32 out through cuBLAS) in the same process and
prints a `coopmat2_f16` result row for benchmarks/results/ptx.json. `--device interp` runs every
case on the interpreter as the device (no GPU; the folded cases then check fold-tensor-views only).
"""

from __future__ import annotations

import datetime
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT / "tests")]
from gpu_check_common import bytes_differ, options, report, run_cases, timed  # noqa: E402

EXAMPLES = [  # (name, path, kernel, grid)
    ("gemm_coopmat2_f16", "examples/gemm_coopmat2_f16.mlir", "gemm_coopmat2", (2, 2, 1)),
    ("conv_patch_clamped", "examples/conv_patch_clamped.mlir", "conv_patch", (4, 4, 1)),
    ("softmax_rows", "examples/softmax_rows.mlir", "softmax_rows", (1, 4, 1)),
]
MODES = ["Undefined", "Constant", "ClampToEdge", "Repeat", "RepeatMirrored"]
DECODE = "examples/block_decode_load.mlir"
FOLD = "fold-tensor-views"


def _raw(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def compile_ptx(text: str, source: str, fold: bool = False) -> str:
    """PTX text of IR text (optionally after fold-tensor-views); what the CUDA device compiles
    for a case with pipeline None / `fold-tensor-views`. Raises CoopError for refused IR."""
    from coopdialect import api
    from coopdialect.ptx import emit_ptx
    from coopdialect.runtime.device import lower

    return emit_ptx(lower(api.parse(text, source), FOLD if fold else None, "convert-coop-to-ptx"))


class Kernel:
    """A kernel on its inputs and the interpreter's outputs for them (computed once, on the
    source IR, and shared by the kernel's unfolded and folded cases)."""

    def __init__(self, text: str, source: str, kernel: str, grid: tuple, inputs: list,
                 expected: list | None = None):
        self.text, self.source, self.kernel, self.grid = text, source, kernel, grid
        self.inputs, self._expected = inputs, expected

    def expected(self) -> list[np.ndarray]:
        if self._expected is None:
            from coopdialect import api

            bufs = [b.copy() for b in self.inputs]
            api.run_kernel(api.parse(self.text, self.source), self.kernel, bufs, self.grid)
            self._expected = bufs
        return self._expected


@dataclass
class Case:
    name: str
    k: Kernel
    pipeline: str | None  # run before the device's conversion (convert-coop-to-ptx)
    group: str  # example / random / decode
    info: str = ""


def example_sources() -> list[tuple[str, str, str, str, tuple]]:
    """(name, IR text, source name, kernel, grid) of the examples and the generated GEMM."""
    from gen_coopmat2_gemm import coopmat2_gemm_ir, grid as gemm_grid
    out = [(n, (ROOT / p).read_text(), p, k, g) for n, p, k, g in EXAMPLES]
    out.append(("gemm_coopmat2_gen", coopmat2_gemm_ir(256, 512, 128),
                "gen_coopmat2_gemm(256,512,128)", "gemm_coopmat2", gemm_grid(256, 512)))
    return out


def random_cases(count: int, seed: int, rng: np.random.Generator):
    """`count` random tensor cases (the draw of tensor_check.py), each checked interpreter =
    tests/tensor_reference.py; yields (Kernel with its expected buffers, description)."""
    import tensor_ir

    from coopdialect import api
    prng = random.Random(seed)
    built = tried = 0
    while built < count:
        tried += 1
        if tried > 50 * count:
            raise SystemExit(f"only {built} valid random cases in {tried} draws")
        case = tensor_ir.random_case(prng)
        case["mode"] = MODES[built % len(MODES)]
        case["rows"], case["cols"] = prng.choice([16, 32]), prng.choice([16, 32])
        case["dynamic"] = set()  # kernel arguments are memrefs only
        text, _ = tensor_ir.case_ir(case)
        buf, mat = tensor_ir.case_inputs(case, rng)
        want = tensor_ir.expected(case, buf, mat)
        if want is None:
            continue  # undefined behaviour or invalid IR: draw again
        got = [buf.copy(), mat.copy()]
        try:
            api.run_kernel(api.parse(text, "random"), "k", got, (1, 1, 1))
        except Exception as e:  # noqa: BLE001 - the reference says defined: a disagreement
            raise SystemExit(f"interpreter failed on a case the reference accepts: {e}") from None
        if not all(np.array_equal(_raw(a), _raw(b)) for a, b in zip(got, want)):
            raise SystemExit("interpreter and reference disagree on a random case")
        desc = (f"{case['kind']} {case['etype']} {case['rows']}x{case['cols']} Dim{case['ldim']} "
                f"{case['mode']} {'+'.join(o for o, _ in case['lops']) or '-'}"
                + (f" view{case['view']['vdim']}{case['view']['perm']}"
                   f"{'+'.join(o for o, _ in case['view']['vops'])}" if case["view"] else ""))
        yield Kernel(text, f"random_{built:03d}", "k", (1, 1, 1), [buf, mat], got), desc
        built += 1


def cases(count: int = 60, seed: int = 2026):
    """Every case, in order (deterministic for given arguments; one numpy generator draws the
    inputs of examples, random cases and decode cases in that order)."""
    from tensor_check import _example_inputs
    from test_decode_func import make_q4_0

    rng = np.random.default_rng(seed)
    for name, text, source, kernel, grid in example_sources():
        k = Kernel(text, source, kernel, grid, _example_inputs(name, rng))
        for fold in (False, True):
            yield Case(f"{name}_{'folded' if fold else 'chain'}", k, FOLD if fold else None,
                       "example")
    for k, desc in random_cases(count, seed, rng):
        yield Case(k.source, k, None, "random", desc)
    m, kk, n = 64, 128, 32
    dtext = (ROOT / DECODE).read_text()
    for fold in (False, True):
        for s in range(3):
            q, _ = make_q4_0(rng)
            b = rng.integers(-4, 5, (kk, n)).astype(np.float16)
            for kernel, bufs, grid in (
                    ("dequant_q4", [q, np.zeros((m, kk), np.float16)], (kk // 16, m // 16, 1)),
                    ("gemm_q4", [q, b, np.zeros((m, n), np.float32)], (n // 16, m // 16, 1))):
                yield Case(f"{kernel}_{'folded' if fold else 'unfolded'}_{s}",
                           Kernel(dtext, DECODE, kernel, grid, bufs), FOLD if fold else None,
                           "decode")


def run(count: int, perf: list[int], out: Path | None, device="cuda") -> int:
    """Run the check on `device` (a name for open_device, or a Device); exit status."""
    from coopdialect import api
    from coopdialect.runtime import open_device, run_kernel
    from coopdialect.runtime.device import Device

    dev = device if isinstance(device, Device) else open_device(device)
    if perf and dev.name != "cuda":
        raise SystemExit("--perf needs the CUDA device (torch.matmul is the baseline)")

    def run_one(c: Case) -> str:
        want = c.k.expected()
        got = [b.copy() for b in c.k.inputs]
        run_kernel(api.parse(c.k.text, c.k.source), c.k.kernel, got, c.k.grid, dev,
                   pipeline=c.pipeline)
        bad, size = bytes_differ(got, dict(enumerate(want)))
        return "PASS" if bad == 0 else f"FAIL ({bad} of {size} bytes differ)"

    with dev:
        all_cases = list(cases(count))
        lines, passed, failed, kinds = run_cases(all_cases, run_one, lambda c: c.group)
        lines = [f"{ln}  ({c.info})" if c.info else ln for ln, c in zip(lines, all_cases)]
        lines.append("by kind: " + ", ".join(f"{k} {a}/{b}" for k, (a, b) in kinds.items()))
        lines.append(f"correctness: {passed}/{passed + failed} cases bit-exact vs the "
                     f"interpreter (device {dev.name})")
        for n in perf:
            try:
                lines.append(_perf(dev, n))
            except Exception as e:  # noqa: BLE001 - report and go on
                lines.append(f"perf n={n}: ERROR {type(e).__name__}: {e}")
    return report(lines, out, "nv2_ptx_check.txt", failed)


def _perf(dev, n: int) -> str:
    import torch
    from gen_coopmat2_gemm import coopmat2_gemm_ir, grid as gemm_grid

    from coopdialect import api

    prog = dev.compile(api.parse(coopmat2_gemm_ir(n, n, n), f"gen_coopmat2_gemm({n})"))
    a = torch.randint(-2, 3, (n, n), device="cuda").half()
    b = torch.randint(-2, 3, (n, n), device="cuda").half()
    c = torch.zeros((n, n), device="cuda", dtype=torch.float32)
    bufs, grid = [t.data_ptr() for t in (a, b, c)], gemm_grid(n, n)
    torch.cuda.synchronize()
    dev.launch(prog, "gemm_coopmat2", bufs, grid)
    exact = bool(torch.equal(c, a.float() @ b.float()))
    flop = 2.0 * n ** 3
    reps = 4
    t_ptx = float(np.median(dev.time(prog, "gemm_coopmat2", bufs, grid, reps)))
    t_blas = timed(lambda: torch.matmul(a, b), reps)
    tf_ptx, tf_blas = flop / t_ptx / 1e12, flop / t_blas / 1e12
    row = {"name": "coopmat2_f16", "device": torch.cuda.get_device_name(), "m": n, "n": n,
           "k": n, "dtype": "f16", "tflops": tf_ptx, "exact": exact,
           "command": f"python3 tools/gpu/nv2_ptx_check.py --perf {n}  (gen_coopmat2_gemm.py "
                      "IR, convert-coop-to-ptx)",
           "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
           "baseline": "torch.matmul (cuBLAS)", "baseline_tflops": tf_blas,
           "ratio": tf_ptx / tf_blas}
    return (f"perf n={n}: coopmat2 GEMM through PTX {tf_ptx:.1f} TFLOP/s ({t_ptx * 1e3:.3f} ms), "
            f"torch.matmul f16 {tf_blas:.1f} TFLOP/s ({t_blas * 1e3:.3f} ms), ratio "
            f"{tf_ptx / tf_blas:.3f}; first-run result exact: {exact}\nresult row for "
            "benchmarks/results/ptx.json: " + json.dumps(row))


if __name__ == "__main__":
    argv = sys.argv[1:]
    device = argv[argv.index("--device") + 1] if "--device" in argv else "cuda"
    if device not in ("cuda", "interp"):
        raise SystemExit("--device is cuda or interp")
    from coopdialect.errors import CoopError
    try:
        sys.exit(run(*options(argv, count=60), device=device))
    except CoopError as e:  # no driver / no GPU: one line, exit 1
        sys.exit(str(e))
