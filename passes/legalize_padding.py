"""Padding for `legalize-coop-sizes`: a multiply-add whose M×N×K is no multiple of any native
tile is grown to the next native multiple, on targets with tensor addressing
(SPV_NV_tensor_addressing + SPV_NV_cooperative_matrix2: `Target.tensor_addressing`).

What it does (docs/legalize.md, "Padding"):

* Multiply-adds in program order; one that no native row (nor, with `flexible`, a flexible-
  dimension row) tiles gets the padded shape M'×N'×K' (each the next multiple of the row's m, n,
  k or of the granularity) with the smallest M'·N'·K' (ties: the larger tile). K splits keep the
  rules of the split (no K split under SaturatingAccumulation or with C type ≠ Result type).
  The matrix classes of A, C/Result and B (module docstring of legalize_coop_sizes) take
  M'×K', K'×N' and M'×N'.
* Every `coop.load` of a padded matrix becomes `coop.load_tensor` of the padded type through a
  clamped layout (`load_layout`): elements outside the R×C of the original load read as the
  clamp value 0. Every `coop.store` becomes `coop.store_tensor` through the same layout: stores
  outside R×C are discarded (every clamp mode but Undefined discards), so the padding is never
  written. Multiply-adds, element-wise ops, conversions, composite constructs and `scf.for`
  iter_args are retyped in place.
* Why the valid region is unchanged: Result[m][n] = Σ_k A[m][k]·B[k][n] + C[m][n]; rows m ≥ M
  and columns n ≥ N of the result are never stored, and the K padding adds A[m][k]·B[k][n] = 0·0
  for k ≥ K. So both A and B must be exactly 0 there: a padded A or B must come from a
  `coop.load` (possibly through conversions or negation, which keep 0); anything else
  (composite constructs, element-wise ops that can make the padding non-zero, loop-carried A/B)
  is refused. A float result that is exactly -0.0 may become +0.0 (IEEE: -0 + +0 = +0).

Errors: CoopError on the multiply-add, one line naming its shape, the target's native shapes for
its types, the padded shape and why it cannot be padded (a padded matrix reaching an op that
cannot carry padding, e.g. a function argument or coop.extract; a padded A or B not known to be 0
in the padding; two multiply-adds wanting different paddings of one matrix); CoopError on a
load/store whose constant offset/stride break the layout's stride rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from coopdialect.errors import CoopError
from coopdialect.dialects import coop, coop_nv2
from coopdialect.dialects import tensor_addr as ta
from coopdialect.passes.legalize_shapes import (
    ELEMENTWISE,
    build_classes,
    flexible_ok,
    mul_add_types,
    rows_for,
    saturating,
    shape_text,
    workgroup_invocations,
)
from coopdialect.targets import Target

_I32 = IntegerType(32)


def _ceil_to(x: int, g: int) -> int:
    return -(-x // g) * g


@dataclass(frozen=True)
class _Choice:
    mnk: tuple[int, int, int]  # padded problem
    tile: tuple[int, int, int]  # the native row (or granularity) it is a multiple of


def tiling_exists(target: Target, types, scope: str, sat: bool, k_split_ok: bool,
                  mnk: tuple[int, int, int], invocations: int | None, flexible: bool) -> bool:
    """Whether legalize-coop-sizes can tile M×N×K as it is (ignoring agreement with operands)."""
    m, n, k = mnk
    if flexible and flexible_ok(target, types, scope, sat, mnk, invocations):
        return True
    return any(m % r.m == 0 and n % r.n == 0 and k % r.k == 0 and (k_split_ok or r.k == k)
               for r in rows_for(target, types, scope, sat))


def choose_padding(target: Target, types, scope: str, sat: bool, k_split_ok: bool,
                   mnk: tuple[int, int, int], invocations: int | None,
                   flexible: bool) -> _Choice | None:
    """The padded M'×N'×K' (smallest volume; ties: larger tile), or None when no row fits."""
    m, n, k = mnk
    cands: list[_Choice] = []
    for r in rows_for(target, types, scope, sat):
        p = (_ceil_to(m, r.m), _ceil_to(n, r.n), _ceil_to(k, r.k))
        if k_split_ok or p[2] == r.k:
            cands.append(_Choice(p, (r.m, r.n, r.k)))
    if flexible:
        for f in target.flexible_dimensions:
            if f.types != tuple(types) or f.scope != scope or f.saturating != sat:
                continue
            if scope == "Workgroup" and f.workgroup_invocations != invocations:
                continue
            p = tuple(_ceil_to(d, g) for d, g in zip(mnk, f.granularity))
            if f.allows(p, target.flexible_max_dimension):
                cands.append(_Choice(p, p))  # stays one multiply-add
    if not cands:
        return None
    vol = lambda t: t[0] * t[1] * t[2]  # noqa: E731
    return min(cands, key=lambda c: (vol(c.mnk), -vol(c.tile)))


# --------------------------------------------------------------------------------------------
# Layouts (docs/legalize.md, "Padding: the layout of a padded load")
# --------------------------------------------------------------------------------------------


def _insert(before: Operation, op: Operation) -> Operation:
    Rewriter.insert_op(op, InsertPoint.before(before))
    return op


def _c32(before: Operation, v: int) -> SSAValue:
    return _insert(before, arith.ConstantOp(IntegerAttr(v, _I32))).result


def load_layout(op: coop.LoadOp | coop.StoreOp, rows: int, cols: int, prows: int,
                pcols: int) -> tuple[SSAValue, SSAValue | None]:
    """(layout, view) addressing what `op` addresses, for a padded prows×pcols matrix whose
    rows×cols top-left part is the original matrix; everything else out of bounds.

    RowMajor (element (r, c) at offset + r·stride + c): with (o0, o1) = (offset div stride,
    offset mod stride), a 2-D layout<Constant> with dimension (o0 + rows, o1 + cols), stride
    (stride, 1), sliced at (o0, prows, o1, pcols): tensor coordinate (o0 + r, o1 + c), element
    (o0 + r)·stride + o1 + c = offset + r·stride + c, in bounds exactly when r < rows, c < cols.
    ColumnMajor: the same with the tensor dimensions (column, row) and the view
    `<2, false, 1, 0>` (transposed: matrix (r, c) -> tensor coordinate (o0 + c, o1 + r)).
    The stride rule of OpTensorLayoutSetStrideNV needs stride >= o1 + cols (RowMajor; o1 + rows
    ColumnMajor), i.e. the window does not wrap past a row of `stride` elements: checked here
    when offset and stride are constants (CoopError), otherwise by the interpreter at run time.
    Offsets and strides must fit in int32 (the layout's operands)."""
    col_major = op.layout.data == coop.Layout.ColumnMajor
    inner = rows if col_major else cols  # extent along the contiguous dimension
    outer = cols if col_major else rows
    pinner, pouter = (prows, pcols) if col_major else (pcols, prows)
    off, stride = coop.constant_int(op.offset), coop.constant_int(op.stride)
    if off is not None and stride is not None:
        if stride <= 0 or off % stride + inner > stride:
            raise CoopError(op, f"cannot be padded through a tensor layout: offset {off} and "
                                f"stride {stride} put the {rows}x{cols} window across a row of "
                                f"{stride} elements (the layout's stride rule needs stride >= "
                                f"offset mod stride + {inner})")
        o0, o1 = _c32(op, off // stride), _c32(op, off % stride)
        d0, d1, s = _c32(op, off // stride + outer), _c32(op, off % stride + inner), _c32(op, stride)
    else:
        off32 = _insert(op, arith.IndexCastOp(op.offset, _I32)).result
        s = _insert(op, arith.IndexCastOp(op.stride, _I32)).result
        o0 = _insert(op, arith.DivUIOp(off32, s)).result
        o1 = _insert(op, arith.RemUIOp(off32, s)).result
        d0 = _insert(op, arith.AddiOp(o0, _c32(op, outer))).result
        d1 = _insert(op, arith.AddiOp(o1, _c32(op, inner))).result
    lt = ta.TensorLayoutType(2, ta.ClampMode.Constant)
    lay = _insert(op, ta.CreateLayoutOp(lt)).result  # clampValue 0 (OpCreateTensorLayoutNV)
    lay = _insert(op, ta.LayoutSetDimensionOp(lay, [d0, d1])).result
    lay = _insert(op, ta.LayoutSetStrideOp(lay, [s, _c32(op, 1)])).result
    lay = _insert(op, ta.LayoutSliceOp(lay, [o0, _c32(op, pouter), o1, _c32(op, pinner)])).result
    view = None
    if col_major:
        view = _insert(op, ta.CreateViewOp(ta.TensorViewType(2, False, [1, 0]))).result
    return lay, view


def _zero(before: Operation, t: coop.MatrixType) -> SSAValue:
    et = t.element_type
    attr = FloatAttr(0.0, et) if isinstance(et, AnyFloat) else IntegerAttr(0, et)
    z = _insert(before, arith.ConstantOp(attr, et)).result
    return _insert(before, coop.CompositeConstructOp(z, t)).result


# --------------------------------------------------------------------------------------------
# The rewrite
# --------------------------------------------------------------------------------------------

_ZERO_KEEPING = (*coop.CONVERSIONS, *coop.ELEMENTWISE_UNARY)


def _zero_padded(v: SSAValue) -> bool:
    """Whether `v` is 0 wherever a padded load puts 0 (a load, through 0-keeping ops)."""
    owner = v.owner
    if isinstance(owner, coop.LoadOp):
        return True
    if isinstance(owner, _ZERO_KEEPING):
        return _zero_padded(owner.operands[0])
    return False


def _allowed(op: Operation) -> bool:
    if isinstance(op, (coop.LoadOp, coop.StoreOp)):
        return op.layout.data in (coop.Layout.RowMajor, coop.Layout.ColumnMajor)
    if isinstance(op, scf.YieldOp):
        return isinstance(op.parent_op(), scf.ForOp)
    return isinstance(op, (coop.MulAddOp, coop.CompositeConstructOp, scf.ForOp, *ELEMENTWISE))


def pad_kernel(kernel: func.FuncOp, target: Target, flexible: bool) -> bool:
    """Pad the multiply-adds of `kernel` that have no native tiling (module docstring); True when
    something was padded. Does nothing on a target without tensor addressing."""
    if not target.tensor_addressing:
        return False
    cls, values, mul_adds = build_classes(kernel)
    invocations = workgroup_invocations(kernel)
    want: dict[SSAValue, tuple[int, int]] = {}
    first: dict[SSAValue, tuple[coop.MulAddOp, str]] = {}  # class root -> (multiply-add, text)

    def refuse(op: coop.MulAddOp, head: str, why: str) -> CoopError:
        return CoopError(op, f"{head}; {why}")

    for op in mul_adds:
        (m, k), n = op.a.type.get_shape(), op.b.type.columns
        types, scope, sat = mul_add_types(op), op.a.type.scope_value.value, saturating(op)
        k_ok = not sat and op.c.type.element_type == op.result.type.element_type
        if tiling_exists(target, types, scope, sat, k_ok, (m, n, k), invocations, flexible):
            continue
        choice = choose_padding(target, types, scope, sat, k_ok, (m, n, k), invocations, flexible)
        if choice is None:
            continue  # plan_kernel refuses, naming the native shapes
        pm, pn, pk = choice.mnk
        head = (f"{m}x{n}x{k} {'·'.join(types)} {scope} has no native tiling on target "
                f"'{target.name}'; native shapes for these types: "
                f"{shape_text(rows_for(target, types, scope, sat))}; it cannot be padded to "
                f"{pm}x{pn}x{pk}")
        if pk != k:
            for v in (op.a, op.b):
                if not _zero_padded(v):
                    raise refuse(op, head, f"{'A' if v is op.a else 'B'} does not come from a "
                                           "coop.load, so its K padding is not known to be 0")
        for v, shape in ((op.a, (pm, pk)), (op.b, (pk, pn)), (op.c, (pm, pn))):
            root = cls.find(v)
            if want.get(root, shape) != shape:
                raise refuse(op, head, f"another multiply-add pads its "
                                       f"{'x'.join(map(str, v.type.get_shape()))} operand to "
                                       f"{want[root][0]}x{want[root][1]}")
            want[root] = shape
            first.setdefault(root, (op, head))
    todo = [(v, want[cls.find(v)]) for v in values
            if cls.find(v) in want and v.type.get_shape() != want[cls.find(v)]]
    if not todo:
        return False
    padded = {v for v, _ in todo}
    stores = []
    for v, _ in todo:
        users = [u.operation for u in v.uses]
        owner = v.owner if isinstance(v.owner, Operation) else v.owner.parent_op()
        for op in (owner, *users):
            if not _allowed(op):
                where = "a function argument" if isinstance(op, func.FuncOp) and op is owner \
                    else f"used by {op.name}" if op is not owner else f"made by {op.name}"
                mul_add, head = first[cls.find(v)]
                raise refuse(mul_add, head, f"its {v.type.rows}x{v.type.columns} "
                                            f"{v.type.use_value or ''} matrix is {where}, which "
                                            "cannot carry padding (only coop.load/coop.store, "
                                            "multiply-adds, element-wise ops and scf.for can)")
            if isinstance(op, coop.StoreOp) and op.object in padded and op not in stores:
                stores.append(op)
    store_shapes = {op: op.object.type.get_shape() for op in stores}
    for v, (pr, pc) in todo:
        t = v.type
        new_t = coop.MatrixType(pr, pc, t.element_type, t.scope_value, t.use_value)
        if isinstance(v.owner, coop.LoadOp):
            ld = v.owner
            lay, view = load_layout(ld, t.rows, t.columns, pr, pc)
            new = _insert(ld, coop_nv2.LoadTensorOp(ld.pointer, _zero(ld, new_t), lay, view,
                                                    memory_access=ld.memory_access))
            v.replace_all_uses_with(new.result)
            ld.detach()
            ld.erase()
        else:
            Rewriter.replace_value_with_new_type(v, new_t)
    for st in stores:
        (r, c), (pr, pc) = store_shapes[st], st.object.type.get_shape()
        lay, view = load_layout(st, r, c, pr, pc)
        _insert(st, coop_nv2.StoreTensorOp(st.object, st.pointer, lay, view,
                                           memory_access=st.memory_access))
        st.detach()
        st.erase()
    return True

