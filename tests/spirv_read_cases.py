"""glslang's cooperative-matrix shaders, the reader+writer's rewrite of their binaries, and numpy
models of what they compute: the cases of tests/gpu/test_gpu_spirv_read.py (on a Vulkan GPU)
and tests/test_spirv_read_check.py (here, the interpreter standing in for the GPU).

    python tests/spirv_read_cases.py --regen      # after a .comp or glslang changes

The GPU machine has no glslang, so glslang's binaries are committed: `tests/data/X.spv` is
`glslangValidator -V --target-env vulkan1.3 -DSCOPE_SUBGROUP=<the grammar's Scope Subgroup>` of
`tests/data/X.comp` (`--regen` rewrites them; tests/test_spirv_read_check.py requires the
committed bytes to be what glslang makes today and runs spirv-val on them and their rewrites).

For each case the rewrite of glslang's binary (`deserialize` then `serialize`) is made where the
test runs; the inputs are small integers (every product and sum is exact in f16/f32), and both
binaries are dispatched with the same buffers and push constants (`dispatch`). A case passes when
the rewrite's output buffers equal glslang's bit for bit and both equal the model (`verdict`).

A multiply-add the device does not list among its VkCooperativeMatrixPropertiesKHR (M, N, K,
component types, saturatingAccumulation; VUID-RuntimeSpirv-MSize-08975 ...,
VUID-RuntimeSpirv-saturatingAccumulation-08983) has no defined result there: the buffers such a
multiply-add writes (`NEEDS_ROW`, `undefined_buffers`) are compared with the model only where
the device lists it (the GPU test prints the rows that were missing). gemm_select's signed 8-bit 16x16x16 MulAdd with
SaturatingAccumulation is such a one on the H200 (its s8 rows are 16x16x32 and 16x8x32, none
saturating).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def _ints(rng, n, dtype, lo=-3, hi=4):
    return rng.integers(lo, hi, n).astype(dtype)


def _gemm_f16_f32(rng):
    """tests/data/coopmat_khr_f16_f32.comp: D = A·B + C, push constants M, N, K."""
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
    """tests/data/trivial.comp: o[i] = a[i]·b[i] + i for i < n (push constant n)."""
    n = 256
    a, b, o = _ints(rng, n, np.float32), _ints(rng, n, np.float32), np.zeros(n, np.float32)
    return [a, b, o], {2: a * b + np.arange(n, dtype=np.float32)}, (n // 64, 1, 1), np.array([n], np.uint32).tobytes()


CASES = {
    "gemm_f16_f32": ("tests/data/coopmat_khr_f16_f32.comp", _gemm_f16_f32),
    "gemm_select": ("tests/data/raise_gemm_select.comp", _gemm_select),
    "khr": ("tests/data/coopmat_khr.comp", _khr),
    "nv": ("tests/data/coopmat_nv.comp", _nv),
    "trivial": ("tests/data/trivial.comp", _trivial),
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


def undefined_buffers(name: str, binary: bytes, rows: list[dict]) -> set[int]:
    """The buffers of case `name` that a multiply-add with no row in the device's table `rows`
    (VulkanContext.cooperative_matrix_properties()) writes: undefined on that device."""
    return {i for m in missing_rows(binary, rows) for key, i in NEEDS_ROW.get(name, {}).items()
            if key == (m["M"], m["N"], m["K"], m["A"])}


def binary_path(src: str) -> Path:
    """The committed glslang binary of shader `src` (a path from ROOT): tests/data/<stem>.spv."""
    return DATA / (Path(src).stem + ".spv")


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


def dispatch(ctx, theirs: bytes, ours: bytes, inputs: list, grid: tuple, push) -> dict:
    """{"glslang": buffers after glslang's binary, "rewrite": after the rewrite}, each dispatched
    once by `ctx`: the Vulkan device's runner (`VulkanDevice.ctx`, a
    coopdialect.runtime.vulkan_ctypes.VulkanContext: the device's `launch` passes no push
    constants) or a stand-in with its `run_compute(spirv, buffers, grid, entry=,
    push_constants=)`."""
    return {which: ctx.run_compute(binary, inputs, grid, entry="main", push_constants=push)
            for which, binary in (("glslang", theirs), ("rewrite", ours))}


def verdict(got: dict, expected: dict, undefined: set[int] = frozenset()) -> str | None:
    """None when the rewrite's outputs equal glslang's bit for bit and both equal the model's
    `expected` {buffer index: array} (except the `undefined` buffers, `undefined_buffers`), else
    what differs."""
    def same(a, b):
        return np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                              np.ascontiguousarray(b).view(np.uint8))

    bad = [f"rewrite != glslang in buffer {i}" for i in expected
           if not same(got["rewrite"][i], got["glslang"][i])]
    bad += [f"{w} != numpy model in buffer {i}" for w in got for i, want in expected.items()
            if i not in undefined and not same(got[w][i], want)]
    return "; ".join(bad) or None


if __name__ == "__main__":
    if sys.argv[1:] != ["--regen"]:
        sys.exit("usage: python tests/spirv_read_cases.py --regen")
    for src, _ in CASES.values():
        compile_glslang(src, binary_path(src))
        print(f"wrote {binary_path(src).relative_to(ROOT)}")
