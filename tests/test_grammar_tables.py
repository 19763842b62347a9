"""The checked-in grammar tables are exactly what tools/gen_spirv_tables.py makes of the grammar."""

import os
from pathlib import Path

import pytest

from coopdialect.spirv import grammar_tables as gt

ROOT = Path(__file__).resolve().parent.parent


def grammar_path() -> Path:
    if os.environ.get("SPIRV_GRAMMAR"):
        return Path(os.environ["SPIRV_GRAMMAR"])
    if os.environ.get("SPIRV_TOOLS_CACHE"):
        return Path(os.environ["SPIRV_TOOLS_CACHE"]) / "spirv.core.grammar.json"
    return Path.home() / ".cache/coopdialect/spirv-tools-forky/spirv.core.grammar.json"


def test_regenerate_is_byte_identical(tmp_path):
    import subprocess
    import sys

    path = grammar_path()
    if not path.is_file():
        pytest.fail(f"SPIR-V grammar not found at {path}: set SPIRV_GRAMMAR or SPIRV_TOOLS_CACHE "
                    "(tools/install_spirv_tools.sh installs it)")
    out = tmp_path / "grammar_tables.py"
    subprocess.run([sys.executable, str(ROOT / "tools/gen_spirv_tables.py"), str(path), "-o", str(out)], check=True)
    assert out.read_bytes() == (ROOT / "coopdialect/spirv/grammar_tables.py").read_bytes()


@pytest.mark.parametrize("opname, opcode", [
    ("OpCooperativeMatrixMulAddKHR", 4459), ("OpCooperativeMatrixLoadKHR", 4457),
    ("OpTypeCooperativeMatrixKHR", 4456), ("OpCooperativeMatrixLoadNV", 5359),
    ("OpCooperativeMatrixMulAddNV", 5361), ("OpTypeTensorLayoutNV", 5370)])
def test_opcodes_match_spirv_opcodes_md(opname, opcode):
    assert gt.INSTRUCTIONS[opname][0] == opcode
    assert gt.OPCODE_NAMES[opcode] == opname


def test_enums_and_capabilities():
    assert gt.MAGIC_NUMBER == 0x07230203
    assert gt.ENUMS["Capability"]["CooperativeMatrixKHR"][0] == 6022
    assert gt.CAPABILITY_EXTENSIONS["CooperativeMatrixKHR"] == ("SPV_KHR_cooperative_matrix",)
    assert gt.CAPABILITY_IMPLIES["CooperativeMatrixNV"] == ("Shader",)
    assert gt.ENUMS["CooperativeMatrixUse"]["MatrixAccumulatorKHR"][0] == 2
    assert gt.ENUMS["CooperativeMatrixOperands"]["SaturatingAccumulationKHR"][0] == 0x10
    assert gt.ENUMS["TensorAddressingOperands"]["TensorView"][3] == (("IdRef", ""),)
    assert gt.ENUMS["Scope"]["Subgroup"][0] == 3
    # KHR instructions name only a capability; the capability names the extension
    assert gt.INSTRUCTIONS["OpCooperativeMatrixMulAddKHR"][2:4] == (("CooperativeMatrixKHR",), ())
    assert gt.INSTRUCTIONS["OpCooperativeMatrixMulAddNV"][3] == ("SPV_NV_cooperative_matrix",)


@pytest.mark.parametrize("name, number", [  # the GLSL.std.450 specification's instruction numbers
    ("Round", 1), ("FAbs", 4), ("Floor", 8), ("Tanh", 21), ("Exp", 27), ("Log", 28), ("Exp2", 29),
    ("Log2", 30), ("Sqrt", 31), ("InverseSqrt", 32), ("FMin", 37), ("FMax", 40), ("Fma", 50),
    ("NMin", 79), ("NMax", 80), ("NClamp", 81)])
def test_glsl_std_450_numbers(name, number):
    assert gt.GLSL_STD_450[name][0] == number
    assert len({entry[0] for entry in gt.GLSL_STD_450.values()}) == len(gt.GLSL_STD_450)
    assert gt.GLSL_STD_450["Fma"][1] == (("IdRef", "", "a"), ("IdRef", "", "b"), ("IdRef", "", "c"))
