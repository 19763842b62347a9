"""Lowering rules of the `coop` ops at subgroup scope (warp fragments and `mma.sync`).

A subgroup matrix is a `Frag`: one register per element this lane holds, in the order of
`fragments.py`. Loads and stores compute each lane's addresses from the element offset and
stride (in elements, into the flattened memref) and the RowMajor/ColumnMajor layout; they move
one element per instruction, since neither the offset's nor the stride's alignment is known.
`coop.mul_add` packs the fragments into the 32-bit registers `mma.sync` takes and issues
(M/16)·(N/8)·(K/k) instructions (k = 16 for f16/bf16, 32 for s8/u8). The Arm blocked layouts
(SPV_ARM_cooperative_matrix_layouts) address each element by `matrix_addressing.py`.
Workgroup-scope ops go to `wgmma.py`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType
from xdsl.ir import Operation, SSAValue

from coopdialect.dialects import coop, ptx
from coopdialect.dialects.coop import MatrixOperand, Scope
from coopdialect.ptx.element_ops import float_binary, int_binary, normalize, to_f32
from coopdialect.ptx.frag_addressing import element_addresses, layout_of, positions
from coopdialect.ptx.kernel_lowering import (
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
from coopdialect.ptx import matrix_addressing as ma
from coopdialect.ptx import wgmma
from coopdialect.ptx.matrix_addressing import lane_bit_positions, load_values, store_values


def frag_len(lw: KernelLowering, t: coop.MatrixType) -> int:
    if t.scope_value == Scope.Workgroup:
        return wgmma.frag_count(lw, t)
    return t.rows * t.columns // 32


def _arm_addresses(lw: KernelLowering, op: coop.LoadOp | coop.StoreOp, t: coop.MatrixType,
                   lay) -> list:
    # The Arm blocked layouts (SPV_ARM_cooperative_matrix_layouts): per-element address
    # arithmetic on the lane's bits (matrix_addressing.py), most of it folded.
    return ma.element_addresses(lw, op, lw.vmap[op.pointer], lw.scalar(op.offset),
                                lw.scalar(op.stride), op.layout.data, t,
                                lane_bit_positions(lw, t, lay))


@rule(coop.LoadOp)
def _load(lw: KernelLowering, op: coop.LoadOp) -> None:
    t = op.result.type
    if t.scope_value == Scope.Workgroup:
        return wgmma.load_workgroup(lw, op)
    lay = layout_of(op, t)
    buf = lw.vmap[op.pointer]
    lw.comment(f"{op.name} -> {t.rows}x{t.columns}x{t.element_type} {t.use_value.value}, "
               f"{op.layout.data.value}")
    if op.layout.data in coop.ARM_LAYOUTS:
        addrs = _arm_addresses(lw, op, t, lay)
        lw.vmap[op.result] = Frag(t, load_values(lw, buf, t.element_type, addrs))
        return
    addrs = element_addresses(lw, buf, lw.scalar(op.offset), lw.scalar(op.stride),
                              op.layout.data, t, lay, positions(t, lay))
    suffix = mem_suffix(t.element_type)
    kind = reg_kind(t.element_type)
    regs = []
    for a, off in addrs:
        ld = lw.emit(ptx.LdOp(f".{buf.space}.{suffix}", a, off, [ptx.reg_type(kind)]))
        regs.append(ld.outs[0])
    lw.vmap[op.result] = Frag(t, regs)


@rule(coop.StoreOp)
def _store(lw: KernelLowering, op: coop.StoreOp) -> None:
    t = op.object.type
    frag = lw.vmap[op.object]
    if t.scope_value == Scope.Workgroup:
        return wgmma.store_workgroup(lw, op)
    lay = layout_of(op, t)
    buf = lw.vmap[op.pointer]
    lw.comment(f"{op.name} {t.rows}x{t.columns}x{t.element_type}, {op.layout.data.value}")
    if op.layout.data in coop.ARM_LAYOUTS:
        store_values(lw, buf, t.element_type, _arm_addresses(lw, op, t, lay), list(frag.regs))
        return
    addrs = element_addresses(lw, buf, lw.scalar(op.offset), lw.scalar(op.stride),
                              op.layout.data, t, lay, positions(t, lay))
    suffix = mem_suffix(t.element_type, store=True)
    for (a, off), r in zip(addrs, frag.regs):
        lw.emit(ptx.StOp(f".{buf.space}.{suffix}", a, off, [r]))


# --------------------------------------------------------------------------------------------
# mul_add -> mma.sync
# --------------------------------------------------------------------------------------------


def pack16(lw: KernelLowering, lo: SSAValue, hi: SSAValue) -> SSAValue:
    return lw.emit(ptx.PackOp(".b32", [lo, hi], ptx.B32)).out


def pack8(lw: KernelLowering, e: list[SSAValue]) -> SSAValue:
    """Four bytes (low byte of each .b32) into one .b32, e[0] in the lowest byte (prmt)."""
    sel_pair, sel_join = lw.imm("b32", "0x0040"), lw.imm("b32", "0x5410")
    lo = lw.inst(ptx.PrmtOp, ".b32", [e[0], e[1], sel_pair], "b32")
    hi = lw.inst(ptx.PrmtOp, ".b32", [e[2], e[3], sel_pair], "b32")
    return lw.inst(ptx.PrmtOp, ".b32", [lo, hi, sel_join], "b32")


def pack_tile(lw: KernelLowering, regs: list[SSAValue], w: int) -> list[SSAValue]:
    if w == 32:
        return list(regs)
    if w == 16:
        return [pack16(lw, regs[i], regs[i + 1]) for i in range(0, len(regs), 2)]
    return [pack8(lw, regs[i:i + 4]) for i in range(0, len(regs), 4)]


def mma_types(op: coop.MulAddOp) -> tuple[str, str, str, int]:
    """(A type, B type, accumulator kind 'f32'|'f16'|'s32', k) of mma.sync, or an error."""
    a, b = op.a.type, op.b.type
    ea, eb = a.element_type, b.element_type
    if isinstance(ea, Float16Type) and isinstance(eb, Float16Type):
        return "f16", "f16", "", 16
    if isinstance(ea, BFloat16Type) and isinstance(eb, BFloat16Type):
        return "bf16", "bf16", "", 16
    if isinstance(ea, IntegerType) and isinstance(eb, IntegerType) and width(ea) == width(eb) == 8:
        return ("s8" if op.is_signed("A") else "u8", "s8" if op.is_signed("B") else "u8", "", 32)
    raise op_error(op, f"mma.sync has no {ea} x {eb} product (f16, bf16, s8/u8 only)")


def acc_type(op: Operation, t) -> str:
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, Float16Type):
        return "f16"
    if isinstance(t, IntegerType) and width(t) == 32:
        return "s32"
    raise op_error(op, f"mma.sync has no {t} accumulator (f32, f16, s32/u32 only)")


@rule(coop.MulAddOp)
def _mul_add(lw: KernelLowering, op: coop.MulAddOp) -> None:
    if op.a.type.scope_value == Scope.Workgroup:
        return wgmma.mul_add_workgroup(lw, op)
    ta, tb, tc, tr = (v.type for v in (op.a, op.b, op.c, op.result))
    atype, btype, _, k = mma_types(op)
    ctype, dtype = acc_type(op, tc.element_type), acc_type(op, tr.element_type)
    if atype == "bf16" and (ctype, dtype) != ("f32", "f32"):
        raise op_error(op, "bf16 mma.sync accumulates in f32 only")
    if (atype in ("f16", "bf16")) != (ctype != "s32"):
        raise op_error(op, f"mma.sync cannot accumulate {atype} products in {tc.element_type}")
    sat = MatrixOperand.SaturatingAccumulation in op.operand_flags
    if sat and not op.is_signed("Result"):
        raise op_error(op, "SaturatingAccumulation with an unsigned Result: mma.sync .satfinite "
                           "saturates to the s32 range only")
    la, lb, lc = (layout_of(op, t) for t in (ta, tb, tc))
    A, B, C = (lw.vmap[v] for v in (op.a, op.b, op.c))
    m, kk, n = ta.rows, ta.columns, tb.columns
    if kk % k:
        raise op_error(op, f"K = {kk} is not a multiple of the mma.sync K = {k}")
    na, nb, nc = len(la.elems), len(lb.elems), len(lc.elems)
    ka = kk // k  # A tiles per row, B tiles per column
    wa = width(ta.element_type)
    lw.comment(f"{op.name} {m}x{n}x{kk}: {(m // 16) * (n // 8) * ka} x mma.sync m16n8k{k}")
    a_packed = [pack_tile(lw, A.regs[i * na:(i + 1) * na], wa) for i in range(len(A.regs) // na)]
    b_packed = [pack_tile(lw, B.regs[i * nb:(i + 1) * nb], wa) for i in range(len(B.regs) // nb)]
    out: list[SSAValue] = []
    nt = n // 8
    for mi in range(m // 16):
        for ni in range(nt):
            cregs = C.regs[(mi * nt + ni) * nc:(mi * nt + ni + 1) * nc]
            acc = pack_tile(lw, cregs, 16) if ctype == "f16" else cregs
            cur_c = ctype
            # Saturation applies once, to the final addition of C. Over several K steps the
            # exact product is summed from zero (no overflow: |A.B| < 2^31 for K < 2^17) and C
            # is added with add.sat.s32; a single K step uses .satfinite directly.
            split_sat = sat and ka > 1
            if split_sat:
                acc = [lw.imm("b32", "0")] * 4
            for ki in range(ka):
                a_regs = a_packed[mi * ka + ki]
                b_regs = b_packed[ki * nt + ni]
                satf = ".satfinite" if sat and not split_sat else ""
                mods = f".m16n8k{k}.row.col{satf}.{dtype}.{atype}.{btype}.{cur_c}"
                kinds = ["b32"] * 2 if dtype == "f16" else ["f32" if dtype == "f32" else "b32"] * 4
                mma = lw.emit(ptx.MmaSyncOp(mods, a_regs, b_regs, acc,
                                            [ptx.reg_type(x) for x in kinds]))
                acc, cur_c = list(mma.outs), dtype
            if split_sat:
                acc = [lw.inst(ptx.AddOp, ".sat.s32", [p, c], "b32") for p, c in zip(acc, cregs)]
            if dtype == "f16":
                acc = [h for r in acc for h in lw.emit(ptx.UnpackOp(".b32", r,
                                                                    [ptx.B16, ptx.B16])).outs]
            out += acc
    lw.vmap[op.result] = Frag(tr, out)


# --------------------------------------------------------------------------------------------
# Element-wise ops and conversions (per fragment element; same for every scope)
# --------------------------------------------------------------------------------------------


_BINARY = {coop.FAddOp: "add", coop.FSubOp: "sub", coop.FMulOp: "mul", coop.FDivOp: "div",
           coop.IAddOp: "add", coop.ISubOp: "sub", coop.IMulOp: "mul", coop.SDivOp: "sdiv",
           coop.UDivOp: "udiv"}


@rule(*_BINARY)
def _elementwise_binary(lw: KernelLowering, op: Operation) -> None:
    t = op.result.type
    et = t.element_type
    a, b = lw.vmap[op.lhs], lw.vmap[op.rhs]
    name = _BINARY[type(op)]
    lw.comment(f"{op.name} ({len(a.regs)} elements per lane)")
    if isinstance(et, IntegerType):
        regs = [int_binary(lw, name, et, x, y) for x, y in zip(a.regs, b.regs)]
    else:
        regs = [float_binary(lw, name, et, x, y) for x, y in zip(a.regs, b.regs)]
    lw.vmap[op.result] = Frag(t, regs)


@rule(coop.FNegateOp, coop.SNegateOp)
def _negate(lw: KernelLowering, op: Operation) -> None:
    t = op.result.type
    et = t.element_type
    a = lw.vmap[op.operand]
    if isinstance(et, IntegerType):
        mods, kind = (".s64", "b64") if width(et) == 64 else (".s32", "b32")
    else:
        mods, kind = f".{float_suffix(et)}", reg_kind(et)
    lw.vmap[op.result] = Frag(t, [lw.inst(ptx.NegOp, mods, [r], kind) for r in a.regs])


@rule(coop.MatrixTimesScalarOp)
def _times_scalar(lw: KernelLowering, op: coop.MatrixTimesScalarOp) -> None:
    t = op.result.type
    s = lw.reg(lw.scalar(op.scalar))
    a = lw.vmap[op.matrix]
    lw.vmap[op.result] = Frag(t, [float_binary(lw, "mul", t.element_type, r, s) for r in a.regs])


def convert_element(lw: KernelLowering, op: Operation, src, dst, r: SSAValue) -> SSAValue:
    """One element of a coop conversion, with the SPIR-V rounding (rz to int, rn to float)."""
    sw, dw = width(src), width(dst)
    if isinstance(op, coop.FConvertOp):
        if {type(src), type(dst)} == {Float16Type, BFloat16Type}:  # exact via f32, one rounding
            return lw.inst(ptx.CvtOp, f".rn.{float_suffix(dst)}.f32", [to_f32(lw, src, r)], "b16")
        rn = ".rn" if sw > dw else ""  # widening is exact and takes no rounding modifier
        return lw.inst(ptx.CvtOp, f"{rn}.{float_suffix(dst)}.{float_suffix(src)}", [r],
                       reg_kind(dst))
    if isinstance(op, coop.ConvertFToSOp | coop.ConvertFToUOp):
        s = "s" if isinstance(op, coop.ConvertFToSOp) else "u"
        rw = 64 if dw == 64 else 32
        if isinstance(src, BFloat16Type):
            r, src = to_f32(lw, src, r), Float32Type()
        return lw.inst(ptx.CvtOp, f".rzi.{s}{rw}.{float_suffix(src)}", [r], reg_kind(dst))
    if isinstance(op, coop.ConvertSToFOp | coop.ConvertUToFOp):
        signed = isinstance(op, coop.ConvertSToFOp)
        s = "s" if signed else "u"
        r = normalize(lw, r, sw, signed)
        rw = 64 if sw == 64 else 32
        if isinstance(dst, BFloat16Type):
            # integer -> f64 is exact for 32-bit sources, then one rounding to bf16.
            f = lw.inst(ptx.CvtOp, f".rn.f64.{s}{rw}", [r], "f64")
            f = lw.inst(ptx.CvtOp, ".rn.bf16.f64", [f], "b16")
            return f
        return lw.inst(ptx.CvtOp, f".rn.{float_suffix(dst)}.{s}{rw}", [r], reg_kind(dst))
    if isinstance(op, coop.SConvertOp | coop.UConvertOp):
        signed = isinstance(op, coop.SConvertOp)
        s = "s" if signed else "u"
        if dw > sw:
            r = normalize(lw, r, sw, signed)
            if dw == 64:
                return lw.inst(ptx.CvtOp, f".{s}64.{s}32", [r], "b64")
            return r  # low dw bits are right; upper bits unspecified by convention
        if sw == 64:
            return lw.inst(ptx.CvtOp, ".u32.u64", [r], "b32")
        return r
    assert isinstance(op, coop.BitcastOp)
    return r


@rule(*coop.CONVERSIONS)
def _convert(lw: KernelLowering, op: Operation) -> None:
    src_t, dst_t = op.operand.type, op.result.type
    a = lw.vmap[op.operand]
    lw.comment(f"{op.name} {src_t.element_type} -> {dst_t.element_type}")
    regs = [convert_element(lw, op, src_t.element_type, dst_t.element_type, r) for r in a.regs]
    lw.vmap[op.result] = Frag(dst_t, regs)


@rule(coop.CompositeConstructOp)
def _construct(lw: KernelLowering, op: coop.CompositeConstructOp) -> None:
    t = op.result.type
    if t.scope_value == Scope.Workgroup:
        return wgmma.construct(lw, op)
    if t.scope_value == Scope.Subgroup:
        layout_of(op, t)
    r = lw.reg(lw.scalar(op.constituent))
    lw.vmap[op.result] = Frag(t, [r] * frag_len(lw, t))


@rule(coop.LengthOp)
def _length(lw: KernelLowering, op: coop.LengthOp) -> None:
    lw.vmap[op.result] = Scalar(op.result.type, const=frag_len(lw, op.matrix_type))


@rule(coop.ExtractOp)
def _extract(lw: KernelLowering, op: coop.ExtractOp) -> None:
    a = lw.vmap[op.matrix]
    i = op.index.data
    if i >= len(a.regs):
        raise op_error(op, f"index {i} is out of range: a lane holds {len(a.regs)} components")
    lw.vmap[op.result] = Scalar(op.result.type, reg=a.regs[i])


@rule(coop.InsertOp)
def _insert(lw: KernelLowering, op: coop.InsertOp) -> None:
    a = lw.vmap[op.matrix]
    i = op.index.data
    if i >= len(a.regs):
        raise op_error(op, f"index {i} is out of range: a lane holds {len(a.regs)} components")
    regs = list(a.regs)
    regs[i] = lw.reg(lw.scalar(op.object))
    lw.vmap[op.result] = Frag(op.result.type, regs)
