"""Reading real SPIR-V (issue #14): what a module says survives the round trip, the reader
validates (one negative binary per rule, refused with the rule's name), coop-opt takes `.spv`
input, and corrupt binaries give only the reader's one-line error.

Negative binaries are made independently of the writer: glslang's output (or the Arm example's
binary), disassembled by spirv-dis, edited as text and reassembled by spirv-as."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis_profiles import scaled

from coopdialect.spirv.errors import SpirvEmitError, SpirvReadError
from coopdialect.spirv.grammar_tables import ENUMS
from coopdialect.spirv.reader import deserialize
from coopdialect.spirv.writer import serialize
from cli import run_coop_opt
import tool_processes
import validators
from validators import spirv_dis, spirv_tool, spirv_val

ROOT = Path(__file__).resolve().parent.parent
# the console scripts, through the interpreter running the tests (.venv/bin need not be on PATH)
# grammar values the GLSL sources take from glslang's command line (no number typed by hand)
DEFINES = [f"-DSCOPE_SUBGROUP={ENUMS['Scope']['Subgroup'][0]}"]


def glslang(src: str) -> bytes:
    return validators.glslang(src, *DEFINES)


def dis(data: bytes, tmp_path: Path) -> str:
    return spirv_dis(data, tmp_path)


def asm(text: str, tmp_path: Path) -> bytes:
    f, out = tmp_path / "edited.spvasm", tmp_path / "edited.spv"
    f.write_text(text)
    r = subprocess.run([spirv_tool("spirv-as"), "--target-env", "vulkan1.3", "--preserve-numeric-ids", str(f),
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out.read_bytes()


def val_ok(data: bytes, tmp_path: Path) -> bool:
    f = tmp_path / "v.spv"
    f.write_bytes(data)
    return subprocess.run([spirv_tool("spirv-val"), "--target-env", "vulkan1.3", str(f)],
                          capture_output=True).returncode == 0


def sub(text: str, pattern: str, repl: str) -> str:
    new, n = re.subn(pattern, repl, text, count=1, flags=re.M)
    assert n == 1, f"pattern {pattern!r} not found"
    return new


def coop_type(text: str, elem: str, rows: int, cols: int, use: int) -> str:
    """The id of `OpTypeCooperativeMatrixKHR elem Subgroup/Workgroup rows cols use` in a disassembly."""
    m = re.search(rf"^\s*(%\S+) = OpTypeCooperativeMatrixKHR %{elem} %\S+ %\w+_{rows} %\w+_{cols} %\w+_{use}$",
                  text, re.M)
    assert m, f"no {elem} {rows}x{cols} use {use} matrix type"
    return m.group(1)


# -- what the module says survives --------------------------------------------------------------


def test_entry_point_name_and_function_name_are_both_kept(tmp_path):
    text = dis(glslang("tests/data/trivial.comp"), tmp_path)
    renamed = asm(sub(text, r'OpName %main "main"', 'OpName %main "entry"'), tmp_path)
    out = dis(serialize(deserialize(renamed)), tmp_path)
    assert re.search(r'OpEntryPoint GLCompute %entry "main"', out), out
    assert 'OpName %entry "entry"' in out
    unnamed = asm(sub(text, r'^\s*OpName %main "main"\n', ""), tmp_path)
    out = dis(serialize(deserialize(unnamed)), tmp_path)
    assert re.search(r'OpEntryPoint GLCompute %main "main"', out), out


def test_execution_mode_id_and_spec_constant_op_round_trip(tmp_path):
    khr = dis(serialize(deserialize(glslang("tests/data/coopmat_khr_int.comp"))), tmp_path)
    assert re.search(r"OpExecutionModeId %main LocalSizeId %\S+ %uint_1 %uint_1", khr), khr
    assert "OpSpecConstantComposite" in khr
    nv = dis(serialize(deserialize(glslang("tests/data/coopmat_nv_length.comp"))), tmp_path)
    assert re.search(r"OpSpecConstantOp %uint CooperativeMatrixLengthNV %\S+", nv), nv
    assert re.search(r"OpSpecConstantOp %int IAdd ", nv), nv


def test_nv_matrices_with_the_glsl450_memory_model(tmp_path):
    """SPV_NV_cooperative_matrix does not need the Vulkan memory model: a GLSL450 module is read
    and written back valid (the requirement belongs to SPV_KHR_cooperative_matrix)."""
    text = dis(glslang("tests/data/coopmat_nv.comp"), tmp_path)
    text = sub(text, r"OpMemoryModel Logical Vulkan", "OpMemoryModel Logical GLSL450")
    text = sub(text, r"^\s*OpCapability VulkanMemoryModel\n", "")
    data = asm(text, tmp_path)
    assert val_ok(data, tmp_path), "the edited module should be valid"
    out = serialize(deserialize(data))
    spirv_val(out, tmp_path)
    assert "OpMemoryModel Logical GLSL450" in dis(out, tmp_path)


# -- one negative binary per validation rule -----------------------------------------------------

T2 = "tests/data/coopmat2_tensor_ops.comp"


# spirv-dis spells the coopmat2 instructions the grammar has since promoted by their new names
# (OpCooperativeMatrixConvertUseEXT, ...ReduceEXT, ...PerElementOpEXT); spirv-as takes both
CONVERT, REDUCE, PER_ELEMENT = (r"OpCooperativeMatrixConvert(?:NV|UseEXT)", r"OpCooperativeMatrixReduce(?:NV|EXT)",
                                r"OpCooperativeMatrixPerElementOp(?:NV|EXT)")


def _convert_use(t: str) -> str:
    return sub(t, rf"= {CONVERT} %\S+", f"= OpCooperativeMatrixConvertNV {coop_type(t, 'half', 16, 16, 2)}")


def _convert_component(t: str) -> str:
    t = sub(t, r"^(\s*%\S+ = OpTypeCooperativeMatrixKHR %float %\S+ %uint_8 %uint_8 %uint_2)$",
            r"\1\n%float_a = OpTypeCooperativeMatrixKHR %float %uint_2 %uint_16 %uint_16 %uint_0")
    return sub(t, rf"= {CONVERT} %\S+", "= OpCooperativeMatrixConvertNV %float_a")


NEGATIVE = {
    # name: (source, edit of the disassembly, words of the rule the reader must name)
    "convert_result_use": (T2, _convert_use, "The Use of Result Type must be MatrixAKHR or MatrixBKHR"),
    "convert_component_type": (T2, _convert_component, "same Component Type, Scope, Rows, and Columns"),
    "transpose_result_use": (T2, lambda t: sub(t, r"= OpCooperativeMatrixTransposeNV %\S+",
                                               f"= OpCooperativeMatrixTransposeNV {coop_type(t, 'half', 16, 16, 0)}"),
                             "The Use of Result Type must be MatrixBKHR"),
    "reduce_2x2_size": (T2, lambda t: sub(t, rf"= {REDUCE} %\S+ (%\S+ 2x2)",
                                          rf"= OpCooperativeMatrixReduceNV {coop_type(t, 'float', 16, 16, 2)} \1"),
                        "the dimensions of Result Type must be half"),
    "reduce_combine_signature": (T2, lambda t: sub(t, r"(Row\|Column) %combineAdd\S*", r"\1 %main"),
                                 "CombineFunc must be an OpFunction with two parameters"),
    "per_element_signature": ("tests/data/coopmat2_nv.comp",
                              lambda t: sub(t, rf"({PER_ELEMENT} %\S+ %\S+) %addRowCol\S*",
                                            r"\1 %combineMax_f1_f1_"),
                              "Func's first two parameters must be 32-bit integer types"),
    "decode_func_signature": (T2, lambda t: sub(t, r"(OpCooperativeMatrixLoadTensorNV .* TensorView|"
                                               r"OpCooperativeMatrixLoadTensorNV .*DecodeFunc) %decodeScaled\S*",
                                               r"\1 %combineAdd_f1_f1_"),
                              "DecodeFunc's return type must match"),
    "set_dimension_count": (T2, lambda t: sub(t, r"(OpTensorLayoutSetDimensionNV %\S+ %\S+ %uint_32) %uint_32", r"\1"),
                            "the number of Dim operands must be 2"),
    "slice_count": (T2, lambda t: sub(t, r"(OpTensorLayoutSliceNV %\S+ %\S+ %uint_0 %uint_16 %uint_0) %uint_16", r"\1"),
                    "the number of Offset and Span operands must be 4"),
    "mul_add_uses": ("tests/data/coopmat_khr.comp",
                     lambda t: sub(t, r"OpCooperativeMatrixMulAddKHR (%\S+) (%\S+) (%\S+) (%\S+)", r"OpCooperativeMatrixMulAddKHR \1 \3 \2 \4"),
                     "A must have Use MatrixAKHR, B MatrixBKHR"),
    "khr_use_value": ("tests/data/coopmat_khr.comp",
                      lambda t: sub(t, r"(OpTypeCooperativeMatrixKHR %\S+ %\S+ %\S+ %\S+) %uint_2$", r"\1 %uint_16"),
                      "unknown CooperativeMatrixUse value 16"),
    "coopmat2_without_extension": (T2, lambda t: sub(t, r'^\s*OpExtension "SPV_NV_cooperative_matrix2"\n', ""),
                                   "needs OpExtension SPV_NV_cooperative_matrix2"),
    "khr_memory_model": ("tests/data/coopmat_khr.comp",
                         lambda t: sub(sub(t, "OpMemoryModel Logical Vulkan", "OpMemoryModel Logical GLSL450"),
                                       r"^\s*OpCapability VulkanMemoryModel\n", ""),
                         "SPV_KHR_cooperative_matrix needs memory model Vulkan"),
    "arm_stride": ("examples/gemm_f16_arm_blocked.mlir",
                   lambda t: sub(t, r"(OpCooperativeMatrixLoadKHR %\S+ %\S+ %uint_4202) %\S+", r"\1 %uint_3"),
                   "Stride must be a constant 1, 2 or 4"),
    "arm_shape": ("examples/gemm_f16_arm_blocked.mlir",
                  lambda t: sub(t, r"^(\s*%\S+ = OpTypeCooperativeMatrixKHR %half %\S+) %uint_16 %uint_16 %uint_1$",
                                r"\1 %uint_1 %uint_16 %uint_1"),
                  "ColumnBlockedInterleavedARM Rows must be a multiple of 4"),
}


def _source(src: str, tmp_path: Path) -> bytes:
    if src.endswith(".mlir"):
        out = tmp_path / "ex.spv"
        r = run_coop_opt([ROOT / src, "-p", "convert-coop-to-spirv", "-t", "spirv", "-o", out])
        assert r.returncode == 0, r.stderr
        return out.read_bytes()
    return glslang(src)


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_negative_binary_is_refused_with_its_rule(name, tmp_path):
    src, edit, rule = NEGATIVE[name]
    original = _source(src, tmp_path)
    deserialize(original)  # the unedited module is read
    bad = asm(edit(dis(original, tmp_path)), tmp_path)
    with pytest.raises(SpirvReadError) as e:
        deserialize(bad)
    assert rule in str(e.value), str(e.value)
    assert "\n" not in str(e.value)


# -- coop-opt ------------------------------------------------------------------------------------


def test_coop_opt_reads_spv(tmp_path):
    data = glslang("tests/data/coopmat2_tensor_ops.comp")
    f = tmp_path / "shader.spv"
    f.write_bytes(data)
    r = tool_processes.run(["coop-opt", f, "-t", "spirv", "-o", tmp_path / "out.spv"])
    assert r.returncode == 0, r.stderr
    spirv_val((tmp_path / "out.spv").read_bytes(), tmp_path)
    r = tool_processes.run(["coop-opt", "-f", "spirv"], input=data)
    assert r.returncode == 0 and b"spirv.NV.CooperativeMatrixReduce" in r.stdout
    (tmp_path / "bad.spv").write_bytes(data[:-6])
    r = tool_processes.run(["coop-opt", tmp_path / "bad.spv"], text=True)
    assert r.returncode == 1 and r.stdout == ""
    assert re.fullmatch(rf"{re.escape(str(tmp_path / 'bad.spv'))}:0:\d+: error: binary length \d+ bytes is not a "
                        r"multiple of 4\n", r.stderr), r.stderr


# -- corrupt binaries ----------------------------------------------------------------------------

FUZZ_SOURCES = ["tests/data/coopmat_khr.comp", "tests/data/coopmat2_tensor_ops.comp",
                "tests/data/coopmat_nv_length.comp", "tests/data/trivial.comp"]


def mutants(data: bytes, rng: random.Random, n: int):
    words = len(data) // 4
    for i in range(n):
        kind = i % 3
        b = bytearray(data)
        if kind == 0:  # truncated at a word boundary
            yield bytes(b[: 4 * rng.randrange(1, words)])
            continue
        if kind == 1:  # one bit flipped
            bit = rng.randrange(8 * len(b))
            b[bit // 8] ^= 1 << (bit % 8)
        else:  # two words swapped
            i1, i2 = rng.randrange(5, words), rng.randrange(5, words)
            b[4 * i1 : 4 * i1 + 4], b[4 * i2 : 4 * i2 + 4] = b[4 * i2 : 4 * i2 + 4], b[4 * i1 : 4 * i1 + 4]
        yield bytes(b)


def val_message(data: bytes, tmp_path: Path) -> str:
    f = tmp_path / "v.spv"
    f.write_bytes(data)
    r = subprocess.run([spirv_tool("spirv-val"), "--target-env", "vulkan1.3", str(f)], capture_output=True, text=True)
    return "" if r.returncode == 0 else (r.stderr + r.stdout).strip().splitlines()[0]


def fuzz(tmp_path: Path, per_source: int, seed: int = 14) -> dict[str, int]:
    """Read every mutant; a read error must be the reader's one line, and what is read must be
    written back as a module spirv-val accepts. Returns the counts."""
    rng = random.Random(seed)
    counts = {"mutants": 0, "refused": 0, "read_and_valid": 0}
    for src in FUZZ_SOURCES:
        for m in mutants(glslang(src), rng, per_source):
            counts["mutants"] += 1
            try:
                module = deserialize(m)
            except SpirvReadError as e:
                assert "\n" not in str(e)
                counts["refused"] += 1
                continue
            try:
                out = serialize(module)
            except SpirvEmitError as e:
                raise AssertionError(f"{src}: a mutant was read but cannot be written: {e}") from None
            msg = val_message(out, tmp_path)
            assert not msg, f"{src}: a mutant was read and written back invalid: {msg}"
            counts["read_and_valid"] += 1
    return counts


def test_corrupt_binaries_fail_with_one_line(tmp_path):
    n = 4 * scaled(30)  # 4 sources (hypothesis_profiles: 300 mutants each in the long profile)
    counts = fuzz(tmp_path, per_source=scaled(30))
    assert counts["mutants"] == n and counts["refused"] + counts["read_and_valid"] == n
    assert counts["read_and_valid"] > 0  # some mutants (in unused words, names) are still valid modules


def test_reader_verification_rejects_an_empty_function_body():
    """The reader verifies each op once, then the region structure that `module.verify()` checks
    (here: a single-block region emptied of its terminator, which no op verifier sees)."""
    from pathlib import Path

    from coopdialect.spirv import reader
    from coopdialect.spirv.errors import SpirvReadError

    data = (Path(__file__).parent / "data" / "coopmat_khr.spv").read_bytes()
    module = reader.deserialize(data)
    fn = next(op for op in module.walk() if op.name == "spirv.func")
    for extra in list(fn.regions[0].blocks)[1:]:
        fn.regions[0].detach_block(extra)
    for op in reversed(list(fn.regions[0].blocks[0].ops)):
        op.detach()
    with pytest.raises(SpirvReadError, match="spirv.func contains empty block in single-block region"):
        reader._verify(module)
