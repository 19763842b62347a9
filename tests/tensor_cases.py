"""The tensor-addressing and cooperative-matrix-2 cases the GPU tests run, on Vulkan
(tests/gpu/test_gpu_tensor.py) and through PTX (tests/gpu/test_gpu_nv2_ptx.py), and the CPU
tests run here on the same modules (test_gpu_modules.py: spirv-val; test_nv2_ptx_check.py: the
CUDA device on a fake driver; test_nv2_ptx.py: ptxas).

Every case is a kernel on inputs with the interpreter's outputs on the source IR (the expected
buffers, computed once and shared by a kernel's unfolded and folded cases), deterministic for
(count, seed); one numpy generator draws, in this order:

* `example`: the three tensor-addressing examples and the coopmat2 GEMM of
  coopdialect.kernels.coopmat2_gemm at 256x512x128, each as written (`_chain`) and after
  fold-tensor-views (`_folded`), on small-integer inputs;
* `random`: `count` random tensor-addressed loads and stores (tests/tensor_ir.py: every clamp
  mode in turn, layouts of Dim 1-5 with block sizes, slices and strides, views with permutations
  and clips; 16/32-row and -column subgroup matrices, the H200's granularity). Draws that the
  independent reference (tests/tensor_reference.py) calls undefined are drawn again; on every
  case kept the interpreter must equal the reference bit for bit (else `ReferenceMismatch`);
* `decode`: examples/block_decode_load.mlir (DecodeFunc, Q4_0), both kernels, unfolded and
  folded, 3 data sets each (tests/test_decode_func.make_q4_0);
* `probe` (Vulkan only): tensor-addressed loads built around the driver deviations of
  docs/tensor-addressing.md — block sizes x clamp modes, strides set before / after the block
  size or explicitly, 1-D and 2-D slices out of bounds on both sides, RepeatMirrored on a
  dimension of 1 with and without views. The tensor buffer holds its own element index and the
  matrix -(1 + r*N + c), so a GPU value tells which element was loaded.

Random cases and probes carry `alts()`: what each documented H200 Vulkan driver deviation
(`set_dimension_floor`, `mirrored_dim1_index0`) would give instead, where that differs
(computed when asked: only a GPU result that differs needs them).
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import tensor_ir
import tensor_reference as ref

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = [  # (name, path, kernel, grid)
    ("gemm_coopmat2_f16", "examples/gemm_coopmat2_f16.mlir", "gemm_coopmat2", (2, 2, 1)),
    ("conv_patch_clamped", "examples/conv_patch_clamped.mlir", "conv_patch", (4, 4, 1)),
    ("softmax_rows", "examples/softmax_rows.mlir", "softmax_rows", (1, 4, 1)),
]
MODES = ["Undefined", "Constant", "ClampToEdge", "Repeat", "RepeatMirrored"]
DECODE = "examples/block_decode_load.mlir"
FOLD = "fold-tensor-views"
COUNT, SEED = 60, 2026


class ReferenceMismatch(AssertionError):
    """The interpreter and tests/tensor_reference.py disagree on a case the reference defines."""


def raw(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def same_bits(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return all(np.array_equal(raw(x), raw(y)) for x, y in zip(a, b, strict=True))


class Kernel:
    """A kernel on its inputs and the interpreter's outputs on the source IR (computed on first
    use, or given)."""

    def __init__(self, text: str, source: str, kernel: str, grid: tuple, inputs: list,
                 expected: list | None = None):
        self.text, self.source, self.kernel, self.grid = text, source, kernel, grid
        self.inputs, self._expected = inputs, expected

    def expected(self) -> list[np.ndarray]:
        if self._expected is None:
            import parsed
            from coopdialect import api

            bufs = [b.copy() for b in self.inputs]
            api.run_kernel(parsed.parse(self.text, self.source), self.kernel, bufs, self.grid)
            self._expected = bufs
        return self._expected


@dataclass
class Case:
    name: str
    k: Kernel
    pipeline: str | None  # run before the device's conversion
    group: str  # example / random / decode / probe
    info: str = ""
    spec: dict | None = None  # tests/tensor_ir.py's case (random cases and probes)

    def alts(self) -> dict:
        """Documented driver deviation -> the buffers it gives, where they differ from the
        interpreter's (`driver_alternatives`)."""
        if self.spec is None:
            return {}
        buf, mat = self.k.inputs
        return driver_alternatives(self.spec, buf, mat, self.k.expected())

    def ulp(self, device: str) -> list[int]:
        """Per buffer, the tolerance in ulp: softmax's Y divides, and Vulkan's OpFDiv is within
        2.5 ulp (PTX's div.rn.f32 is exact); everything else bit for bit."""
        soft = device == "vulkan" and self.name.startswith("softmax_rows")
        return [3 if soft and i == 1 else 0 for i in range(len(self.k.inputs))]


def example_inputs(name: str, rng: np.random.Generator) -> list[np.ndarray]:
    if name == "gemm_coopmat2_f16":
        return [rng.integers(-4, 5, (256, 128)).astype(np.float16),
                rng.integers(-4, 5, (256, 128)).astype(np.float16), np.zeros((256, 256), np.float32)]
    if name == "conv_patch_clamped":
        return [rng.integers(-1000, 1000, (64, 64)).astype(np.float16),
                np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float16)]
    if name == "gemm_coopmat2_gen":
        return [rng.integers(-4, 5, (256, 128)).astype(np.float16),
                rng.integers(-4, 5, (128, 512)).astype(np.float16), np.zeros((256, 512), np.float32)]
    return [rng.integers(-64, 65, (64, 16)).astype(np.float32), np.zeros((64, 16), np.float32),
            np.zeros((32, 8), np.float32)]


def example_sources() -> list[tuple[str, str, str, str, tuple]]:
    """(name, IR text, source name, kernel, grid) of the examples and the generated GEMM."""
    from coopdialect.kernels.coopmat2_gemm import coopmat2_gemm_ir, grid

    out = [(n, (ROOT / p).read_text(), p, k, g) for n, p, k, g in EXAMPLES]
    out.append(("gemm_coopmat2_gen", coopmat2_gemm_ir(256, 512, 128), "coopmat2_gemm(256,512,128)",
                "gemm_coopmat2", grid(256, 512)))
    return out


def driver_alternatives(case: dict, buf: np.ndarray, mat: np.ndarray, want: list) -> dict:
    """What the H200's Vulkan driver gives instead of the spec for the two deviations
    documented in docs/tensor-addressing.md (only where it differs from `want`): rule name ->
    [buf, mat]."""
    alts = {}
    floor = tensor_ir.expected(case, buf, mat, rounding="floor")
    if floor is not None and not same_bits(list(floor), want):
        alts["set_dimension_floor"] = list(floor)
    t = ref.run_chain(case["ldim"], case["lops"])
    if (case["kind"] == "load" and case["mode"] == "RepeatMirrored"
            and 1 in t["layoutDimension"][1:]):
        v = case["view"]
        view = v and (ref.run_chain(v["vdim"], v["vops"], view=True), v["has_dims"], v["perm"])
        m = want[1].copy()
        for r in range(case["rows"]):
            for c in range(case["cols"]):
                if ref.element(t, case["mode"], r, c, case["cols"], view)[0] == "ok":
                    m[r, c] = buf[0]
        if not np.array_equal(raw(m), raw(want[1])):
            alts["mirrored_dim1_index0"] = [want[0], m]
    return alts


def describe(case: dict) -> str:
    v = case["view"]
    return (f"{case['kind']} {case['etype']} {case['rows']}x{case['cols']} Dim{case['ldim']} "
            f"{case['mode']} {'+'.join(o for o, _ in case['lops']) or '-'}"
            + (f" view{v['vdim']}{v['perm']}{'+'.join(o for o, _ in v['vops'])}" if v else ""))


def random_cases(count: int, seed: int, rng: np.random.Generator) -> list[Case]:
    """`count` random tensor cases, each checked interpreter = reference (module docstring)."""
    import parsed
    from coopdialect import api

    prng = random.Random(seed)
    out: list[Case] = []
    tried = 0
    while len(out) < count:
        tried += 1
        if tried > 50 * count:
            raise RuntimeError(f"only {len(out)} valid random cases in {tried} draws")
        case = tensor_ir.random_case(prng)
        case["mode"] = MODES[len(out) % len(MODES)]
        case["rows"], case["cols"] = prng.choice([16, 32]), prng.choice([16, 32])
        case["dynamic"] = set()  # kernel arguments are memrefs only
        text, _ = tensor_ir.case_ir(case)
        buf, mat = tensor_ir.case_inputs(case, rng)
        want = tensor_ir.expected(case, buf, mat)
        if want is None:
            continue  # undefined behaviour or invalid IR: draw again
        name = f"random_{len(out):03d}"
        got = [buf.copy(), mat.copy()]
        try:
            api.run_kernel(parsed.parse(text, name), "k", got, (1, 1, 1))
        except Exception as e:  # noqa: BLE001 - the reference says defined: a disagreement
            raise ReferenceMismatch(f"{name}: the interpreter failed on a case the reference "
                                    f"defines ({describe(case)}): {e}") from None
        if not same_bits(got, list(want)):
            raise ReferenceMismatch(f"{name}: interpreter != reference ({describe(case)})")
        out.append(Case(name, Kernel(text, name, "k", (1, 1, 1), [buf, mat], got), None,
                        "random", describe(case), case))
    return out


def decode_cases(rng: np.random.Generator) -> list[Case]:
    from test_decode_func import make_q4_0

    m, kk, n = 64, 128, 32
    text = (ROOT / DECODE).read_text()
    out = []
    for fold in (False, True):
        for s in range(3):
            q, _ = make_q4_0(rng)
            b = rng.integers(-4, 5, (kk, n)).astype(np.float16)
            for kernel, bufs, grid in (
                    ("dequant_q4", [q, np.zeros((m, kk), np.float16)], (kk // 16, m // 16, 1)),
                    ("gemm_q4", [q, b, np.zeros((m, n), np.float32)], (n // 16, m // 16, 1))):
                out.append(Case(f"{kernel}_{'folded' if fold else 'unfolded'}_{s}",
                                Kernel(text, DECODE, kernel, grid, bufs), FOLD if fold else None,
                                "decode"))
    return out


CLAMP_BITS = {"f32": 0xC59C4000, "f16": 0xEC00}  # -5000.0 / -4096.0: never a loaded value


def probes() -> list[tuple[str, dict]]:
    """(name, case) in tests/tensor_ir.py's case format (loads, constant operands)."""
    out: list[tuple[str, dict]] = []

    def add(name: str, ldim: int, lops: list, mode: str, etype: str = "f32", rows: int = 16,
            cols: int = 16, view: dict | None = None) -> None:
        lops = lops + [("set_clamp_value", [CLAMP_BITS[etype]])] if mode == "Constant" else lops
        out.append((name, {"ldim": ldim, "mode": mode, "kind": "load", "lops": lops,
                           "rows": rows, "cols": cols, "etype": etype, "mem": 2048,
                           "view": view, "dynamic": set()}))

    # an exact chain once seen to differ (ClampToEdge, Dim 4, layoutDimension (1,5,4,5),
    # blockSize (2,1,1,3), the last set_dimension after the block sizes), then the same final
    # state reached in other ways
    orig = [("set_dimension", [6, 6, 5, 3]), ("set_block_size", [3, 1, 2, 2]),
            ("set_block_size", [3, 3, 3, 1]), ("set_block_size", [2, 1, 1, 3]),
            ("set_dimension", [1, 5, 4, 5])]
    for mode in MODES:  # no coordinate is out of bounds: the mode must not matter
        add(f"r12_orig_{mode}", 4, orig, mode)
    add("r12_orig_ClampToEdge_f16", 4, orig, "ClampToEdge", "f16")
    d4 = [1, 5, 4, 5]
    for tag, bs in (("bs2113", [2, 1, 1, 3]), ("bs1113", [1, 1, 1, 3]), ("bs2111", [2, 1, 1, 1]),
                    ("bs1115", [1, 1, 1, 5]), ("bs1111", [1, 1, 1, 1]), ("bs1213", [1, 2, 1, 3]),
                    ("bs1123", [1, 1, 2, 3])):
        add(f"d4_{tag}_bsfirst", 4, [("set_block_size", bs), ("set_dimension", d4)], "ClampToEdge")
    # the block sizes after set_dimension: strides stay in elements (100, 20, 5, 1)
    add("d4_bs2113_dimfirst", 4, [("set_dimension", d4), ("set_block_size", [2, 1, 1, 3])],
        "ClampToEdge")
    # explicit strides equal to what set_dimension computes after the block size (40, 8, 2, 1)
    add("d4_bs2113_explicit", 4, [("set_block_size", [2, 1, 1, 3]), ("set_dimension", d4),
                                  ("set_stride", [40, 8, 2, 1])], "ClampToEdge")
    # 1-D: dimension 5, block 3 (does not divide) / 5 (divides); slice -2..6 goes out on both sides
    for bs in (3, 5):
        for mode in MODES[1:]:
            add(f"d1_bs{bs}_slice_{mode}", 1, [("set_block_size", [bs]), ("set_dimension", [5]),
                                               ("slice", [-2, 9])], mode)
    # 2-D: 4x5, blocks (1,3) / (1,5) / (2,3), strides set after the block size; slice out of
    # bounds on both sides in both dimensions (rows -1..4, columns -2..6)
    for tag, bs in (("bs13", [1, 3]), ("bs15", [1, 5]), ("bs23", [2, 3])):
        for mode in MODES[1:]:
            add(f"d2_{tag}_slice_{mode}", 2, [("set_block_size", bs), ("set_dimension", [4, 5]),
                                              ("slice", [-1, 6, -2, 9])], mode)
        add(f"d2_{tag}_inbounds", 2, [("set_block_size", bs), ("set_dimension", [4, 5])],
            "ClampToEdge")
    add("d2_bs13_dimfirst_slice_ClampToEdge", 2,
        [("set_dimension", [4, 5]), ("set_block_size", [1, 3]), ("slice", [-1, 6, -2, 9])],
        "ClampToEdge")
    # RepeatMirrored with a layoutDimension of 1 and every coordinate in bounds (defined by the
    # text: the clamp formula, which would divide by 2*1-2 = 0, is not reached), with and without
    # a view; the other modes and dimensions without a 1 as controls
    for tag, dims in (("651", [6, 5, 1]), ("165", [1, 6, 5]), ("615", [6, 1, 5]),
                      ("652", [6, 5, 2])):
        for mode in ("RepeatMirrored", "Repeat", "ClampToEdge"):
            add(f"m{tag}_noview_{mode}", 3, [("set_dimension", dims)], mode)
            add(f"m{tag}_spanview_{mode}", 3, [("set_dimension", dims)], mode,
                view={"vdim": 3, "has_dims": False, "perm": [0, 1, 2], "vops": []})
        add(f"m{tag}_ownview_RepeatMirrored", 3, [("set_dimension", dims)], "RepeatMirrored",
            view={"vdim": 3, "has_dims": True, "perm": [0, 1, 2],
                  "vops": [("set_dimension", dims)]})
        add(f"m{tag}_clipview_RepeatMirrored", 3, [("set_dimension", dims)], "RepeatMirrored",
            view={"vdim": 3, "has_dims": False, "perm": [0, 1, 2],
                  "vops": [("set_clip", [1, 8, 2, 8])]})
    return out


def probe_cases() -> list[Case]:
    out = []
    for name, case in probes():
        text, _ = tensor_ir.case_ir(case)
        dt = tensor_ir.NP[case["etype"]]
        buf = np.arange(case["mem"]).astype(dt)
        mat = (-1 - np.arange(case["rows"] * case["cols"])).reshape(case["rows"], case["cols"])
        mat = mat.astype(dt)
        out.append(Case(f"probe_{name}", Kernel(text, f"probe_{name}", "k", (1, 1, 1), [buf, mat]),
                        None, "probe", describe(case), case))
    return out


def names(device: str, count: int = COUNT) -> list[str]:
    """The case names of `cases(device, count)`, without building any case (test ids)."""
    ex = [f"{n}_{s}" for n, *_ in EXAMPLES + [("gemm_coopmat2_gen",)] for s in ("chain", "folded")]
    rnd = [f"random_{i:03d}" for i in range(count)]
    if device == "vulkan":
        return ex + rnd + [f"probe_{n}" for n, _ in probes()]
    return ex + rnd + [f"{k}_{f}_{s}" for f in ("unfolded", "folded") for s in range(3)
                       for k in ("dequant_q4", "gemm_q4")]


def example_cases(rng: np.random.Generator) -> list[Case]:
    out = []
    for name, text, source, kernel, grid in example_sources():
        k = Kernel(text, source, kernel, grid, example_inputs(name, rng))
        out += [Case(f"{name}_{'folded' if fold else 'chain'}", k, FOLD if fold else None,
                     "example") for fold in (False, True)]
    return out


GROUPS = {"vulkan": ("example", "random", "probe"), "cuda": ("example", "random", "decode")}


def group(device: str, which: str, count: int = COUNT, seed: int = SEED) -> list[Case]:
    """The cases of one group of `cases(device, count, seed)`, the same draws, without building
    the later groups (the earlier ones' inputs are drawn again: cheap, no interpretation)."""
    if which == "probe":
        return probe_cases()  # no random draws
    rng = np.random.default_rng(seed)
    out = example_cases(rng)
    if which == "example":
        return out
    out = random_cases(count, seed, rng)  # the interpreter checked against the reference
    return out if which == "random" else decode_cases(rng)


@functools.lru_cache(maxsize=4)
def cases(device: str, count: int = COUNT, seed: int = SEED) -> dict[str, Case]:
    """Every case for `device` ("vulkan": examples, random, probes; "cuda": examples, random,
    decode), by name, in `names` order; deterministic for (count, seed)."""
    rng = np.random.default_rng(seed)
    out = example_cases(rng) + random_cases(count, seed, rng)
    out += probe_cases() if device == "vulkan" else decode_cases(rng)
    assert [c.name for c in out] == names(device, count)
    return {c.name: c for c in out}


def run_on(dev, case: Case) -> list[np.ndarray]:
    """The case's buffers after one launch on `dev` (a coopdialect.runtime Device), with the
    case's pipeline before the device's conversion."""
    import parsed
    from coopdialect.runtime import run_kernel

    got = [b.copy() for b in case.k.inputs]
    run_kernel(parsed.parse(case.k.text, case.k.source), case.k.kernel, got, case.k.grid, dev,
               pipeline=case.pipeline)
    return got


def mismatch(case: Case, got: list[np.ndarray], device: str) -> str | None:
    """None when every buffer equals the interpreter's (within `case.ulp(device)`), else one
    line per differing buffer."""
    from coopdialect.runtime.verdict import compare

    verdicts = [compare(str(i), "", g, e, u)
                for i, (g, e, u) in enumerate(zip(got, case.k.expected(), case.ulp(device)))]
    return None if all(v.ok for v in verdicts) else "; ".join(v.line() for v in verdicts)


def deviation(case: Case, got: list[np.ndarray]) -> str | None:
    """The documented driver deviation whose prediction `got` equals, bit for bit, or None."""
    return next((rule for rule, bufs in case.alts().items() if same_bits(got, bufs)), None)


def compile_ptx(text: str, source: str, fold: bool = False) -> str:
    """PTX text of IR text (optionally after fold-tensor-views): what the CUDA device compiles
    for a case with pipeline None / `fold-tensor-views`. Raises CoopError for refused IR."""
    import parsed
    from coopdialect.ptx import emit_ptx
    from coopdialect.runtime.device import lower

    return emit_ptx(lower(parsed.parse(text, source), FOLD if fold else None, "convert-coop-to-ptx"))
