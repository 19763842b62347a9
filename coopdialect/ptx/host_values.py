"""Values the host computes at launch from a kernel's scalar arguments: IR values -> host expressions.

A launch description (coopdialect.ptx.launch) carries sizes that depend on the kernel's scalar
arguments — a tensor map's dimensions and strides — as *host expressions* (`coopdialect.host_expr`),
which the runtime evaluates with Python integers before it launches.

`host_expr(v)` builds that expression for an IR value computed by `arith` ops from constants and
the kernel's integer scalar arguments. Division, remainder, min and max are translated for
non-negative operands (sizes): `arith.divui`/`divsi` -> floordiv, `ceildivui`/`ceildivsi` ->
ceildiv, `remui`/`remsi` -> mod; index casts and extensions keep the value. A value computed any
other way (a loaded value, an id, a truncation) has no host expression (None).

`layout_fields(v)` reads a tensor layout value (`!tensor_addr.layout`) back to its ops and gives
the tensorLayoutNV fields the host needs for a bulk tensor copy (SPV_NV_tensor_addressing 3.X:
layoutDimension, stride, blockSize, clampValue, span) as host expressions, constants where
constant; the offsets are the device's business (they change per tile).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType
from xdsl.ir import BlockArgument, SSAValue

from coopdialect.dialects import tensor_addr as ta
from coopdialect.host_expr import HostExpr, eval_host_expr


_BINARY = {
    arith.AddiOp: "add", arith.SubiOp: "sub", arith.MuliOp: "mul",
    arith.DivUIOp: "floordiv", arith.DivSIOp: "floordiv", arith.FloorDivSIOp: "floordiv",
    arith.CeilDivUIOp: "ceildiv", arith.CeilDivSIOp: "ceildiv",
    arith.RemUIOp: "mod", arith.RemSIOp: "mod",
    arith.MinUIOp: "min", arith.MinSIOp: "min", arith.MaxUIOp: "max", arith.MaxSIOp: "max",
}
_SAME = (arith.IndexCastOp, arith.ExtUIOp, arith.ExtSIOp)


def _fold(op: str, a: HostExpr, b: HostExpr) -> HostExpr:
    if isinstance(a, int) and isinstance(b, int):
        return eval_host_expr({"op": op, "args": [a, b]}, {})
    if op == "mul" and (a == 1 or b == 1):
        return b if a == 1 else a
    if op in ("add", "sub") and b == 0:
        return a
    if op == "add" and a == 0:
        return b
    return {"op": op, "args": [a, b]}


def host_expr(v: SSAValue, _depth: int = 0) -> HostExpr | None:
    """The host expression of integer/index value `v` (module docstring), or None."""
    if _depth > 200:
        return None
    if isinstance(v, BlockArgument):
        owner = v.owner.parent_op()
        if isinstance(owner, func.FuncOp) and v.owner is owner.body.blocks[0] and \
                isinstance(v.type, IntegerType | IndexType):
            return {"arg": v.index}
        return None
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return int(op.value.value.data)
    if isinstance(op, _SAME):
        return host_expr(op.operands[0], _depth + 1)
    kind = _BINARY.get(type(op))
    if kind is None:
        return None
    a, b = (host_expr(x, _depth + 1) for x in op.operands)
    if a is None or b is None:
        return None
    return _fold(kind, a, b)


@dataclass(frozen=True)
class LayoutFields:
    """The tensorLayoutNV fields of a layout value as host expressions (None: not computable on
    the host), innermost dimension last as in the spec."""

    mode: ta.ClampMode
    dimension: tuple[HostExpr | None, ...]
    stride: tuple[HostExpr | None, ...]
    block_size: tuple[HostExpr | None, ...]
    span: tuple[HostExpr | None, ...]
    clamp_value: HostExpr | None


def layout_fields(v: SSAValue, _depth: int = 0) -> LayoutFields | None:
    """The host-side fields of tensor layout value `v`, following OpTensorLayoutSet*NV and
    OpTensorLayoutSliceNV back to OpCreateTensorLayoutNV (SPV_NV_tensor_addressing); None for a
    layout that does not come from such a chain (a block argument, a select, ...)."""
    t = v.type
    if not isinstance(t, ta.TensorLayoutType) or _depth > 1000:
        return None
    op = v.owner
    if isinstance(op, ta.CreateLayoutOp):
        z = (0,) * t.rank
        return LayoutFields(t.mode, z, z, (1,) * t.rank, z, 0)
    if isinstance(op, ta.LayoutConstantOp):
        s = op.state
        return LayoutFields(t.mode, tuple(s.dimension), tuple(s.stride), tuple(s.block_size),
                            tuple(s.span), s.clamp_value)
    if not isinstance(op, ta.LAYOUT_SET_OPS):
        return None
    base = layout_fields(op.input, _depth + 1)
    if base is None:
        return None
    vals = [host_expr(x) for x in op.values]
    dim = t.rank
    if isinstance(op, ta.LayoutSetDimensionOp):
        # stride[i] = stride[i+1] * ceil(dim[i+1] / blockSize[i+1]) (the set op's default)
        stride: list[HostExpr | None] = [None] * dim
        stride[dim - 1] = 1
        for i in range(dim - 2, -1, -1):
            d, bs, nxt = vals[i + 1], base.block_size[i + 1], stride[i + 1]
            if None in (d, bs, nxt):
                continue
            stride[i] = _fold("mul", nxt, d if bs == 1 else _fold("ceildiv", d, bs))
        return LayoutFields(t.mode, tuple(vals), tuple(stride), base.block_size, tuple(vals),
                            base.clamp_value)
    if isinstance(op, ta.LayoutSetStrideOp):
        return LayoutFields(t.mode, base.dimension, tuple(vals), base.block_size, base.span,
                            base.clamp_value)
    if isinstance(op, ta.LayoutSetBlockSizeOp):
        return LayoutFields(t.mode, base.dimension, base.stride, tuple(vals), base.span,
                            base.clamp_value)
    if isinstance(op, ta.LayoutSliceOp):
        return LayoutFields(t.mode, base.dimension, base.stride, base.block_size,
                            tuple(vals[1::2]), base.clamp_value)
    if isinstance(op, ta.LayoutSetClampValueOp):
        return LayoutFields(t.mode, base.dimension, base.stride, base.block_size, base.span,
                            vals[0])
    return None
