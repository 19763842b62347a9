"""glslang's compute shaders for the four cooperative-matrix extensions (tests/data/glsl/, models
in tests/glsl_corpus_cases.py), each through the whole path: glslangValidator -> the reader (its
verdict equal to spirv-val's) -> the writer (spirv-val accepts the rewrite; writer -> reader ->
writer byte-identical) -> raise-spirv-to-coop -> the interpreter, equal to an independent numpy
model of the GLSL -> convert-coop-to-ptx -> ptxas.

Also: the reader's verdict equals spirv-val's on every SPIR-V module of the repository (every
GLSL shader, every committed binary, every example's binary) and on edits of them that break or
keep the 8-/16-bit storage rules."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cli import run_coop_opt
from validators import ptxas, spirv_dis, spirv_tool, spirv_val
import validators

from coopdialect import api
from coopdialect.spirv.errors import SpirvReadError
from coopdialect.spirv.reader import deserialize
from coopdialect.spirv.writer import serialize

import glsl_corpus_cases as corpus

ROOT = Path(__file__).resolve().parent.parent

# the raised IR of these does not lower to PTX: the backend's refusal, one line at the op
NO_PTX = {
    "nv_gemm": "matrices without a Use (NV) have no PTX fragment layout",
}


def spirv_val_verdict(data: bytes, tmp_path: Path) -> str | None:
    """None if spirv-val (Vulkan 1.3) accepts `data`, else its first message line."""
    f = tmp_path / "v.spv"
    f.write_bytes(data)
    r = subprocess.run([spirv_tool("spirv-val"), "--target-env", "vulkan1.3", str(f)], capture_output=True, text=True)
    return None if r.returncode == 0 else (r.stderr + r.stdout).strip().splitlines()[0]


def reader_verdict(data: bytes) -> str | None:
    try:
        deserialize(data)
    except SpirvReadError as e:
        return str(e)
    return None


@pytest.mark.parametrize("name", sorted(corpus.CASES))
def test_committed_binary_is_glslangs(name):
    fresh = validators.glslang(corpus.source(name))
    assert corpus.binary_path(name).read_bytes() == fresh, (
        f"{corpus.binary_path(name)} is not glslang's binary of {corpus.source(name)}: "
        "run `python tests/glsl_corpus_cases.py --regen`")


@pytest.mark.parametrize("name", sorted(corpus.CASES))
def test_read_validate_write_raise_interpret(name, tmp_path):
    binary = corpus.binary_path(name).read_bytes()
    assert spirv_val_verdict(binary, tmp_path) is None
    module = deserialize(binary)  # the reader accepts what spirv-val accepts
    once = serialize(module)
    spirv_val(once, tmp_path, "rewrite.spv")
    assert serialize(deserialize(once)) == once, "writer -> reader -> writer changed the bytes"

    run = corpus.CASES[name].model(np.random.default_rng(11))
    raised, kernel = corpus.raised_kernel(binary, name)
    args = [b.copy() for b in run.buffers] + list(run.scalars)
    api.run_kernel(raised, kernel, args, run.grid)
    for i, want in run.expected.items():
        np.testing.assert_array_equal(args[i], want, err_msg=f"{name}: buffer {i}")
    # what the shader does not write stays as it was
    for i, b in enumerate(run.buffers):
        if i not in run.expected:
            np.testing.assert_array_equal(args[i], b)


@pytest.mark.parametrize("name", sorted(corpus.CASES))
def test_raised_shader_lowers_to_ptx(name, tmp_path):
    """The raised IR, its push constants bound (what the GPU check runs), lowers to PTX that
    ptxas accepts; or the backend refuses it with its one-line reason."""
    run = corpus.CASES[name].model(np.random.default_rng(3))
    module, kernel = corpus.raised_kernel(corpus.binary_path(name).read_bytes(), name)
    corpus.bind_scalars(module, kernel, run.scalars)
    if name in NO_PTX:
        with pytest.raises(Exception, match=re.escape(NO_PTX[name])):
            api.compile_to_ptx(module)
        return
    ptx = tmp_path / f"{name}.ptx"
    ptx.write_text(api.compile_to_ptx(module))
    r = subprocess.run([ptxas(), "-arch=sm_90a", str(ptx), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name", sorted(corpus.CASES))
def test_coop_opt_raises_every_corpus_shader(name):
    """`coop-opt shader.spv -p raise-spirv-to-coop`, as a user runs it (its command line, in
    this process: tests/cli.py; one test per shader, so that parallel workers share them out)."""
    r = run_coop_opt([corpus.binary_path(name), "-p", "raise-spirv-to-coop"])
    assert r.returncode == 0 and "coop.workgroup_size" in r.stdout, (name, r.stderr)


# -- the reader's verdict is spirv-val's -----------------------------------------------------------

GLSL = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("tests/data/**/*.comp"))
COMMITTED = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("tests/data/**/*.spv"))
EXAMPLES = ["gemm_f16", "gemm_s8", "gemm_f16_64_large", "gemm_f16_arm_blocked", "gemm_coopmat2_f16",
            "softmax_rows", "conv_patch_clamped", "block_decode_load", "gemm_f16_vk", "gemm_s8_vk",
            "gemm_any", "gemm_any_bf16", "gemm_bf16_wg"]


def glslang(src: str | Path) -> bytes:
    return validators.glslang(src, *validators.grammar_defines())


@pytest.mark.parametrize("src", GLSL)
def test_verdicts_agree_on_glslang_builds(src, tmp_path):
    data = glslang(src)
    assert spirv_val_verdict(data, tmp_path) is None
    assert reader_verdict(data) is None


@pytest.mark.parametrize("path", COMMITTED)
def test_verdicts_agree_on_committed_binaries(path, tmp_path):
    data = (ROOT / path).read_bytes()
    assert (spirv_val_verdict(data, tmp_path) is None) == (reader_verdict(data) is None), path


@pytest.mark.parametrize("example", EXAMPLES)
def test_verdicts_agree_on_example_binaries(example, tmp_path):
    out = tmp_path / "ex.spv"
    r = run_coop_opt([ROOT / "examples" / f"{example}.mlir", "-p", "convert-coop-to-spirv", "-t",
                      "spirv", "-o", out])
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert spirv_val_verdict(data, tmp_path) is None and reader_verdict(data) is None


def _dis(data: bytes, tmp_path: Path) -> str:
    return spirv_dis(data, tmp_path, raw_id=True)


def _asm(text: str, tmp_path: Path) -> bytes:
    f, out = tmp_path / "e.spvasm", tmp_path / "e.spv"
    f.write_text(text)
    r = subprocess.run([spirv_tool("spirv-as"), "--target-env", "vulkan1.3", "--preserve-numeric-ids", str(f),
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out.read_bytes()


STORAGE8 = """#version 450
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer B { uint8_t q[]; };
layout(set = 0, binding = 1) buffer O { uint o[]; };
layout(set = 0, binding = 2) uniform U { uint8_t u8; float16_t h; } ub;
layout(push_constant) uniform P { uint8_t p8; float16_t ph; } pc;
void main() {
  o[gl_LocalInvocationID.x] = uint(q[gl_LocalInvocationID.x]) + uint(ub.u8) + uint(pc.p8) + uint(float(ub.h))
      + uint(float(pc.ph));
  q[0] = uint8_t(o[1]);
}
"""


def _first_load_convert(t: str) -> tuple[str, str]:
    """(the id of the first OpUConvert of a loaded byte, that byte's id)."""
    m = re.search(r"^\s*(%\d+) = OpUConvert %\d+ (%\d+)$", t, re.M)
    assert m, t
    return m.group(1), m.group(2)


def _edit_use(t: str, use: str) -> str:
    conv, byte = _first_load_convert(t)
    line = re.search(rf"^\s*{conv} = OpUConvert (%\d+) {byte}$", t, re.M).group(0)
    u8 = re.search(rf"^\s*{byte} = OpLoad (%\d+) ", t, re.M).group(1)
    return t.replace(line, f"%x = {use.format(t=u8, v=byte)}\n{line}")


# name: (edit of the disassembly of STORAGE8's binary, spirv-val's verdict: accepted)
STORAGE_EDITS = {
    "as_compiled": (lambda t: t, True),
    "byte_added": (lambda t: _edit_use(t, "OpIAdd {t} {v} {v}"), False),
    "bytes_compared": (lambda t: _edit_use(t, "OpIEqual %bool {v} {v}").replace(
        "OpTypeVoid", "OpTypeVoid\n%bool = OpTypeBool", 1), False),
    "byte_copied": (lambda t: _edit_use(t, "OpCopyObject {t} {v}"), True),
    "byte_widened_to_16": (lambda t: _edit_use(t, "OpUConvert %u16 {v}").replace(
        "OpTypeVoid", "OpTypeVoid\n%u16 = OpTypeInt 16 0", 1), True),
    "no_push_constant_8bit": (lambda t: t.replace("OpCapability StoragePushConstant8\n", ""), False),
    "no_uniform_8bit": (lambda t: t.replace("OpCapability UniformAndStorageBuffer8BitAccess\n", ""), False),
    "no_uniform_16bit": (lambda t: t.replace("OpCapability UniformAndStorageBuffer16BitAccess\n", ""), False),
    # UniformAndStorageBuffer8BitAccess implies StorageBuffer8BitAccess (the grammar's
    # `capabilities` field of the capability)
    "storage_8bit_implied": (lambda t: t.replace("OpCapability StorageBuffer8BitAccess\n", ""), True),
    "int8_instead_of_push_constant_8bit": (
        lambda t: t.replace("OpCapability StoragePushConstant8\n", "OpCapability Int8\n"), True),
    "float16_instead_of_push_constant_16bit": (
        lambda t: t.replace("OpCapability StoragePushConstant16\n", "OpCapability Float16\n"), True),
}


@pytest.mark.parametrize("edit", sorted(STORAGE_EDITS))
def test_verdicts_agree_on_storage_capabilities(edit, tmp_path):
    """SPV_KHR_8bit_storage / 16bit_storage: an 8-/16-bit value from a storage pointer may be
    loaded, stored, converted by width only (and copied: spirv-val's rule) without Int8 /
    Int16 / Float16; any other use needs them; each storage class needs its own capability
    unless the full one is declared."""
    src = tmp_path / "s8.comp"
    src.write_text(STORAGE8)
    fn, accepted = STORAGE_EDITS[edit]
    data = _asm(fn(_dis(validators.glslang(src), tmp_path)), tmp_path)
    val, ours = spirv_val_verdict(data, tmp_path), reader_verdict(data)
    assert (val is None) == accepted, val
    assert (ours is None) == accepted, ours


CAPABILITY_EDITS = {
    # corpus shader, capability removed, spirv-val's verdict: accepted
    ("khr_gemm_s8", "Int8"): False,
    ("khr_gemm_f16", "Float16"): False,
    ("khr_gemm_f16", "StorageBuffer16BitAccess"): True,  # Float16 allows f16 in buffers too
    ("coopmat2_gemm_decode", "StorageBuffer8BitAccess"): False,
    ("coopmat2_gemm_decode", "CooperativeMatrixBlockLoadsNV"): False,
    ("coopmat2_gemm_decode", "PhysicalStorageBufferAddresses"): False,
    # spirv-dis spells these by the names the grammar promoted them to (aliases: ...NV)
    ("coopmat2_reduce", "CooperativeMatrixReductionsEXT"): False,
    ("coopmat2_reduce", "CooperativeMatrixPerElementOperationsEXT"): False,
    ("khr_control_flow", "VulkanMemoryModel"): False,
}


@pytest.mark.parametrize("name, capability", sorted(CAPABILITY_EDITS))
def test_verdicts_agree_without_a_capability(name, capability, tmp_path):
    text = _dis(corpus.binary_path(name).read_bytes(), tmp_path)
    line = f"OpCapability {capability}\n"
    assert line in text
    data = _asm(text.replace(line, ""), tmp_path)
    val, ours = spirv_val_verdict(data, tmp_path), reader_verdict(data)
    accepted = CAPABILITY_EDITS[(name, capability)]
    assert (val is None) == accepted, val
    assert (ours is None) == accepted, ours
    if ours is not None:  # located at the instruction that needs it, not at the header
        assert re.match(r"word (\d+): ", ours) and int(ours.split()[1].rstrip(":")) > 0, ours


def test_arm_layout_capability_is_required(tmp_path):
    """SPV_ARM_cooperative_matrix_layouts: the layouts' Enabling Capability is
    CooperativeMatrixLayoutsARM. The MemoryLayout is an <id> of a constant; SPIRV-Tools 2025.1
    did not trace it and accepted the module without the capability, 2026.4 refuses it, as the
    reader does."""
    text = _dis(corpus.binary_path("arm_blocked_gemm").read_bytes(), tmp_path)
    data = _asm(text.replace("OpCapability CooperativeMatrixLayoutsARM\n", ""), tmp_path)
    assert "CooperativeMatrixLayoutsARM" in (spirv_val_verdict(data, tmp_path) or "")
    assert "needs capability CooperativeMatrixLayoutsARM" in (reader_verdict(data) or "")


# -- the GPU test's cases, with the interpreter standing in for both devices ----------------------


class _InterpretedVulkanRunner:
    """The Vulkan runner (VulkanDevice.ctx) as the GPU test uses it; a dispatch raises the binary
    and interprets it (push constants: the kernel's scalar arguments, 4 bytes each in member
    order)."""

    def __init__(self):
        self.dispatches = 0
        self._properties = None

    def cooperative_matrix_properties(self):
        # a device's table does not change: read the corpus's multiply-adds once per runner
        if self._properties is None:
            self._properties = [m for name in corpus.CASES for m in __import__("spirv_read_cases").mul_adds(
                corpus.binary_path(name).read_bytes())]
        return list(self._properties)

    def run_compute(self, spirv, buffers, grid, entry="main", *, push_constants=None):
        from xdsl.dialects.builtin import Float32Type, MemRefType

        self.dispatches += 1
        module, kernel = corpus.raised_kernel(spirv, "vulkan")
        fn = next(op for op in module.body.block.ops if getattr(op, "sym_name", None) and op.sym_name.data == kernel)
        scalars = [t for t in fn.function_type.inputs.data if not isinstance(t, MemRefType)]
        words = np.frombuffer(push_constants or b"", np.uint32)[:len(scalars)]
        args = [b.copy() for b in buffers]
        args += [float(w.view(np.float32)) if isinstance(t, Float32Type) else int(w.view(np.int32))
                 for t, w in zip(scalars, words)]
        api.run_kernel(module, kernel, args, grid)
        return args[:len(buffers)]


def test_gpu_cases_pass_with_the_interpreter_as_both_devices():
    """tests/gpu/test_gpu_glsl_corpus.py's cases without a GPU: the "Vulkan" run interprets
    glslang's binary raised; the "CUDA" run compiles the raised, bound module to PTX (as the CUDA
    device does: refusals surface here, exactly the NO_PTX ones) and interprets it. A shader whose
    case says why not (`Case.vulkan`: the Arm one, no VK_ARM_* on the H200) is not run on Vulkan."""
    from coopdialect.errors import CoopError

    vk = _InterpretedVulkanRunner()
    for name, (case, run) in corpus.cases().items():
        assert corpus.subgroup_rows_missing(name, vk.cooperative_matrix_properties()) == []
        if not case.vulkan:
            got = corpus.vulkan_run(vk, name, run)
            assert corpus.differing(got, run.expected) == 0, name
        module, kernel = corpus.raised_module(name, run)
        try:
            api.compile_to_ptx(module.clone())
        except CoopError as e:
            assert name in NO_PTX and NO_PTX[name] in str(e), (name, str(e))
            continue
        assert name not in NO_PTX, name
        got = [b.copy() for b in run.buffers]
        api.run_kernel(module, kernel, got, run.grid)
        assert corpus.differing(got, run.expected) == 0, name
    assert vk.dispatches == sum(c.vulkan is None for c in corpus.CASES.values())


# PTX the simulator executes (tests/ptx_sim.py lacks prmt, which the s8 mma.sync path uses)
SIMULATED = ["khr_gemm_f16", "khr_control_flow", "coopmat2_reduce", "coopmat2_gemm_decode",
             "arm_blocked_gemm"]


@pytest.mark.parametrize("name", SIMULATED)
def test_raised_shader_ptx_executes_like_the_model(name):
    """The PTX of the raised shader (push constants bound) run by the PTX simulator equals the
    numpy model: the lowering of what the raising produces (scf.while, i1 flags, selects, the
    DecodeFunc's byte reads) computes what the shader does. The decode GEMM runs one workgroup
    (one 64x16 tile of C) to keep the simulation short."""
    import ptx_sim

    from coopdialect.context import make_context
    from coopdialect.passes.convert_coop_to_ptx import ConvertCoopToPtxPass

    run = corpus.CASES[name].model(np.random.default_rng(5))
    module, kernel = corpus.raised_kernel(corpus.binary_path(name).read_bytes(), name)
    fn = next(op for op in module.body.block.ops if getattr(op, "sym_name", None) and op.sym_name.data == kernel)
    block = tuple(int(x) for x in fn.attributes["coop.workgroup_size"].get_values())
    corpus.bind_scalars(module, kernel, run.scalars)
    ConvertCoopToPtxPass().apply(make_context(), module)
    lowered = next(op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == kernel)
    bufs = [b.copy() for b in run.buffers]
    grid = (1, 1, 1) if name == "coopmat2_gemm_decode" else run.grid
    ptx_sim.Kernel(lowered).run(bufs, grid, block)
    if name == "coopmat2_gemm_decode":
        n = run.scalars[1]
        got, want = bufs[2].reshape(-1, n)[:64, :16], run.expected[2].reshape(-1, n)[:64, :16]
        np.testing.assert_array_equal(got, want)
    else:
        for i, want in run.expected.items():
            np.testing.assert_array_equal(bufs[i], want, err_msg=f"{name}: buffer {i}")


def test_corrupt_corpus_binaries_raise_or_refuse_with_one_line():
    """Truncated, bit-flipped and word-swapped copies of the corpus binaries: each is refused by
    the reader, or read and then either raised into IR that verifies or refused by the raising
    with one line located at an instruction of the binary (never an internal error)."""
    import random

    from test_spirv_read import mutants
    from xdsl.dialects.builtin import ModuleOp

    from coopdialect.diagnostics import CoopError

    rng = random.Random(21)
    counts = {"read": 0, "raised": 0}
    for name in corpus.CASES:
        for m in mutants(corpus.binary_path(name).read_bytes(), rng, 30):
            try:
                spv = deserialize(m, file=f"{name}.spv")
            except SpirvReadError:
                continue
            counts["read"] += 1
            try:
                api.run_pipeline(ModuleOp([spv]), "raise-spirv-to-coop")
                counts["raised"] += 1
            except CoopError as e:
                line = str(e)
                assert "\n" not in line and "internal error" not in line, line
                assert re.match(rf"{name}\.spv:0:\d+: error: ", line), line
    assert counts["read"] > 0 and counts["raised"] > 0, counts


UNIFORM_AND_MIXED = """#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) writeonly buffer C { float c[]; };
layout(set = 0, binding = 2) uniform Sizes { uint n; float scale; } sz;
layout(set = 0, binding = 3) buffer S { uint count; float vals[]; } st;
void main() {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopMatLoad(ma, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, a, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    uint i = 0;
    while (true) {
        acc = coopMatMulAdd(ma, mb, acc);
        i++;
        if (i >= sz.n) break;
    }
    acc = acc * (sz.scale + st.vals[gl_LocalInvocationIndex / 32]);
    coopMatStore(acc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    st.count = i;
}
"""


def test_uniform_block_mixed_block_and_while_true(tmp_path):
    """A uniform block (a memref, like a storage buffer), a storage block of a uint and a float
    array (one memref per member: a memref has one element type), `while (true) { ... break; }`
    (an scf.while whose condition is the break's), gl_LocalInvocationIndex."""
    src = tmp_path / "u.comp"
    src.write_text(UNIFORM_AND_MIXED)
    data = validators.glslang(src)
    assert spirv_val_verdict(data, tmp_path) is None and reader_verdict(data) is None
    module, kernel = corpus.raised_kernel(data, "u")
    from xdsl.dialects import func

    (fn,) = [op for op in module.body.block.ops if isinstance(op, func.FuncOp)]
    assert [str(t) for t in fn.function_type.inputs] == [
        "memref<?xf16>", "memref<?xf32>", "memref<?xi32>", "memref<?xf32>", "memref<?xi32>", "memref<?xf32>"]
    assert "scf.while" in str(module)
    rng = np.random.default_rng(2)
    a = rng.integers(-3, 4, 512).astype(np.float16)
    c = np.zeros(256, np.float32)
    sizes_n, sizes_scale = np.array([3], np.int32), np.array([0.5], np.float32)
    count, vals = np.zeros(1, np.int32), np.array([1.5, 7.0], np.float32)
    api.run_kernel(module, kernel, [a, c, sizes_n, sizes_scale, count, vals], (1, 1, 1))
    want = 3 * (a[:256].reshape(16, 16).astype(np.float64) @ a[256:].reshape(16, 16).astype(np.float64)) * 2.0
    np.testing.assert_array_equal(c.reshape(16, 16), want)
    assert count[0] == 3


def test_decode_pointer_counts_the_pointee_size(tmp_path):
    """SPV_NV_cooperative_matrix2: a DecodeFunc's pointer is Pointer + index * sizeof(its pointee).
    coopmat2_gemm_decode without its 3 unused bytes: Q8Block is 33 bytes, not a whole number of the
    buffer's 32-bit words, so the blocks lie 33 bytes apart (what the H200 reads too)."""
    text = corpus.source("coopmat2_gemm_decode").read_text()
    src = tmp_path / "q33.comp"
    src.write_text(text.replace(" uint8_t pad[3];", ""))
    assert src.read_text() != text
    binary = validators.glslang(src)
    M, N, K = 128, 32, 64
    rng = np.random.default_rng(33)
    q = rng.integers(-8, 8, (M, K))
    s = rng.choice(np.array([4, 8, 16, 32], np.uint8), (M, K // 32))
    blocks = np.zeros((M, K // 32, 33), np.uint8)
    blocks[:, :, 0] = s
    blocks[:, :, 1:] = q.reshape(M, K // 32, 32).astype(np.int8).view(np.uint8)
    words = np.zeros(-(-blocks.size // 4) * 4, np.uint8)
    words[:blocks.size] = blocks.ravel()
    b = rng.integers(-3, 4, (K, N)).astype(np.float16)
    c = np.zeros(M * N, np.float32)
    module, kernel = corpus.raised_kernel(binary, "q33")
    api.run_kernel(module, kernel, [words.view(np.int32), b.ravel(), c, M, N, K], (N // 16, M // 64, 1))
    a = q * np.repeat(s.astype(np.float64), 32, axis=1) / 16
    np.testing.assert_array_equal(c.reshape(M, N), (a @ b.astype(np.float64)).astype(np.float32))
