"""The `math` dialect (and arith.maxnumf/minnumf) -> PTX, on scalar registers.

`emit_math(lw, op_class, t, regs)` emits one math operation of element type `t` on registers
and returns the result register: the op rules below use it for scalars in kernels and in the
functions that per_element_op / reduce / DecodeFunc inline, and another lowering can apply it to
each register of a fragment (an epilogue over the accumulators, say). What it emits, with the
bound of each instruction from the PTX ISA (9.7.3 "Floating Point Instructions") and the bound
of each sequence (docs/math.md has the table, tests/gpu/test_gpu_math.py measures them):

* f32: exp2 `ex2.approx.f32` (2 ulp from the correctly rounded result, full range, subnormals
  kept); exp `ex2.approx.f32` of x*log2(e) split exactly into hi + lo (`mul.rn`, two `fma.rn`),
  the result corrected by (1 + lo*ln 2) with one `fma.rn` (3 ulp); log2 `lg2.approx.f32`
  (absolute 2^-22 in (0.5, 2), relative 2^-22 elsewhere); log `lg2.approx.f32` times ln 2
  (absolute 2^-22 in (0.5, 2), relative 1.5 * 2^-22 elsewhere); sqrt `sqrt.rn.f32` (correctly
  rounded); rsqrt `rsqrt.approx.f32` (relative 2^-22.9); tanh and erf the f32 sequences of
  `coopdialect.math_approx` (Horner with `fma.rn`, exp as above, `div.rn`); erf marked
  `fastmath<afn>` the fast erf without its small piece (`erf_fast_f32`: `min.NaN.f32`
  (9.7.3.11), Horner, one `ex2.approx.ftz.f32`, `sub.rn`, `copysign`; absolute 2^-20); exp2
  marked `fastmath<afn>` `ex2.approx.ftz.f32` (results below 2^-126 flushed to zero); absf
  `abs.f32`; fma `fma.rn.f32`; floor/ceil/trunc/roundeven `cvt.rmi/rpi/rzi/rni.f32.f32`;
  maxnumf/minnumf `max.f32`/`min.f32` (a NaN operand gives the other) - all exact;
* f16 and bf16: computed in f32, rounded once with `cvt.rn.{f16,bf16}.f32` (so within half an
  ulp of the type plus the f32 error, which is at most 2^-16 relative for every op but tanh)
  by the cheaper f32 forms that rounding allows: exp `ex2.approx.f32` of the rounded x*log2(e)
  without the correction, erf the fast erf with its Taylor piece below 1/16 (relative 2^-18),
  tanh `tanh.approx.f32` (relative 2^-11, then rounded: 1.5 ulp); for f16 the special-function
  instructions take `.ftz` (an f16 operand widened is never an f32 subnormal, and an f32 result
  below 2^-126 rounds to an f16 zero, so no result changes); the exact ones stay exact: fma
  `fma.rn.{f16,bf16}`, absf a mask of the sign bit, max/min `max/min.{f16,bf16}`; sqrt through
  f32 is correctly rounded (24 >= 2p + 2 bits);
* f64: sqrt `sqrt.rn.f64`, rsqrt `div.rn.f64(1, sqrt.rn.f64)`, absf, fma, floor, ceil, trunc,
  roundeven, maxnumf, minnumf; the `.approx` instructions are f32 only, so exp, log, tanh and
  erf of f64 are refused.

Refused (one line at the op): the math ops not listed, and an op of a type not listed.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.arith import FastMathFlag
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from coopdialect import math_approx as approx
from coopdialect.dialects import ptx
from coopdialect.ptx.kernel_lowering import KernelLowering, Scalar, float_literal, float_suffix, op_error, rule

F32 = Float32Type()
LOG2E = 1.0 / pymath.log(2.0)
LOG2E_HI = float(np.float32(LOG2E))  # log2(e) rounded to f32
LOG2E_LO = LOG2E - LOG2E_HI  # the rest, so that HI + LO is log2(e) to about 2^-48
LN2 = pymath.log(2.0)


def _c(lw: KernelLowering, value: float) -> SSAValue:
    """An f32 constant register (rounded to nearest)."""
    return lw.imm("f32", float_literal(F32, value))


def _f(lw: KernelLowering, cls, mods: str, *args: SSAValue, kind: str = "f32") -> SSAValue:
    return lw.inst(cls, mods, list(args), kind)


def _horner(lw: KernelLowering, coefs, z: SSAValue) -> SSAValue:
    """sum coefs[k] z^k in f32, Horner's rule with fma.rn."""
    acc = _c(lw, coefs[-1])
    for c in reversed(coefs[:-1]):
        acc = _f(lw, ptx.FmaOp, ".rn.f32", acc, z, _c(lw, c))
    return acc


def exp_f32(lw: KernelLowering, x: SSAValue) -> SSAValue:
    """e^x in f32 to 3 ulp: 2^(hi + lo) with hi + lo = x log2(e) exactly to ~2^-48 (the product's
    rounding error recovered with fma), 2^hi from ex2.approx.f32 (2 ulp), times (1 + lo ln 2)
    by one fma. Where |hi| >= 128, 2^hi alone (inf, 0 or a subnormal whose ulp exceeds the
    correction) - which also keeps fma(inf, c, inf) from making a NaN."""
    hi = _f(lw, ptx.MulOp, ".rn.f32", x, _c(lw, LOG2E_HI))
    lo = _f(lw, ptx.FmaOp, ".rn.f32", x, _c(lw, LOG2E_HI), _f(lw, ptx.NegOp, ".f32", hi))
    lo = _f(lw, ptx.FmaOp, ".rn.f32", x, _c(lw, LOG2E_LO), lo)
    e = _f(lw, ptx.Ex2Op, ".approx.f32", hi)
    c = _f(lw, ptx.MulOp, ".rn.f32", lo, _c(lw, LN2))
    fixed = _f(lw, ptx.FmaOp, ".rn.f32", e, c, e)
    inside = lw.inst(ptx.SetpOp, ".lt.f32", [_f(lw, ptx.AbsOp, ".f32", hi), _c(lw, 128.0)], "pred")
    return lw.inst(ptx.SelpOp, ".f32", [fixed, e, inside], "f32")


def tanh_f32(lw: KernelLowering, x: SSAValue) -> SSAValue:
    """tanh in f32, `coopdialect.math_approx` (relative error <= TANH_BOUND_REL): the odd Taylor
    polynomial inside |x| < TANH_SPLIT, 1 - 2 / (1 + e^(2|x|)) outside; both computed, one
    selected, x's sign put on it."""
    z = _f(lw, ptx.MulOp, ".rn.f32", x, x)
    x3 = _f(lw, ptx.MulOp, ".rn.f32", x, z)
    small = _f(lw, ptx.FmaOp, ".rn.f32", x3, _horner(lw, approx.TANH_TAYLOR, z), x)
    a = _f(lw, ptx.AbsOp, ".f32", x)
    e = exp_f32(lw, _f(lw, ptx.AddOp, ".rn.f32", a, a))
    d = _f(lw, ptx.DivOp, ".rn.f32", _c(lw, 2.0), _f(lw, ptx.AddOp, ".rn.f32", _c(lw, 1.0), e))
    big = _f(lw, ptx.SubOp, ".rn.f32", _c(lw, 1.0), d)
    inside = lw.inst(ptx.SetpOp, ".lt.f32", [a, _c(lw, approx.TANH_SPLIT)], "pred")
    # x's sign on both pieces: the polynomial's x + x^3 Q gives +0 for x = -0
    return _f(lw, ptx.CopysignOp, ".f32", x, lw.inst(ptx.SelpOp, ".f32", [small, big, inside], "f32"))


def erf_f32(lw: KernelLowering, x: SSAValue) -> SSAValue:
    """erf in f32, `coopdialect.math_approx`: x P(x^2) inside |x| < ERF_SPLIT, Abramowitz &
    Stegun 7.1.26 with x's sign outside; both computed, one selected."""
    z = _f(lw, ptx.MulOp, ".rn.f32", x, x)
    small = _f(lw, ptx.MulOp, ".rn.f32", x, _horner(lw, approx.ERF_TAYLOR, z))
    a = _f(lw, ptx.AbsOp, ".f32", x)
    den = _f(lw, ptx.FmaOp, ".rn.f32", _c(lw, approx.ERF_AS_P), a, _c(lw, 1.0))
    t = _f(lw, ptx.DivOp, ".rn.f32", _c(lw, 1.0), den)
    q = _f(lw, ptx.MulOp, ".rn.f32", t, _horner(lw, approx.ERF_AS_A, t))
    e = exp_f32(lw, _f(lw, ptx.NegOp, ".f32", z))
    big = _f(lw, ptx.FmaOp, ".rn.f32", _f(lw, ptx.NegOp, ".f32", q), e, _c(lw, 1.0))
    big = _f(lw, ptx.CopysignOp, ".f32", x, big)
    inside = lw.inst(ptx.SetpOp, ".lt.f32", [a, _c(lw, approx.ERF_SPLIT)], "pred")
    return lw.inst(ptx.SelpOp, ".f32", [small, big, inside], "f32")


def erf_fast_f32(lw: KernelLowering, x: SSAValue, relative: bool) -> SSAValue:
    """erf in f32 by the fast sequence of `coopdialect.math_approx`: x's sign on 1 - 2^p(a),
    a = |x| clamped to ERF_FAST_CLAMP (`min.NaN`, sm_80: a NaN stays a NaN), p by Horner with
    `fma.rn`, 2^p by `ex2.approx.ftz.f32` (p is 0 or a normal number in [p(4), 0) unless |x| is
    below 2^-126, where the flushed 0 gives 2^0 = 1 and erf 0: within the absolute bound). With
    `relative`, |x| < ERF_FAST_SPLIT selects the Taylor piece x (c1 + c3 x^2) instead (relative
    error <= ERF_FAST_BOUND_REL); without, absolute error <= ERF_FAST_BOUND_ABS."""
    a = _f(lw, ptx.AbsOp, ".f32", x)
    c = _f(lw, ptx.MinOp, ".NaN.f32", a, _c(lw, approx.ERF_FAST_CLAMP))
    p = _f(lw, ptx.MulOp, ".rn.f32", c, _horner(lw, approx.ERF_FAST_LOG2_ERFC, c))
    e = _f(lw, ptx.Ex2Op, ".approx.ftz.f32", p)
    big = _f(lw, ptx.CopysignOp, ".f32", x, _f(lw, ptx.SubOp, ".rn.f32", _c(lw, 1.0), e))
    if not relative:
        return big
    z = _f(lw, ptx.MulOp, ".rn.f32", x, x)
    c1, c3 = approx.ERF_FAST_SMALL
    small = _f(lw, ptx.MulOp, ".rn.f32", x, _f(lw, ptx.FmaOp, ".rn.f32", z, _c(lw, c3), _c(lw, c1)))
    inside = lw.inst(ptx.SetpOp, ".lt.f32", [a, _c(lw, approx.ERF_FAST_SPLIT)], "pred")
    return lw.inst(ptx.SelpOp, ".f32", [small, big, inside], "f32")


def _log_f32(lw: KernelLowering, x: SSAValue) -> SSAValue:
    return _f(lw, ptx.MulOp, ".rn.f32", _f(lw, ptx.Lg2Op, ".approx.f32", x), _c(lw, LN2))


# f32 computations of the transcendental ops (f16/bf16 go through them)
F32_SEQUENCES: dict[type[Operation], Callable[[KernelLowering, SSAValue], SSAValue]] = {
    math.ExpOp: exp_f32,
    math.Exp2Op: lambda lw, x: _f(lw, ptx.Ex2Op, ".approx.f32", x),
    math.LogOp: _log_f32,
    math.Log2Op: lambda lw, x: _f(lw, ptx.Lg2Op, ".approx.f32", x),
    math.SqrtOp: lambda lw, x: _f(lw, ptx.SqrtOp, ".rn.f32", x),
    math.RsqrtOp: lambda lw, x: _f(lw, ptx.RsqrtOp, ".approx.f32", x),
    math.TanhOp: tanh_f32,
    math.ErfOp: erf_f32,
}
# the single special-function instructions (log: lg2 times ln 2)
_SPECIAL = {math.Exp2Op: ptx.Ex2Op, math.Log2Op: ptx.Lg2Op, math.LogOp: ptx.Lg2Op,
            math.RsqrtOp: ptx.RsqrtOp}
_ROUNDING = {math.FloorOp: ".rmi", math.CeilOp: ".rpi", math.TruncOp: ".rzi",
             math.RoundEvenOp: ".rni"}
_MIN_MAX = {arith.MaxnumfOp: ptx.MaxOp, arith.MinnumfOp: ptx.MinOp}
MATH_OPS = (*F32_SEQUENCES, *_ROUNDING, *_MIN_MAX, math.AbsFOp, math.FmaOp)


def _kind(t: Attribute) -> str:
    return "f32" if isinstance(t, Float32Type) else "f64" if isinstance(t, Float64Type) else "b16"


def emit_math(lw: KernelLowering, op_class: type[Operation], t: Attribute,
              args: list[SSAValue], afn: bool = False) -> SSAValue:
    """The register holding `op_class` applied to registers `args` of element type `t` (f16,
    bf16, f32, f64; see the module docstring); `afn`: the op allows an approximate function
    (MLIR's `fastmath<afn>`), which f32 erf takes. Raises DiagnosticException for an op or type
    without a lowering."""
    name = op_class.name
    if not isinstance(t, Float16Type | BFloat16Type | Float32Type | Float64Type):
        raise DiagnosticException(f"{name} of {t} has no PTX lowering (f16, bf16, f32, f64)")
    if op_class not in MATH_OPS:
        raise DiagnosticException(f"{name} has no PTX lowering (convert-coop-to-ptx lowers "
                                  + ", ".join(sorted(c.name for c in MATH_OPS)) + ")")
    sfx, kind = float_suffix(t), _kind(t)
    half = kind == "b16"
    if op_class is math.FmaOp:
        return lw.inst(ptx.FmaOp, f".rn.{sfx}", args, kind)
    if op_class in _MIN_MAX:
        return lw.inst(_MIN_MAX[op_class], f".{sfx}", args, kind)
    (x,) = args
    if op_class is math.AbsFOp:
        if half:  # clear the sign bit (abs.f16/bf16 need newer targets; the mask is exact)
            return lw.inst(ptx.AndOp, ".b16", [x, lw.imm("b16", "0x7FFF")], "b16")
        return lw.inst(ptx.AbsOp, f".{sfx}", [x], kind)
    if op_class in _ROUNDING:
        mode = _ROUNDING[op_class]
        if isinstance(t, BFloat16Type):  # an integral bf16 value converts back exactly
            wide = lw.inst(ptx.CvtOp, ".f32.bf16", [x], "f32")
            r = lw.inst(ptx.CvtOp, f"{mode}.f32.f32", [wide], "f32")
            return lw.inst(ptx.CvtOp, ".rn.bf16.f32", [r], "b16")
        return lw.inst(ptx.CvtOp, f"{mode}.{sfx}.{sfx}", [x], kind)
    if kind == "f64":
        if op_class is math.SqrtOp:
            return lw.inst(ptx.SqrtOp, ".rn.f64", [x], "f64")
        if op_class is math.RsqrtOp:
            root = lw.inst(ptx.SqrtOp, ".rn.f64", [x], "f64")
            return lw.inst(ptx.DivOp, ".rn.f64", [lw.imm("f64", float_literal(t, 1.0)), root], "f64")
        raise DiagnosticException(f"{name} of f64 has no PTX lowering (the .approx special-function "
                                  "instructions are f32)")
    if kind == "f32":
        if afn and op_class is math.ErfOp:
            return erf_fast_f32(lw, x, relative=False)
        if afn and op_class is math.Exp2Op:  # one MUFU.EX2, no subnormal scaling around it
            return lw.inst(ptx.Ex2Op, ".approx.ftz.f32", [x], "f32")
        return F32_SEQUENCES[op_class](lw, x)
    wide = lw.inst(ptx.CvtOp, f".f32.{sfx}", [x], "f32")
    # An f16 operand widened is never an f32 subnormal, and an f32 result below 2^-126 rounds to
    # an f16 zero: .ftz changes no f16 result and saves the subnormal scaling around the MUFU op.
    # bf16 has f32's exponent range, so its subnormals need the plain forms.
    ftz = ".ftz" if isinstance(t, Float16Type) else ""
    if op_class is math.TanhOp:  # 2^-11 relative: within an ulp of f16/bf16 before rounding
        r = lw.inst(ptx.TanhOp, ".approx.f32", [wide], "f32")
    elif op_class is math.ExpOp:  # finite nonzero results need |x| < 104: x*log2(e) rounded costs
        # < 2^-17 relative, far below an f16/bf16 ulp
        r = lw.inst(ptx.Ex2Op, f".approx{ftz}.f32",
                    [lw.inst(ptx.MulOp, ".rn.f32", [wide, _c(lw, LOG2E_HI)], "f32")], "f32")
    elif op_class is math.ErfOp:
        r = erf_fast_f32(lw, wide, relative=True)
    elif op_class in _SPECIAL:
        r = lw.inst(_SPECIAL[op_class], f".approx{ftz}.f32", [wide], "f32")
        if op_class is math.LogOp:
            r = _f(lw, ptx.MulOp, ".rn.f32", r, _c(lw, LN2))
    else:
        r = F32_SEQUENCES[op_class](lw, wide)
    return lw.inst(ptx.CvtOp, f".rn.{sfx}.f32", [r], "b16")


@rule(*MATH_OPS, math.ExpM1Op, math.Log1pOp, math.Log10Op, math.CbrtOp, math.RoundOp,
      math.CopySignOp, math.PowFOp, math.SinOp, math.CosOp, math.TanOp, math.AsinOp, math.AcosOp,
      math.AtanOp, math.Atan2Op, math.SinhOp, math.CoshOp, math.AsinhOp, math.AcoshOp,
      math.AtanhOp, math.FPowIOp)
def _math(lw: KernelLowering, op: Operation) -> None:
    t = op.results[0].type
    regs = [lw.reg(lw.scalar(v)) for v in op.operands]
    flags = getattr(op, "fastmath", None)
    afn = flags is not None and FastMathFlag.APPROX_FUNC in flags.data
    try:
        r = emit_math(lw, type(op), t, regs, afn)
    except DiagnosticException as e:  # located at this op, also inside an inlined function
        raise op_error(op, str(e)) from None
    lw.vmap[op.results[0]] = Scalar(t, reg=r)
