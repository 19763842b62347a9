"""What legalize-coop-sizes and its padding (`legalize_padding.py`) share about a kernel and a
target: the target's native rows for a multiply-add's types, scope and saturating flag (as the
target tables spell them), and the kernel's matrices grouped into classes that share one tiling
(the grouping of docs/legalize.md). Below both passes, which import it."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import AnyFloat, BFloat16Type, DenseArrayBase, IntegerType, Signedness
from xdsl.ir import Attribute, SSAValue

from coopdialect.dialects import coop, coop_nv2
from coopdialect.targets import MatrixShape, Target

ELEMENTWISE = (*coop.ELEMENTWISE_UNARY, *coop.ELEMENTWISE_BINARY, *coop.CONVERSIONS,
               coop.MatrixTimesScalarOp)


# --------------------------------------------------------------------------------------------
# Types as the target tables spell them
# --------------------------------------------------------------------------------------------


def component_name(t: Attribute, signed: bool | None = None) -> set[str]:
    """Target spellings a component type can match: {'f16'}, {'s8'}, {'s8', 'u8'} (signless, no
    signedness given)."""
    if isinstance(t, BFloat16Type):
        return {"bf16"}
    if isinstance(t, AnyFloat):
        return {f"f{t.bitwidth}"}
    if isinstance(t, IntegerType):
        w = t.width.data
        if signed is not None:
            return {f"{'s' if signed else 'u'}{w}"}
        if t.signedness.data == Signedness.SIGNED:
            return {f"s{w}"}
        if t.signedness.data == Signedness.UNSIGNED:
            return {f"u{w}"}
        return {f"s{w}", f"u{w}"}
    return set()


def mul_add_types(op: coop.MulAddOp) -> tuple[str, str, str, str]:
    """(A, B, C, Result) component spellings of a multiply-add (signedness per is_signed)."""
    out = []
    for which, v in (("A", op.a), ("B", op.b), ("C", op.c), ("Result", op.result)):
        t = v.type.element_type
        signed = op.is_signed(which) if coop.is_integer(t) else None
        (name,) = component_name(t, signed)
        out.append(name)
    return tuple(out)  # type: ignore[return-value]


def saturating(op: coop.MulAddOp) -> bool:
    return coop.MatrixOperand.SaturatingAccumulation in op.operand_flags


def rows_for(target: Target, types, scope: str, saturating: bool) -> list[MatrixShape]:
    return [r for r in target.native_shapes()
            if r.types == tuple(types) and r.scope == scope and r.saturating == saturating]


def shape_text(rows: Sequence[MatrixShape]) -> str:
    return ", ".join(sorted({f"{r.m}x{r.n}x{r.k}" for r in rows})) or "none"


def workgroup_invocations(kernel: func.FuncOp) -> int | None:
    attr = kernel.attributes.get("coop.workgroup_size")
    if isinstance(attr, DenseArrayBase):
        x, y, z = (int(v) for v in attr.get_values())
        return x * y * z
    return None


def flexible_ok(target: Target, types, scope: str, saturating: bool, mnk: tuple[int, int, int],
                invocations: int | None) -> bool:
    """Whether M×N×K is allowed whole by a flexible-dimension row of the target."""
    for f in target.flexible_dimensions:
        if f.types != tuple(types) or f.scope != scope or f.saturating != saturating:
            continue
        if scope == "Workgroup" and f.workgroup_invocations != invocations:
            continue
        if f.allows(mnk, target.flexible_max_dimension):
            return True
    return False


# --------------------------------------------------------------------------------------------
# Grouping matrices that share one tiling
# --------------------------------------------------------------------------------------------


class Classes:
    """Union-find over matrix SSA values."""

    def __init__(self):
        self.parent: dict[SSAValue, SSAValue] = {}

    def find(self, v: SSAValue) -> SSAValue:
        self.parent.setdefault(v, v)
        while self.parent[v] is not v:
            self.parent[v] = self.parent[self.parent[v]]
            v = self.parent[v]
        return v

    def union(self, a: SSAValue, b: SSAValue) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[rb] = ra


def is_matrix(v: SSAValue) -> bool:
    return isinstance(v.type, coop.MatrixType)


def build_classes(kernel: func.FuncOp) -> tuple[Classes, list[SSAValue], list[coop.MulAddOp]]:
    """The matrices of `kernel` grouped into classes that share one tiling (module docstring),
    every matrix value in walk order, and the multiply-adds in program order."""
    cls = Classes()
    values: list[SSAValue] = []
    mul_adds: list[coop.MulAddOp] = []
    for op in kernel.walk():
        for r in op.results:
            if is_matrix(r):
                cls.find(r)
                values.append(r)
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    if is_matrix(a):
                        cls.find(a)
                        values.append(a)
        if isinstance(op, ELEMENTWISE):
            for v in op.operands:
                if is_matrix(v):
                    cls.union(v, op.results[0])
        elif isinstance(op, coop.MulAddOp):
            cls.union(op.c, op.result)
            mul_adds.append(op)
        elif isinstance(op, coop_nv2.LoadTensorOp):
            cls.union(op.object, op.result)  # clipped elements keep Object's: same tiling
        elif isinstance(op, scf.ForOp):
            body_args = op.body.blocks[0].args[1:]
            yielded = op.body.blocks[0].last_op.operands
            for init, arg, y, res in zip(op.iter_args, body_args, yielded, op.results):
                if is_matrix(res):
                    for v in (init, arg, y):
                        cls.union(res, v)
        elif isinstance(op, scf.IfOp):
            for region in (op.true_region, op.false_region):
                if region.blocks and region.blocks[0].last_op is not None:
                    for y, res in zip(region.blocks[0].last_op.operands, op.results):
                        if is_matrix(res):
                            cls.union(res, y)
    return cls, values, mul_adds
