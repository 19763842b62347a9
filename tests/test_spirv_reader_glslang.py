"""The SPIR-V reader reads glslang's cooperative-matrix modules (DESIGN.md: "round trip, glslang's
output"): for each GLSL compute shader, compiled here with glslangValidator (--target-env
vulkan1.3), reader succeeds; writer(reader(glslang.spv)) passes spirv-val; writer -> reader ->
writer is byte-identical from then on; and the rewritten module keeps glslang's instructions,
checked against spirv-dis of glslang's own binary (an independent disassembler)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from coopdialect.dialects import spirv as sp
from coopdialect.dialects import spirv_general as spg
from coopdialect.spirv.reader import deserialize
from coopdialect.spirv.writer import serialize
import validators
from validators import spirv_dis, spirv_val

ROOT = Path(__file__).resolve().parent.parent
SHADERS = [
    "tests/data/coopmat_khr.comp",            # KHR load / mulAdd / store
    "tests/data/coopmat_khr_loop.comp",       # KHR loop, element-wise ops, conversions, call, spec constant
    "tests/data/coopmat_nv.comp",             # GL_NV_cooperative_matrix
    "tests/data/coopmat2_nv.comp",            # GL_NV_cooperative_matrix2: tensor layout/view, reduce, per-element
    "tests/data/coopmat_khr_f16_f32.comp",  # readonly / writeonly buffers, push constants
    "tests/data/trivial.comp",
    "tests/data/coopmat2_tensor_ops.comp",    # every other coopmat2 / tensor-addressing builtin, DecodeFunc
    "tests/data/coopmat_nv_length.comp",      # NV length() as OpSpecConstantOp, integer NV matrices
    "tests/data/coopmat_khr_int.comp",        # KHR integer MulAdd, length(), OpExecutionModeId
    "tests/data/raise_gemm_select.comp",      # push constants, a selection, int8 saturating MulAdd
    "tests/data/glsl_math.comp",              # GLSL.std.450 built-ins (OpExtInst)
    "tests/data/glsl_unliftable.comp",        # GLSL.std.450 FSign
]
# debug instructions the reader drops (names survive only as symbol names and SSA name hints)
DROPPED = {"OpName", "OpMemberName", "OpString", "OpModuleProcessed", "OpLine", "OpNoLine",
           # not debug, but without meaning here: types are structural and emitted dependencies first,
           # so a (non-recursive) pointer never needs a forward declaration
           "OpTypeForwardPointer"}


def glslang(src: str) -> bytes:
    return validators.glslang(src, *validators.grammar_defines())


def disassembled_ops(data: bytes, tmp_path: Path, name: str) -> list[str]:
    """Opnames of `data` per spirv-dis (one instruction per line)."""
    ops = []
    for line in spirv_dis(data, tmp_path, raw_id=True, name=name).splitlines():
        if line.startswith(";"):
            continue
        words = line.split()
        op = words[2] if len(words) > 2 and words[1] == "=" else (words[0] if words else "")
        if op.startswith("Op"):
            ops.append(op)
    return ops


@pytest.mark.parametrize("src", SHADERS, ids=[Path(s).stem for s in SHADERS])
def test_glslang_module_round_trips(src, tmp_path):
    original = glslang(src)
    module = deserialize(original)
    assert isinstance(module, sp.ModuleOp)
    once = serialize(module)
    spirv_val(once, tmp_path, "rewritten.spv")
    assert serialize(deserialize(once)) == once, "writer -> reader -> writer changed the bytes"

    # Every kind of instruction glslang emitted is still there (debug names aside) and the
    # function bodies have the same instructions: the rewrite only renumbers ids and reorders
    # the (deduplicated) types, constants and decorations.
    theirs = disassembled_ops(original, tmp_path, "theirs.spv")
    ours = disassembled_ops(once, tmp_path, "ours.spv")
    assert set(theirs) - DROPPED == set(ours) - DROPPED

    def body(ops: list[str]) -> Counter:
        start = ops.index("OpFunction")
        return Counter(ops[start:])

    assert body(theirs) == body(ours)


def test_glslang_constructs_become_ops():
    """The general constructs of coopmat_khr_loop.comp are ops, not dropped: a function-local
    Variable, a FunctionCall to the helper, the GLSL.std.450 import and ExtInst (max), the
    SpecId 1 constant (default 4, from `layout(constant_id = 1) const uint K_TILES = 4`),
    gl_WorkGroupSize (32, 1, 1) as a ConstantComposite, and OpSource GLSL 450."""
    module = deserialize(glslang("tests/data/coopmat_khr_loop.comp"))
    ops = list(module.walk())
    kinds = Counter(type(op) for op in ops)
    assert kinds[spg.VariableOp] > 0 and kinds[spg.FunctionCallOp] == 1
    assert [op.set.data for op in ops if isinstance(op, spg.ExtInstImportOp)] == ["GLSL.std.450"]
    assert {op.set.data for op in ops if isinstance(op, spg.ExtInstOp)} == {"GLSL.std.450"}
    specs = [op for op in ops if isinstance(op, spg.SpecConstantOp)]
    assert [(s.spec_id.data, s.value.value.data) for s in specs] == [(1, 4)]
    composites = [op for op in ops if isinstance(op, spg.ConstantCompositeOp)]
    assert any([c.owner.value.value.data for c in op.constituents] == [32, 1, 1] for op in composites)
    (source,) = [op for op in ops if isinstance(op, spg.SourceOp)]
    assert (source.language.data, source.version.data) == ("GLSL", 450)
    assert "GL_KHR_cooperative_matrix" in [e.data for e in source.extensions]
    readonly = [op for op in ops if isinstance(op, sp.GlobalVariableOp) and op.decorations is not None]
    assert {op.decorations.data for op in readonly} == {"NonWritable"}  # a, b are readonly buffers


def test_printed_ir_parses_back():
    """The new ops and type parameters print and parse (custom syntax of spirv.GlobalVariable's
    decorations and spirv.struct's member decorations included)."""
    from coopdialect.context import make_context
    from xdsl.parser import Parser

    for src in ("tests/data/coopmat_khr_loop.comp", "tests/data/coopmat2_nv.comp"):
        module = deserialize(glslang(src))
        data = serialize(module)
        again = Parser(make_context(), str(module)).parse_module()
        (parsed,) = [op for op in again.walk() if isinstance(op, sp.ModuleOp)]
        assert serialize(parsed) == data
