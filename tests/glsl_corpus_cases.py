"""The GLSL compute shaders of tests/data/glsl/ (glslang's view of the four cooperative-matrix
extensions) with numpy models of what they compute: the cases of tests/gpu/test_gpu_glsl_corpus.py,
which runs each two ways on a GPU — glslang's binary through Vulkan (`vulkan_run`), and the same
binary raised (`raise-spirv-to-coop`) and lowered to PTX through CUDA (`raised_module`, then the
CUDA device) — both equal to the model (and so to each other).

    python tests/glsl_corpus_cases.py --regen     # after a .comp or glslang changes

The GPU machine has no glslang: `tests/data/glsl/X.spv` is glslang's binary of
`tests/data/glsl/X.comp` (`glslangValidator -V --target-env vulkan1.3`), committed;
tests/test_glsl_corpus.py requires the committed bytes to be what glslang makes today, and runs
every case through the reader, spirv-val, the writer, the raising and the interpreter.

A case's model draws small-integer data (every product and sum exact in f16/f32, so a result
has one right answer) and returns a `Run`: the buffers in binding order (set 0, bindings
0..n-1, as coopdialect.runtime's Vulkan device binds them), the push-constant bytes, the raised
kernel's scalar arguments (the push-constant members), the grid, and the expected contents of
the buffers the shader writes. A shader Vulkan cannot run on the H200 says why (`vulkan`).
"""

from __future__ import annotations

import functools
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "tests" / "data" / "glsl"


@dataclass
class Run:
    buffers: list[np.ndarray]
    push: bytes | None
    scalars: list
    grid: tuple[int, int, int]
    expected: dict[int, np.ndarray]


@dataclass
class Case:
    model: object  # rng -> Run
    vulkan: str | None = None  # why Vulkan cannot run it on the H200, if it cannot
    notes: list[str] = field(default_factory=list)


def _ints(rng, shape, dtype, lo=-3, hi=4):
    return rng.integers(lo, hi, shape).astype(dtype)


def khr_gemm_f16(rng) -> Run:
    """C = alpha * A*B + beta * C on the 16x16 tiles inside M x N; tiles of the grid outside
    return early and leave C alone."""
    M, N, K = 48, 32, 64
    a, b = _ints(rng, (M, K), np.float16), _ints(rng, (K, N), np.float16)
    c = _ints(rng, (M, N), np.float32)
    alpha, beta = 2.0, 0.5
    want = alpha * (a.astype(np.float64) @ b.astype(np.float64)) + beta * c
    push = np.array([M, N, K], np.uint32).tobytes() + np.array([alpha, beta], np.float32).tobytes()
    return Run([a.ravel(), b.ravel(), c.ravel()], push, [M, N, K, alpha, beta], (N // 16 + 1, M // 16 + 1, 1),
               {2: want.astype(np.float32).ravel()})


def khr_gemm_s8(rng) -> Run:
    """D = low 32 bits of A*B + C (signed 8-bit A, B; C near the int32 limits, so that sums
    wrap); K = 32 * KSTEPS (default 2), M = 64 (the block's first array), C per 16x16 tile in
    workgroup order (y * groups_x + x)."""
    M, N, K = 64, 32, 64
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    bt = rng.integers(-128, 128, (N, K)).astype(np.int8)
    gx, gy = N // 16, M // 16
    bias = rng.integers(2**31 - 300000, 2**31, (gy, gx, 16, 16)).astype(np.int64)
    bias[:, :, ::2] = -bias[:, :, ::2]  # every other row near the bottom of the range
    d = np.zeros((M, N), np.int32)
    exact = a.astype(np.int64) @ bt.astype(np.int64).T
    want = np.zeros((M, N), np.int64)
    for ty in range(gy):
        for tx in range(gx):
            want[ty * 16:ty * 16 + 16, tx * 16:tx * 16 + 16] = exact[ty * 16:ty * 16 + 16, tx * 16:tx * 16 + 16] \
                + bias[ty, tx]
    want = ((want + 2**31) % 2**32 - 2**31).astype(np.int32)
    ops = np.concatenate([a.ravel(), bt.ravel()])
    return Run([ops, bias.astype(np.int32).ravel(), d.ravel()], np.array([N], np.uint32).tobytes(), [N],
               (gx, gy, 1), {2: want.ravel()})


def nv_gemm(rng) -> Run:
    """C = A * B (f32) and H = C as f16, B given transposed (Bt: N x K, loaded column-major)."""
    M, N, K = 32, 48, 64
    a, bt = _ints(rng, (M, K), np.float16), _ints(rng, (N, K), np.float16)
    c, h = np.zeros(M * N, np.float32), np.zeros(M * N, np.float16)
    want = a.astype(np.float64) @ bt.astype(np.float64).T
    return Run([a.ravel(), bt.ravel(), c, h], np.array([M, N, K], np.uint32).tobytes(), [M, N, K],
               (N // 16, M // 16, 1), {2: want.astype(np.float32).ravel(), 3: want.astype(np.float16).ravel()})


def arm_blocked(matrix: np.ndarray, row_blocked: bool, stride: int) -> np.ndarray:
    """`matrix` in SPV_ARM_cooperative_matrix_layouts' blocked layout: 64-byte blocks of 4 rows
    x 16/size columns, row-major inside, blocks in row-major (RowBlocked) or column-major
    (ColumnBlocked) order, groups of `stride` blocks interleaved 4 bytes at a time."""
    rows, cols = matrix.shape
    size = matrix.dtype.itemsize
    bc = 16 // size
    blocks = []
    grid = [(r, c) for r in range(rows // 4) for c in range(cols // bc)] if row_blocked else \
        [(r, c) for c in range(cols // bc) for r in range(rows // 4)]
    for r, c in grid:
        blocks.append(np.ascontiguousarray(matrix[r * 4:r * 4 + 4, c * bc:c * bc + bc]).view(np.uint8).reshape(16, 4))
    out = []
    for g in range(0, len(blocks), stride):
        group = np.stack(blocks[g:g + stride], axis=1)  # word, member, byte
        out.append(group.reshape(-1))
    return np.concatenate(out).view(matrix.dtype)


def arm_blocked_gemm(rng) -> Run:
    """C = A * B with A stored RowBlockedInterleavedARM and B ColumnBlockedInterleavedARM (Stride 2)."""
    a, b = _ints(rng, (16, 16), np.float16), _ints(rng, (16, 16), np.float16)
    c = np.zeros(256, np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    return Run([arm_blocked(a, True, 2), arm_blocked(b, False, 2), c], None, [], (1, 1, 1),
               {2: want.astype(np.float32).ravel()})


def q8_words(q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """A (M x K) as the shader's Q8 blocks: per 32 elements of a row 36 bytes: the scale byte,
    the 32 values as two's-complement bytes, 3 unused; as 32-bit words. Block (r, j) starts at
    byte 36 * (r * K/32 + j): the DecodeFunc's pointer is Pointer + index * sizeof(Q8Block)
    (SPV_NV_cooperative_matrix2), the index counting blocks (layout strides (K/32, 1))."""
    m, kb = s.shape
    blocks = np.zeros((m, kb, 36), np.uint8)
    blocks[:, :, 0] = s
    blocks[:, :, 1:33] = q.reshape(m, kb, 32).astype(np.int8).view(np.uint8)
    return blocks.reshape(-1).view(np.int32)


def coopmat2_gemm_decode(rng) -> Run:
    """C = decode(Q) * B: A's element = q * s / 16 from its 8-bit block (scale s per 32)."""
    M, N, K = 128, 32, 64
    q = rng.integers(-8, 8, (M, K))
    s = rng.choice(np.array([4, 8, 16, 32], np.uint8), (M, K // 32))
    a = q * np.repeat(s.astype(np.float64), 32, axis=1) / 16
    b = _ints(rng, (K, N), np.float16)
    c = np.zeros(M * N, np.float32)
    want = a @ b.astype(np.float64)
    return Run([q8_words(q, s), b.ravel(), c], np.array([M, N, K], np.uint32).tobytes(), [M, N, K],
               (N // 16, M // 64, 1), {2: want.astype(np.float32).ravel()})


def coopmat2_reduce(rng) -> Run:
    """Y = X with its diagonal times d, minus each row's maximum; S its column sums (16 equal
    rows), Q its 2x2 sums, per 32x32 tile (one per workgroup)."""
    tiles, d = 3, 2.0
    x = _ints(rng, (tiles, 32, 32), np.float32, -20, 21)
    y = x.astype(np.float64).copy()
    idx = np.arange(32)
    y[:, idx, idx] *= d
    y -= y.max(axis=2, keepdims=True)
    s = np.repeat(y.sum(axis=1)[:, None, :], 16, axis=1)
    q = y.reshape(tiles, 16, 2, 16, 2).sum(axis=(2, 4))
    return Run([x.ravel(), np.zeros(x.size, np.float32), np.zeros(tiles * 512, np.float32),
                np.zeros(tiles * 256, np.float32)], np.array([d], np.float32).tobytes(), [d], (tiles, 1, 1),
               {1: y.astype(np.float32).ravel(), 2: s.astype(np.float32).ravel(), 3: q.astype(np.float32).ravel()})


def khr_control_flow(rng) -> Run:
    """Per workgroup w < 3 (or all with mode 7): acc = sum of A_k * B_k over the tiles k < KT
    except `skip`, at most `limit` of them; then acc *= 2 `rounds` times (at least once); then
    by mode: *0.5 (0), + the number of tiles summed (1), negated (else). Workgroups w >= 3 keep
    C (unless mode 7)."""
    KT, skip, limit, rounds, mode, groups = 5, 1, 3, 2, 1, 4
    a, b = _ints(rng, (16, 16 * KT), np.float16), _ints(rng, (16 * KT, 16), np.float16)
    c = _ints(rng, (groups, 16, 16), np.float32)
    acc, used = np.zeros((16, 16)), 0
    for k in range(KT):
        if k == skip:
            continue
        if used >= limit:
            break
        acc += a[:, k * 16:k * 16 + 16].astype(np.float64) @ b[k * 16:k * 16 + 16].astype(np.float64)
        used += 1
    acc *= 2.0 ** max(rounds, 1)
    acc = acc * 0.5 if mode == 0 else acc + used if mode == 1 else -acc
    want = c.astype(np.float64).copy()
    for w in range(groups):
        if w < 3 or mode == 7:
            want[w] = acc
    push = np.array([KT, skip, limit, rounds, mode], np.int32).tobytes()
    return Run([a.ravel(), b.ravel(), c.ravel()], push, [KT, skip, limit, rounds, mode], (groups, 1, 1),
               {2: want.astype(np.float32).ravel()})


CASES: dict[str, Case] = {
    "khr_gemm_f16": Case(khr_gemm_f16),
    "khr_gemm_s8": Case(khr_gemm_s8),
    "nv_gemm": Case(nv_gemm),
    "arm_blocked_gemm": Case(arm_blocked_gemm, vulkan="no VK_ARM_cooperative_matrix_layouts on the H200"),
    "coopmat2_gemm_decode": Case(coopmat2_gemm_decode),
    "coopmat2_reduce": Case(coopmat2_reduce),
    "khr_control_flow": Case(khr_control_flow),
}


def source(name: str) -> Path:
    return SOURCES / f"{name}.comp"


def binary_path(name: str) -> Path:
    """The committed glslang binary of case `name`: tests/data/glsl/<name>.spv."""
    return SOURCES / f"{name}.spv"


def compile_glslang(name: str, out: Path, exe: str = "glslangValidator") -> bytes:
    """glslang's SPIR-V of case `name` (written to `out`); raises CalledProcessError."""
    subprocess.run([exe, "-V", "--target-env", "vulkan1.3", "-o", str(out), str(source(name))],
                   check=True, capture_output=True)
    return out.read_bytes()


def raised_kernel(binary: bytes, file: str):
    """(module, kernel name) of `binary` read and raised: a fresh module (the clone of one read
    and raised once per process: several tests, and every dispatch of the interpreter standing
    in for a device, raise the same binaries)."""
    module, kernel = _raised(binary, file)
    return module.clone(), kernel


@functools.lru_cache(maxsize=64)
def _raised(binary: bytes, file: str):
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp

    from coopdialect import api
    from coopdialect.spirv.reader import deserialize

    module = ModuleOp([deserialize(binary, file=file)])
    api.run_pipeline(module, "raise-spirv-to-coop")
    (kernel,) = [op for op in module.body.block.ops if isinstance(op, func.FuncOp)
                 and "coop.workgroup_size" in op.attributes]
    return module, kernel.sym_name.data


def bind_scalars(module, kernel: str, scalars: list) -> None:
    """Make the kernel's scalar arguments (the push constants) the constants `scalars`: the PTX
    lowering takes memref arguments only, and a push constant is fixed for a dispatch."""
    from xdsl.dialects import arith, func
    from xdsl.dialects.builtin import FloatAttr, FunctionType, IntegerAttr, MemRefType

    (fn,) = [op for op in module.body.block.ops if isinstance(op, func.FuncOp) and op.sym_name.data == kernel]
    block = fn.body.block
    scalar_args = [a for a in block.args if not isinstance(a.type, MemRefType)]
    assert len(scalar_args) == len(scalars), (len(scalar_args), len(scalars))
    for a, v in zip(scalar_args, scalars):
        attr = FloatAttr(float(v), a.type) if not hasattr(a.type, "width") else IntegerAttr(
            (int(v) + 2**31) % 2**32 - 2**31 if a.type.width.data == 32 else int(v), a.type)
        c = arith.ConstantOp(attr)
        block.insert_op_before(c, block.first_op)
        a.replace_all_uses_with(c.result)
    for a in reversed(scalar_args):
        block.erase_arg(a)
    fn.function_type = FunctionType.from_lists([a.type for a in block.args], [])


def differing(got: list[np.ndarray], expected: dict[int, np.ndarray]) -> int:
    """Bytes of the written buffers that differ from `expected`."""
    return sum(int(np.count_nonzero(np.ascontiguousarray(got[i]).view(np.uint8)
                                    != np.ascontiguousarray(w).view(np.uint8))) for i, w in expected.items())


def cases(seed: int = 7) -> dict[str, tuple[Case, Run]]:
    """Every case with its run, one generator drawing the models' data in CASES order."""
    rng = np.random.default_rng(seed)
    return {name: (case, case.model(rng)) for name, case in CASES.items()}


def raised_module(name: str, run: Run):
    """(module, kernel name) of case `name`'s committed binary raised, its scalar arguments bound
    to the run's push constants: what goes to the PTX backend."""
    module, kernel = raised_kernel(binary_path(name).read_bytes(), str(binary_path(name)))
    bind_scalars(module, kernel, run.scalars)
    return module, kernel


def vulkan_run(ctx, name: str, run: Run) -> list[np.ndarray]:
    """The buffers after glslang's binary of case `name` ran once on `ctx` (the Vulkan device's
    runner, `VulkanDevice.ctx`: its `launch` passes no push constants, or a stand-in with its
    `run_compute`)."""
    return ctx.run_compute(binary_path(name).read_bytes(), [b.copy() for b in run.buffers],
                           run.grid, entry="main", push_constants=run.push)


def subgroup_rows_missing(name: str, rows: list[dict]) -> list[dict]:
    """The subgroup-scope KHR multiply-adds of case `name` that no row of the device's
    VkCooperativeMatrixPropertiesKHR table describes (no defined result there; workgroup scope
    follows the cooperative_matrix2 flexible-dimension table instead)."""
    from spirv_read_cases import missing_rows

    return [m for m in missing_rows(binary_path(name).read_bytes(), rows) if m["scope"] == "subgroup"]


if __name__ == "__main__":
    if sys.argv[1:] != ["--regen"]:
        sys.exit("usage: python tests/glsl_corpus_cases.py --regen")
    for name in CASES:
        compile_glslang(name, binary_path(name))
        print(f"wrote {binary_path(name).relative_to(ROOT)}")
