"""SPIR-V writer/reader: spirv-val accepts what the writer makes, writer -> reader -> writer is
byte-identical, and the reader rejects corrupt input with one-line errors."""

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import FunctionType, IntegerType, VectorType, f16, f32, i1, i32
from xdsl.ir import Block, Region
from xdsl.parser import Parser

from coopdialect.dialects import spirv as sp
from coopdialect.dialects.spirv_dialect import SPIRV
from coopdialect.spirv.errors import SpirvEmitError, SpirvReadError
from coopdialect.spirv.grammar_tables import ENUMS
from coopdialect.spirv.reader import deserialize
from coopdialect.spirv.requirements import apply_requirements
from coopdialect.spirv.writer import serialize
from validators import spirv_dis, spirv_tool, spirv_val

ROOT = Path(__file__).resolve().parent.parent


def validate(data: bytes, tmp_path: Path) -> None:
    spirv_val(data, tmp_path)


SSBO_F16 = sp.PointerType(sp.StructType([sp.RuntimeArrayType(f16, 2)], [0], block=True), "StorageBuffer")
SSBO_F32 = sp.PointerType(sp.StructType([sp.RuntimeArrayType(f32, 4)], [0], block=True), "StorageBuffer")
UVEC3_IN = sp.PointerType(VectorType(i32, [3]), "Input")
U32_IN = sp.PointerType(i32, "Input")


def gemm_module(nv: bool = False) -> sp.ModuleOp:
    """C[16x16] = sum over k-tiles of A * B (loop-carried accumulator in an OpPhi), plus some
    element-wise and conversion ops; the NV variant uses SPV_NV_cooperative_matrix."""
    if nv:
        ta = tb = tc = sp.NVCooperativeMatrixType(16, 16, f16, "Subgroup")
        tacc = sp.NVCooperativeMatrixType(16, 16, f32, "Subgroup")
    else:
        ta = sp.CooperativeMatrixType(16, 16, f16, "Subgroup", "MatrixA")
        tb = sp.CooperativeMatrixType(16, 16, f16, "Subgroup", "MatrixB")
        tacc = sp.CooperativeMatrixType(16, 16, f32, "Subgroup", "MatrixAcc")
    g = [sp.GlobalVariableOp("A", SSBO_F16, 0, 0), sp.GlobalVariableOp("C", SSBO_F32, 0, 1),
         sp.GlobalVariableOp("wg_id", UVEC3_IN, built_in="WorkgroupId"),
         sp.GlobalVariableOp("lid", UVEC3_IN, built_in="LocalInvocationId"),
         sp.GlobalVariableOp("sg_id", U32_IN, built_in="SubgroupId")]
    fn = sp.FuncOp("main", FunctionType.from_lists([], []))
    entry = fn.body.blocks[0]
    header, body, cont, exit_ = Block(arg_types=[i32, tacc]), Block(), Block(), Block()
    for b in (header, body, cont, exit_):
        fn.body.add_block(b)
    c = lambda v, t=i32: sp.ConstantOp(v, t)  # noqa: E731
    c0, c1, c4, c16, zero = c(0), c(1), c(4), c(16), c(0.0, tacc)
    row_major = c(ENUMS["CooperativeMatrixLayout"]["RowMajorKHR"][0])
    false = c(False, i1)
    pa = sp.AddressOfOp("A", SSBO_F16)
    pc = sp.AddressOfOp("C", SSBO_F32)
    pwg = sp.AddressOfOp("wg_id", UVEC3_IN)
    psg = sp.AddressOfOp("sg_id", U32_IN)
    wg = sp.LoadOp(pwg.pointer)
    wgx = sp.CompositeExtractOp(wg.result, [0], i32)
    sg = sp.LoadOp(psg.pointer)
    base = sp.IMulOp(wgx.result, c16.result)
    base2 = sp.IAddOp(base.results[0], sg.result)
    entry.add_ops([c0, c1, c4, c16, zero, row_major, false, pa, pc, pwg, psg, wg, wgx, sg, base, base2,
                   sp.BranchOp(header, [c0.result, zero.result])])
    k, acc = header.args
    lt = sp.SLessThanOp(k, c4.result)
    header.add_ops([lt, sp.LoopMergeOp(exit_, cont), sp.BranchConditionalOp(lt.results[0], body, exit_)])
    off = sp.IMulOp(k, c16.result)
    elem = sp.AccessChainOp(pa.pointer, [c0.result, off.results[0]], sp.PointerType(f16, "StorageBuffer"))
    if nv:
        a = sp.NVCooperativeMatrixLoadOp(elem.result, c16.result, false.result, ta)
        a_acc = sp.FConvertOp(a.result, tacc)
        mma = sp.FAddOp(a_acc.results[0], acc)
        body_ops = [off, elem, a, a_acc, mma]
        new_acc = mma.results[0]
    else:
        a = sp.KHRCooperativeMatrixLoadOp(elem.result, row_major.result, c16.result, ta)
        b = sp.KHRCooperativeMatrixLoadOp(elem.result, row_major.result, c16.result, tb, "Aligned(16)")
        mma = sp.KHRCooperativeMatrixMulAddOp(a.result, b.result, acc)
        body_ops = [off, elem, a, b, mma]
        new_acc = mma.result
    body.add_ops([*body_ops, sp.BranchOp(cont)])
    # the continue block needs new_acc: pass it through header args
    k1 = sp.IAddOp(k, c1.result)
    cont.add_ops([k1, sp.BranchOp(header, [k1.results[0], new_acc])])
    two = c(2.0, f32)
    scaled = sp.MatrixTimesScalarOp(acc, two.result, tacc)
    neg = sp.FNegateOp(scaled.results[0])
    out = sp.AccessChainOp(pc.pointer, [c0.result, base2.results[0]], sp.PointerType(f32, "StorageBuffer"))
    fl = sp.ConvertSToFOp(base2.results[0], f32)
    sel = sp.SelectOp(lt.results[0], fl.results[0], two.result)
    st = sp.StoreOp(out.result, sel.result)
    if nv:
        store = sp.NVCooperativeMatrixStoreOp(out.result, neg.results[0], c16.result, false.result)
        length = sp.NVCooperativeMatrixLengthOp(tacc)
    else:
        store = sp.KHRCooperativeMatrixStoreOp(out.result, neg.results[0], row_major.result, c16.result)
        length = sp.KHRCooperativeMatrixLengthOp(tacc)
    exit_.add_ops([two, scaled, neg, out, fl, sel, st, store, length, sp.ReturnOp()])
    ops = [*g, sp.EntryPointOp("GLCompute", "main", ["A", "C", "wg_id", "lid", "sg_id"]),
           sp.ExecutionModeOp("main", "LocalSize", [32, 1, 1]), fn]
    m = sp.ModuleOp(ops, capabilities=["Shader"])
    apply_requirements(m)
    return m


def parsed_ops_module() -> sp.ModuleOp:
    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(SPIRV)
    path = ROOT / "tests/filecheck/spirv/ops.mlir"
    mod = Parser(ctx, path.read_text(), str(path)).parse_module()
    return next(op for op in mod.walk() if isinstance(op, sp.ModuleOp))


MODULES = {"khr_gemm": lambda: gemm_module(False), "nv_gemm": lambda: gemm_module(True),
           "ops_mlir": parsed_ops_module}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_valid_and_byte_identical(name, tmp_path):
    data = serialize(MODULES[name]())
    validate(data, tmp_path)
    again = serialize(deserialize(data, None))
    assert again == data


def test_requirements_derived():
    m = gemm_module(False)
    assert [c.data for c in m.capabilities] == ["Shader", "Float16", "GroupNonUniform", "StorageBuffer16BitAccess",
                                                "VulkanMemoryModel", "CooperativeMatrixKHR"]
    assert [e.data for e in m.extensions] == ["SPV_KHR_cooperative_matrix"]
    assert m.memory_model.data == "Vulkan"


def test_disassembly(tmp_path):
    text = spirv_dis(serialize(gemm_module(False)), tmp_path)
    for line in ["OpCapability CooperativeMatrixKHR", 'OpExtension "SPV_KHR_cooperative_matrix"',
                 "OpMemoryModel Logical Vulkan", 'OpEntryPoint GLCompute %main "main" %A %C %wg_id %lid %sg_id',
                 "OpExecutionMode %main LocalSize 32 1 1", "OpDecorate %sg_id BuiltIn SubgroupId",
                 "OpDecorate %A Binding 0", "OpLoopMerge", "OpPhi", "OpCooperativeMatrixMulAddKHR",
                 "OpCooperativeMatrixLoadKHR", "Aligned 16"]:
        assert line in text, line


def test_missing_capability_is_refused():
    m = gemm_module(False)
    from xdsl.dialects.builtin import ArrayAttr, StringAttr
    m.capabilities = ArrayAttr([StringAttr("Shader"), StringAttr("VulkanMemoryModel")])
    with pytest.raises(SpirvEmitError, match="needs capability"):
        serialize(m)


def test_optional_operand_order_is_refused():
    m = parsed_ops_module()
    load = next(op for op in m.walk() if isinstance(op, sp.KHRCooperativeMatrixLoadOp) and op.memory_operand is not None)
    load.operands = load.operands[:2]
    with pytest.raises(SpirvEmitError, match="needs the optional operand 'Stride'"):
        serialize(m)


def _words(data: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def _pack(words: list[int]) -> bytes:
    return struct.pack(f"<{len(words)}I", *words)


def _corruptions():
    good = _words(serialize(gemm_module(False)))
    first = 5  # first instruction (OpCapability)
    yield "bad magic", _pack([0xDEADBEEF, *good[1:]]), "word 0: bad magic"
    yield "short header", _pack(good[:3]), "truncated header"
    yield "truncated", _pack(good[:8]), "word 7: instruction of 2 words runs past the end"
    yield "odd length", _pack(good)[:-2], "not a multiple of 4"
    w = list(good)
    w[first] = w[first] & 0xFFFF
    yield "word count 0", _pack(w), f"word {first}: instruction word count is 0"
    w = list(good)
    w[first] = (w[first] & 0xFFFF0000) | 0xFFF0
    yield "unknown opcode", _pack(w), f"word {first}: unknown opcode"
    w = list(good)
    w[first] = (3 << 16) | (w[first] & 0xFFFF)
    w.insert(first + 1, 1)
    yield "wrong operand count", _pack(w), f"word {first}: OpCapability: expected 1 operand"
    # an undefined id: point the last OpReturn-preceding store at a fresh id
    w = list(good)
    pos = 5
    while pos < len(w):
        if w[pos] & 0xFFFF == 62:  # OpStore  (value from the grammar checked below)
            w[pos + 2] = good[3] + 50
            break
        pos += w[pos] >> 16
    yield "undefined id", _pack(w), "undefined id"


def test_opstore_opcode_from_grammar():
    from coopdialect.spirv.grammar_tables import INSTRUCTIONS
    assert INSTRUCTIONS["OpStore"][0] == 62


@pytest.mark.parametrize("name, data, message", list(_corruptions()), ids=lambda x: x if isinstance(x, str) and len(x) < 30 else "")
def test_corrupt_input_rejected(name, data, message):
    with pytest.raises(SpirvReadError) as e:
        deserialize(data, None)
    text = str(e.value)
    assert "\n" not in text
    assert text.startswith("word ")
    assert message in text


def test_reads_glslang_output_or_rejects_clearly(tmp_path):
    out = tmp_path / "cm.spv"
    subprocess.run([spirv_tool("glslangValidator"), "-V", "--target-env", "vulkan1.3", "-o", str(out),
                    str(ROOT / "tests/data/coopmat_khr.comp")], check=True, capture_output=True)
    try:
        module = deserialize(out.read_bytes(), None)
    except SpirvReadError as e:  # unsupported constructs are named, never a crash
        assert "\n" not in str(e) and str(e).startswith("word ")
    else:
        assert isinstance(module, sp.ModuleOp)
