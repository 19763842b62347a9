"""Exact integer address arithmetic with ranges, for the tensor-addressing rules (tensor_rules.py).

An `Aff` is `const + sum(coef * atom)`: an atom is a `.b64` register holding a signed 64-bit
integer known to lie in `[lo, hi]`. The operations are the ones the pseudo-code of
SPV_NV_tensor_addressing (matrixCoordToTensorElement[WithView]) uses — add, multiply, floored
remainder and quotient (OpSMod), masks to uint32 and wraps to int32 — on Python-int semantics,
as the interpreter computes them in int64 (coopdialect/interpreter/tensor_addr.py). Each one
folds when the ranges decide it (`x % 16` is `x` for `x` in `[0, 15]`; `(8*j + t) // 8` is `j`
for `t` in `[0, 7]`; a wrap of a value already inside int32 is the value), and otherwise emits
64-bit instructions, once per distinct expression (results are cached per lowering).

Ranges only have to hold for the elements whose result is used: an element that a view clips, or
that Constant mode discards, may compute garbage (never a trap: PTX division by zero does not
fault), because its loads and stores are predicated off.

`Pred` is a predicate: a Python bool when known at compile time, else a `.pred` register.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from xdsl.ir import SSAValue

from coopdialect.dialects import ptx

U32 = 0xFFFFFFFF
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class Atom:
    """A `.b64` register known to hold a signed value in [lo, hi]."""

    reg: SSAValue
    lo: int
    hi: int


@dataclass(frozen=True)
class Aff:
    """`const + sum(coef * atom.reg)` (see the module docstring)."""

    terms: tuple[tuple[int, Atom], ...]
    const: int

    @property
    def is_const(self) -> bool:
        return not self.terms

    @property
    def lo(self) -> int:
        return self.const + sum(min(c * a.lo, c * a.hi) for c, a in self.terms)

    @property
    def hi(self) -> int:
        return self.const + sum(max(c * a.lo, c * a.hi) for c, a in self.terms)


def const(n: int) -> Aff:
    return Aff((), int(n))


def atom(reg: SSAValue, lo: int, hi: int) -> Aff:
    return Aff(((1, Atom(reg, lo, hi)),), 0)


def _norm(terms: list[tuple[int, Atom]]) -> tuple[tuple[int, Atom], ...]:
    acc: dict[int, tuple[int, Atom]] = {}
    for c, a in terms:
        k = id(a.reg)
        old = acc.get(k)
        acc[k] = (c + (old[0] if old else 0), a)
    return tuple((c, a) for c, a in acc.values() if c)


def add(x: Aff, y: Aff) -> Aff:
    return Aff(_norm([*x.terms, *y.terms]), x.const + y.const)


def sub(x: Aff, y: Aff) -> Aff:
    return add(x, scale(y, -1))


def scale(x: Aff, k: int) -> Aff:
    return Aff(_norm([(c * k, a) for c, a in x.terms]), x.const * k)


Pred = bool | SSAValue


class Arith:
    """Emits the instructions of Aff/Pred operations into a KernelLowering (`lw`)."""

    def __init__(self, lw) -> None:
        self.lw = lw

    @property
    def memo(self) -> dict[tuple, object]:
        """Emitted expressions of the current block (a register is reused only in the block
        that defines it, which is always sound; no dominance analysis)."""
        per_block = self.lw.__dict__.setdefault("_affine_memo", {})
        return per_block.setdefault(id(self.lw.cur), {})

    @property
    def factors(self) -> dict[int, int]:
        """A known divisor of each emitted register's value (by id): the multiple() of the
        expression it was computed from, kept through the uint32/int32 wraps (2^32 is a
        multiple of every divisor of interest: the 16-byte groups of nv2_workgroup)."""
        return self.lw.__dict__.setdefault("_affine_factors", {})

    def multiple(self, x: Aff) -> int:
        """A number that divides x whatever its atoms hold (0: x is the constant 0)."""
        g = abs(x.const)
        for c, a in x.terms:
            g = gcd(g, abs(c) * self.factors.get(id(a.reg), 1))
        return g

    def _factor(self, r: SSAValue, k: int) -> SSAValue:
        if k != 1:
            self.factors[id(r)] = k
        return r

    # -- registers ---------------------------------------------------------------------------

    def _key(self, x: Aff) -> tuple:
        return (tuple((c, id(a.reg)) for c, a in x.terms), x.const)

    def reg(self, x: Aff) -> SSAValue:
        """x in a .b64 register (s64 arithmetic, no overflow for values in the int64 range)."""
        lw = self.lw
        key = ("reg", self._key(x))
        if key in self.memo:
            return self.memo[key]
        if x.is_const:
            r = lw.imm("b64", str(x.const))
        else:
            r = None
            for c, a in x.terms:
                if r is None:
                    r = a.reg if c == 1 else lw.inst(ptx.MulOp, ".lo.s64",
                                                     [a.reg, lw.imm("b64", str(c))], "b64")
                elif c == 1:
                    r = lw.inst(ptx.AddOp, ".s64", [r, a.reg], "b64")
                else:
                    r = lw.inst(ptx.MadOp, ".lo.s64", [a.reg, lw.imm("b64", str(c)), r], "b64")
            if x.const:
                r = lw.inst(ptx.AddOp, ".s64", [r, lw.imm("b64", str(x.const))], "b64")
            if r is not x.terms[0][1].reg:
                self._factor(r, self.multiple(x))
        self.memo[key] = r
        return r

    def as_atom(self, x: Aff) -> Aff:
        if x.is_const or (len(x.terms) == 1 and x.terms[0][0] == 1 and x.const == 0):
            return x
        return atom(self.reg(x), x.lo, x.hi)

    def from_u32(self, r: SSAValue, lo: int = 0, hi: int = U32) -> Aff:
        """A .b32 register read as uint32."""
        key = ("u32", id(r))
        if key not in self.memo:
            self.memo[key] = self.lw.inst(ptx.CvtOp, ".u64.u32", [r], "b64")
        return atom(self.memo[key], lo, hi)

    def from_s32(self, r: SSAValue) -> Aff:
        """A .b32 register read as int32."""
        key = ("s32", id(r))
        if key not in self.memo:
            self.memo[key] = self.lw.inst(ptx.CvtOp, ".s64.s32", [r], "b64")
        return atom(self.memo[key], I32_MIN, I32_MAX)

    def low32(self, x: Aff) -> SSAValue:
        """The low 32 bits of x in a .b32 register."""
        if x.is_const:
            return self.lw.imm("b32", str(x.const & U32))
        key = ("low32", self._key(x))
        if key not in self.memo:
            self.memo[key] = self.lw.inst(ptx.CvtOp, ".u32.u64", [self.reg(x)], "b32")
        return self.memo[key]

    # -- arithmetic --------------------------------------------------------------------------

    def mul(self, x: Aff, y: Aff) -> Aff:
        if y.is_const:
            return scale(x, y.const)
        if x.is_const:
            return scale(y, x.const)
        a, b = self.as_atom(x), self.as_atom(y)
        corners = [p * q for p in (a.lo, a.hi) for q in (b.lo, b.hi)]
        key = ("mul", self._key(a), self._key(b))
        if key not in self.memo:
            self.memo[key] = self._factor(
                self.lw.inst(ptx.MulOp, ".lo.s64", [self.reg(a), self.reg(b)], "b64"),
                self.multiple(a) * self.multiple(b))
        return atom(self.memo[key], min(corners), max(corners))

    def mask32(self, x: Aff) -> Aff:
        """x & 0xFFFFFFFF (the pseudo-code's uint32 wrap)."""
        if x.is_const:
            return const(x.const & U32)
        if 0 <= x.lo and x.hi <= U32:
            return x
        key = ("mask32", self._key(x))
        if key not in self.memo:
            self.memo[key] = self._factor(
                self.lw.inst(ptx.AndOp, ".b64", [self.reg(x), self.lw.imm("b64", "0xFFFFFFFF")],
                             "b64"),
                gcd(self.multiple(x), 2**32))
        return atom(self.memo[key], 0, U32)

    def wrap_s32(self, x: Aff) -> Aff:
        """((x + 2^31) & U32) - 2^31: x as the pseudo-code's int32_t."""
        if x.is_const:
            return const(((x.const + 2**31) & U32) - 2**31)
        if I32_MIN <= x.lo and x.hi <= I32_MAX:
            return x
        key = ("wrap", self._key(x))
        if key not in self.memo:
            self.memo[key] = self._factor(
                self.lw.inst(ptx.CvtOp, ".s64.s32", [self.low32(x)], "b64"),
                gcd(self.multiple(x), 2**32))
        return atom(self.memo[key], I32_MIN, I32_MAX)

    def divmod(self, x: Aff, d: Aff) -> tuple[Aff, Aff]:
        """(x // d, x % d), floored (OpSMod); d is a uint32 value (>= 0). A zero divisor
        gives (0, 0): only elements whose result is unused may divide by zero."""
        if d.is_const:
            n = d.const
            if n <= 0:
                return const(0), const(0)
            if x.is_const:
                return const(x.const // n), const(x.const % n)
            if n == 1:
                return x, const(0)
            # split x = n*H + L with L's range inside [0, n)
            hi_terms = [(c // n, a) for c, a in x.terms if c % n == 0]
            lo = Aff(tuple((c, a) for c, a in x.terms if c % n), x.const % n)
            hi = Aff(tuple(hi_terms), x.const // n)
            if 0 <= lo.lo and lo.hi < n:
                return hi, lo
            if 0 <= x.lo and x.hi < n:
                return const(0), x
            if x.const and x.const % n == 0:
                # (v + k*n) // n = v // n + k and (v + k*n) % n = v % n (floored, any v): the
                # variable part's division is shared by every x that differs by a multiple of n
                q, r = self.divmod(Aff(x.terms, 0), d)
                return add(q, const(x.const // n)), r
        elif 0 <= x.lo and x.hi < d.lo:
            return const(0), x
        return self._divmod_emit(x, d)

    def _divmod_emit(self, x: Aff, d: Aff) -> tuple[Aff, Aff]:
        lw = self.lw
        key = ("divmod", self._key(x), self._key(d))
        if key in self.memo:
            return self.memo[key]
        xr = self.reg(x)
        dmax = d.const if d.is_const else d.hi
        if d.is_const and d.const & (d.const - 1) == 0:  # a power of two: shifts (floored)
            k = d.const.bit_length() - 1
            q = lw.inst(ptx.ShrOp, ".s64", [xr, lw.imm("b32", str(k))], "b64")
            r = lw.inst(ptx.AndOp, ".b64", [xr, lw.imm("b64", str(d.const - 1))], "b64")
        elif x.lo >= 0:
            dr = self.reg(d)
            q = lw.inst(ptx.DivOp, ".u64", [xr, dr], "b64")
            r = lw.inst(ptx.RemOp, ".u64", [xr, dr], "b64")
        else:  # truncated division, then floor: if r < 0 then r += d, q -= 1
            dr = self.reg(d)
            q0 = lw.inst(ptx.DivOp, ".s64", [xr, dr], "b64")
            r0 = lw.inst(ptx.RemOp, ".s64", [xr, dr], "b64")
            neg = lw.inst(ptx.SetpOp, ".lt.s64", [r0, lw.imm("b64", "0")], "pred")
            r1 = lw.inst(ptx.AddOp, ".s64", [r0, dr], "b64")
            q1 = lw.inst(ptx.SubOp, ".s64", [q0, lw.imm("b64", "1")], "b64")
            r = lw.inst(ptx.SelpOp, ".b64", [r1, r0, neg], "b64")
            q = lw.inst(ptx.SelpOp, ".b64", [q1, q0, neg], "b64")
        dmin = max(1, d.const if d.is_const else d.lo)
        qs = [x.lo // dmin, x.hi // dmin]
        if x.lo < 0:
            qs.append(x.lo)  # divisor 1 gives x itself
        out = (atom(q, min(qs + [0]), max(qs + [0])), atom(r, 0, max(dmax - 1, 0)))
        self.memo[key] = out
        return out

    def min_(self, x: Aff, y: Aff) -> Aff:
        if x.hi <= y.lo:
            return x
        if y.hi <= x.lo:
            return y
        r = self.lw.inst(ptx.MinOp, ".s64", [self.reg(x), self.reg(y)], "b64")
        return atom(r, min(x.lo, y.lo), min(x.hi, y.hi))

    def max_(self, x: Aff, y: Aff) -> Aff:
        if x.lo >= y.hi:
            return x
        if y.lo >= x.hi:
            return y
        r = self.lw.inst(ptx.MaxOp, ".s64", [self.reg(x), self.reg(y)], "b64")
        return atom(r, max(x.lo, y.lo), max(x.hi, y.hi))

    def select(self, p: Pred, x: Aff, y: Aff) -> Aff:
        if p is True:
            return x
        if p is False:
            return y
        r = self.lw.inst(ptx.SelpOp, ".b64", [self.reg(x), self.reg(y), p], "b64")
        return atom(r, min(x.lo, y.lo), max(x.hi, y.hi))

    # -- predicates --------------------------------------------------------------------------

    def lt(self, x: Aff, y: Aff) -> Pred:
        """x < y (signed 64-bit)."""
        if x.hi < y.lo:
            return True
        if x.lo >= y.hi:
            return False
        key = ("lt", self._key(x), self._key(y))
        if key not in self.memo:
            self.memo[key] = self.lw.inst(ptx.SetpOp, ".lt.s64", [self.reg(x), self.reg(y)],
                                          "pred")
        return self.memo[key]

    def ge(self, x: Aff, y: Aff) -> Pred:
        return self.not_(self.lt(x, y))

    def not_(self, p: Pred) -> Pred:
        if isinstance(p, bool):
            return not p
        return self.lw.inst(ptx.NotOp, ".pred", [p], "pred")

    def or_(self, p: Pred, q: Pred) -> Pred:
        if p is True or q is True:
            return True
        if p is False:
            return q
        if q is False:
            return p
        return self.lw.inst(ptx.OrOp, ".pred", [p, q], "pred")

    def and_(self, p: Pred, q: Pred) -> Pred:
        if p is False or q is False:
            return False
        if p is True:
            return q
        if q is True:
            return p
        return self.lw.inst(ptx.AndOp, ".pred", [p, q], "pred")
