"""raise-spirv-to-coop: glslang's compute shaders, read and raised, interpreted equal to numpy
models of the GLSL sources; random coop programs lowered to SPIR-V, written, read back and raised
interpret to the same numbers as before (hypothesis); what cannot be lifted is one line naming the
instruction."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from coopdialect import api
from coopdialect.spirv.reader import deserialize
import validators
from cli import run_coop_opt
import tool_processes
from hypothesis_profiles import scaled

ROOT = Path(__file__).resolve().parent.parent
# the console scripts, through the interpreter running the tests (.venv/bin need not be on PATH)


def glslang(src: str) -> bytes:
    return validators.glslang(src, *validators.grammar_defines())


def raised(data: bytes) -> tuple[ModuleOp, str]:
    module = ModuleOp([deserialize(data)])
    api.run_pipeline(module, "raise-spirv-to-coop")
    module.verify()
    (kernel,) = [op for op in module.body.block.ops if isinstance(op, func.FuncOp)
                 and "coop.workgroup_size" in op.attributes]
    return module, kernel.sym_name.data


def ints(rng, n, dtype, lo=-3, hi=4):
    return rng.integers(lo, hi, n).astype(dtype)


def test_gemm_with_selection_and_saturating_int8():
    module, name = raised(glslang("tests/data/raise_gemm_select.comp"))
    rng = np.random.default_rng(5)
    M = N = K = 32
    a, b = ints(rng, M * K, np.float16), ints(rng, K * N, np.float16)
    q = ints(rng, 512, np.int8, -128, 128)
    d, r = np.zeros(M * N, np.float32), np.zeros(4 * 256, np.int32)
    alpha = 0.5
    api.run_kernel(module, name, [a, b, d, q, r, K, N, alpha], (2, 2, 1))
    ab = a.reshape(M, K).astype(np.float64) @ b.reshape(K, N).astype(np.float64)
    want = ab.copy()
    want[:, :16] *= alpha  # workgroup column 0
    want[:, 16:] -= 1
    np.testing.assert_array_equal(d.reshape(M, N), want.astype(np.float32))
    qa = q[:256].reshape(16, 16).astype(np.int64)
    qb = q[256:].reshape(16, 16).T.astype(np.int64)  # column-major
    tile = np.clip(qa @ qb + 2147483000, -2**31, 2**31 - 1)
    assert (tile == 2**31 - 1).any() and (tile < 2**31 - 1).any()  # some sums saturate, some not
    for t in range(4):
        np.testing.assert_array_equal(r[t * 256:(t + 1) * 256].reshape(16, 16), tile)


def test_khr_gemm():
    module, name = raised(glslang("tests/data/coopmat_khr.comp"))
    rng = np.random.default_rng(1)
    a, c = ints(rng, 512, np.float16), np.zeros(256, np.float32)
    api.run_kernel(module, name, [a, c], (1, 1, 1))
    want = a[:256].reshape(16, 16).astype(np.float64) @ a[256:].reshape(16, 16).astype(np.float64)
    np.testing.assert_array_equal(c.reshape(16, 16), want)


def test_khr_gemm_push_constants():
    module, name = raised(glslang("tests/data/coopmat_khr_f16_f32.comp"))
    rng = np.random.default_rng(2)
    M, N, K = 32, 48, 32
    a, b = ints(rng, M * K, np.float16), ints(rng, K * N, np.float16)
    c, d = ints(rng, M * N, np.float32), np.zeros(M * N, np.float32)
    api.run_kernel(module, name, [a, b, c, d, M, N, K], (N // 16, M // 16, 1))
    want = a.reshape(M, K).astype(np.float64) @ b.reshape(K, N).astype(np.float64) + c.reshape(M, N)
    np.testing.assert_array_equal(d.reshape(M, N), want)


def test_nv_loop_and_conversion():
    module, name = raised(glslang("tests/data/coopmat_nv.comp"))
    rng = np.random.default_rng(3)
    a = ints(rng, 4096, np.float16)
    c, h = np.zeros(256, np.float32), np.zeros(256, np.float16)
    api.run_kernel(module, name, [a, c, h], (1, 1, 1))
    acc = np.zeros((16, 16))
    for k in range(4):
        ma = np.array([[a[k * 16 + i * 64 + j] for j in range(16)] for i in range(16)], np.float64)
        mb = np.array([[a[k * 1024 + j * 64 + i] for j in range(16)] for i in range(16)], np.float64)
        acc += ma @ mb
    acc = acc * 2 - acc
    np.testing.assert_array_equal(c.reshape(16, 16), acc)
    np.testing.assert_array_equal(h.reshape(16, 16), acc.astype(np.float16))


def test_scalar_shader_with_selection():
    module, name = raised(glslang("tests/data/trivial.comp"))
    rng = np.random.default_rng(4)
    n = 128
    a, b, o = ints(rng, n, np.float32), ints(rng, n, np.float32), np.zeros(n, np.float32)
    api.run_kernel(module, name, [a, b, o, n], (2, 1, 1))
    np.testing.assert_array_equal(o, a * b + np.arange(n, dtype=np.float32))


def test_arm_example_raised_equals_the_example(tmp_path):
    original = api.parse_file(str(ROOT / "examples/gemm_f16_arm_blocked.mlir"))
    data = api.compile_to_spirv(api.parse_file(str(ROOT / "examples/gemm_f16_arm_blocked.mlir")))
    module, name = raised(data)
    rng = np.random.default_rng(6)
    bufs = [ints(rng, 1024, np.float16), ints(rng, 1024, np.float16), ints(rng, 1024, np.float32)]
    copy = [x.copy() for x in bufs]
    api.run_kernel(original, "gemm_f16_arm_blocked", bufs, (2, 2, 1))
    api.run_kernel(module, name, copy, (2, 2, 1))
    np.testing.assert_array_equal(bufs[2], copy[2])


@pytest.mark.parametrize("src, instruction", [
    ("tests/data/coopmat_khr_int.comp", "'spirv.AccessChain' op an element of a cooperative matrix in a variable "
                                        "(m[i]) needs a constant index"),
    ("tests/data/glsl_unliftable.comp", "'spirv.ExtInst' op GLSL.std.450 FSign is not lifted"),
    ("tests/data/coopmat2_tensor_ops.comp", "'spirv.NV.CooperativeMatrixStoreTensor' op a tensor load/store whose "
                                            "Pointer is not element 0 of its buffer"),
    ("tests/data/coopmat_khr_loop.comp", "'spirv.AccessChain' op an element of a cooperative matrix in a variable"),
])
def test_what_cannot_be_lifted_is_one_line(src, instruction, tmp_path):
    f = tmp_path / "shader.spv"
    f.write_bytes(glslang(src))
    r = run_coop_opt([f, "-p", "raise-spirv-to-coop"])
    assert r.returncode == 1 and r.stdout == ""
    line = r.stderr.strip()
    assert "\n" not in line and line.startswith(f"{f}:0:") and instruction in line, line


# -- property: coop program -> SPIR-V bytes -> read -> raise interprets the same ----------------

_OPS = {
    "fadd": "%r{i} = coop.fadd %x{i}, %x{i} : !c",
    "fsub": "%r{i} = coop.fsub %x{i}, %one : !c",
    "scale": "%r{i} = coop.matrix_times_scalar %x{i}, %half : !c, f32 -> !c",
    "mma": "%r{i} = coop.mul_add %a, %b, %x{i} : !a, !b, !c -> !c",
}


def program(trips: int, ops: list[str], then_op: str, else_op: str, uniform_if: bool) -> str:
    """A kernel: a K loop applying `ops` to the accumulator, then an scf.if (on the workgroup id:
    uniform in a workgroup either way) choosing `then_op` or `else_op`."""
    steps = "\n".join(f"    {_OPS[o].format(i=i)}\n    %x{i + 1} = coop.fadd %r{i}, %zero : !c"
                      for i, o in enumerate(ops))
    side = {k: _OPS[o].format(i=k).split(" = ", 1)[1].replace(f"%x{k}", "%acc")
            for k, o in (("T", then_op), ("E", else_op))}
    cond = "%wx, %c0" if uniform_if else "%wx, %c1"
    return f"""
!a = !coop.matrix<16x16xf16, Subgroup, MatrixA>
!b = !coop.matrix<16x16xf16, Subgroup, MatrixB>
!c = !coop.matrix<16x16xf32, Subgroup, MatrixAcc>
func.func @k(%A: memref<512xf16>, %C: memref<1024xf32>) attributes {{coop.workgroup_size = array<i32: 32, 1, 1>}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %n = arith.constant {trips} : index
  %half = arith.constant 0.5 : f32
  %o = arith.constant 1.0 : f32
  %z = arith.constant 0.0 : f32
  %wx = gpu.block_id x
  %off = arith.muli %wx, %c256 : index
  %a = coop.load %A[%c0], %c16, RowMajor : memref<512xf16> -> !a
  %b = coop.load %A[%c256], %c16, ColumnMajor : memref<512xf16> -> !b
  %one = coop.composite_construct %o : f32 -> !c
  %zero = coop.composite_construct %z : f32 -> !c
  %init = coop.load %C[%off], %c16, RowMajor : memref<1024xf32> -> !c
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%x0 = %init) -> (!c) {{
{steps}
    scf.yield %x{len(ops)} : !c
  }}
  %p = arith.cmpi eq, {cond} : index
  %out = scf.if %p -> (!c) {{
    %t = {side["T"]}
    scf.yield %t : !c
  }} else {{
    %e = {side["E"]}
    scf.yield %e : !c
  }}
  coop.store %out, %C[%off], %c16, RowMajor : !c, memref<1024xf32>
  func.return
}}
"""


@settings(max_examples=scaled(5), deadline=None)
@given(st.integers(0, 3), st.lists(st.sampled_from(sorted(_OPS)), min_size=1, max_size=3),
       st.sampled_from(sorted(_OPS)), st.sampled_from(sorted(_OPS)), st.booleans(), st.integers(0, 2**31))
def test_lower_write_read_raise_preserves_results(trips, ops, then_op, else_op, uniform_if, seed):
    text = program(trips, ops, then_op, else_op, uniform_if)
    rng = np.random.default_rng(seed)
    bufs = [ints(rng, 512, np.float16), ints(rng, 1024, np.float32)]
    want = [x.copy() for x in bufs]
    api.run_kernel(api.parse(text), "k", want, (4, 1, 1))
    module, name = raised(api.compile_to_spirv(api.parse(text)))
    api.run_kernel(module, name, bufs, (4, 1, 1))
    np.testing.assert_array_equal(bufs[1], want[1])



def test_coop_run_interprets_glslang_output(tmp_path):
    """`coop-run shader.spv`: storage buffers and push constants from --input, D = A·B + C."""
    spv = tmp_path / "gemm.spv"
    spv.write_bytes(glslang("tests/data/coopmat_khr_f16_f32.comp"))
    rng = np.random.default_rng(7)
    M, N, K = 16, 32, 32
    arrays = [ints(rng, M * K, np.float16), ints(rng, K * N, np.float16), ints(rng, M * N, np.float32),
              np.zeros(M * N, np.float32)]
    inputs = []
    for i, x in enumerate(arrays):
        np.save(tmp_path / f"{i}.npy", x)
        inputs += ["--input", f"{i}={tmp_path / f'{i}.npy'}"]
    r = tool_processes.run(["coop-run", str(spv), "--grid", f"{N // 16},{M // 16},1", *inputs,
                            "--input", f"4={M}", "--input", f"5={N}", "--input", f"6={K}",
                            "--save", str(tmp_path / "out")], text=True)
    assert r.returncode == 0, r.stderr
    want = arrays[0].reshape(M, K).astype(np.float64) @ arrays[1].reshape(K, N).astype(np.float64) \
        + arrays[2].reshape(M, N)
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "out" / "3.npy").reshape(M, N), want)


def test_raised_glslang_shader_retargets_to_ptx(tmp_path):
    """glslang's KHR GEMM, raised, lowers with convert-coop-to-ptx and ptxas accepts the PTX."""
    from validators import ptxas

    spv = tmp_path / "khr.spv"
    spv.write_bytes(glslang("tests/data/coopmat_khr.comp"))
    ptx = tmp_path / "khr.ptx"
    r = run_coop_opt([spv, "-p", "raise-spirv-to-coop,convert-coop-to-ptx", "-t", "ptx", "-o", ptx])
    assert r.returncode == 0, r.stderr
    r = subprocess.run([ptxas(), "-arch=sm_90a", str(ptx), "-o", str(tmp_path / "khr.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name, grid", [("gemm_f16", (2, 2, 1)), ("gemm_s8", (4, 2, 1)),
                                        ("gemm_f16_64_large", (1, 1, 1)), ("gemm_coopmat2_f16", (2, 2, 1)),
                                        ("softmax_rows", (1, 4, 1)), ("conv_patch_clamped", (4, 4, 1))])
def test_examples_lowered_read_and_raised_interpret_the_same(name, grid):
    """The example kernels (subgroup ids, loops carrying matrices, signed 8-bit MulAdds, tensor
    layouts and views, reductions and per-element functions), lowered to SPIR-V bytes, read back and
    raised, write the same buffers as the examples themselves."""
    from coopdialect.interpreter.common import numpy_dtype

    path = str(ROOT / "examples" / f"{name}.mlir")
    original = api.parse_file(path)
    (kernel,) = [op for op in original.body.block.ops if isinstance(op, func.FuncOp)
                 and "coop.workgroup_size" in op.attributes]
    rng = np.random.default_rng(8)
    bufs = [rng.integers(-3, 4, a.type.get_shape()).astype(numpy_dtype(a.type.element_type))
            for a in kernel.body.blocks[0].args]
    before = [b.copy() for b in bufs]
    flat = [b.reshape(-1).copy() for b in bufs]
    api.run_kernel(original, kernel.sym_name.data, bufs, grid)
    module, raised_name = raised(api.compile_to_spirv(api.parse_file(path)))
    api.run_kernel(module, raised_name, flat, grid)
    assert any(not np.array_equal(b, a) for b, a in zip(bufs, before)), "the kernel wrote nothing"
    for b, f in zip(bufs, flat):
        np.testing.assert_array_equal(b.reshape(-1), f)
