"""Every module convert-coop-to-spirv emits in the suite: valid for spirv-val (Vulkan 1.3), and
writer -> reader -> writer byte-identical; the reader refuses damaged copies in one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from coopdialect import api
from coopdialect.spirv.errors import SpirvReadError
from coopdialect.spirv.reader import deserialize
from coopdialect.spirv.writer import serialize
from validators import spirv_val

ROOT = Path(__file__).resolve().parent.parent

# (IR file, flavors): the examples and the lowering tests' inputs.
MODULES = [
    ("examples/gemm_f16.mlir", ("khr", "nv")),
    ("examples/gemm_s8.mlir", ("khr", "nv")),
    ("tests/filecheck/passes/convert_coop_to_spirv.mlir", ("khr",)),
    ("tests/filecheck/passes/convert_coop_to_spirv_nv.mlir", ("nv",)),
    # tensor addressing + cooperative-matrix-2 (KHR matrix types only)
    ("examples/gemm_coopmat2_f16.mlir", ("khr",)),
    ("examples/conv_patch_clamped.mlir", ("khr",)),
    ("examples/softmax_rows.mlir", ("khr",)),
    ("examples/block_decode_load.mlir", ("khr",)),  # DecodeFunc: PhysicalStorageBuffer64
    # any shape through clamped tensor layouts (f16, bf16), the Workgroup-tile bf16 GEMM: bf16
    # needs SPV_KHR_bfloat16, whose cooperative matrices are KHR ones
    ("examples/gemm_any.mlir", ("khr",)),
    ("examples/gemm_any_bf16.mlir", ("khr",)),
    ("examples/gemm_bf16_wg.mlir", ("khr",)),
    ("examples/attention.mlir", ("khr",)),  # 3-D layouts and view, i1 logic, exp2/log2
    ("tests/filecheck/passes/convert_arith_logic_to_spirv.mlir", ("khr",)),
    ("tests/filecheck/passes/convert_coop_nv2_to_spirv.mlir", ("khr",)),
]
CASES = [(path, flavor) for path, flavors in MODULES for flavor in flavors]


def emit(path: str, flavor: str) -> bytes:
    return api.compile_to_spirv(api.parse_file(str(ROOT / path)), flavor=flavor)


@pytest.mark.parametrize("path,flavor", CASES, ids=[f"{Path(p).stem}-{f}" for p, f in CASES])
def test_valid_and_round_trips(path, flavor, tmp_path):
    data = emit(path, flavor)
    spirv_val(data, tmp_path, f"{Path(path).stem}_{flavor}.spv")
    again = serialize(deserialize(data))
    assert again == data, "writer -> reader -> writer changed the bytes"


def test_flavors_use_their_instructions():
    """KHR and NV modules differ where the two extensions do (opcode numbers from the grammar)."""
    from coopdialect.spirv.grammar_tables import INSTRUCTIONS
    import struct

    def opcodes(data: bytes) -> set[int]:
        words = struct.unpack(f"<{len(data) // 4}I", data)
        found, pos = set(), 5
        while pos < len(words):
            found.add(words[pos] & 0xFFFF)
            pos += words[pos] >> 16
        return found

    khr, nv = opcodes(emit("examples/gemm_f16.mlir", "khr")), opcodes(emit("examples/gemm_f16.mlir", "nv"))
    op = lambda name: INSTRUCTIONS[name][0]  # noqa: E731
    assert op("OpCooperativeMatrixMulAddKHR") in khr and op("OpCooperativeMatrixMulAddNV") not in khr
    assert op("OpCooperativeMatrixMulAddNV") in nv and op("OpCooperativeMatrixMulAddKHR") not in nv


@pytest.mark.parametrize("damage", ["truncate-header", "truncate-instruction", "bad-magic", "zero-count",
                                    "unknown-opcode"])
def test_reader_refuses_damaged_modules(damage):
    data = bytearray(emit("examples/gemm_s8.mlir", "khr"))
    if damage == "truncate-header":
        data = data[:12]
    elif damage == "truncate-instruction":
        data = data[: len(data) - 8]
    elif damage == "bad-magic":
        data[0:4] = b"\x00\x00\x00\x00"
    elif damage == "zero-count":
        data[20:24] = (0).to_bytes(4, "little")
    elif damage == "unknown-opcode":
        data[20:24] = ((1 << 16) | 0xFFFF).to_bytes(4, "little")
    with pytest.raises(SpirvReadError) as info:
        deserialize(bytes(data))
    message = str(info.value)
    assert "\n" not in message and re.search(r"word \d+", message), message
