"""The functions cooperative-matrix-2 ops reference (DecodeFunc, CombineFunc, per-element Func),
inlined at each use: `inline_call` lowers the callee's body with its parameters bound to the
call's values through the rule table; `decode_element` is one element of a DecodeFunc load
(SPV_NV_cooperative_matrix2, the interpreter's semantics in coopdialect/interpreter/coop_nv2.py).
`inlined_functions` names them, so convert-coop-to-ptx does not make them kernels."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Block, SSAValue

from coopdialect.dialects import ptx
from coopdialect.dialects import coop_nv2 as nv2
from coopdialect.ptx import affine as af
from coopdialect.ptx.affine import Arith
from coopdialect.ptx.kernel_lowering import RULES, Buf, KernelLowering, Scalar, op_error


I32 = IntegerType(32)


def inlined_functions(module) -> set[str]:
    """Names of the functions that cooperative-matrix-2 ops call (DecodeFunc, CombineFunc,
    per-element Func): convert-coop-to-ptx inlines them rather than making them kernels."""
    names = set()
    for op in module.walk():
        if isinstance(op, nv2.NV2_OPS):
            for key in ("decode_func", "combine_func", "func"):
                ref = op.properties.get(key)
                if ref is not None:
                    names.add(ref.string_value())
    return names


def inline_call(lw: KernelLowering, caller, fn: func.FuncOp, args: list[object]) -> object:
    """Lower `fn`'s body with its parameters bound to `args`; returns the returned value."""
    block = fn.body.block
    for a, v in zip(block.args, args):
        lw.vmap[a] = v
    for op in block.ops:
        if isinstance(op, func.ReturnOp):
            if len(op.arguments) != 1:
                raise op_error(caller, f"@{fn.sym_name.data} must return one value")
            return lw.vmap[op.arguments[0]]
        f = RULES.get(type(op))
        if f is None:
            raise op_error(op, f"has no PTX lowering (in @{fn.sym_name.data}, inlined into "
                               f"'{caller.name}')")
        f(lw, op)
    raise op_error(caller, f"@{fn.sym_name.data} has no func.return")


def call_reg(lw: KernelLowering, caller, fn: func.FuncOp, args: list[object]) -> SSAValue:
    v = inline_call(lw, caller, fn, args)
    assert isinstance(v, Scalar)
    return lw.reg(v)


def guarded(lw: KernelLowering, p, compute, fallback: SSAValue) -> SSAValue:
    """compute() where predicate p holds, else `fallback` (a branch around compute)."""
    if p is True:
        return compute()
    kind = ptx.reg_kind(fallback)
    then, skip, join = lw.new_block(), Block(), Block(arg_types=[ptx.reg_type(kind)])
    lw.emit(ptx.CbraOp(p, skip, then, negate=True))
    lw.cur = then
    v = compute()
    lw.emit(ptx.BraOp(join, [v]))
    lw.blocks.append(skip)
    lw.cur = skip
    lw.emit(ptx.BraOp(join, [fallback]))
    lw.blocks.append(join)
    lw.cur = join
    return join.args[0]


def decode_element(lw: KernelLowering, op: nv2.LoadTensorOp, buf: Buf, e, sel, fallback):
    """One element of a DecodeFunc load: the function inlined with (memref, index, blockCoord,
    coordInBlock) — i32 values, the low 32 bits of the pseudo-code's values."""
    fn = nv2.lookup_func(op, op.decode_func, "DecodeFunc")
    ar = Arith(lw)

    def i32(x: af.Aff) -> Scalar:
        if x.is_const:
            return Scalar(I32, const=x.const & af.U32)
        return Scalar(I32, reg=ar.low32(x))

    def compute() -> SSAValue:
        args = [buf, i32(e.index), *(i32(b) for b in e.block), *(i32(i) for i in e.inner)]
        return call_reg(lw, op, fn, args)
    return guarded(lw, sel, compute, fallback)
