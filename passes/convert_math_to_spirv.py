"""convert-coop-to-spirv rules for the `math` dialect (and arith.maxnumf/minnumf, the integer
min/max arith.minsi/maxsi/minui/maxui): each op is one
`OpExtInst` of the GLSL.std.450 extended instruction set (instruction numbers from the generated
grammar tables), except math.erf, which GLSL.std.450 lacks and which becomes the f32 sequence of
`coopdialect.math_approx`. Registered into `_KernelLowering.RULES` when
`passes/convert_coop_to_spirv.py` imports this module, so the rules apply in kernels and in the
functions that `coop.per_element_op`, `coop.reduce` and DecodeFuncs call.

Precision is the Vulkan environment's ("Precision and Operation of SPIR-V Instructions", the
GLSL.std.450 table; docs/math.md lists it per op): exp/exp2 3 + 2|x| ulp (f16: 1 + 2|x|),
log/log2 3 ulp outside [0.5, 2] and absolute 2^-21 inside (f16: 2^-7), inversesqrt 2 ulp, sqrt
inherited from 1/inversesqrt, tanh inherited from sinh/cosh, i.e. from the exp formula, fma
inherited from OpFMul followed by OpFAdd (a driver need not fuse), the rounding ops, fabs and
nmin/nmax correctly rounded. By default a driver may also flush subnormals and assume no NaN or
infinity (no float-controls execution modes are emitted).

Refused with one line at the op: bf16 (SPV_KHR_bfloat16 has no arithmetic on it), an
f64 operand of an instruction GLSL.std.450 defines only for 16- and 32-bit floats, and the math
ops without a lowering here (expm1, log1p, log10, cbrt, round, copysign, fpowi, the integer ops
other than absi).
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type
from xdsl.ir import Attribute, Operation, SSAValue

from coopdialect import math_approx as approx
from coopdialect.errors import CoopError
from coopdialect.dialects import spirv as sp
from coopdialect.dialects.spirv_general import ExtInstOp
from coopdialect.spirv.grammar_tables import GLSL_STD_450

GLSL = "GLSL.std.450"

# math / arith op -> GLSL.std.450 instruction (operands in the op's order)
EXT_INST: dict[type[Operation], str] = {
    math.ExpOp: "Exp", math.Exp2Op: "Exp2", math.LogOp: "Log", math.Log2Op: "Log2",
    math.SqrtOp: "Sqrt", math.RsqrtOp: "InverseSqrt", math.PowFOp: "Pow",
    math.SinOp: "Sin", math.CosOp: "Cos", math.TanOp: "Tan", math.AsinOp: "Asin",
    math.AcosOp: "Acos", math.AtanOp: "Atan", math.Atan2Op: "Atan2", math.SinhOp: "Sinh",
    math.CoshOp: "Cosh", math.TanhOp: "Tanh", math.AsinhOp: "Asinh", math.AcoshOp: "Acosh",
    math.AtanhOp: "Atanh", math.AbsFOp: "FAbs", math.AbsIOp: "SAbs", math.FmaOp: "Fma",
    math.FloorOp: "Floor", math.CeilOp: "Ceil", math.TruncOp: "Trunc",
    math.RoundEvenOp: "RoundEven", arith.MaxnumfOp: "NMax", arith.MinnumfOp: "NMin",
    arith.MinSIOp: "SMin", arith.MaxSIOp: "SMax", arith.MinUIOp: "UMin", arith.MaxUIOp: "UMax",
}

# GLSL.std.450 (the specification's operand rules): these take 16- or 32-bit floats only
F16_F32_ONLY = frozenset({"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Atan2", "Sinh", "Cosh",
                          "Tanh", "Asinh", "Acosh", "Atanh", "Pow", "Exp", "Log", "Exp2", "Log2"})


def ext_inst(low, name: str, args: list[SSAValue], t: Attribute) -> SSAValue:
    """`OpExtInst %t GLSL.std.450 name args` in the block being filled."""
    return low.emit(ExtInstOp(GLSL, GLSL_STD_450[name][0], args, t)).result


def lower_ext_inst(low, op: Operation) -> None:
    name = EXT_INST[type(op)]
    t = low.scalar_type(op, op.results[0].type)
    if name in F16_F32_ONLY and isinstance(t, Float64Type):
        raise CoopError(op, f"GLSL.std.450 {name} takes 16- or 32-bit floats: {op.name} of f64 has no "
                            "SPIR-V lowering")
    args = [low.get(op, v) for v in op.operands]
    low.set(op.results[0], ext_inst(low, name, args, t))


def _horner(low, coefs, z: SSAValue, t: Attribute) -> SSAValue:
    """sum coefs[k] z^k by Horner's rule (OpFMul, OpFAdd)."""
    acc = low.const(coefs[-1], t)
    for c in reversed(coefs[:-1]):
        acc = low.emit(sp.FAddOp(low.emit(sp.FMulOp(acc, z)).results[0], low.const(c, t))).results[0]
    return acc


def erf_f32(low, x: SSAValue) -> SSAValue:
    """erf of an f32 value: the sequence of `coopdialect.math_approx` (Taylor inside |x| < 1,
    Abramowitz & Stegun 7.1.26 outside), both computed, one selected (no divergence)."""
    f32 = Float32Type()

    def b(cls, *xs):
        return low.emit(cls(*xs)).results[0]
    a = ext_inst(low, "FAbs", [x], f32)
    z = b(sp.FMulOp, x, x)
    small = b(sp.FMulOp, x, _horner(low, approx.ERF_TAYLOR, z, f32))
    den = b(sp.FAddOp, low.const(1.0, f32), b(sp.FMulOp, low.const(approx.ERF_AS_P, f32), a))
    t = b(sp.FDivOp, low.const(1.0, f32), den)
    q = b(sp.FMulOp, t, _horner(low, approx.ERF_AS_A, t, f32))
    e = ext_inst(low, "Exp", [b(sp.FNegateOp, z)], f32)
    big = b(sp.FSubOp, low.const(1.0, f32), b(sp.FMulOp, q, e))
    neg = low.emit(sp.FOrdLessThanOp(x, low.const(0.0, f32))).results[0]
    big = low.emit(sp.SelectOp(neg, b(sp.FNegateOp, big), big)).result
    inside = low.emit(sp.FOrdLessThanOp(a, low.const(approx.ERF_SPLIT, f32))).results[0]
    return low.emit(sp.SelectOp(inside, small, big)).result


def lower_erf(low, op: math.ErfOp) -> None:
    t = low.scalar_type(op, op.result.type)
    x = low.get(op, op.operand)
    if isinstance(t, Float32Type):
        low.set(op.result, erf_f32(low, x))
    elif isinstance(t, Float16Type):  # in f32, rounded once to f16
        wide = low.emit(sp.FConvertOp(x, Float32Type())).results[0]
        low.set(op.result, low.emit(sp.FConvertOp(erf_f32(low, wide), t)).results[0])
    else:
        raise CoopError(op, f"math.erf of {t} has no SPIR-V lowering (f16, f32)")


def register(rules: dict) -> None:
    for cls in EXT_INST:
        rules[cls] = lower_ext_inst
    rules[math.ErfOp] = lower_erf
