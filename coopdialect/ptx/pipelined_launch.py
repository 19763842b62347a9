"""The launch-parameter description of a staged kernel (`pipelined.py`, `coopdialect.ptx.launch`):
each memref argument as a pointer or as a 2-D tensor map (data type, global dims and strides,
box, swizzle) that the host encodes (scalar arguments and the arguments' descriptions:
`coopdialect.ptx.launch`)."""

from __future__ import annotations


from xdsl.dialects import func
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type
from xdsl.ir import SSAValue

from coopdialect.dialects.coop_async import AsyncCopyOp, AsyncCopyTensorOp
from coopdialect.ptx.kernel_lowering import op_error, width
from coopdialect.ptx.pipelined_plan import Plan, constant_of


_DTYPE = {Float16Type: "FLOAT16", BFloat16Type: "BFLOAT16", Float32Type: "FLOAT32"}


def tensor_map_type(t) -> str | None:
    """CU_TENSOR_MAP_DATA_TYPE_* of an element type; 8-bit types (s8, u8, fp8) move as UINT8."""
    if type(t) in _DTYPE:
        return _DTYPE[type(t)]
    w = width(t)
    return {8: "UINT8", 16: "UINT16", 32: "INT32"}.get(w)


def used_directly(fn: func.FuncOp, arg: SSAValue) -> bool:
    """Whether `arg` is used other than as the source of copies (then it is a pointer too)."""
    return any(not isinstance(u.operation, AsyncCopyOp | AsyncCopyTensorOp) or u.index != 0
               for u in arg.uses)


def tensor_map_param(fn: func.FuncOp, i: int, plan: Plan) -> dict:
    """The `tensor_map` launch parameter of copied argument i: for tensor copies the layout's
    dimensions (innermost first) and row stride in bytes as host expressions of the scalar
    arguments (coopdialect.ptx.host_values), evaluated at launch; for copies by offset and
    stride, the argument's static shape read as rows of the copies' stride."""
    t = fn.args[i].type
    if i in plan.tensor_layouts:
        return _tensor_layout_map(fn, i, plan)
    copies = [u.operation for u in fn.args[i].uses if isinstance(u.operation, AsyncCopyOp)]
    stride = constant_of(copies[0].source_stride)
    es = width(t.element_type) // 8
    total = t.element_count()
    if total % stride:
        raise op_error(copies[0], f"the source stride {stride} does not divide the argument's "
                                  f"{total} elements (no 2-D tensor map)")
    rows, cols = plan.boxes[i]
    if i in plan.multicast:  # each CTA of the pair copies half of the box to both
        rows //= plan.cluster_m
    f = plan.packed.get(i, 1)
    rows, cols, stride = rows // f, cols * f, stride * f
    dt = tensor_map_type(t.element_type)
    if dt is None:
        raise op_error(copies[0], f"no tensor map data type for {t.element_type}")
    return {"kind": "tensor_map", "arg": i, "data_type": dt,
            "global_dims": [stride, total // stride], "global_strides": [stride * es],
            "box_dims": [cols, rows], "element_strides": [1, 1], "interleave": "NONE",
            "swizzle": f"{plan.swizzle[i]}B" if plan.swizzle[i] else "NONE",
            "l2_promotion": "L2_256B", "oob_fill": "NONE"}


def _tensor_layout_map(fn: func.FuncOp, i: int, plan: Plan) -> dict:
    t = fn.args[i].type
    f = plan.tensor_layouts[i]
    es = width(t.element_type) // 8
    dt = tensor_map_type(t.element_type)
    if dt is None:
        raise op_error(fn, f"no tensor map data type for {t.element_type}")
    rows, cols = plan.boxes[i]
    row_bytes = f.stride[0] * es if isinstance(f.stride[0], int) else \
        {"op": "mul", "args": [f.stride[0], es]}
    return {"kind": "tensor_map", "arg": i, "data_type": dt,
            "global_dims": [f.dimension[1], f.dimension[0]], "global_strides": [row_bytes],
            "box_dims": [cols, rows], "element_strides": [1, 1], "interleave": "NONE",
            "swizzle": f"{plan.swizzle[i]}B" if plan.swizzle[i] else "NONE",
            "l2_promotion": "L2_256B", "oob_fill": "NONE"}
