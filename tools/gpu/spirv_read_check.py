"""Run glslang's cooperative-matrix shaders as glslang wrote them and as coopdialect's reader and
writer rewrote them, on the H200 through Vulkan, and compare both with numpy models of the GLSL.

    python3 tools/gpu/spirv_read_check.py [--seed 2026] [--out D]   # on the GPU (coopdialect installed)
    python tools/gpu/spirv_read_check.py --regen                    # here: glslang -> testdata/*.spv

The GPU machine has no glslang, so glslang's binaries are committed: `tools/gpu/testdata/X.spv` is
`glslangValidator -V --target-env vulkan1.3 -DSCOPE_SUBGROUP=<the grammar's Scope Subgroup>` of
the case's `X.comp` (`--regen` rewrites them). tests/test_spirv_read_check.py compiles every
shader again and requires the committed bytes, runs spirv-val on glslang's binary and on the
rewrite, and runs this check with the interpreter (on the raised binaries) standing in for the
Vulkan device.

For each case the check rewrites glslang's binary (`deserialize` then `serialize`, on the GPU
machine), draws small-integer inputs (every product and sum is exact in f16/f32), computes the
numpy model's output, and dispatches both binaries through coopdialect.runtime's Vulkan device
with the same buffers and push constants. A case passes when the rewrite's output buffers equal
glslang's bit for bit and both equal the model.

A multiply-add the device does not list among its VkCooperativeMatrixPropertiesKHR (M, N, K,
component types, saturatingAccumulation; VUID-RuntimeSpirv-MSize-08975 ...,
VUID-RuntimeSpirv-saturatingAccumulation-08983) has no defined result there: the buffers such a
multiply-add writes (`Case.needs_row`) are compared with the model only where the device lists
it, and the line says which rows were missing. gemm_select's signed 8-bit 16x16x16 MulAdd with
SaturatingAccumulation is such a one on the H200 (its s8 rows are 16x16x32 and 16x8x32, none
saturating).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _ints(rng, n, dtype, lo=-3, hi=4):
    return rng.integers(lo, hi, n).astype(dtype)


def _gemm_f16_f32(rng):
    """tools/gpu/testdata/coopmat_khr_f16_f32.comp: D = A·B + C, push constants M, N, K."""
    M, N, K = 64, 64, 64
    a, b, c = _ints(rng, M * K, np.float16), _ints(rng, K * N, np.float16), _ints(rng, M * N, np.float32)
    d = np.zeros(M * N, np.float32)
    want = (a.reshape(M, K).astype(np.float64) @ b.reshape(K, N).astype(np.float64) + c.reshape(M, N))
    return ([a, b, c, d], {3: want.astype(np.float32).reshape(-1)}, (N // 16, M // 16, 1),
            np.array([M, N, K], np.uint32).tobytes())


def _gemm_select(rng):
    """tests/data/raise_gemm_select.comp: a K loop, a selection on the workgroup id, an int8
    saturating MulAdd; push constants K, N (uint) and alpha (float)."""
    M = N = K = 32
    a, b = _ints(rng, M * K, np.float16), _ints(rng, K * N, np.float16)
    q = _ints(rng, 512, np.int8, -128, 128)
    d, r = np.zeros(M * N, np.float32), np.zeros(4 * 256, np.int32)
    alpha = 0.5
    ab = a.reshape(M, K).astype(np.float64) @ b.reshape(K, N).astype(np.float64)
    ab[:, :16] *= alpha
    ab[:, 16:] -= 1
    qa, qb = q[:256].reshape(16, 16).astype(np.int64), q[256:].reshape(16, 16).T.astype(np.int64)
    tile = np.clip(qa @ qb + 2147483000, -2**31, 2**31 - 1).astype(np.int32).reshape(-1)
    push = np.array([K, N], np.uint32).tobytes() + np.array([alpha], np.float32).tobytes()
    return [a, b, d, q, r], {2: ab.astype(np.float32).reshape(-1), 4: np.tile(tile, 4)}, (2, 2, 1), push


def _khr(rng):
    """tests/data/coopmat_khr.comp: c = a[0:256] · a[256:512] (16×16, row-major)."""
    a, c = _ints(rng, 512, np.float16), np.zeros(256, np.float32)
    want = a[:256].reshape(16, 16).astype(np.float64) @ a[256:].reshape(16, 16).astype(np.float64)
    return [a, c], {1: want.astype(np.float32).reshape(-1)}, (1, 1, 1), None


def _nv(rng):
    """tests/data/coopmat_nv.comp (SPV_NV_cooperative_matrix): a loop of 4 MulAdds, acc*2 - acc,
    stored as f32 and converted to f16."""
    a = _ints(rng, 4096, np.float16)
    c, h = np.zeros(256, np.float32), np.zeros(256, np.float16)
    acc = np.zeros((16, 16))
    for k in range(4):
        ma = np.array([[a[k * 16 + i * 64 + j] for j in range(16)] for i in range(16)], np.float64)
        mb = np.array([[a[k * 1024 + j * 64 + i] for j in range(16)] for i in range(16)], np.float64)
        acc += ma @ mb
    acc = acc * 2 - acc
    return [a, c, h], {1: acc.astype(np.float32).reshape(-1), 2: acc.astype(np.float16).reshape(-1)}, (1, 1, 1), None


def _trivial(rng):
    """tools/gpu/testdata/trivial.comp: o[i] = a[i]·b[i] + i for i < n (push constant n)."""
    n = 256
    a, b, o = _ints(rng, n, np.float32), _ints(rng, n, np.float32), np.zeros(n, np.float32)
    return [a, b, o], {2: a * b + np.arange(n, dtype=np.float32)}, (n // 64, 1, 1), np.array([n], np.uint32).tobytes()


CASES = {
    "gemm_f16_f32": ("tools/gpu/testdata/coopmat_khr_f16_f32.comp", _gemm_f16_f32),
    "gemm_select": ("tests/data/raise_gemm_select.comp", _gemm_select),
    "khr": ("tests/data/coopmat_khr.comp", _khr),
    "nv": ("tests/data/coopmat_nv.comp", _nv),
    "trivial": ("tools/gpu/testdata/trivial.comp", _trivial),
}
# buffers written by a KHR multiply-add of the shader: (M, N, K, A type) of it -> buffer index
NEEDS_ROW = {"gemm_select": {(16, 16, 16, "s8"): 4}}

_COMPONENT = {("int", 8, True): "s8", ("int", 8, False): "u8", ("int", 32, True): "s32", ("int", 32, False): "u32",
              ("float", 16, None): "f16", ("float", 32, None): "f32"}


def mul_adds(binary: bytes) -> list[dict]:
    """Each OpCooperativeMatrixMulAddKHR of `binary` as a row of VkCooperativeMatrixPropertiesKHR
    would describe it (M, N, K, A, B, C, Result component type names, saturatingAccumulation)."""
    from xdsl.dialects.builtin import IntegerType

    from coopdialect.dialects import spirv
    from coopdialect.spirv.reader import deserialize

    def name(t, signed: bool) -> str:
        if isinstance(t, IntegerType):
            return _COMPONENT.get(("int", t.width.data, signed), str(t))
        return _COMPONENT.get(("float", t.bitwidth, None), str(t))

    out = []
    for op in deserialize(binary).walk():
        if isinstance(op, spirv.KHRCooperativeMatrixMulAddOp):
            flags = op.matrix_operands.data if op.matrix_operands is not None else ""
            a, b, c, r = op.a.type, op.b.type, op.c.type, op.result.type
            out.append(dict(M=a.rows.data, N=b.columns.data, K=a.columns.data,
                            A=name(a.element_type, "MatrixASigned" in flags),
                            B=name(b.element_type, "MatrixBSigned" in flags),
                            C=name(c.element_type, "MatrixCSigned" in flags),
                            Result=name(r.element_type, "MatrixResultSigned" in flags),
                            saturatingAccumulation="SaturatingAccumulation" in flags, scope=a.scope.data.lower()))
    return out


def missing_rows(binary: bytes, rows: list[dict]) -> list[dict]:
    """The multiply-adds of `binary` that no row of the device's table describes."""
    return [m for m in mul_adds(binary) if m not in rows]



def binary_path(src: str) -> Path:
    """The committed glslang binary of shader `src` (a path from ROOT): testdata/<stem>.spv."""
    return HERE / "testdata" / (Path(src).stem + ".spv")


def compile_glslang(src: str, out: Path, exe: str = "glslangValidator") -> bytes:
    """glslang's SPIR-V of shader `src` (written to `out`); raises CalledProcessError."""
    from coopdialect.spirv.grammar_tables import ENUMS

    subprocess.run([exe, "-V", "--target-env", "vulkan1.3",
                    f"-DSCOPE_SUBGROUP={ENUMS['Scope']['Subgroup'][0]}", "-o", str(out),
                    str(ROOT / src)], check=True, capture_output=True)
    return out.read_bytes()


def rewrite(theirs: bytes, file: str) -> bytes:
    """The reader+writer's rewrite of a binary: serialize(deserialize(theirs))."""
    from coopdialect.spirv.reader import deserialize
    from coopdialect.spirv.writer import serialize

    return serialize(deserialize(theirs, file=file))


def prepared(seed: int = 2026):
    """Per case, in CASES order: (name, glslang's binary, the rewrite, input buffers,
    {output buffer index: the model's output}, grid, push-constant bytes or None)."""
    rng = np.random.default_rng(seed)
    for name, (src, model) in CASES.items():
        path = binary_path(src)
        theirs = path.read_bytes()
        inputs, expected, grid, push = model(rng)
        yield name, theirs, rewrite(theirs, str(path)), inputs, expected, grid, push


def _arg(argv: list[str], flag: str, default=None):
    return argv[argv.index(flag) + 1] if flag in argv else default


def main(argv: list[str]) -> int:
    if "--regen" in argv:
        for src, _ in CASES.values():
            compile_glslang(src, binary_path(src))
            print(f"wrote {binary_path(src).relative_to(ROOT)}")
        return 0
    sys.path.insert(0, str(HERE))
    from gpu_check_common import bytes_differ, report

    from coopdialect.runtime import open_device
    from coopdialect.runtime.device import DeviceError

    out = Path(_arg(argv, "--out")) if "--out" in argv else None
    lines, failures, cases = [], 0, list(prepared(int(_arg(argv, "--seed", 2026))))
    try:
        dev = open_device("vulkan")
    except DeviceError as e:  # no loader, driver or GPU: one line, not a traceback
        print(e, file=sys.stderr)
        return 1
    with dev:
        info = dev.ctx.device_info()
        lines.append(f"device: {info['name']}, driver {info['driver_version']}, Vulkan {info['api_version']}")
        rows = dev.ctx.cooperative_matrix_properties()
        for name, theirs, ours, inputs, expected, grid, push in cases:
            try:  # VulkanDevice.launch has no push constants: dispatch through its runner, dev.ctx
                got = {which: dev.ctx.run_compute(dev.load(binary).binary, inputs, grid, entry="main",
                                                  push_constants=push)
                       for which, binary in (("glslang", theirs), ("rewrite", ours))}
                same = bytes_differ(got["rewrite"], {i: got["glslang"][i] for i in expected})[0] == 0
                missing = missing_rows(theirs, rows)
                undefined = {i for m in missing for key, i in NEEDS_ROW.get(name, {}).items()
                             if key == (m["M"], m["N"], m["K"], m["A"])}
                defined = {i: w for i, w in expected.items() if i not in undefined}
                model = all(bytes_differ(got[w], defined)[0] == 0 for w in got)
                status = "PASS" if same and model else "FAIL"
                text = f": rewrite == glslang's binary: {same}; both == numpy model: {model}"
                for m in missing:
                    outside = {i: w for i, w in expected.items() if i in undefined}
                    agree = all(bytes_differ(got[w], outside)[0] == 0 for w in got)
                    text += (f"; no VkCooperativeMatrixPropertiesKHR row for the MulAdd {m} (VUID-RuntimeSpirv-"
                             f"MSize-08975/-saturatingAccumulation-08983): buffers {sorted(undefined)} undefined "
                             f"here, equal to the model anyway: {agree}")
            except Exception as e:  # noqa: BLE001 - report it and go on with the other cases
                status, text = "FAIL", f": {type(e).__name__}: {e}"
            failures += status != "PASS"
            lines.append(f"[{status}] {name}{text}")
    lines.append(f"{len(cases) - failures}/{len(cases)} cases: the reader+writer's rewrite of glslang's "
                 "binary computes what glslang's binary computes, bit for bit, and equals the numpy model")
    return report(lines, out, "spirv_read_check.txt", failures)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
