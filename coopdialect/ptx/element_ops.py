"""Element arithmetic on registers that the rules share: float add/sub/mul/div rounded to
nearest even in the element type (through f32 where PTX has no instruction of that type),
integer binary ops, and sign/zero extension of sub-32-bit integers held in `.b32` registers
(their upper bits are unspecified, `kernel_lowering.py`)."""

from __future__ import annotations

from xdsl.dialects.builtin import BFloat16Type, Float16Type
from xdsl.ir import SSAValue

from coopdialect.dialects import ptx
from coopdialect.ptx.kernel_lowering import KernelLowering, float_suffix, reg_kind, width


def to_f32(lw: KernelLowering, t, r: SSAValue) -> SSAValue:
    return lw.inst(ptx.CvtOp, f".f32.{float_suffix(t)}", [r], "f32")


def from_f32(lw: KernelLowering, t, r: SSAValue) -> SSAValue:
    return lw.inst(ptx.CvtOp, f".rn.{float_suffix(t)}.f32", [r], "b16")


def float_binary(lw: KernelLowering, name: str, t, a: SSAValue, b: SSAValue) -> SSAValue:
    """a (add|sub|mul|div) b, rounded to nearest even in type t. f16 division and all bf16
    arithmetic go through f32: the f32 result rounded again is still correctly rounded, since
    f32 has at least 2p+2 bits for p = 11 (f16) and 8 (bf16)."""
    if isinstance(t, BFloat16Type) or (isinstance(t, Float16Type) and name == "div"):
        r = lw.inst({"add": ptx.AddOp, "sub": ptx.SubOp, "mul": ptx.MulOp, "div": ptx.DivOp}[name],
                    ".rn.f32", [to_f32(lw, t, a), to_f32(lw, t, b)], "f32")
        return from_f32(lw, t, r)
    cls = {"add": ptx.AddOp, "sub": ptx.SubOp, "mul": ptx.MulOp, "div": ptx.DivOp}[name]
    return lw.inst(cls, f".rn.{float_suffix(t)}", [a, b], reg_kind(t))


def normalize(lw: KernelLowering, r: SSAValue, w: int, signed: bool) -> SSAValue:
    """Sign- or zero-extend the low w bits of a .b32 (no-op for 32/64 bits)."""
    if w >= 32:
        return r
    s = "s" if signed else "u"
    return lw.inst(ptx.CvtOp, f".{s}32.{s}{w}", [r], "b32")


def int_binary(lw: KernelLowering, name: str, t, a: SSAValue, b: SSAValue) -> SSAValue:
    w = width(t)
    rw = 64 if w == 64 else 32
    kind = "b64" if w == 64 else "b32"
    if name in ("add", "sub"):
        cls = ptx.AddOp if name == "add" else ptx.SubOp
        return lw.inst(cls, f".s{rw}", [a, b], kind)
    if name == "mul":
        return lw.inst(ptx.MulOp, f".lo.s{rw}", [a, b], kind)
    signed = name == "sdiv"
    s = "s" if signed else "u"
    return lw.inst(ptx.DivOp, f".{s}{rw}", [normalize(lw, a, w, signed),
                                             normalize(lw, b, w, signed)], kind)
