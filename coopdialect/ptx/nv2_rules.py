"""Cooperative-matrix-2 ops other than the tensor loads/stores -> PTX (convert-coop-to-ptx).

SPV_NV_cooperative_matrix2, with the interpreter's semantics (coopdialect/interpreter/coop_nv2.py):

* Functions (CombineFunc, per-element Func, DecodeFunc) are inlined (`inline_calls.py`):
  `inline_call` lowers the callee's body with its parameters bound to the call's values, once
  per call site (per element for a per-element op or a decode, per tree node for a reduction).
  The scalar ops such bodies use (memref.load/store, casts, min/max, negation) have their rules
  here.
* reduce (subgroup scope, accumulator fragments of `fragments.ACC_LAYOUT`): the interpreter's
  halving tree, same order (element i takes element i + h, h = P/2 ... 1). Row: across the
  lane's column tiles (h >= 8), `shfl.sync.bfly` 2 and 1 (the quad: h = 4, 2), then the lane's
  column pair (h = 1): two shuffles per row whatever the width. Column: across the lane's row
  tiles (h >= 16), its rows g and g+8, then `shfl.sync.bfly` 16, 8, 4 (rows g). Row|Column:
  Row, then Column over the row results.
  A butterfly step gives the lower lane's value as the CombineFunc's first operand on both
  lanes, so both compute the same bits (no swap is needed when the CombineFunc is one
  commutative arith op of its two arguments: `_commutative`). 2x2: through shared memory.
* convert (Use change) and transpose: through a per-warp shared-memory tile: every lane stores
  its elements at (row, col), `bar.warp.sync`, every lane loads the elements of the result
  fragment (a `bar.warp.sync` first, so a reuse in a loop waits for the earlier readers).
* per_element_op: Func inlined per fragment element with its (row, col) as i32, the element,
  the same element of each matrix operand, and the other operands as they are.
* Workgroup scope (accumulators in the op-by-op wgmma D layout of wgmma.py: R blocks of 64 rows
  per warpgroup, rows 64(R·v + b) + 16w + g (+ 8) of warp w, columns 8j + 2q (+ 1)):
  per_element_op works on any fragment with known positions. reduce Row: a row lies in one quad
  of one warp, in the same register order as a subgroup row tile, so it is the subgroup Row
  reduction of R 16-row tiles per warp (the interpreter's halving tree, no shared memory), to a result
  of any column count. convert to MatrixA: no data moves, the accumulator's registers are
  wgmma's register A fragment (wgmma.py's mul_add takes them). Column, Row|Column and 2x2
  reductions, convert to MatrixB and transpose of workgroup-scope matrices are refused (one
  line).
"""

from __future__ import annotations

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type
from xdsl.ir import SSAValue

from coopdialect.dialects import coop, ptx
from coopdialect.dialects import coop_nv2 as nv2
from coopdialect.dialects.coop import Scope, Use
from coopdialect.ptx import affine as af
from coopdialect.ptx import fragments as fr
from coopdialect.ptx import row_uniform
from coopdialect.ptx.affine import Arith
from coopdialect.ptx.element_ops import normalize
from coopdialect.ptx.frag_addressing import layout_of
from coopdialect.ptx.inline_calls import I32, call_reg
from coopdialect.ptx.kernel_lowering import (
    Buf,
    Frag,
    KernelLowering,
    Scalar,
    float_suffix,
    mem_suffix,
    op_error,
    reg_kind,
    rule,
    width,
)
from coopdialect.ptx.wgmma import acc_blocks, acc_positions
from coopdialect.ptx.tensor_rules import frag_positions, subgroup_positions

# ---------------------------------------------------------------------------------------------
# Scalar ops of function bodies
# ---------------------------------------------------------------------------------------------


def _memref_address(lw: KernelLowering, op, buf: Buf, indices) -> tuple[SSAValue, int]:
    t = buf.ty
    shape = t.get_shape()
    if any(d < 0 for d in shape[1:]):  # the row-major offset needs every size but the first
        raise op_error(op, f"indexing {t}: a memref with a dynamic size after the first has no "
                           "PTX lowering (the row-major offset needs those sizes)")
    es = width(t.element_type) // 8
    ar = Arith(lw)
    lin = af.const(0)
    for d, v in zip((0, *shape[1:]), indices):  # the first size scales nothing
        s = lw.scalar(v)
        x = af.const(int(s.const)) if s.const is not None else af.atom(s.reg, af.I64_MIN,
                                                                        af.I64_MAX)
        lin = af.add(af.scale(lin, d), x)
    var = af.Aff(lin.terms, 0)
    if var.is_const:
        return buf.base, lin.const * es
    a = lw.inst(ptx.MadOp, ".lo.s64", [ar.reg(var), lw.imm("b64", str(es)), buf.base], "b64")
    return a, lin.const * es


def _ld_type(t) -> str:
    if isinstance(t, Float16Type | BFloat16Type):
        return "b16"
    return mem_suffix(t)


@rule(memref.LoadOp)
def _memref_load(lw: KernelLowering, op: memref.LoadOp) -> None:
    buf = lw.vmap[op.memref]
    t = op.res.type
    a, off = _memref_address(lw, op, buf, op.indices)
    v = lw.emit(ptx.LdOp(f".{buf.space}.{_ld_type(t)}", a, off, [ptx.reg_type(reg_kind(t))]))
    lw.vmap[op.res] = Scalar(t, reg=v.outs[0])


@rule(memref.StoreOp)
def _memref_store(lw: KernelLowering, op: memref.StoreOp) -> None:
    buf = lw.vmap[op.memref]
    t = op.value.type
    a, off = _memref_address(lw, op, buf, op.indices)
    suffix = "b16" if isinstance(t, Float16Type | BFloat16Type) else mem_suffix(t, store=True)
    lw.emit(ptx.StOp(f".{buf.space}.{suffix}", a, off, [lw.reg(lw.scalar(op.value))]))


def _int_norm(lw: KernelLowering, r: SSAValue, w: int, signed: bool) -> SSAValue:
    return normalize(lw, r, w, signed)


@rule(arith.ExtUIOp, arith.ExtSIOp, arith.TruncIOp)
def _int_resize(lw: KernelLowering, op) -> None:
    src, t = lw.scalar(op.input), op.result.type
    ws, wd = width(op.input.type), width(t)
    signed = isinstance(op, arith.ExtSIOp)
    if src.const is not None:
        v = int(src.const) & ((1 << ws) - 1)
        if signed and v >> (ws - 1):
            v -= 1 << ws
        lw.vmap[op.result] = Scalar(t, const=v if wd > ws else int(src.const) & ((1 << wd) - 1))
        return
    r = src.reg
    if isinstance(op, arith.TruncIOp):
        if ws == 64:
            r = lw.inst(ptx.CvtOp, ".u32.u64", [r], "b32")
        if wd == 1:
            r = lw.inst(ptx.SetpOp, ".ne.b32", [lw.inst(ptx.AndOp, ".b32",
                                                        [r, lw.imm("b32", "1")], "b32"),
                                                lw.imm("b32", "0")], "pred")
        lw.vmap[op.result] = Scalar(t, reg=r)
        return
    if ws == 1:
        r = lw.inst(ptx.SelpOp, ".b32", [lw.imm("b32", "-1" if signed else "1"),
                                         lw.imm("b32", "0"), r], "b32")
    else:
        r = _int_norm(lw, r, ws, signed)
    if wd == 64:
        r = lw.inst(ptx.CvtOp, f".{'s' if signed else 'u'}64.{'s' if signed else 'u'}32", [r],
                    "b64")
    lw.vmap[op.result] = Scalar(t, reg=r)


@rule(arith.BitcastOp)
def _bitcast(lw: KernelLowering, op: arith.BitcastOp) -> None:
    src, t = lw.scalar(op.input), op.result.type
    r = lw.reg(src)
    ks, kd = ptx.reg_kind(r), reg_kind(t)
    if ks == kd:
        out = r
    elif (ks, kd) == ("b32", "b16"):
        out = lw.inst(ptx.CvtOp, ".u16.u32", [r], "b16")
    elif (ks, kd) == ("b16", "b32"):
        out = lw.inst(ptx.CvtOp, ".u32.u16", [r], "b32")
    elif {ks, kd} == {"b32", "f32"}:
        out = lw.inst(ptx.MovOp, ".b32", [r], kd)
    elif {ks, kd} == {"b64", "f64"}:
        out = lw.inst(ptx.MovOp, ".b64", [r], kd)
    else:
        raise op_error(op, f"bitcast {op.input.type} -> {t} has no PTX lowering")
    lw.vmap[op.result] = Scalar(t, reg=out)


@rule(arith.SIToFPOp, arith.UIToFPOp)
def _int_to_float(lw: KernelLowering, op) -> None:
    src, t = lw.scalar(op.input), op.result.type
    ws = width(op.input.type)
    signed = isinstance(op, arith.SIToFPOp)
    s = "s" if signed else "u"
    r = lw.reg(src)
    if ws < 32:
        r = _int_norm(lw, r, ws, signed)
    rw = 64 if ws == 64 else 32
    if isinstance(t, BFloat16Type):  # exact in f64 for 32-bit sources, then one rounding
        f = lw.inst(ptx.CvtOp, f".rn.f64.{s}{rw}", [r], "f64")
        out = lw.inst(ptx.CvtOp, ".rn.bf16.f64", [f], "b16")
    else:
        out = lw.inst(ptx.CvtOp, f".rn.{float_suffix(t)}.{s}{rw}", [r], reg_kind(t))
    lw.vmap[op.result] = Scalar(t, reg=out)


@rule(arith.FPToSIOp, arith.FPToUIOp)
def _float_to_int(lw: KernelLowering, op) -> None:
    src, t = lw.scalar(op.input), op.result.type
    st = op.input.type
    s = "s" if isinstance(op, arith.FPToSIOp) else "u"
    r = lw.reg(src)
    if isinstance(st, BFloat16Type):
        r, st = lw.inst(ptx.CvtOp, ".f32.bf16", [r], "f32"), Float32Type()
    rw = 64 if width(t) == 64 else 32
    lw.vmap[op.result] = Scalar(t, reg=lw.inst(ptx.CvtOp, f".rzi.{s}{rw}.{float_suffix(st)}",
                                               [r], reg_kind(t)))


@rule(arith.ExtFOp, arith.TruncFOp)
def _float_resize(lw: KernelLowering, op) -> None:
    src, t = lw.scalar(op.input), op.result.type
    st = op.input.type
    r = lw.reg(src)
    if {type(st), type(t)} == {Float16Type, BFloat16Type}:
        r = lw.inst(ptx.CvtOp, f".f32.{float_suffix(st)}", [r], "f32")
        out = lw.inst(ptx.CvtOp, f".rn.{float_suffix(t)}.f32", [r], "b16")
    else:
        rn = ".rn" if width(st) > width(t) else ""
        out = lw.inst(ptx.CvtOp, f"{rn}.{float_suffix(t)}.{float_suffix(st)}", [r], reg_kind(t))
    lw.vmap[op.result] = Scalar(t, reg=out)


@rule(arith.MaximumfOp, arith.MinimumfOp)
def _min_max_f(lw: KernelLowering, op) -> None:
    """maximumf/minimumf propagate NaN (as numpy's maximum/minimum, the interpreter's): the
    `.NaN` form of PTX max/min (sm_80)."""
    t = op.result.type
    if isinstance(t, Float32Type | Float16Type | BFloat16Type):
        cls = ptx.MaxOp if isinstance(op, arith.MaximumfOp) else ptx.MinOp
        d = lw.inst(cls, f".NaN.{float_suffix(t)}", [lw.reg(lw.scalar(op.lhs)),
                                                     lw.reg(lw.scalar(op.rhs))], reg_kind(t))
        lw.vmap[op.result] = Scalar(t, reg=d)
        return
    raise op_error(op, f"{op.name} of {t} has no PTX lowering (f16, bf16, f32)")


@rule(arith.NegfOp)
def _negf(lw: KernelLowering, op: arith.NegfOp) -> None:
    t = op.result.type
    d = lw.inst(ptx.NegOp, f".{float_suffix(t)}", [lw.reg(lw.scalar(op.operand))], reg_kind(t))
    lw.vmap[op.result] = Scalar(t, reg=d)


# ---------------------------------------------------------------------------------------------
# per_element_op
# ---------------------------------------------------------------------------------------------


def positions_of(lw: KernelLowering, op, t: coop.MatrixType) -> list[tuple[af.Aff, af.Aff]]:
    """(row, col) of each fragment element this thread holds, in register order."""
    if t.scope_value == Scope.Workgroup:
        return acc_positions(lw, op, t)
    return subgroup_positions(lw, op, t)


@rule(nv2.PerElementOp)
def _per_element(lw: KernelLowering, op: nv2.PerElementOp) -> None:
    t = op.result.type
    fn = nv2.lookup_func(op, op.func, "Func")
    m = lw.vmap[op.matrix]
    extras = [lw.vmap[v] for v in op.extra]
    ar = Arith(lw)

    def i32(x: af.Aff) -> Scalar:
        return Scalar(I32, const=x.const) if x.is_const else Scalar(I32, reg=ar.low32(x))
    # The function is pure: elements with the same inputs share one call, the row or column
    # counting only where the function reads it (a row-constant matrix stays one register a row,
    # which `_reduce_workgroup` can then broadcast without shuffles).
    row_arg, col_arg = fn.body.block.args[:2]
    reads_row, reads_col = bool(row_arg.uses), bool(col_arg.uses)
    lw.comment(f"{op.name} @{fn.sym_name.data}, inlined per element ({len(m.regs)} per thread)")
    out, calls = [], {}
    for i, (r, c) in enumerate(positions_of(lw, op, t)):
        key = (r if reads_row else None, c if reads_col else None, m.regs[i],
               *(x.regs[i] if isinstance(x, Frag) else id(x) for x in extras))
        if key not in calls:
            args = [i32(r) if reads_row else Scalar(I32, const=0),
                    i32(c) if reads_col else Scalar(I32, const=0),
                    Scalar(t.element_type, reg=m.regs[i])]
            for v, x in zip(op.extra, extras):
                args.append(Scalar(t.element_type, reg=x.regs[i]) if isinstance(x, Frag) else x)
            calls[key] = call_reg(lw, op, fn, args)
        out.append(calls[key])
    lw.vmap[op.result] = Frag(t, out)


# ---------------------------------------------------------------------------------------------
# reduce
# ---------------------------------------------------------------------------------------------


def _acc_layout(op, t: coop.MatrixType) -> fr.FragLayout:
    if t.scope_value != Scope.Subgroup:
        raise op_error(op, "workgroup-scope matrices: only subgroup scope is lowered for this op")
    return layout_of(op, t)


def _lane_low(lw: KernelLowering, mask: int) -> SSAValue:
    """A predicate: (laneid & mask) == 0 (this lane is the lower one of a butterfly pair)."""
    def make():
        r = lw.inst(ptx.AndOp, ".b32", [lw.special("%laneid"), lw.imm("b32", str(mask))],
                    "b32", True)
        return lw.inst(ptx.SetpOp, ".eq.b32", [r, lw.imm("b32", "0")], "pred", True)
    return lw.cached(f"lane low {mask}", make)


def _shfl_bfly(lw: KernelLowering, v: SSAValue, mask: int) -> SSAValue:
    kind = ptx.reg_kind(v)
    args = [lw.imm("b32", str(mask)), lw.imm("b32", "31"), lw.imm("b32", "-1")]
    if kind == "b16":
        w = lw.emit(ptx.PackOp(".b32", [v, v], ptx.B32)).out
        s = lw.inst(ptx.ShflSyncOp, ".bfly.b32", [w, *args], "b32")
        return lw.emit(ptx.UnpackOp(".b32", s, [ptx.B16, ptx.B16])).outs[0]
    if kind not in ("b32", "f32"):
        raise ValueError(kind)
    return lw.inst(ptx.ShflSyncOp, ".bfly.b32", [v, *args], kind)


# One of these applied to the CombineFunc's two arguments gives the same bits in either order:
# IEEE 754 addition and multiplication are commutative (signed zeros included; a NaN result is
# the GPU's canonical NaN whatever the operands' payloads), and so are the integer ops and
# IEEE 754-2019 maximum/minimum (arith.maximumf/minimumf: -0 < +0 in either order), which PTX
# max.NaN/min.NaN compute bit for bit on sm_90 (tests/gpu/test_gpu_math.py, signed zeros).
_COMMUTATIVE = (arith.AddfOp, arith.MulfOp, arith.AddiOp, arith.MuliOp, arith.AndIOp, arith.OrIOp,
                arith.XOrIOp, arith.MaxSIOp, arith.MinSIOp, arith.MaxUIOp, arith.MinUIOp,
                arith.MaximumfOp, arith.MinimumfOp)


# Of these, combine(x, x) = x and any grouping gives the same bits (a NaN result is a NaN,
# canonical on the GPU, in any order): a thread may combine its own values of a row before the
# butterflies, and a row-constant matrix reduces to each row's value.
_IDEMPOTENT = (arith.MaximumfOp, arith.MinimumfOp, arith.MaxSIOp, arith.MinSIOp, arith.MaxUIOp,
               arith.MinUIOp, arith.AndIOp, arith.OrIOp)


def _commutative(fn) -> bool:
    """Whether `fn` is `return op(%a, %b)` (or op(%b, %a)) for a commutative `op`."""
    ops = list(fn.body.block.ops) if fn.body.blocks else []
    if len(ops) != 2 or not isinstance(ops[0], _COMMUTATIVE):
        return False
    args = set(fn.body.block.args)
    return (len(args) == 2 and set(ops[0].operands) == args
            and list(ops[1].operands) == [ops[0].results[0]])


class _Combiner:
    def __init__(self, lw: KernelLowering, op: nv2.ReduceOp):
        self.lw, self.op = lw, op
        self.fn = nv2.lookup_func(op, op.combine_func, "CombineFunc")
        self.t = op.matrix.type.element_type
        self.commutative = _commutative(self.fn)
        self.idempotent = self.commutative and isinstance(next(iter(self.fn.body.block.ops)),
                                                          _IDEMPOTENT)

    def __call__(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return call_reg(self.lw, self.op, self.fn, [Scalar(self.t, reg=a), Scalar(self.t, reg=b)])

    def halving(self, vals: list) -> object:
        """The interpreter's halving tree over a list (coop_nv2 interpreter: element i takes
        element i + h for h = P/2 ... 1 while i + h < n); elements are registers or lists of
        registers combined element-wise."""
        n = len(vals)
        h = (1 << (n - 1).bit_length()) // 2 if n > 1 else 0
        vals = list(vals)
        while h >= 1:
            if n > h:
                for i in range(n - h):
                    a, b = vals[i], vals[i + h]
                    vals[i] = [self(x, y) for x, y in zip(a, b)] if isinstance(a, list) \
                        else self(a, b)
                n = h
            h //= 2
        return vals[0]

    def butterfly(self, v: SSAValue, mask: int) -> SSAValue:
        """combine(lower lane's v, upper lane's v) on both lanes of each pair lane ^ mask."""
        lw = self.lw
        other = _shfl_bfly(lw, v, mask)
        if self.commutative:  # f(v, other) on both lanes is f(lower, upper) on both
            return self(v, other)
        low = _lane_low(lw, mask)
        kind = ptx.reg_kind(v)
        first = lw.inst(ptx.SelpOp, f".{kind}", [v, other, low], kind)
        second = lw.inst(ptx.SelpOp, f".{kind}", [other, v, low], kind)
        return self(first, second)


def _row_values(cb: _Combiner, x: list[SSAValue], mt: int, nt: int) -> list[list[SSAValue]]:
    """[row tile][half] -> the reduction of that row (every lane of the quad has it): the
    halving tree over its columns 8j + 2q + c — the 8-column tiles j within the lane (h >= 8),
    then lanes q ^ 2 (h = 4) and q ^ 1 (h = 2) by butterfly, then the lane's pair (h = 1).
    For an idempotent combine (`_IDEMPOTENT`), whose grouping does not matter, the lane's own
    values first (one register: none), then the two butterflies."""
    out = []
    for i in range(mt):
        halves = []
        for h in range(2):
            row = [x[(i * nt + j) * 4 + 2 * h + c] for j in range(nt) for c in range(2)]
            if cb.idempotent:  # (see _IDEMPOTENT) the thread's values first
                v = row[0] if len(set(row)) == 1 else cb.halving(row)
                halves.append(cb.butterfly(cb.butterfly(v, 2), 1))
                continue
            pairs = cb.halving([[x[(i * nt + j) * 4 + 2 * h + c] for c in range(2)]
                                for j in range(nt)])
            pairs = [cb.butterfly(cb.butterfly(v, 2), 1) for v in pairs]
            halves.append(cb(pairs[0], pairs[1]))
        out.append(halves)
    return out


def _column_tree(cb: _Combiner, per_row_tile: list[list[SSAValue]]) -> SSAValue:
    """Reduce values of rows 16i + g + 8h ([i][h]) over all rows: the halving tree over the
    row index — the 16-row tiles i within the lane (h >= 16), the two halves (h = 8), then
    g ^ 4, g ^ 2, g ^ 1 (lanes ^ 16, ^ 8, ^ 4) by butterfly."""
    top, bottom = cb.halving([list(t) for t in per_row_tile])
    v = cb(top, bottom)
    for mask in (16, 8, 4):
        v = cb.butterfly(v, mask)
    return v


def _op_by_op_workgroup_acc(lw: KernelLowering, op, t: coop.MatrixType) -> int:
    """CoopError unless `t` is a Workgroup-scope accumulator in the op-by-op wgmma D layout;
    its 64-row blocks per warpgroup."""
    _, blocks = acc_blocks(lw, op, t)
    if lw.workgroup_acc_positions(op, t) is not None:
        raise op_error(op, f"{op.name} of a Workgroup-scope matrix is lowered in the op-by-op "
                           "accumulator layout only (not in a staged kernel's consumer "
                           "warpgroups)")
    return blocks


def _reduce_workgroup(lw: KernelLowering, op: nv2.ReduceOp) -> None:
    src, res = op.matrix.type, op.result.type
    if op.reduce.data != nv2.REDUCE_ROW:
        raise op_error(op, f"{nv2.reduce_mode_str(op.reduce.data)} reduce of a Workgroup-scope "
                           "matrix has no PTX lowering (Row has: a row lies in one warp)")
    if res.scope_value != Scope.Workgroup:
        raise op_error(op, "reduce: Matrix and Result Type must have the same scope")
    blocks = _op_by_op_workgroup_acc(lw, op, src)
    _op_by_op_workgroup_acc(lw, op, res)
    if coop.bit_width(src.element_type) not in (16, 32):
        raise op_error(op, f"reduce of {src.element_type} components: 16- and 32-bit only")
    cb = _Combiner(lw, op)
    x = list(lw.vmap[op.matrix].regs)
    nt = src.columns // 8
    if cb.idempotent and row_uniform.of(lw).row_constant(op.matrix):
        lw.comment(f"{op.name} Row {src.rows}x{src.columns} -> {res.rows}x{res.columns} "
                   f"Workgroup of a row-constant matrix with @{cb.fn.sym_name.data}: each row's "
                   "value, no shuffles")
        rows = [[x[i * nt * 4 + 2 * h] for h in range(2)] for i in range(blocks)]
    else:
        lw.comment(f"{op.name} Row {src.rows}x{src.columns} -> {res.rows}x{res.columns} "
                   f"Workgroup (@{cb.fn.sym_name.data} inlined per tree node; "
                   f"{'one 16-row tile' if blocks == 1 else f'{blocks} 16-row tiles'} per warp)")
        rows = _row_values(cb, x, blocks, nt)
    lw.vmap[op.result] = Frag(res, [rows[b][v >> 1] for b in range(blocks)
                                    for _ in range(res.columns // 8) for v in range(4)])


@rule(nv2.ReduceOp)
def _reduce(lw: KernelLowering, op: nv2.ReduceOp) -> None:
    src, res = op.matrix.type, op.result.type
    if src.scope_value == Scope.Workgroup:
        return _reduce_workgroup(lw, op)
    _acc_layout(op, src)
    if op.reduce.data != nv2.REDUCE_2X2:
        _acc_layout(op, res)
    if coop.bit_width(src.element_type) not in (16, 32):
        raise op_error(op, f"reduce of {src.element_type} components: 16- and 32-bit only")
    x = list(lw.vmap[op.matrix].regs)
    cb = _Combiner(lw, op)
    mask = op.reduce.data
    mt, nt = src.rows // 16, src.columns // 8
    rmt, rnt = res.rows // 16, res.columns // 8
    lw.comment(f"{op.name} {nv2.reduce_mode_str(mask)} {src.rows}x{src.columns} -> "
               f"{res.rows}x{res.columns} (@{cb.fn.sym_name.data} inlined per tree node)")
    if mask == nv2.REDUCE_2X2:
        lw.vmap[op.result] = Frag(res, _reduce_2x2(lw, op, cb, x))
        return
    if mask == nv2.REDUCE_ROW:
        rows = _row_values(cb, x, mt, nt)
        out = [rows[i][v >> 1] for i in range(rmt) for _ in range(rnt) for v in range(4)]
    elif mask == nv2.REDUCE_COLUMN:
        cols = []
        for j in range(nt):
            pair = []
            for c0 in range(2):
                per_row_tile = [[x[(i * nt + j) * 4 + 2 * h + c0] for h in range(2)]
                                for i in range(mt)]
                pair.append(_column_tree(cb, per_row_tile))
            cols.append(pair)
        out = [cols[j][v & 1] for _ in range(rmt) for j in range(rnt) for v in range(4)]
    else:
        total = _column_tree(cb, _row_values(cb, x, mt, nt))
        out = [total] * (rmt * rnt * 4)
    lw.vmap[op.result] = Frag(res, out)


# ---------------------------------------------------------------------------------------------
# Relayouts through shared memory: 2x2 reduce, convert, transpose
# ---------------------------------------------------------------------------------------------


def _warp_sync(lw: KernelLowering) -> None:
    lw.emit(ptx.BarWarpSyncOp("", [lw.imm("b32", "-1")], []))


def _smem_tile(lw: KernelLowering, op, elems: int, es: int) -> SSAValue:
    """A per-warp shared tile of `elems` elements: this warp's 64-bit shared address."""
    size = lw.workgroup_size
    if size is None:
        raise op_error(op, "needs a coop.workgroup_size attribute (a shared tile per subgroup)")
    warps = (size[0] * size[1] * size[2] + 31) // 32
    per = (elems * es + 15) // 16 * 16
    base = lw.alloc_shared(per * warps, 16)
    warp = lw.inst(ptx.ShrOp, ".u32", [lw.linear_tid(), lw.imm("b32", "5")], "b32", True)
    return lw.inst(ptx.MadOp, ".wide.u32", [warp, lw.imm("b32", str(per)), base], "b64", True)


def _through_smem(lw: KernelLowering, op, src_t: coop.MatrixType, regs: list[SSAValue],
                  src_pos, dst_pos_linear: list[af.Aff]) -> list[SSAValue]:
    """Store `regs` at row-major index row*cols + col of a per-warp tile, then load the
    elements at `dst_pos_linear` (row-major indices of the source matrix)."""
    es = coop.bit_width(src_t.element_type) // 8
    kind = reg_kind(src_t.element_type)
    suffix = "b16" if es == 2 else "b32" if es == 4 else "b8"
    if es not in (2, 4):
        raise op_error(op, f"{src_t.element_type} components: 16- and 32-bit only here")
    tile = _smem_tile(lw, op, src_t.rows * src_t.columns, es)
    ar = Arith(lw)
    _warp_sync(lw)
    for (r, c), v in zip(src_pos, regs):
        idx = af.add(af.scale(r, src_t.columns), c)
        a, off = _smem_addr(lw, ar, tile, idx, es)
        lw.emit(ptx.StOp(f".shared.{suffix}", a, off, [v]))
    _warp_sync(lw)
    out = []
    for idx in dst_pos_linear:
        a, off = _smem_addr(lw, ar, tile, idx, es)
        out.append(lw.emit(ptx.LdOp(f".shared.{suffix}", a, off, [ptx.reg_type(kind)])).outs[0])
    return out


def _smem_addr(lw, ar: Arith, tile: SSAValue, idx: af.Aff, es: int):
    var = af.Aff(idx.terms, 0)
    if var.is_const:
        return tile, idx.const * es
    key = ("smem", id(tile), ar._key(var), es)
    if key not in ar.memo:
        ar.memo[key] = lw.inst(ptx.MadOp, ".lo.s64", [ar.reg(var), lw.imm("b64", str(es)), tile],
                               "b64")
    return ar.memo[key], idx.const * es


def _reduce_2x2(lw: KernelLowering, op, cb: _Combiner, x: list[SSAValue]) -> list[SSAValue]:
    src, res = op.matrix.type, op.result.type
    if res.scope_value != Scope.Subgroup:
        raise op_error(op, "workgroup-scope matrices: only subgroup scope is lowered for this op")
    sp = frag_positions(lw, src, fr.ACC_LAYOUT)
    rp = subgroup_positions(lw, op, res)
    n = src.columns
    want = []
    for r, c in rp:
        r2, c2 = af.scale(r, 2), af.scale(c, 2)
        for dr, dc in ((0, 0), (1, 0), (0, 1), (1, 1)):
            want.append(af.add(af.scale(af.add(r2, af.const(dr)), n), af.add(c2, af.const(dc))))
    got = _through_smem(lw, op, src, x, sp, want)
    out = []
    for i in range(len(rp)):
        a, b, c, d = got[4 * i:4 * i + 4]
        out.append(cb(cb(a, b), cb(c, d)))
    return out


@rule(nv2.ConvertOp)
def _convert_use(lw: KernelLowering, op: nv2.ConvertOp) -> None:
    src, res = op.matrix.type, op.result.type
    if src.scope_value == Scope.Workgroup:
        if res.use_value != Use.MatrixA:
            raise op_error(op, "convert of a Workgroup-scope accumulator to MatrixB has no PTX "
                               "lowering (to MatrixA has: wgmma takes A in registers)")
        _op_by_op_workgroup_acc(lw, op, src)
        if src.columns % 16 or coop.bit_width(src.element_type) != 16:
            raise op_error(op, f"convert of a Workgroup-scope {src.rows}x{src.columns}x"
                               f"{src.element_type} accumulator to MatrixA: wgmma's register A "
                               "is f16 or bf16 with K a multiple of 16")
        lw.comment(f"{op.name} {src.rows}x{src.columns} MatrixAcc -> MatrixA Workgroup: the "
                   "same registers (wgmma's register A fragment)")
        lw.vmap[op.result] = Frag(res, list(lw.vmap[op.matrix].regs))
        return
    ls, lr = _acc_layout(op, src), _acc_layout(op, res)
    lw.comment(f"{op.name} {src.use_value.value} -> {res.use_value.value} through shared memory")
    sp = frag_positions(lw, src, ls)
    want = [af.add(af.scale(r, src.columns), c) for r, c in frag_positions(lw, res, lr)]
    lw.vmap[op.result] = Frag(res, _through_smem(lw, op, src, list(lw.vmap[op.matrix].regs),
                                                 sp, want))


@rule(nv2.TransposeOp)
def _transpose(lw: KernelLowering, op: nv2.TransposeOp) -> None:
    src, res = op.matrix.type, op.result.type
    ls, lr = _acc_layout(op, src), _acc_layout(op, res)
    lw.comment(f"{op.name} {src.rows}x{src.columns} -> {res.rows}x{res.columns} MatrixB "
               "through shared memory")
    sp = frag_positions(lw, src, ls)
    # result (i, j) = source (j, i)
    want = [af.add(af.scale(j, src.columns), i) for i, j in frag_positions(lw, res, lr)]
    lw.vmap[op.result] = Frag(res, _through_smem(lw, op, src, list(lw.vmap[op.matrix].regs),
                                                 sp, want))

