"""Memory operands with a Scope <id> parameter (MakePointerAvailable / MakePointerVisible,
SPIR-V 1.6 "Memory Operands"): what glslang writes on loads and stores of `shared` variables in
a shader that uses the Vulkan memory model. The reader names the Scope of the constant the <id>
points at, the writer emits a constant for it; SPIRV-Tools' disassembler and validator are the
independent reference."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_raise_spirv import raised
from test_spirv_read import dis, glslang
from validators import spirv_val
from xdsl.utils.exceptions import VerifyException

from coopdialect import api
from coopdialect.dialects import spirv
from coopdialect.errors import CoopError
from coopdialect.dialects.spirv_types import parse_enum_operand
from coopdialect.spirv.grammar_tables import ENUMS
from coopdialect.spirv.reader import deserialize
from coopdialect.spirv.writer import serialize

ROOT = Path(__file__).resolve().parents[1]
SRC = "tests/data/shared_staging_gemm.comp"
# a memory operand with a scope <id>, as spirv-dis prints it: the mask, then the <id>
_SCOPED = re.compile(r"(MakePointer(?:Available|Visible)\S*) (%\S+)")


def _scoped_operands(text: str) -> list[tuple[str, str]]:
    return [m.groups() for line in text.splitlines() for m in [_SCOPED.search(line)] if m]


def test_glslangs_shared_memory_staging_reads_writes_back_and_validates(tmp_path):
    original = glslang(SRC)
    module = deserialize(original)
    texts = [op.memory_access.data for op in module.walk()
             if isinstance(op, spirv.StoreOp) and op.memory_access is not None]
    assert texts and all(t == "MakePointerAvailable(Workgroup)|NonPrivatePointer" for t in texts)
    out = serialize(module)
    spirv_val(out, tmp_path, "rewritten.spv")
    assert serialize(deserialize(out)) == out
    # every scoped memory operand of glslang's binary is in the rewrite, with a constant of the
    # same value (spirv-dis names a uint constant by its value: %uint_2)
    want, got = _scoped_operands(dis(original, tmp_path)), _scoped_operands(dis(out, tmp_path))
    assert len(want) >= 3 and sorted(want) == sorted(got)
    assert {ids for _, ids in got} == {f"%uint_{ENUMS['Scope']['Workgroup'][0]}"}


def test_a_scope_parameter_is_a_scope_name():
    assert parse_enum_operand("MemoryAccess", "MakePointerVisible(Device)|NonPrivatePointer") == [
        ("MakePointerVisible", [ENUMS["Scope"]["Device"][0]]), ("NonPrivatePointer", [])]
    with pytest.raises(VerifyException):
        parse_enum_operand("MemoryAccess", "MakePointerVisible(Galaxy)")


def test_shared_staging_raises_and_says_where_the_interpreter_stops():
    """The shared arrays become coop.alloc_workgroup buffers and barrier() gpu.barrier; the
    staging loops `for (i = t; i < 512; i += 64)` start at the invocation's index, which the
    lock-step interpreter does not run (divergent loop bounds): one located line."""
    module, name = raised(glslang(SRC))
    text = str(module)
    assert text.count("coop.alloc_workgroup") == 2 and text.count("gpu.barrier") == 2
    with pytest.raises(CoopError) as e:
        api.run_kernel(module, name, [np.zeros(64 * 32, np.float16), np.zeros(32 * 16, np.float16),
                                      np.zeros(64 * 16, np.float32), 64, 16, 32], (1, 2, 1))
    assert "\n" not in str(e.value) and "lower bound differs between the invocations" in str(e.value)
