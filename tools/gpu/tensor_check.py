"""Tensor addressing + cooperative-matrix-2 SPIR-V on the H200 (Vulkan) against the interpreter.

    python3 tools/gpu/tensor_check.py [--cases 60] [--seed 2026] [--probes] [--save-all] [--out D]

Runs on the GPU machine with coopdialect installed (tools/gpu_wheelhouse.sh), through
coopdialect.runtime's Vulkan device. `cases()` builds the three tensor-addressing examples and the
size-parametrized coopmat2 GEMM (tools/gpu/gen_coopmat2_gemm.py) at a small size, each with and
without fold-tensor-views, plus `--cases` random tensor-addressed loads/stores built by
tests/tensor_ir.py (every clamp mode in turn, layouts of Dim 1-5 with block sizes, slices and
strides, views with permutations and clips; 16/32-row and -column subgroup matrices, the H200's
granularity); `--probes` adds tools/gpu/tensor_block_probe.py's block-size x clamp-mode probes.
Inputs are small integers (exact in f16/f32); the expected buffers come from the INTERPRETER on
the source IR (for the random cases the interpreter must agree with the independent reference in
tests/tensor_reference.py, else the check stops). Random cases whose reference says undefined
behaviour (Undefined clamp mode out of bounds, a broken stride rule, conflicting stores) are
drawn again. tests/test_gpu_modules.py runs spirv-val on every module `cases()` builds (same
seeds), since the GPU machine has no spirv-val.

Every buffer is compared bit for bit, except softmax_rows' Y, which divides (Vulkan's OpFDiv
precision is 2.5 ULP): there the bound is 3 ULP of the interpreter's f32 value. A random case
that differs from the interpreter but equals, bit for bit, what one of the two documented H200
driver deviations predicts (docs/tensor-addressing.md: `set_dimension_floor`,
`mirrored_dim1_index0`; built from tests/tensor_reference.py) is reported as KNOWN, still
counted as a mismatch. `--save-all` keeps every case's GPU result buffer.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT / "tests")]
from gpu_check_common import report  # noqa: E402

from coopdialect.runtime.verdict import compare  # noqa: E402

EXAMPLES = [
    # (name, example path, kernel, grid)
    ("gemm_coopmat2_f16", "examples/gemm_coopmat2_f16.mlir", "gemm_coopmat2", (2, 2, 1)),
    ("conv_patch_clamped", "examples/conv_patch_clamped.mlir", "conv_patch", (4, 4, 1)),
    ("softmax_rows", "examples/softmax_rows.mlir", "softmax_rows", (1, 4, 1)),
]
MODES = ["Undefined", "Constant", "ClampToEdge", "Repeat", "RepeatMirrored"]


@dataclass
class Case:
    name: str
    text: str
    kernel: str
    grid: tuple
    pipeline: str | None
    inputs: list
    expected: list
    ulp: list = field(default_factory=list)  # per buffer: 0 (bit-exact) or 3
    info: dict = field(default_factory=lambda: {"kind": "example"})
    alts: dict = field(default_factory=dict)  # driver rule -> the buffers it predicts


def _example_inputs(name: str, rng: np.random.Generator) -> list[np.ndarray]:
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


def _driver_alternatives(case: dict, buf: np.ndarray, mat: np.ndarray, want) -> dict:
    """What the H200 driver gives instead of the spec for the two deviations documented in
    docs/tensor-addressing.md (only where it differs from `want`): rule name -> [buf, mat]."""
    import tensor_ir
    import tensor_reference as ref

    alts = {}
    floor = tensor_ir.expected(case, buf, mat, rounding="floor")
    if floor is not None and not all(np.array_equal(a.view(np.uint8), b.view(np.uint8))
                                     for a, b in zip(floor, want)):
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
        if not np.array_equal(m.view(np.uint8), want[1].view(np.uint8)):
            alts["mirrored_dim1_index0"] = [want[0], m]
    return alts


def cases(n_cases: int = 60, seed: int = 2026, probes: bool = False):
    """Every case of the check, in order (deterministic for given arguments)."""
    import tensor_ir
    from coopdialect.kernels.coopmat2_gemm import coopmat2_gemm_ir, grid as gemm_grid

    from coopdialect import api

    rng = np.random.default_rng(seed)
    sources = [(n, (ROOT / p).read_text(), p, k, g) for n, p, k, g in EXAMPLES]
    sources.append(("gemm_coopmat2_gen", coopmat2_gemm_ir(256, 512, 128),
                    "gen_coopmat2_gemm(256,512,128)", "gemm_coopmat2", gemm_grid(256, 512)))
    for name, text, path, kernel, grid in sources:
        inputs = _example_inputs(name, rng)
        expected = [b.copy() for b in inputs]
        api.run_kernel(api.parse(text, path), kernel, expected, grid)
        ulp = [3 if name == "softmax_rows" and i == 1 else 0 for i in range(len(inputs))]
        for fold in (False, True):
            yield Case(f"{name}_{'folded' if fold else 'chain'}", text, kernel, grid,
                       "fold-tensor-views" if fold else None, inputs, expected, ulp)
    prng = random.Random(seed)
    built = tried = 0
    while built < n_cases:
        tried += 1
        if tried > 50 * n_cases:
            raise SystemExit(f"only {built} valid random cases in {tried} draws")
        case = tensor_ir.random_case(prng)
        case["mode"] = MODES[built % len(MODES)]
        case["rows"], case["cols"] = prng.choice([16, 32]), prng.choice([16, 32])
        case["dynamic"] = set()  # kernel arguments are buffers only in the Vulkan convention
        text, _ = tensor_ir.case_ir(case)
        buf, mat = tensor_ir.case_inputs(case, rng)
        want = tensor_ir.expected(case, buf, mat)
        if want is None:
            continue
        got = [buf.copy(), mat.copy()]
        try:
            api.run_kernel(api.parse(text, "random"), "k", got, (1, 1, 1))
        except Exception as e:  # noqa: BLE001 - the reference says defined: a disagreement
            raise SystemExit(f"interpreter failed on a case the reference accepts: {e}") from None
        if not all(np.array_equal(a.view(np.uint8), b.view(np.uint8)) for a, b in zip(got, want)):
            raise SystemExit("interpreter and reference disagree on a random case")
        info = {"kind": case["kind"], "mode": case["mode"], "ldim": case["ldim"],
                "view": None if case["view"] is None else {"vdim": case["view"]["vdim"],
                                                           "perm": case["view"]["perm"],
                                                           "ops": [o for o, _ in case["view"]["vops"]]},
                "layout_ops": [o for o, _ in case["lops"]], "shape": [case["rows"], case["cols"]],
                "etype": case["etype"]}
        yield Case(f"random_{built:03d}", text, "k", (1, 1, 1), None, [buf, mat], got, [0, 0],
                   info, _driver_alternatives(case, buf, mat, want))
        built += 1
    if probes:
        from tensor_block_probe import probe_cases
        yield from (Case(*c, ulp=[0, 0], info=i) for c, i in probe_cases())


def _describe(m: dict) -> str:
    if m["kind"] == "example":
        return "example"
    view = m["view"]
    return (f"{m['kind']} {m['etype']} {m['shape'][0]}x{m['shape'][1]} Dim{m['ldim']} {m['mode']} "
            f"{'+'.join(m['layout_ops']) or '-'}"
            + (f" view{view['vdim']}{view['perm']}{'+'.join(view['ops'])}" if view else ""))


def run(argv: list[str]) -> int:
    from coopdialect import api
    from coopdialect.runtime import open_device, run_kernel

    def value(flag, default):
        return type(default)(argv[argv.index(flag) + 1]) if flag in argv else default

    out, save_all = value("--out", ""), "--save-all" in argv
    lines, failures, known = [], 0, 0
    kept: dict[str, np.ndarray] = {}  # GPU result buffers: failing cases (all: --save-all)
    with open_device("vulkan") as dev:
        info = dev.ctx.device_info()
        lines.append(f"device: {info['name']}, driver {info['driver_version']}, "
                     f"Vulkan {info['api_version']}")
        for c in cases(value("--cases", 60), value("--seed", 2026), "--probes" in argv):
            got = [b.copy() for b in c.inputs]
            try:
                r = run_kernel(api.parse(c.text, c.name), c.kernel, got, c.grid, dev,
                               pipeline=c.pipeline)
                verdicts = [compare(str(i), "", g, e, u)
                            for i, (g, e, u) in enumerate(zip(got, c.expected, c.ulp))]
                ok, status = all(v.ok for v in verdicts), "PASS"
                detail = "; ".join(v.line().split(": ", 1)[1] for v in verdicts)
            except Exception as e:  # noqa: BLE001 - report it and go on with the other cases
                ok, detail, r = False, f"{type(e).__name__}: {e}", None
            if not ok:
                status = "FAIL"
                for rule, bufs in c.alts.items():  # a documented driver deviation?
                    if r is not None and all(np.array_equal(g.view(np.uint8), b.view(np.uint8))
                                             for g, b in zip(got, bufs)):
                        status, detail = "KNOWN", f"{detail}; equals the driver rule {rule}"
                        known += 1
                        break
                failures += 1
            if save_all or not ok:
                kept[c.name] = got[-1] if c.info["kind"] == "load" else got[0]
            lines.append(f"[{status}] {c.name} ({_describe(c.info)}): {detail}")
    lines.append(f"{len(lines) - 1 - failures}/{len(lines) - 1} cases match the interpreter; of the "
                 f"{failures} others, {known} equal a documented driver deviation")
    status = report(lines, Path(out) if out else None, "tensor_check.txt", failures)
    if out and kept:  # --save-all: every case's result buffer, else the failing ones
        np.savez(Path(out) / ("tensor_check_outputs.npz" if save_all else
                              "tensor_check_failures.npz"), **kept)
    return status


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
