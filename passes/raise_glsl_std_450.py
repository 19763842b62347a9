"""raise-spirv-to-coop for `OpExtInst` of GLSL.std.450: each instruction whose meaning an op states
exactly becomes that op (`lift`, called by `passes/raise_spirv_to_coop.py`).

* the functions: Exp, Exp2, Log, Log2, Sqrt, InverseSqrt, Pow, Sin, Cos, Tan, Asin, Acos, Atan,
  Atan2, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh -> the `math` op of that name (math.rsqrt for
  InverseSqrt, math.powf for Pow). The instruction is an approximation whose precision the client
  API states (docs/math.md); the op is the exact function, which is what the interpreter computes;
* FAbs, SAbs, Floor, Ceil, Trunc, RoundEven, Fma -> math.absf, absi, floor, ceil, trunc,
  roundeven, fma; Round -> math.round (GLSL.std.450 lets the implementation pick the direction of
  a 0.5 fraction; math.round rounds it away from zero, one of the choices);
* FMin / FMax -> `arith.cmpf olt` + `arith.select`, the specification's own definition ("y if
  y < x, otherwise x" / "y if x < y, otherwise x"; arith.minimumf/maximumf would differ on +-0);
  NMin / NMax -> arith.minnumf / maxnumf (a NaN operand gives the other one); UMin, SMin, UMax,
  SMax -> arith.minui, minsi, maxui, maxsi; FClamp, NClamp, UClamp, SClamp (x, minVal, maxVal) ->
  the min of the max, as the specification defines them.

Any other instruction (and any other instruction set) raises `NotLifted` with the line the caller
reports at the instruction.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.ir import Operation, SSAValue

from coopdialect.dialects.spirv_general import ExtInstOp
from coopdialect.spirv.grammar_tables import GLSL_STD_450

GLSL = "GLSL.std.450"
NAMES: dict[int, str] = {entry[0]: name for name, entry in GLSL_STD_450.items()}

MATH: dict[str, type[Operation]] = {
    "Exp": math.ExpOp, "Exp2": math.Exp2Op, "Log": math.LogOp, "Log2": math.Log2Op,
    "Sqrt": math.SqrtOp, "InverseSqrt": math.RsqrtOp, "Pow": math.PowFOp, "Sin": math.SinOp,
    "Cos": math.CosOp, "Tan": math.TanOp, "Asin": math.AsinOp, "Acos": math.AcosOp,
    "Atan": math.AtanOp, "Atan2": math.Atan2Op, "Sinh": math.SinhOp, "Cosh": math.CoshOp,
    "Tanh": math.TanhOp, "Asinh": math.AsinhOp, "Acosh": math.AcoshOp, "Atanh": math.AtanhOp,
    "FAbs": math.AbsFOp, "SAbs": math.AbsIOp, "Floor": math.FloorOp, "Ceil": math.CeilOp,
    "Trunc": math.TruncOp, "RoundEven": math.RoundEvenOp, "Round": math.RoundOp, "Fma": math.FmaOp,
}
ARITH: dict[str, type[Operation]] = {
    "NMin": arith.MinnumfOp, "NMax": arith.MaxnumfOp, "UMin": arith.MinUIOp, "SMin": arith.MinSIOp,
    "UMax": arith.MaxUIOp, "SMax": arith.MaxSIOp,
}


class NotLifted(Exception):
    """The instruction has no exact counterpart here; str() is the diagnostic."""


def _fmin(x: SSAValue, y: SSAValue, out: list[Operation]) -> SSAValue:
    """GLSL.std.450 FMin: y if y < x, otherwise x."""
    lt = arith.CmpfOp(y, x, "olt")
    sel = arith.SelectOp(lt.result, y, x)
    out += [lt, sel]
    return sel.result


def _fmax(x: SSAValue, y: SSAValue, out: list[Operation]) -> SSAValue:
    """GLSL.std.450 FMax: y if x < y, otherwise x."""
    lt = arith.CmpfOp(x, y, "olt")
    sel = arith.SelectOp(lt.result, y, x)
    out += [lt, sel]
    return sel.result


def _binary(cls: type[Operation]) -> Callable[[SSAValue, SSAValue, list[Operation]], SSAValue]:
    def make(x: SSAValue, y: SSAValue, out: list[Operation]) -> SSAValue:
        op = cls(x, y)
        out.append(op)
        return op.results[0]
    return make


CLAMP = {"FClamp": (_fmax, _fmin), "NClamp": (_binary(arith.MaxnumfOp), _binary(arith.MinnumfOp)),
         "UClamp": (_binary(arith.MaxUIOp), _binary(arith.MinUIOp)),
         "SClamp": (_binary(arith.MaxSIOp), _binary(arith.MinSIOp))}


def lift(op: ExtInstOp, args: list[SSAValue]) -> list[Operation]:
    """The ops computing `op` from the lifted operands `args`, the last one giving its result.
    Raises NotLifted."""
    if op.set.data != GLSL:
        raise NotLifted(f"OpExtInst of the instruction set '{op.set.data}' is not lifted")
    number = op.instruction.data
    name = NAMES.get(number)
    if name is None:
        raise NotLifted(f"GLSL.std.450 has no instruction {number}")
    if name in MATH:
        return [MATH[name](*args)]
    if name in ARITH:
        return [ARITH[name](*args)]
    out: list[Operation] = []
    if name in ("FMin", "FMax"):
        (_fmin if name == "FMin" else _fmax)(*args, out)
        return out
    if name in CLAMP:
        lower, upper = CLAMP[name]
        x, lo, hi = args
        upper(lower(x, lo, out), hi, out)
        return out
    raise NotLifted(f"GLSL.std.450 {name} is not lifted")
