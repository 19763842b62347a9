"""Lowering rules of `func`, `arith`, `scf` and `gpu` ops (the kernel convention of
`kernel_lowering.py`): `index` arithmetic in 64-bit registers, `scf.for` as a header block with an
exit test and a back edge carrying the iteration values (`open_loop`), `scf.while` likewise
(its `before` region in the header), `scf.if` as branches, i1 values as predicate registers
(and/or/xor.pred, select as predicate logic), the ids from special registers."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType
from xdsl.ir import Block, Operation, SSAValue

from coopdialect.dialects import ptx
from coopdialect.dialects import gpu as cgpu
from coopdialect.ptx.element_ops import float_binary
from coopdialect.ptx.kernel_lowering import (
    KernelLowering,
    LoopFrame,
    Scalar,
    op_error,
    reg_kind,
    rule,
    width,
)


# ---------------------------------------------------------------------------------------------
# func, arith, scf, gpu
# ---------------------------------------------------------------------------------------------


@rule(func.ReturnOp)
def _return(lw: KernelLowering, op: func.ReturnOp) -> None:
    if op.arguments:
        raise op_error(op, "a kernel returns nothing; write results to a memref")
    lw.emit(ptx.RetOp())


@rule(arith.ConstantOp)
def _constant(lw: KernelLowering, op: arith.ConstantOp) -> None:
    v = op.value
    t = op.result.type
    if isinstance(t, AnyFloat):
        lw.vmap[op.result] = Scalar(t, const=float(v.value.data))
    elif isinstance(t, IndexType | IntegerType):
        lw.vmap[op.result] = Scalar(t, const=int(v.value.data))
    else:
        raise op_error(op, f"constant of type {t} has no PTX lowering")


_INT_BIN = {
    arith.AddiOp: ("add", "s", lambda x, y: x + y),
    arith.SubiOp: ("sub", "s", lambda x, y: x - y),
    arith.MuliOp: ("mul.lo", "s", lambda x, y: x * y),
    arith.DivUIOp: ("div", "u", lambda x, y: x // y),
    arith.DivSIOp: ("div", "s", lambda x, y: int(x / y)),
    arith.RemUIOp: ("rem", "u", lambda x, y: x % y),
    arith.RemSIOp: ("rem", "s", lambda x, y: x - y * int(x / y)),
    arith.AndIOp: ("and", "b", lambda x, y: x & y),
    arith.OrIOp: ("or", "b", lambda x, y: x | y),
    arith.XOrIOp: ("xor", "b", lambda x, y: x ^ y),
    arith.ShLIOp: ("shl", "b", lambda x, y: x << y),
    arith.ShRUIOp: ("shr", "u", lambda x, y: x >> y),
    arith.ShRSIOp: ("shr", "s", lambda x, y: x >> y),
    arith.MinUIOp: ("min", "u", min),
    arith.MaxUIOp: ("max", "u", max),
    arith.MinSIOp: ("min", "s", min),
    arith.MaxSIOp: ("max", "s", max),
}
_OPCLS = {"add": ptx.AddOp, "sub": ptx.SubOp, "mul.lo": ptx.MulOp, "div": ptx.DivOp,
          "rem": ptx.RemOp, "and": ptx.AndOp, "or": ptx.OrOp, "xor": ptx.XorOp, "shl": ptx.ShlOp,
          "shr": ptx.ShrOp, "min": ptx.MinOp, "max": ptx.MaxOp}


@rule(*_INT_BIN)
def _int_binary(lw: KernelLowering, op: Operation) -> None:
    name, sign, fold = _INT_BIN[type(op)]
    a, b = lw.scalar(op.lhs), lw.scalar(op.rhs)
    t = op.result.type
    w = width(t)
    if w == 1 and name in ("and", "or", "xor"):  # i1: predicate logic (flags of lifted SPIR-V)
        ca, c = a.const, b.const
        if ca is not None and c is not None:
            lw.vmap[op.result] = Scalar(t, const=fold(int(ca), int(c)) & 1)
            return
        lw.vmap[op.result] = Scalar(t, reg=lw.inst(_OPCLS[name], ".pred", [lw.reg(a), lw.reg(b)], "pred"))
        return
    if w not in (32, 64):
        raise op_error(op, f"scalar {t} arithmetic: only 32/64-bit integers and index")
    unsigned_div = sign == "u" and name in ("div", "rem")
    ca, c = a.const, b.const
    if unsigned_div:  # constants are kept signed (as arith.constant prints them): read unsigned
        ca, c = (None if v is None else int(v) % (1 << w) for v in (ca, c))
    if ca is not None and c is not None and not (name in ("div", "rem") and c == 0):
        r = fold(int(ca), int(c))
        if unsigned_div and r >= 1 << (w - 1):
            r -= 1 << w
        lw.vmap[op.result] = Scalar(t, const=r)
        return
    if isinstance(t, IndexType) and name in ("add", "sub", "mul.lo"):
        lw.vmap[op.result] = lw.index_op(name.split(".")[0], a, b)
        return
    if unsigned_div and c is not None and c > 0:
        # Unsigned division by a constant without a division instruction (udiv_const): the
        # loop indices of staged kernels divide by their step and stage count every iteration.
        r = lw.udiv_const(lw.reg(a), int(c), w, rem=name == "rem")
        lw.vmap[op.result] = Scalar(t, reg=r)
        return
    rb = lw.reg(b)
    if name in ("shl", "shr"):  # the shift amount is a .u32
        rb = lw.inst(ptx.CvtOp, ".u32.u64", [rb], "b32") if w == 64 else rb
    mods = f".{name.split('.', 1)[1]}" if "." in name else ""
    lw.vmap[op.result] = Scalar(t, reg=lw.inst(_OPCLS[name], f"{mods}.{sign}{w}",
                                               [lw.reg(a), rb], reg_kind(t)))


_CMP = {"eq": "eq", "ne": "ne", "slt": "lt", "sle": "le", "sgt": "gt", "sge": "ge",
        "ult": "lo", "ule": "ls", "ugt": "hi", "uge": "hs"}


@rule(arith.CmpiOp)
def _cmpi(lw: KernelLowering, op: arith.CmpiOp) -> None:
    pred = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"][op.predicate.value.data]
    t = op.lhs.type
    w = width(t)
    sign = "u" if pred[0] == "u" or pred in ("eq", "ne") else "s"
    p = lw.inst(ptx.SetpOp, f".{_CMP[pred]}.{sign}{w}",
                [lw.reg(lw.scalar(op.lhs)), lw.reg(lw.scalar(op.rhs))], "pred")
    lw.vmap[op.result] = Scalar(op.result.type, reg=p)


# arith.cmpf predicate -> PTX setp comparison (ISA 9.7.4.2: ordered, and the `u` unordered forms)
_CMPF = {"oeq": "eq", "ogt": "gt", "oge": "ge", "olt": "lt", "ole": "le", "one": "ne", "ord": "num",
         "ueq": "equ", "ugt": "gtu", "uge": "geu", "ult": "ltu", "ule": "leu", "une": "neu", "uno": "nan"}


@rule(arith.CmpfOp)
def _cmpf(lw: KernelLowering, op: arith.CmpfOp) -> None:
    pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    if pred not in _CMPF:
        raise op_error(op, f"cmpf {pred} has no PTX lowering")
    p = lw.inst(ptx.SetpOp, f".{_CMPF[pred]}.f{width(op.lhs.type)}",
                [lw.reg(lw.scalar(op.lhs)), lw.reg(lw.scalar(op.rhs))], "pred")
    lw.vmap[op.result] = Scalar(op.result.type, reg=p)


@rule(arith.SelectOp)
def _select(lw: KernelLowering, op: arith.SelectOp) -> None:
    t = op.result.type
    kind = reg_kind(t)
    if kind == "pred":  # no selp.pred: (c and a) or (not c and b)
        c = lw.reg(lw.scalar(op.cond))
        x = lw.inst(ptx.AndOp, ".pred", [c, lw.reg(lw.scalar(op.lhs))], "pred")
        nc = lw.inst(ptx.NotOp, ".pred", [c], "pred")
        y = lw.inst(ptx.AndOp, ".pred", [nc, lw.reg(lw.scalar(op.rhs))], "pred")
        lw.vmap[op.result] = Scalar(t, reg=lw.inst(ptx.OrOp, ".pred", [x, y], "pred"))
        return
    d = lw.inst(ptx.SelpOp, f".{kind}", [lw.reg(lw.scalar(op.lhs)), lw.reg(lw.scalar(op.rhs)),
                                         lw.reg(lw.scalar(op.cond))], kind)
    lw.vmap[op.result] = Scalar(t, reg=d)


@rule(arith.IndexCastOp)
def _index_cast(lw: KernelLowering, op: Operation) -> None:
    src, t = lw.scalar(op.input), op.result.type
    if src.const is not None:
        lw.vmap[op.result] = Scalar(t, const=src.const)
        return
    ws, wd = width(op.input.type), width(t)
    sign = "s" if isinstance(op, arith.IndexCastOp) else "u"
    if ws == wd:
        lw.vmap[op.result] = Scalar(t, reg=src.reg)
    elif wd > ws:
        lw.vmap[op.result] = Scalar(t, reg=lw.inst(ptx.CvtOp, f".{sign}{wd}.{sign}{ws}",
                                                   [src.reg], reg_kind(t)))
    else:
        lw.vmap[op.result] = Scalar(t, reg=lw.inst(ptx.CvtOp, f".u{wd}.u{ws}", [src.reg],
                                                   reg_kind(t)))


_FLOAT_BIN = {arith.AddfOp: "add", arith.SubfOp: "sub", arith.MulfOp: "mul", arith.DivfOp: "div"}


@rule(*_FLOAT_BIN)
def _float_binary(lw: KernelLowering, op: Operation) -> None:
    t = op.result.type
    d = float_binary(lw, _FLOAT_BIN[type(op)], t, lw.reg(lw.scalar(op.lhs)),
                     lw.reg(lw.scalar(op.rhs)))
    lw.vmap[op.result] = Scalar(t, reg=d)


def open_loop(lw: KernelLowering, op: scf.ForOp,
              extra: Sequence[SSAValue] = ()) -> tuple[Block, SSAValue, list, Block]:
    """The header of `op`'s loop: (header, induction variable, carried values, exit block),
    with lw.cur at the start of the body; the body's yield branches back to the header. The
    registers `extra` are carried too, after the loop's own values: the header's last
    len(extra) arguments, which the back edge passes (`LoopFrame.extra`)."""
    lb, ub = lw.scalar(op.lb), lw.scalar(op.ub)
    inits = [lw.vmap[v] for v in op.iter_args]
    flat = [lw.reg(lb)] + [r for v in inits for r in lw.flatten(v)] + list(extra)
    header = lw.new_block([ptx.reg_kind(r) for r in flat])
    lw.emit(ptx.BraOp(header, flat))
    body, exit_ = lw.new_block(), Block()
    lw.cur = header
    iv = header.args[0]
    # MLIR scf.for compares signed; exit when iv >= ub.
    p = lw.inst(ptx.SetpOp, ".ge.s64", [iv, lw.reg(ub)], "pred")
    lw.emit(ptx.CbraOp(p, exit_, body))
    lw.cur = body
    own = list(header.args[1:len(header.args) - len(extra)])
    return header, iv, lw.unflatten(inits, own), exit_


@rule(scf.ForOp)
def _for(lw: KernelLowering, op: scf.ForOp) -> None:
    step = lw.scalar(op.step)
    header, iv, carried, exit_ = open_loop(lw, op)
    block = op.body.block
    lw.vmap[block.args[0]] = Scalar(IndexType(), reg=iv)
    for arg, v in zip(block.args[1:], carried):
        lw.vmap[arg] = v
    lw.loop_stack.append(LoopFrame(header, iv, step))
    lw.lower_ops(block)
    lw.loop_stack.pop()
    lw.blocks.append(exit_)
    lw.cur = exit_
    for res, v in zip(op.results, carried):
        lw.vmap[res] = v


@rule(scf.WhileOp)
def _while(lw: KernelLowering, op: scf.WhileOp) -> None:
    """`scf.while` -> a header block running `before` and branching on its `scf.condition` to the
    `after` block (whose yield branches back) or past the loop; the condition's values are the
    results."""
    inits = [lw.vmap[v] for v in op.arguments]
    flat = [r for v in inits for r in lw.flatten(v)]
    header = lw.new_block([ptx.reg_kind(r) for r in flat])
    lw.emit(ptx.BraOp(header, flat))
    lw.cur = header
    before = op.before_region.block
    for arg, v in zip(before.args, lw.unflatten(inits, list(header.args))):
        lw.vmap[arg] = v
    cond = before.last_op
    assert isinstance(cond, scf.ConditionOp)
    for o in before.ops:
        if o is not cond:
            lw.lower_op(o)
    values = [lw.vmap[v] for v in cond.args]
    body, exit_ = lw.new_block(), Block()
    lw.emit(ptx.CbraOp(lw.reg(lw.scalar(cond.condition)), body, exit_))
    lw.cur = body
    for arg, v in zip(op.after_region.block.args, values):
        lw.vmap[arg] = v
    lw.loop_stack.append(LoopFrame(header, None, None))
    lw.lower_ops(op.after_region.block)
    lw.loop_stack.pop()
    lw.blocks.append(exit_)
    lw.cur = exit_
    for res, v in zip(op.results, values):
        lw.vmap[res] = v


@rule(scf.IfOp)
def _if(lw: KernelLowering, op: scf.IfOp) -> None:
    """`scf.if` -> `@!p bra` around the then-block (and an else-block); results are the join
    block's arguments, written by each branch (the printer's parallel copies)."""
    cond = lw.reg(lw.scalar(op.cond))
    then_b = lw.new_block()
    has_else = bool(op.false_region.blocks) and len(op.false_region.block.ops) > 1
    else_b = lw.new_block() if has_else or op.results else None
    join = Block()
    lw.emit(ptx.CbraOp(cond, then_b, else_b or join))
    outs: list[list[object]] = []
    for blk, region in ((then_b, op.true_region), (else_b, op.false_region)):
        if blk is None:
            continue
        lw.cur = blk
        yielded: list[object] = []
        for o in region.block.ops:
            if isinstance(o, scf.YieldOp):
                yielded = [lw.vmap[v] for v in o.arguments]
            else:
                lw.lower_op(o)
        outs.append(yielded)
        regs = [r for v in yielded for r in lw.flatten(v)]
        if op.results and not join.args:
            for r in regs:
                join.insert_arg(r.type, len(join.args))
        lw.emit(ptx.BraOp(join, regs))
    lw.blocks.append(join)
    lw.cur = join
    if op.results:
        for res, v in zip(op.results, lw.unflatten(outs[0], list(join.args))):
            lw.vmap[res] = v


@rule(scf.YieldOp)
def _yield(lw: KernelLowering, op: scf.YieldOp) -> None:
    frame = lw.loop_stack[-1]
    regs = [r for v in op.arguments for r in lw.flatten(lw.vmap[v])]
    if frame.iv is not None:  # scf.for: the next induction variable first (scf.while: none)
        regs.insert(0, lw.reg(lw.index_op("add", Scalar(IndexType(), reg=frame.iv), frame.step)))
    lw.emit(ptx.BraOp(frame.header, regs + frame.extra()))


@rule(cgpu.BlockIdOp, cgpu.ThreadIdOp, cgpu.GridDimOp, cgpu.BlockDimOp, cgpu.GlobalIdOp)
def _dim_id(lw: KernelLowering, op: Operation) -> None:
    d = op.dim
    if isinstance(op, cgpu.BlockDimOp) and lw.workgroup_size is not None:
        lw.vmap[op.result] = lw.idx_const(lw.workgroup_size["xyz".index(d)])
        return
    if isinstance(op, cgpu.GlobalIdOp):
        r = lw.inst(ptx.MadOp, ".lo.u32", [lw.special(f"%ctaid.{d}"), lw.special(f"%ntid.{d}"),
                                           lw.special(f"%tid.{d}")], "b32", True)
    else:
        sreg = {cgpu.BlockIdOp: "%ctaid", cgpu.ThreadIdOp: "%tid", cgpu.GridDimOp: "%nctaid",
                cgpu.BlockDimOp: "%ntid"}[type(op)]
        r = lw.special(f"{sreg}.{d}")
    lw.vmap[op.result] = Scalar(IndexType(), reg=lw.cached(f"u64 {op.name} {d}",
                                                           lambda: lw.u64(r, True)))


@rule(cgpu.SubgroupIdOp, cgpu.LaneIdOp, cgpu.SubgroupSizeOp, cgpu.NumSubgroupsOp)
def _subgroup_id(lw: KernelLowering, op: Operation) -> None:
    if isinstance(op, cgpu.SubgroupSizeOp):
        lw.vmap[op.result] = lw.idx_const(32)
        return
    if isinstance(op, cgpu.NumSubgroupsOp):
        x, y, z = lw.workgroup_size
        lw.vmap[op.result] = lw.idx_const((x * y * z + 31) // 32)
        return
    if isinstance(op, cgpu.LaneIdOp):
        r = lw.special("%laneid")
        lw.vmap[op.result] = Scalar(IndexType(), reg=lw.cached("u64 lane", lambda: lw.u64(r, True)))
        return

    def make() -> SSAValue:
        r = lw.inst(ptx.ShrOp, ".u32", [lw.linear_tid(), lw.imm("b32", "5")], "b32", True)
        return lw.u64(r, True)
    lw.vmap[op.result] = Scalar(IndexType(), reg=lw.cached("u64 subgroup", make))
