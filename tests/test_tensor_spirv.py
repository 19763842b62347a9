"""Tensor addressing / cooperative-matrix-2 SPIR-V: the folded examples (fold-tensor-views then
convert-coop-to-spirv) are spirv-val-clean and round-trip writer -> reader -> writer byte for byte;
the Tensor Addressing Operands words follow the extension's table (mask, then TensorView's and
DecodeFunc's <id>s in increasing bit order)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects.builtin import SymbolRefAttr, f16
from xdsl.ir import Block

from coopdialect import api
from coopdialect.dialects import spirv as sp
from coopdialect.dialects import spirv_nv2 as nv2
from coopdialect.spirv.reader import deserialize
from coopdialect.spirv.tensor_operands import decode_tensor_memory, encode_tensor_memory
from coopdialect.spirv.writer import serialize
from validators import spirv_val

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ["gemm_coopmat2_f16", "conv_patch_clamped", "softmax_rows"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_folded_example_valid_and_round_trips(name, tmp_path):
    module = api.parse_file(str(ROOT / "examples" / f"{name}.mlir"))
    api.run_pipeline(module, "fold-tensor-views")
    data = api.compile_to_spirv(module)
    spirv_val(data, tmp_path, f"{name}_folded.spv")
    assert serialize(deserialize(data)) == data


def test_tensor_addressing_operand_words():
    # values stand in for ids: the encoder must put the mask first, then TensorView, then DecodeFunc
    layout_t = nv2.TensorLayoutType(2, "Constant")
    view_t = nv2.TensorViewType(2, False, [1, 0])
    mat = sp.CooperativeMatrixType(16, 16, f16, "Subgroup", "MatrixAccumulatorKHR")
    block = Block(arg_types=[sp.PointerType(f16, "StorageBuffer"), mat, layout_t, view_t])
    ptr, obj, layout, view = block.args
    op = nv2.CooperativeMatrixLoadTensorOp(ptr, obj, layout, view, "Nontemporal", "decode")
    names = {ptr: "P", obj: "O", layout: "L", view: "V"}
    words = encode_tensor_memory(op, lambda v: names.get(v, v))
    # Nontemporal = 0x4 (MemoryAccess); TensorView = 0x1, DecodeFunc = 0x2
    assert words == ["P", "O", "L", 0x4, 0x3, "V", SymbolRefAttr("decode")]
    ids = {1: ptr, 2: obj, 3: layout, 4: view, 9: SymbolRefAttr("decode")}
    back = decode_tensor_memory(nv2.CooperativeMatrixLoadTensorOp, [mat], [1, 2, 3, 0x4, 0x3, 4, 9], ids.__getitem__)
    assert back.view is view and back.decode_func == SymbolRefAttr("decode")
    assert back.memory_operand.data == "Nontemporal"
    with pytest.raises(ValueError, match="missing the DecodeFunc operand"):
        decode_tensor_memory(nv2.CooperativeMatrixLoadTensorOp, [mat], [1, 2, 3, 0, 0x3, 4], ids.__getitem__)
